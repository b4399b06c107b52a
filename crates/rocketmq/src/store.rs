//! Broker storage: messages (the CommitLog's content) and ConsumeQueues.
//!
//! Layout, because a long run holds millions of both: a message is a shared `Shape` per send
//! script plus at most 48 bytes of narrow per-message fields behind accessors (asserted below,
//! with the scenario limits that let the fields be narrow); a ConsumeQueue entry is 4 bytes, the
//! message id (upstream's entry is 20 bytes: offset, size, tags code; here the tags code is the
//! message's own), and each queue carries its neutral partition id.

use mqviz_engine::vec_map::VecMap;
use std::sync::Arc;

use super::events::{MsgId, Name};

/// What the messages of one send script share: topic, tag, keys and body templates, properties,
/// producer. A message points at its shape instead of carrying copies (a million-message run
/// keeps a handful of shapes); retry and DLQ copies get a shape of their own.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub topic: Name,
    pub tag: Option<Name>,
    /// The tag's colour key (`mqviz_model::NO_KEY` without a tag).
    pub key: u32,
    /// `tags.hashCode()` sign-extended; 0 without tags.
    pub tags_code: i64,
    /// The KEYS template (`{i}` is the message's index).
    pub keys: Option<Name>,
    pub properties: VecMap<String, String>,
    /// The body template (`{i}` is the message's index).
    pub body: Name,
    pub producer: Name,
}

/// One stored message. Retry and DLQ copies are new messages that point at their origin.
///
/// Narrow fields behind accessors keep it at 48 bytes (asserted below): a run holds one per message.
#[derive(Clone, Debug)]
pub struct Message {
    pub id: MsgId,
    pub shape: Arc<Shape>,
    pub born_at: u64,
    /// When the broker stored it (`storeTimestamp`); 0 until then.
    pub stored_at: u64,
    /// The index within its send script (`{i}` in body and keys) in the low 24 bits, and
    /// `reconsumeTimes` (at most `MAX_RECONSUME_TIMES` + 1) in the high 8.
    index_and_retries: u32,
    /// Where it was stored (set at store time): queue offset, queue id and broker index.
    queue_offset: u32,
    /// The neutral partition id of its queue (set at store time).
    pub pid: u32,
    /// For retry/DLQ copies: the message first produced, plus one (0: this is the original).
    origin: u32,
    queue_id: u16,
    broker: u16,
}

/// `Message::index_and_retries`: the send index's bits.
const INDEX_BITS: u32 = 24;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
const _: () = assert!(mqviz_engine::scenario::MAX_MESSAGES_PER_SEND <= 1 << INDEX_BITS);

impl Message {
    /// A message as the producer sends it: not stored yet, no retries, no origin.
    pub fn new(id: MsgId, shape: Arc<Shape>, i: u32, born_at: u64, broker: usize, queue_id: u32) -> Message {
        Message {
            id,
            shape,
            born_at,
            stored_at: 0,
            index_and_retries: i & INDEX_MASK,
            queue_offset: 0,
            pid: u32::MAX,
            origin: 0,
            queue_id: queue_id as u16,
            broker: broker as u16,
        }
    }

    /// The retry or DLQ copy `id` of this message, to be stored on broker `b` under `shape`.
    pub fn copy(&self, id: MsgId, shape: Arc<Shape>, broker: usize, reconsume_times: u8) -> Message {
        Message {
            id,
            shape,
            broker: broker as u16,
            queue_id: 0,
            queue_offset: 0,
            pid: u32::MAX,
            stored_at: 0,
            origin: self.root() + 1,
            index_and_retries: self.index() | u32::from(reconsume_times) << INDEX_BITS,
            ..*self
        }
    }

    /// The index within its send script (`{i}` in body and keys).
    fn index(&self) -> u32 {
        self.index_and_retries & INDEX_MASK
    }

    /// `reconsumeTimes` as stored with this copy.
    pub fn reconsume_times(&self) -> u8 {
        (self.index_and_retries >> INDEX_BITS) as u8
    }

    pub fn queue_id(&self) -> u32 {
        u32::from(self.queue_id)
    }

    /// Queue offsets count the messages of one queue, so they fit the `MsgId` range.
    pub fn queue_offset(&self) -> u64 {
        u64::from(self.queue_offset)
    }

    /// Where the broker put it: `msgCheck` may send it to another queue first.
    pub fn set_queue_id(&mut self, queue_id: u32) {
        self.queue_id = queue_id as u16;
    }

    pub fn set_broker(&mut self, broker: usize) {
        self.broker = broker as u16;
    }

    pub fn set_queue_offset(&mut self, offset: u64) {
        self.queue_offset = offset as u32;
    }

    /// For retry/DLQ copies: the message first produced.
    pub fn origin(&self) -> Option<MsgId> {
        self.origin.checked_sub(1)
    }

    pub fn broker(&self) -> usize {
        usize::from(self.broker)
    }

    pub fn root(&self) -> MsgId {
        self.origin().unwrap_or(self.id)
    }

    pub fn topic(&self) -> &Name {
        &self.shape.topic
    }

    pub fn tag(&self) -> &Option<Name> {
        &self.shape.tag
    }

    pub fn key(&self) -> u32 {
        self.shape.key
    }

    pub fn tags_code(&self) -> i64 {
        self.shape.tags_code
    }

    pub fn keys(&self) -> Option<String> {
        self.shape.keys.as_ref().map(|k| with_index(k, self.index()))
    }

    pub fn properties(&self) -> &VecMap<String, String> {
        &self.shape.properties
    }

    pub fn body(&self) -> Body {
        Body { template: self.shape.body.clone(), i: self.index() }
    }

    pub fn producer(&self) -> &Name {
        &self.shape.producer
    }

    /// `UNIQ_KEY`, which the Java producer sets on every message (`MessageClientIDSetter`): 32 hex
    /// digits of ip (4 bytes), pid (2), class-loader hash (4), time (4) and a counter (2). Made
    /// deterministic here: 127.0.0.1, the producer name's hash as pid, the born time and the
    /// message number. Retry copies keep their origin's key, as they keep its properties.
    pub fn uniq_key(&self) -> String {
        let pid = mqviz_engine::hash::java_string_hash(self.producer()) as u16;
        format!("7F000001{pid:04X}00000000{:08X}{:04X}", self.born_at as u32, self.root() as u16)
    }
}

fn with_index(template: &str, i: u32) -> String {
    if template.contains("{i}") {
        template.replace("{i}", &i.to_string())
    } else {
        template.to_string()
    }
}

// Per-message records: a regression here multiplies by millions.
const _: () = assert!(std::mem::size_of::<Message>() <= 48);
// `Message::broker` and `queue_id` are u16: the scenario caps brokers and queues below that.
const _: () = assert!(mqviz_engine::scenario::MAX_ENTITIES <= u16::MAX as usize);
const _: () = assert!(super::scenario::MAX_QUEUES <= 1 << 16);
const _: () = assert!(std::mem::size_of::<CqEntry>() == 4);

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
        with_index(&self.template, self.i)
    }
}

/// A ConsumeQueue entry. The broker's entry also holds the tags hash code; here that is the
/// message's own (`Message::tags_code`, fixed at store time), so the entry is the message id alone.
#[derive(Clone, Copy, Debug)]
pub struct CqEntry {
    pub msg: MsgId,
}

#[derive(Clone, Debug, Default)]
pub struct ConsumeQueue {
    /// The entries from `base` on: `entries[i]` is at offset `base + i`.
    pub entries: Vec<CqEntry>,
    /// The min offset: 0, or where a snapshot's queue starts (the entries below it were deleted
    /// before t=0, so a pull there is OFFSET_TOO_SMALL).
    pub base: u64,
    /// The queue's neutral partition id (`mqviz_model::PartitionId`), given by the World.
    pub pid: Option<u32>,
}

impl ConsumeQueue {
    /// Next offset to be written.
    pub fn max_offset(&self) -> u64 {
        self.base + self.entries.len() as u64
    }

    /// The lowest offset still held.
    pub fn min_offset(&self) -> u64 {
        self.base
    }

    /// The entry at `offset`, if the queue holds it.
    pub fn entry(&self, offset: u64) -> Option<CqEntry> {
        let i = offset.checked_sub(self.base)?;
        self.entries.get(usize::try_from(i).ok()?).copied()
    }

    /// The first offset whose message satisfies `!before(msg)`, where `before` is true for a
    /// prefix of the queue (`partition_point`).
    pub fn first_offset_where_not(&self, before: impl Fn(MsgId) -> bool) -> u64 {
        self.base + self.entries.partition_point(|e| before(e.msg)) as u64
    }
}
