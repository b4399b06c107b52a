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
    fn starting_at_zero_selects_queue_zero_first() {
        let mut i = ThreadLocalIndex::starting_at(0);
        assert_eq!((0..5).map(|_| i.select(4)).collect::<Vec<_>>(), vec![0, 1, 2, 3, 0]);
    }
}
