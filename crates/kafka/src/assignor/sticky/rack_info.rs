//! `AbstractStickyAssignor.RackInfo`: consumer and replica racks, the rack-aware gate, and the
//! per-partition count of same-rack consumers used to order unassigned partitions. That count is
//! kept whenever any consumer has a rack, even when the gate turns rack awareness off.

use mqviz_engine::sort::CollectSorted;
use mqviz_engine::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet};

use super::super::group::Group;
use super::super::rack::{replica_racks, use_rack_aware};

pub(super) struct RackInfo {
    /// Each member's rack id when rack-aware assignment is on.
    consumer_rack: Vec<Option<u32>>,
    /// Replica rack ids of each gid when rack-aware assignment is on; empty otherwise.
    partition_racks: Vec<Vec<u32>>,
    /// Consumers on the racks of each gid; `None` when no consumer has a rack.
    consumers_on_partition_racks: Option<Vec<u32>>,
}

impl RackInfo {
    pub fn new(g: &Group) -> RackInfo {
        let mut consumers_by_rack: BTreeMap<&str, u32> = BTreeMap::new();
        for m in 0..g.member_count() {
            if let Some(rack) = g.rack_of(m) {
                *consumers_by_rack.entry(rack).or_default() += 1;
            }
        }
        if consumers_by_rack.is_empty() {
            return RackInfo {
                consumer_rack: vec![None; g.member_count()],
                partition_racks: Vec::new(),
                consumers_on_partition_racks: None,
            };
        }
        let racks_per_partition: Vec<BTreeSet<&str>> =
            g.topics.iter().flat_map(|t| (0..t.count).map(|p| replica_racks(t.metadata, p))).collect();
        let all_partition_racks: BTreeSet<&str> = racks_per_partition.iter().flatten().copied().collect_set();
        let counts = racks_per_partition
            .iter()
            .map(|racks| racks.iter().map(|r| consumers_by_rack.get(r).copied().unwrap_or(0)).sum())
            .collect();
        let consumer_racks: BTreeSet<&str> = consumers_by_rack.keys().copied().collect_set();
        if !use_rack_aware(&consumer_racks, &all_partition_racks, racks_per_partition.iter()) {
            return RackInfo {
                consumer_rack: vec![None; g.member_count()],
                partition_racks: Vec::new(),
                consumers_on_partition_racks: Some(counts),
            };
        }
        let ids: BTreeMap<&str, u32> =
            consumer_racks.union(&all_partition_racks).enumerate().map(|(i, r)| (*r, i as u32)).collect_map();
        RackInfo {
            consumer_rack: (0..g.member_count()).map(|m| g.rack_of(m).map(|r| ids[r])).collect(),
            partition_racks: racks_per_partition.iter().map(|racks| racks.iter().map(|r| ids[r]).collect()).collect(),
            consumers_on_partition_racks: Some(counts),
        }
    }

    /// Whether rack-aware assignment is in use (`consumerRacks` is not empty).
    pub fn enabled(&self) -> bool {
        !self.partition_racks.is_empty() || self.consumer_rack.iter().any(Option::is_some)
    }

    pub fn consumer_rack(&self, member: usize) -> Option<u32> {
        self.consumer_rack[member]
    }

    pub fn partition_racks(&self, gid: u32) -> &[u32] {
        self.partition_racks.get(gid as usize).map(Vec::as_slice).unwrap_or(&[])
    }

    /// `racksMismatch`: the consumer has a rack and no replica of the partition is on it.
    pub fn mismatch(&self, member: usize, gid: u32) -> bool {
        match self.consumer_rack[member] {
            None => false,
            Some(rack) => !self.partition_racks(gid).contains(&rack),
        }
    }

    /// `sortPartitionsByRackConsumers`: a stable sort by the number of consumers on the
    /// partition's racks.
    pub fn sort_by_rack_consumers(&self, partitions: &mut [u32]) {
        if let Some(counts) = &self.consumers_on_partition_racks {
            partitions.stable_sort_by_key(|gid| counts[*gid as usize]);
        }
    }

    /// `nextRackConsumer`: the first index from `first` (cyclically) whose consumer's rack holds
    /// a replica of the partition.
    pub fn next_rack_consumer(&self, gid: u32, consumers: &[u32], first: usize) -> Option<usize> {
        let racks = self.partition_racks(gid);
        if racks.is_empty() || consumers.is_empty() {
            return None;
        }
        (0..consumers.len())
            .map(|i| (first + i) % consumers.len())
            .find(|i| self.consumer_rack[consumers[*i] as usize].is_some_and(|r| racks.contains(&r)))
    }
}
