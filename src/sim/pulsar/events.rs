//! The typed event log of the Pulsar model. Each variant renders as one stable line; the rendering
//! is what the determinism digest hashes. Upstream gaps and era-specific behaviour are events of
//! their own, so the log (and the report, which cites their ids) says where they happened.

use std::fmt;
use std::sync::Arc;

use super::message_id::MessageId;

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

#[derive(Clone, Debug)]
pub enum Event {
    /// A scenario or user command took effect.
    Command {
        text: String,
    },
    ConsumerStarted {
        consumer: Name,
        topic: Name,
        subscription: Name,
    },
    /// The broker added the consumer to the subscription's dispatcher.
    Subscribed {
        consumer: Name,
        topic: Name,
        subscription: Name,
        sub_type: &'static str,
        consumer_id: u64,
    },
    SubscribeFailed {
        consumer: Name,
        topic: Name,
        subscription: Name,
        reason: String,
    },
    ConsumerClosed {
        consumer: Name,
        crashed: bool,
        unsent_acks: u32,
    },
    /// The broker removed a consumer; its pending messages went back for redelivery.
    /// `returned`: pending entries put back for redelivery (Shared, Key_Shared; `None` on
    /// Exclusive/Failover, where the next active consumer rewinds instead).
    ConsumerRemoved {
        consumer: Name,
        topic: Name,
        subscription: Name,
        consumer_id: u64,
        returned: Option<u32>,
    },
    CursorCreated {
        topic: Name,
        subscription: Name,
        initial: &'static str,
        mark_delete: MessageId,
        backlog: u64,
    },
    MessageStored {
        msg: MsgId,
        topic: Name,
        id: MessageId,
        key: Option<Name>,
        producer: Name,
    },
    /// The topic was terminated (a sealed segment): the producer re-routes.
    PublishRejected {
        producer: Name,
        topic: Name,
        messages: u32,
    },
    Dispatched {
        topic: Name,
        subscription: Name,
        entries: u32,
        consumers: u32,
        replay: bool,
    },
    /// An entry was held back by the dispatcher (logged when its reason changes).
    Held {
        msg: MsgId,
        topic: Name,
        subscription: Name,
        id: MessageId,
        reason: &'static str,
    },
    Received {
        consumer: Name,
        msg: MsgId,
        id: MessageId,
        redelivery_count: u32,
    },
    Nacked {
        consumer: Name,
        msg: MsgId,
        id: MessageId,
    },
    AcksApplied {
        consumer: Name,
        topic: Name,
        subscription: Name,
        acked: u32,
        cumulative: bool,
        mark_delete: MessageId,
        moved: bool,
        backlog: u64,
    },
    Flow {
        consumer: Name,
        topic: Name,
        permits: u32,
    },
    ConsumerBlocked {
        consumer: Name,
        topic: Name,
        unacked: u32,
        limit: u32,
    },
    ConsumerUnblocked {
        consumer: Name,
        topic: Name,
        unacked: u32,
    },
    SubscriptionBlocked {
        topic: Name,
        subscription: Name,
        unacked: u32,
    },
    /// The Failover/Exclusive pick chose a new active consumer; reading resumes after `delay_ms`.
    /// `delay_ms` is `None` when a switch was already pending: it completes with this consumer.
    ActiveConsumerPicked {
        topic: Name,
        subscription: Name,
        active: Name,
        delay_ms: Option<u64>,
    },
    /// `ActiveConsumerChange` to a newcomer: it is not the active one.
    ActiveConsumerNotice {
        topic: Name,
        subscription: Name,
        consumer: Name,
        active: Name,
    },
    /// The switch completed: the cursor was rewound to markDelete+1 for the new active consumer.
    ActiveSwitched {
        topic: Name,
        subscription: Name,
        active: Name,
        rewound_to: MessageId,
        redelivered: u32,
    },
    Rewound {
        topic: Name,
        subscription: Name,
        consumer: Name,
        rewound_to: MessageId,
        redelivered: u32,
    },
    RedeliveryRequested {
        consumer: Name,
        topic: Name,
        messages: Option<u32>,
        reason: RedeliveryReason,
    },
    ReturnedToReplay {
        topic: Name,
        subscription: Name,
        consumer: Name,
        entries: u32,
        reason: RedeliveryReason,
    },
    AckTimedOut {
        consumer: Name,
        topic: Name,
        entries: u32,
    },
    DeadLettered {
        consumer: Name,
        msg: MsgId,
        id: MessageId,
        dead_letter_topic: Name,
        deliveries: u32,
    },
    Reconsumed {
        consumer: Name,
        msg: MsgId,
        retry_topic: Name,
        reconsume_times: u32,
        delay_ms: u64,
    },
    ReachedEndOfTopic {
        consumer: Name,
        topic: Name,
    },
    HashRangesChanged {
        topic: Name,
        subscription: Name,
        consumer: Name,
        ranges: String,
    },
    DrainingHashes {
        topic: Name,
        subscription: Name,
        consumer: Name,
        hashes: u32,
    },
    HashUnblocked {
        topic: Name,
        subscription: Name,
        consumer: Name,
    },
    SegmentTopicCreated {
        topic: Name,
        segment: u64,
        segment_topic: Name,
        cursors_at_earliest: u32,
    },
    SegmentTerminated {
        topic: Name,
        segment: u64,
        last: MessageId,
    },
    LayoutUpdated {
        topic: Name,
        epoch: u64,
        change: String,
        active: String,
    },
    SegmentTopicDeleted {
        topic: Name,
        segment: u64,
    },
    SessionRegistered {
        topic: Name,
        subscription: Name,
        consumer: Name,
        fresh: bool,
    },
    SessionDisconnected {
        topic: Name,
        subscription: Name,
        consumer: Name,
        grace_until: u64,
    },
    SessionEvicted {
        topic: Name,
        subscription: Name,
        consumer: Name,
    },
    DrainCheckerInstalled {
        topic: Name,
        subscription: Name,
    },
    AssignmentSent {
        topic: Name,
        subscription: Name,
        consumer: Name,
        epoch: u64,
        segments: Vec<u64>,
    },
    DrainPollScheduled {
        topic: Name,
        subscription: Name,
        at: u64,
    },
    DrainPolled {
        topic: Name,
        subscription: Name,
        backlogs: String,
        drained: Vec<u64>,
    },
    /// Behaviour that upstream reported as a gap (apache/pulsar#26274, #26434), reproduced as is.
    UpstreamGap {
        issue: &'static str,
        text: String,
    },
    /// Behaviour of a specific upstream era, reproduced as is (e.g. a close before PR #26433).
    EraNote {
        text: String,
    },
}

fn opt_key(k: &Option<Name>) -> &str {
    k.as_deref().unwrap_or("-")
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Event::*;
        match self {
            Command { text } => write!(f, "command {text}"),
            ConsumerStarted { consumer, topic, subscription } => write!(f, "consumer {consumer} started on {topic} / {subscription}"),
            Subscribed { consumer, topic, subscription, sub_type, consumer_id } => {
                write!(f, "{consumer} subscribed {topic} / {subscription} ({sub_type}, consumerId {consumer_id})")
            }
            SubscribeFailed { consumer, topic, subscription, reason } => {
                write!(f, "{consumer} could not subscribe {topic} / {subscription}: {reason}")
            }
            ConsumerClosed { consumer, crashed, unsent_acks } => {
                if *crashed {
                    write!(f, "consumer {consumer} crashed ({unsent_acks} grouped acks never sent)")
                } else {
                    write!(f, "consumer {consumer} closed (grouped acks flushed: {unsent_acks})")
                }
            }
            ConsumerRemoved { consumer, topic, subscription, consumer_id, returned } => match returned {
                Some(n) => write!(
                    f,
                    "broker removed {consumer} (consumerId {consumer_id}) from {topic} / {subscription}; {n} pending entries back for redelivery"
                ),
                None => write!(f, "broker removed {consumer} (consumerId {consumer_id}) from {topic} / {subscription}"),
            },
            CursorCreated { topic, subscription, initial, mark_delete, backlog } => {
                write!(f, "cursor {topic} / {subscription} created at {initial}: markDelete {mark_delete}, backlog {backlog}")
            }
            MessageStored { msg, topic, id, key, producer } => {
                write!(f, "stored m{msg} {id} key={} on {topic} from {producer}", opt_key(key))
            }
            PublishRejected { producer, topic, messages } => {
                write!(f, "{topic} is terminated: {messages} messages from {producer} rejected (TopicTerminated), re-routing")
            }
            Dispatched { topic, subscription, entries, consumers, replay } => write!(
                f,
                "dispatched {entries} entries of {topic} / {subscription} to {consumers} consumers{}",
                if *replay { " (replay)" } else { "" }
            ),
            Held { msg, topic, subscription, id, reason } => write!(f, "held m{msg} {id} of {topic} / {subscription}: {reason}"),
            Received { consumer, msg, id, redelivery_count } => {
                write!(f, "{consumer} received m{msg} {id} (redeliveryCount {redelivery_count})")
            }
            Nacked { consumer, msg, id } => write!(f, "{consumer} negatively acked m{msg} {id}"),
            AcksApplied { consumer, topic, subscription, acked, cumulative, mark_delete, moved, backlog } => write!(
                f,
                "{} ack of {acked} from {consumer} on {topic} / {subscription}: markDelete {mark_delete}{}, backlog {backlog}",
                if *cumulative { "cumulative" } else { "individual" },
                if *moved { " (moved)" } else { "" }
            ),
            Flow { consumer, topic, permits } => write!(f, "FLOW {permits} from {consumer} on {topic}"),
            ConsumerBlocked { consumer, topic, unacked, limit } => {
                write!(f, "{consumer} blocked on {topic}: {unacked} unacked (limit {limit})")
            }
            ConsumerUnblocked { consumer, topic, unacked } => write!(f, "{consumer} unblocked on {topic}: {unacked} unacked"),
            SubscriptionBlocked { topic, subscription, unacked } => {
                write!(f, "{topic} / {subscription} blocked: {unacked} unacked messages in the subscription")
            }
            ActiveConsumerPicked { topic, subscription, active, delay_ms } => match delay_ms {
                Some(ms) => write!(f, "{topic} / {subscription}: active consumer is now {active}; reading resumes in {ms} ms"),
                None => write!(f, "{topic} / {subscription}: active consumer is now {active}, when the pending switch completes"),
            },
            ActiveConsumerNotice { topic, subscription, consumer, active } => {
                write!(f, "{topic} / {subscription}: ActiveConsumerChange to {consumer} (inactive; active is {active})")
            }
            ActiveSwitched { topic, subscription, active, rewound_to, redelivered } => write!(
                f,
                "{topic} / {subscription}: {active} active, cursor rewound to {rewound_to} ({redelivered} unacked entries will be read again)"
            ),
            Rewound { topic, subscription, consumer, rewound_to, redelivered } => write!(
                f,
                "{topic} / {subscription}: rewound to {rewound_to} for {consumer} ({redelivered} unacked entries will be read again)"
            ),
            RedeliveryRequested { consumer, topic, messages, reason } => match messages {
                Some(n) => write!(f, "{consumer} asks redelivery of {n} entries on {topic} ({})", reason.name()),
                None => write!(f, "{consumer} asks redelivery of all unacked messages on {topic} ({})", reason.name()),
            },
            ReturnedToReplay { topic, subscription, consumer, entries, reason } => write!(
                f,
                "{topic} / {subscription}: {entries} entries of {consumer} back in the replay set ({})",
                reason.name()
            ),
            AckTimedOut { consumer, topic, entries } => write!(f, "{consumer}: ack timeout of {entries} entries on {topic}"),
            DeadLettered { consumer, msg, id, dead_letter_topic, deliveries } => write!(
                f,
                "{consumer} sent m{msg} {id} to {dead_letter_topic} after {deliveries} deliveries, and acked the original"
            ),
            Reconsumed { consumer, msg, retry_topic, reconsume_times, delay_ms } => write!(
                f,
                "{consumer} reconsumeLater m{msg}: copy to {retry_topic} (RECONSUMETIMES {reconsume_times}, delay {delay_ms} ms)"
            ),
            ReachedEndOfTopic { consumer, topic } => write!(f, "{consumer} reached the end of terminated {topic}"),
            HashRangesChanged { topic, subscription, consumer, ranges } => {
                write!(f, "{topic} / {subscription}: {consumer} now owns hashes {ranges}")
            }
            DrainingHashes { topic, subscription, consumer, hashes } => write!(
                f,
                "{topic} / {subscription}: {hashes} moved hashes draining at {consumer} (their new owners wait for its acks)"
            ),
            HashUnblocked { topic, subscription, consumer } => {
                write!(f, "{topic} / {subscription}: {consumer} acked the last pending message of a draining hash")
            }
            SegmentTopicCreated { topic, segment, segment_topic, cursors_at_earliest } => write!(
                f,
                "{topic}: segment {segment} created as {segment_topic} ({cursors_at_earliest} subscription cursors at Earliest)"
            ),
            SegmentTerminated { topic, segment, last } => write!(f, "{topic}: segment {segment} terminated at {last}"),
            LayoutUpdated { topic, epoch, change, active } => {
                write!(f, "{topic}: layout epoch {epoch} ({change}); active segments {active}")
            }
            SegmentTopicDeleted { topic, segment } => write!(f, "{topic}: segment {segment} pruned and its topic deleted"),
            SessionRegistered { topic, subscription, consumer, fresh } => write!(
                f,
                "{topic} / {subscription}: session {consumer} {}",
                if *fresh { "registered" } else { "reconnected within grace" }
            ),
            SessionDisconnected { topic, subscription, consumer, grace_until } => {
                write!(f, "{topic} / {subscription}: session {consumer} disconnected, evicted at {grace_until} unless it returns")
            }
            SessionEvicted { topic, subscription, consumer } => write!(f, "{topic} / {subscription}: session {consumer} evicted"),
            DrainCheckerInstalled { topic, subscription } => {
                write!(f, "{topic} / {subscription}: drain checker installed (parent-drain ordering on)")
            }
            AssignmentSent { topic, subscription, consumer, epoch, segments } => {
                let ids: Vec<String> = segments.iter().map(u64::to_string).collect();
                write!(f, "{topic} / {subscription}: assignment to {consumer} at epoch {epoch}: [{}]", ids.join(","))
            }
            DrainPollScheduled { topic, subscription, at } => write!(f, "{topic} / {subscription}: drain poll at {at}"),
            DrainPolled { topic, subscription, backlogs, drained } => {
                let ids: Vec<String> = drained.iter().map(u64::to_string).collect();
                write!(f, "{topic} / {subscription}: drain poll, backlogs {backlogs}; newly drained [{}]", ids.join(","))
            }
            UpstreamGap { issue, text } => write!(f, "upstream gap {issue}: {text}"),
            EraNote { text } => write!(f, "era: {text}"),
        }
    }
}

impl Event {
    /// A short category for filtering the log.
    pub fn kind(&self) -> &'static str {
        use Event::*;
        match self {
            Command { .. } => "command",
            MessageStored { .. } | PublishRejected { .. } => "produce",
            ConsumerStarted { .. }
            | Subscribed { .. }
            | SubscribeFailed { .. }
            | ConsumerClosed { .. }
            | ConsumerRemoved { .. } => "consumer",
            CursorCreated { .. } | AcksApplied { .. } => "cursor",
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
            MessageStored { msg, .. }
            | Held { msg, .. }
            | Received { msg, .. }
            | Nacked { msg, .. }
            | DeadLettered { msg, .. }
            | Reconsumed { msg, .. } => Some(*msg),
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

#[cfg(test)]
mod size_probe {
    #[test]
    fn sizes() {
        eprintln!(
            "Event {} LogEntry {} MessageId {} Message {} Outgoing {}",
            std::mem::size_of::<super::Event>(),
            std::mem::size_of::<crate::sim::engine::LogEntry<super::Event>>(),
            std::mem::size_of::<super::MessageId>(),
            std::mem::size_of::<crate::sim::pulsar::world::Message>(),
            std::mem::size_of::<crate::sim::pulsar::world::Outgoing>()
        );
    }
}
