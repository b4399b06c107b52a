//! Client-side state of one push consumer (`DefaultMQPushConsumerImpl` + `RebalanceImpl`).

use mqviz_engine::vec_map::VecMap;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::allocate::Strategy;
use super::events::{MsgId, Name};
use super::filterapi::SubscriptionData;
use super::identity::{Incarnation, ProcessQueueId, PullRequestId};
use super::types::{ConsumeFromWhere, MessageModel, MessageQueue};
use crate::scenario::{ConsumeResultPolicy, ConsumerSpec, StartFailurePolicy};
use mqviz_engine::Millis;

/// `ProcessQueue.REBALANCE_LOCK_MAX_LIVE_TIME`: an orderly queue whose lock was not renewed for
/// this long is not consumed until it is locked again.
pub const PQ_LOCK_MAX_LIVE: Millis = 30_000;
/// `rocketmq.client.pull.pullMaxIdleTime`: a ProcessQueue whose pull chain has been silent this
/// long is dropped and re-created by the next rebalance (`isPullExpired`).
pub const PULL_MAX_IDLE: Millis = 120_000;

/// A pull RPC in flight: its id and the subscription captured when it was sent. The response is
/// re-filtered with this subscription, not with whatever the consumer subscribes when it arrives
/// (`pullMessage`'s callback closes over the SubscriptionData it read).
#[derive(Clone, Debug)]
pub struct OutstandingPull {
    pub id: PullRequestId,
    pub subscription: Arc<SubscriptionData>,
}

/// Where an orderly queue's consume task is (`ConsumeMessageOrderlyService.ConsumeRequest`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OrderlyTask {
    /// No task runs or waits: the next pulled message starts one.
    #[default]
    Idle,
    /// The listener runs on `msg` and returns at `until`, holding the ProcessQueue's consume lock.
    Listening { msg: MsgId, started_at: Millis, until: Millis },
    /// A task is scheduled (after SUSPEND_CURRENT_QUEUE_A_MOMENT or a lock retry); the consume
    /// lock is free meanwhile.
    Waiting,
}

/// `ProcessQueue`: what the client holds for one allocated queue. Its `id` is its identity; a
/// queue removed and added again is a new ProcessQueue with a new id.
#[derive(Clone, Debug)]
pub struct ProcessQueue {
    pub id: ProcessQueueId,
    pub created_at: Millis,
    pub dropped: bool,
    /// `PullRequest.nextOffset`.
    pub next_offset: u64,
    /// Messages pulled and not yet consumed, by queue offset.
    pub in_flight: BTreeMap<u64, MsgId>,
    /// Largest queue offset ever put into this queue (`queueOffsetMax`).
    pub max_offset: Option<u64>,
    pub outstanding_pull: Option<OutstandingPull>,
    /// The broker's error for the last pull, until one succeeds (the request retries every 3 s).
    pub last_pull_error: Option<&'static str>,
    /// `lastPullTimestamp`, set each time the pull request runs.
    pub last_pull_at: Millis,
    /// Orderly: `locked` and `lastLockTimestamp` (the broker lock as this client last saw it).
    pub locked: bool,
    pub last_lock_at: Millis,
    /// Orderly: `PullRequest.previouslyLocked` (the first pull re-reads the offset from the broker).
    pub previously_locked: bool,
    pub orderly_task: OrderlyTask,
    /// Orderly: local re-consume attempts per message (SUSPEND_CURRENT_QUEUE_A_MOMENT).
    pub local_reconsume: VecMap<MsgId, u32>,
    /// Orderly: `tryUnlockTimes`, removals refused because the listener held the consume lock.
    pub try_unlock_times: u32,
    /// Orderly: removal waits for the running listener (`tryLock(500 ms)`) and completes when it
    /// returns.
    pub removal_waits_for_listener: bool,
}

impl ProcessQueue {
    pub fn new(id: ProcessQueueId, next_offset: u64, now: Millis) -> Self {
        ProcessQueue {
            id,
            created_at: now,
            dropped: false,
            next_offset,
            in_flight: BTreeMap::new(),
            max_offset: None,
            outstanding_pull: None,
            last_pull_error: None,
            last_pull_at: now,
            locked: true,
            last_lock_at: now,
            previously_locked: false,
            orderly_task: OrderlyTask::Idle,
            local_reconsume: VecMap::new(),
            try_unlock_times: 0,
            removal_waits_for_listener: false,
        }
    }

    /// `ProcessQueue.removeMessage`: the smallest offset still in flight, else max + 1.
    pub fn committed_offset(&self) -> Option<u64> {
        match self.in_flight.keys().next() {
            Some(o) => Some(*o),
            None => self.max_offset.map(|m| m + 1),
        }
    }

    /// `isPullExpired`: the pull chain has been silent for longer than `pullMaxIdleTime`.
    pub fn pull_expired(&self, now: Millis) -> bool {
        now.saturating_sub(self.last_pull_at) > PULL_MAX_IDLE
    }

    /// `isLocked() && !isLockExpired()`: an orderly consume task may run.
    pub fn lock_usable(&self, now: Millis) -> bool {
        self.locked && now.saturating_sub(self.last_lock_at) <= PQ_LOCK_MAX_LIVE
    }

    /// The orderly listener runs now (it holds the consume lock).
    pub fn listener_running(&self) -> bool {
        matches!(self.orderly_task, OrderlyTask::Listening { .. })
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsumerStats {
    pub pulls: u64,
    pub pulled: u64,
    pub client_filtered: u64,
    pub consumed: u64,
    pub failed: u64,
    pub retried: u64,
    /// Orderly SUSPEND_CURRENT_QUEUE_A_MOMENT re-consumes (never sent back by default).
    pub local_retries: u64,
    /// Listener runs whose result was discarded because their ProcessQueue was dropped meanwhile.
    pub discarded: u64,
}

/// The RebalanceService loop of this client (5.x): when the next run is due and what the last
/// one found.
#[derive(Clone, Debug, Default)]
pub struct RebalanceService {
    /// Bumped whenever the wake-up time changes: an older scheduled run is ignored.
    pub generation: u32,
    /// `lastRebalanceTimestamp` (initialised when the client instance is built, i.e. at start).
    pub last_run_at: Millis,
    /// When the scheduled run will happen.
    pub next_run_at: Millis,
    /// A topic of the last run came out unbalanced (allocation ≠ working queues): the next run
    /// follows after `minInterval` instead of 20 s.
    pub unbalanced: bool,
    /// Runs since this start: none yet means its queues are not allocated yet, which is no
    /// fault (a consumer's first rebalance follows its start by up to a second).
    pub runs: u32,
}

#[derive(Clone, Debug)]
pub struct Consumer {
    /// The scenario's name for this consumer: unique, unlike the clientId.
    pub name: Name,
    pub client_id: Name,
    pub group: Name,
    pub spec: ConsumerSpec,
    pub model: MessageModel,
    pub consume_from_where: ConsumeFromWhere,
    /// `consumeTimestamp` for CONSUME_FROM_TIMESTAMP; `None` = start − 30 min.
    pub consume_timestamp: Option<Millis>,
    pub orderly: bool,
    pub strategy: Strategy,
    pub strategy_name: &'static str,
    pub latency: Millis,
    pub running: bool,
    pub incarnation: Incarnation,
    /// Incarnations that ended in a crash, and when: their in-flight listeners died with the process.
    pub crashed_incarnations: Vec<(Incarnation, Millis)>,
    pub channel: Name,
    pub started_at: Millis,
    /// `subscriptionInner`: topic-keyed, including `%RETRY%<group>` in CLUSTERING.
    pub subs: VecMap<String, Arc<SubscriptionData>>,
    /// `topicSubscribeInfoTable`, refreshed from the name server every 30 s.
    pub routes: VecMap<String, Vec<MessageQueue>>,
    pub pqs: VecMap<MessageQueue, ProcessQueue>,
    /// The offset store's in-memory table (remote for CLUSTERING).
    pub offsets: VecMap<MessageQueue, u64>,
    /// BROADCASTING: `LocalFileOffsetStore`, which survives restarts.
    pub local_offsets: VecMap<MessageQueue, u64>,
    pub rebalance: RebalanceService,
    /// The last stop was a crash (no unregister), not a graceful shutdown.
    pub crashed: bool,
    /// Why the last `start()` threw, if it did.
    pub start_error: Option<String>,
    pub stats: ConsumerStats,
}

impl Consumer {
    pub fn fails(&self, reconsume_times: u32) -> bool {
        match self.spec.result {
            ConsumeResultPolicy::Success => false,
            ConsumeResultPolicy::AlwaysFail => true,
            ConsumeResultPolicy::FailTimes(n) => reconsume_times < n,
        }
    }

    /// The subscriptions as `topic=expr` for logs and heartbeats.
    pub fn subscription_summary(&self) -> String {
        let parts: Vec<String> = self.subs.values().map(|s| format!("{}={}@{}", s.topic, s.sub_string, s.sub_version)).collect();
        format!("[{}]", parts.join(","))
    }

    /// Whether the process that ran `incarnation` died (a crash), so its listeners never returned.
    pub fn crashed_in(&self, incarnation: Incarnation) -> bool {
        self.crash_time(incarnation).is_some()
    }

    /// When `incarnation` crashed, if it did.
    pub fn crash_time(&self, incarnation: Incarnation) -> Option<Millis> {
        self.crashed_incarnations.iter().find(|(i, _)| *i == incarnation).map(|(_, t)| *t)
    }

    /// The application keeps a consumer whose `start()` threw.
    pub fn ignores_start_failure(&self) -> bool {
        self.spec.on_start_failure == StartFailurePolicy::Ignore
    }

    /// The live ProcessQueue of `mq` if it is the one `id` names.
    pub fn pq(&self, mq: &MessageQueue, id: ProcessQueueId) -> Option<&ProcessQueue> {
        self.pqs.get(mq).filter(|pq| pq.id == id)
    }

    pub fn pq_mut(&mut self, mq: &MessageQueue, id: ProcessQueueId) -> Option<&mut ProcessQueue> {
        self.pqs.get_mut(mq).filter(|pq| pq.id == id)
    }
}
