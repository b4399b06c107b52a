//! `ThreadLocalIndex` and `selectOneMessageQueue` with latency fault tolerance off (spec §1).

/// One producer thread's index. `stored` is the Integer the ThreadLocal holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadLocalIndex {
    stored: i32,
}

impl ThreadLocalIndex {
    /// An index whose next `increment_and_get` returns `stored + 1` (with int wrap, masked).
    pub fn with_stored(stored: i32) -> Self {
        ThreadLocalIndex { stored }
    }

    /// An index whose first `increment_and_get` returns `first` (the scenario's `startIndex`).
    pub fn starting_at(first: u32) -> Self {
        ThreadLocalIndex { stored: (first as i32).wrapping_sub(1) }
    }

    pub fn increment_and_get(&mut self) -> i32 {
        self.stored = self.stored.wrapping_add(1);
        self.stored & 0x7FFF_FFFF
    }

    /// `abs(incrementAndGet() % size)`: the position in the publish queue list.
    pub fn select(&mut self, size: usize) -> usize {
        let r = self.increment_and_get();
        (r % size as i32).unsigned_abs() as usize
    }

    /// `selectOneMessageQueue(lastBrokerName)` (5.x, fault tolerance off): up to `size` tries for
    /// a position whose broker is not the last failed one (`avoid`); if every queue is on that
    /// broker, one more increment without the filter.
    pub fn select_avoiding(&mut self, size: usize, avoid: impl Fn(usize) -> bool) -> usize {
        for _ in 0..size {
            let pos = self.select(size);
            if !avoid(pos) {
                return pos;
            }
        }
        self.select(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_from_max() {
        let mut i = ThreadLocalIndex::with_stored(i32::MAX);
        assert_eq!((0..4).map(|_| i.increment_and_get()).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_retry_skips_the_broker_that_failed() {
        // Queues [a0, a1, b0, b1]: the last attempt failed on broker a.
        let brokers = ["a", "a", "b", "b"];
        let mut i = ThreadLocalIndex::starting_at(0);
        assert_eq!(i.select_avoiding(4, |p| brokers[p] == "a"), 2);
        // With one broker there is nothing to avoid: the next queue, whatever its broker.
        let mut i = ThreadLocalIndex::starting_at(1);
        assert_eq!(i.select_avoiding(2, |_| true), 1);
    }

    #[test]
    fn starting_at_zero_selects_queue_zero_first() {
        let mut i = ThreadLocalIndex::starting_at(0);
        assert_eq!((0..5).map(|_| i.select(4)).collect::<Vec<_>>(), vec![0, 1, 2, 3, 0]);
    }
}
