//! Partitioned-topic producer routing (spec §3): `RoundRobinPartitionMessageRouterImpl` with its
//! batching window, `SinglePartitionMessageRouterImpl`, keyed hashing, and partition names.
//!
//! Routers are plain state: the simulation passes its logical clock in, and the random start index
//! comes from the caller's seeded RNG, never from here.

use std::fmt;

use super::defaults::{BATCHING_MAX_PUBLISH_DELAY_MICROS, BATCHING_PARTITION_SWITCH_FREQUENCY_BY_PUBLISH_DELAY};
use super::hash::{sign_safe_mod, HashingScheme};
use mqviz_engine::SplitMix64;

/// `partitionSwitchMs` as `PartitionedProducerImpl` derives it:
/// `batchingMaxPublishDelayMicros / 1000 * batchingPartitionSwitchFrequencyByPublishDelay`, at least 1.
pub fn partition_switch_ms(batching_max_publish_delay_micros: u64, frequency: u64) -> u64 {
    (batching_max_publish_delay_micros / 1_000).saturating_mul(frequency).max(1)
}

/// The default 10 ms window in which key-less batched messages stick to one partition.
pub fn default_partition_switch_ms() -> u64 {
    partition_switch_ms(BATCHING_MAX_PUBLISH_DELAY_MICROS, BATCHING_PARTITION_SWITCH_FREQUENCY_BY_PUBLISH_DELAY)
}

/// `TopicName.getPartition(i)`: `<topic>-partition-<i>`.
pub fn partition_topic_name(topic: &str, index: u32) -> String {
    format!("{topic}-partition-{index}")
}

/// Why a router could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoutingError {
    NoPartitions,
    PartitionOutOfRange { partition: i64, partitions: u32 },
}

impl fmt::Display for RoutingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoutingError::NoPartitions => write!(f, "IllegalArgumentException: numPartitions must be positive"),
            RoutingError::PartitionOutOfRange { partition, partitions } => {
                write!(f, "IllegalArgumentException: partition {partition} is outside [0, {partitions})")
            }
        }
    }
}

/// How key-less messages pick a partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeylessRouting {
    /// Batching on: `(nowMillis / partitionSwitchMs + startPtnIdx) mod N`, so a whole window goes to one partition.
    RoundRobinByTimeWindow { start_index: i64, partition_switch_ms: u64 },
    /// Batching off: a Java-int counter starting at `startPtnIdx`, incremented per message.
    RoundRobinPerMessage { next_index: i32 },
    /// `SinglePartition`: the partition fixed when the producer was created.
    Fixed { partition: u32 },
}

/// One producer's message router over a partitioned topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionRouter {
    pub partitions: u32,
    pub hashing_scheme: HashingScheme,
    pub keyless: KeylessRouting,
}

impl PartitionRouter {
    /// The default `RoundRobinPartition` router. `batching_switch_ms` is `Some` when batching is on.
    pub fn round_robin(
        partitions: u32,
        hashing_scheme: HashingScheme,
        start_index: i64,
        batching_switch_ms: Option<u64>,
    ) -> Result<PartitionRouter, RoutingError> {
        if partitions == 0 {
            return Err(RoutingError::NoPartitions);
        }
        let keyless = match batching_switch_ms {
            // The router clamps the window to at least 1 ms.
            Some(ms) => KeylessRouting::RoundRobinByTimeWindow { start_index, partition_switch_ms: ms.clamp(1, i64::MAX as u64) },
            // The counter is a Java int; start indexes come from [0, N).
            None => KeylessRouting::RoundRobinPerMessage { next_index: start_index as i32 },
        };
        Ok(PartitionRouter { partitions, hashing_scheme, keyless })
    }

    /// The `SinglePartition` router: key-less messages all go to `partition`.
    pub fn single_partition(
        partitions: u32,
        hashing_scheme: HashingScheme,
        partition: i64,
    ) -> Result<PartitionRouter, RoutingError> {
        if partitions == 0 {
            return Err(RoutingError::NoPartitions);
        }
        if partition < 0 || partition >= i64::from(partitions) {
            return Err(RoutingError::PartitionOutOfRange { partition, partitions });
        }
        Ok(PartitionRouter { partitions, hashing_scheme, keyless: KeylessRouting::Fixed { partition: partition as u32 } })
    }

    /// The start index (or fixed partition) upstream draws uniformly when the producer is created.
    pub fn random_start_index(partitions: u32, rng: &mut SplitMix64) -> i64 {
        rng.below(u64::from(partitions.max(1))) as i64
    }

    /// `choosePartition`: keyed messages hash in every mode; key-less ones follow `keyless`.
    pub fn choose_partition(&mut self, key: Option<&str>, now_ms: i64) -> u32 {
        let n = i64::from(self.partitions);
        let index = match (key, &mut self.keyless) {
            (Some(k), _) => i64::from(self.hashing_scheme.key_hash(k)),
            (None, KeylessRouting::RoundRobinByTimeWindow { start_index, partition_switch_ms }) => {
                // Java long division truncates toward zero (a negative clock is not floored).
                (now_ms / *partition_switch_ms as i64).wrapping_add(*start_index)
            }
            (None, KeylessRouting::RoundRobinPerMessage { next_index }) => {
                let current = *next_index;
                *next_index = current.wrapping_add(1);
                i64::from(current)
            }
            (None, KeylessRouting::Fixed { partition }) => i64::from(*partition),
        };
        sign_safe_mod(index, n) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_messages_use_java_string_hash_by_default() {
        let mut r = PartitionRouter::round_robin(100, HashingScheme::default(), 0, Some(10)).unwrap();
        assert_eq!(r.choose_partition(Some("key1"), 0), 98);
        assert_eq!(r.choose_partition(Some("key2"), 0), 99);
    }

    #[test]
    fn batching_window_sticks_to_one_partition() {
        let mut r = PartitionRouter::round_robin(5, HashingScheme::JavaStringHash, 0, Some(5)).unwrap();
        let got: Vec<u32> = (0..10).map(|t| r.choose_partition(None, t)).collect();
        assert_eq!(got, vec![0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
        assert_eq!(default_partition_switch_ms(), 10);
    }

    #[test]
    fn per_message_counter_starts_at_the_start_index() {
        let mut r = PartitionRouter::round_robin(4, HashingScheme::JavaStringHash, 3, None).unwrap();
        let got: Vec<u32> = (0..6).map(|_| r.choose_partition(None, 0)).collect();
        assert_eq!(got, vec![3, 0, 1, 2, 3, 0]);
    }

    #[test]
    fn counter_wraps_like_a_java_int() {
        let mut r = PartitionRouter::round_robin(3, HashingScheme::JavaStringHash, i64::from(i32::MAX), None).unwrap();
        assert_eq!(r.choose_partition(None, 0), (i64::from(i32::MAX) % 3) as u32);
        assert_eq!(r.choose_partition(None, 0), sign_safe_mod(i64::from(i32::MIN), 3) as u32);
    }

    #[test]
    fn bad_configurations_are_errors() {
        assert_eq!(PartitionRouter::round_robin(0, HashingScheme::JavaStringHash, 0, None), Err(RoutingError::NoPartitions));
        assert!(PartitionRouter::single_partition(4, HashingScheme::JavaStringHash, 4).is_err());
    }
}
