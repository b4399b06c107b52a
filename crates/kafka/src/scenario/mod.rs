//! The Kafka section of a scenario (`docs/scenario-format.md`, "Kafka"): brokers, topics with
//! partitions, producers, consumer groups (classic or KIP-848) and the timeline, read from the same
//! JSON object as the shared envelope (`mqviz_engine::scenario`).
//!
//! Consumer settings are written once per group and may be overridden per consumer; a consumer's
//! overrides are kept apart from the group's values so that a consumer added later (a timeline
//! `addConsumer`) inherits the group's settings, and so that the writer gives back exactly what
//! was read.

mod config;
mod parse;
mod write;

pub use config::{ConfigOverrides, ConsumerConfig, ManualCommit};
pub use parse::{check_consumer_config, parse_action, parse_partition_ref, parse_scenario, parse_scenario_value, MAX_PARTITIONS};
pub use write::{action_value, timed_action_value};

use crate::assignor::ClientAssignor;
use crate::server_assignor::ServerAssignor;
use mqviz_engine::Millis;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub until: Millis,
    pub latency_ms: Millis,
    pub brokers: Vec<BrokerSpec>,
    pub topics: Vec<TopicSpec>,
    pub producers: Vec<ProducerSpec>,
    pub groups: Vec<GroupSpec>,
    pub timeline: Vec<TimedAction>,
    /// `memoryBudgetMb`: what the run may hold before it stops cleanly (`mqviz_engine::budget`).
    pub memory_budget_mb: Option<u64>,
}

impl Scenario {
    /// Each partition's log at t=0 as `(start, end)` offsets, per topic: the snapshot's
    /// `logEndOffsets` (else 0) and `logStartOffsets` (else the lowest offset any group committed
    /// there, else the end: only what some group has yet to read is kept).
    pub fn snapshot_logs(&self) -> Vec<Vec<(u64, u64)>> {
        self.topics
            .iter()
            .map(|t| {
                (0..t.partitions)
                    .map(|p| {
                        let end = t.log_end_offsets.get(p as usize).copied().unwrap_or(0);
                        let start = t.log_start_offsets.get(p as usize).copied().unwrap_or_else(|| {
                            let r = PartitionRef { topic: t.name.clone(), partition: p };
                            self.groups.iter().filter_map(|g| g.snapshot.committed.get(&r)).min().copied().unwrap_or(end)
                        });
                        (start.min(end), end)
                    })
                    .collect()
            })
            .collect()
    }

    /// Records the snapshot puts in the logs at t=0.
    pub fn snapshot_records(&self) -> u64 {
        self.snapshot_logs().iter().flatten().map(|(s, e)| e - s).sum()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BrokerSpec {
    pub name: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TopicSpec {
    pub name: String,
    pub partitions: u32,
    /// The leader of each partition by broker name; partition `p` is led by broker `p % n` when
    /// the scenario does not say.
    pub leaders: Vec<String>,
    /// A snapshot's `logEndOffsets`, one per partition (empty: every log starts empty).
    pub log_end_offsets: Vec<u64>,
    /// A snapshot's `logStartOffsets` (empty: each partition's lowest committed offset of any
    /// group, else its end). Records between the start and the end are in the log at t=0.
    pub log_start_offsets: Vec<u64>,
}

impl TopicSpec {
    /// A topic with empty logs.
    pub fn new(name: impl Into<String>, partitions: u32) -> TopicSpec {
        TopicSpec {
            name: name.into(),
            partitions,
            leaders: Vec::new(),
            log_end_offsets: Vec::new(),
            log_start_offsets: Vec::new(),
        }
    }

    pub fn has_snapshot(&self) -> bool {
        !self.log_end_offsets.is_empty() || !self.log_start_offsets.is_empty()
    }
}

/// `partitioner.class`: the built-in partitioner (keyed murmur2, else uniform sticky) or
/// `RoundRobinPartitioner`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionerSpec {
    BuiltIn,
    RoundRobin,
}

impl PartitionerSpec {
    pub fn name(self) -> &'static str {
        match self {
            PartitionerSpec::BuiltIn => "builtin",
            PartitionerSpec::RoundRobin => "roundRobin",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProducerSpec {
    pub id: String,
    pub partitioner: PartitionerSpec,
    /// `batch.size`: the uniform sticky partitioner moves on after this many bytes.
    pub batch_size: u32,
    /// `partitioner.ignore.keys`.
    pub ignore_keys: bool,
    pub latency_ms: Option<Millis>,
    pub sends: Vec<SendSpec>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SendSpec {
    pub at: Millis,
    pub topic: String,
    /// Key template (`{i}` is the record's index in this send script); `None` sends null keys.
    pub key: Option<String>,
    pub value: String,
    /// An explicit partition (`ProducerRecord(topic, partition, key, value)`).
    pub partition: Option<u32>,
    pub count: u32,
    pub interval_ms: Millis,
    /// Explicit send times (absolute); when non-empty they replace `at`/`count`/`intervalMs`.
    pub times: Vec<Millis>,
}

/// `group.protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupProtocol {
    /// JoinGroup/SyncGroup with client-side assignors.
    Classic,
    /// KIP-848: heartbeats carry the subscription, the coordinator assigns.
    Consumer,
}

impl GroupProtocol {
    pub fn name(self) -> &'static str {
        match self {
            GroupProtocol::Classic => "classic",
            GroupProtocol::Consumer => "consumer",
        }
    }

    pub fn from_name(name: &str) -> Option<GroupProtocol> {
        [GroupProtocol::Classic, GroupProtocol::Consumer].into_iter().find(|p| p.name() == name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PartitionRef {
    pub topic: String,
    pub partition: u32,
}

impl std::fmt::Display for PartitionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// How a consumer gets its partitions; the three are mutually exclusive in Kafka.
#[derive(Clone, Debug, PartialEq)]
pub enum SubscriptionSpec {
    /// `subscribe(topics)`.
    Topics(Vec<String>),
    /// `subscribe(Pattern)`: a Java-style regular expression matched against whole topic names.
    Pattern(String),
    /// `assign(partitions)`: no group membership, commits only while the group is empty.
    Assign(Vec<PartitionRef>),
}

impl SubscriptionSpec {
    pub fn describe(&self) -> String {
        match self {
            SubscriptionSpec::Topics(t) => format!("subscribe({})", t.join(", ")),
            SubscriptionSpec::Pattern(p) => format!("subscribe(/{p}/)"),
            SubscriptionSpec::Assign(ps) => {
                format!("assign({})", ps.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct GroupSpec {
    pub name: String,
    pub protocol: GroupProtocol,
    /// The coordinator's `group.initial.rebalance.delay.ms` for this group (classic protocol).
    pub initial_rebalance_delay_ms: Millis,
    /// The group's consumer settings (Kafka defaults where the scenario says nothing).
    pub config: ConsumerConfig,
    pub consumers: Vec<ConsumerSpec>,
    /// Where the group stands at t=0 (`docs/scenario-format.md`, "Snapshots").
    pub snapshot: GroupSnapshot,
}

/// A group as an admin tool saw it: committed offsets and, when its members are given with
/// their partitions, a Stable generation that the run continues instead of rebalancing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupSnapshot {
    /// `committed`: offsets on the coordinator at t=0.
    pub committed: BTreeMap<PartitionRef, u64>,
    /// `generation` of the Stable group (classic protocol); default 1 when members are given.
    pub generation: Option<i32>,
    /// `leader`: the member (by consumer name) that assigned; default the first in the
    /// coordinator's member order.
    pub leader: Option<String>,
    /// The consumers given `assigned` (by name, in scenario order): the Stable generation's
    /// members, running from t=0.
    pub members: Vec<(String, MemberSnapshot)>,
}

/// A member of a snapshot's Stable group: the partitions it owns at t=0.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberSnapshot {
    /// `memberId` as the coordinator knows it (default: a fresh `clientId-UUID`).
    pub member_id: Option<String>,
    pub assigned: Vec<PartitionRef>,
    /// KIP-848 only: `memberEpoch`, the member's own epoch (default the group epoch). Below the
    /// group epoch, the member is still reconciling toward its target.
    pub member_epoch: Option<i32>,
    /// KIP-848 only: `target`, the partitions the target assignment gives it (default `assigned`).
    pub target: Option<Vec<PartitionRef>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerSpec {
    /// Unique in the scenario: the timeline, the log and the report name the consumer by it.
    /// Defaults to the clientId.
    pub name: String,
    /// `client.id`: only a label in Kafka, so several consumers may share it. It prefixes the
    /// member id a classic coordinator gives (`clientId-UUID`).
    pub client_id: String,
    /// `group.instance.id` (static membership, KIP-345).
    pub instance_id: Option<String>,
    pub subscription: Option<SubscriptionSpec>,
    /// Settings that differ from the group's.
    pub overrides: ConfigOverrides,
    pub start_at: Option<Millis>,
    pub latency_ms: Option<Millis>,
}

/// Where `seek` moves a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeekTarget {
    Offset(u64),
    /// `seekToBeginning`: AWAIT_RESET with EARLIEST.
    Beginning,
    /// `seekToEnd`: AWAIT_RESET with LATEST.
    End,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    StartConsumer {
        consumer: String,
    },
    /// `close()`: commit (auto-commit), revoke, leave the group (dynamic members only).
    StopConsumer {
        consumer: String,
    },
    /// The process dies: nothing is committed or sent; the coordinator notices at session timeout.
    CrashConsumer {
        consumer: String,
    },
    AddConsumer {
        group: String,
        consumer: ConsumerSpec,
    },
    /// `subscribe(topics)`, `subscribe(pattern)` or `assign(partitions)` on a running consumer.
    Subscribe {
        consumer: String,
        subscription: SubscriptionSpec,
    },
    Unsubscribe {
        consumer: String,
    },
    /// `partition.assignment.strategy` of every member of a classic group (as if each were
    /// reconfigured and rejoined).
    SetAssignors {
        group: String,
        assignors: Vec<ClientAssignor>,
    },
    /// `group.remote.assignor` of every member of a KIP-848 group.
    SetRemoteAssignor {
        group: String,
        assignor: ServerAssignor,
    },
    /// `group.protocol` of every member: each is closed and started again under the new protocol.
    SetProtocol {
        group: String,
        protocol: GroupProtocol,
    },
    Pause {
        consumer: String,
        partitions: Vec<PartitionRef>,
    },
    Resume {
        consumer: String,
        partitions: Vec<PartitionRef>,
    },
    Seek {
        consumer: String,
        partition: PartitionRef,
        to: SeekTarget,
    },
    /// A new send script for an existing producer, starting at the action's time.
    Produce {
        producer: String,
        send: SendSpec,
    },
    /// A clean leader election: the partition's leader epoch goes up by one, nothing is lost.
    LeaderChange {
        partition: PartitionRef,
        leader: Option<String>,
    },
    /// An unclean leader election: a replica that was behind becomes leader with a new epoch and
    /// the log is cut back to `offset` (records at and above it are gone).
    Truncate {
        partition: PartitionRef,
        offset: u64,
        leader: Option<String>,
    },
    /// More partitions for an existing topic (partition counts only grow).
    AddPartitions {
        topic: String,
        partitions: u32,
    },
    CreateTopic {
        topic: TopicSpec,
    },
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::StartConsumer { .. } => "startConsumer",
            Action::StopConsumer { .. } => "stopConsumer",
            Action::CrashConsumer { .. } => "crashConsumer",
            Action::AddConsumer { .. } => "addConsumer",
            Action::Subscribe { subscription: SubscriptionSpec::Topics(_), .. } => "subscribe",
            Action::Subscribe { subscription: SubscriptionSpec::Pattern(_), .. } => "subscribePattern",
            Action::Subscribe { subscription: SubscriptionSpec::Assign(_), .. } => "assign",
            Action::Unsubscribe { .. } => "unsubscribe",
            Action::SetAssignors { .. } => "setAssignors",
            Action::SetRemoteAssignor { .. } => "setRemoteAssignor",
            Action::SetProtocol { .. } => "setProtocol",
            Action::Pause { .. } => "pause",
            Action::Resume { .. } => "resume",
            Action::Seek { .. } => "seek",
            Action::Produce { .. } => "produce",
            Action::LeaderChange { .. } => "leaderChange",
            Action::Truncate { .. } => "truncate",
            Action::AddPartitions { .. } => "addPartitions",
            Action::CreateTopic { .. } => "createTopic",
        }
    }

    /// The consumer a command is about, if any.
    pub fn consumer_name(&self) -> Option<&str> {
        match self {
            Action::StartConsumer { consumer }
            | Action::StopConsumer { consumer }
            | Action::CrashConsumer { consumer }
            | Action::Subscribe { consumer, .. }
            | Action::Unsubscribe { consumer }
            | Action::Pause { consumer, .. }
            | Action::Resume { consumer, .. }
            | Action::Seek { consumer, .. } => Some(consumer),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimedAction {
    pub at: Millis,
    pub action: Action,
}

/// The names of all timeline actions, for error messages.
pub const ACTION_NAMES: &str = "startConsumer, stopConsumer, crashConsumer, addConsumer, subscribe, subscribePattern, assign, \
unsubscribe, setAssignors, setRemoteAssignor, setProtocol, pause, resume, seek, produce, leaderChange, truncate, addPartitions \
or createTopic";

/// The default `partition.assignment.strategy`: `[RangeAssignor, CooperativeStickyAssignor]`,
/// which makes the default rebalance protocol EAGER (spec §8 item 1).
pub fn default_assignors() -> Vec<ClientAssignor> {
    vec![ClientAssignor::Range, ClientAssignor::CooperativeSticky]
}

/// Why a partition number is refused: `partition t-2 is beyond the topic (t has 2 partitions, 0 to 1)`.
/// ("0..2" read as if partition 2 existed.)
pub fn beyond_the_topic(partition: impl std::fmt::Display, topic: &str, count: u32) -> String {
    let has = match count {
        0 => "no partitions".to_string(),
        1 => "1 partition, 0".to_string(),
        n => format!("{n} partitions, 0 to {}", n - 1),
    };
    format!("partition {partition} is beyond the topic ({topic} has {has})")
}
