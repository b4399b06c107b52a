//! The dispatcher's replay set (`redeliveryMessages`): entries to send again, read in position
//! order before any new entry (spec §1.3 "Replay first", §1.4.5). Key_Shared keeps each entry's
//! sticky hash so a replayed hash can hold back normal reads of the same hash.

use std::collections::{BTreeMap, BTreeSet};

/// A hash of 0 means "not recorded" (Shared, or Key_Shared with allowOutOfOrderDelivery).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplaySet {
    by_position: BTreeMap<i64, u32>,
    /// Count of replayed entries per non-zero hash, for the "replay already holds h" check.
    hash_counts: BTreeMap<u32, u32>,
}

impl ReplaySet {
    pub fn new() -> ReplaySet {
        ReplaySet::default()
    }

    pub fn len(&self) -> usize {
        self.by_position.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_position.is_empty()
    }

    /// Adds `position`; re-adding keeps the first recorded hash.
    pub fn add(&mut self, position: i64, hash: u32) {
        if self.by_position.contains_key(&position) {
            return;
        }
        self.by_position.insert(position, hash);
        if hash != 0 {
            *self.hash_counts.entry(hash).or_insert(0) += 1;
        }
    }

    pub fn remove(&mut self, position: i64) -> Option<u32> {
        let hash = self.by_position.remove(&position)?;
        if let Some(n) = self.hash_counts.get_mut(&hash) {
            *n -= 1;
            if *n == 0 {
                self.hash_counts.remove(&hash);
            }
        }
        Some(hash)
    }

    pub fn contains(&self, position: i64) -> bool {
        self.by_position.contains_key(&position)
    }

    pub fn contains_hash(&self, hash: u32) -> bool {
        hash != 0 && self.hash_counts.contains_key(&hash)
    }

    /// Up to `max` entries in position order, without removing them (the dispatcher removes
    /// what it actually sends).
    pub fn first(&self, max: usize) -> Vec<(i64, u32)> {
        self.by_position.iter().take(max).map(|(&p, &h)| (p, h)).collect()
    }

    /// Drops every entry at or below `position` (they were acked cumulatively or mark-deleted).
    pub fn remove_up_to(&mut self, position: i64) {
        let doomed: Vec<i64> = self.by_position.range(..=position).map(|(&p, _)| p).collect();
        for p in doomed {
            self.remove(p);
        }
    }

    pub fn positions(&self) -> BTreeSet<i64> {
        self.by_position.keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_position_order_and_hash_counts() {
        let mut r = ReplaySet::new();
        r.add(5, 7);
        r.add(2, 7);
        r.add(9, 0);
        r.add(5, 8);
        assert_eq!(r.first(10), vec![(2, 7), (5, 7), (9, 0)]);
        assert!(r.contains_hash(7));
        assert!(!r.contains_hash(0));
        r.remove(2);
        assert!(r.contains_hash(7));
        r.remove_up_to(5);
        assert!(!r.contains_hash(7));
        assert_eq!(r.len(), 1);
        assert_eq!(r.remove(1), None);
    }
}
