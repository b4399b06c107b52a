//! The RocketMQ event log, stored compactly. A run logs a few entries per message (stored,
//! filtered, consumed), so those entries are small fixed-size slots naming the message and
//! interned names; every other event is kept whole in a side list. Times and causes are stored
//! once per run of equal values (a handler's events share both). Entries are decoded back to `Event` on reading, with the
//! world's message records, and render byte for byte as the events they were built from.
//!
//! Layout: per-message events (stored, consumed, broker- and client-filtered) are 12-byte slots
//! with interned names; pull responses are 24-byte records (a pull whose offsets pass 32 bits
//! stays whole); both sizes are asserted. The hot entries are written as slots directly
//! (`push_stored`, `push_consumed`, `push_broker_filtered`, `push_client_filtered`,
//! `push_pull_served`) without building an event. A name seen before is found by its address
//! before its text, which is why subscription expressions are shared `Arc<str>`s. Over the memory
//! budget the oldest entries are compacted (`World::compact_log`): ids stay, the digest folds them
//! in, and reports and provenance say "compacted" where an answer needed them.

use mqviz_engine::vec_map::VecMap;
use std::sync::Arc;

use super::broker::Broker;
use super::events::{Event, MsgId, Name, PullStatus};
use super::store::Message;
use super::types::MessageQueue;
use super::world::World;
use mqviz_engine::digest::{push_decimal, write_line_prefix, DigestMemo, FoldStart};
use mqviz_engine::hash::FNV1A64_OFFSET;
use mqviz_engine::{Chunked, EventId, LogEntry, Millis, Runs};

/// The SQL92 verdicts a broker-side filter reports, by their index in a slot.
const VERDICTS: [&str; 5] = ["TRUE", "FALSE", "NULL", "EVAL_ERROR", "BLOOM_MISS"];
const NO_VERDICT: u8 = u8::MAX;
const NO_CAUSE: u32 = u32::MAX;

// What one entry costs besides its cause (4 bytes) and, rarely, a whole event: a regression
// here multiplies by millions.
const _: () = assert!(std::mem::size_of::<Slot>() <= 12);

/// One entry: a per-message event in a few words, or the index of a whole event.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// `MessageStored`: broker, topic, queue, offset and tag are the message record's.
    Stored {
        msg: MsgId,
    },
    Consumed {
        msg: MsgId,
        client: NameId,
        reconsume_times: u32,
    },
    BrokerFiltered {
        msg: MsgId,
        client: NameId,
        expression: NameId,
        table_owner: NameId,
        verdict: u8,
    },
    /// `ClientFiltered`: the expression and, for a pull sent before a switch, the one in force
    /// when it returned (`NO_NAME` when none).
    ClientFiltered {
        msg: MsgId,
        client: NameId,
        expression: NameId,
        current: NameId,
    },
    /// `PullServed`, one per pull response: an index into `Log::pulls`.
    Pull(u32),
    Whole(u32),
}

/// An interned name in a slot: two bytes keep a slot at 12 (a run names a handful of clients
/// and expressions; past 65,535 names an event is kept whole).
type NameId = u16;
const NO_NAME: NameId = NameId::MAX;

fn short(id: u32) -> Option<NameId> {
    NameId::try_from(id).ok().filter(|&id| id != NO_NAME)
}

/// A `PullServed` event in 24 bytes instead of a whole event (pulls are about as many as the
/// messages when queues are fed slowly). Error statuses, and a pull whose numbers or names do
/// not fit, stay whole events. Queue offsets count a queue's messages, so they fit 32 bits.
#[derive(Clone, Copy, Debug)]
struct PullSlot {
    offset: u32,
    next: u32,
    broker: NameId,
    client: NameId,
    topic: NameId,
    queue_broker: NameId,
    queue_id: u16,
    found: u16,
    /// `NO_NAME` when the pull ran no filter.
    expression: NameId,
    status: u8,
}

const _: () = assert!(std::mem::size_of::<PullSlot>() == 24);

/// A `PullServed` event's fields, borrowed: a pull is logged from them without building the event.
pub(crate) struct PullServedRef<'a> {
    pub broker: &'a Name,
    pub client: &'a Name,
    pub mq: &'a MessageQueue,
    pub offset: u64,
    pub next: u64,
    pub status: &'a PullStatus,
    pub found: u32,
    pub expression: Option<&'a Name>,
}

impl PullServedRef<'_> {
    pub(crate) fn to_event(&self) -> Event {
        Event::PullServed {
            broker: self.broker.clone(),
            client: self.client.clone(),
            mq: self.mq.clone(),
            offset: self.offset,
            next: self.next,
            status: self.status.clone(),
            found: self.found,
            expression: self.expression.map(|e| e.to_string()),
        }
    }
}

const PULL_STATUSES: [PullStatus; 4] =
    [PullStatus::Found, PullStatus::NoNewMsg, PullStatus::NoMatchedMsg, PullStatus::OffsetIllegal];

/// Names and expressions as small ids: a log of millions of entries names a handful of them.
#[derive(Clone, Debug, Default)]
struct Interner {
    names: Vec<Name>,
    ids: VecMap<Name, u32>,
    /// Names looked up before, by allocation: a run logs the same few `Arc`s (client ids, the
    /// expression of a subscription) over and over, and comparing pointers is cheaper than
    /// comparing text. A name's address picks two neighbouring places, so a lookup is at most
    /// two comparisons (a pull logs five names), and two hot names that share a place do not
    /// push each other out. The address picks only where to look, never the id, so runs stay
    /// deterministic. Holding the `Arc` keeps its address from being reused by another name.
    recent: [Option<(Name, u32)>; RECENT_NAMES],
}

/// A power of two (a mask picks the place).
const RECENT_NAMES: usize = 32;

impl Interner {
    fn recent_place(s: &Name) -> usize {
        let address = Arc::as_ptr(s).cast::<u8>() as usize;
        // Allocations are 8- or 16-byte aligned: the low bits say nothing.
        ((address >> 4) ^ (address >> 9)) & (RECENT_NAMES - 1)
    }

    fn id(&mut self, s: &Name) -> u32 {
        let place = Self::recent_place(s);
        let other = place ^ 1;
        for p in [place, other] {
            if let Some((n, id)) = &self.recent[p] {
                if Arc::ptr_eq(n, s) {
                    return *id;
                }
            }
        }
        let id = match self.ids.get(s) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32;
                self.names.push(s.clone());
                self.ids.insert(s.clone(), id);
                id
            }
        };
        // The name that had this place moves to the neighbouring one.
        self.recent[other] = self.recent[place].replace((s.clone(), id));
        id
    }

    fn id_of_str(&mut self, s: &str) -> u32 {
        match self.ids.get(s) {
            Some(&id) => id,
            None => self.id(&Name::from(s)),
        }
    }

    fn get(&self, id: impl Into<u32>) -> &Name {
        &self.names[id.into() as usize]
    }

    fn bytes(&self) -> usize {
        self.names.iter().map(|n| n.len() + 48).sum()
    }
}

/// A `BrokerFiltered` entry's names as interned ids.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FilterNames {
    client: NameId,
    expression: NameId,
    table_owner: NameId,
}

/// A `ClientFiltered` slot from interned ids, or `None` past the names a slot can hold.
fn client_filtered_slot(msg: MsgId, client: u32, expression: u32, current: Option<u32>) -> Option<Slot> {
    Some(Slot::ClientFiltered {
        msg,
        client: short(client)?,
        expression: short(expression)?,
        current: match current {
            Some(c) => short(c)?,
            None => NO_NAME,
        },
    })
}

/// A `BrokerFiltered` slot, or `None` for a verdict a slot cannot hold.
fn broker_filtered_slot(msg: MsgId, names: FilterNames, verdict: Option<&'static str>) -> Option<Slot> {
    let verdict = match verdict {
        None => NO_VERDICT,
        Some(v) => VERDICTS.iter().position(|x| *x == v)? as u8,
    };
    let FilterNames { client, expression, table_owner } = names;
    Some(Slot::BrokerFiltered { msg, client, expression, table_owner, verdict })
}

/// What `Log::skim` tells of an entry without decoding it. A stored message's slot holds only
/// its id: the rest of its `MessageStored` is read from the message record. A per-message
/// verdict names its client by interned id, the same id for every entry naming that client.
pub(crate) enum Skim {
    Pull,
    Stored(MsgId),
    Consumed { msg: MsgId, client: u16 },
    BrokerFiltered { msg: MsgId, client: u16 },
    ClientFiltered { msg: MsgId, client: u16 },
    Other,
}

/// Entry ids are absolute: compaction drops a prefix of the entries but never renumbers them.
#[derive(Clone, Debug, Default)]
pub struct Log {
    /// Entries before this id were compacted away (`World::compact_log`).
    base: u32,
    /// FNV-1a state after the compacted entries' lines: the digest goes on from there, so it is
    /// the same whether or not a run was compacted.
    folded: Option<u64>,
    /// The time of the first entry kept by the latest compaction.
    compacted_before: Option<Millis>,
    /// Absolute indexes of `whole[0]` and `pulls[0]` (their compacted prefixes are dropped too).
    whole_base: u32,
    pulls_base: u32,
    slots: Chunked<Slot>,
    /// Each entry's cause and time, as runs: a handler's events share both.
    causes: Runs<u32>,
    times: Runs<Millis>,
    whole: Vec<Event>,
    pulls: Chunked<PullSlot>,
    names: Interner,
    digest: DigestMemo,
}

impl Log {
    /// Every entry ever logged, compacted ones included (the next entry's id).
    pub fn len(&self) -> usize {
        self.base as usize + self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first entry still held: those before it were compacted.
    pub fn first_kept(&self) -> usize {
        self.base as usize
    }

    /// Set once the log was compacted: entries before this time are gone (their lines live on
    /// only in the digest).
    pub fn compacted_before(&self) -> Option<Millis> {
        self.compacted_before
    }

    fn slot_at(&self, i: usize) -> Option<&Slot> {
        self.slots.get(i.checked_sub(self.base as usize)?)
    }

    fn whole_at(&self, w: u32) -> &Event {
        &self.whole[(w - self.whole_base) as usize]
    }

    /// Drops the entries before `keep_from` (and the whole events and pull records only they
    /// named); `folded` is the digest state over exactly those entries' lines.
    fn drop_prefix(&mut self, keep_from: usize, folded: u64) {
        let n = keep_from.saturating_sub(self.base as usize).min(self.slots.len().saturating_sub(1));
        if n == 0 {
            return;
        }
        let dropped = || self.slots.iter().take(n);
        let whole = dropped().filter(|s| matches!(s, Slot::Whole(_))).count();
        let pulls = dropped().filter(|s| matches!(s, Slot::Pull(_))).count();
        let kept_at = self.time(self.base as usize + n);
        self.slots.drop_front(n);
        self.whole.drain(..whole);
        self.pulls.drop_front(pulls);
        self.base += n as u32;
        self.whole_base += whole as u32;
        self.pulls_base += pulls as u32;
        self.causes.drop_before(self.base);
        self.times.drop_before(self.base);
        self.whole.shrink_to_fit();
        self.folded = Some(folded);
        self.compacted_before = Some(kept_at);
    }

    /// Appends `kind`. A `MessageStored` becomes a slot only when the message record says the
    /// same (it is read back from there); records are not changed once stored.
    pub(crate) fn push(
        &mut self,
        messages: &[Message],
        brokers: &[Broker],
        at: Millis,
        cause: Option<EventId>,
        kind: Event,
    ) -> EventId {
        let slot = self.slot(messages, brokers, kind);
        self.push_slot(at, cause, slot)
    }

    /// Appends the `MessageStored` of `msg`, whose record holds everything the event says.
    pub(crate) fn push_stored(&mut self, at: Millis, cause: Option<EventId>, msg: MsgId) -> EventId {
        self.push_slot(at, cause, Slot::Stored { msg })
    }

    /// Appends a `Consumed`, or `None` when its client is past the names a slot can hold (the
    /// caller logs the whole event).
    pub(crate) fn push_consumed(
        &mut self,
        at: Millis,
        cause: Option<EventId>,
        msg: MsgId,
        client: &Name,
        reconsume_times: u32,
    ) -> Option<EventId> {
        let slot = self.consumed_slot(msg, client, reconsume_times)?;
        Some(self.push_slot(at, cause, slot))
    }

    /// Appends a `ClientFiltered` (`current`: the expression in force when the response came,
    /// when it is not the one the pull was sent with), or `None` when a name is past what a slot
    /// can hold (the caller logs the whole event). In a group whose members subscribe
    /// differently these are as many as the messages.
    pub(crate) fn push_client_filtered(
        &mut self,
        at: Millis,
        cause: Option<EventId>,
        msg: MsgId,
        client: &Name,
        expression: &Name,
        current: Option<&Name>,
    ) -> Option<EventId> {
        let names = &mut self.names;
        let slot = client_filtered_slot(msg, names.id(client), names.id(expression), current.map(|c| names.id(c)))?;
        Some(self.push_slot(at, cause, slot))
    }

    fn consumed_slot(&mut self, msg: MsgId, client: &Name, reconsume_times: u32) -> Option<Slot> {
        Some(Slot::Consumed { msg, client: short(self.names.id(client))?, reconsume_times })
    }

    /// The interned names of a pull's `BrokerFiltered` entries, looked up once for all of them
    /// (`None` past the names a slot can hold).
    pub(crate) fn filter_names(&mut self, client: &Name, expression: &Name, table_owner: &Name) -> Option<FilterNames> {
        Some(FilterNames {
            client: short(self.names.id(client))?,
            expression: short(self.names.id(expression))?,
            table_owner: short(self.names.id(table_owner))?,
        })
    }

    /// Appends a `BrokerFiltered` with names from [`Log::filter_names`], or `None` for a verdict a
    /// slot cannot hold (the caller logs the whole event).
    pub(crate) fn push_broker_filtered(
        &mut self,
        at: Millis,
        cause: Option<EventId>,
        msg: MsgId,
        names: FilterNames,
        verdict: Option<&'static str>,
    ) -> Option<EventId> {
        Some(self.push_slot(at, cause, broker_filtered_slot(msg, names, verdict)?))
    }

    /// Appends a `PullServed`, or `None` for a status a slot cannot hold (the caller logs the
    /// whole event). Pulls are about as many as the messages when queues are fed slowly.
    pub(crate) fn push_pull_served(&mut self, at: Millis, cause: Option<EventId>, pull: &PullServedRef) -> Option<EventId> {
        let slot = self.pull_slot(pull)?;
        Some(self.push_slot(at, cause, slot))
    }

    /// The slot of a pull with a usual status (errors stay whole events).
    fn pull_slot(&mut self, p: &PullServedRef) -> Option<Slot> {
        let status = PULL_STATUSES.iter().position(|s| s == p.status)? as u8;
        let names = &mut self.names;
        let pull = PullSlot {
            offset: u32::try_from(p.offset).ok()?,
            next: u32::try_from(p.next).ok()?,
            broker: short(names.id(p.broker))?,
            client: short(names.id(p.client))?,
            topic: short(names.id(&p.mq.topic))?,
            queue_broker: short(names.id(&p.mq.broker))?,
            queue_id: u16::try_from(p.mq.queue_id).ok()?,
            found: u16::try_from(p.found).ok()?,
            expression: match p.expression {
                Some(e) => short(names.id(e))?,
                None => NO_NAME,
            },
            status,
        };
        self.pulls.push(pull);
        Some(Slot::Pull(self.pulls_base + self.pulls.len() as u32 - 1))
    }

    fn push_slot(&mut self, at: Millis, cause: Option<EventId>, slot: Slot) -> EventId {
        let id = self.len() as u32;
        self.slots.push(slot);
        self.causes.push(id, cause.map_or(NO_CAUSE, |c| c.0));
        self.times.push(id, at);
        EventId(id)
    }

    fn slot(&mut self, messages: &[Message], brokers: &[Broker], kind: Event) -> Slot {
        if let Some(slot) = self.compact_slot(messages, brokers, &kind) {
            return slot;
        }
        self.whole.push(kind);
        Slot::Whole(self.whole_base + self.whole.len() as u32 - 1)
    }

    /// The slot for a per-message event or a pull, or `None` when it must be kept whole (an
    /// unusual verdict or status, or a name beyond the first 65,535).
    fn compact_slot(&mut self, messages: &[Message], brokers: &[Broker], kind: &Event) -> Option<Slot> {
        let names = &mut self.names;
        Some(match *kind {
            Event::MessageStored { msg, ref broker, ref topic, queue_id, offset, ref tag }
                if messages.get(msg as usize).is_some_and(|m| {
                    brokers.get(m.broker()).is_some_and(|b| b.name == *broker)
                        && m.topic() == topic
                        && m.queue_id() == queue_id
                        && m.queue_offset() == offset
                        && m.tag() == tag
                }) =>
            {
                Slot::Stored { msg }
            }
            Event::Consumed { msg, ref client, reconsume_times } => return self.consumed_slot(msg, client, reconsume_times),
            Event::BrokerFiltered { msg, ref client, ref expression, ref table_owner, verdict } => {
                let names = self.filter_names(client, &Name::from(expression.as_str()), table_owner)?;
                return broker_filtered_slot(msg, names, verdict);
            }
            Event::ClientFiltered { msg, ref client, ref expression, ref current } => {
                let (client, expression) = (names.id(client), names.id_of_str(expression));
                let current = current.as_deref().map(|c| names.id_of_str(c));
                return client_filtered_slot(msg, client, expression, current);
            }
            Event::PullServed { ref broker, ref client, ref mq, offset, next, ref status, found, ref expression } => {
                let expression = expression.as_deref().map(Name::from);
                let pull = PullServedRef { broker, client, mq, offset, next, status, found, expression: expression.as_ref() };
                return self.pull_slot(&pull);
            }
            _ => return None,
        })
    }

    /// Entry `i`'s time (for a compacted entry, the earliest time still held).
    fn time(&self, i: usize) -> Millis {
        let i = i.max(self.base as usize);
        u32::try_from(i).ok().and_then(|i| self.times.get(i)).unwrap_or(0)
    }

    fn cause(&self, i: usize) -> Option<EventId> {
        self.slot_at(i)?;
        let c = self.causes.get(i as u32)?;
        Some(c).filter(|&c| c != NO_CAUSE).map(EventId)
    }

    /// The message an entry is about, without decoding it.
    pub fn message(&self, i: usize) -> Option<MsgId> {
        match self.slot_at(i)? {
            Slot::Stored { msg }
            | Slot::Consumed { msg, .. }
            | Slot::BrokerFiltered { msg, .. }
            | Slot::ClientFiltered { msg, .. } => Some(*msg),
            Slot::Pull(_) => None,
            Slot::Whole(w) => self.whole_at(*w).message(),
        }
    }

    /// The entry's kind name (`Event::kind`), without decoding it.
    pub fn kind(&self, i: usize) -> &'static str {
        match self.slot_at(i) {
            Some(Slot::Stored { .. }) => "store",
            Some(Slot::Consumed { .. }) => "consume",
            Some(Slot::BrokerFiltered { .. } | Slot::ClientFiltered { .. }) => "filter",
            Some(Slot::Pull(_)) => "pull",
            Some(Slot::Whole(w)) => self.whole_at(*w).kind(),
            None => "",
        }
    }

    /// Entry `i` at a glance, for readers that use few kinds of entry (`Simulation::trace`):
    /// pulls and stored messages are told apart without decoding them.
    pub(crate) fn skim(&self, i: usize) -> Skim {
        match *self.slot_at(i).unwrap_or(&Slot::Whole(0)) {
            Slot::Pull(_) => Skim::Pull,
            Slot::Stored { msg } => Skim::Stored(msg),
            Slot::Consumed { msg, client, .. } => Skim::Consumed { msg, client },
            Slot::BrokerFiltered { msg, client, .. } => Skim::BrokerFiltered { msg, client },
            Slot::ClientFiltered { msg, client, .. } => Skim::ClientFiltered { msg, client },
            Slot::Whole(_) => Skim::Other,
        }
    }

    /// The name a skimmed entry's client id stands for.
    pub(crate) fn skimmed_name(&self, id: u16) -> &Name {
        self.names.get(id)
    }

    /// Bytes the log holds (its own estimate: slots, causes, times, whole events and names).
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.slots.bytes()
            + self.causes.bytes()
            + self.times.bytes()
            + self.whole.len() * (size_of::<Event>() + 64)
            + self.pulls.bytes()
            + self.names.bytes()
    }
}

/// The log as events: decoding needs the world's message records and broker names.
#[derive(Clone, Copy)]
pub struct LogView<'a> {
    pub(crate) log: &'a Log,
    pub(crate) world: &'a World,
}

impl<'a> LogView<'a> {
    pub fn len(&self) -> usize {
        self.log.len()
    }

    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// Entry `i`, decoded. It must be a kept entry (`Log::first_kept` on).
    pub fn kind_of(&self, i: usize) -> Event {
        let log = self.log;
        match log.slots[i - log.base as usize] {
            Slot::Stored { msg } => {
                let m = &self.world.messages[msg as usize];
                Event::MessageStored {
                    msg,
                    broker: self.world.brokers[m.broker()].name.clone(),
                    topic: m.topic().clone(),
                    queue_id: m.queue_id(),
                    offset: m.queue_offset(),
                    tag: m.tag().clone(),
                }
            }
            Slot::Consumed { msg, client, reconsume_times } => {
                Event::Consumed { msg, client: log.names.get(client).clone(), reconsume_times }
            }
            Slot::BrokerFiltered { msg, client, expression, table_owner, verdict } => Event::BrokerFiltered {
                msg,
                client: log.names.get(client).clone(),
                expression: log.names.get(expression).to_string(),
                table_owner: log.names.get(table_owner).clone(),
                verdict: VERDICTS.get(verdict as usize).copied(),
            },
            Slot::ClientFiltered { msg, client, expression, current } => Event::ClientFiltered {
                msg,
                client: log.names.get(client).clone(),
                expression: log.names.get(expression).to_string(),
                current: (current != NO_NAME).then(|| log.names.get(current).to_string()),
            },
            Slot::Pull(p) => {
                let p = log.pulls[(p - log.pulls_base) as usize];
                Event::PullServed {
                    broker: log.names.get(p.broker).clone(),
                    client: log.names.get(p.client).clone(),
                    mq: MessageQueue::new(
                        log.names.get(p.topic).clone(),
                        log.names.get(p.queue_broker).clone(),
                        p.queue_id.into(),
                    ),
                    offset: p.offset.into(),
                    next: p.next.into(),
                    status: PULL_STATUSES[p.status as usize].clone(),
                    found: p.found.into(),
                    expression: (p.expression != NO_NAME).then(|| log.names.get(p.expression).to_string()),
                }
            }
            Slot::Whole(w) => log.whole_at(w).clone(),
        }
    }

    pub fn time(&self, i: usize) -> Millis {
        self.log.time(i)
    }

    pub fn cause(&self, i: usize) -> Option<EventId> {
        self.log.cause(i)
    }

    pub fn get(&self, id: EventId) -> Option<LogEntry<Event>> {
        let i = id.0 as usize;
        if i >= self.len() || i < self.log.first_kept() {
            return None;
        }
        Some(LogEntry { id, at: self.time(i), cause: self.cause(i), kind: self.kind_of(i) })
    }

    /// Every entry, decoded, in log order.
    pub fn entries(self) -> impl DoubleEndedIterator<Item = LogEntry<Event>> + 'a {
        self.entries_from(0)
    }

    /// The entries from index `from` on (decoding only those).
    pub fn entries_from(self, from: usize) -> impl DoubleEndedIterator<Item = LogEntry<Event>> + 'a {
        (from.clamp(self.log.first_kept(), self.len())..self.len()).map(move |i| LogEntry {
            id: EventId(i as u32),
            at: self.time(i),
            cause: self.cause(i),
            kind: self.kind_of(i),
        })
    }

    /// Like `entries_from`, front to back only: times and causes are walked, not searched for
    /// per entry (the rendered log reads every entry).
    pub fn walk_from(self, from: usize) -> impl Iterator<Item = LogEntry<Event>> + 'a {
        self.heads_from(from).map(move |(id, at, cause)| LogEntry { id, at, cause, kind: self.kind_of(id.0 as usize) })
    }

    /// (id, time, cause) of the entries from index `from` on, without decoding them.
    fn heads_from(self, from: usize) -> impl Iterator<Item = (EventId, Millis, Option<EventId>)> + 'a {
        let start = from.clamp(self.log.first_kept(), self.len());
        let at = self.log.times.values_from(start as u32);
        let cause = self.log.causes.values_from(start as u32);
        (start..self.len())
            .zip(at.zip(cause))
            .map(|(i, (at, cause))| (EventId(i as u32), at.unwrap_or(0), cause.filter(|&c| c != NO_CAUSE).map(EventId)))
    }

    /// Entry `i`'s line, as `write_line` writes the decoded entry. The commonest slots are written
    /// straight from the log's columns: a digest renders every entry, and building each event
    /// (name clones, then `core::fmt`) was most of its cost.
    fn write_head_line(&self, (id, at, cause): (EventId, Millis, Option<EventId>), out: &mut String) {
        write_line_prefix(out, id.0, at, cause.map(|c| c.0));
        let log = self.log;
        let i = id.0 as usize;
        match log.slots[i - log.base as usize] {
            Slot::Stored { msg } => {
                let m = &self.world.messages[msg as usize];
                out.push_str("stored m");
                push_decimal(out, msg.into());
                out.push(' ');
                out.push_str(&self.world.brokers[m.broker()].name);
                out.push(' ');
                out.push_str(m.topic());
                out.push(':');
                push_decimal(out, m.queue_id().into());
                out.push('@');
                push_decimal(out, m.queue_offset());
                out.push_str(" tag=");
                out.push_str(m.tag().as_deref().unwrap_or("-"));
            }
            Slot::Consumed { msg, client, reconsume_times } => {
                out.push_str("consumed m");
                push_decimal(out, msg.into());
                out.push_str(" by=");
                out.push_str(log.names.get(client));
                out.push_str(" reconsume=");
                push_decimal(out, reconsume_times.into());
            }
            Slot::Pull(p) => {
                let p = &log.pulls[(p - log.pulls_base) as usize];
                for (text, name) in [("pull ", p.broker), (" ", p.client), (" ", p.topic), (":", p.queue_broker)] {
                    out.push_str(text);
                    out.push_str(log.names.get(name));
                }
                for (text, n) in [(":", p.queue_id.into()), (" offset=", p.offset.into()), (" next=", p.next.into())] {
                    out.push_str(text);
                    push_decimal(out, n);
                }
                out.push_str(" status=");
                out.push_str(PULL_STATUSES[p.status as usize].name());
                out.push_str(" found=");
                push_decimal(out, p.found.into());
                out.push_str(" filter=");
                out.push_str(if p.expression != NO_NAME { log.names.get(p.expression) } else { "-" });
            }
            _ => {
                use std::fmt::Write as _;
                let _ = write!(out, "{}", self.kind_of(i));
            }
        }
    }

    /// The entry and its causes, newest first, back to the root.
    pub fn cause_chain(&self, id: EventId) -> Vec<LogEntry<Event>> {
        let mut out = Vec::new();
        let mut cur = Some(id);
        while let Some(e) = cur.and_then(|c| self.get(c)) {
            cur = e.cause;
            out.push(e);
        }
        out
    }

    /// (message, entry) for every entry about a message, in log order: the provenance index,
    /// read off the slots rather than kept beside them.
    pub fn message_events(self) -> impl Iterator<Item = (MsgId, EventId)> + 'a {
        (self.log.first_kept()..self.len()).filter_map(move |i| self.log.message(i).map(|m| (m, EventId(i as u32))))
    }

    /// One line per entry: `#id t=ms cause=#c kind`, as `EventLog::line` writes it.
    pub fn line(entry: &LogEntry<Event>) -> String {
        let mut s = String::new();
        write_line(&mut s, entry);
        s
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        if let Some(t) = self.log.compacted_before() {
            use std::fmt::Write as _;
            let _ = writeln!(
                s,
                "# entries #0..#{} (before t={t}) were compacted to stay inside the memory budget; the digest still covers them",
                self.log.first_kept().saturating_sub(1)
            );
        }
        for h in self.heads_from(0) {
            self.write_head_line(h, &mut s);
            s.push('\n');
        }
        s
    }

    /// FNV-1a over the rendered log, line by line (the same value `EventLog::digest` gives).
    pub fn digest(&self) -> u64 {
        self.digest_within(usize::MAX).unwrap_or_default()
    }

    /// The digest once at most `max_lines` more lines are hashed (`DigestMemo`); `None` until then.
    pub fn digest_within(&self, max_lines: usize) -> Option<u64> {
        self.log.digest.fold(
            self.fold_start(),
            self.len() as u32,
            max_lines,
            |r| self.heads_from(r.start as usize),
            |s, h| self.write_head_line(h, s),
        )
    }

    /// Where a digest of the kept entries starts: after the compacted ones' lines.
    fn fold_start(&self) -> FoldStart {
        (self.log.base, self.log.folded.unwrap_or(FNV1A64_OFFSET))
    }

    /// The digest state over the kept entries before `keep_from`, for `Log::drop_prefix`.
    fn fold_prefix(&self, keep_from: usize) -> u64 {
        let scratch = DigestMemo::default();
        let end = keep_from.min(self.len()) as u32;
        scratch
            .fold(self.fold_start(), end, usize::MAX, |r| self.heads_from(r.start as usize), |s, h| self.write_head_line(h, s))
            .unwrap_or_default()
    }
}

/// `shrink_to_fit` over the log's columns of different types.
impl World {
    /// Compacts the log: the oldest three quarters of the kept entries are folded into the
    /// digest and dropped. What a compacted entry said is gone; ids, the digest and every later
    /// entry are unchanged. Logs nothing, so a run's digest does not depend on whether (or, as
    /// estimates differ between 32- and 64-bit builds, where) it was compacted.
    pub(crate) fn compact_log(&mut self) {
        let log = std::mem::take(&mut self.log_store);
        let keep_from = log.first_kept() + (log.len() - log.first_kept()) * 3 / 4;
        let folded = LogView { log: &log, world: self }.fold_prefix(keep_from);
        self.log_store = log;
        self.log_store.drop_prefix(keep_from, folded);
    }
}

fn write_line(s: &mut String, entry: &LogEntry<Event>) {
    use std::fmt::Write as _;
    write_line_prefix(s, entry.id.0, entry.at, entry.cause.map(|c| c.0));
    let _ = write!(s, "{}", entry.kind);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_scenario;

    /// Pull responses and client-side drops are as many as the messages in a slowly fed group:
    /// they are stored compactly and must decode to exactly the event that was logged.
    #[test]
    fn pulls_and_client_filter_drops_decode_to_the_events_logged() {
        let world = World::new(
            parse_scenario(
                r#"{"format": "mqviz-scenario/1", "name": "t", "until": 1000, "brokers": [{"name": "b"}],
                "topics": [{"name": "T", "queues": 1}], "groups": []}"#,
            )
            .expect("valid"),
        );
        let name = |s: &str| Name::from(s);
        let mq = MessageQueue::new("T", "b", 3);
        let pull_at = |offset: u64, status: PullStatus, expression: Option<&str>| Event::PullServed {
            broker: name("b"),
            client: name("c1"),
            mq: mq.clone(),
            offset,
            next: offset + 32,
            status,
            found: 32,
            expression: expression.map(str::to_string),
        };
        let pull = |status, expression| pull_at(u64::from(u32::MAX) - 32, status, expression);
        let events = [
            Event::ClientFiltered { msg: 7, client: name("c1"), expression: "TagA".into(), current: None },
            Event::ClientFiltered { msg: 8, client: name("c2"), expression: "TagA".into(), current: Some("TagB".into()) },
            pull(PullStatus::Found, Some("TagA || TagB")),
            pull(PullStatus::NoNewMsg, None),
            pull(PullStatus::NoMatchedMsg, Some("")),
            pull(PullStatus::OffsetIllegal, Some("TagA")),
            pull(PullStatus::Error("SUBSCRIPTION_NOT_EXIST"), None),
            pull_at(1 << 40, PullStatus::Found, Some("TagA")),
        ];
        let mut log = Log::default();
        for (i, e) in events.iter().enumerate() {
            log.push(&[], &[], i as Millis, None, e.clone());
        }
        assert_eq!(log.pulls.len(), 4, "the four ordinary statuses are compact");
        assert_eq!(log.whole.len(), 2, "an error status, and offsets past 32 bits, stay whole events");
        let view = LogView { log: &log, world: &world };
        for (i, e) in events.iter().enumerate() {
            assert_eq!(view.kind_of(i).to_string(), e.to_string());
            assert_eq!(log.kind(i), e.kind());
            assert_eq!(log.message(i), e.message());
        }
    }

    /// A digest writes the commonest entries straight from the log's columns: every line must be
    /// what the decoded event's `Display` gives.
    #[test]
    fn lines_written_from_slots_equal_the_decoded_events_lines() {
        let mut w = World::new(parse_scenario(&crate::scenario::load_scenario(3000)).expect("valid"));
        w.run_to_end();
        let view = w.log();
        let mut kinds = mqviz_engine::vec_map::VecSet::new();
        for (head, entry) in view.heads_from(0).zip(view.entries()) {
            let mut direct = String::new();
            view.write_head_line(head, &mut direct);
            assert_eq!(direct, LogView::line(&entry));
            kinds.insert(match view.log.slots[entry.id.0 as usize] {
                Slot::Stored { .. } => "stored",
                Slot::Consumed { .. } => "consumed",
                Slot::Pull(_) => "pull",
                Slot::Whole(_) => "whole",
                Slot::BrokerFiltered { .. } | Slot::ClientFiltered { .. } => "filtered",
            });
        }
        assert!(["stored", "consumed", "pull", "whole"].iter().all(|k| kinds.contains(k)), "{kinds:?}");
        let statuses: mqviz_engine::vec_map::VecSet<_> = view.log.pulls.iter().map(|p| p.status).collect();
        assert!(statuses.len() >= 2, "more than one pull status: {statuses:?}");
    }

    #[test]
    fn past_the_first_65535_names_an_entry_is_kept_whole_and_reads_the_same() {
        let world = World::new(
            parse_scenario(
                r#"{"format": "mqviz-scenario/1", "name": "t", "until": 1000, "brokers": [{"name": "b"}],
                "topics": [{"name": "T", "queues": 1}], "groups": []}"#,
            )
            .expect("valid"),
        );
        let mut log = Log::default();
        let event = |i: u32| Event::Consumed { msg: i, client: Name::from(format!("c{i}")), reconsume_times: i % 3 };
        for i in 0..70_000u32 {
            log.push(&[], &[], Millis::from(i), None, event(i));
        }
        assert_eq!(log.whole.len(), 70_000 - 65_535, "names 0..65534 fit a slot");
        let view = LogView { log: &log, world: &world };
        for i in [0u32, 65_534, 65_535, 69_999] {
            assert_eq!(view.kind_of(i as usize).to_string(), event(i).to_string());
        }
    }
}
