//! Producer partition choice (shared/specs/kafka.md §6), as plain state a simulation owns.
//!
//! `KafkaProducer.partition`: an explicit partition wins; a key (unless `partitioner.ignore.keys`)
//! hashes with murmur2 over all partitions; otherwise the built-in uniform sticky partitioner of
//! KIP-794 picks, or the configured `RoundRobinPartitioner` does. Randomness comes from the
//! caller's seeded [`SplitMix64`], standing in for `ThreadLocalRandom.nextInt()`.

use std::collections::BTreeMap;

use super::murmur2::{partition_for_key, to_positive};
use mqviz_engine::SplitMix64;

/// `batch.size` default: the built-in partitioner switches after this many bytes.
pub const DEFAULT_BATCH_SIZE: u32 = 16_384;

/// What the producer knows about one topic when it picks a partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicView {
    /// All partitions of the topic, available or not.
    pub num_partitions: i32,
    /// Partitions that currently have a leader, ascending (`availablePartitionsForTopic`).
    pub available: Vec<i32>,
}

/// Which partitioner the producer is configured with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartitionerKind {
    /// No `partitioner.class`: keyed murmur2, else the uniform sticky partitioner.
    BuiltIn { ignore_keys: bool, batch_size: u32 },
    /// `partitioner.class=RoundRobinPartitioner`: a per-topic counter over available partitions,
    /// keys ignored.
    RoundRobin,
}

/// Why a partition was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionChoice {
    Explicit(i32),
    Keyed(i32),
    Sticky(i32),
    RoundRobin(i32),
}

impl PartitionChoice {
    pub fn partition(self) -> i32 {
        match self {
            PartitionChoice::Explicit(p)
            | PartitionChoice::Keyed(p)
            | PartitionChoice::Sticky(p)
            | PartitionChoice::RoundRobin(p) => p,
        }
    }
}

/// Adaptive-partitioning input: `cumulativeFrequencyTable` built from queue sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LoadStats {
    cumulative: Vec<i64>,
    partition_ids: Vec<i32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct StickyPartition {
    partition: i32,
    produced_bytes: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct TopicState {
    sticky: Option<StickyPartition>,
    load_stats: Option<LoadStats>,
    round_robin_counter: i32,
}

/// One producer's partitioner state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partitioner {
    kind: PartitionerKind,
    topics: BTreeMap<String, TopicState>,
}

impl Partitioner {
    pub fn new(kind: PartitionerKind) -> Partitioner {
        Partitioner { kind, topics: BTreeMap::new() }
    }

    /// `KafkaProducer.partition` for one record. `None` when the topic has no partitions.
    ///
    /// With [`PartitionerKind::RoundRobin`] the producer calls this a second time whenever the
    /// record opens a new batch (`onNewBatch`, KAFKA-9965), skipping one counter value.
    pub fn choose(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        explicit: Option<i32>,
        view: &TopicView,
        rng: &mut SplitMix64,
    ) -> Option<PartitionChoice> {
        if let Some(p) = explicit {
            return Some(PartitionChoice::Explicit(p));
        }
        if view.num_partitions <= 0 {
            return None;
        }
        match self.kind.clone() {
            PartitionerKind::RoundRobin => {
                let state = self.topics.entry(topic.to_string()).or_default();
                let next = state.round_robin_counter;
                state.round_robin_counter = next.wrapping_add(1);
                let p = if view.available.is_empty() {
                    to_positive(next) % view.num_partitions
                } else {
                    view.available[(to_positive(next) as usize) % view.available.len()]
                };
                Some(PartitionChoice::RoundRobin(p))
            }
            PartitionerKind::BuiltIn { ignore_keys, .. } => match key {
                Some(k) if !ignore_keys => partition_for_key(k, view.num_partitions).map(PartitionChoice::Keyed),
                _ => Some(PartitionChoice::Sticky(self.sticky_partition(topic, view, rng))),
            },
        }
    }

    /// The current sticky partition of a topic, drawn on first use (`peekCurrentPartitionInfo`).
    pub fn sticky_partition(&mut self, topic: &str, view: &TopicView, rng: &mut SplitMix64) -> i32 {
        let state = self.topics.entry(topic.to_string()).or_default();
        if let Some(s) = &state.sticky {
            return s.partition;
        }
        let partition = next_partition(state, view, rng);
        state.sticky = Some(StickyPartition { partition, produced_bytes: 0 });
        partition
    }

    /// `updatePartitionInfo` after a record of `appended_bytes` went to the sticky partition:
    /// switch after `batch.size` bytes when `enable_switch` (the batch is ready), and in any case
    /// after twice that.
    pub fn record_appended(
        &mut self,
        topic: &str,
        appended_bytes: u32,
        enable_switch: bool,
        view: &TopicView,
        rng: &mut SplitMix64,
    ) {
        let PartitionerKind::BuiltIn { batch_size, .. } = self.kind else { return };
        let Some(state) = self.topics.get_mut(topic) else { return };
        let Some(sticky) = state.sticky.as_mut() else { return };
        sticky.produced_bytes += appended_bytes as i64;
        let produced = sticky.produced_bytes;
        let batch = batch_size.max(1) as i64;
        if (produced >= batch && enable_switch) || produced >= 2 * batch {
            let partition = next_partition(state, view, rng);
            state.sticky = Some(StickyPartition { partition, produced_bytes: 0 });
        }
    }

    /// `updatePartitionLoadStats`: queue sizes of the partitions in `partition_ids` (the first
    /// `length` are the ones not excluded). Equal sizes, or fewer than two partitions, disable the
    /// adaptive weighting.
    pub fn update_load_stats(&mut self, topic: &str, queue_sizes: &[i32], partition_ids: &[i32], length: usize) {
        let state = self.topics.entry(topic.to_string()).or_default();
        state.load_stats = build_load_stats(queue_sizes, partition_ids, length);
    }
}

fn build_load_stats(queue_sizes: &[i32], partition_ids: &[i32], length: usize) -> Option<LoadStats> {
    let length = length.min(queue_sizes.len()).min(partition_ids.len());
    if length < 1 || queue_sizes.len() < 2 {
        return None;
    }
    let first = queue_sizes[0] as i64;
    let max_plus_one = queue_sizes[..length].iter().map(|q| *q as i64).max().unwrap_or(first) + 1;
    let all_equal = queue_sizes[..length].iter().all(|q| *q as i64 == first);
    if all_equal && length == queue_sizes.len() {
        return None;
    }
    let mut running = 0i64;
    let cumulative = queue_sizes[..length]
        .iter()
        .map(|q| {
            running += max_plus_one - *q as i64;
            running
        })
        .collect();
    Some(LoadStats { cumulative, partition_ids: partition_ids[..length].to_vec() })
}

/// `BuiltInPartitioner.nextPartition`: uniform over available partitions (all if none), or
/// weighted by inverse queue size when load stats exist.
fn next_partition(state: &TopicState, view: &TopicView, rng: &mut SplitMix64) -> i32 {
    let random = to_positive(rng.next_u64() as u32 as i32) as i64;
    if let Some(stats) = &state.load_stats {
        let total = *stats.cumulative.last().unwrap_or(&1);
        let weighted = random % total.max(1);
        let index = stats.cumulative.partition_point(|c| *c <= weighted).min(stats.partition_ids.len() - 1);
        return stats.partition_ids[index];
    }
    if view.available.is_empty() {
        (random % view.num_partitions.max(1) as i64) as i32
    } else {
        view.available[(random % view.available.len() as i64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(n: i32) -> TopicView {
        TopicView { num_partitions: n, available: (0..n).collect() }
    }

    #[test]
    fn keyed_records_hash_over_all_partitions() {
        let mut p = Partitioner::new(PartitionerKind::BuiltIn { ignore_keys: false, batch_size: DEFAULT_BATCH_SIZE });
        let mut rng = SplitMix64::new(1);
        let only_one_available = TopicView { num_partitions: 3, available: vec![0] };
        assert_eq!(p.choose("t", Some(b"key"), None, &only_one_available, &mut rng), Some(PartitionChoice::Keyed(1)));
        assert_eq!(p.choose("t", Some(b"key"), Some(2), &view(3), &mut rng), Some(PartitionChoice::Explicit(2)));
    }

    #[test]
    fn sticky_partition_switches_after_batch_size() {
        let mut p = Partitioner::new(PartitionerKind::BuiltIn { ignore_keys: true, batch_size: 100 });
        let mut rng = SplitMix64::new(7);
        let v = view(1000);
        let first = p.sticky_partition("t", &v, &mut rng);
        p.record_appended("t", 60, true, &v, &mut rng);
        assert_eq!(p.sticky_partition("t", &v, &mut rng), first);
        p.record_appended("t", 60, false, &v, &mut rng);
        assert_eq!(p.sticky_partition("t", &v, &mut rng), first, "not ready: no switch before 2x batch.size");
        p.record_appended("t", 90, false, &v, &mut rng);
        assert_ne!(p.sticky_partition("t", &v, &mut rng), first);
    }

    #[test]
    fn round_robin_cycles_available_partitions() {
        let mut p = Partitioner::new(PartitionerKind::RoundRobin);
        let mut rng = SplitMix64::new(0);
        let v = TopicView { num_partitions: 4, available: vec![1, 3] };
        let picks: Vec<i32> = (0..4).map(|_| p.choose("t", Some(b"k"), None, &v, &mut rng).unwrap().partition()).collect();
        assert_eq!(picks, vec![1, 3, 1, 3]);
    }

    #[test]
    fn load_stats_prefer_short_queues() {
        let stats = build_load_stats(&[0, 3, 1], &[0, 1, 2], 3).unwrap();
        assert_eq!(stats.cumulative, vec![4, 5, 8]);
        assert_eq!(build_load_stats(&[2, 2], &[0, 1], 2), None);
    }
}
