//! The Pulsar section of a scenario (`docs/scenario-format.md`, "Pulsar"): broker configuration and
//! eras, topics (non-partitioned, partitioned, scalable), producers, consumers and the timeline,
//! read from the same JSON object as the shared envelope (`mqviz_engine::scenario`).

mod check;
mod parse;
mod template;
mod write;

pub use parse::{parse_action, parse_scenario, parse_scenario_value};

/// Whether `ack` is an ack behaviour `spec`'s client accepts (cumulative acks only on Exclusive
/// and Failover, `reconsumeLater` only with retry enabled, STREAM only cumulative); problems
/// name `ack_path`.
pub fn ack_problems(spec: &ConsumerSpec, ack: &AckSpec, ack_path: &str) -> Vec<mqviz_engine::json_path::PathError> {
    let mut e = mqviz_engine::json_path::Errors::default();
    let changed = ConsumerSpec { ack: ack.clone(), ..spec.clone() };
    parse::check_ack_fits(&changed, ack_path, &mut e);
    e.list
}
pub use template::{expand, Template};
pub use write::{action_value, timed_action_value};

use crate::cursor::InitialPosition;
use crate::failover::FailoverEra;
use crate::hash::{HashingScheme, SegmentHashEra};
use crate::scalable::{AssignmentEra, ClientCloseEra, QueueEra};
use crate::subscription::{KeySharedMode, SubscriptionType};
use mqviz_engine::Millis;

/// Largest partition count a scenario may ask for.
pub const MAX_PARTITIONS: u64 = 1_024;
/// Largest initial segment count of a scalable topic.
pub const MAX_INITIAL_SEGMENTS: u64 = 1_024;
/// Largest receiver queue (the client accepts any int; beyond this a scenario is surely a mistake).
pub const MAX_RECEIVER_QUEUE: u64 = 1_000_000;

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub until: Millis,
    pub latency_ms: Millis,
    pub config: PulsarConfig,
    pub brokers: Vec<String>,
    pub topics: Vec<TopicSpec>,
    pub producers: Vec<ProducerSpec>,
    pub consumers: Vec<ConsumerSpec>,
    pub timeline: Vec<TimedAction>,
    /// Subscriptions as an admin tool saw them at t=0 (`docs/scenario-format.md`, "Snapshots (Pulsar)").
    pub subscriptions: Vec<SubscriptionSnapshot>,
    /// `memoryBudgetMb`: what the run may hold before it stops cleanly (`mqviz_engine::budget`).
    pub memory_budget_mb: Option<u64>,
}

/// Broker settings (upstream names in the JSON) and the era of each rule that changed upstream.
#[derive(Clone, Debug, PartialEq)]
pub struct PulsarConfig {
    pub failover_era: FailoverEra,
    pub failover_delay_ms: Millis,
    /// PIP-392 `activeConsumerFailoverConsistentHashing`.
    pub failover_consistent_hashing: bool,
    pub round_robin_batch: u32,
    pub max_read_batch: u32,
    pub max_unacked_per_consumer: u32,
    pub max_unacked_per_subscription: u32,
    pub key_shared_consistent_hashing: bool,
    pub key_shared_replica_points: u32,
    pub key_shared_classic: bool,
    pub look_ahead_per_consumer: u32,
    pub look_ahead_per_subscription: u32,
    pub unblocking_interval_ms: Millis,
    pub segment_hash_era: SegmentHashEra,
    pub assignment_era: AssignmentEra,
    pub client_close_era: ClientCloseEra,
    pub queue_era: QueueEra,
    pub session_grace_ms: Millis,
    pub drain_initial_delay_ms: Millis,
    pub drain_max_delay_ms: Millis,
    /// Sealed-segment GC (PR #25668): retention before a drained sealed segment is pruned; `None` = no GC.
    pub sealed_segment_retention_ms: Option<Millis>,
}

impl Default for PulsarConfig {
    fn default() -> Self {
        use crate::defaults::*;
        PulsarConfig {
            failover_era: FailoverEra::Current,
            failover_delay_ms: ACTIVE_CONSUMER_FAILOVER_DELAY_MS,
            failover_consistent_hashing: false,
            round_robin_batch: DISPATCHER_MAX_ROUND_ROBIN_BATCH_SIZE,
            max_read_batch: DISPATCHER_MAX_READ_BATCH_SIZE,
            max_unacked_per_consumer: MAX_UNACKED_MESSAGES_PER_CONSUMER,
            max_unacked_per_subscription: MAX_UNACKED_MESSAGES_PER_SUBSCRIPTION,
            key_shared_consistent_hashing: KEY_SHARED_USE_CONSISTENT_HASHING,
            key_shared_replica_points: KEY_SHARED_CONSISTENT_HASHING_REPLICA_POINTS,
            key_shared_classic: KEY_SHARED_USE_CLASSIC_IMPLEMENTATION,
            look_ahead_per_consumer: KEY_SHARED_LOOK_AHEAD_PER_CONSUMER,
            look_ahead_per_subscription: KEY_SHARED_LOOK_AHEAD_PER_SUBSCRIPTION,
            unblocking_interval_ms: KEY_SHARED_UNBLOCKING_INTERVAL_MS,
            segment_hash_era: SegmentHashEra::Pip468LowBits,
            assignment_era: AssignmentEra::Pr25642,
            client_close_era: ClientCloseEra::Pre26433,
            queue_era: QueueEra::AllSegments,
            session_grace_ms: CONSUMER_SESSION_GRACE_PERIOD_MS,
            drain_initial_delay_ms: DRAIN_INITIAL_DELAY_MS,
            drain_max_delay_ms: DRAIN_MAX_DELAY_MS,
            sealed_segment_retention_ms: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopicKind {
    NonPartitioned,
    Partitioned {
        partitions: u32,
    },
    /// A scalable topic (`topic://`), with its initial segment layout.
    Scalable {
        initial_segments: u32,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicSpec {
    /// As written in the scenario (short names are completed by `full_topic_name`).
    pub name: String,
    pub kind: TopicKind,
    /// What the topic held at t=0 (empty: nothing).
    pub snapshot: TopicSnapshot,
}

/// A topic's ledgers at t=0: `entries[p]` entries in partition `p` (one message each), keyed by
/// `backlog_key` (a template; `None`: no key).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicSnapshot {
    pub entries: Vec<u64>,
    pub backlog_key: Option<String>,
}

/// One durable subscription at t=0: its cursor on every partition, the consumers connected to it
/// (in the order they connected), and what the broker showed of its dispatcher, to be checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubscriptionSnapshot {
    pub topic: String,
    pub name: String,
    /// One per partition (one for a non-partitioned topic).
    pub cursors: Vec<CursorSnapshot>,
    /// Consumer names, in connection order.
    pub connected: Vec<String>,
    /// Exclusive/Failover: the active consumer per partition, as `activeConsumerName` said.
    pub active_consumers: Vec<Option<String>>,
    /// Key_Shared: each consumer's hash ranges, as `keyHashRanges` said.
    pub key_hash_ranges: Vec<(String, Vec<(u32, u32)>)>,
}

/// A cursor at t=0: `markDeletePosition` and the `individuallyDeletedMessages` above it, as
/// inclusive entry ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CursorSnapshot {
    pub mark_delete: i64,
    pub acked: Vec<(i64, i64)>,
}

impl Scenario {
    /// Entries the snapshot puts in the ledgers at t=0.
    pub fn snapshot_entries(&self) -> u64 {
        self.topics.iter().flat_map(|t| &t.snapshot.entries).sum()
    }

    /// The snapshot's description of subscription `name` on topic `topic` (as referenced), if any.
    pub fn subscription_snapshot(&self, topic: &TopicSpec, name: &str) -> Option<&SubscriptionSnapshot> {
        self.subscriptions.iter().find(|s| s.name == name && topic.is_named(&s.topic))
    }
}

impl TopicSpec {
    /// `persistent://public/default/<name>` (or `topic://...` for scalable topics) unless the name
    /// already has a domain.
    pub fn full_name(&self) -> String {
        full_topic_name(&self.name, matches!(self.kind, TopicKind::Scalable { .. }))
    }

    /// Whether `reference` names this topic: as written, in full, or as `TopicName.get` reads
    /// it (a short name for a topic declared with its full `persistent://` name).
    pub fn is_named(&self, reference: &str) -> bool {
        let full = self.full_name();
        self.name == reference || full == reference || (full.starts_with("persistent://") && full == topic_name_get(reference))
    }
}

pub fn full_topic_name(name: &str, scalable: bool) -> String {
    if name.contains("://") {
        name.to_string()
    } else if scalable {
        format!("topic://public/default/{name}")
    } else {
        format!("persistent://public/default/{name}")
    }
}

/// `TopicName.get(name)` for a v4 topic: a short name lives in `public/default`, a
/// `tenant/namespace/topic` name is persistent, a full name stays as written. The client names
/// its dead-letter and retry topics this way.
pub fn topic_name_get(name: &str) -> String {
    match name.split('/').count() {
        _ if name.contains("://") => name.to_string(),
        3 => format!("persistent://{name}"),
        _ => full_topic_name(name, false),
    }
}

/// The producer's `messageRoutingMode` on a partitioned topic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RoutingMode {
    #[default]
    RoundRobinPartition,
    SinglePartition,
}

impl RoutingMode {
    pub fn name(self) -> &'static str {
        match self {
            RoutingMode::RoundRobinPartition => "RoundRobinPartition",
            RoutingMode::SinglePartition => "SinglePartition",
        }
    }
}

/// `batcherBuilder`: DEFAULT puts every key in one batch; KEY_BASED keeps one key per batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BatcherKind {
    #[default]
    Default,
    KeyBased,
}

impl BatcherKind {
    pub fn name(self) -> &'static str {
        match self {
            BatcherKind::Default => "DEFAULT",
            BatcherKind::KeyBased => "KEY_BASED",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchingSpec {
    pub enabled: bool,
    /// `batchingMaxMessages`.
    pub max_messages: u32,
    /// `batchingMaxPublishDelay`, in ms (upstream default 1 ms).
    pub max_publish_delay_ms: Millis,
    pub batcher: BatcherKind,
}

impl Default for BatchingSpec {
    fn default() -> Self {
        BatchingSpec { enabled: true, max_messages: 1_000, max_publish_delay_ms: 1, batcher: BatcherKind::Default }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerSpec {
    pub name: String,
    pub topic: String,
    pub routing: RoutingMode,
    pub hashing: HashingScheme,
    pub batching: BatchingSpec,
    pub latency_ms: Option<Millis>,
    pub sends: Vec<SendSpec>,
}

/// A send script: `count` messages from `at`, `burst` at a time, bursts `intervalMs` apart; or
/// one message per explicit time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendSpec {
    pub at: Millis,
    pub count: u32,
    pub interval_ms: Millis,
    /// Messages sent at each instant (at least 1).
    pub burst: u32,
    pub times: Vec<Millis>,
    /// Key template (`{i}`, `{i%N}` expand per message); the partition key and the sticky key.
    pub key: Option<String>,
    /// Ordering key template: the sticky key when set (it does not route partitions).
    pub ordering_key: Option<String>,
    pub body: String,
}

impl SendSpec {
    /// When message `i` is sent.
    pub fn time_of(&self, i: u32) -> Millis {
        match self.times.get(i as usize) {
            Some(t) => *t,
            None => self.at.saturating_add(self.interval_ms.saturating_mul(u64::from(i / self.burst.max(1)))),
        }
    }
}

/// How a scalable-topic consumer reads (PIP-460/468).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalableConsumerType {
    /// A Shared v4 consumer on every segment; no drain ordering.
    Queue,
    /// Segments assigned by the coordinator; Exclusive per segment, cumulative acks, parent-drain ordering.
    Stream,
}

impl ScalableConsumerType {
    pub fn name(self) -> &'static str {
        match self {
            ScalableConsumerType::Queue => "QUEUE",
            ScalableConsumerType::Stream => "STREAM",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySharedSpec {
    pub mode: KeySharedMode,
    pub allow_out_of_order_delivery: bool,
    /// STICKY: inclusive ranges in `[0, 65535]`.
    pub ranges: Vec<(u32, u32)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConsumerKind {
    /// A v4 consumer on a non-partitioned or partitioned topic.
    Subscription { subscription_type: SubscriptionType, key_shared: Option<KeySharedSpec> },
    /// A v5 consumer on a scalable topic.
    Scalable(ScalableConsumerType),
}

/// What the application does with each message it receives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AckMode {
    #[default]
    Individual,
    /// `acknowledgeCumulative` (Exclusive and Failover only).
    Cumulative,
    /// Never acks: messages stay pending until an ack timeout or a redelivery.
    Never,
    /// `negativeAcknowledge` every message.
    Nack,
    /// `reconsumeLater`: a copy goes to the retry topic and the original is acked (needs `enableRetry`).
    Retry,
}

impl AckMode {
    pub fn name(self) -> &'static str {
        match self {
            AckMode::Individual => "individual",
            AckMode::Cumulative => "cumulative",
            AckMode::Never => "never",
            AckMode::Nack => "nack",
            AckMode::Retry => "retry",
        }
    }

    pub fn parse(s: &str) -> Option<AckMode> {
        [AckMode::Individual, AckMode::Cumulative, AckMode::Never, AckMode::Nack, AckMode::Retry]
            .into_iter()
            .find(|m| m.name() == s)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AckSpec {
    pub mode: AckMode,
    /// Processing time per message: the app handles one message at a time and acks at the end.
    pub process_ms: Millis,
    /// Nack a message the first N times this consumer sees it, then follow `mode`.
    pub nack_first: u32,
    /// Messages with one of these keys are always nacked (poison messages).
    pub nack_keys: Vec<String>,
    /// `reconsumeLater` delay for `retry`.
    pub retry_delay_ms: Millis,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadLetterSpec {
    pub max_redeliver_count: u32,
    pub dead_letter_topic: Option<String>,
    pub retry_letter_topic: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerSpec {
    pub name: String,
    pub topic: String,
    pub subscription: String,
    pub kind: ConsumerKind,
    pub initial_position: InitialPosition,
    pub priority_level: i32,
    pub receiver_queue_size: u32,
    pub ack: AckSpec,
    pub ack_group_time_ms: Millis,
    pub ack_timeout_ms: Millis,
    pub nack_delay_ms: Millis,
    pub dead_letter: Option<DeadLetterSpec>,
    pub enable_retry: bool,
    pub latency_ms: Option<Millis>,
}

impl ConsumerSpec {
    /// The subscription type the consumer connects with (STREAM is Exclusive per segment, QUEUE Shared).
    pub fn subscription_type(&self) -> SubscriptionType {
        match &self.kind {
            ConsumerKind::Subscription { subscription_type, .. } => *subscription_type,
            ConsumerKind::Scalable(ScalableConsumerType::Stream) => SubscriptionType::Exclusive,
            ConsumerKind::Scalable(ScalableConsumerType::Queue) => SubscriptionType::Shared,
        }
    }

    pub fn key_shared(&self) -> Option<&KeySharedSpec> {
        match &self.kind {
            ConsumerKind::Subscription { key_shared, .. } => key_shared.as_ref(),
            ConsumerKind::Scalable(_) => None,
        }
    }

    pub fn scalable_type(&self) -> Option<ScalableConsumerType> {
        match self.kind {
            ConsumerKind::Scalable(t) => Some(t),
            ConsumerKind::Subscription { .. } => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A new consumer, started at once.
    AddConsumer {
        consumer: ConsumerSpec,
    },
    /// (Re)start a consumer that has not started, was closed or crashed.
    StartConsumer {
        consumer: String,
    },
    /// `close()`: pending acks are flushed, the broker returns unacked messages for redelivery.
    CloseConsumer {
        consumer: String,
    },
    /// The process dies: grouped acks not yet sent are lost; the connection drops.
    CrashConsumer {
        consumer: String,
    },
    /// Change what the application does with the messages it receives from now on.
    SetAck {
        consumer: String,
        ack: AckSpec,
    },
    /// `redeliverUnacknowledgedMessages()`.
    RedeliverUnacknowledged {
        consumer: String,
    },
    /// A new send script for an existing producer, starting at the action's time.
    Produce {
        producer: String,
        send: SendSpec,
    },
    SplitSegment {
        topic: String,
        segment: u64,
    },
    MergeSegments {
        topic: String,
        segments: (u64, u64),
    },
    PruneSegment {
        topic: String,
        segment: u64,
    },
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::AddConsumer { .. } => "addConsumer",
            Action::StartConsumer { .. } => "startConsumer",
            Action::CloseConsumer { .. } => "closeConsumer",
            Action::CrashConsumer { .. } => "crashConsumer",
            Action::SetAck { .. } => "setAck",
            Action::RedeliverUnacknowledged { .. } => "redeliverUnacknowledged",
            Action::Produce { .. } => "produce",
            Action::SplitSegment { .. } => "splitSegment",
            Action::MergeSegments { .. } => "mergeSegments",
            Action::PruneSegment { .. } => "pruneSegment",
        }
    }

    pub const NAMES: &'static [&'static str] = &[
        "addConsumer",
        "startConsumer",
        "closeConsumer",
        "crashConsumer",
        "setAck",
        "redeliverUnacknowledged",
        "produce",
        "splitSegment",
        "mergeSegments",
        "pruneSegment",
    ];
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimedAction {
    pub at: Millis,
    pub action: Action,
}
