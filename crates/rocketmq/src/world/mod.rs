//! The RocketMQ world: name server, brokers, producers and push consumers driven by one event
//! queue. `handle_*` methods are the transitions; each runs at one logical instant.
//!
//! Every reply that arrives later (pull responses, consume completions, timers, lock retries)
//! carries the identity of what it belongs to (`identity.rs`) and is checked against it before
//! it changes state.
//!
//! Layout: an `Action` is at most 24 bytes (asserted), with rare or wide payloads boxed in
//! `wide`; a send burst's arrivals queue as one run; the message and fate columns are reserved
//! for the scenario's planned sends within the memory budget (`planned_messages`), because a
//! doubling vector copies itself in wasm. `budget.rs` estimates the model's memory and stops a
//! run cleanly at `memoryBudgetMb`.

use mqviz_engine::vec_map::{VecMap, VecSet};
use std::sync::Arc;

use super::allocate::{self, Strategy};
use super::broker::{BloomCheck, Broker, FilterCostSample, HeldFilter, HeldPull, PullRequest, SqlFilter};
use super::consumer::{Consumer, ConsumerStats, OrderlyTask, OutstandingPull, ProcessQueue, RebalanceService};
use super::events::{Event, MsgId, Name, PullStatus};
use super::filter;
use super::filterapi::{self, ExpressionType, SubscriptionData};
use super::group_info::TableChange;
use super::identity::{IdSource, Incarnation, LockGrantId, ProcessQueueId, PullRequestId};
use super::producer_index::ThreadLocalIndex;
use super::store::{Message, Shape};
use crate::scenario::{self, AllocationSpec, ConsumerSpec, Scenario, SendSpec, StartIndex, SubscriptionSpec, TimedAction};
use crate::sql92::Verdict;
use crate::types::{is_retry_topic, retry_topic, ConsumeFromWhere, MessageModel, MessageQueue};
use mqviz_engine::hash::java_string_hash;
use mqviz_engine::{BitSet, Burst, Chunked, EventId, EventQueue, Millis, SplitMix64};
use mqviz_model::Fate;

pub use budget::{BudgetStop, DEFAULT_MEMORY_BUDGET};
pub use records::{ConsumptionRecord, DropReason, OffsetCommit, OffsetWriter, PqRecord, SendFailure};

pub mod budget;
mod commands;
mod consume;
mod heartbeat;
mod locks;
mod offsets;
mod oneway;
mod produce;
mod pull;
mod rebalance;
pub mod records;
pub mod snapshot;

pub const HEARTBEAT_INTERVAL: Millis = 30_000;
pub const FIRST_HEARTBEAT_DELAY: Millis = 1_000;
pub const REBALANCE_INTERVAL: Millis = 20_000;
pub const ROUTE_REFRESH_INTERVAL: Millis = 30_000;
pub const PERSIST_INTERVAL: Millis = 5_000;
pub const FIRST_PERSIST_DELAY: Millis = 10_000;
pub const CHANNEL_EXPIRED_TIMEOUT: Millis = 120_000;
pub const EXPIRY_SCAN_INTERVAL: Millis = 10_000;
pub const HOLD_CHECK_INTERVAL: Millis = 5_000;
pub const BROKER_SUSPEND_MAX: Millis = 15_000;
pub const PULL_DELAY_ON_EXCEPTION: Millis = 3_000;
pub const PULL_DELAY_FLOW_CONTROL: Millis = 50;
pub const PULL_BATCH_SIZE: usize = 32;
pub const MAX_SCAN_ENTRIES: u64 = 800; // max(16000, 32*20) / 20 bytes per CQ entry
pub const CACHED_MESSAGES_THRESHOLD: usize = 1000;
pub const MAX_RECONSUME_TIMES: u32 = 16;
pub const LOCK_EXPIRY: Millis = 60_000;
pub const LOCK_RENEW_INTERVAL: Millis = 20_000;
/// `lockMQPeriodically` starts 1 s after the orderly service starts, then every 20 s.
pub const FIRST_LOCK_RENEW_DELAY: Millis = 1_000;
pub const SUSPEND_ORDERLY: Millis = 1_000;
/// `tryLockLaterAndReconsume`: resume 10 ms after a successful re-lock, 3 s after a failed one.
pub const ORDERLY_RELOCK_DELAY: Millis = 10;
pub const ORDERLY_RELOCK_RETRY: Millis = 3_000;
/// `tryRemoveOrderMessageQueue`: the consume lock is awaited this long before removal gives up.
pub const CONSUME_LOCK_WAIT: Millis = 500;
/// `UNLOCK_DELAY_TIME_MILLS`: a dropped orderly queue last locked longer ago than this is removed
/// without waiting for the consume lock.
pub const UNLOCK_DELAY: Millis = 20_000;
/// RebalanceService `minInterval` (5.x): runs are at least this far apart, and an unbalanced run
/// is followed by another after this long.
pub const REBALANCE_MIN_INTERVAL: Millis = 1_000;
/// `rebalanceLater(500)` after an orderly lock failed (5.x).
pub const REBALANCE_LATER_ON_LOCK_FAILURE: Millis = 500;
/// Default `consumeTimestamp`: half an hour before the consumer started.
pub const DEFAULT_CONSUME_TIMESTAMP_BEFORE_START: Millis = 30 * 60_000;
/// `retryTimesWhenSendFailed` = 2: a synchronous send makes up to 3 attempts.
pub const SYNC_SEND_ATTEMPTS: u32 = 3;
/// `messageDelayLevel` "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h".
pub const DELAY_LEVELS_MS: [Millis; 18] = [
    1_000, 5_000, 10_000, 30_000, 60_000, 120_000, 180_000, 240_000, 300_000, 360_000, 420_000, 480_000, 540_000, 600_000,
    1_200_000, 1_800_000, 3_600_000, 7_200_000,
];

/// A ProcessQueue as a reply names it: the consumer, its incarnation, the queue and the
/// ProcessQueue object. A reply whose `pq` is no longer the queue's live ProcessQueue is stale.
#[derive(Clone, Debug)]
pub(crate) struct PqRef {
    c: usize,
    inc: Incarnation,
    mq: MessageQueue,
    pq: ProcessQueueId,
}

/// The periodic tasks of a client instance (`MQClientInstance.startScheduledTask`,
/// `RebalanceService`, `ConsumeMessageOrderlyService.lockMQPeriodically`), one enum so that each
/// is checked against the consumer's incarnation in one place and re-armed there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConsumerTimer {
    Heartbeat,
    /// A RebalanceService run; `generation` must still be current (a wake-up supersedes it).
    Rebalance {
        generation: u32,
    },
    Persist,
    RouteRefresh,
    LockRenew,
}

// Actions in flight (pulls, consume completions, heartbeats) are queued one entry each, so the
// queue's memory is about this size times the actions in flight.
const _: () = assert!(std::mem::size_of::<Action>() <= 24);

#[derive(Clone, Debug)]
enum Action {
    /// Boxed, as the other wide payloads below: the queue moves every action a few times, and
    /// the common ones (pulls, consume completions) are small.
    Command(Box<scenario::Action>),
    ProduceNext {
        producer: u32,
        send: u32,
        i: u32,
    },
    /// A send attempt reaches the broker (`SendMessageProcessor`, msgCheck first). Queued, it
    /// stands for `count` messages with consecutive ids (a burst); dispatched, `count` is 1.
    StoreArrive {
        msg: MsgId,
        attempt: u32,
        count: u32,
    },
    /// The broker refused a synchronous send; the producer retries on another queue.
    SendRefused(Box<wide::SendRefused>),
    ConsumerTimer {
        c: u32,
        inc: Incarnation,
        timer: ConsumerTimer,
    },
    HeartbeatArrive(Box<wide::HeartbeatArrive>),
    NotifyArrive {
        c: usize,
        inc: Incarnation,
    },
    /// `rebalanceLater(delay)`: wakes the RebalanceService.
    RebalanceWakeUp {
        c: usize,
        inc: Incarnation,
    },
    ConsumerListArrive(Box<wide::ConsumerListArrive>),
    ConsumerListReply(Box<wide::ConsumerListReply>),
    PullSend {
        pq: Box<PqRef>,
    },
    PullArrive {
        broker: usize,
        req: Box<PullRequest>,
    },
    PullResponse(Box<wide::PullResponse>),
    HoldCheck {
        broker: usize,
    },
    ConsumeDone(Box<wide::ConsumeDone>),
    /// An orderly consume task starts (`submitConsumeRequestLater` / after a lock retry).
    OrderlyResume {
        pq: Box<PqRef>,
    },
    /// `tryLockLaterAndReconsume`: lock the queue again, then resume.
    OrderlyRelock {
        pq: Box<PqRef>,
    },
    OrderlyConsumeDone {
        pq: Box<PqRef>,
        msg: MsgId,
    },
    /// A one-way request (offset commit, unlock) reaches its broker.
    OnewayArrive {
        id: u64,
    },
    SendBackArrive(Box<wide::SendBackArrive>),
    RetryDeliver {
        msg: MsgId,
    },
    ExpiryScan {
        broker: usize,
    },
    UnregisterArrive(Box<wide::UnregisterArrive>),
}

/// A burst of sends schedules the arrivals of consecutive message ids, one attempt each, at one
/// instant: the queue keeps them as one `StoreArrive` whose `count` covers them all.
impl Burst for Action {
    fn absorb(&mut self, next: &Self) -> bool {
        let (Action::StoreArrive { msg, attempt, count }, Action::StoreArrive { msg: next_msg, attempt: next_attempt, count: 1 }) =
            (self, next)
        else {
            return false;
        };
        let continues = attempt == next_attempt && msg.checked_add(*count) == Some(*next_msg);
        if continues {
            *count += 1;
        }
        continues
    }

    fn split_first(&mut self) -> Option<Self> {
        match self {
            Action::StoreArrive { msg, attempt, count } if *count > 1 => {
                let first = Action::StoreArrive { msg: *msg, attempt: *attempt, count: 1 };
                *msg += 1;
                *count -= 1;
                Some(first)
            }
            _ => None,
        }
    }
}

/// The payloads of the rarer or wider actions, boxed so that an `Action` stays small: the queue
/// holds one per message in flight.
mod wide {
    use super::*;

    #[derive(Clone, Debug)]
    pub struct SendRefused {
        pub msg: MsgId,
        pub attempt: u32,
        pub reason: String,
    }

    #[derive(Clone, Debug)]
    pub struct HeartbeatArrive {
        pub broker: usize,
        pub c: usize,
        pub inc: Incarnation,
        pub subs: Vec<Arc<SubscriptionData>>,
    }

    #[derive(Clone, Debug)]
    pub struct ConsumerListArrive {
        pub broker: usize,
        pub c: usize,
        pub inc: Incarnation,
        pub topic: String,
    }

    #[derive(Clone, Debug)]
    pub struct ConsumerListReply {
        pub c: usize,
        pub inc: Incarnation,
        pub topic: String,
        pub cids: Option<Vec<String>>,
    }

    #[derive(Clone, Debug)]
    pub struct PullResponse {
        pub pq: PqRef,
        pub pull: PullRequestId,
        pub status: PullStatus,
        pub next: u64,
        pub msgs: Vec<MsgId>,
    }

    #[derive(Clone, Debug)]
    pub struct ConsumeDone {
        pub pq: PqRef,
        pub msgs: Vec<MsgId>,
        pub started_at: Millis,
    }

    #[derive(Clone, Debug)]
    pub struct SendBackArrive {
        pub broker: usize,
        pub msg: MsgId,
        pub group: Name,
    }

    #[derive(Clone, Debug)]
    pub struct UnregisterArrive {
        pub broker: usize,
        pub channel: Name,
        pub group: Name,
        pub client: Name,
    }
}

/// One entry of a group's subscription-table history on one broker.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub at: Millis,
    pub broker: String,
    pub topic: String,
    /// added | overwritten | removed
    pub change: &'static str,
    pub by_client: String,
    pub old_expression: Option<String>,
    pub old_sub_version: Option<u64>,
    pub new_expression: Option<String>,
    pub new_sub_version: Option<u64>,
    pub event: u32,
}

/// A topic's publish queue list: (broker index, queue id) in selection order.
pub type PublishQueues = Arc<Vec<(usize, u32)>>;

#[derive(Clone, Debug)]
pub struct ProducerState {
    pub id: Name,
    /// TopicPublishInfo per topic and when it was fetched: refreshed every 30 s like the client's.
    pub routes: VecMap<String, (Millis, PublishQueues)>,
    pub start_index: StartIndex,
    /// The send scripts: the scenario's, then any added by `produce` commands.
    pub sends: Vec<Arc<SendSpec>>,
    /// Interned topic, tag and body template of each send script.
    pub send_topics: Vec<Name>,
    pub send_tags: Vec<Option<Name>>,
    pub send_bodies: Vec<Name>,
    /// The shape of each send script's messages, once it has produced one.
    pub shapes: Vec<Option<Arc<Shape>>>,
    pub indexes: VecMap<String, ThreadLocalIndex>,
    pub latency: Millis,
    pub sent: u64,
}

/// The whole simulation state: a plain value, cloneable as a checkpoint.
#[derive(Clone, Debug)]
pub struct World {
    pub scenario: Arc<Scenario>,
    pub now: Millis,
    queue: EventQueue<Action>,
    pub(crate) log_store: super::log::Log,
    rng: SplitMix64,
    ids: IdSource,
    pub brokers: Vec<Broker>,
    pub producers: Vec<ProducerState>,
    pub consumers: Vec<Consumer>,
    pub messages: Vec<Message>,
    /// What became of each message (indexed by message id), for the cells of the canvas.
    pub fates: Vec<Fate>,
    /// Why a skipped message was skipped, where that is more than a tag mismatch (SQL92 verdicts).
    pub skip_notes: VecMap<MsgId, &'static str>,
    /// Tags in order of first use: a tag's index is its colour key.
    pub tag_keys: Vec<Name>,
    /// Neutral partition id -> (broker, topic, queue id); ids are given in order of creation.
    pub partitions: Vec<(usize, Name, u32)>,
    pub history: VecMap<String, Vec<HistoryEntry>>,
    /// Every listener run that consumed a message, in order (the duplicate report reads it).
    pub consumptions: Chunked<ConsumptionRecord>,
    /// Every ProcessQueue ever created, indexed by its id − 1.
    pub process_queues: Vec<PqRecord>,
    /// Sends that failed for good (every attempt refused): the message was never stored.
    pub send_failures: Vec<SendFailure>,
    /// One-way requests still on their way to a broker (oneway.rs).
    oneway: Vec<oneway::OnewayRpc>,
    next_oneway: u64,
    /// The offset commits of the last step only (cleared when a step starts): what the
    /// simulation tests' offset invariant reads without scanning every broker after each step.
    pub recent_commits: Vec<OffsetCommit>,
    channel_owner: VecMap<Name, (usize, Incarnation)>,
    handler_cause: Option<EventId>,
    last_emitted: Option<EventId>,
    /// Group name -> message model, from the scenario and added consumers.
    group_models: VecMap<String, MessageModel>,
    /// Keep per-message events (provenance). Benchmarks may turn this off.
    pub trace_messages: bool,
    /// Bytes the run may hold (`memory_bytes`); past it the run stops (budget.rs).
    pub memory_budget: u64,
    /// Set when the budget stopped the run.
    pub budget_stop: Option<BudgetStop>,
    steps: u64,
    /// Messages `0..snapshot_messages` were in the queues at t=0 (snapshot.rs).
    pub snapshot_messages: MsgId,
    /// Per group (scenario order), the offsets it had committed at t=0 by partition id.
    snapshot_committed: VecMap<String, VecMap<u32, u64>>,
    /// Some group's members were running at t=0 (snapshot.rs `sub_version_now`).
    snapshot_members_restored: bool,
}

fn strategy_from(spec: &AllocationSpec) -> Strategy {
    match spec {
        AllocationSpec::Avg => Strategy::Avg,
        AllocationSpec::AvgByCircle => Strategy::AvgByCircle,
        AllocationSpec::ConsistentHash { virtual_nodes } => Strategy::ConsistentHash { virtual_nodes: *virtual_nodes },
        AllocationSpec::Config { queues } => Strategy::Config {
            queues: queues
                .iter()
                .filter_map(|q| {
                    let (topic_broker, id) = q.rsplit_once(':')?;
                    let id: u32 = id.parse().ok()?;
                    // "topic:broker:id" or "broker:id" (topic filled in at allocation time).
                    match topic_broker.split_once(':') {
                        Some((t, b)) => Some(MessageQueue::new(t, b, id)),
                        None => Some(MessageQueue::new("", topic_broker, id)),
                    }
                })
                .collect(),
        },
        AllocationSpec::MachineRoom { consumer_idcs } => {
            Strategy::MachineRoom { consumer_idcs: consumer_idcs.iter().cloned().collect() }
        }
        AllocationSpec::MachineRoomNearby { inner } => Strategy::MachineRoomNearby { inner: Box::new(strategy_from(inner)) },
    }
}

fn name(s: &str) -> Name {
    Arc::from(s)
}

/// The per-message records reserved up front: the scenario's sends say how many messages there
/// will be, and a vector that grows by doubling copies itself (always in wasm, where realloc
/// cannot remap: at 10 M messages that copy was 8% of the wasm benchmark) and holds old and new
/// buffers side by side at its peak. Room that is never written costs address space, not memory.
/// Capped by the memory budget: a run stops before its message records alone outgrow it, so more
/// room would never be used.
fn planned_messages(scenario: &Scenario, memory_budget: u64) -> usize {
    let sends =
        scenario.producers.iter().flat_map(|p| &p.sends).map(|s| u64::from(s.count)).sum::<u64>() + scenario.snapshot_messages();
    let most = memory_budget / (std::mem::size_of::<Message>() + std::mem::size_of::<Fate>()) as u64;
    sends.min(most) as usize
}

/// An empty vector with room for `n`, or less room if the allocator says no (the run then grows
/// it as usual and the memory budget speaks if it must).
fn reserved<T>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    let _ = v.try_reserve_exact(n);
    v
}

impl World {
    /// Builds the initial state and schedules the scenario's producers and timeline.
    pub fn new(scenario: Scenario) -> World {
        let scenario = Arc::new(scenario);
        let mut brokers: Vec<Broker> = scenario.brokers.iter().map(Broker::new).collect();
        for t in &scenario.topics {
            for b in brokers.iter_mut() {
                if t.brokers.is_empty() || t.brokers.iter().any(|n| **n == *b.name) {
                    b.ensure_topic(&t.name, t.queues);
                }
            }
        }
        let mut rng = SplitMix64::new(scenario.seed);
        let producers = scenario
            .producers
            .iter()
            .map(|p| ProducerState {
                id: name(&p.id),
                routes: VecMap::new(),
                start_index: p.start_index,
                sends: p.sends.iter().cloned().map(Arc::new).collect(),
                send_topics: p.sends.iter().map(|s| name(&s.topic)).collect(),
                send_tags: p.sends.iter().map(|s| s.tag.as_deref().map(name)).collect(),
                send_bodies: p.sends.iter().map(|s| name(&s.body)).collect(),
                shapes: Vec::new(),
                indexes: VecMap::new(),
                latency: p.latency_ms.unwrap_or(scenario.latency_ms),
                sent: 0,
            })
            .collect();
        let mut group_models = VecMap::new();
        let mut consumers = Vec::new();
        for g in &scenario.groups {
            group_models.insert(g.name.clone(), g.message_model);
            for c in &g.consumers {
                consumers.push(Self::make_consumer(&scenario, &g.name, c));
            }
        }
        // Producer start indexes drawn once, in scenario order, from the seeded RNG.
        let mut producer_states: Vec<ProducerState> = producers;
        for (i, p) in scenario.producers.iter().enumerate() {
            if p.start_index == StartIndex::Random {
                let v = rng.next_i32();
                for s in &p.sends {
                    producer_states[i].indexes.entry(s.topic.clone()).or_insert(ThreadLocalIndex::with_stored(v));
                }
            }
        }
        let memory_budget = mqviz_engine::budget::budget_bytes(scenario.memory_budget_mb);
        let mut w = World {
            scenario: scenario.clone(),
            now: 0,
            queue: EventQueue::default(),
            log_store: Default::default(),
            rng,
            ids: IdSource::default(),
            brokers,
            producers: producer_states,
            consumers,
            messages: reserved(planned_messages(&scenario, memory_budget)),
            fates: reserved(planned_messages(&scenario, memory_budget)),
            skip_notes: VecMap::new(),
            tag_keys: Vec::new(),
            partitions: Vec::new(),
            history: VecMap::new(),
            consumptions: Chunked::default(),
            process_queues: Vec::new(),
            send_failures: Vec::new(),
            oneway: Vec::new(),
            next_oneway: 0,
            recent_commits: Vec::new(),
            channel_owner: VecMap::new(),
            handler_cause: None,
            last_emitted: None,
            group_models,
            trace_messages: true,
            memory_budget,
            budget_stop: None,
            steps: 0,
            snapshot_messages: 0,
            snapshot_committed: VecMap::new(),
            snapshot_members_restored: false,
        };
        for b in 0..w.brokers.len() {
            let topics: Vec<String> = w.brokers[b].cqs.keys().cloned().collect();
            for t in topics {
                w.assign_partition_ids(b, &t);
            }
        }
        w.restore_snapshot();
        for (pi, p) in scenario.producers.iter().enumerate() {
            for (si, s) in p.sends.iter().enumerate() {
                if s.count > 0 {
                    w.queue.push(s.at, None, Action::ProduceNext { producer: pi as u32, send: si as u32, i: 0 });
                }
            }
        }
        for a in &scenario.timeline {
            w.queue.push(a.at, None, Action::Command(Box::new(a.action.clone())));
        }
        for b in 0..w.brokers.len() {
            w.queue.push(EXPIRY_SCAN_INTERVAL, None, Action::ExpiryScan { broker: b });
            w.queue.push(HOLD_CHECK_INTERVAL, None, Action::HoldCheck { broker: b });
        }
        w
    }

    fn make_consumer(scenario: &Scenario, group: &str, spec: &ConsumerSpec) -> Consumer {
        let g = scenario.groups.iter().find(|g| g.name == group);
        let allocation = g.map(|g| g.allocation.clone()).unwrap_or(AllocationSpec::Avg);
        Consumer {
            name: name(&spec.name),
            client_id: name(&spec.client_id),
            group: name(group),
            spec: spec.clone(),
            model: g.map(|g| g.message_model).unwrap_or(MessageModel::Clustering),
            consume_from_where: g.map(|g| g.consume_from_where).unwrap_or(ConsumeFromWhere::LastOffset),
            consume_timestamp: g.and_then(|g| g.consume_timestamp),
            orderly: g.map(|g| g.orderly).unwrap_or(false),
            strategy: strategy_from(&allocation),
            strategy_name: allocation.name(),
            latency: spec.latency_ms.unwrap_or(scenario.latency_ms),
            running: false,
            incarnation: Incarnation::default(),
            crashed_incarnations: Vec::new(),
            channel: name(""),
            started_at: 0,
            subs: VecMap::new(),
            routes: VecMap::new(),
            pqs: VecMap::new(),
            offsets: VecMap::new(),
            local_offsets: VecMap::new(),
            rebalance: RebalanceService::default(),
            crashed: false,
            start_error: None,
            stats: ConsumerStats::default(),
        }
    }

    /// The event log, decoded on reading (`log.rs` keeps it compact).
    pub fn log(&self) -> super::log::LogView<'_> {
        super::log::LogView { log: &self.log_store, world: self }
    }

    pub(crate) fn log_store_kind(&self, i: usize) -> &'static str {
        self.log_store.kind(i)
    }

    pub(crate) fn log_store_message(&self, i: usize) -> Option<MsgId> {
        self.log_store.message(i)
    }

    /// Time of the next scheduled event, if any.
    pub fn next_event_time(&self) -> Option<Millis> {
        self.queue.peek_time()
    }

    /// Events run since the world was built.
    pub fn events_run(&self) -> u64 {
        self.queue.popped()
    }

    /// Number of scheduled events not yet run.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Enters a command at the current time (or later): the UI's edits go through here.
    pub fn handle_command(&mut self, cmd: TimedAction) {
        let at = cmd.at.max(self.now);
        self.queue.push(at, None, Action::Command(Box::new(cmd.action)));
    }

    /// Runs the next event if it is due at or before `limit`. Returns false when none is.
    pub fn step_until(&mut self, limit: Millis) -> bool {
        let Some(s) = self.queue.pop_due(limit) else { return false };
        self.now = s.at;
        self.handler_cause = s.cause;
        self.last_emitted = None;
        self.recent_commits.clear();
        self.dispatch(s.action);
        self.check_budget();
        true
    }

    /// Runs every event up to and including `t`, then sets the clock to `t`.
    pub fn run_until(&mut self, t: Millis) {
        while self.step_until(t) {}
        self.now = self.now.max(t);
    }

    /// Runs the scenario to its `until`.
    pub fn run_to_end(&mut self) {
        let until = self.scenario.until;
        self.run_until(until);
    }

    /// Gives every queue of `topic` on broker `b` that has none its neutral partition id.
    fn assign_partition_ids(&mut self, b: usize, topic: &str) {
        let Some(cqs) = self.brokers[b].cqs.get_mut(topic) else { return };
        let name: Name = Name::from(topic);
        for (q, cq) in cqs.iter_mut().enumerate() {
            if cq.pid.is_none() {
                cq.pid = Some(self.partitions.len() as u32);
                self.partitions.push((b, name.clone(), q as u32));
            }
        }
    }

    /// The colour key of a tag, given in order of first use.
    pub(super) fn tag_key(&mut self, tag: Option<&Name>) -> u32 {
        let Some(tag) = tag else { return mqviz_model::NO_KEY };
        match self.tag_keys.iter().position(|t| t == tag) {
            Some(i) => i as u32,
            None => {
                self.tag_keys.push(tag.clone());
                (self.tag_keys.len() - 1) as u32
            }
        }
    }

    /// Records what an event means for its message's fate. A consumption is final; a skip does
    /// not undo it (another group may still skip a message this one consumed).
    fn update_fate(&mut self, kind: &Event) {
        let (m, fate) = match kind {
            Event::Consumed { msg, .. } => (*msg, Fate::Consumed),
            Event::BrokerFiltered { msg, .. } | Event::ClientFiltered { msg, .. } => (*msg, Fate::Skipped),
            Event::SentBack { msg, .. } => (*msg, Fate::Retrying),
            Event::MovedToDlq { msg, .. } => (*msg, Fate::DeadLettered),
            _ => return,
        };
        let verdict = match kind {
            Event::BrokerFiltered { verdict, .. } => *verdict,
            _ => None,
        };
        self.mark_fate(m, fate, verdict);
    }

    /// Records what became of `m`'s root message (a consumption is never overwritten), and a
    /// SQL92 verdict that skipped it.
    fn mark_fate(&mut self, m: MsgId, fate: Fate, verdict: Option<&'static str>) {
        let root = self.messages.get(m as usize).map(|x| x.root()).unwrap_or(m) as usize;
        if self.fates.len() <= root {
            return;
        }
        if self.fates[root] != Fate::Consumed || fate == Fate::Consumed {
            self.fates[root] = fate;
        }
        if let Some(v) = verdict {
            self.skip_notes.insert(root as MsgId, v);
        }
    }

    fn emit(&mut self, kind: Event) -> EventId {
        self.update_fate(&kind);
        let id = self.log_store.push(&self.messages, &self.brokers, self.now, self.handler_cause, kind);
        self.last_emitted = Some(id);
        id
    }

    /// `emit(MessageStored)` for a message just stored, read back from its record: the stores are
    /// as many as the messages, so this skips building the event.
    fn emit_stored(&mut self, msg: MsgId) -> EventId {
        let id = self.log_store.push_stored(self.now, self.handler_cause, msg);
        self.last_emitted = Some(id);
        id
    }

    /// `emit(Consumed)` by consumer `c`, without building the event when the log can hold it as a slot.
    fn emit_consumed(&mut self, c: usize, msg: MsgId, reconsume_times: u32) -> EventId {
        let client = &self.consumers[c].client_id;
        match self.log_store.push_consumed(self.now, self.handler_cause, msg, client, reconsume_times) {
            Some(id) => {
                self.mark_fate(msg, Fate::Consumed, None);
                self.last_emitted = Some(id);
                id
            }
            None => self.emit(Event::Consumed { msg, client: client.clone(), reconsume_times }),
        }
    }

    /// `emit(ClientFiltered)`, without building the event when the log can hold it as a slot.
    fn emit_client_filtered(&mut self, msg: MsgId, client: &Name, expression: &Name, current: Option<&Name>) -> EventId {
        match self.log_store.push_client_filtered(self.now, self.handler_cause, msg, client, expression, current) {
            Some(id) => {
                self.mark_fate(msg, Fate::Skipped, None);
                self.last_emitted = Some(id);
                id
            }
            None => self.emit(Event::ClientFiltered {
                msg,
                client: client.clone(),
                expression: expression.to_string(),
                current: current.map(|c| c.to_string()),
            }),
        }
    }

    /// `emit(PullServed)`, without building the event when the log can hold it as a slot.
    fn emit_pull_served(&mut self, pull: &super::log::PullServedRef) -> EventId {
        match self.log_store.push_pull_served(self.now, self.handler_cause, pull) {
            Some(id) => {
                self.last_emitted = Some(id);
                id
            }
            None => self.emit(pull.to_event()),
        }
    }

    /// `emit(BrokerFiltered)` for each message a pull's scan skipped, with the names interned once.
    fn emit_broker_filtered(
        &mut self,
        skipped: &[(MsgId, Option<&'static str>)],
        client: &Name,
        expression: &Name,
        table_owner: &Name,
    ) {
        let names = self.log_store.filter_names(client, expression, table_owner);
        for &(msg, verdict) in skipped {
            let slot = names.and_then(|n| self.log_store.push_broker_filtered(self.now, self.handler_cause, msg, n, verdict));
            match slot {
                Some(id) => {
                    self.mark_fate(msg, Fate::Skipped, verdict);
                    self.last_emitted = Some(id);
                }
                None => {
                    self.emit(Event::BrokerFiltered {
                        msg,
                        client: client.clone(),
                        expression: expression.to_string(),
                        table_owner: table_owner.clone(),
                        verdict,
                    });
                }
            }
        }
    }

    fn schedule(&mut self, delay: Millis, action: Action) {
        let cause = self.last_emitted.or(self.handler_cause);
        self.queue.push(self.now + delay, cause, action);
    }

    fn consumer_alive(&self, c: usize, inc: Incarnation) -> bool {
        self.consumers.get(c).is_some_and(|x| x.running && x.incarnation == inc)
    }

    /// The live, not dropped ProcessQueue a reply names (and its consumer still running).
    fn live_pq(&self, r: &PqRef) -> Option<&ProcessQueue> {
        if !self.consumer_alive(r.c, r.inc) {
            return None;
        }
        self.consumers[r.c].pq(&r.mq, r.pq).filter(|pq| !pq.dropped)
    }

    fn broker_index(&self, broker_name: &str) -> Option<usize> {
        self.brokers.iter().position(|b| &*b.name == broker_name)
    }

    /// Each arm is one call: the transitions live in the files named after their concern.
    fn dispatch(&mut self, action: Action) {
        match action {
            Action::Command(cmd) => self.handle_command_now(*cmd),
            Action::ProduceNext { producer, send, i } => self.handle_produce(producer as usize, send as usize, i),
            Action::StoreArrive { msg, attempt, .. } => self.handle_store_arrive(msg, attempt),
            Action::SendRefused(a) => {
                let wide::SendRefused { msg, attempt, reason } = *a;
                self.handle_send_refused(msg, attempt, reason)
            }
            Action::ConsumerTimer { c, inc, timer } => self.on_consumer_timer(c as usize, inc, timer),
            Action::HeartbeatArrive(a) => {
                let wide::HeartbeatArrive { broker, c, inc, subs } = *a;
                self.handle_heartbeat(broker, c, inc, subs)
            }
            Action::NotifyArrive { c, inc } => self.handle_notify(c, inc),
            Action::RebalanceWakeUp { c, inc } => self.handle_rebalance_wake_up(c, inc),
            Action::ConsumerListArrive(a) => {
                let wide::ConsumerListArrive { broker, c, inc, topic } = *a;
                self.handle_consumer_list_request(broker, c, inc, topic)
            }
            Action::ConsumerListReply(a) => {
                let wide::ConsumerListReply { c, inc, topic, cids } = *a;
                self.handle_consumer_list_reply(c, inc, topic, cids)
            }
            Action::PullSend { pq } => self.handle_pull_send(*pq),
            Action::PullArrive { broker, req } => self.handle_pull_arrive(broker, *req),
            Action::PullResponse(a) => {
                let wide::PullResponse { pq, pull, status, next, msgs } = *a;
                self.handle_pull_response(pq, pull, status, next, msgs)
            }
            Action::HoldCheck { broker } => self.handle_hold_check(broker),
            Action::ConsumeDone(a) => {
                let wide::ConsumeDone { pq, msgs, started_at } = *a;
                self.handle_consume_done(pq, msgs, started_at)
            }
            Action::OrderlyResume { pq } => self.handle_orderly_resume(*pq),
            Action::OrderlyRelock { pq } => self.handle_orderly_relock(*pq),
            Action::OrderlyConsumeDone { pq, msg } => self.handle_orderly_done(*pq, msg),
            Action::OnewayArrive { id } => self.handle_oneway_arrive(id),
            Action::SendBackArrive(a) => {
                let wide::SendBackArrive { broker, msg, group } = *a;
                self.handle_send_back(broker, msg, group)
            }
            Action::RetryDeliver { msg } => self.handle_store(msg),
            Action::ExpiryScan { broker } => self.handle_expiry_scan(broker),
            Action::UnregisterArrive(a) => {
                let wide::UnregisterArrive { broker, channel, group, client } = *a;
                self.handle_unregister(broker, &channel, &group, client)
            }
        }
    }

    /// A periodic task of a client instance: runs only for the incarnation that armed it, then re-arms.
    fn on_consumer_timer(&mut self, c: usize, inc: Incarnation, timer: ConsumerTimer) {
        if !self.consumer_alive(c, inc) {
            return;
        }
        let next = match timer {
            ConsumerTimer::Heartbeat => {
                self.send_heartbeat(c);
                HEARTBEAT_INTERVAL
            }
            ConsumerTimer::Rebalance { generation } => {
                if self.consumers[c].rebalance.generation != generation {
                    return;
                }
                // The next run is armed by the run itself (20 s, or 1 s when unbalanced).
                self.run_rebalance(c);
                return;
            }
            ConsumerTimer::Persist => {
                self.persist_offsets(c);
                PERSIST_INTERVAL
            }
            ConsumerTimer::RouteRefresh => {
                self.refresh_routes(c);
                ROUTE_REFRESH_INTERVAL
            }
            ConsumerTimer::LockRenew => {
                self.renew_locks(c);
                LOCK_RENEW_INTERVAL
            }
        };
        self.schedule(next, Action::ConsumerTimer { c: c as u32, inc, timer });
    }

    fn find_consumer(&self, consumer_name: &str) -> Option<usize> {
        self.consumers.iter().position(|c| &*c.name == consumer_name)
    }
}

/// Whether a message counts for a group: retry and DLQ copies count as their origin.
pub fn is_system_topic(topic: &str) -> bool {
    is_retry_topic(topic) || topic.starts_with("%DLQ%")
}
