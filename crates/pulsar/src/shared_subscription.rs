//! The dispatcher state of one Shared subscription (spec §1.3, §6 item 3): consumers and their
//! pending acks, the replay set read before new entries, and the subscription-wide unacked limit.
//! Picking and batch sizes are `shared_dispatch`'s; this file keeps the books around them.

use mqviz_engine::sort::CollectSorted;
use std::collections::BTreeMap;

use super::replay::ReplaySet;
use super::shared_dispatch::{
    dispatch_round, LimitChange, OfferedEntry, SharedConsumer, SharedConsumerList, SharedDispatchLimits, SharedRound,
    UnackedLimit,
};

/// What to read next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SharedRead {
    /// Re-read these replay positions (ascending) first.
    Replay(Vec<i64>),
    /// Read up to this many new entries.
    Normal { max_entries: usize },
    /// No consumer can take anything (no permits, blocked, or the subscription is at its limit).
    Idle,
}

/// Limits that an ack or redelivery released.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Released {
    pub consumer_unblocked: bool,
    pub subscription_unblocked: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedSubscription {
    pub consumers: SharedConsumerList,
    pub replay: ReplaySet,
    pub subscription_unacked: UnackedLimit,
    pub limits: SharedDispatchLimits,
    /// Per consumer: position → messages of each entry sent and not acked.
    pending: BTreeMap<u64, BTreeMap<i64, u32>>,
}

impl SharedSubscription {
    pub fn new(limits: SharedDispatchLimits) -> SharedSubscription {
        SharedSubscription {
            consumers: SharedConsumerList::new(),
            replay: ReplaySet::new(),
            subscription_unacked: UnackedLimit::new(limits.max_unacked_per_subscription),
            limits,
            pending: BTreeMap::new(),
        }
    }

    /// A consumer subscribes; the broker's per-consumer unacked limit applies to it.
    pub fn add_consumer(&mut self, mut consumer: SharedConsumer) {
        consumer.unacked = UnackedLimit::new(self.limits.max_unacked_per_consumer);
        self.pending.insert(consumer.consumer_id, BTreeMap::new());
        self.consumers.add(consumer);
    }

    /// A consumer closes or disconnects: everything it had not acked goes to the replay set, for
    /// any consumer. Returns those positions.
    pub fn remove_consumer(&mut self, consumer_id: u64) -> Vec<i64> {
        self.consumers.remove(consumer_id);
        let pending = self.pending.remove(&consumer_id).unwrap_or_default();
        let messages: u32 = pending.values().sum();
        self.subscription_unacked.remove(messages);
        for &p in pending.keys() {
            self.replay.add(p, 0);
        }
        pending.into_keys().collect()
    }

    /// FLOW.
    pub fn flow(&mut self, consumer_id: u64, permits: u32) {
        if let Some(c) = self.consumers.get_mut(consumer_id) {
            c.permits = c.permits.saturating_add(permits);
        }
    }

    /// Positions sent to `consumer_id` and not acked, ascending.
    pub fn pending_positions(&self, consumer_id: u64) -> Vec<i64> {
        self.pending.get(&consumer_id).map(|p| p.keys().copied().collect()).unwrap_or_default()
    }

    /// Replay first, then new entries.
    pub fn next_read(&self, max_entries: usize) -> SharedRead {
        if self.subscription_unacked.blocked || !self.consumers.consumers().iter().any(SharedConsumer::is_available) {
            return SharedRead::Idle;
        }
        if self.replay.is_empty() {
            SharedRead::Normal { max_entries }
        } else {
            SharedRead::Replay(self.replay.first(max_entries).into_iter().map(|(p, _)| p).collect())
        }
    }

    /// Hands `entries` out round robin. Sent replay entries leave the replay set; whatever no
    /// consumer could take (re)enters it.
    pub fn dispatch(&mut self, entries: &[OfferedEntry]) -> SharedRound {
        let round = dispatch_round(&mut self.consumers, &mut self.subscription_unacked, entries, &self.limits);
        let messages_of: BTreeMap<i64, u32> = entries.iter().map(|e| (e.position, e.messages.max(1))).collect_map();
        for (consumer, positions) in &round.sends {
            let pending = self.pending.entry(*consumer).or_default();
            for p in positions {
                self.replay.remove(*p);
                pending.insert(*p, messages_of.get(p).copied().unwrap_or(1));
            }
        }
        for &p in &round.left_over {
            self.replay.add(p, 0);
        }
        round
    }

    fn release(&mut self, consumer_id: u64, position: i64) -> Option<(u32, Released)> {
        let messages = self.pending.get_mut(&consumer_id)?.remove(&position)?;
        let mut released = Released {
            subscription_unblocked: self.subscription_unacked.remove(messages) == LimitChange::Unblocked,
            ..Released::default()
        };
        if let Some(c) = self.consumers.get_mut(consumer_id) {
            released.consumer_unblocked = c.unacked.remove(messages) == LimitChange::Unblocked;
        }
        Some((messages, released))
    }

    /// An individual ack.
    pub fn ack(&mut self, consumer_id: u64, position: i64) -> Released {
        self.release(consumer_id, position).map(|(_, r)| r).unwrap_or_default()
    }

    /// Negative ack, ack timeout or `redeliverUnacknowledgedMessages`: the positions return to
    /// the replay set and may go to any consumer; ordering is not preserved.
    pub fn redeliver(&mut self, consumer_id: u64, positions: &[i64]) -> Released {
        let mut all = Released::default();
        for &p in positions {
            if let Some((_, r)) = self.release(consumer_id, p) {
                self.replay.add(p, 0);
                all.consumer_unblocked |= r.consumer_unblocked;
                all.subscription_unblocked |= r.subscription_unblocked;
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(range: std::ops::Range<i64>) -> Vec<OfferedEntry> {
        range.map(|position| OfferedEntry { position, messages: 1 }).collect()
    }

    #[test]
    fn closing_consumer_returns_pending_to_replay_which_is_read_first() {
        let mut s = SharedSubscription::new(SharedDispatchLimits::default());
        s.add_consumer(SharedConsumer::new(1, 0, 3));
        s.add_consumer(SharedConsumer::new(2, 0, 0));
        assert_eq!(s.next_read(10), SharedRead::Normal { max_entries: 10 });
        let round = s.dispatch(&entries(0..5));
        assert_eq!(round.sends, vec![(1, vec![0, 1, 2])]);
        assert_eq!(s.replay.positions().into_iter().collect::<Vec<_>>(), vec![3, 4]);
        s.ack(1, 1);
        assert_eq!(s.remove_consumer(1), vec![0, 2]);
        assert_eq!(s.next_read(10), SharedRead::Idle);
        s.flow(2, 10);
        assert_eq!(s.next_read(10), SharedRead::Replay(vec![0, 2, 3, 4]));
        let replayed: Vec<OfferedEntry> = [0, 2, 3, 4].map(|position| OfferedEntry { position, messages: 1 }).to_vec();
        let round = s.dispatch(&replayed);
        assert_eq!(round.sends, vec![(2, vec![0, 2, 3, 4])]);
        assert!(s.replay.is_empty());
        assert_eq!(s.subscription_unacked.unacked, 4);
    }

    #[test]
    fn subscription_limit_blocks_every_consumer_until_half() {
        let limits = SharedDispatchLimits { max_unacked_per_subscription: 4, ..SharedDispatchLimits::default() };
        let mut s = SharedSubscription::new(limits);
        s.add_consumer(SharedConsumer::new(1, 0, 100));
        s.dispatch(&entries(0..6));
        assert!(s.subscription_unacked.blocked);
        assert_eq!(s.next_read(10), SharedRead::Idle);
        assert_eq!(s.redeliver(1, &[0]), Released::default());
        assert_eq!(s.ack(1, 1), Released { subscription_unblocked: true, consumer_unblocked: false });
        assert_eq!(s.next_read(10), SharedRead::Replay(vec![0, 4, 5]));
    }
}
