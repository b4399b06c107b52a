//! The sticky-key consumer selector of a Key_Shared subscription (spec §1.4.1-§1.4.4): one of the
//! three upstream selectors behind one interface, its hash-range snapshot, and the ranges each
//! consumer loses when membership changes (what PIP-379 registers as draining).

use std::collections::BTreeMap;
use std::fmt;

use super::consistent_ring::{ConsistentHashRing, RING_HASH_END, RING_HASH_START};
use super::range_split::RangeSplitSelector;
use super::sticky_ranges::StickyRangeSelector;
use crate::hash::{consistent_sticky_hash, sticky_key_hash_in_range, KEY_HASH_RANGE_SIZE};

/// An inclusive hash range and its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HashRangeAssignment {
    pub start: u32,
    pub end: u32,
    pub consumer: u64,
}

/// Failures of selector construction and `addConsumer` (`ConsumerAssignException` and friends).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySharedError {
    InvalidRangeSize(&'static str),
    NoMoreRange { consumers: usize },
    MissingKeySharedMeta,
    EmptyRanges,
    StartAfterEnd { start: u32, end: u32 },
    OwnRangesConflict { first: (u32, u32), second: (u32, u32) },
    RangeConflict { consumer: u64 },
    DuplicateConsumer { consumer: u64 },
}

impl fmt::Display for KeySharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const CAE: &str = "ConsumerAssignException";
        match self {
            KeySharedError::InvalidRangeSize(why) => write!(f, "IllegalArgumentException: {why}"),
            KeySharedError::NoMoreRange { consumers } => {
                write!(f, "{CAE}: No more range can assigned to new consumer, assigned consumers {consumers}")
            }
            KeySharedError::MissingKeySharedMeta => write!(f, "{CAE}: Must specify key shared meta for consumer."),
            KeySharedError::EmptyRanges => write!(f, "{CAE}: Ranges for KeyShared policy must not be empty."),
            KeySharedError::StartAfterEnd { start, end } => {
                write!(f, "{CAE}: Fixed hash range start > end for range: [{start},{end}]")
            }
            KeySharedError::OwnRangesConflict { first, second } => write!(
                f,
                "{CAE}: Consumer's own ranges conflict: [{},{}] overlaps with [{},{}]",
                first.0, first.1, second.0, second.1
            ),
            KeySharedError::RangeConflict { consumer } => write!(f, "{CAE}: Range conflict with consumer {consumer}"),
            KeySharedError::DuplicateConsumer { consumer } => {
                write!(f, "IllegalStateException: consumer {consumer} is already in the selector")
            }
        }
    }
}

/// The selector a Key_Shared dispatcher uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StickyKeySelector {
    /// AUTO_SPLIT, `subscriptionKeySharedUseConsistentHashing=true` (default).
    ConsistentHashing(ConsistentHashRing),
    /// AUTO_SPLIT with range splitting.
    RangeSplit(RangeSplitSelector),
    /// STICKY, user-defined ranges.
    Sticky(StickyRangeSelector),
}

impl StickyKeySelector {
    /// The selector a new Key_Shared subscription gets: STICKY's ranges, else AUTO_SPLIT by
    /// `subscriptionKeySharedUseConsistentHashing` (with its replica points).
    pub fn for_mode(
        mode: crate::subscription::KeySharedMode,
        consistent_hashing: bool,
        replica_points: u32,
    ) -> StickyKeySelector {
        use crate::subscription::KeySharedMode;
        match (mode, consistent_hashing) {
            (KeySharedMode::Sticky, _) => StickyKeySelector::Sticky(
                super::StickyRangeSelector::new(KEY_HASH_RANGE_SIZE).expect("65536 is a valid range size"),
            ),
            (KeySharedMode::AutoSplit, true) => StickyKeySelector::ConsistentHashing(ConsistentHashRing::new(replica_points)),
            (KeySharedMode::AutoSplit, false) => StickyKeySelector::RangeSplit(
                super::RangeSplitSelector::new(KEY_HASH_RANGE_SIZE).expect("65536 is a power of two"),
            ),
        }
    }

    /// The inclusive range sticky hashes are folded into.
    pub fn key_hash_range(&self) -> (u32, u32) {
        match self {
            StickyKeySelector::ConsistentHashing(_) => (RING_HASH_START, RING_HASH_END),
            StickyKeySelector::RangeSplit(_) | StickyKeySelector::Sticky(_) => (0, KEY_HASH_RANGE_SIZE - 1),
        }
    }

    /// The sticky hash this selector gives a key (never 0).
    pub fn sticky_hash(&self, sticky_key: &[u8]) -> u32 {
        match self {
            StickyKeySelector::ConsistentHashing(_) => consistent_sticky_hash(sticky_key),
            _ => {
                let (start, end) = self.key_hash_range();
                sticky_key_hash_in_range(sticky_key, start, end)
            }
        }
    }

    /// Whether moved hashes are drained (PIP-379 applies to AUTO_SPLIT only).
    pub fn is_auto_split(&self) -> bool {
        !matches!(self, StickyKeySelector::Sticky(_))
    }

    pub fn contains(&self, consumer: u64) -> bool {
        match self {
            StickyKeySelector::ConsistentHashing(r) => r.contains(consumer),
            StickyKeySelector::RangeSplit(s) => s.contains(consumer),
            StickyKeySelector::Sticky(s) => s.contains(consumer),
        }
    }

    /// Adds a consumer; `name` feeds the ring points, `sticky_ranges` is STICKY's `KeySharedMeta`.
    pub fn add(&mut self, consumer: u64, name: &str, sticky_ranges: Option<&[(u32, u32)]>) -> Result<(), KeySharedError> {
        if self.contains(consumer) {
            return Err(KeySharedError::DuplicateConsumer { consumer });
        }
        match self {
            StickyKeySelector::ConsistentHashing(r) => {
                r.add(consumer, name);
                Ok(())
            }
            StickyKeySelector::RangeSplit(s) => s.add(consumer),
            StickyKeySelector::Sticky(s) => s.add(consumer, sticky_ranges),
        }
    }

    pub fn remove(&mut self, consumer: u64) -> bool {
        match self {
            StickyKeySelector::ConsistentHashing(r) => r.remove(consumer),
            StickyKeySelector::RangeSplit(s) => s.remove(consumer),
            StickyKeySelector::Sticky(s) => s.remove(consumer),
        }
    }

    /// The consumer for a sticky hash, or `None` (no consumers, or a STICKY gap).
    pub fn select(&self, hash: u32) -> Option<u64> {
        match self {
            StickyKeySelector::ConsistentHashing(r) => r.select(hash),
            StickyKeySelector::RangeSplit(s) => s.select(hash),
            StickyKeySelector::Sticky(s) => s.select(hash),
        }
    }

    /// The hash-range snapshot, ascending by start.
    pub fn assignments(&self) -> Vec<HashRangeAssignment> {
        match self {
            StickyKeySelector::ConsistentHashing(r) => r.assignments(),
            StickyKeySelector::RangeSplit(s) => s.assignments(),
            StickyKeySelector::Sticky(s) => s.assignments(),
        }
    }

    /// Ranges per consumer, each list ascending.
    pub fn ranges_by_consumer(&self) -> BTreeMap<u64, Vec<(u32, u32)>> {
        let mut out: BTreeMap<u64, Vec<(u32, u32)>> = BTreeMap::new();
        for a in self.assignments() {
            out.entry(a.consumer).or_default().push((a.start, a.end));
        }
        out
    }
}

/// Walks two snapshots (ascending, disjoint ranges) over the hash space at once and calls
/// `differs(owner before, owner after, first hash, last hash)` for every stretch whose owner
/// changed (`None`: nobody owns it). Linear in the snapshots and allocation-free: a ring of 100
/// consumers has 10,000 ranges, and every join and leave compares two of them.
pub fn sweep_owners(
    before: &[HashRangeAssignment],
    after: &[HashRangeAssignment],
    mut differs: impl FnMut(Option<u64>, Option<u64>, u32, u32),
) {
    let (mut i, mut j) = (0, 0);
    let mut h: u64 = 0;
    loop {
        while before.get(i).is_some_and(|r| u64::from(r.end) < h) {
            i += 1;
        }
        while after.get(j).is_some_and(|r| u64::from(r.end) < h) {
            j += 1;
        }
        // The owner at h on each side, and where that side next changes.
        let side = |r: Option<&HashRangeAssignment>| match r {
            Some(r) if u64::from(r.start) <= h => (Some(r.consumer), u64::from(r.end) + 1),
            Some(r) => (None, u64::from(r.start)),
            None => (None, u64::MAX),
        };
        let ((was, next_before), (now, next_after)) = (side(before.get(i)), side(after.get(j)));
        let next = next_before.min(next_after);
        if was != now {
            // Owned on one side at least, so `next` is the end of a real range plus one.
            differs(was, now, h as u32, (next - 1) as u32);
        }
        if next == u64::MAX {
            return;
        }
        h = next;
    }
}

/// The hash ranges each consumer owned in `before` but not in `after` (both ascending, disjoint),
/// merged per consumer. Only these hashes can have pending acks at a consumer that no longer owns them.
pub fn lost_ranges(before: &[HashRangeAssignment], after: &[HashRangeAssignment]) -> BTreeMap<u64, Vec<(u32, u32)>> {
    let mut lost: BTreeMap<u64, Vec<(u32, u32)>> = BTreeMap::new();
    sweep_owners(before, after, |was, _, s, e| {
        let Some(loser) = was else { return };
        let list = lost.entry(loser).or_default();
        match list.last_mut() {
            Some(last) if last.1 + 1 == s => last.1 = e,
            _ => list.push((s, e)),
        }
    });
    lost
}

/// Whether `hash` lies in one of `ranges` (ascending, disjoint).
pub fn in_ranges(ranges: &[(u32, u32)], hash: u32) -> bool {
    let i = ranges.partition_point(|r| r.1 < hash);
    ranges.get(i).is_some_and(|r| r.0 <= hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(start: u32, end: u32, consumer: u64) -> HashRangeAssignment {
        HashRangeAssignment { start, end, consumer }
    }

    #[test]
    fn lost_ranges_of_a_split() {
        let before = [a(0, 64, 1)];
        let after = [a(0, 32, 2), a(33, 64, 1)];
        assert_eq!(lost_ranges(&before, &after), BTreeMap::from([(1, vec![(0, 32)])]));
        assert!(lost_ranges(&after, &after).is_empty());
    }

    #[test]
    fn lost_ranges_include_gaps() {
        let before = [a(0, 10, 1), a(11, 20, 2)];
        let after = [a(0, 4, 1), a(15, 20, 2)];
        assert_eq!(lost_ranges(&before, &after), BTreeMap::from([(1, vec![(5, 10)]), (2, vec![(11, 14)])]));
        assert_eq!(lost_ranges(&before, &[]), BTreeMap::from([(1, vec![(0, 10)]), (2, vec![(11, 20)])]));
    }

    /// Hash by hash, on real rings: what each consumer owned before and not after.
    #[test]
    fn lost_ranges_match_a_hash_by_hash_comparison() {
        use crate::key_shared::ConsistentHashRing;
        let owner = |snapshot: &[HashRangeAssignment], h: u32| {
            let i = snapshot.partition_point(|r| r.end < h);
            snapshot.get(i).filter(|r| r.start <= h).map(|r| r.consumer)
        };
        let mut ring = ConsistentHashRing::new(100);
        for c in 0..12u64 {
            ring.add(c, &format!("c{c}"));
        }
        let before = ring.assignments();
        ring.add(12, "c12");
        ring.remove(3);
        let after = ring.assignments();
        let mut expected: BTreeMap<u64, Vec<(u32, u32)>> = BTreeMap::new();
        for h in 0..=65_535u32 {
            if let Some(was) = owner(&before, h).filter(|&was| owner(&after, h) != Some(was)) {
                let list = expected.entry(was).or_default();
                match list.last_mut() {
                    Some(last) if last.1 + 1 == h => last.1 = h,
                    _ => list.push((h, h)),
                }
            }
        }
        assert!(!expected.is_empty());
        assert_eq!(lost_ranges(&before, &after), expected);
    }

    #[test]
    fn lost_ranges_match_a_brute_force_owner_map() {
        let mut ring = StickyKeySelector::ConsistentHashing(ConsistentHashRing::new(20));
        for (i, n) in ["a", "b", "c"].iter().enumerate() {
            ring.add(i as u64, n, None).unwrap();
        }
        let before = ring.assignments();
        ring.add(7, "d", None).unwrap();
        ring.remove(1);
        let after = ring.assignments();
        let owner = |list: &[HashRangeAssignment], h: u32| list.iter().find(|x| x.start <= h && h <= x.end).map(|x| x.consumer);
        let lost = lost_ranges(&before, &after);
        for h in 1..=65_535 {
            let was = owner(&before, h).unwrap();
            let moved = owner(&after, h) != Some(was);
            assert_eq!(lost.get(&was).is_some_and(|r| in_ranges(r, h)), moved, "hash {h}");
        }
    }

    #[test]
    fn errors_read_like_upstream() {
        assert_eq!(
            KeySharedError::EmptyRanges.to_string(),
            "ConsumerAssignException: Ranges for KeyShared policy must not be empty."
        );
        assert!(KeySharedError::RangeConflict { consumer: 3 }
            .to_string()
            .starts_with("ConsumerAssignException: Range conflict with consumer"));
    }
}
