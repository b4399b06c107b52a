//! Broker storage: messages (the CommitLog's content) and ConsumeQueues of 20-byte entries.

use std::collections::BTreeMap;

use super::events::{MsgId, Name};

/// One stored message. Retry and DLQ copies are new messages that point at their origin.
#[derive(Clone, Debug)]
pub struct Message {
    pub id: MsgId,
    pub topic: Name,
    pub tag: Option<Name>,
    /// The tag's colour key (`sim::model::NO_KEY` without a tag).
    pub key: u32,
    /// `tags.hashCode()` sign-extended; 0 without tags.
    pub tags_code: i64,
    pub keys: Option<String>,
    pub properties: BTreeMap<String, String>,
    pub body: Body,
    pub producer: Name,
    pub born_at: u64,
    /// When the broker stored it (`storeTimestamp`); 0 until then.
    pub stored_at: u64,
    /// Where it was stored: broker index, queue id, queue offset (set at store time).
    pub broker: usize,
    pub queue_id: u32,
    pub queue_offset: u64,
    /// The neutral partition id of its queue (set at store time).
    pub pid: u32,
    pub reconsume_times: u32,
    /// For retry/DLQ copies: the message first produced.
    pub origin: Option<MsgId>,
}

impl Message {
    pub fn root(&self) -> MsgId {
        self.origin.unwrap_or(self.id)
    }

    /// `UNIQ_KEY`, which the Java producer sets on every message (`MessageClientIDSetter`): 32 hex
    /// digits of ip (4 bytes), pid (2), class-loader hash (4), time (4) and a counter (2). Made
    /// deterministic here: 127.0.0.1, the producer name's hash as pid, the born time and the
    /// message number. Retry copies keep their origin's key, as they keep its properties.
    pub fn uniq_key(&self) -> String {
        let pid = crate::sim::hash::java_string_hash(&self.producer) as u16;
        format!("7F000001{pid:04X}00000000{:08X}{:04X}", self.born_at as u32, self.root() as u16)
    }
}

/// A message body: the send script's template and the message's index, rendered on demand so
/// a million-message run does not allocate a million strings.
#[derive(Clone, Debug)]
pub struct Body {
    pub template: Name,
    pub i: u32,
}

impl Body {
    /// The text, with `{i}` replaced by the index.
    pub fn text(&self) -> String {
        if self.template.contains("{i}") {
            self.template.replace("{i}", &self.i.to_string())
        } else {
            self.template.to_string()
        }
    }
}

/// A ConsumeQueue entry: the message and its tags hash code.
#[derive(Clone, Copy, Debug)]
pub struct CqEntry {
    pub msg: MsgId,
    pub tags_code: i64,
}

#[derive(Clone, Debug, Default)]
pub struct ConsumeQueue {
    pub entries: Vec<CqEntry>,
    /// The queue's neutral partition id (`sim::model::PartitionId`), given by the World.
    pub pid: Option<u32>,
}

impl ConsumeQueue {
    /// Next offset to be written.
    pub fn max_offset(&self) -> u64 {
        self.entries.len() as u64
    }
}
