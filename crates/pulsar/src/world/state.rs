//! The plain data the Pulsar world is made of: stored messages and entries, the broker's topics
//! (partitions, segments, dead-letter topics) with their subscriptions, producers and client
//! consumers. Behaviour lives in the sibling files, one concern each.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use super::keys::{KeyId, KeyTable};
use crate::cursor::{AckTimeoutTracker, DeadLetterPolicy, ManagedCursor, NegativeAcksTracker, RedeliveryCounts};
use crate::events::{MsgId, Name};
use crate::failover::SingleActiveDispatcher;
use crate::key_shared::{HoldReason, KeySharedDispatcher};
use crate::message_id::MessageId;
use crate::routing::PartitionRouter;
use crate::scalable::{ScalableTopicName, SegmentLayout, SegmentRouter, SubscriptionCoordinator};
use crate::scenario::{AckSpec, ConsumerSpec, ProducerSpec, SendSpec, Template};
use crate::shared_subscription::SharedSubscription;
use crate::subscription::{KeySharedPolicy, SubscriptionType};
use mqviz_engine::{EventId, IdMap, Millis};

/// A message body: the send script it came from (producer and script index) and the message's
/// index in the script; the text is expanded from the script's template only when shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Body {
    pub producer: u32,
    pub script: u32,
    pub index: u32,
}

/// What a dead-letter or retry copy remembers of its original.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyOf {
    pub origin: MsgId,
    pub retry: bool,
    /// RECONSUMETIMES of a retry copy.
    pub reconsume_times: u32,
    pub real_topic: Name,
    pub origin_id: MessageId,
    /// The consumer whose client published the copy.
    pub by: Name,
}

/// A message on its way to a topic (in a batch container or on the wire).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// Keys live in `World::keys`.
    pub key: Option<KeyId>,
    pub ordering_key: Option<KeyId>,
    pub body: Body,
    /// Index into `World::producers`, or `NO_PRODUCER` for a client's dead-letter/retry copy.
    pub producer: u32,
    pub born_at: Millis,
    pub copy: Option<Box<CopyOf>>,
    /// Delayed delivery (retry copies): not dispatched before this time on Shared and Key_Shared.
    pub deliver_at: Millis,
}

pub const NO_PRODUCER: u32 = u32::MAX;

/// A stored message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub partition: u32,
    pub entry: i64,
    pub batch_index: Option<u32>,
    pub out: Outgoing,
}

// A million-message run keeps a million of these: the build fails if one grows.
const _: () = assert!(std::mem::size_of::<Message>() <= 72);

impl Message {
    /// The key Key_Shared hashes: the ordering key if set, else the key (`None`: `NONE_KEY`).
    pub fn sticky_key(&self) -> Option<KeyId> {
        self.out.ordering_key.or(self.out.key)
    }

    /// Whether the message was in a ledger at t=0 (a snapshot's entry: no producer, not a copy).
    pub fn is_from_snapshot(&self) -> bool {
        self.out.producer == NO_PRODUCER && self.out.copy.is_none()
    }

    /// The original this message is a copy of (itself when it is not a copy).
    pub fn root(&self, me: MsgId) -> MsgId {
        self.out.copy.as_ref().map_or(me, |c| c.origin)
    }
}

/// One ledger entry: a single message or a batch (`ledger:entry:batchIndex`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub first_msg: MsgId,
    pub messages: u32,
    /// `makeHash` of the entry's sticky key (its first message's, as the batch metadata carries it).
    pub key_make_hash: u32,
    /// A delayed delivery (a retry copy): its time is the first message's `deliver_at`. Kept as a
    /// flag so an unbatched run holds 16 bytes per entry, not 24.
    pub delayed: bool,
}

const _: () = assert!(std::mem::size_of::<Entry>() <= 16);

impl Entry {
    /// Not dispatched before this time (0: at once).
    pub fn deliver_at(&self, messages: &[Message]) -> Millis {
        if self.delayed {
            messages.get(self.first_msg as usize).map_or(0, |m| m.out.deliver_at)
        } else {
            0
        }
    }
}

/// The dispatcher a subscription runs, fixed by its first consumer.
#[derive(Clone, Debug)]
pub enum Dispatcher {
    Single(SingleActiveDispatcher),
    Shared(SharedSubscription),
    KeyShared(Box<KeySharedDispatcher>),
}

/// A consumer connected to a subscription, as the broker sees it.
#[derive(Clone, Debug)]
pub struct Member {
    pub consumer: u32,
    pub attachment: u32,
    /// Exclusive/Failover: the consumer's permits (Shared and Key_Shared keep them in their dispatcher).
    pub permits: u32,
    /// The client's epoch at its last redeliver-all: deliveries carry it so stale ones are dropped.
    pub epoch: u32,
    pub end_of_topic_sent: bool,
}

/// A subscription of one partition (or segment): the durable cursor and the dispatcher.
#[derive(Clone, Debug)]
pub struct Subscription {
    pub name: Name,
    /// Index into `World::groups` (what `View::groups` and `Trace::Committed` number).
    pub group: u32,
    pub cursor: ManagedCursor,
    /// markDelete when the cursor was created: entries up to it were never meant for this subscription.
    pub initial_mark_delete: i64,
    /// A cursor restored from a snapshot, as it was at t=0: what it had acked was read before
    /// the snapshot, so the run owes it nothing (`World::read_before_snapshot`).
    pub read_before_snapshot: Option<Box<ManagedCursor>>,
    pub created_event: EventId,
    pub sub_type: SubscriptionType,
    pub key_shared: KeySharedPolicy,
    pub dispatcher: Option<Dispatcher>,
    pub members: IdMap<Member>,
    pub redelivery: RedeliveryCounts,
    /// When the next read is due, if one is scheduled.
    pub read_at: Option<Millis>,
    /// The last reason each held entry was logged with (to log changes only).
    pub held: BTreeMap<i64, HoldReason>,
    /// Entries waiting for their delivery time (retry copies), by position.
    pub delayed: BTreeSet<i64>,
    /// Highest position sent to any consumer (the classic Key_Shared join position).
    pub last_sent: i64,
}

/// A topic as one broker serves it: a non-partitioned topic, one partition of a partitioned
/// topic, one segment of a scalable topic, or a dead-letter/retry topic. Its index is the neutral
/// `PartitionId`.
#[derive(Clone, Debug)]
pub struct Partition {
    pub name: Name,
    /// Index into `World::topics`.
    pub topic: u32,
    /// -1 for everything but a partition of a partitioned topic.
    pub partition_index: i32,
    pub segment: Option<u64>,
    pub broker: u32,
    pub ledger_id: i64,
    pub entries: Vec<Entry>,
    pub terminated: bool,
    pub deleted: bool,
    pub subscriptions: Vec<Subscription>,
}

impl Partition {
    pub fn last_entry(&self) -> i64 {
        self.entries.len() as i64 - 1
    }

    pub fn position_id(&self, entry: i64) -> MessageId {
        MessageId::entry(self.ledger_id, entry)
    }

    pub fn subscription(&self, name: &str) -> Option<usize> {
        self.subscriptions.iter().position(|s| &*s.name == name)
    }
}

/// The state a scalable topic keeps besides its segments' partitions.
#[derive(Clone, Debug)]
pub struct ScalableTopic {
    pub name: ScalableTopicName,
    pub layout: SegmentLayout,
    /// Segment id -> index into `World::partitions` (pruned segments stay, marked deleted).
    pub segment_partitions: BTreeMap<u64, u32>,
    /// Every subscription that exists on the topic (children get their cursors at Earliest).
    pub subscriptions: BTreeSet<Name>,
    /// STREAM subscriptions: their coordinators.
    pub coordinators: BTreeMap<Name, SubscriptionCoordinator>,
    /// Upstream gaps already reported, so each is logged once.
    pub gaps_reported: BTreeSet<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopicRole {
    User,
    DeadLetter,
    Retry,
}

#[derive(Clone, Debug)]
pub struct Topic {
    pub name: Name,
    /// As written in the scenario (references may use either form).
    pub written: String,
    pub role: TopicRole,
    pub partitioned: bool,
    /// Partitions in index order, or segments in creation order.
    pub partitions: Vec<u32>,
    pub scalable: Option<Box<ScalableTopic>>,
}

/// A batch container: messages waiting for the publish delay or a full batch.
#[derive(Clone, Debug, Default)]
pub struct BatchContainer {
    /// Key groups in first-seen order (one group, key `None`, for the DEFAULT batcher).
    pub groups: Vec<(Option<Name>, Vec<Outgoing>)>,
    pub messages: u32,
    pub generation: u64,
}

/// Keys rendered from a template; a template that repeats (`k-{i%8}`) renders each key once.
#[derive(Clone, Debug)]
pub struct KeyTemplate {
    template: Template,
    /// One slot per message index modulo the period, when the template repeats.
    cache: Vec<Option<KeyId>>,
    scratch: String,
}

/// Templates repeating more slowly than this are rendered per message.
const KEY_CACHE_AT_MOST: u32 = 1 << 20;

impl KeyTemplate {
    pub fn new(text: &str) -> KeyTemplate {
        let template = Template::new(text);
        let period = template.period(KEY_CACHE_AT_MOST).unwrap_or(0);
        KeyTemplate { template, cache: vec![None; period as usize], scratch: String::new() }
    }

    /// The key of message `i`, interned in `keys`.
    pub fn key(&mut self, i: u32, keys: &mut KeyTable) -> KeyId {
        let slot = if self.cache.is_empty() { None } else { Some((i as usize) % self.cache.len()) };
        if let Some(k) = slot.and_then(|s| self.cache[s]) {
            return k;
        }
        self.scratch.clear();
        self.template.render_into(i, &mut self.scratch);
        let k = keys.intern(&self.scratch);
        if let Some(s) = slot {
            self.cache[s] = Some(k);
        }
        k
    }
}

/// A send script with its templates parsed once.
#[derive(Clone, Debug)]
pub struct Script {
    pub spec: Arc<SendSpec>,
    pub key: Option<KeyTemplate>,
    pub ordering_key: Option<KeyTemplate>,
}

impl Script {
    pub fn new(spec: SendSpec) -> Script {
        Script {
            key: spec.key.as_deref().map(KeyTemplate::new),
            ordering_key: spec.ordering_key.as_deref().map(KeyTemplate::new),
            spec: Arc::new(spec),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Producer {
    pub name: Name,
    pub spec: Arc<ProducerSpec>,
    pub topic: u32,
    /// The scenario's send scripts, then any added by `produce` commands.
    pub scripts: Vec<Script>,
    pub router: Option<PartitionRouter>,
    pub segment_router: Option<SegmentRouter>,
    /// Per partition.
    pub containers: BTreeMap<u32, BatchContainer>,
    pub latency: Millis,
    pub sent: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientState {
    NotStarted,
    Running,
    Closed,
    Crashed,
    /// Subscribing failed (the reason is in `Consumer::failure`).
    Failed,
}

/// One v4 consumer of the client on one partition or segment (a child consumer of a
/// multi-topic consumer, or a segment consumer of a v5 consumer).
#[derive(Clone, Debug)]
pub struct Attachment {
    pub partition: u32,
    /// Index of the subscription on the partition, once subscribed.
    pub subscription: u32,
    pub consumer_id: u64,
    pub receiver_queue: u32,
    /// Messages the application took since the last FLOW.
    pub taken_since_flow: u32,
    pub epoch: u32,
    pub connected: bool,
    /// Closed by the client (STREAM reassignment) or gone with the consumer.
    pub closed: bool,
    pub reached_end: bool,
    pub nacks: NegativeAcksTracker,
    pub nack_timer: bool,
    pub ack_timeout: Option<AckTimeoutTracker>,
    /// Per batch entry, the acker of the copy received last: the entry is acked when every
    /// message of that copy is (batch-index acks are off by default).
    pub batch_left: BTreeMap<i64, BatchAcker>,
    /// Batch entries received so far, numbering each copy (`Delivery::receipt`).
    pub receipts: u32,
    /// Entries whose last delivery reached `maxRedeliverCount` (dead-letter candidates).
    pub dead_letter_candidates: BTreeSet<i64>,
    /// The dead-letter policy with this partition's default topic names resolved.
    pub dead_letter: Option<DeadLetterPolicy>,
}

/// A message in the receiver queue (or in the application's hands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub attachment: u32,
    pub msg: MsgId,
    pub entry: i64,
    pub redelivery_count: u32,
    /// Which copy of a batch entry this message came in (0: not a batch). Each copy has its own
    /// acker, as each received batch has its own `BatchMessageAcker` upstream: acking a message
    /// of an earlier copy cannot complete the copy received since.
    pub receipt: u32,
}

/// The messages of one received copy of a batch entry not acked yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchAcker {
    pub receipt: u32,
    pub left: u32,
}

/// An ack the client has not sent yet (acknowledgement grouping).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingAck {
    pub attachment: u32,
    pub position: i64,
    pub cumulative: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsumerStats {
    pub received: u64,
    pub acked: u64,
    pub nacked: u64,
    pub ack_timeouts: u64,
    pub dead_lettered: u64,
    pub reconsumed: u64,
    pub flows: u64,
}

/// One message the application got, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceivedRecord {
    pub msg: MsgId,
    pub redelivery_count: u32,
    /// The `Received` log event (it carries the time).
    pub event: EventId,
}

/// A client consumer (v4 consumer, multi-topic consumer over partitions, or v5 scalable consumer).
#[derive(Clone, Debug)]
pub struct Consumer {
    pub name: Name,
    pub spec: Arc<ConsumerSpec>,
    /// The application's current ack behaviour (`setAck` changes it).
    pub ack: AckSpec,
    pub topic: u32,
    pub subscription: Name,
    pub state: ClientState,
    pub failure: Option<String>,
    pub incarnation: u32,
    pub attachments: Vec<Attachment>,
    pub incoming: VecDeque<Delivery>,
    /// The message the application is working on, if any.
    pub processing: Option<Delivery>,
    pub pending_acks: Vec<PendingAck>,
    pub flush_scheduled: bool,
    pub ack_timeout_ticking: bool,
    /// How often this consumer has seen each message (`nackFirst`).
    pub seen: BTreeMap<MsgId, u32>,
    /// STREAM: the segments of the latest assignment, in assignment order.
    pub assigned_segments: Vec<u64>,
    pub retry_partition: Option<u32>,
    pub stats: ConsumerStats,
    pub received: Vec<ReceivedRecord>,
    pub acked: Vec<MsgId>,
    pub latency: Millis,
}

impl Consumer {
    pub fn running(&self) -> bool {
        self.state == ClientState::Running
    }

    /// The live attachment on `partition`, if any.
    pub fn attachment_on(&self, partition: u32) -> Option<usize> {
        self.attachments.iter().position(|a| a.partition == partition && !a.closed)
    }
}

/// Who owned what, when: the report's ownership history (partitions, key ranges, segments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRecord {
    pub at: Millis,
    pub event: EventId,
    pub group: u32,
    /// `partition p1`, `hashes [1-2000]`, `segment 4 [0000-1fff]`...
    pub what: String,
    pub owner: Option<Name>,
}
