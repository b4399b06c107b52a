//! AUTO_SPLIT with range splitting (`subscriptionKeySharedUseConsistentHashing=false`, spec
//! §1.4.3): each newcomer takes the lower half of the widest range.

use std::collections::BTreeMap;

use super::selector::{HashRangeAssignment, KeySharedError};

/// A sorted map from an upper bound to its consumer; a consumer owns `(previous bound, bound]`
/// and the first one owns `[0, bound]`. The top bound is `range_size`, one past the largest hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeSplitSelector {
    range_size: u32,
    upper_bounds: BTreeMap<u32, u64>,
    bound_of: BTreeMap<u64, u32>,
}

impl RangeSplitSelector {
    /// `range_size` must be a power of two, at least 2.
    pub fn new(range_size: u32) -> Result<RangeSplitSelector, KeySharedError> {
        if range_size < 2 {
            return Err(KeySharedError::InvalidRangeSize("range size must greater than 2"));
        }
        if !range_size.is_power_of_two() {
            return Err(KeySharedError::InvalidRangeSize("range size must be nth power with 2"));
        }
        Ok(RangeSplitSelector { range_size, upper_bounds: BTreeMap::new(), bound_of: BTreeMap::new() })
    }

    pub fn range_size(&self) -> u32 {
        self.range_size
    }

    pub fn contains(&self, consumer: u64) -> bool {
        self.bound_of.contains_key(&consumer)
    }

    /// The bound whose interval `bound - lower` is widest; the first widest wins.
    fn widest_range(&self) -> u32 {
        let mut widest = 0;
        let mut chosen = self.range_size;
        let mut lower = 0;
        for &bound in self.upper_bounds.keys() {
            if bound - lower > widest {
                widest = bound - lower;
                chosen = bound;
            }
            lower = bound;
        }
        chosen
    }

    pub fn add(&mut self, consumer: u64) -> Result<(), KeySharedError> {
        if self.bound_of.contains_key(&consumer) {
            return Ok(());
        }
        if self.upper_bounds.is_empty() {
            self.upper_bounds.insert(self.range_size, consumer);
            self.bound_of.insert(consumer, self.range_size);
            return Ok(());
        }
        let bound = self.widest_range();
        let lower = self.upper_bounds.range(..bound).next_back().map(|(&k, _)| k).unwrap_or(0);
        if bound - lower <= 1 {
            return Err(KeySharedError::NoMoreRange { consumers: self.upper_bounds.len() });
        }
        let split_at = bound - ((bound - lower) >> 1);
        self.upper_bounds.insert(split_at, consumer);
        self.bound_of.insert(consumer, split_at);
        Ok(())
    }

    /// Removing the holder of the top bound moves the next-lower consumer up to it; otherwise the
    /// next higher bound absorbs the interval.
    pub fn remove(&mut self, consumer: u64) -> bool {
        let Some(bound) = self.bound_of.remove(&consumer) else { return false };
        self.upper_bounds.remove(&bound);
        if bound == self.range_size {
            if let Some((&lower_bound, &lower_consumer)) = self.upper_bounds.range(..bound).next_back() {
                self.upper_bounds.remove(&lower_bound);
                self.upper_bounds.insert(bound, lower_consumer);
                self.bound_of.insert(lower_consumer, bound);
            }
        }
        true
    }

    /// The ceiling bound of `hash % range_size`.
    pub fn select(&self, hash: u32) -> Option<u64> {
        let slot = hash % self.range_size;
        self.upper_bounds.range(slot..).next().map(|(_, &c)| c)
    }

    pub fn assignments(&self) -> Vec<HashRangeAssignment> {
        let mut start = 0;
        self.upper_bounds
            .iter()
            .map(|(&bound, &consumer)| {
                let a = HashRangeAssignment { start, end: bound, consumer };
                start = bound + 1;
                a
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(s: &RangeSplitSelector) -> Vec<(u32, u32, u64)> {
        s.assignments().iter().map(|a| (a.start, a.end, a.consumer)).collect()
    }

    #[test]
    fn upstream_four_consumers_on_64() {
        let mut s = RangeSplitSelector::new(64).unwrap();
        for c in 1..=4 {
            s.add(c).unwrap();
        }
        assert_eq!(ranges(&s), vec![(0, 16, 3), (17, 32, 2), (33, 48, 4), (49, 64, 1)]);
        assert_eq!(s.select(0), Some(3));
        assert_eq!(s.select(63), Some(1));
    }

    #[test]
    fn removing_the_top_moves_the_next_one_up() {
        let mut s = RangeSplitSelector::new(64).unwrap();
        s.add(1).unwrap();
        s.add(2).unwrap();
        s.remove(1);
        assert_eq!(ranges(&s), vec![(0, 64, 2)]);
        s.add(3).unwrap();
        s.remove(3);
        assert_eq!(ranges(&s), vec![(0, 64, 2)]);
        assert!(!s.remove(3));
    }

    #[test]
    fn runs_out_of_range() {
        let mut s = RangeSplitSelector::new(2).unwrap();
        s.add(1).unwrap();
        s.add(2).unwrap();
        assert!(matches!(s.add(3), Err(KeySharedError::NoMoreRange { consumers: 2 })));
        assert!(RangeSplitSelector::new(48).is_err());
        assert!(RangeSplitSelector::new(1).is_err());
    }
}
