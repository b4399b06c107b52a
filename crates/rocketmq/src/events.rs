//! The typed event log of the RocketMQ model. Each variant renders as one stable line; the
//! rendering is what the determinism digest hashes.

use std::fmt;
use std::sync::Arc;

use super::types::MessageQueue;

pub type Name = Arc<str>;
pub type MsgId = u32;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PullStatus {
    Found,
    NoNewMsg,
    NoMatchedMsg,
    OffsetIllegal,
    /// A broker error response (`SUBSCRIPTION_NOT_EXIST`, ...): the client retries after 3 s.
    Error(&'static str),
}

impl PullStatus {
    pub fn name(&self) -> &'static str {
        match self {
            PullStatus::Found => "FOUND",
            PullStatus::NoNewMsg => "NO_NEW_MSG",
            PullStatus::NoMatchedMsg => "NO_MATCHED_MSG",
            PullStatus::OffsetIllegal => "OFFSET_ILLEGAL",
            PullStatus::Error(code) => code,
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
        client: Name,
        channel: Name,
    },
    /// `start()` threw (e.g. CHECK_CLIENT_CONFIG refused a SQL92 subscription). `ignored`: the
    /// application carries on with the consumer (otherwise it shuts it down).
    StartFailed {
        client: Name,
        reason: String,
        ignored: bool,
    },
    ConsumerStopped {
        client: Name,
        graceful: bool,
    },
    Subscribed {
        client: Name,
        topic: Name,
        expression: String,
        sub_version: u64,
    },
    SubVersionBumped {
        client: Name,
        topic: Name,
        sub_version: u64,
    },
    HeartbeatSent {
        client: Name,
        broker: Name,
        subscriptions: String,
    },
    /// The broker applied a heartbeat to the group's table: one text per changed topic.
    HeartbeatApplied {
        broker: Name,
        group: Name,
        client: Name,
        changes: Vec<String>,
        notify: bool,
    },
    NotifyReceived {
        client: Name,
        group: Name,
    },
    ChannelExpired {
        broker: Name,
        group: Name,
        client: Name,
        channel: Name,
    },
    Unregistered {
        broker: Name,
        group: Name,
        client: Name,
        notify: bool,
    },
    RebalanceRun {
        client: Name,
    },
    Allocated {
        client: Name,
        topic: Name,
        strategy: &'static str,
        cid_all: Vec<String>,
        queues: Vec<u32>,
        added: Vec<u32>,
        removed: Vec<u32>,
    },
    AllocateFailed {
        client: Name,
        topic: Name,
        reason: String,
    },
    MessageStored {
        msg: MsgId,
        broker: Name,
        topic: Name,
        queue_id: u32,
        offset: u64,
        tag: Option<Name>,
    },
    PullServed {
        broker: Name,
        client: Name,
        mq: MessageQueue,
        offset: u64,
        next: u64,
        status: PullStatus,
        found: u32,
        expression: Option<String>,
    },
    PullHeld {
        broker: Name,
        client: Name,
        mq: MessageQueue,
        offset: u64,
    },
    BrokerFiltered {
        msg: MsgId,
        client: Name,
        expression: String,
        table_owner: Name,
        /// SQL92 only: FALSE, NULL, EVAL_ERROR, or BLOOM_MISS (the bitmap pre-check). Tag filters: none.
        verdict: Option<&'static str>,
    },
    /// A heartbeat's `ConsumerFilterManager.register`, with what it cost.
    FilterRegistered {
        broker: Name,
        group: Name,
        client: Name,
        design: &'static str,
        cost: String,
    },
    /// The client's re-filter dropped a message. `expression` is the subscription the pull was
    /// sent with; `current`, when set, is the different one the consumer has subscribed since.
    ClientFiltered {
        msg: MsgId,
        client: Name,
        expression: String,
        current: Option<String>,
    },
    /// The broker's consume-queue check let a message through only because its tag has the same
    /// `hashCode` as a tag of the expression (e.g. "Aa" and "BB").
    TagHashCollision {
        msg: MsgId,
        client: Name,
        tag: Name,
        expression: String,
        code: i32,
    },
    Consumed {
        msg: MsgId,
        client: Name,
        reconsume_times: u32,
    },
    ConsumeFailed {
        msg: MsgId,
        client: Name,
        reconsume_times: u32,
    },
    ResultsDiscarded {
        client: Name,
        mq: MessageQueue,
        count: u32,
    },
    SentBack {
        msg: MsgId,
        group: Name,
        delay_ms: u64,
        reconsume_times: u32,
    },
    MovedToDlq {
        msg: MsgId,
        group: Name,
    },
    OffsetCommitted {
        broker: Name,
        group: Name,
        mq: MessageQueue,
        offset: u64,
    },
    QueueLocked {
        client: Name,
        mq: MessageQueue,
        granted: bool,
    },
    /// A snapshot's queue at t=0: messages `first_msg..` fill offsets `min..max` (written "(before
    /// the snapshot)").
    SnapshotQueue {
        broker: Name,
        topic: Name,
        queue_id: u32,
        min: u64,
        max: u64,
        first_msg: MsgId,
    },
    QueueCountChanged {
        topic: Name,
        queues: u32,
    },
    /// "doRebalance, but the topic not exist": a subscribed topic has no route (yet).
    RouteNotFound {
        client: Name,
        topic: Name,
    },
    /// A ProcessQueue whose pull chain was silent for 120 s is dropped by the rebalance.
    PullExpired {
        client: Name,
        mq: MessageQueue,
    },
    /// Orderly: the listener holds the consume lock, so the queue stays with its owner (broker
    /// lock included) until a later rebalance.
    RemovalDeferred {
        client: Name,
        mq: MessageQueue,
        listener_until: u64,
        attempts: u32,
    },
    /// OFFSET_ILLEGAL: the ProcessQueue is dropped, the offset fixed to `next`, and re-created.
    OffsetIllegal {
        client: Name,
        mq: MessageQueue,
        next: u64,
    },
    /// The broker refused a send attempt (`msgCheck`).
    SendRefused {
        msg: MsgId,
        broker: Name,
        topic: Name,
        queue_id: u32,
        attempt: u32,
        reason: String,
    },
    /// Every attempt of a synchronous send was refused: `send()` throws, the message is not stored.
    SendFailed {
        msg: MsgId,
        attempts: u32,
        reason: String,
    },
    /// The run outgrew its memory budget and stopped here (`world/budget.rs`).
    BudgetExceeded {
        budget: u64,
        reached: u64,
    },
}

fn ids(v: &[u32]) -> String {
    let parts: Vec<String> = v.iter().map(|q| q.to_string()).collect();
    format!("[{}]", parts.join(","))
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Event::*;
        match self {
            Command { text } => write!(f, "command {text}"),
            ConsumerStarted { client, channel } => write!(f, "consumer-started {client} channel={channel}"),
            StartFailed { client, reason, ignored: false } => write!(f, "start-failed {client}: {reason}"),
            StartFailed { client, reason, ignored: true } => {
                write!(f, "start-failed {client}: {reason} (the application ignores it: the consumer keeps running)")
            }
            ConsumerStopped { client, graceful } => write!(f, "consumer-stopped {client} graceful={graceful}"),
            Subscribed { client, topic, expression, sub_version } => {
                write!(f, "subscribed {client} {topic}={expression:?} subVersion={sub_version}")
            }
            SubVersionBumped { client, topic, sub_version } => {
                write!(f, "subversion-bumped {client} {topic} subVersion={sub_version}")
            }
            HeartbeatSent { client, broker, subscriptions } => write!(f, "heartbeat-sent {client} -> {broker} {subscriptions}"),
            HeartbeatApplied { broker, group, client, changes, notify } => {
                write!(
                    f,
                    "heartbeat-applied {broker} group={group} from={client} notify={notify} changes=[{}]",
                    changes.join("; ")
                )
            }
            NotifyReceived { client, group } => write!(f, "notify-received {client} group={group}"),
            ChannelExpired { broker, group, client, channel } => {
                write!(f, "channel-expired {broker} group={group} client={client} channel={channel}")
            }
            Unregistered { broker, group, client, notify } => {
                write!(f, "unregistered {broker} group={group} client={client} notify={notify}")
            }
            RebalanceRun { client } => write!(f, "rebalance {client}"),
            Allocated { client, topic, strategy, cid_all, queues, added, removed } => write!(
                f,
                "allocated {client} {topic} strategy={strategy} cidAll=[{}] queues={} added={} removed={}",
                cid_all.join(","),
                ids(queues),
                ids(added),
                ids(removed)
            ),
            AllocateFailed { client, topic, reason } => write!(f, "allocate-failed {client} {topic}: {reason}"),
            MessageStored { msg, broker, topic, queue_id, offset, tag } => {
                write!(f, "stored m{msg} {broker} {topic}:{queue_id}@{offset} tag={}", tag.as_deref().unwrap_or("-"))
            }
            PullServed { broker, client, mq, offset, next, status, found, expression } => write!(
                f,
                "pull {broker} {client} {mq} offset={offset} next={next} status={} found={found} filter={}",
                status.name(),
                expression.as_deref().unwrap_or("-")
            ),
            PullHeld { broker, client, mq, offset } => write!(f, "pull-held {broker} {client} {mq} offset={offset}"),
            BrokerFiltered { msg, client, expression, table_owner, verdict } => {
                write!(f, "broker-filtered m{msg} pull-by={client} filter={expression:?} from={table_owner}")?;
                match verdict {
                    Some(v) => write!(f, " verdict={v}"),
                    None => Ok(()),
                }
            }
            FilterRegistered { broker, group, client, design, cost } => {
                write!(f, "filter-registered {broker} group={group} from={client} design={design} {cost}")
            }
            ClientFiltered { msg, client, expression, current: None } => {
                write!(f, "client-filtered m{msg} by={client} own={expression:?}")
            }
            ClientFiltered { msg, client, expression, current: Some(now) } => {
                write!(f, "client-filtered m{msg} by={client} own={expression:?} (pull sent before the switch to {now:?})")
            }
            TagHashCollision { msg, client, tag, expression, code } => write!(
                f,
                "tag-hash-collision m{msg} pull-by={client} tag={tag} passed filter={expression:?} (same hashCode {code})"
            ),
            Consumed { msg, client, reconsume_times } => write!(f, "consumed m{msg} by={client} reconsume={reconsume_times}"),
            ConsumeFailed { msg, client, reconsume_times } => {
                write!(f, "consume-failed m{msg} by={client} reconsume={reconsume_times}")
            }
            ResultsDiscarded { client, mq, count } => write!(f, "results-discarded {client} {mq} count={count}"),
            SentBack { msg, group, delay_ms, reconsume_times } => {
                write!(f, "sent-back m{msg} group={group} delay={delay_ms}ms reconsume={reconsume_times}")
            }
            MovedToDlq { msg, group } => write!(f, "dlq m{msg} group={group}"),
            OffsetCommitted { broker, group, mq, offset } => write!(f, "offset-committed {broker} {group} {mq}={offset}"),
            QueueLocked { client, mq, granted } => write!(f, "lock {client} {mq} granted={granted}"),
            QueueCountChanged { topic, queues } => write!(f, "queue-count {topic}={queues}"),
            SnapshotQueue { broker, topic, queue_id, min, max, first_msg } => {
                write!(f, "snapshot {broker} {topic}:{queue_id} offsets {min}..{max} from m{first_msg}")
            }
            RouteNotFound { client, topic } => write!(f, "route-not-found {client} {topic}: the topic does not exist"),
            PullExpired { client, mq } => write!(f, "pull-expired {client} {mq}"),
            RemovalDeferred { client, mq, listener_until, attempts } => write!(
                f,
                "removal-deferred {client} {mq}: the listener holds the consume lock until t={listener_until} (attempt {attempts})"
            ),
            OffsetIllegal { client, mq, next } => write!(f, "offset-illegal {client} {mq} next={next}"),
            SendRefused { msg, broker, topic, queue_id, attempt, reason } => {
                write!(f, "send-refused m{msg} {broker} {topic}:{queue_id} attempt={attempt}: {reason}")
            }
            SendFailed { msg, attempts, reason } => write!(f, "send-failed m{msg} after {attempts} attempts: {reason}"),
            BudgetExceeded { budget, reached } => write!(
                f,
                "memory-budget-exceeded: the model holds {reached} bytes, over its budget of {budget} bytes: the run stops here"
            ),
        }
    }
}

impl Event {
    /// A short kind name for filtering logs in the UI and CLI.
    pub fn kind(&self) -> &'static str {
        use Event::*;
        match self {
            Command { .. } => "command",
            ConsumerStarted { .. } | ConsumerStopped { .. } | StartFailed { .. } => "lifecycle",
            Subscribed { .. } | SubVersionBumped { .. } => "subscription",
            HeartbeatSent { .. }
            | HeartbeatApplied { .. }
            | ChannelExpired { .. }
            | Unregistered { .. }
            | FilterRegistered { .. } => "heartbeat",
            NotifyReceived { .. } | RebalanceRun { .. } | Allocated { .. } | AllocateFailed { .. } | QueueLocked { .. } => {
                "rebalance"
            }
            MessageStored { .. } => "store",
            PullServed { .. } | PullHeld { .. } => "pull",
            BrokerFiltered { .. } | ClientFiltered { .. } => "filter",
            Consumed { .. } | ConsumeFailed { .. } | ResultsDiscarded { .. } => "consume",
            SentBack { .. } | MovedToDlq { .. } => "retry",
            OffsetCommitted { .. } => "offset",
            QueueCountChanged { .. } | SnapshotQueue { .. } => "command",
            RouteNotFound { .. } | PullExpired { .. } | RemovalDeferred { .. } => "rebalance",
            OffsetIllegal { .. } => "pull",
            TagHashCollision { .. } => "filter",
            SendRefused { .. } | SendFailed { .. } => "store",
            BudgetExceeded { .. } => "command",
        }
    }

    /// The message this event is about, for provenance.
    pub fn message(&self) -> Option<MsgId> {
        use Event::*;
        match self {
            MessageStored { msg, .. }
            | BrokerFiltered { msg, .. }
            | ClientFiltered { msg, .. }
            | TagHashCollision { msg, .. }
            | SendRefused { msg, .. }
            | SendFailed { msg, .. }
            | Consumed { msg, .. }
            | ConsumeFailed { msg, .. }
            | SentBack { msg, .. }
            | MovedToDlq { msg, .. } => Some(*msg),
            _ => None,
        }
    }
}
