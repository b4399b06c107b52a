//! One broker: topic configs, storage, the consumer registry, offsets, held pulls and locks.

use mqviz_engine::vec_map::VecMap;

use super::bloom::BitsArray;
use super::events::{MsgId, Name};
use super::filter_manager::{ConsumerFilterManager, FilterManagerConfig, RegisterCost};
use super::group_info::ConsumerGroupInfo;
use super::identity::{Incarnation, LockGrantId, ProcessQueueId, PullRequestId};
use super::sql92::Expression;
use super::store::ConsumeQueue;
use super::types::MessageQueue;
use crate::world::OffsetWriter;
use mqviz_engine::Millis;

/// A pull request as the broker sees it, with the identity its response will carry back.
#[derive(Clone, Debug)]
pub struct PullRequest {
    pub id: PullRequestId,
    pub consumer: usize,
    pub incarnation: Incarnation,
    pub pq: ProcessQueueId,
    pub mq: MessageQueue,
    pub offset: u64,
    pub sub_version: u64,
    pub commit_offset: Option<u64>,
}

/// The filter a held request was built with (`ExpressionMessageFilter`, captured when the request
/// was parked): an arriving message wakes the request only if it passes.
#[derive(Clone, Debug)]
pub enum HeldFilter {
    /// TAG with `"*"`, or nothing to check.
    All,
    /// TAG: the group's table entry's hash codes.
    Tags(Vec<i32>),
    Sql(SqlFilter),
}

/// A SQL92 filter as the broker runs it: the registered filter data's compiled expression and,
/// with bitmaps on, the bloom pre-check.
#[derive(Clone, Debug)]
pub struct SqlFilter {
    pub expression: Expression,
    pub bloom: Option<BloomCheck>,
}

/// `isMatchedByConsumeQueue`'s bitmap pre-check: the group's bloom bit positions, and the filter
/// data's born time (only messages stored strictly later are checked).
#[derive(Clone, Debug)]
pub struct BloomCheck {
    pub bit_pos: Vec<i32>,
    pub born_time: u64,
}

/// A long-polling request parked by `PullRequestHoldService`.
#[derive(Clone, Debug)]
pub struct HeldPull {
    pub request: PullRequest,
    pub suspended_at: Millis,
    pub filter: HeldFilter,
}

/// An orderly lock as `RebalanceLockManager` keeps it: by clientId, renewed by the holder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerLock {
    pub client_id: Name,
    pub last_locked: Millis,
    /// Which grant this is: a renewal keeps it, a new holder (or a lock after expiry) gets a new one.
    pub grant: LockGrantId,
}

#[derive(Clone, Debug)]
pub struct Broker {
    pub name: Name,
    pub enable_property_filter: bool,
    /// topic -> (readQueueNums, writeQueueNums)
    pub topics: VecMap<String, (u32, u32)>,
    /// topic -> consume queues by queue id
    pub cqs: VecMap<String, Vec<ConsumeQueue>>,
    pub groups: VecMap<String, ConsumerGroupInfo>,
    /// (group, topic) -> the client whose heartbeat wrote the current table entry.
    pub table_writer: VecMap<(String, String), Name>,
    /// (topic, group, queueId) -> committed offset (`ConsumerOffsetManager`).
    pub offsets: CommittedOffsets,
    pub held: Vec<HeldPull>,
    /// (group, queue) -> the orderly lock.
    pub locks: VecMap<(String, MessageQueue), BrokerLock>,
    pub enable_calc_filter_bitmap: bool,
    /// The SQL92 filter registry, fed by every heartbeat (REGISTER event).
    pub filter_manager: ConsumerFilterManager,
    /// Per-message bloom bitmaps (the consume-queue extension), only with `enableCalcFilterBitMap`.
    pub bitmaps: VecMap<MsgId, BitsArray>,
    /// What each heartbeat's `register` cost: the data behind the heartbeat-cost plot.
    pub filter_costs: Vec<FilterCostSample>,
}

#[derive(Clone, Debug)]
pub struct FilterCostSample {
    pub at: Millis,
    pub group: Name,
    pub cost: RegisterCost,
}

impl Broker {
    pub fn new(spec: &crate::scenario::BrokerSpec) -> Self {
        let config = FilterManagerConfig {
            design: spec.filter_index,
            enable_calc_filter_bitmap: spec.enable_calc_filter_bitmap,
            sql92_version: spec.sql92_version,
            ..FilterManagerConfig::default()
        };
        let (name, enable_property_filter) = (spec.name.as_str(), spec.enable_property_filter);
        Broker {
            name: name.into(),
            enable_property_filter,
            topics: VecMap::new(),
            cqs: VecMap::new(),
            groups: VecMap::new(),
            table_writer: VecMap::new(),
            offsets: CommittedOffsets::default(),
            held: Vec::new(),
            locks: VecMap::new(),
            enable_calc_filter_bitmap: spec.enable_calc_filter_bitmap,
            filter_manager: ConsumerFilterManager::new(config).expect("default bloom parameters are valid"),
            bitmaps: VecMap::new(),
            filter_costs: Vec::new(),
        }
    }

    pub fn ensure_topic(&mut self, topic: &str, queues: u32) {
        self.topics.entry(topic.to_string()).or_insert((queues, queues));
        let cqs = self.cqs.entry(topic.to_string()).or_default();
        while cqs.len() < queues as usize {
            cqs.push(ConsumeQueue::default());
        }
    }

    pub fn set_queue_count(&mut self, topic: &str, queues: u32) {
        self.topics.insert(topic.to_string(), (queues, queues));
        let cqs = self.cqs.entry(topic.to_string()).or_default();
        // Shrinking keeps the data: queues beyond the count are simply no longer routed.
        while cqs.len() < queues as usize {
            cqs.push(ConsumeQueue::default());
        }
    }

    pub fn cq(&self, topic: &str, queue_id: u32) -> Option<&ConsumeQueue> {
        self.cqs.get(topic).and_then(|v| v.get(queue_id as usize))
    }

    pub fn max_offset(&self, topic: &str, queue_id: u32) -> u64 {
        self.cq(topic, queue_id).map(|c| c.max_offset()).unwrap_or(0)
    }

    /// Appends `msg` to its consume queue: its offset, and the queue's partition id if it has one.
    pub fn append(&mut self, topic: &str, queue_id: u32, msg: MsgId) -> (u64, Option<u32>) {
        // One lookup per store; the key is allocated only for a topic's first message.
        if let Some(cqs) = self.cqs.get_mut(topic) {
            return append_to(cqs, queue_id, msg);
        }
        append_to(self.cqs.entry(topic.to_string()).or_default(), queue_id, msg)
    }

    pub fn committed(&self, topic: &str, group: &str, queue_id: u32) -> Option<u64> {
        self.offsets.get(topic, group, queue_id)
    }
}

fn append_to(cqs: &mut Vec<ConsumeQueue>, queue_id: u32, msg: MsgId) -> (u64, Option<u32>) {
    while cqs.len() <= queue_id as usize {
        cqs.push(ConsumeQueue::default());
    }
    let cq = &mut cqs[queue_id as usize];
    cq.entries.push(super::store::CqEntry { msg });
    (cq.max_offset() - 1, cq.pid)
}

/// Committed offsets by topic, group and queue id, each with who wrote it (the broker does not
/// care; reports and invariants do). Nested maps rather than one keyed by a tuple of `String`s:
/// a pull commits, and looking up by `&str` needs no allocation.
#[derive(Clone, Debug, Default)]
pub struct CommittedOffsets {
    by_topic: VecMap<String, VecMap<String, QueueOffsets>>,
}

/// One group's committed offsets on one topic, by queue id.
type QueueOffsets = VecMap<u32, (u64, Option<OffsetWriter>)>;

impl CommittedOffsets {
    pub fn get(&self, topic: &str, group: &str, queue_id: u32) -> Option<u64> {
        self.by_topic.get(topic)?.get(group)?.get(&queue_id).map(|&(o, _)| o)
    }

    /// Sets the offset (it may go back) and returns the previous one with its writer.
    pub fn insert(
        &mut self,
        topic: &str,
        group: &str,
        queue_id: u32,
        offset: u64,
        writer: OffsetWriter,
    ) -> Option<(u64, Option<OffsetWriter>)> {
        self.set(topic, group, queue_id, offset, Some(writer))
    }

    /// A snapshot's committed offset: on the broker at t=0, written by nobody in this run.
    pub fn restore(&mut self, topic: &str, group: &str, queue_id: u32, offset: u64) {
        self.set(topic, group, queue_id, offset, None);
    }

    fn set(
        &mut self,
        topic: &str,
        group: &str,
        queue_id: u32,
        offset: u64,
        writer: Option<OffsetWriter>,
    ) -> Option<(u64, Option<OffsetWriter>)> {
        // Keys are allocated only for a (topic, group)'s first commit, not on every pull.
        if let Some(queues) = self.by_topic.get_mut(topic).and_then(|groups| groups.get_mut(group)) {
            return queues.insert(queue_id, (offset, writer));
        }
        let groups = self.by_topic.entry(topic.to_string()).or_default();
        groups.entry(group.to_string()).or_default().insert(queue_id, (offset, writer))
    }

    /// Every committed offset in (topic, group, queue id) order.
    pub fn iter(&self) -> impl Iterator<Item = ((&str, &str, u32), u64)> + '_ {
        self.by_topic.iter().flat_map(|(t, groups)| {
            groups.iter().flat_map(move |(g, queues)| queues.iter().map(move |(&q, &(o, _))| ((t.as_str(), g.as_str(), q), o)))
        })
    }
}
