//! Value types shared by every part of the RocketMQ model.

use std::fmt;
use std::sync::Arc;

/// `org.apache.rocketmq.common.message.MessageQueue`: shared names, so the copies that every
/// pull, reply and record carries cost a reference count, not two allocations. Ordered by topic, then broker name
/// (Java `String.compareTo`, i.e. UTF-16 code units), then queue id, exactly as `compareTo`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MessageQueue {
    pub topic: Arc<str>,
    pub broker: Arc<str>,
    pub queue_id: u32,
}

impl MessageQueue {
    pub fn new(topic: impl Into<Arc<str>>, broker: impl Into<Arc<str>>, queue_id: u32) -> Self {
        MessageQueue { topic: topic.into(), broker: broker.into(), queue_id }
    }

    /// `"brokerName:queueId"`, the form used by reports and conformance vectors.
    pub fn short(&self) -> String {
        format!("{}:{}", self.broker, self.queue_id)
    }

    /// Java `MessageQueue.toString()`, hashed by the consistent-hash strategy.
    pub fn java_to_string(&self) -> String {
        format!("MessageQueue [topic={}, brokerName={}, queueId={}]", self.topic, self.broker, self.queue_id)
    }
}

impl Ord for MessageQueue {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Queues built from one route share their names: a pointer check spares the string
        // comparison in the map lookups of every pull and reply.
        let names = |a: &Arc<str>, b: &Arc<str>| if Arc::ptr_eq(a, b) { std::cmp::Ordering::Equal } else { java_str_cmp(a, b) };
        names(&self.topic, &other.topic)
            .then_with(|| names(&self.broker, &other.broker))
            .then_with(|| self.queue_id.cmp(&other.queue_id))
    }
}

impl PartialOrd for MessageQueue {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for MessageQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.topic, self.broker, self.queue_id)
    }
}

/// Java `String.compareTo`: lexicographic over UTF-16 code units. Differs from Rust's byte order
/// only for characters outside the BMP against U+E000..U+FFFF, but the simulator must match Java.
pub fn java_str_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `MessageModel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MessageModel {
    Clustering,
    Broadcasting,
}

impl MessageModel {
    pub fn name(self) -> &'static str {
        match self {
            MessageModel::Clustering => "CLUSTERING",
            MessageModel::Broadcasting => "BROADCASTING",
        }
    }
}

/// `ConsumeFromWhere` (the three non-deprecated values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsumeFromWhere {
    LastOffset,
    FirstOffset,
    Timestamp,
}

impl ConsumeFromWhere {
    pub fn name(self) -> &'static str {
        match self {
            ConsumeFromWhere::LastOffset => "CONSUME_FROM_LAST_OFFSET",
            ConsumeFromWhere::FirstOffset => "CONSUME_FROM_FIRST_OFFSET",
            ConsumeFromWhere::Timestamp => "CONSUME_FROM_TIMESTAMP",
        }
    }
}

pub const SUB_ALL: &str = "*";

pub fn retry_topic(group: &str) -> String {
    format!("%RETRY%{group}")
}

pub fn dlq_topic(group: &str) -> String {
    format!("%DLQ%{group}")
}

pub fn is_retry_topic(topic: &str) -> bool {
    topic.starts_with("%RETRY%")
}
