//! The RocketMQ event log, stored compactly. A run logs a few entries per message (stored,
//! filtered, consumed), so those entries are small fixed-size slots naming the message and
//! interned names; every other event is kept whole in a side list. Times are stored once per
//! change of time and causes as `u32`. Entries are decoded back to `Event` on reading, with the
//! world's message records, and render byte for byte as the events they were built from.

use std::collections::BTreeMap;

use super::broker::Broker;
use super::events::{Event, MsgId, Name, PullStatus};
use super::store::Message;
use super::types::MessageQueue;
use super::world::World;
use crate::sim::engine::{EventId, LogEntry, Millis};
use crate::sim::hash::{fnv1a64_extend, FNV1A64_OFFSET};

/// The SQL92 verdicts a broker-side filter reports, by their index in a slot.
const VERDICTS: [&str; 5] = ["TRUE", "FALSE", "NULL", "EVAL_ERROR", "BLOOM_MISS"];
const NO_VERDICT: u8 = u8::MAX;
const NO_CAUSE: u32 = u32::MAX;

// What one entry costs besides its cause (4 bytes) and, rarely, a whole event: a regression
// here multiplies by millions.
const _: () = assert!(std::mem::size_of::<Slot>() <= 20);

/// One entry: a per-message event in a few words, or the index of a whole event.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// `MessageStored`: broker, topic, queue, offset and tag are the message record's.
    Stored {
        msg: MsgId,
    },
    Consumed {
        msg: MsgId,
        client: u32,
        reconsume_times: u32,
    },
    BrokerFiltered {
        msg: MsgId,
        client: u32,
        expression: u32,
        table_owner: u32,
        verdict: u8,
    },
    /// `ClientFiltered`: the expression and, for a pull sent before a switch, the one in force
    /// when it returned (`NO_NAME` when none).
    ClientFiltered {
        msg: MsgId,
        client: u32,
        expression: u32,
        current: u32,
    },
    /// `PullServed`, one per pull response: an index into `Log::pulls`.
    Pull(u32),
    Whole(u32),
}

const NO_NAME: u32 = u32::MAX;

/// A `PullServed` event in 48 bytes instead of a whole event (pulls are about as many as the
/// messages when queues are fed slowly). Error statuses stay whole events.
#[derive(Clone, Copy, Debug)]
struct PullSlot {
    offset: u64,
    next: u64,
    broker: u32,
    client: u32,
    topic: u32,
    queue_broker: u32,
    queue_id: u32,
    found: u32,
    expression: u32,
    status: u8,
}

const PULL_STATUSES: [PullStatus; 4] =
    [PullStatus::Found, PullStatus::NoNewMsg, PullStatus::NoMatchedMsg, PullStatus::OffsetIllegal];

/// Names and expressions as small ids: a log of millions of entries names a handful of them.
#[derive(Clone, Debug, Default)]
struct Interner {
    names: Vec<Name>,
    ids: BTreeMap<Name, u32>,
}

impl Interner {
    fn id(&mut self, s: &Name) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(s.clone());
        self.ids.insert(s.clone(), id);
        id
    }

    fn id_of_str(&mut self, s: &str) -> u32 {
        match self.ids.get(s) {
            Some(&id) => id,
            None => self.id(&Name::from(s)),
        }
    }

    fn get(&self, id: u32) -> &Name {
        &self.names[id as usize]
    }

    fn bytes(&self) -> usize {
        self.names.iter().map(|n| n.len() + 48).sum()
    }
}

#[derive(Clone, Debug, Default)]
pub struct Log {
    slots: Vec<Slot>,
    causes: Vec<u32>,
    /// (first entry, time) at each change of time.
    times: Vec<(u32, Millis)>,
    whole: Vec<Event>,
    pulls: Vec<PullSlot>,
    names: Interner,
}

impl Log {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
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
        let id = self.slots.len() as u32;
        let slot = self.slot(messages, brokers, kind);
        self.slots.push(slot);
        self.causes.push(cause.map_or(NO_CAUSE, |c| c.0));
        if self.times.last().is_none_or(|&(_, t)| t != at) {
            self.times.push((id, at));
        }
        EventId(id)
    }

    fn slot(&mut self, messages: &[Message], brokers: &[Broker], kind: Event) -> Slot {
        match kind {
            Event::MessageStored { msg, ref broker, ref topic, queue_id, offset, ref tag }
                if messages.get(msg as usize).is_some_and(|m| {
                    brokers.get(m.broker).is_some_and(|b| b.name == *broker)
                        && m.topic() == topic
                        && m.queue_id == queue_id
                        && m.queue_offset == offset
                        && m.tag() == tag
                }) =>
            {
                Slot::Stored { msg }
            }
            Event::Consumed { msg, ref client, reconsume_times } => {
                Slot::Consumed { msg, client: self.names.id(client), reconsume_times }
            }
            Event::BrokerFiltered { msg, ref client, ref expression, ref table_owner, verdict }
                if verdict.is_none_or(|v| VERDICTS.contains(&v)) =>
            {
                let verdict = verdict.and_then(|v| VERDICTS.iter().position(|x| *x == v)).map_or(NO_VERDICT, |i| i as u8);
                Slot::BrokerFiltered {
                    msg,
                    client: self.names.id(client),
                    expression: self.names.id_of_str(expression),
                    table_owner: self.names.id(table_owner),
                    verdict,
                }
            }
            Event::ClientFiltered { msg, ref client, ref expression, ref current } => Slot::ClientFiltered {
                msg,
                client: self.names.id(client),
                expression: self.names.id_of_str(expression),
                current: current.as_deref().map_or(NO_NAME, |c| self.names.id_of_str(c)),
            },
            Event::PullServed { ref broker, ref client, ref mq, offset, next, ref status, found, ref expression }
                if PULL_STATUSES.contains(status) =>
            {
                let pull = PullSlot {
                    offset,
                    next,
                    broker: self.names.id(broker),
                    client: self.names.id(client),
                    topic: self.names.id(&mq.topic),
                    queue_broker: self.names.id(&mq.broker),
                    queue_id: mq.queue_id,
                    found,
                    expression: expression.as_deref().map_or(NO_NAME, |e| self.names.id_of_str(e)),
                    status: PULL_STATUSES.iter().position(|s| s == status).unwrap_or(0) as u8,
                };
                self.pulls.push(pull);
                Slot::Pull(self.pulls.len() as u32 - 1)
            }
            other => {
                self.whole.push(other);
                Slot::Whole(self.whole.len() as u32 - 1)
            }
        }
    }

    fn time(&self, i: usize) -> Millis {
        let run = self.times.partition_point(|&(first, _)| first as usize <= i);
        self.times[run - 1].1
    }

    fn cause(&self, i: usize) -> Option<EventId> {
        Some(self.causes[i]).filter(|&c| c != NO_CAUSE).map(EventId)
    }

    /// The message an entry is about, without decoding it.
    pub fn message(&self, i: usize) -> Option<MsgId> {
        match self.slots.get(i)? {
            Slot::Stored { msg }
            | Slot::Consumed { msg, .. }
            | Slot::BrokerFiltered { msg, .. }
            | Slot::ClientFiltered { msg, .. } => Some(*msg),
            Slot::Pull(_) => None,
            Slot::Whole(w) => self.whole[*w as usize].message(),
        }
    }

    /// The entry's kind name (`Event::kind`), without decoding it.
    pub fn kind(&self, i: usize) -> &'static str {
        match self.slots.get(i) {
            Some(Slot::Stored { .. }) => "store",
            Some(Slot::Consumed { .. }) => "consume",
            Some(Slot::BrokerFiltered { .. } | Slot::ClientFiltered { .. }) => "filter",
            Some(Slot::Pull(_)) => "pull",
            Some(Slot::Whole(w)) => self.whole[*w as usize].kind(),
            None => "",
        }
    }

    /// Bytes the log holds (its own estimate: slots, causes, times, whole events and names).
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.slots.len() * size_of::<Slot>()
            + self.causes.len() * size_of::<u32>()
            + self.times.len() * size_of::<(u32, Millis)>()
            + self.whole.len() * (size_of::<Event>() + 64)
            + self.pulls.len() * size_of::<PullSlot>()
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

    pub fn kind_of(&self, i: usize) -> Event {
        let log = self.log;
        match log.slots[i] {
            Slot::Stored { msg } => {
                let m = &self.world.messages[msg as usize];
                Event::MessageStored {
                    msg,
                    broker: self.world.brokers[m.broker].name.clone(),
                    topic: m.topic().clone(),
                    queue_id: m.queue_id,
                    offset: m.queue_offset,
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
                let p = log.pulls[p as usize];
                Event::PullServed {
                    broker: log.names.get(p.broker).clone(),
                    client: log.names.get(p.client).clone(),
                    mq: MessageQueue::new(log.names.get(p.topic).clone(), log.names.get(p.queue_broker).clone(), p.queue_id),
                    offset: p.offset,
                    next: p.next,
                    status: PULL_STATUSES[p.status as usize].clone(),
                    found: p.found,
                    expression: (p.expression != NO_NAME).then(|| log.names.get(p.expression).to_string()),
                }
            }
            Slot::Whole(w) => log.whole[w as usize].clone(),
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
        if i >= self.len() {
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
        (from.min(self.len())..self.len()).map(move |i| LogEntry {
            id: EventId(i as u32),
            at: self.time(i),
            cause: self.cause(i),
            kind: self.kind_of(i),
        })
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
        (0..self.len()).filter_map(move |i| self.log.message(i).map(|m| (m, EventId(i as u32))))
    }

    /// One line per entry: `#id t=ms cause=#c kind`, as `EventLog::line` writes it.
    pub fn line(entry: &LogEntry<Event>) -> String {
        let mut s = String::new();
        write_line(&mut s, entry);
        s
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        for e in self.entries() {
            write_line(&mut s, &e);
            s.push('\n');
        }
        s
    }

    /// FNV-1a over the rendered log, line by line (the same value `EventLog::digest` gives).
    pub fn digest(&self) -> u64 {
        let mut h = FNV1A64_OFFSET;
        let mut line = String::new();
        for e in self.entries() {
            line.clear();
            write_line(&mut line, &e);
            line.push('\n');
            h = fnv1a64_extend(h, line.as_bytes());
        }
        h
    }
}

fn write_line(s: &mut String, entry: &LogEntry<Event>) {
    use std::fmt::Write as _;
    let _ = write!(s, "{} t={} ", entry.id, entry.at);
    match entry.cause {
        Some(c) => {
            let _ = write!(s, "cause={c} ");
        }
        None => s.push_str("cause=- "),
    }
    let _ = write!(s, "{}", entry.kind);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rocketmq::scenario::parse_scenario;

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
        let pull = |status: PullStatus, expression: Option<&str>| Event::PullServed {
            broker: name("b"),
            client: name("c1"),
            mq: mq.clone(),
            offset: 1 << 40,
            next: (1 << 40) + 32,
            status,
            found: 32,
            expression: expression.map(str::to_string),
        };
        let events = [
            Event::ClientFiltered { msg: 7, client: name("c1"), expression: "TagA".into(), current: None },
            Event::ClientFiltered { msg: 8, client: name("c2"), expression: "TagA".into(), current: Some("TagB".into()) },
            pull(PullStatus::Found, Some("TagA || TagB")),
            pull(PullStatus::NoNewMsg, None),
            pull(PullStatus::NoMatchedMsg, Some("")),
            pull(PullStatus::OffsetIllegal, Some("TagA")),
            pull(PullStatus::Error("SUBSCRIPTION_NOT_EXIST"), None),
        ];
        let mut log = Log::default();
        for (i, e) in events.iter().enumerate() {
            log.push(&[], &[], i as Millis, None, e.clone());
        }
        assert_eq!(log.pulls.len(), 4, "the four ordinary statuses are compact");
        assert_eq!(log.whole.len(), 1, "an error status stays a whole event");
        let view = LogView { log: &log, world: &world };
        for (i, e) in events.iter().enumerate() {
            assert_eq!(view.kind_of(i).to_string(), e.to_string());
            assert_eq!(log.kind(i), e.kind());
            assert_eq!(log.message(i), e.message());
        }
    }
}
