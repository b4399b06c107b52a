//! The typed event log of the Pulsar model. Events are small: they name consumers, partitions,
//! subscriptions and messages by their index in the world (which only ever grows), and
//! `render::event_text` turns them into the stable one-line text that the log shows and the
//! determinism digest hashes. Upstream gaps and era-specific behaviour are events of their own,
//! so the log (and the report, which cites their ids) says where they happened.

use std::fmt;
use std::sync::Arc;

use super::cursor::InitialPosition;
use super::key_shared::HoldReason;
use super::subscription::SubscriptionType;

pub type Name = Arc<str>;
pub type MsgId = u32;

/// Why messages went back to a dispatcher for another delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RedeliveryReason {
    NegativeAck,
    AckTimeout,
    /// The application called `redeliverUnacknowledgedMessages()`.
    Explicit,
    /// The consumer closed or its connection dropped while the messages were pending.
    ConsumerGone,
}

impl RedeliveryReason {
    pub fn name(self) -> &'static str {
        match self {
            RedeliveryReason::NegativeAck => "negative ack",
            RedeliveryReason::AckTimeout => "ack timeout",
            RedeliveryReason::Explicit => "redeliverUnacknowledgedMessages",
            RedeliveryReason::ConsumerGone => "consumer closed",
        }
    }
}

/// What a drain poll found: every segment's backlog, and the segments newly drained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrainPoll {
    pub backlogs: Box<str>,
    pub drained: Box<[u64]>,
}

/// An upstream gap: the issue that reports it and what happened here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GapNote {
    pub issue: &'static str,
    pub text: Box<str>,
}

/// One log entry. `consumer`, `producer`, `partition`, `topic` and `group` are indices into the
/// world's tables; `sub` is a subscription's index on its partition; positions are entry ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A scenario or user command took effect.
    Command {
        text: Box<str>,
    },
    ConsumerStarted {
        consumer: u32,
    },
    /// The broker added the consumer to the subscription's dispatcher.
    Subscribed {
        consumer: u32,
        partition: u32,
        sub: u32,
        sub_type: SubscriptionType,
        consumer_id: u64,
    },
    SubscribeFailed {
        consumer: u32,
        partition: u32,
        reason: Box<str>,
    },
    ConsumerClosed {
        consumer: u32,
        crashed: bool,
        unsent_acks: u32,
    },
    /// The run outgrew its memory budget and stops here.
    BudgetExceeded {
        budget: u64,
        reached: u64,
    },
    /// The client refused its own configuration or what it received, and gave up (the reason is
    /// the Java client's exception message).
    ClientError {
        consumer: u32,
        reason: Box<str>,
    },
    /// The broker removed a consumer. `returned`: pending entries put back for redelivery
    /// (Shared, Key_Shared; `None` on Exclusive/Failover, where the next active consumer rewinds).
    ConsumerRemoved {
        consumer: u32,
        partition: u32,
        sub: u32,
        consumer_id: u64,
        returned: Option<u32>,
    },
    CursorCreated {
        partition: u32,
        sub: u32,
        initial: InitialPosition,
        mark_delete: i64,
        backlog: u32,
    },
    MessageStored {
        msg: MsgId,
    },
    /// The topic was terminated (a sealed segment): the producer re-routes.
    PublishRejected {
        producer: u32,
        partition: u32,
        messages: u32,
    },
    Dispatched {
        partition: u32,
        sub: u32,
        entries: u32,
        consumers: u32,
        replay: bool,
    },
    /// An entry was held back by the dispatcher (logged when its reason changes).
    Held {
        msg: MsgId,
        sub: u32,
        reason: HoldReason,
    },
    Received {
        consumer: u32,
        msg: MsgId,
        redelivery_count: u32,
    },
    Nacked {
        consumer: u32,
        msg: MsgId,
    },
    AcksApplied {
        consumer: u32,
        partition: u32,
        sub: u32,
        acked: u32,
        cumulative: bool,
        moved: bool,
        mark_delete: i64,
        backlog: u32,
    },
    Flow {
        consumer: u32,
        partition: u32,
        permits: u32,
    },
    ConsumerBlocked {
        consumer: u32,
        partition: u32,
        unacked: u32,
        limit: u32,
    },
    ConsumerUnblocked {
        consumer: u32,
        partition: u32,
        unacked: u32,
    },
    SubscriptionBlocked {
        partition: u32,
        sub: u32,
        unacked: u32,
    },
    /// The Failover/Exclusive pick chose a new active consumer; reading resumes after `delay_ms`
    /// (`None` when a switch was already pending: it completes with this consumer).
    ActiveConsumerPicked {
        partition: u32,
        sub: u32,
        active: u32,
        delay_ms: Option<u64>,
    },
    /// `ActiveConsumerChange` to a newcomer: it is not the active one.
    ActiveConsumerNotice {
        partition: u32,
        sub: u32,
        consumer: u32,
        active: u32,
    },
    /// The switch completed: the cursor was rewound to markDelete+1 for the new active consumer.
    ActiveSwitched {
        partition: u32,
        sub: u32,
        active: u32,
        rewound_to: i64,
        redelivered: u32,
    },
    Rewound {
        partition: u32,
        sub: u32,
        consumer: u32,
        rewound_to: i64,
        redelivered: u32,
    },
    /// `partition` is `None` for a request over the whole topic (redeliver-all).
    RedeliveryRequested {
        consumer: u32,
        partition: Option<u32>,
        messages: Option<u32>,
        reason: RedeliveryReason,
    },
    ReturnedToReplay {
        partition: u32,
        sub: u32,
        consumer: u32,
        entries: u32,
        reason: RedeliveryReason,
    },
    AckTimedOut {
        consumer: u32,
        partition: u32,
        entries: u32,
    },
    DeadLettered {
        consumer: u32,
        msg: MsgId,
        dead_letter_partition: u32,
        deliveries: u32,
    },
    Reconsumed {
        consumer: u32,
        msg: MsgId,
        retry_partition: u32,
        reconsume_times: u32,
        delay_ms: u64,
    },
    ReachedEndOfTopic {
        consumer: u32,
        partition: u32,
    },
    HashRangesChanged {
        partition: u32,
        sub: u32,
        consumer: u32,
        ranges: Box<str>,
    },
    DrainingHashes {
        partition: u32,
        sub: u32,
        consumer: u32,
        hashes: u32,
    },
    HashUnblocked {
        partition: u32,
        sub: u32,
        consumer: u32,
    },
    SegmentTopicCreated {
        topic: u32,
        segment: u64,
        partition: u32,
        cursors_at_earliest: u32,
    },
    SegmentTerminated {
        topic: u32,
        segment: u64,
        partition: u32,
    },
    /// `change` reads like `split 0`; the active segments after it are part of the line.
    LayoutUpdated {
        topic: u32,
        epoch: u64,
        change_and_active: Box<str>,
    },
    SegmentTopicDeleted {
        topic: u32,
        segment: u64,
    },
    SessionRegistered {
        group: u32,
        consumer: u32,
        fresh: bool,
    },
    SessionDisconnected {
        group: u32,
        consumer: u32,
        grace_until: u64,
    },
    SessionEvicted {
        group: u32,
        consumer: u32,
    },
    DrainCheckerInstalled {
        group: u32,
    },
    AssignmentSent {
        group: u32,
        consumer: u32,
        /// The layout epoch (u32 keeps the entry at 32 bytes; a run makes far fewer layout changes).
        epoch: u32,
        segments: Box<[u64]>,
    },
    DrainPollScheduled {
        group: u32,
        at: u64,
    },
    DrainPolled {
        group: u32,
        /// Boxed: a rare event should not widen every log entry.
        poll: Box<DrainPoll>,
    },
    /// Behaviour that upstream reported as a gap (apache/pulsar#26274, #26434), reproduced as is.
    UpstreamGap {
        /// Boxed: a rare event should not widen every log entry.
        gap: Box<GapNote>,
    },
    /// Behaviour of a specific upstream era, reproduced as is (e.g. a close before PR #26433).
    EraNote {
        text: Box<str>,
    },
    /// A subscription's cursor as the snapshot had it at t=0 (`world/snapshot.rs`).
    CursorRestored {
        partition: u32,
        sub: u32,
        mark_delete: i64,
        /// Individually acked ranges above markDelete.
        acked_ranges: u32,
        backlog: u32,
    },
    /// A consumer that was connected before the snapshot, running from t=0 without a handshake.
    ConsumerRestored {
        consumer: u32,
    },
}

// Two log entries per message: the build fails if an event grows past 32 bytes (a log entry
// past 56).
const _: () = assert!(std::mem::size_of::<Event>() <= 32);
const _: () = assert!(std::mem::size_of::<mqviz_engine::LogEntry<Event>>() <= 56);

/// Without the world an event can only show its indices; `render::event_text` names things.
impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl Event {
    /// A short category for filtering the log.
    pub fn kind(&self) -> &'static str {
        use Event::*;
        match self {
            Command { .. } | BudgetExceeded { .. } => "command",
            MessageStored { .. } | PublishRejected { .. } => "produce",
            ConsumerStarted { .. }
            | ConsumerRestored { .. }
            | Subscribed { .. }
            | SubscribeFailed { .. }
            | ConsumerClosed { .. }
            | ClientError { .. }
            | ConsumerRemoved { .. } => "consumer",
            CursorCreated { .. } | CursorRestored { .. } | AcksApplied { .. } => "cursor",
            Dispatched { .. } | Held { .. } | Flow { .. } => "dispatch",
            ConsumerBlocked { .. } | ConsumerUnblocked { .. } | SubscriptionBlocked { .. } => "dispatch",
            Received { .. } | ReachedEndOfTopic { .. } => "receive",
            Nacked { .. } | RedeliveryRequested { .. } | ReturnedToReplay { .. } | AckTimedOut { .. } | Rewound { .. } => {
                "redeliver"
            }
            DeadLettered { .. } | Reconsumed { .. } => "dlq",
            ActiveConsumerPicked { .. } | ActiveConsumerNotice { .. } | ActiveSwitched { .. } => "failover",
            HashRangesChanged { .. } | DrainingHashes { .. } | HashUnblocked { .. } => "key_shared",
            SegmentTopicCreated { .. } | SegmentTerminated { .. } | LayoutUpdated { .. } | SegmentTopicDeleted { .. } => {
                "segment"
            }
            SessionRegistered { .. } | SessionDisconnected { .. } | SessionEvicted { .. } | DrainCheckerInstalled { .. } => {
                "coordinator"
            }
            AssignmentSent { .. } | DrainPollScheduled { .. } | DrainPolled { .. } => "coordinator",
            UpstreamGap { .. } | EraNote { .. } => "upstream",
        }
    }

    /// The message an entry is about, if any.
    pub fn message(&self) -> Option<MsgId> {
        use Event::*;
        match self {
            MessageStored { msg }
            | Held { msg, .. }
            | Received { msg, .. }
            | Nacked { msg, .. }
            | DeadLettered { msg, .. }
            | Reconsumed { msg, .. } => Some(*msg),
            _ => None,
        }
    }

    /// The consumer (world index) an entry is about, if any.
    pub fn consumer(&self) -> Option<u32> {
        use Event::*;
        match self {
            ConsumerStarted { consumer }
            | ConsumerRestored { consumer }
            | Subscribed { consumer, .. }
            | SubscribeFailed { consumer, .. }
            | ConsumerClosed { consumer, .. }
            | ClientError { consumer, .. }
            | ConsumerRemoved { consumer, .. }
            | Received { consumer, .. }
            | Nacked { consumer, .. }
            | AcksApplied { consumer, .. }
            | Flow { consumer, .. }
            | ConsumerBlocked { consumer, .. }
            | ConsumerUnblocked { consumer, .. }
            | ActiveConsumerNotice { consumer, .. }
            | Rewound { consumer, .. }
            | RedeliveryRequested { consumer, .. }
            | ReturnedToReplay { consumer, .. }
            | AckTimedOut { consumer, .. }
            | DeadLettered { consumer, .. }
            | Reconsumed { consumer, .. }
            | ReachedEndOfTopic { consumer, .. }
            | HashRangesChanged { consumer, .. }
            | DrainingHashes { consumer, .. }
            | HashUnblocked { consumer, .. }
            | SessionRegistered { consumer, .. }
            | SessionDisconnected { consumer, .. }
            | SessionEvicted { consumer, .. }
            | AssignmentSent { consumer, .. } => Some(*consumer),
            ActiveConsumerPicked { active, .. } | ActiveSwitched { active, .. } => Some(*active),
            _ => None,
        }
    }
}

/// The log categories, for the UI's filter select (`"all"` first).
pub const LOG_KINDS: &[&str] = &[
    "all",
    "command",
    "produce",
    "consumer",
    "cursor",
    "dispatch",
    "receive",
    "redeliver",
    "dlq",
    "failover",
    "key_shared",
    "segment",
    "coordinator",
    "upstream",
];
