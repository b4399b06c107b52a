//! `AbstractStickyAssignor.PartitionMovements`: records where each partition moved during one
//! rebalance so the general builder can move a partition back along a reverse edge instead of
//! ping-ponging. Which partition of a reverse edge is taken is the first of a Java
//! `HashSet<TopicPartition>`, so the sets emulate Java iteration order (spec §0.3).

use std::collections::HashMap;

use crate::java_order::{topic_partition_hash, JavaHashSet, TableInit};

/// (source member, destination member).
type Pair = (u32, u32);

pub(super) struct PartitionMovements {
    /// Topic -> pair -> partitions moved along that pair.
    by_topic: HashMap<u32, HashMap<Pair, JavaHashSet<u32>>>,
    /// gid -> its net movement so far.
    moves: HashMap<u32, Pair>,
}

impl PartitionMovements {
    pub fn new() -> Self {
        PartitionMovements { by_topic: HashMap::new(), moves: HashMap::new() }
    }

    fn remove_record(&mut self, gid: u32, topic: u32) -> Option<Pair> {
        let pair = self.moves.remove(&gid)?;
        if let Some(pairs) = self.by_topic.get_mut(&topic) {
            if let Some(set) = pairs.get_mut(&pair) {
                set.remove(&gid);
                if set.is_empty() {
                    pairs.remove(&pair);
                }
            }
            if pairs.is_empty() {
                self.by_topic.remove(&topic);
            }
        }
        Some(pair)
    }

    fn add_record(&mut self, gid: u32, topic: u32, hash: i32, pair: Pair) {
        self.moves.insert(gid, pair);
        self.by_topic
            .entry(topic)
            .or_default()
            .entry(pair)
            .or_insert_with(|| JavaHashSet::new(TableInit::Default))
            .insert(gid, hash);
    }

    /// `movePartition`: a partition moving back to where it came from leaves no record.
    /// `hash` is the partition's `TopicPartition.hashCode()`.
    pub fn move_partition(&mut self, gid: u32, topic: u32, hash: i32, old: u32, new: u32) {
        if self.moves.contains_key(&gid) {
            if let Some(existing) = self.remove_record(gid, topic) {
                if existing.0 != new {
                    self.add_record(gid, topic, hash, (existing.0, new));
                }
            }
        } else {
            self.add_record(gid, topic, hash, (old, new));
        }
    }

    /// `getTheActualPartitionToBeMoved`: when partitions of the topic already moved from `new` to
    /// the partition's original owner, move one of those back instead.
    pub fn actual_partition_to_move(&self, gid: u32, topic: u32, old: u32, new: u32) -> u32 {
        let Some(pairs) = self.by_topic.get(&topic) else { return gid };
        let source = self.moves.get(&gid).map_or(old, |pair| pair.0);
        match pairs.get(&(new, source)).and_then(JavaHashSet::first) {
            Some(other) => *other,
            None => gid,
        }
    }
}

/// `TopicPartition.hashCode()` from the topic name hash.
pub(super) fn partition_hash(topic_name_hash: i32, partition: u32) -> i32 {
    topic_partition_hash(topic_name_hash, partition as i32)
}
