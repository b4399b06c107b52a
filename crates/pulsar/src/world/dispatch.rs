//! Reading entries and handing them to consumers, per dispatcher type. The algorithm layer
//! decides who gets what (`failover`, `shared_subscription`, `key_shared`); this file reads the
//! cursor or the replay set, feeds the dispatcher, ships the result over the network and logs it.

use super::{Action, DeliverItem, Dispatcher, World, MAX_ROUNDS_PER_READ};
use crate::events::Event;
use crate::hash::fold_sticky_hash;
use crate::key_shared::{HoldReason, KeyedEntry, ReadPlan, ReadType};
use crate::shared_dispatch::OfferedEntry;
use crate::shared_subscription::SharedRead;
use mqviz_engine::Millis;

/// What one dispatch round produced, before it is logged and shipped.
struct Round {
    items: Vec<DeliverItem>,
    replay: bool,
    /// Entries read from the cursor (a round that only moved entries into the replay set still progressed).
    read_new: usize,
    /// The cursor had fewer entries than the read asked for: it is caught up.
    exhausted: bool,
    held: Vec<(i64, HoldReason)>,
    delayed: Vec<(i64, Millis)>,
    newly_blocked: Vec<u64>,
    subscription_blocked: bool,
}

impl Round {
    fn new(replay: bool) -> Round {
        Round::with_items(replay, Vec::new())
    }

    /// A round filling a recycled (empty) items buffer.
    fn with_items(replay: bool, items: Vec<DeliverItem>) -> Round {
        Round {
            items,
            replay,
            read_new: 0,
            exhausted: false,
            held: Vec::new(),
            delayed: Vec::new(),
            newly_blocked: Vec::new(),
            subscription_blocked: false,
        }
    }
}

/// The consumers' permits summed, but never past `cap` (a read asks for at most `cap` entries,
/// so there is no need to look at every consumer once that many are available).
fn capped_sum(permits: impl Iterator<Item = u32>, cap: usize) -> usize {
    let mut total = 0usize;
    for p in permits {
        total += p as usize;
        if total >= cap {
            return cap;
        }
    }
    total
}

/// Why an entry was held, in words.
pub fn hold_reason_text(r: HoldReason) -> &'static str {
    match r {
        HoldReason::NoConsumer => "no connected consumer owns its hash (a STICKY gap, or no consumer)",
        HoldReason::NoPermits => "its consumer has no permits",
        HoldReason::HashInReplay => "an earlier entry with the same key waits in the replay set",
        HoldReason::EarlierEntryHeld => "an earlier entry with the same key in this read was held",
        HoldReason::Draining => {
            "PIP-379: its hash is draining at the previous owner, which still has unacked messages of that key"
        }
        HoldReason::RecentlyJoined => "classic Key_Shared: its consumer joined recently and the entry is past its join position",
    }
}

impl World {
    /// Schedules a read of the subscription `delay` from now, unless one is due sooner.
    pub(super) fn request_read(&mut self, partition: u32, s: u32, delay: Millis) {
        let at = self.now + delay;
        let Some(sub) = self.partitions[partition as usize].subscriptions.get_mut(s as usize) else { return };
        if sub.read_at.is_some_and(|t| t <= at) {
            return;
        }
        sub.read_at = Some(at);
        self.schedule(delay, Action::Read { partition, subscription: s });
    }

    pub(super) fn handle_read(&mut self, partition: u32, s: u32) {
        let now = self.now;
        let sub = &mut self.partitions[partition as usize].subscriptions[s as usize];
        if sub.read_at.is_some_and(|t| t <= now) {
            sub.read_at = None;
        }
        let mut rounds = 0;
        loop {
            let round = match &self.partitions[partition as usize].subscriptions[s as usize].dispatcher {
                Some(Dispatcher::Single(_)) => self.round_single(partition, s),
                Some(Dispatcher::Shared(_)) => self.round_shared(partition, s),
                Some(Dispatcher::KeyShared(_)) => self.round_key_shared(partition, s),
                None => None,
            };
            let Some(round) = round else { break };
            let progressed = !round.items.is_empty() || round.read_new > 0;
            // A normal read that got less than it asked for found the cursor caught up; with no
            // replay pending there is nothing more to read now.
            let caught_up = round.exhausted && !self.has_replay(partition, s);
            self.finish_round(partition, s, round);
            if !progressed || caught_up {
                break;
            }
            rounds += 1;
            if rounds >= MAX_ROUNDS_PER_READ {
                self.request_read(partition, s, 0);
                break;
            }
        }
        self.check_end_of_topic(partition, s);
    }

    /// Exclusive / Failover: the active consumer gets entries from the read position while it has permits.
    fn round_single(&mut self, partition: u32, s: u32) -> Option<Round> {
        let max_read = self.scenario.config.max_read_batch;
        let part = &mut self.partitions[partition as usize];
        let entries = &part.entries;
        let sub = &mut part.subscriptions[s as usize];
        let Some(Dispatcher::Single(d)) = &sub.dispatcher else { return None };
        if d.ignores_flow_and_redeliver() {
            return None;
        }
        let active = d.active?;
        let member = sub.members.get_mut(&active)?;
        if member.permits == 0 {
            return None;
        }
        let wanted = max_read.min(member.permits) as usize;
        let positions = sub.cursor.read_entries(wanted);
        if positions.is_empty() {
            return None;
        }
        let mut round = Round::new(false);
        round.read_new = positions.len();
        round.exhausted = positions.len() < wanted;
        for p in positions {
            let messages = entries[p as usize].messages;
            member.permits = member.permits.saturating_sub(messages);
            round.items.push(DeliverItem {
                consumer: member.consumer,
                attachment: member.attachment,
                consumer_id: active,
                partition,
                entry: p,
                // The single-active dispatcher runs without a redelivery tracker.
                redelivery_count: 0,
                epoch: member.epoch,
            });
            sub.last_sent = sub.last_sent.max(p);
        }
        Some(round)
    }

    /// Shared: replay first, then new entries, round robin by priority with permits.
    fn round_shared(&mut self, partition: u32, s: u32) -> Option<Round> {
        let max_read = self.scenario.config.max_read_batch as usize;
        let now = self.now;
        let messages = &self.messages;
        let part = &mut self.partitions[partition as usize];
        let entries = &part.entries;
        let sub = &mut part.subscriptions[s as usize];
        let Some(Dispatcher::Shared(sh)) = sub.dispatcher.as_mut() else { return None };
        let was_blocked = sh.subscription_unacked.blocked;
        let mut round;
        let positions = match sh.next_read(max_read) {
            SharedRead::Idle => return None,
            SharedRead::Replay(ps) => {
                round = Round::new(true);
                let mut keep = Vec::with_capacity(ps.len());
                for p in ps {
                    if sub.cursor.is_acked(p) {
                        sh.replay.remove(p);
                    } else {
                        keep.push(p);
                    }
                }
                if keep.is_empty() {
                    round.read_new = 1; // only cleaned acked entries out of the replay set
                    return Some(round);
                }
                keep
            }
            SharedRead::Normal { max_entries } => {
                round = Round::new(false);
                let available = sh.consumers.consumers().iter().filter(|c| c.is_available()).map(|c| c.permits);
                let wanted = capped_sum(available, max_entries).max(1);
                let read = sub.cursor.read_entries(wanted);
                if read.is_empty() {
                    return None;
                }
                round.read_new = read.len();
                round.exhausted = read.len() < wanted;
                let (due, later): (Vec<i64>, Vec<i64>) =
                    read.into_iter().partition(|&p| entries[p as usize].deliver_at(messages) <= now);
                for p in later {
                    sub.delayed.insert(p);
                    round.delayed.push((p, entries[p as usize].deliver_at(messages)));
                }
                due
            }
        };
        let offered: Vec<OfferedEntry> =
            positions.iter().map(|&p| OfferedEntry { position: p, messages: entries[p as usize].messages }).collect();
        let result = sh.dispatch(&offered);
        round.newly_blocked = result.newly_blocked;
        round.subscription_blocked = !was_blocked && sh.subscription_unacked.blocked;
        for (consumer_id, ps) in result.sends {
            let Some(member) = sub.members.get(&consumer_id) else { continue };
            for p in ps {
                round.items.push(DeliverItem {
                    consumer: member.consumer,
                    attachment: member.attachment,
                    consumer_id,
                    partition,
                    entry: p,
                    redelivery_count: sub.redelivery.count(p),
                    epoch: member.epoch,
                });
                sub.last_sent = sub.last_sent.max(p);
            }
        }
        Some(round)
    }

    /// Key_Shared: each entry goes to its hash's consumer, or is held in the replay set.
    fn round_key_shared(&mut self, partition: u32, s: u32) -> Option<Round> {
        // The read buffers are reused from round to round: this is the hottest loop of a run.
        let mut positions = std::mem::take(&mut self.scratch.positions);
        let mut batch = std::mem::take(&mut self.scratch.keyed);
        positions.clear();
        batch.clear();
        let items = self.scratch.items.pop().unwrap_or_default();
        let round = self.round_key_shared_with(partition, s, &mut positions, &mut batch, items);
        self.scratch.positions = positions;
        self.scratch.keyed = batch;
        round
    }

    fn round_key_shared_with(
        &mut self,
        partition: u32,
        s: u32,
        read: &mut Vec<i64>,
        batch: &mut Vec<KeyedEntry>,
        items: Vec<DeliverItem>,
    ) -> Option<Round> {
        let max_read = self.scenario.config.max_read_batch as usize;
        let now = self.now;
        let messages = &self.messages;
        let part = &mut self.partitions[partition as usize];
        let entries = &part.entries;
        let sub = &mut part.subscriptions[s as usize];
        let Some(Dispatcher::KeyShared(ks)) = sub.dispatcher.as_mut() else { return None };
        let (start, end) = ks.selector.key_hash_range();
        let keyed = |p: i64| {
            let e = &entries[p as usize];
            KeyedEntry { position: p, hash: fold_sticky_hash(e.key_make_hash, start, end), messages: e.messages }
        };
        let mut round;
        let read_type = match ks.next_read(max_read) {
            ReadPlan::Idle => return None,
            ReadPlan::Replay(ps) => {
                round = Round::with_items(true, items);
                for p in ps {
                    if sub.cursor.is_acked(p) {
                        ks.replay.remove(p);
                    } else {
                        batch.push(keyed(p));
                    }
                }
                if batch.is_empty() {
                    round.read_new = 1;
                    return Some(round);
                }
                ReadType::Replay
            }
            ReadPlan::Normal { max_entries } => {
                round = Round::with_items(false, items);
                let wanted = capped_sum(ks.consumers().map(|c| c.permits.min(c.unacked.room())), max_entries).max(1);
                sub.cursor.read_entries_into(wanted, read);
                if read.is_empty() {
                    return None;
                }
                round.read_new = read.len();
                round.exhausted = read.len() < wanted;
                for &p in read.iter() {
                    let deliver_at = entries[p as usize].deliver_at(messages);
                    if deliver_at > now {
                        sub.delayed.insert(p);
                        round.delayed.push((p, deliver_at));
                    } else {
                        batch.push(keyed(p));
                    }
                }
                ReadType::Normal
            }
        };
        let result = &mut self.scratch.key_shared_round;
        ks.dispatch_into(batch, read_type, result);
        // A replay read that sent nothing makes the next read look ahead at new entries at once.
        if read_type == ReadType::Replay && result.skip_next_replay {
            round.read_new = round.read_new.max(1);
        }
        round.held = std::mem::take(&mut result.held);
        for &(consumer_id, p) in &result.sends {
            let Some(member) = sub.members.get(&consumer_id) else { continue };
            round.items.push(DeliverItem {
                consumer: member.consumer,
                attachment: member.attachment,
                consumer_id,
                partition,
                entry: p,
                redelivery_count: sub.redelivery.count(p),
                epoch: member.epoch,
            });
            sub.last_sent = sub.last_sent.max(p);
        }
        Some(round)
    }

    /// Logs a round (sends, holds, blocks), schedules delayed entries and ships the sends.
    fn finish_round(&mut self, partition: u32, s: u32, round: Round) {
        for (p, reason) in round.held {
            // Running out of permits is ordinary flow control: not worth a line per entry.
            if reason == HoldReason::NoPermits {
                continue;
            }
            let part = &mut self.partitions[partition as usize];
            let sub = &mut part.subscriptions[s as usize];
            // Once an entry is held, log again only when the root cause changes (the same-key
            // reasons just say an earlier entry of its key is held).
            let derived = matches!(reason, HoldReason::HashInReplay | HoldReason::EarlierEntryHeld);
            if sub.held.get(&p) == Some(&reason) || (derived && sub.held.contains_key(&p)) {
                continue;
            }
            sub.held.insert(p, reason);
            let e = part.entries[p as usize];
            let event = self.emit(Event::Held { msg: e.first_msg, sub: s, reason });
            for m in e.first_msg + 1..e.first_msg + e.messages {
                self.index_message(m, event);
            }
        }
        for (p, at) in round.delayed {
            self.schedule(at.saturating_sub(self.now), Action::DelayedDue { partition, subscription: s, position: p });
        }
        for consumer_id in round.newly_blocked {
            if let Some(consumer) = self.member_consumer(partition, s, consumer_id) {
                let limit = self.scenario.config.max_unacked_per_consumer;
                self.emit(Event::ConsumerBlocked { consumer, partition, unacked: limit, limit });
            }
        }
        if round.subscription_blocked {
            let unacked = self.scenario.config.max_unacked_per_subscription;
            self.emit(Event::SubscriptionBlocked { partition, sub: s, unacked });
        }
        if round.items.is_empty() {
            self.recycle_items(round.items);
            return;
        }
        let sub = &mut self.partitions[partition as usize].subscriptions[s as usize];
        if !sub.held.is_empty() {
            for it in &round.items {
                sub.held.remove(&it.entry);
            }
        }
        let consumers = self.distinct_consumers(&round.items);
        self.emit(Event::Dispatched { partition, sub: s, entries: round.items.len() as u32, consumers, replay: round.replay });
        self.ship(round.items);
    }

    /// How many consumers a round reaches: marks in a reused table instead of a sort per round.
    fn distinct_consumers(&mut self, items: &[DeliverItem]) -> u32 {
        let seen = &mut self.scratch.consumer_seen;
        seen.resize(self.consumers.len(), false);
        let mut distinct = 0;
        for i in items {
            let mark = &mut seen[i.consumer as usize];
            distinct += u32::from(!*mark);
            *mark = true;
        }
        for i in items {
            seen[i.consumer as usize] = false;
        }
        distinct
    }

    /// Keeps a position list that has been read for the next ack group.
    pub(super) fn recycle_positions(&mut self, mut positions: Vec<i64>) {
        if self.scratch.positions_pool.len() < 64 {
            positions.clear();
            self.scratch.positions_pool.push(positions);
        }
    }

    /// Keeps an emptied delivery buffer for the next round.
    pub(super) fn recycle_items(&mut self, mut items: Vec<DeliverItem>) {
        if self.scratch.items.len() < 16 {
            items.clear();
            self.scratch.items.push(items);
        }
    }

    fn has_replay(&self, partition: u32, s: u32) -> bool {
        match &self.partitions[partition as usize].subscriptions[s as usize].dispatcher {
            Some(Dispatcher::Shared(sh)) => !sh.replay.is_empty(),
            Some(Dispatcher::KeyShared(ks)) => !ks.replay.is_empty(),
            _ => false,
        }
    }

    /// Sends entries over the network: one delivery per distinct consumer latency.
    fn ship(&mut self, items: Vec<DeliverItem>) {
        let latency_of = |w: &World, i: &DeliverItem| w.consumers[i.consumer as usize].latency;
        let first = latency_of(self, &items[0]);
        if items.iter().all(|i| latency_of(self, i) == first) {
            self.schedule(first, Action::Deliver { items });
            return;
        }
        let mut by_latency: std::collections::BTreeMap<Millis, Vec<DeliverItem>> = Default::default();
        for i in items {
            by_latency.entry(latency_of(self, &i)).or_default().push(i);
        }
        for (latency, items) in by_latency {
            self.schedule(latency, Action::Deliver { items });
        }
    }

    /// A delayed entry (a retry copy) is due: it joins the replay set.
    pub(super) fn handle_delayed_due(&mut self, partition: u32, s: u32, position: i64) {
        let part = &mut self.partitions[partition as usize];
        let e = part.entries[position as usize];
        let sub = &mut part.subscriptions[s as usize];
        if !sub.delayed.remove(&position) {
            return;
        }
        match sub.dispatcher.as_mut() {
            Some(Dispatcher::Shared(sh)) => sh.replay.add(position, 0),
            Some(Dispatcher::KeyShared(ks)) => {
                let (start, end) = ks.selector.key_hash_range();
                let hash = if ks.config.allow_out_of_order_delivery { 0 } else { fold_sticky_hash(e.key_make_hash, start, end) };
                ks.replay.add(position, hash);
            }
            // The consumers left: the rewound cursor reads it again.
            _ => return,
        }
        self.request_read(partition, s, 0);
    }

    /// On a terminated topic (a sealed segment), consumers that have read everything hear
    /// `ReachedEndOfTopic`.
    pub(super) fn check_end_of_topic(&mut self, partition: u32, s: u32) {
        let part = &self.partitions[partition as usize];
        if !part.terminated {
            return;
        }
        let sub = &part.subscriptions[s as usize];
        let replay_empty = match &sub.dispatcher {
            Some(Dispatcher::Shared(sh)) => sh.replay.is_empty(),
            Some(Dispatcher::KeyShared(ks)) => ks.replay.is_empty(),
            _ => true,
        };
        if sub.cursor.has_more_entries() || !replay_empty || !sub.delayed.is_empty() {
            return;
        }
        let waiting: Vec<(u64, u32, u32)> =
            sub.members.iter().filter(|(_, m)| !m.end_of_topic_sent).map(|(&id, m)| (id, m.consumer, m.attachment)).collect();
        for (id, consumer, attachment) in waiting {
            if let Some(m) = self.partitions[partition as usize].subscriptions[s as usize].members.get_mut(&id) {
                m.end_of_topic_sent = true;
            }
            let con = &self.consumers[consumer as usize];
            let (incarnation, latency) = (con.incarnation, con.latency);
            self.schedule(latency, Action::EndOfTopicArrive { consumer, incarnation, attachment });
        }
    }
}
