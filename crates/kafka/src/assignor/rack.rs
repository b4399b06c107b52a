//! Rack awareness shared by the range and sticky assignors (spec §1, KIP-881): which racks hold a
//! partition's replicas, and the gate `useRackAwareAssignment`.

use std::collections::BTreeSet;

use mqviz_engine::sort::CollectSorted;

use super::TopicMetadata;

/// The distinct non-null racks of a partition's replicas (offline and non-ISR replicas count).
pub(super) fn replica_racks(metadata: &TopicMetadata, partition: u32) -> BTreeSet<&str> {
    metadata.replica_racks.get(partition as usize).into_iter().flatten().filter_map(|r| r.as_deref()).collect_set()
}

/// `AbstractPartitionAssignor.useRackAwareAssignment`: some consumer rack must hold replicas, and
/// rack-aware logic is skipped when every partition has replicas on exactly all replica racks.
pub(super) fn use_rack_aware<'a>(
    consumer_racks: &BTreeSet<&str>,
    all_partition_racks: &BTreeSet<&str>,
    mut racks_per_partition: impl Iterator<Item = &'a BTreeSet<&'a str>>,
) -> bool {
    if consumer_racks.is_empty() || consumer_racks.is_disjoint(all_partition_racks) {
        return false;
    }
    !racks_per_partition.all(|r| r == all_partition_racks)
}
