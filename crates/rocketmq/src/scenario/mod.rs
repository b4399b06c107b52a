//! The RocketMQ section of a scenario (`docs/scenario-format.md`): brokers, topics, producers,
//! groups and the timeline, read from the same JSON object as the shared envelope
//! (`mqviz_engine::scenario`).

mod parse;
pub use parse::{MAX_QUEUES, MAX_QUEUE_OFFSET};
mod load;
pub mod properties;
mod sql_use;
mod write;

use mqviz_engine::vec_map::VecMap;

pub use load::load_scenario;
pub use parse::{parse_action, parse_scenario, parse_scenario_value};
pub use sql_use::uses_sql92;
pub use write::{action_value, timed_action_value};

use crate::types::{ConsumeFromWhere, MessageModel};
use mqviz_engine::Millis;

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
    /// `memoryBudgetMb`: what the run may hold before it stops cleanly (`world::budget`); the
    /// default fits a browser tab.
    pub memory_budget_mb: Option<u64>,
}

impl Scenario {
    /// Whether `broker` hosts topic `t` (every broker does when the topic names none).
    pub fn hosts(&self, t: &TopicSpec, broker: &str) -> bool {
        if t.brokers.is_empty() {
            self.brokers.iter().any(|b| b.name == broker)
        } else {
            t.brokers.iter().any(|b| b == broker)
        }
    }

    /// A queue's content at t=0 as `(min, max)` offsets: the snapshot's `brokerOffsets` (else 0)
    /// and `minOffsets` (else the lowest offset any group committed there, else the max: only
    /// what some group has yet to read is held).
    pub fn snapshot_range(&self, mq: &crate::types::MessageQueue) -> (u64, u64) {
        let Some(t) = self.topics.iter().find(|t| *t.name == *mq.topic) else { return (0, 0) };
        let at = |offsets: &VecMap<String, Vec<u64>>| offsets.get(&*mq.broker).and_then(|v| v.get(mq.queue_id as usize)).copied();
        let max = at(&t.broker_offsets).unwrap_or(0);
        let min = at(&t.min_offsets).unwrap_or_else(|| {
            self.groups.iter().flat_map(|g| &g.snapshot.committed).filter(|(q, _)| q == mq).map(|(_, o)| *o).min().unwrap_or(max)
        });
        (min.min(max), max)
    }

    /// How many messages the snapshot puts in the queues at t=0.
    pub fn snapshot_messages(&self) -> u64 {
        let mut n = 0;
        for t in &self.topics {
            for broker in t.broker_offsets.keys() {
                for q in 0..t.queues {
                    let (min, max) = self.snapshot_range(&crate::types::MessageQueue::new(t.name.as_str(), broker.as_str(), q));
                    n += max - min;
                }
            }
        }
        n
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BrokerSpec {
    pub name: String,
    pub enable_property_filter: bool,
    /// `enableCalcFilterBitMap` (with the consume-queue extension it needs): bloom bitmaps at dispatch.
    pub enable_calc_filter_bitmap: bool,
    /// The ConsumerFilterManager design: before or after apache/rocketmq PR #10714.
    pub filter_index: crate::filter_manager::IndexDesign,
    pub sql92_version: crate::sql92::Sql92Version,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TopicSpec {
    pub name: String,
    pub queues: u32,
    /// Brokers that host the topic; all brokers when the scenario does not say.
    pub brokers: Vec<String>,
    /// A snapshot's `brokerOffsets`: per hosting broker, each queue's max offset at t=0 (the
    /// `#Broker Offset` column of `mqadmin consumerProgress`). Empty: the queues start empty.
    pub broker_offsets: VecMap<String, Vec<u64>>,
    /// A snapshot's `minOffsets`, same shape; a queue without one starts at the lowest offset any
    /// group had committed on it, else at its max offset (only what some group still owes is held).
    pub min_offsets: VecMap<String, Vec<u64>>,
    /// A snapshot's `backlogTag`: the tag its messages carry (the captures give offsets, not
    /// contents); none when absent.
    pub backlog_tag: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StartIndex {
    Fixed(u32),
    Random,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProducerSpec {
    pub id: String,
    pub group: String,
    pub start_index: StartIndex,
    pub latency_ms: Option<Millis>,
    pub sends: Vec<SendSpec>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SendSpec {
    pub at: Millis,
    pub topic: String,
    pub tag: Option<String>,
    pub keys: Option<String>,
    pub properties: VecMap<String, String>,
    /// `{i}` is replaced by the message's index within this send script.
    pub body: String,
    pub count: u32,
    pub interval_ms: Millis,
    /// Explicit send times (absolute); when non-empty they replace `at`/`count`/`intervalMs`.
    pub times: Vec<Millis>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AllocationSpec {
    Avg,
    AvgByCircle,
    Config { queues: Vec<String> },
    MachineRoom { consumer_idcs: Vec<String> },
    MachineRoomNearby { inner: Box<AllocationSpec> },
    ConsistentHash { virtual_nodes: u32 },
}

impl AllocationSpec {
    pub fn name(&self) -> &'static str {
        match self {
            AllocationSpec::Avg => "AVG",
            AllocationSpec::AvgByCircle => "AVG_BY_CIRCLE",
            AllocationSpec::Config { .. } => "CONFIG",
            AllocationSpec::MachineRoom { .. } => "MACHINE_ROOM",
            AllocationSpec::MachineRoomNearby { .. } => "MACHINE_ROOM_NEARBY",
            AllocationSpec::ConsistentHash { .. } => "CONSISTENT_HASH",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct GroupSpec {
    pub name: String,
    pub message_model: MessageModel,
    pub allocation: AllocationSpec,
    pub consume_from_where: ConsumeFromWhere,
    /// `consumeTimestamp` for CONSUME_FROM_TIMESTAMP (logical ms); `None` = each consumer's start − 30 min.
    pub consume_timestamp: Option<Millis>,
    pub orderly: bool,
    pub consumers: Vec<ConsumerSpec>,
    /// Where the group stood at t=0, when the scenario starts from a snapshot.
    pub snapshot: GroupSnapshot,
}

/// A group's part of a snapshot (`docs/scenario-format.md`, "Snapshots (RocketMQ)").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupSnapshot {
    /// The broker's committed offset (`#Consumer Offset`) per queue.
    pub committed: Vec<(crate::types::MessageQueue, u64)>,
    /// Consumers (by name) that were running at t=0, with the queues their ProcessQueues held.
    /// They are restored instead of started: nothing rebalances until something changes.
    pub members: VecMap<String, Vec<crate::types::MessageQueue>>,
}

impl GroupSnapshot {
    pub fn is_empty(&self) -> bool {
        self.committed.is_empty() && self.members.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SubscriptionSpec {
    pub topic: String,
    pub expression: String,
    /// `None` = TAG; `Some("SQL92")` for SQL filters.
    pub expression_type: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ConsumeResultPolicy {
    Success,
    /// Every message returns RECONSUME_LATER until it has been re-consumed this many times.
    FailTimes(u32),
    AlwaysFail,
}

/// What the application does when `start()` throws (CHECK_CLIENT_CONFIG refused a subscription).
/// The check runs after the consumer is already RUNNING (spec §3), so the outcome is the
/// application's choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StartFailurePolicy {
    /// The application shuts the consumer down (also what clients since 5.3.2 do themselves).
    #[default]
    Shutdown,
    /// The application logs the exception and carries on: the consumer keeps heartbeating,
    /// rebalancing and pulling (4.9.x and 5.x before 5.3.2).
    Ignore,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerSpec {
    /// Unique in the scenario; timeline actions refer to the consumer by it. Defaults to the clientId.
    pub name: String,
    /// `ip@instanceName`: may repeat (containers sharing `IP@PID`, a fixed `instanceName`).
    pub client_id: String,
    pub subscriptions: Vec<SubscriptionSpec>,
    pub start_at: Option<Millis>,
    pub latency_ms: Option<Millis>,
    pub consume_time_ms: Millis,
    pub result: ConsumeResultPolicy,
    pub on_start_failure: StartFailurePolicy,
}

#[derive(Clone, Debug, PartialEq)]
/// Consumers are named by their scenario `name` (unique), not by their clientId (which may repeat).
pub enum Action {
    StartConsumer {
        consumer: String,
    },
    /// Graceful shutdown: persist offsets, unregister (CHANGE notify).
    StopConsumer {
        consumer: String,
    },
    /// Process dies: no unregister; the broker forgets the channel after 120 s without notifying.
    CrashConsumer {
        consumer: String,
    },
    AddConsumer {
        group: String,
        consumer: ConsumerSpec,
    },
    Subscribe {
        consumer: String,
        subscription: SubscriptionSpec,
    },
    Unsubscribe {
        consumer: String,
        topic: String,
    },
    SetQueueCount {
        topic: String,
        queues: u32,
    },
    SetAllocation {
        group: String,
        allocation: AllocationSpec,
    },
    /// A new send script for an existing producer, starting at the action's time.
    Produce {
        producer: String,
        send: SendSpec,
    },
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::StartConsumer { .. } => "startConsumer",
            Action::StopConsumer { .. } => "stopConsumer",
            Action::CrashConsumer { .. } => "crashConsumer",
            Action::AddConsumer { .. } => "addConsumer",
            Action::Subscribe { .. } => "subscribe",
            Action::Unsubscribe { .. } => "unsubscribe",
            Action::SetQueueCount { .. } => "setQueueCount",
            Action::SetAllocation { .. } => "setAllocation",
            Action::Produce { .. } => "produce",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimedAction {
    pub at: Millis,
    pub action: Action,
}
