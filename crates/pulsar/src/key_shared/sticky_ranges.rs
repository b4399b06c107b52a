//! STICKY mode: user-defined, exclusive hash ranges (spec §1.4.4). A message whose slot no range
//! covers has no consumer and stays in the backlog. STICKY never uses draining hashes.

use mqviz_engine::sort::StableSort;
use std::collections::BTreeMap;

use super::selector::{HashRangeAssignment, KeySharedError};

/// Ranges keyed by start: `start -> (end, consumer)`, never overlapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StickyRangeSelector {
    range_size: u32,
    ranges: BTreeMap<u32, (u32, u64)>,
}

fn overlaps(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0.max(b.0) <= a.1.min(b.1)
}

impl StickyRangeSelector {
    pub fn new(range_size: u32) -> Result<StickyRangeSelector, KeySharedError> {
        if range_size < 1 {
            return Err(KeySharedError::InvalidRangeSize("range size must greater than 0"));
        }
        Ok(StickyRangeSelector { range_size, ranges: BTreeMap::new() })
    }

    pub fn contains(&self, consumer: u64) -> bool {
        self.ranges.values().any(|&(_, c)| c == consumer)
    }

    /// The consumer whose range overlaps `range`, checking the range starting at or before its
    /// start and the one starting after it (ranges are disjoint, so no other can overlap).
    fn conflicting_consumer(&self, range: (u32, u32)) -> Option<u64> {
        let before = self.ranges.range(..=range.0).next_back();
        let after = self.ranges.range(range.0..).next();
        [before, after].into_iter().flatten().find(|(&s, &(e, _))| overlaps(range, (s, e))).map(|(_, &(_, c))| c)
    }

    /// Validates in upstream order (empty list, then per range sorted by start: start > end and
    /// overlap with the next own range, then conflicts with other consumers) and adds. After a
    /// rejection the mapping is unchanged.
    pub fn add(&mut self, consumer: u64, ranges: Option<&[(u32, u32)]>) -> Result<(), KeySharedError> {
        let ranges = ranges.ok_or(KeySharedError::MissingKeySharedMeta)?;
        if ranges.is_empty() {
            return Err(KeySharedError::EmptyRanges);
        }
        let mut sorted = ranges.to_vec();
        sorted.stable_sort_by_key(|r| r.0);
        for (i, &r) in sorted.iter().enumerate() {
            if r.0 > r.1 {
                return Err(KeySharedError::StartAfterEnd { start: r.0, end: r.1 });
            }
            if let Some(&next) = sorted.get(i + 1) {
                if overlaps(r, next) {
                    return Err(KeySharedError::OwnRangesConflict { first: r, second: next });
                }
            }
        }
        if let Some(other) = ranges.iter().find_map(|&r| self.conflicting_consumer(r)) {
            return Err(KeySharedError::RangeConflict { consumer: other });
        }
        for &(s, e) in ranges {
            self.ranges.insert(s, (e, consumer));
        }
        Ok(())
    }

    pub fn remove(&mut self, consumer: u64) -> bool {
        let before = self.ranges.len();
        self.ranges.retain(|_, &mut (_, c)| c != consumer);
        self.ranges.len() != before
    }

    /// `slot = hash % rangeSize`; the range with the greatest start ≤ slot, if it covers the slot.
    pub fn select(&self, hash: u32) -> Option<u64> {
        let slot = hash % self.range_size;
        self.ranges.range(..=slot).next_back().filter(|(_, &(e, _))| slot <= e).map(|(_, &(_, c))| c)
    }

    pub fn assignments(&self) -> Vec<HashRangeAssignment> {
        self.ranges.iter().map(|(&start, &(end, consumer))| HashRangeAssignment { start, end, consumer }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_only_inside_ranges() {
        let mut s = StickyRangeSelector::new(10).unwrap();
        s.add(1, Some(&[(0, 2)])).unwrap();
        assert_eq!(s.select(4), None);
        s.add(2, Some(&[(3, 9)])).unwrap();
        let picks: Vec<Option<u64>> = (0..10).map(|h| s.select(h)).collect();
        assert_eq!(picks, [[Some(1); 3].as_slice(), [Some(2); 7].as_slice()].concat());
        s.remove(1);
        assert_eq!(s.select(1), None);
    }

    #[test]
    fn validation_order_and_atomicity() {
        let mut s = StickyRangeSelector::new(65_536).unwrap();
        s.add(1, Some(&[(2, 5)])).unwrap();
        for bad in [[(4, 6)], [(1, 3)], [(2, 2)], [(5, 5)], [(1, 6)]] {
            assert_eq!(s.add(9, Some(&bad)), Err(KeySharedError::RangeConflict { consumer: 1 }));
        }
        assert_eq!(s.add(9, Some(&[(8, 6)])), Err(KeySharedError::StartAfterEnd { start: 8, end: 6 }));
        assert!(matches!(s.add(9, Some(&[(10, 20), (15, 30)])), Err(KeySharedError::OwnRangesConflict { .. })));
        // [20,30] does not overlap the inverted [25,22], which then fails start > end.
        assert!(matches!(s.add(9, Some(&[(20, 30), (25, 22)])), Err(KeySharedError::StartAfterEnd { .. })));
        assert_eq!(s.add(9, Some(&[])), Err(KeySharedError::EmptyRanges));
        assert_eq!(s.add(9, None), Err(KeySharedError::MissingKeySharedMeta));
        assert_eq!(s.add(9, Some(&[(0, 0), (1, 2)])), Err(KeySharedError::RangeConflict { consumer: 1 }));
        assert_eq!(s.assignments().len(), 1);
    }
}
