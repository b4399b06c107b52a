//! Shared subscriptions (spec §1.3, §5, §6 item 3): the priority-aware round robin over consumers
//! with permits (`getNextConsumer`), how many entries one pick receives, and the unacked-message
//! limits that block a consumer (or the whole subscription) until it is back to half the limit.

use super::defaults::{
    DISPATCHER_MAX_ROUND_ROBIN_BATCH_SIZE, MAX_UNACKED_MESSAGES_PER_CONSUMER, MAX_UNACKED_MESSAGES_PER_SUBSCRIPTION,
};

/// An unacked-messages limit: reaching it blocks, falling to `limit / 2` unblocks. 0 = no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnackedLimit {
    pub limit: u32,
    pub unacked: u32,
    pub blocked: bool,
}

/// A transition of an `UnackedLimit`, so the simulation can log it and re-send blocked permits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitChange {
    None,
    Blocked,
    Unblocked,
}

impl UnackedLimit {
    pub fn new(limit: u32) -> UnackedLimit {
        UnackedLimit { limit, unacked: 0, blocked: false }
    }

    /// Messages were sent (they are now pending acks).
    pub fn add(&mut self, messages: u32) -> LimitChange {
        self.unacked = self.unacked.saturating_add(messages);
        if self.limit > 0 && !self.blocked && self.unacked >= self.limit {
            self.blocked = true;
            return LimitChange::Blocked;
        }
        LimitChange::None
    }

    /// Messages were acked or returned for redelivery.
    pub fn remove(&mut self, messages: u32) -> LimitChange {
        self.unacked = self.unacked.saturating_sub(messages);
        if self.blocked && self.unacked <= self.limit / 2 {
            self.blocked = false;
            return LimitChange::Unblocked;
        }
        LimitChange::None
    }

    /// How many more messages fit before the limit (unbounded when there is no limit).
    pub fn room(&self) -> u32 {
        if self.limit == 0 {
            u32::MAX
        } else {
            self.limit.saturating_sub(self.unacked)
        }
    }
}

/// One consumer of a Shared (or Key_Shared) dispatcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedConsumer {
    pub consumer_id: u64,
    /// 0 is the highest priority.
    pub priority: i32,
    /// Messages the consumer asked for (FLOW) and has not yet been sent.
    pub permits: u32,
    /// Blocked for a reason outside this module (closing, a test fixture's flag).
    pub blocked: bool,
    /// The connection accepts writes; a non-writable channel gets one entry per pick.
    pub writable: bool,
    pub unacked: UnackedLimit,
}

impl SharedConsumer {
    pub fn new(consumer_id: u64, priority: i32, permits: u32) -> SharedConsumer {
        SharedConsumer {
            consumer_id,
            priority,
            permits,
            blocked: false,
            writable: true,
            unacked: UnackedLimit::new(MAX_UNACKED_MESSAGES_PER_CONSUMER),
        }
    }

    /// `isConsumerAvailable`: not blocked, connected, and with permits.
    pub fn is_available(&self) -> bool {
        !self.blocked && !self.unacked.blocked && self.permits > 0
    }
}

/// The dispatcher's consumer list, kept sorted by priority (stable: subscribe order within a
/// level), and the round-robin index pointing past the last consumer served.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedConsumerList {
    consumers: Vec<SharedConsumer>,
    round_robin_index: usize,
}

impl SharedConsumerList {
    pub fn new() -> SharedConsumerList {
        SharedConsumerList::default()
    }

    pub fn consumers(&self) -> &[SharedConsumer] {
        &self.consumers
    }

    pub fn len(&self) -> usize {
        self.consumers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.consumers.is_empty()
    }

    /// Inserts after every consumer of the same or a higher priority.
    pub fn add(&mut self, consumer: SharedConsumer) {
        let at = self.consumers.iter().position(|c| c.priority > consumer.priority).unwrap_or(self.consumers.len());
        self.consumers.insert(at, consumer);
    }

    pub fn remove(&mut self, consumer_id: u64) -> Option<SharedConsumer> {
        let at = self.consumers.iter().position(|c| c.consumer_id == consumer_id)?;
        Some(self.consumers.remove(at))
    }

    pub fn get(&self, consumer_id: u64) -> Option<&SharedConsumer> {
        self.consumers.iter().find(|c| c.consumer_id == consumer_id)
    }

    pub fn get_mut(&mut self, consumer_id: u64) -> Option<&mut SharedConsumer> {
        self.consumers.iter_mut().find(|c| c.consumer_id == consumer_id)
    }

    /// `getNextConsumer`: higher levels first while they have an available consumer, round robin
    /// within a level starting at the index, then lower levels. Returns the consumer's index.
    pub fn next_consumer(&mut self) -> Option<usize> {
        if self.consumers.is_empty() {
            return None;
        }
        if self.round_robin_index >= self.consumers.len() {
            self.round_robin_index = 0;
        }
        let picked = self.available_at_higher_level().or_else(|| self.available_at_same_or_lower_level())?;
        self.round_robin_index = picked + 1;
        Some(picked)
    }

    /// `next_consumer`, returning the consumer id.
    pub fn next_consumer_id(&mut self) -> Option<u64> {
        self.next_consumer().map(|i| self.consumers[i].consumer_id)
    }

    fn available_at_higher_level(&self) -> Option<usize> {
        let level = self.consumers[self.round_robin_index].priority;
        // Upstream skips the scan on level 0, the top level.
        if level == 0 {
            return None;
        }
        self.consumers[..self.round_robin_index].iter().take_while(|c| c.priority < level).position(SharedConsumer::is_available)
    }

    fn available_at_same_or_lower_level(&self) -> Option<usize> {
        let start = self.round_robin_index;
        let level = self.consumers[start].priority;
        let first_of_level = self.consumers.iter().position(|c| c.priority == level).unwrap_or(start);
        let end_of_level = start + self.consumers[start..].iter().take_while(|c| c.priority == level).count();
        let same_level = (start..end_of_level).chain(first_of_level..start);
        for i in same_level {
            if self.consumers[i].is_available() {
                return Some(i);
            }
        }
        (end_of_level..self.consumers.len()).find(|&i| self.consumers[i].is_available())
    }
}

/// Broker limits of a Shared dispatcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedDispatchLimits {
    pub max_round_robin_batch: u32,
    pub max_unacked_per_consumer: u32,
    pub max_unacked_per_subscription: u32,
}

impl Default for SharedDispatchLimits {
    fn default() -> Self {
        SharedDispatchLimits {
            max_round_robin_batch: DISPATCHER_MAX_ROUND_ROBIN_BATCH_SIZE,
            max_unacked_per_consumer: MAX_UNACKED_MESSAGES_PER_CONSUMER,
            max_unacked_per_subscription: MAX_UNACKED_MESSAGES_PER_SUBSCRIPTION,
        }
    }
}

/// Messages one pick may receive: `min(remaining, permits (1 if not writable), room under the
/// unacked limit, round-robin batch size)`, then converted to entries by the average batch size
/// (at least one entry).
pub fn entries_for_pick(
    remaining_messages: u32,
    consumer: &SharedConsumer,
    max_round_robin_batch: u32,
    avg_messages_per_entry: u32,
) -> u32 {
    let permits = if consumer.writable { consumer.permits } else { 1 };
    let messages = remaining_messages.min(permits).min(max_round_robin_batch).min(consumer.unacked.room());
    (messages / avg_messages_per_entry.max(1)).max(1)
}

/// One entry offered to the dispatcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfferedEntry {
    pub position: i64,
    /// Messages in the entry (a batch counts its messages against permits).
    pub messages: u32,
}

/// What one dispatch round did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedRound {
    /// Per pick, in order: the consumer and the entry positions it was sent.
    pub sends: Vec<(u64, Vec<i64>)>,
    /// Entries no consumer could take (they stay for the next read, or in replay).
    pub left_over: Vec<i64>,
    /// Consumers that hit their unacked limit during the round.
    pub newly_blocked: Vec<u64>,
}

/// Sends `entries` (replay entries first, as the caller reads them) round robin: each pick takes
/// `entries_for_pick` entries, permits drop by the messages sent, and unacked counts grow.
pub fn dispatch_round(
    list: &mut SharedConsumerList,
    subscription_unacked: &mut UnackedLimit,
    entries: &[OfferedEntry],
    limits: &SharedDispatchLimits,
) -> SharedRound {
    let mut round = SharedRound::default();
    let total_messages: u32 = entries.iter().map(|e| e.messages.max(1)).sum();
    let avg = if entries.is_empty() { 1 } else { (total_messages / entries.len() as u32).max(1) };
    let mut next = 0;
    while next < entries.len() && !subscription_unacked.blocked {
        let Some(index) = list.next_consumer() else { break };
        // A read never asks for more than the subscription's room under its unacked limit.
        let remaining: u32 = entries[next..].iter().map(|e| e.messages.max(1)).sum::<u32>().min(subscription_unacked.room());
        let consumer = &mut list.consumers[index];
        let take = (entries_for_pick(remaining, consumer, limits.max_round_robin_batch, avg) as usize).min(entries.len() - next);
        let batch = &entries[next..next + take];
        next += take;
        let messages: u32 = batch.iter().map(|e| e.messages.max(1)).sum();
        consumer.permits = consumer.permits.saturating_sub(messages);
        if consumer.unacked.add(messages) == LimitChange::Blocked {
            round.newly_blocked.push(consumer.consumer_id);
        }
        subscription_unacked.add(messages);
        round.sends.push((consumer.consumer_id, batch.iter().map(|e| e.position).collect()));
    }
    round.left_over = entries[next..].iter().map(|e| e.position).collect();
    round
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(spec: &[(u64, i32, u32, bool)]) -> SharedConsumerList {
        let mut l = SharedConsumerList::new();
        for &(id, priority, permits, blocked) in spec {
            l.add(SharedConsumer { blocked, ..SharedConsumer::new(id, priority, permits) });
        }
        l
    }

    fn take(l: &mut SharedConsumerList, n: usize) -> Vec<Option<u64>> {
        (0..n)
            .map(|_| {
                let i = l.next_consumer()?;
                l.consumers[i].permits -= 1;
                Some(l.consumers[i].consumer_id)
            })
            .collect()
    }

    #[test]
    fn javadoc_example() {
        let mut l = list(&[(1, 0, 2, false), (2, 0, 1, false), (3, 0, 1, false), (4, 1, 2, false), (5, 1, 1, false)]);
        assert_eq!(take(&mut l, 8), vec![Some(1), Some(2), Some(3), Some(1), Some(4), Some(5), Some(4), None]);
    }

    #[test]
    fn a_new_higher_priority_consumer_is_served_first() {
        let mut l = list(&[
            (1, 0, 2, false),
            (2, 0, 2, false),
            (3, 0, 2, false),
            (4, 1, 2, false),
            (5, 1, 1, false),
            (6, 1, 2, false),
            (7, 2, 1, false),
            (8, 2, 1, false),
            (9, 2, 1, false),
        ]);
        let first: Vec<u64> = take(&mut l, 13).into_iter().flatten().collect();
        assert_eq!(first, vec![1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 6, 7, 8]);
        l.add(SharedConsumer::new(10, 0, 2));
        assert_eq!(take(&mut l, 3), vec![Some(10), Some(10), Some(9)]);
    }

    #[test]
    fn unacked_limit_blocks_and_unblocks_at_half() {
        let mut u = UnackedLimit::new(10);
        assert_eq!(u.add(9), LimitChange::None);
        assert_eq!(u.add(1), LimitChange::Blocked);
        assert_eq!(u.remove(4), LimitChange::None);
        assert_eq!(u.remove(1), LimitChange::Unblocked);
        assert_eq!(UnackedLimit::new(0).room(), u32::MAX);
    }

    #[test]
    fn round_gives_each_pick_up_to_the_batch_size() {
        let mut l = list(&[(1, 0, 100, false), (2, 0, 100, false)]);
        let entries: Vec<OfferedEntry> = (0..45).map(|p| OfferedEntry { position: p, messages: 1 }).collect();
        let mut sub = UnackedLimit::new(0);
        let round = dispatch_round(&mut l, &mut sub, &entries, &SharedDispatchLimits::default());
        let sizes: Vec<(u64, usize)> = round.sends.iter().map(|(c, p)| (*c, p.len())).collect();
        assert_eq!(sizes, vec![(1, 20), (2, 20), (1, 5)]);
        assert!(round.left_over.is_empty());
        assert_eq!(l.get(1).unwrap().permits, 75);
        assert_eq!(sub.unacked, 45);
    }

    #[test]
    fn unacked_limit_stops_a_consumer() {
        let mut l = SharedConsumerList::new();
        let mut c = SharedConsumer::new(1, 0, 100);
        c.unacked = UnackedLimit::new(4);
        l.add(c);
        let entries: Vec<OfferedEntry> = (0..6).map(|p| OfferedEntry { position: p, messages: 1 }).collect();
        let round = dispatch_round(&mut l, &mut UnackedLimit::new(0), &entries, &SharedDispatchLimits::default());
        assert_eq!(round.sends, vec![(1, vec![0, 1, 2, 3])]);
        assert_eq!(round.newly_blocked, vec![1]);
        assert_eq!(round.left_over, vec![4, 5]);
    }
}
