//! AUTO_SPLIT with consistent hashing, the 4.x default (spec §1.4.2, §8 Key_Shared):
//! 100 points per consumer on `[1, 65535]`, keyed `name \0 nameIndex \0 i`, colliding points
//! kept in a list, lookups by ceiling with wrap-around.
//!
//! The ring is a `BTreeMap` for updates plus a flat sorted copy rebuilt on membership change, so a
//! lookup is one binary search (O(log points)) over contiguous memory.

use std::collections::{BTreeMap, BTreeSet};

use super::selector::HashRangeAssignment;
use crate::hash::{consistent_sticky_hash, KEY_HASH_RANGE_SIZE};

/// The consistent-hashing selector's key-hash range.
pub const RING_HASH_START: u32 = 1;
pub const RING_HASH_END: u32 = KEY_HASH_RANGE_SIZE - 1;

/// The lookup table splits the hash space `[0, 65536)` into 4,096 buckets of 16 hashes (16 KB).
const LOOKUP_SHIFT: u32 = 4;
const LOOKUP_BUCKETS: u32 = KEY_HASH_RANGE_SIZE >> LOOKUP_SHIFT;

/// The UTF-8 point key of a consumer's `i`-th ring point.
pub fn point_key(name: &str, name_index: u32, i: u32) -> String {
    format!("{name}\0{name_index}\0{i}")
}

/// Where a consumer's `i`-th point lands.
pub fn point_hash(name: &str, name_index: u32, i: u32) -> u32 {
    consistent_sticky_hash(point_key(name, name_index, i).as_bytes())
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct RingPoint {
    selected: u64,
    /// Consumers whose point landed here later; the first takes over when `selected` leaves.
    colliding: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Member {
    name: String,
    name_index: u32,
}

/// The hash ring of one Key_Shared subscription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsistentHashRing {
    points_per_consumer: u32,
    ring: BTreeMap<u32, RingPoint>,
    members: BTreeMap<u64, Member>,
    /// Name indexes in use per consumer name (`ConsumerNameIndexTracker`).
    used_name_indexes: BTreeMap<String, BTreeSet<u32>>,
    lookup_points: Vec<u32>,
    lookup_owners: Vec<u64>,
    /// `lookup_buckets[b]`: the index of the first point ≥ `b << LOOKUP_SHIFT`.
    lookup_buckets: Vec<u32>,
}

impl ConsistentHashRing {
    pub fn new(points_per_consumer: u32) -> ConsistentHashRing {
        ConsistentHashRing {
            points_per_consumer,
            ring: BTreeMap::new(),
            members: BTreeMap::new(),
            used_name_indexes: BTreeMap::new(),
            lookup_points: Vec::new(),
            lookup_owners: Vec::new(),
            lookup_buckets: Vec::new(),
        }
    }

    pub fn points_per_consumer(&self) -> u32 {
        self.points_per_consumer
    }

    pub fn contains(&self, consumer: u64) -> bool {
        self.members.contains_key(&consumer)
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Number of distinct points on the ring.
    pub fn point_count(&self) -> usize {
        self.ring.len()
    }

    /// The name index a consumer got (consumers sharing a name get 0, 1, ...).
    pub fn name_index(&self, consumer: u64) -> Option<u32> {
        self.members.get(&consumer).map(|m| m.name_index)
    }

    fn allocate_name_index(&mut self, name: &str) -> u32 {
        let used = self.used_name_indexes.entry(name.to_string()).or_default();
        let index = (0..).find(|i| !used.contains(i)).unwrap_or(0);
        used.insert(index);
        index
    }

    /// Adds a consumer's points. Adding only moves hashes *to* the newcomer. Re-adding a present
    /// consumer does nothing and returns false.
    pub fn add(&mut self, consumer: u64, name: &str) -> bool {
        if self.members.contains_key(&consumer) {
            return false;
        }
        let name_index = self.allocate_name_index(name);
        for i in 0..self.points_per_consumer {
            let p = point_hash(name, name_index, i);
            match self.ring.get_mut(&p) {
                Some(point) => point.colliding.push(consumer),
                None => {
                    self.ring.insert(p, RingPoint { selected: consumer, colliding: Vec::new() });
                }
            }
        }
        self.members.insert(consumer, Member { name: name.to_string(), name_index });
        self.rebuild_lookup();
        true
    }

    /// Removes a consumer: its points go to the first colliding consumer, or disappear so the
    /// neighbouring points take the hashes.
    pub fn remove(&mut self, consumer: u64) -> bool {
        let Some(member) = self.members.remove(&consumer) else { return false };
        for i in 0..self.points_per_consumer {
            let p = point_hash(&member.name, member.name_index, i);
            let Some(point) = self.ring.get_mut(&p) else { continue };
            if point.selected == consumer {
                if point.colliding.is_empty() {
                    self.ring.remove(&p);
                } else {
                    point.selected = point.colliding.remove(0);
                }
            } else {
                point.colliding.retain(|&c| c != consumer);
            }
        }
        if let Some(used) = self.used_name_indexes.get_mut(&member.name) {
            used.remove(&member.name_index);
            if used.is_empty() {
                self.used_name_indexes.remove(&member.name);
            }
        }
        self.rebuild_lookup();
        true
    }

    fn rebuild_lookup(&mut self) {
        self.lookup_points = self.ring.keys().copied().collect();
        self.lookup_owners = self.ring.values().map(|p| p.selected).collect();
        // One merge walk: bucket b starts at the first point at or past b << LOOKUP_SHIFT.
        self.lookup_buckets.clear();
        let mut i = 0;
        for b in 0..=LOOKUP_BUCKETS {
            while self.lookup_points.get(i).is_some_and(|&p| p < b << LOOKUP_SHIFT) {
                i += 1;
            }
            self.lookup_buckets.push(i as u32);
        }
    }

    /// The consumer of a sticky hash: the first point ≥ `hash`, wrapping to the first point.
    /// The bucket table narrows the binary search to the points sharing the hash's top bits (a
    /// handful with 100 consumers), so a lookup stays O(log points) but touches one or two cache lines.
    pub fn select(&self, hash: u32) -> Option<u64> {
        if self.lookup_points.is_empty() {
            return None;
        }
        let bucket = (hash >> LOOKUP_SHIFT) as usize;
        let i = match (self.lookup_buckets.get(bucket), self.lookup_buckets.get(bucket + 1)) {
            (Some(&lo), Some(&hi)) => {
                let (lo, hi) = (lo as usize, hi as usize);
                lo + self.lookup_points[lo..hi].partition_point(|&p| p < hash)
            }
            _ => self.lookup_points.partition_point(|&p| p < hash),
        };
        Some(self.lookup_owners[if i == self.lookup_points.len() { 0 } else { i }])
    }

    /// The same lookup walking the `BTreeMap` (kept for cross-checking and benchmarks).
    pub fn select_via_tree(&self, hash: u32) -> Option<u64> {
        self.ring.range(hash..).next().or_else(|| self.ring.iter().next()).map(|(_, p)| p.selected)
    }

    /// Hash ranges per owner in ring order: point `k` owns `(previous point, k]`, consecutive points
    /// of one consumer merge, and the tail after the last point belongs to the first point's
    /// consumer (merged with the last range when that is the same consumer).
    pub fn assignments(&self) -> Vec<HashRangeAssignment> {
        let mut out: Vec<HashRangeAssignment> = Vec::new();
        let mut start = RING_HASH_START;
        for (&p, point) in &self.ring {
            match out.last_mut() {
                Some(last) if last.consumer == point.selected => last.end = p,
                _ => out.push(HashRangeAssignment { start, end: p, consumer: point.selected }),
            }
            start = p + 1;
        }
        if let (Some(first), Some(&last_point)) = (self.ring.values().next(), self.ring.keys().next_back()) {
            if last_point != RING_HASH_END {
                match out.last_mut() {
                    Some(last) if last.consumer == first.selected => last.end = RING_HASH_END,
                    _ => out.push(HashRangeAssignment { start: last_point + 1, end: RING_HASH_END, consumer: first.selected }),
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(names: &[&str], points: u32) -> ConsistentHashRing {
        let mut r = ConsistentHashRing::new(points);
        for (i, n) in names.iter().enumerate() {
            r.add(i as u64 + 1, n);
        }
        r
    }

    #[test]
    fn upstream_three_point_ranges() {
        let r = ring(&["consumer1", "consumer2", "consumer3"], 3);
        let by = |c: u64| -> Vec<(u32, u32)> {
            r.assignments().iter().filter(|a| a.consumer == c).map(|a| (a.start, a.end)).collect()
        };
        assert_eq!(by(1), vec![(14359, 18366), (29991, 39817), (52980, 60442)]);
        assert_eq!(by(2), vec![(1, 6668), (39818, 52979), (60443, 63679), (65184, 65535)]);
        assert_eq!(by(3), vec![(6669, 14358), (18367, 29990), (63680, 65183)]);
    }

    #[test]
    fn same_names_get_distinct_points_and_lookups_agree() {
        let r = ring(&["dup", "dup"], 100);
        assert_eq!((r.name_index(1), r.name_index(2)), (Some(0), Some(1)));
        assert_eq!(point_hash("dup", 0, 0), 49006);
        assert_eq!(point_hash("dup", 1, 0), 8078);
        // Every hash, bucket edges and past the range included.
        for h in 0..70_000 {
            assert_eq!(r.select(h), r.select_via_tree(h));
        }
    }

    #[test]
    fn adding_only_moves_hashes_to_the_newcomer_and_removal_restores() {
        let before = ring(&["c1", "c2", "c3"], 100);
        let mut after = before.clone();
        after.add(4, "c4");
        for h in (1..65536).step_by(13) {
            let (b, a) = (before.select(h).unwrap(), after.select(h).unwrap());
            assert!(a == b || a == 4);
        }
        after.remove(4);
        assert_eq!(after, before);
        assert!(!after.remove(4));
    }

    #[test]
    fn collisions_promote_the_next_consumer() {
        // The same name and index collide on every point: the second instance waits in the list.
        let mut r = ConsistentHashRing::new(5);
        r.add(1, "x");
        r.used_name_indexes.get_mut("x").unwrap().clear();
        r.add(2, "x");
        assert_eq!(r.point_count(), 5);
        assert_eq!(r.select(1), Some(1));
        r.remove(1);
        assert_eq!(r.select(1), Some(2));
        assert_eq!(r.point_count(), 5);
    }
}
