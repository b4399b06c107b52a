//! Upstream configuration defaults the model depends on, under their upstream names (spec §1.2,
//! §1.3, §1.4, §2, §3, §4.4, §4.5, §5). The typed constants are what the model uses; the named
//! table is what the conformance `defaults` operation reports, so the two cannot drift apart.

use mqviz_engine::Millis;

/// `activeConsumerFailoverDelayTimeMillis` (broker): wait before a new Failover active consumer reads.
pub const ACTIVE_CONSUMER_FAILOVER_DELAY_MS: Millis = 1_000;
/// Ring replicas per consumer in the Failover hash-ring pick (§1.2, §8).
pub const FAILOVER_RING_REPLICAS: u32 = 100;

/// `receiverQueueSize` (client).
pub const RECEIVER_QUEUE_SIZE: u32 = 1_000;
/// `maxTotalReceiverQueueSizeAcrossPartitions` (client).
pub const MAX_TOTAL_RECEIVER_QUEUE_SIZE_ACROSS_PARTITIONS: u32 = 50_000;
/// `dispatcherMaxReadBatchSize` (broker): entries one dispatcher read asks the cursor for.
pub const DISPATCHER_MAX_READ_BATCH_SIZE: u32 = 100;
/// `dispatcherMaxRoundRobinBatchSize` (broker): entries per Shared round-robin turn.
pub const DISPATCHER_MAX_ROUND_ROBIN_BATCH_SIZE: u32 = 20;
/// `maxUnackedMessagesPerConsumer` (broker).
pub const MAX_UNACKED_MESSAGES_PER_CONSUMER: u32 = 50_000;
/// `maxUnackedMessagesPerSubscription` (broker).
pub const MAX_UNACKED_MESSAGES_PER_SUBSCRIPTION: u32 = 200_000;

/// `subscriptionKeySharedUseConsistentHashing` (broker).
pub const KEY_SHARED_USE_CONSISTENT_HASHING: bool = true;
/// `subscriptionKeySharedConsistentHashingReplicaPoints` (broker).
pub const KEY_SHARED_CONSISTENT_HASHING_REPLICA_POINTS: u32 = 100;
/// `subscriptionKeySharedUseClassicPersistentImplementation` (broker, 4.0).
pub const KEY_SHARED_USE_CLASSIC_IMPLEMENTATION: bool = false;
/// `keySharedLookAheadMsgInReplayThresholdPerConsumer` (broker).
pub const KEY_SHARED_LOOK_AHEAD_PER_CONSUMER: u32 = 2_000;
/// `keySharedLookAheadMsgInReplayThresholdPerSubscription` (broker).
pub const KEY_SHARED_LOOK_AHEAD_PER_SUBSCRIPTION: u32 = 20_000;
/// `keySharedUnblockingIntervalMs` (broker): delay of the read scheduled when a draining hash unblocks.
pub const KEY_SHARED_UNBLOCKING_INTERVAL_MS: Millis = 10;

/// `negativeAckRedeliveryDelay` (client), in ms.
pub const NEGATIVE_ACK_REDELIVERY_DELAY_MS: Millis = 60_000;
/// The smallest nack delay the client accepts.
pub const MIN_NACK_DELAY_MS: Millis = 100;
/// `ackTimeout` (client): 0 = off.
pub const ACK_TIMEOUT_MS: Millis = 0;
/// The smallest non-zero ack timeout.
pub const ACK_TIMEOUT_MIN_MS: Millis = 1_000;
/// `tickDuration` of the ack-timeout tracker.
pub const ACK_TIMEOUT_TICK_MS: Millis = 1_000;
/// `acknowledgementsGroupTime` (client), in ms.
pub const ACKNOWLEDGEMENTS_GROUP_TIME_MS: Millis = 100;
/// `RetryMessageUtil.MAX_RECONSUMETIMES`.
pub const MAX_RECONSUME_TIMES_DEFAULT_FOR_RETRY: u32 = 16;

/// `batchingMaxPublishDelayMicros` (producer).
pub const BATCHING_MAX_PUBLISH_DELAY_MICROS: u64 = 1_000;
/// `batchingPartitionSwitchFrequencyByPublishDelay` (producer).
pub const BATCHING_PARTITION_SWITCH_FREQUENCY_BY_PUBLISH_DELAY: u64 = 10;
/// `batchingEnabled` (producer).
pub const BATCHING_ENABLED: bool = true;

/// Scalable topics: consumer-session grace period (`scalableTopicConsumerSessionGracePeriodSeconds`).
pub const CONSUMER_SESSION_GRACE_PERIOD_MS: Millis = 60_000;
/// Scalable topics: sealed-segment GC interval.
pub const SEGMENT_GC_INTERVAL_MS: Millis = 60_000;
/// Scalable topics: first drain-poll delay.
pub const DRAIN_INITIAL_DELAY_MS: Millis = 2_000;
/// Scalable topics: drain-poll backoff cap.
pub const DRAIN_MAX_DELAY_MS: Millis = 15 * 60_000;

/// A default's value as upstream prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DefaultValue {
    Int(i64),
    Bool(bool),
    Text(&'static str),
}

/// Which area's defaults a conformance kind reports when no names are requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultsArea {
    Failover,
    SharedDispatch,
    KeyShared,
    Cursor,
    Routing,
    Scalable,
}

const fn int(v: u64) -> DefaultValue {
    DefaultValue::Int(v as i64)
}

/// Every default by upstream name, grouped by area.
fn table() -> Vec<(DefaultsArea, &'static str, DefaultValue)> {
    use DefaultValue::{Bool, Text};
    use DefaultsArea::*;
    vec![
        (Failover, "activeConsumerFailoverDelayTimeMillis", int(ACTIVE_CONSUMER_FAILOVER_DELAY_MS)),
        (SharedDispatch, "receiverQueueSize", int(RECEIVER_QUEUE_SIZE as u64)),
        (
            SharedDispatch,
            "maxTotalReceiverQueueSizeAcrossPartitions",
            int(MAX_TOTAL_RECEIVER_QUEUE_SIZE_ACROSS_PARTITIONS as u64),
        ),
        (SharedDispatch, "dispatcherMaxRoundRobinBatchSize", int(DISPATCHER_MAX_ROUND_ROBIN_BATCH_SIZE as u64)),
        (SharedDispatch, "maxUnackedMessagesPerConsumer", int(MAX_UNACKED_MESSAGES_PER_CONSUMER as u64)),
        (SharedDispatch, "maxUnackedMessagesPerSubscription", int(MAX_UNACKED_MESSAGES_PER_SUBSCRIPTION as u64)),
        (KeyShared, "subscriptionKeySharedUseConsistentHashing", Bool(KEY_SHARED_USE_CONSISTENT_HASHING)),
        (
            KeyShared,
            "subscriptionKeySharedConsistentHashingReplicaPoints",
            int(KEY_SHARED_CONSISTENT_HASHING_REPLICA_POINTS as u64),
        ),
        (KeyShared, "subscriptionKeySharedUseClassicPersistentImplementation", Bool(KEY_SHARED_USE_CLASSIC_IMPLEMENTATION)),
        (KeyShared, "keySharedLookAheadMsgInReplayThresholdPerConsumer", int(KEY_SHARED_LOOK_AHEAD_PER_CONSUMER as u64)),
        (KeyShared, "keySharedLookAheadMsgInReplayThresholdPerSubscription", int(KEY_SHARED_LOOK_AHEAD_PER_SUBSCRIPTION as u64)),
        (KeyShared, "keySharedUnblockingIntervalMs", int(KEY_SHARED_UNBLOCKING_INTERVAL_MS)),
        (KeyShared, "clientKeySharedMode", Text("AUTO_SPLIT")),
        (KeyShared, "allowOutOfOrderDelivery", Bool(false)),
        (Cursor, "maxReconsumeTimesDefaultForRetry", int(MAX_RECONSUME_TIMES_DEFAULT_FOR_RETRY as u64)),
        (Cursor, "negativeAckRedeliveryDelayMs", int(NEGATIVE_ACK_REDELIVERY_DELAY_MS)),
        (Cursor, "minNackDelayMs", int(MIN_NACK_DELAY_MS)),
        (Cursor, "ackTimeoutMs", int(ACK_TIMEOUT_MS)),
        (Cursor, "ackTimeoutMinMs", int(ACK_TIMEOUT_MIN_MS)),
        (Cursor, "ackTimeoutTickMs", int(ACK_TIMEOUT_TICK_MS)),
        (Cursor, "acknowledgementsGroupTimeMs", int(ACKNOWLEDGEMENTS_GROUP_TIME_MS)),
        (Cursor, "subscriptionInitialPosition", Text("Latest")),
        (Cursor, "subscriptionType", Text("Exclusive")),
        (Cursor, "priorityLevel", int(0)),
        (Routing, "batchingMaxPublishDelayMicros", int(BATCHING_MAX_PUBLISH_DELAY_MICROS)),
        (Routing, "batchingPartitionSwitchFrequencyByPublishDelay", int(BATCHING_PARTITION_SWITCH_FREQUENCY_BY_PUBLISH_DELAY)),
        (Routing, "partitionSwitchMs", int(crate::routing::default_partition_switch_ms())),
        (Routing, "hashingScheme", Text("JavaStringHash")),
        (Routing, "messageRoutingMode", Text("RoundRobinPartition")),
        (Routing, "batchingEnabled", Bool(BATCHING_ENABLED)),
        (Scalable, "consumerSessionGracePeriodDefaultSec", int(CONSUMER_SESSION_GRACE_PERIOD_MS / 1_000)),
        (Scalable, "gcIntervalSec", int(SEGMENT_GC_INTERVAL_MS / 1_000)),
        (Scalable, "drainInitialDelaySec", int(DRAIN_INITIAL_DELAY_MS / 1_000)),
        (Scalable, "drainMaxDelaySec", int(DRAIN_MAX_DELAY_MS / 1_000)),
    ]
}

/// The defaults of one area, in table order.
pub fn area_defaults(area: DefaultsArea) -> Vec<(&'static str, DefaultValue)> {
    table().into_iter().filter(|(a, _, _)| *a == area).map(|(_, n, v)| (n, v)).collect()
}

/// One default by upstream name, preferring `area`'s entry when names repeat across areas.
pub fn lookup(area: DefaultsArea, name: &str) -> Option<DefaultValue> {
    let all = table();
    let in_area = all.iter().find(|(a, n, _)| *a == area && *n == name);
    in_area.or_else(|| all.iter().find(|(_, n, _)| *n == name)).map(|(_, _, v)| v.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_an_area() {
        let all = table();
        for (i, (a, n, _)) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|(b, m, _)| !(a == b && n == m)), "duplicate {n}");
        }
    }

    #[test]
    fn lookup_finds_other_areas() {
        assert_eq!(lookup(DefaultsArea::Failover, "receiverQueueSize"), Some(DefaultValue::Int(1000)));
        assert_eq!(lookup(DefaultsArea::Routing, "partitionSwitchMs"), Some(DefaultValue::Int(10)));
        assert_eq!(lookup(DefaultsArea::Cursor, "nope"), None);
    }
}
