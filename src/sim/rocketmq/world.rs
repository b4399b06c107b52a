//! The RocketMQ world: name server, brokers, producers and push consumers driven by one event
//! queue. `handle_*` methods are the transitions; each runs at one logical instant.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::allocate::{self, Strategy};
use super::broker::{Broker, FilterCostSample, HeldPull, PullRequest};
use super::consumer::{Consumer, ConsumerStats, ProcessQueue};
use super::events::{Event, MsgId, Name, PullStatus};
use super::filter;
use super::filterapi::{self, ExpressionType, SubscriptionData};
use super::group_info::TableChange;
use super::producer_index::ThreadLocalIndex;
use super::sql92::Verdict;
use super::store::{Body, Message};
use super::types::{is_retry_topic, retry_topic, ConsumeFromWhere, MessageModel, MessageQueue};
use crate::sim::engine::{EventId, EventLog, EventQueue, Millis, SplitMix64};
use crate::sim::hash::java_string_hash;
use crate::sim::scenario::{self, AllocationSpec, ConsumerSpec, Scenario, SendSpec, StartIndex, SubscriptionSpec, TimedAction};

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
pub const SUSPEND_ORDERLY: Millis = 1_000;
/// `messageDelayLevel` "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h".
pub const DELAY_LEVELS_MS: [Millis; 18] = [
    1_000, 5_000, 10_000, 30_000, 60_000, 120_000, 180_000, 240_000, 300_000, 360_000, 420_000, 480_000, 540_000, 600_000,
    1_200_000, 1_800_000, 3_600_000, 7_200_000,
];

#[derive(Clone, Debug)]
enum Action {
    Command(scenario::Action),
    ProduceNext { producer: usize, send: usize, i: u32 },
    StoreArrive { msg: MsgId },
    HeartbeatTick { c: usize, inc: u32 },
    HeartbeatArrive { broker: usize, c: usize, inc: u32, subs: Vec<SubscriptionData> },
    NotifyArrive { c: usize, inc: u32 },
    RebalanceTick { c: usize, inc: u32, gen: u64 },
    ConsumerListArrive { broker: usize, c: usize, inc: u32, topic: String },
    ConsumerListReply { c: usize, inc: u32, topic: String, cids: Option<Vec<String>> },
    PullSend { c: usize, inc: u32, mq: MessageQueue },
    PullArrive { broker: usize, req: PullRequest },
    PullResponse { c: usize, inc: u32, mq: MessageQueue, status: PullStatus, next: u64, msgs: Vec<MsgId> },
    HoldCheck { broker: usize },
    ConsumeDone { c: usize, inc: u32, mq: MessageQueue, msgs: Vec<MsgId> },
    OrderlyConsumeDone { c: usize, inc: u32, mq: MessageQueue, msg: MsgId },
    PersistTick { c: usize, inc: u32 },
    OffsetCommitArrive { broker: usize, group: Name, mq: MessageQueue, offset: u64 },
    RouteRefresh { c: usize, inc: u32 },
    SendBackArrive { broker: usize, msg: MsgId, group: Name },
    RetryDeliver { msg: MsgId },
    ExpiryScan { broker: usize },
    UnregisterArrive { broker: usize, channel: Name, group: Name, client: Name },
    LockRenew { c: usize, inc: u32 },
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
    pub routes: BTreeMap<String, (Millis, PublishQueues)>,
    pub start_index: StartIndex,
    /// The send scripts: the scenario's, then any added by `produce` commands.
    pub sends: Vec<Arc<SendSpec>>,
    /// Interned topic, tag and body template of each send script.
    pub send_topics: Vec<Name>,
    pub send_tags: Vec<Option<Name>>,
    pub send_bodies: Vec<Name>,
    pub indexes: BTreeMap<String, ThreadLocalIndex>,
    pub latency: Millis,
    pub sent: u64,
}

/// The whole simulation state: a plain value, cloneable as a checkpoint.
#[derive(Clone, Debug)]
pub struct World {
    pub scenario: Arc<Scenario>,
    pub now: Millis,
    queue: EventQueue<Action>,
    pub log: EventLog<Event>,
    rng: SplitMix64,
    pub brokers: Vec<Broker>,
    pub producers: Vec<ProducerState>,
    pub consumers: Vec<Consumer>,
    pub messages: Vec<Message>,
    /// (message, log event) pairs: the provenance index.
    pub msg_events: Vec<(MsgId, EventId)>,
    pub history: BTreeMap<String, Vec<HistoryEntry>>,
    channel_owner: BTreeMap<Name, (usize, u32)>,
    handler_cause: Option<EventId>,
    last_emitted: Option<EventId>,
    /// Group name -> message model, from the scenario and added consumers.
    group_models: BTreeMap<String, MessageModel>,
    /// Keep per-message events (provenance). Benchmarks may turn this off.
    pub trace_messages: bool,
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
            Strategy::MachineRoom { consumer_idcs: consumer_idcs.iter().cloned().collect::<BTreeSet<_>>() }
        }
        AllocationSpec::MachineRoomNearby { inner } => Strategy::MachineRoomNearby { inner: Box::new(strategy_from(inner)) },
    }
}

fn name(s: &str) -> Name {
    Arc::from(s)
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
                routes: BTreeMap::new(),
                start_index: p.start_index.clone(),
                sends: p.sends.iter().cloned().map(Arc::new).collect(),
                send_topics: p.sends.iter().map(|s| name(&s.topic)).collect(),
                send_tags: p.sends.iter().map(|s| s.tag.as_deref().map(name)).collect(),
                send_bodies: p.sends.iter().map(|s| name(&s.body)).collect(),
                indexes: BTreeMap::new(),
                latency: p.latency_ms.unwrap_or(scenario.latency_ms),
                sent: 0,
            })
            .collect();
        let mut group_models = BTreeMap::new();
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
        let mut w = World {
            scenario: scenario.clone(),
            now: 0,
            queue: EventQueue::default(),
            log: EventLog::default(),
            rng,
            brokers,
            producers: producer_states,
            consumers,
            messages: Vec::new(),
            msg_events: Vec::new(),
            history: BTreeMap::new(),
            channel_owner: BTreeMap::new(),
            handler_cause: None,
            last_emitted: None,
            group_models,
            trace_messages: true,
        };
        for (pi, p) in scenario.producers.iter().enumerate() {
            for (si, s) in p.sends.iter().enumerate() {
                if s.count > 0 {
                    w.queue.push(s.at, None, Action::ProduceNext { producer: pi, send: si, i: 0 });
                }
            }
        }
        for a in &scenario.timeline {
            w.queue.push(a.at, None, Action::Command(a.action.clone()));
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
            client_id: name(&spec.client_id),
            group: name(group),
            spec: spec.clone(),
            model: g.map(|g| g.message_model).unwrap_or(MessageModel::Clustering),
            consume_from_where: g.map(|g| g.consume_from_where).unwrap_or(ConsumeFromWhere::LastOffset),
            orderly: g.map(|g| g.orderly).unwrap_or(false),
            strategy: strategy_from(&allocation),
            strategy_name: allocation.name(),
            latency: spec.latency_ms.unwrap_or(scenario.latency_ms),
            running: false,
            incarnation: 0,
            channel: name(""),
            started_at: 0,
            subs: BTreeMap::new(),
            routes: BTreeMap::new(),
            pqs: BTreeMap::new(),
            offsets: BTreeMap::new(),
            local_offsets: BTreeMap::new(),
            rebalance_gen: 0,
            crashed: false,
            start_error: None,
            stats: ConsumerStats::default(),
            consumed: Vec::new(),
        }
    }

    // ----------------------------------------------------------------- engine plumbing

    /// Time of the next scheduled event, if any.
    pub fn next_event_time(&self) -> Option<Millis> {
        self.queue.peek_time()
    }

    /// Number of scheduled events not yet run.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Enters a command at the current time (or later): the UI's edits go through here.
    pub fn handle_command(&mut self, cmd: TimedAction) {
        let at = cmd.at.max(self.now);
        self.queue.push(at, None, Action::Command(cmd.action));
    }

    /// Runs the next event if it is due at or before `limit`. Returns false when none is.
    pub fn step_until(&mut self, limit: Millis) -> bool {
        match self.queue.peek_time() {
            Some(t) if t <= limit => {}
            _ => return false,
        }
        let Some(s) = self.queue.pop() else { return false };
        self.now = s.at;
        self.handler_cause = s.cause;
        self.last_emitted = None;
        self.dispatch(s.action);
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

    fn emit(&mut self, kind: Event) -> EventId {
        let msg = kind.message();
        let id = self.log.push(self.now, self.handler_cause, kind);
        if let Some(m) = msg {
            self.msg_events.push((m, id));
        }
        self.last_emitted = Some(id);
        id
    }

    fn schedule(&mut self, delay: Millis, action: Action) {
        let cause = self.last_emitted.or(self.handler_cause);
        self.queue.push(self.now + delay, cause, action);
    }

    fn consumer_alive(&self, c: usize, inc: u32) -> bool {
        self.consumers.get(c).is_some_and(|x| x.running && x.incarnation == inc)
    }

    fn broker_index(&self, broker_name: &str) -> Option<usize> {
        self.brokers.iter().position(|b| &*b.name == broker_name)
    }

    fn dispatch(&mut self, action: Action) {
        match action {
            Action::Command(cmd) => self.handle_command_now(cmd),
            Action::ProduceNext { producer, send, i } => self.handle_produce(producer, send, i),
            Action::StoreArrive { msg } => self.handle_store(msg),
            Action::HeartbeatTick { c, inc } => {
                if self.consumer_alive(c, inc) {
                    self.send_heartbeat(c);
                    self.schedule(HEARTBEAT_INTERVAL, Action::HeartbeatTick { c, inc });
                }
            }
            Action::HeartbeatArrive { broker, c, inc, subs } => self.handle_heartbeat(broker, c, inc, subs),
            Action::NotifyArrive { c, inc } => {
                if self.consumer_alive(c, inc) {
                    let (client, group) = (self.consumers[c].client_id.clone(), self.consumers[c].group.clone());
                    self.emit(Event::NotifyReceived { client, group });
                    self.rebalance_immediately(c);
                }
            }
            Action::RebalanceTick { c, inc, gen } => {
                if self.consumer_alive(c, inc) && self.consumers[c].rebalance_gen == gen {
                    self.run_rebalance(c);
                    self.schedule(REBALANCE_INTERVAL, Action::RebalanceTick { c, inc, gen });
                }
            }
            Action::ConsumerListArrive { broker, c, inc, topic } => {
                let group = self.consumers[c].group.clone();
                let cids = self.brokers[broker].groups.get(&*group).map(|g| g.all_client_ids()).filter(|ids| !ids.is_empty());
                let latency = self.consumers[c].latency;
                self.schedule(latency, Action::ConsumerListReply { c, inc, topic, cids });
            }
            Action::ConsumerListReply { c, inc, topic, cids } => {
                if self.consumer_alive(c, inc) {
                    self.rebalance_by_topic(c, &topic, cids);
                }
            }
            Action::PullSend { c, inc, mq } => self.handle_pull_send(c, inc, mq),
            Action::PullArrive { broker, req } => {
                if let Some((status, next, msgs)) = self.serve_pull(broker, &req, true) {
                    let latency = self.consumers[req.consumer].latency;
                    self.schedule(
                        latency,
                        Action::PullResponse { c: req.consumer, inc: req.incarnation, mq: req.mq, status, next, msgs },
                    );
                }
            }
            Action::PullResponse { c, inc, mq, status, next, msgs } => self.handle_pull_response(c, inc, mq, status, next, msgs),
            Action::HoldCheck { broker } => {
                self.check_held(broker, None);
                self.schedule(HOLD_CHECK_INTERVAL, Action::HoldCheck { broker });
            }
            Action::ConsumeDone { c, inc, mq, msgs } => self.handle_consume_done(c, inc, mq, msgs),
            Action::OrderlyConsumeDone { c, inc, mq, msg } => self.handle_orderly_done(c, inc, mq, msg),
            Action::PersistTick { c, inc } => {
                if self.consumer_alive(c, inc) {
                    self.persist_offsets(c);
                    self.schedule(PERSIST_INTERVAL, Action::PersistTick { c, inc });
                }
            }
            Action::OffsetCommitArrive { broker, group, mq, offset } => {
                self.brokers[broker].offsets.insert((mq.topic.clone(), group.to_string(), mq.queue_id), offset);
                let bname = self.brokers[broker].name.clone();
                self.emit(Event::OffsetCommitted { broker: bname, group, mq, offset });
            }
            Action::RouteRefresh { c, inc } => {
                if self.consumer_alive(c, inc) {
                    self.refresh_routes(c);
                    self.schedule(ROUTE_REFRESH_INTERVAL, Action::RouteRefresh { c, inc });
                }
            }
            Action::SendBackArrive { broker, msg, group } => self.handle_send_back(broker, msg, group),
            Action::RetryDeliver { msg } => self.handle_store(msg),
            Action::ExpiryScan { broker } => {
                self.scan_expired_channels(broker);
                self.schedule(EXPIRY_SCAN_INTERVAL, Action::ExpiryScan { broker });
            }
            Action::UnregisterArrive { broker, channel, group, client } => {
                self.handle_unregister(broker, &channel, &group, client)
            }
            Action::LockRenew { c, inc } => {
                if self.consumer_alive(c, inc) {
                    self.renew_locks(c);
                    self.schedule(LOCK_RENEW_INTERVAL, Action::LockRenew { c, inc });
                }
            }
        }
    }

    fn find_consumer(&self, client_id: &str) -> Option<usize> {
        self.consumers.iter().position(|c| &*c.client_id == client_id)
    }

    // ----------------------------------------------------------------- commands

    fn handle_command_now(&mut self, cmd: scenario::Action) {
        let text = describe_action(&cmd);
        self.emit(Event::Command { text });
        match cmd {
            scenario::Action::StartConsumer { client_id } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    self.start_consumer(c);
                }
            }
            scenario::Action::StopConsumer { client_id } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    self.stop_consumer(c, true);
                }
            }
            scenario::Action::CrashConsumer { client_id } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    self.stop_consumer(c, false);
                }
            }
            scenario::Action::AddConsumer { group, consumer } => {
                if self.find_consumer(&consumer.client_id).is_some() {
                    return;
                }
                let mut made = Self::make_consumer(&self.scenario, &group, &consumer);
                // A consumer added later adopts the group's current strategy.
                if let Some(other) = self.consumers.iter().find(|x| *x.group == *group) {
                    made.strategy = other.strategy.clone();
                    made.strategy_name = other.strategy_name;
                }
                self.group_models.entry(group.clone()).or_insert(made.model);
                self.consumers.push(made);
                let c = self.consumers.len() - 1;
                if consumer.start_at.is_some() {
                    self.start_consumer(c);
                }
            }
            scenario::Action::Subscribe { client_id, subscription } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    let spec = &mut self.consumers[c].spec;
                    spec.subscriptions.retain(|s| s.topic != subscription.topic);
                    spec.subscriptions.push(subscription.clone());
                    if self.consumers[c].running {
                        self.subscribe(c, &subscription);
                        self.send_heartbeat(c);
                    }
                }
            }
            scenario::Action::Unsubscribe { client_id, topic } => {
                if let Some(c) = self.find_consumer(&client_id) {
                    self.consumers[c].spec.subscriptions.retain(|s| s.topic != topic);
                    self.consumers[c].subs.remove(&topic);
                }
            }
            scenario::Action::SetQueueCount { topic, queues } => {
                for b in self.brokers.iter_mut() {
                    if b.topics.contains_key(&topic) {
                        b.set_queue_count(&topic, queues);
                    }
                }
                self.emit(Event::QueueCountChanged { topic: name(&topic), queues });
            }
            scenario::Action::Produce { producer, send } => {
                if let Some(p) = self.producers.iter().position(|x| *x.id == *producer) {
                    let ps = &mut self.producers[p];
                    ps.send_topics.push(name(&send.topic));
                    ps.send_tags.push(send.tag.as_deref().map(name));
                    ps.send_bodies.push(name(&send.body));
                    let count = send.count;
                    ps.sends.push(Arc::new(send));
                    let s = ps.sends.len() - 1;
                    if count > 0 {
                        self.schedule(0, Action::ProduceNext { producer: p, send: s, i: 0 });
                    }
                }
            }
            scenario::Action::SetAllocation { group, allocation } => {
                let strategy = strategy_from(&allocation);
                for c in self.consumers.iter_mut().filter(|c| *c.group == *group) {
                    c.strategy = strategy.clone();
                    c.strategy_name = allocation.name();
                }
            }
        }
    }

    fn subscribe(&mut self, c: usize, s: &SubscriptionSpec) {
        let now = self.now;
        let sd = match filterapi::build(&s.topic, Some(&s.expression), s.expression_type.as_deref(), now) {
            Ok(sd) => sd,
            Err(e) => {
                // The real client throws from subscribe(); the subscription is simply not added.
                let client = self.consumers[c].client_id.clone();
                self.emit(Event::AllocateFailed { client, topic: name(&s.topic), reason: format!("subscribe rejected: {e}") });
                return;
            }
        };
        let client = self.consumers[c].client_id.clone();
        self.emit(Event::Subscribed { client, topic: name(&s.topic), expression: s.expression.clone(), sub_version: now });
        self.consumers[c].subs.insert(s.topic.clone(), sd);
    }

    /// `MQClientInstance.checkClientInBroker` (CHECK_CLIENT_CONFIG): a non-TAG subscription must
    /// compile on every broker of its topic, and needs `enablePropertyFilter=true`, or start fails.
    fn check_client_in_broker(&self, c: usize) -> Result<(), String> {
        for s in &self.consumers[c].spec.subscriptions {
            let Some(t) = s.expression_type.as_deref() else { continue };
            for b in self.brokers.iter().filter(|b| b.topics.contains_key(&s.topic)) {
                if !b.enable_property_filter {
                    return Err(format!(
                        "{} does not support {t} filtering (enablePropertyFilter=false), so subscribing {} with {:?} makes start() throw",
                        b.name, s.topic, s.expression
                    ));
                }
                if let Err(e) = super::sql92::compile(&s.expression, b.filter_manager.config().sql92_version) {
                    return Err(format!("{} rejects the {t} expression for {}: {e}", b.name, s.topic));
                }
            }
        }
        Ok(())
    }

    fn start_consumer(&mut self, c: usize) {
        if self.consumers[c].running {
            return;
        }
        if let Err(reason) = self.check_client_in_broker(c) {
            let client = self.consumers[c].client_id.clone();
            self.consumers[c].start_error = Some(reason.clone());
            self.emit(Event::StartFailed { client, reason });
            return;
        }
        self.consumers[c].start_error = None;
        let now = self.now;
        {
            let con = &mut self.consumers[c];
            con.running = true;
            con.incarnation += 1;
            con.started_at = now;
            con.channel = name(&format!("{}#{}", con.client_id, con.incarnation));
            con.subs.clear();
            con.pqs.clear();
            con.offsets.clear();
            con.routes.clear();
        }
        let inc = self.consumers[c].incarnation;
        let channel = self.consumers[c].channel.clone();
        self.channel_owner.insert(channel.clone(), (c, inc));
        let client = self.consumers[c].client_id.clone();
        self.emit(Event::ConsumerStarted { client, channel });
        let subs = self.consumers[c].spec.subscriptions.clone();
        for s in &subs {
            self.subscribe(c, s);
        }
        if self.consumers[c].model == MessageModel::Clustering {
            let rt = retry_topic(&self.consumers[c].group);
            let sd = filterapi::build_subscription_data(&rt, Some("*"), now).expect("'*' always parses");
            self.consumers[c].subs.insert(rt, sd);
        }
        self.refresh_routes(c);
        self.send_heartbeat(c);
        self.rebalance_immediately(c);
        self.schedule(FIRST_HEARTBEAT_DELAY, Action::HeartbeatTick { c, inc });
        self.schedule(FIRST_PERSIST_DELAY, Action::PersistTick { c, inc });
        self.schedule(ROUTE_REFRESH_INTERVAL, Action::RouteRefresh { c, inc });
        if self.consumers[c].orderly {
            self.schedule(LOCK_RENEW_INTERVAL, Action::LockRenew { c, inc });
        }
    }

    fn stop_consumer(&mut self, c: usize, graceful: bool) {
        if !self.consumers[c].running {
            return;
        }
        if graceful {
            self.persist_offsets(c);
            let mqs: Vec<MessageQueue> = self.consumers[c].pqs.keys().cloned().collect();
            for mq in mqs {
                self.unlock_queue(c, &mq);
            }
            let (channel, group, client, latency) = {
                let con = &self.consumers[c];
                (con.channel.clone(), con.group.clone(), con.client_id.clone(), con.latency)
            };
            for b in 0..self.brokers.len() {
                self.schedule(
                    latency,
                    Action::UnregisterArrive {
                        broker: b,
                        channel: channel.clone(),
                        group: group.clone(),
                        client: client.clone(),
                    },
                );
            }
        }
        let con = &mut self.consumers[c];
        con.running = false;
        con.crashed = !graceful;
        for pq in con.pqs.values_mut() {
            pq.dropped = true;
        }
        con.pqs.clear();
        let client = con.client_id.clone();
        self.emit(Event::ConsumerStopped { client, graceful });
    }

    // ----------------------------------------------------------------- producers and store

    /// The publish queue list of a topic: brokers in name order, `0..writeQueueNums` each.
    pub fn publish_queues(&self, topic: &str) -> Vec<(usize, u32)> {
        let mut order: Vec<usize> = (0..self.brokers.len()).collect();
        order.sort_by(|a, b| super::types::java_str_cmp(&self.brokers[*a].name, &self.brokers[*b].name));
        let mut out = Vec::new();
        for b in order {
            if let Some((_, write)) = self.brokers[b].topics.get(topic) {
                for q in 0..*write {
                    out.push((b, q));
                }
            }
        }
        out
    }

    fn handle_produce(&mut self, p: usize, s: usize, i: u32) {
        let send = self.producers[p].sends[s].clone();
        let now = self.now;
        let fresh =
            self.producers[p].routes.get(&send.topic).filter(|(at, _)| now < at + ROUTE_REFRESH_INTERVAL).map(|(_, q)| q.clone());
        let queues = match fresh {
            Some(q) => q,
            None => {
                let q = Arc::new(self.publish_queues(&send.topic));
                self.producers[p].routes.insert(send.topic.clone(), (now, q.clone()));
                q
            }
        };
        if !queues.is_empty() {
            let start = match self.producers[p].start_index {
                StartIndex::Fixed(n) => n,
                StartIndex::Random => 0,
            };
            let index =
                self.producers[p].indexes.entry(send.topic.clone()).or_insert_with(|| ThreadLocalIndex::starting_at(start));
            let (broker, queue_id) = queues[index.select(queues.len())];
            let id = self.messages.len() as MsgId;
            let body = Body { template: self.producers[p].send_bodies[s].clone(), i };
            let tags_code = send.tag.as_deref().map(|t| java_string_hash(t) as i64).unwrap_or(0);
            self.messages.push(Message {
                id,
                topic: self.producers[p].send_topics[s].clone(),
                tag: self.producers[p].send_tags[s].clone(),
                tags_code,
                keys: send.keys.as_ref().map(|k| k.replace("{i}", &i.to_string())),
                properties: send.properties.clone(),
                body,
                producer: self.producers[p].id.clone(),
                born_at: self.now,
                broker,
                queue_id,
                queue_offset: 0,
                reconsume_times: 0,
                origin: None,
            });
            self.producers[p].sent += 1;
            let latency = self.producers[p].latency;
            self.schedule(latency, Action::StoreArrive { msg: id });
        }
        if i + 1 < send.count {
            let delay = match (send.times.get(i as usize), send.times.get(i as usize + 1)) {
                (Some(this), Some(next)) => next - this,
                _ => send.interval_ms,
            };
            self.schedule(delay, Action::ProduceNext { producer: p, send: s, i: i + 1 });
        }
    }

    fn handle_store(&mut self, msg: MsgId) {
        let (broker, topic, queue_id, tags_code) = {
            let m = &self.messages[msg as usize];
            (m.broker, m.topic.clone(), m.queue_id, m.tags_code)
        };
        let offset = self.brokers[broker].append(&topic, queue_id, msg, tags_code);
        if self.brokers[broker].enable_calc_filter_bitmap {
            self.calc_bitmap(broker, msg);
        }
        self.messages[msg as usize].queue_offset = offset;
        if self.trace_messages || self.messages[msg as usize].origin.is_some() {
            let tag = self.messages[msg as usize].tag.clone();
            let bname = self.brokers[broker].name.clone();
            self.emit(Event::MessageStored { msg, broker: bname, topic: topic.clone(), queue_id, offset, tag });
        }
        self.check_held(broker, Some((&topic, queue_id, tags_code)));
    }

    // ----------------------------------------------------------------- heartbeats and registry

    fn send_heartbeat(&mut self, c: usize) {
        let subs: Vec<SubscriptionData> = self.consumers[c].subs.values().cloned().collect();
        let (inc, latency) = (self.consumers[c].incarnation, self.consumers[c].latency);
        let summary = self.consumers[c].subscription_summary();
        let client = self.consumers[c].client_id.clone();
        for b in 0..self.brokers.len() {
            let broker = self.brokers[b].name.clone();
            self.emit(Event::HeartbeatSent { client: client.clone(), broker, subscriptions: summary.clone() });
            self.schedule(latency, Action::HeartbeatArrive { broker: b, c, inc, subs: subs.clone() });
        }
    }

    fn handle_heartbeat(&mut self, b: usize, c: usize, inc: u32, subs: Vec<SubscriptionData>) {
        // A heartbeat already on the wire still arrives after a crash; only a newer incarnation supersedes it.
        if self.consumers[c].incarnation != inc {
            return;
        }
        let now = self.now;
        let (group, client, channel, model) = {
            let con = &self.consumers[c];
            (con.group.clone(), con.client_id.clone(), con.channel.clone(), con.model)
        };
        let rt = retry_topic(&group);
        if model == MessageModel::Clustering {
            self.brokers[b].ensure_topic(&rt, 1);
        }
        let broker = &mut self.brokers[b];
        let info = broker.groups.entry(group.to_string()).or_default();
        info.message_model = Some(model);
        let r1 = info.update_channel(&channel, &client, now);
        let (r2, changes) = info.update_subscription(&subs);
        let notify = (r1 || r2) && model != MessageModel::Broadcasting;
        let mut texts = Vec::new();
        let mut hist = Vec::new();
        for ch in &changes {
            let (topic, change, old, new) = match ch {
                TableChange::Added { new } => (new.topic.clone(), "added", None, Some(new)),
                TableChange::Overwritten { old, new } => (new.topic.clone(), "overwritten", Some(old), Some(new)),
                TableChange::Removed { old } => (old.topic.clone(), "removed", Some(old), None),
                TableChange::KeptNewer { .. } => continue,
            };
            if new.is_some() {
                broker.table_writer.insert((group.to_string(), topic.clone()), client.clone());
            }
            texts.push(match (old, new) {
                (None, Some(n)) => format!("{topic} added {:?}@{}", n.sub_string, n.sub_version),
                (Some(o), Some(n)) => {
                    format!("{topic} {:?}@{} overwritten by {:?}@{}", o.sub_string, o.sub_version, n.sub_string, n.sub_version)
                }
                (Some(o), None) => format!("{topic} {:?}@{} removed", o.sub_string, o.sub_version),
                _ => continue,
            });
            hist.push(HistoryEntry {
                at: now,
                broker: broker.name.to_string(),
                topic,
                change,
                by_client: client.to_string(),
                old_expression: old.map(|o| o.sub_string.clone()),
                old_sub_version: old.map(|o| o.sub_version),
                new_expression: new.map(|n| n.sub_string.clone()),
                new_sub_version: new.map(|n| n.sub_version),
                event: 0,
            });
        }
        let channels: Vec<Name> = info.channels.iter().map(|ch| Name::from(ch.channel.as_str())).collect();
        let bname = broker.name.clone();
        let id = self.emit(Event::HeartbeatApplied { broker: bname, group: group.clone(), client, changes: texts, notify });
        for mut h in hist {
            h.event = id.0;
            self.history.entry(group.to_string()).or_default().push(h);
        }
        // REGISTER: the filter registry sees every heartbeat, and its cost is recorded.
        let broker = &mut self.brokers[b];
        let design = broker.filter_manager.design().name();
        let topics = &broker.topics;
        let cost = broker.filter_manager.register(&group, &subs, now.max(1), &|t| topics.contains_key(t));
        if cost.entries_touched > 0 || cost.topics_scanned > 0 || cost.compile_errors > 0 {
            broker.filter_costs.push(FilterCostSample { at: now, group: group.clone(), cost });
            let bname = broker.name.clone();
            self.emit(Event::FilterRegistered {
                broker: bname,
                group: group.clone(),
                client: self.consumers[c].client_id.clone(),
                design,
                cost: cost.to_string(),
            });
        }
        if notify {
            self.notify_channels(&channels);
        }
    }

    fn notify_channels(&mut self, channels: &[Name]) {
        for ch in channels {
            if let Some(&(c, inc)) = self.channel_owner.get(ch) {
                let latency = self.consumers[c].latency;
                self.schedule(latency, Action::NotifyArrive { c, inc });
            }
        }
    }

    fn handle_unregister(&mut self, b: usize, channel: &str, group: &str, client: Name) {
        let model = self.group_models.get(group).copied().unwrap_or(MessageModel::Clustering);
        let broker = &mut self.brokers[b];
        let Some(info) = broker.groups.get_mut(group) else { return };
        if !info.remove_channel(channel) {
            return;
        }
        let channels: Vec<Name> = info.channels.iter().map(|ch| Name::from(ch.channel.as_str())).collect();
        if info.channels.is_empty() {
            broker.groups.remove(group);
            // UNREGISTER: the group's filter data is marked dead (still served, cleaned after 24 h).
            broker.filter_manager.unregister(group, self.now.max(1));
        }
        let notify = model != MessageModel::Broadcasting;
        let bname = broker.name.clone();
        self.emit(Event::Unregistered { broker: bname, group: name(group), client, notify });
        if notify {
            self.notify_channels(&channels);
        }
    }

    fn scan_expired_channels(&mut self, b: usize) {
        let now = self.now;
        let mut expired = Vec::new();
        let broker = &mut self.brokers[b];
        for (group, info) in broker.groups.iter_mut() {
            let (gone, keep): (Vec<_>, Vec<_>) =
                info.channels.drain(..).partition(|ch| now.saturating_sub(ch.last_update) > CHANNEL_EXPIRED_TIMEOUT);
            info.channels = keep;
            for ch in gone {
                expired.push((group.clone(), ch));
            }
        }
        broker.groups.retain(|_, g| !g.channels.is_empty());
        broker.filter_manager.clean(now);
        let bname = broker.name.clone();
        for (group, ch) in expired {
            self.emit(Event::ChannelExpired {
                broker: bname.clone(),
                group: name(&group),
                client: name(&ch.client_id),
                channel: name(&ch.channel),
            });
        }
    }

    // ----------------------------------------------------------------- routes and rebalance

    fn route_of(&self, topic: &str) -> Vec<MessageQueue> {
        let mut out = Vec::new();
        for b in &self.brokers {
            if let Some((read, _)) = b.topics.get(topic) {
                for q in 0..*read {
                    out.push(MessageQueue::new(topic, &*b.name, q));
                }
            }
        }
        out
    }

    fn refresh_routes(&mut self, c: usize) {
        let topics: Vec<String> = self.consumers[c].subs.keys().cloned().collect();
        let mut routes = BTreeMap::new();
        for t in topics {
            let r = self.route_of(&t);
            if !r.is_empty() {
                routes.insert(t, r);
            }
        }
        self.consumers[c].routes = routes;
    }

    fn rebalance_immediately(&mut self, c: usize) {
        self.consumers[c].rebalance_gen += 1;
        let (inc, gen) = (self.consumers[c].incarnation, self.consumers[c].rebalance_gen);
        self.schedule(0, Action::RebalanceTick { c, inc, gen });
    }

    fn run_rebalance(&mut self, c: usize) {
        let client = self.consumers[c].client_id.clone();
        self.emit(Event::RebalanceRun { client });
        let topics: Vec<String> = self.consumers[c].subs.keys().cloned().collect();
        let inc = self.consumers[c].incarnation;
        let latency = self.consumers[c].latency;
        for topic in &topics {
            let Some(route) = self.consumers[c].routes.get(topic).cloned() else { continue };
            match self.consumers[c].model {
                MessageModel::Broadcasting => {
                    let set: BTreeSet<MessageQueue> = route.into_iter().collect();
                    self.apply_allocation(c, topic, set, Vec::new());
                }
                MessageModel::Clustering => {
                    // GET_CONSUMER_LIST_BY_GROUP goes to one broker of the topic, picked at random.
                    let brokers: BTreeSet<&str> = route.iter().map(|q| q.broker.as_str()).collect();
                    let brokers: Vec<&str> = brokers.into_iter().collect();
                    let pick = if brokers.len() > 1 { self.rng.below(brokers.len() as u64) as usize } else { 0 };
                    let Some(b) = self.broker_index(brokers[pick]) else { continue };
                    self.schedule(latency, Action::ConsumerListArrive { broker: b, c, inc, topic: topic.clone() });
                }
            }
        }
        // truncateMessageQueueNotMyTopic: no offset persist.
        let con = &mut self.consumers[c];
        let stale: Vec<MessageQueue> = con.pqs.keys().filter(|mq| !con.subs.contains_key(&mq.topic)).cloned().collect();
        for mq in stale {
            if let Some(mut pq) = con.pqs.remove(&mq) {
                pq.dropped = true;
            }
        }
    }

    fn rebalance_by_topic(&mut self, c: usize, topic: &str, cids: Option<Vec<String>>) {
        if !self.consumers[c].subs.contains_key(topic) {
            return;
        }
        let Some(route) = self.consumers[c].routes.get(topic).cloned() else { return };
        let client = self.consumers[c].client_id.clone();
        let Some(mut cid_all) = cids else {
            self.emit(Event::AllocateFailed { client, topic: name(topic), reason: "no consumer list for this group".into() });
            return;
        };
        let mut mq_all = route;
        mq_all.sort();
        cid_all.sort_by(|a, b| super::types::java_str_cmp(a, b));
        let mut strategy = self.consumers[c].strategy.clone();
        if let Strategy::Config { queues } = &mut strategy {
            for q in queues.iter_mut() {
                if q.topic.is_empty() {
                    q.topic = topic.to_string();
                }
            }
            queues.retain(|q| q.topic == topic);
        }
        match allocate::allocate(&strategy, &client, &mq_all, &cid_all) {
            Ok(result) => {
                let set: BTreeSet<MessageQueue> = result.into_iter().collect();
                self.apply_allocation(c, topic, set, cid_all);
            }
            Err(e) => {
                self.emit(Event::AllocateFailed { client, topic: name(topic), reason: e.to_string() });
            }
        }
    }

    /// `updateProcessQueueTableInRebalance` + `messageQueueChanged`.
    fn apply_allocation(&mut self, c: usize, topic: &str, set: BTreeSet<MessageQueue>, cid_all: Vec<String>) {
        let owned: Vec<MessageQueue> = self.consumers[c].pqs.keys().filter(|mq| mq.topic == topic).cloned().collect();
        let mut removed = Vec::new();
        for mq in &owned {
            if !set.contains(mq) {
                // removeUnnecessaryMessageQueue: persist now, forget the offset.
                self.persist_one(c, mq);
                self.unlock_queue(c, mq);
                let con = &mut self.consumers[c];
                if let Some(mut pq) = con.pqs.remove(mq) {
                    pq.dropped = true;
                }
                con.offsets.remove(mq);
                removed.push(mq.queue_id);
            }
        }
        let mut added = Vec::new();
        let inc = self.consumers[c].incarnation;
        for mq in &set {
            if self.consumers[c].pqs.contains_key(mq) {
                continue;
            }
            if self.consumers[c].orderly && self.consumers[c].model == MessageModel::Clustering && !self.lock_queue(c, mq) {
                continue;
            }
            let next = self.compute_pull_from_where(c, mq);
            let con = &mut self.consumers[c];
            con.offsets.remove(mq);
            con.pqs.insert(mq.clone(), ProcessQueue { next_offset: next, ..ProcessQueue::default() });
            added.push(mq.queue_id);
            self.schedule(0, Action::PullSend { c, inc, mq: mq.clone() });
        }
        let changed = !added.is_empty() || !removed.is_empty();
        let queues: Vec<u32> = set.iter().map(|q| q.queue_id).collect();
        let client = self.consumers[c].client_id.clone();
        let strategy = self.consumers[c].strategy_name;
        self.emit(Event::Allocated { client: client.clone(), topic: name(topic), strategy, cid_all, queues, added, removed });
        if changed {
            // messageQueueChanged (both message models): subVersion := now, heartbeat now. This
            // is what makes "who wins the table" move with every rebalance.
            let now = self.now;
            if let Some(sd) = self.consumers[c].subs.get_mut(topic) {
                sd.sub_version = now;
                self.emit(Event::SubVersionBumped { client, topic: name(topic), sub_version: now });
            }
            self.send_heartbeat(c);
        }
    }

    fn compute_pull_from_where(&mut self, c: usize, mq: &MessageQueue) -> u64 {
        let con = &self.consumers[c];
        let Some(b) = self.broker_index(&mq.broker) else { return 0 };
        let broker = &self.brokers[b];
        let max = broker.max_offset(&mq.topic, mq.queue_id);
        if con.model == MessageModel::Broadcasting {
            if let Some(o) = con.local_offsets.get(mq) {
                return *o;
            }
            return match con.consume_from_where {
                ConsumeFromWhere::LastOffset => max,
                ConsumeFromWhere::FirstOffset => 0,
                ConsumeFromWhere::Timestamp => 0,
            };
        }
        if let Some(o) = broker.committed(&mq.topic, &con.group, mq.queue_id) {
            return o;
        }
        // A new group on a young queue (min offset 0, entry 0 still hot): the broker answers 0
        // for every policy, so CONSUME_FROM_LAST_OFFSET re-reads the whole history.
        0
    }

    // ----------------------------------------------------------------- orderly locks

    fn lock_queue(&mut self, c: usize, mq: &MessageQueue) -> bool {
        let Some(b) = self.broker_index(&mq.broker) else { return false };
        let now = self.now;
        let (group, client) = (self.consumers[c].group.to_string(), self.consumers[c].client_id.clone());
        let key = (group, mq.clone());
        let granted = match self.brokers[b].locks.get(&key) {
            None => true,
            Some((holder, at)) => *holder == *client || now.saturating_sub(*at) > LOCK_EXPIRY,
        };
        if granted {
            self.brokers[b].locks.insert(key, (client.to_string(), now));
        }
        self.emit(Event::QueueLocked { client, mq: mq.clone(), granted });
        granted
    }

    fn unlock_queue(&mut self, c: usize, mq: &MessageQueue) {
        if !self.consumers[c].orderly {
            return;
        }
        let Some(b) = self.broker_index(&mq.broker) else { return };
        let key = (self.consumers[c].group.to_string(), mq.clone());
        if self.brokers[b].locks.get(&key).is_some_and(|(h, _)| *h == *self.consumers[c].client_id) {
            self.brokers[b].locks.remove(&key);
        }
    }

    fn renew_locks(&mut self, c: usize) {
        let mqs: Vec<MessageQueue> = self.consumers[c].pqs.keys().cloned().collect();
        for mq in mqs {
            if !self.lock_queue(c, &mq) {
                if let Some(pq) = self.consumers[c].pqs.get_mut(&mq) {
                    pq.dropped = true;
                }
                self.consumers[c].pqs.remove(&mq);
            }
        }
    }

    // ----------------------------------------------------------------- pulls

    fn handle_pull_send(&mut self, c: usize, inc: u32, mq: MessageQueue) {
        if !self.consumer_alive(c, inc) {
            return;
        }
        let con = &self.consumers[c];
        let Some(pq) = con.pqs.get(&mq) else { return };
        if pq.dropped {
            return;
        }
        if pq.in_flight.len() > CACHED_MESSAGES_THRESHOLD {
            self.schedule(PULL_DELAY_FLOW_CONTROL, Action::PullSend { c, inc, mq });
            return;
        }
        let Some(sd) = con.subs.get(&mq.topic) else {
            self.schedule(PULL_DELAY_ON_EXCEPTION, Action::PullSend { c, inc, mq });
            return;
        };
        let commit_offset =
            if con.model == MessageModel::Clustering { con.offsets.get(&mq).copied().filter(|o| *o > 0) } else { None };
        let req = PullRequest {
            consumer: c,
            incarnation: inc,
            mq: mq.clone(),
            offset: pq.next_offset,
            sub_version: sd.sub_version,
            commit_offset,
        };
        let latency = con.latency;
        self.consumers[c].stats.pulls += 1;
        let Some(b) = self.broker_index(&mq.broker) else { return };
        self.schedule(latency, Action::PullArrive { broker: b, req });
    }

    /// `PullMessageProcessor.processRequest`. Returns `None` when the request is held.
    fn serve_pull(&mut self, b: usize, req: &PullRequest, allow_suspend: bool) -> Option<(PullStatus, u64, Vec<MsgId>)> {
        let c = req.consumer;
        let group = self.consumers[c].group.clone();
        let client = self.consumers[c].client_id.clone();
        let mq = &req.mq;
        let broker = &self.brokers[b];
        let bname = broker.name.clone();
        let error = |w: &mut World, code: &'static str| {
            w.emit(Event::PullServed {
                broker: bname.clone(),
                client: client.clone(),
                mq: mq.clone(),
                offset: req.offset,
                next: req.offset,
                status: PullStatus::Error(code),
                found: 0,
                expression: None,
            });
            Some((PullStatus::Error(code), req.offset, Vec::new()))
        };
        let Some((read, _)) = broker.topics.get(&mq.topic).copied() else { return error(self, "TOPIC_NOT_EXIST") };
        if mq.queue_id >= read {
            return error(self, "SYSTEM_ERROR");
        }
        let Some(info) = broker.groups.get(&*group) else { return error(self, "SUBSCRIPTION_NOT_EXIST") };
        let Some(sub) = info.subscription_table.get(&mq.topic).cloned() else { return error(self, "SUBSCRIPTION_NOT_EXIST") };
        if sub.sub_version < req.sub_version {
            return error(self, "SUBSCRIPTION_NOT_LATEST");
        }
        let writer = broker.table_writer.get(&(group.to_string(), mq.topic.clone())).cloned().unwrap_or_else(|| name("?"));
        let sql = match &sub.expression_type {
            ExpressionType::Tag => None,
            ExpressionType::Other(t) if t == "SQL92" => {
                if !broker.enable_property_filter {
                    return error(self, "SYSTEM_ERROR");
                }
                // The filter data registered by heartbeats, not the table entry, is what evaluates.
                let Some(fd) = broker.filter_manager.get(&mq.topic, &group) else { return error(self, "FILTER_DATA_NOT_EXIST") };
                if fd.client_version < req.sub_version {
                    return error(self, "FILTER_DATA_NOT_LATEST");
                }
                let Some(expr) = fd.compiled.clone() else { return error(self, "FILTER_DATA_NOT_EXIST") };
                let bloom = if broker.enable_calc_filter_bitmap {
                    fd.bloom.as_ref().map(|b| (b.bit_pos.clone(), fd.born_time))
                } else {
                    None
                };
                Some((expr, bloom))
            }
            ExpressionType::Other(_) => return error(self, "SUBSCRIPTION_PARSE_FAILED"),
        };
        let max = broker.max_offset(&mq.topic, mq.queue_id);
        let offset = req.offset;
        let (status, next, msgs) = if max == 0 {
            if offset == 0 {
                (PullStatus::NoNewMsg, 0, Vec::new())
            } else {
                (PullStatus::OffsetIllegal, 0, Vec::new())
            }
        } else if offset == max {
            (PullStatus::NoNewMsg, offset, Vec::new())
        } else if offset > max {
            (PullStatus::OffsetIllegal, max, Vec::new())
        } else {
            let cq = broker.cq(&mq.topic, mq.queue_id).expect("queue exists below max offset");
            let mut next = offset;
            let mut found = Vec::new();
            let mut skipped = Vec::new();
            let mut o = offset;
            while o < max {
                if o - offset >= MAX_SCAN_ENTRIES || found.len() >= PULL_BATCH_SIZE {
                    break;
                }
                let e = cq.entries[o as usize];
                next = o + 1;
                o += 1;
                if !sub.broker_tag_match(e.tags_code) {
                    skipped.push((e.msg, None));
                    continue;
                }
                if let Some((expr, bloom)) = &sql {
                    let m = &self.messages[e.msg as usize];
                    if let Some(miss) = self.bloom_precheck(broker, bloom.as_ref(), m) {
                        skipped.push((e.msg, Some(miss)));
                        continue;
                    }
                    let verdict = filter::evaluate(expr, m);
                    if verdict != Verdict::True {
                        skipped.push((e.msg, Some(verdict.as_str())));
                        continue;
                    }
                }
                found.push(e.msg);
            }
            if self.trace_messages {
                for &(m, verdict) in &skipped {
                    self.emit(Event::BrokerFiltered {
                        msg: m,
                        client: client.clone(),
                        expression: sub.sub_string.clone(),
                        table_owner: writer.clone(),
                        verdict,
                    });
                }
            }
            if found.is_empty() {
                (PullStatus::NoMatchedMsg, next, Vec::new())
            } else {
                (PullStatus::Found, next, found)
            }
        };
        if status == PullStatus::NoNewMsg && allow_suspend {
            // Long polling: PULL_NOT_FOUND is parked until a matching message or the timeout.
            let codes = if sub.expression_type == ExpressionType::Tag && !sub.is_all() {
                Some(sub.codes.iter().copied().collect())
            } else {
                None
            };
            self.brokers[b].held.push(HeldPull { request: req.clone(), suspended_at: self.now, codes });
            self.emit(Event::PullHeld { broker: bname, client, mq: mq.clone(), offset });
            self.commit_from_pull(b, req);
            return None;
        }
        let expression = Some(sub.sub_string.clone());
        let found = msgs.len() as u32;
        self.emit(Event::PullServed {
            broker: bname,
            client,
            mq: mq.clone(),
            offset,
            next,
            status: status.clone(),
            found,
            expression,
        });
        self.commit_from_pull(b, req);
        Some((status, next, msgs))
    }

    /// `isMatchedByConsumeQueue` for SQL92: with bitmaps on, a message stored after the filter
    /// data was born must hit the group's bloom bits. `Some("BLOOM_MISS")` when it does not.
    fn bloom_precheck(&self, broker: &Broker, bloom: Option<&(Vec<i32>, u64)>, m: &Message) -> Option<&'static str> {
        let (bit_pos, born) = bloom?;
        let bitmap = broker.bitmaps.get(&m.id)?;
        if m.born_at < *born {
            return None;
        }
        match broker.filter_manager.bloom_filter().is_hit(bit_pos, bitmap) {
            Ok(false) => Some("BLOOM_MISS"),
            _ => None,
        }
    }

    /// `CommitLogDispatcherCalcBitMap`: OR in the bits of every group whose filter matches.
    fn calc_bitmap(&mut self, b: usize, msg: MsgId) {
        let broker = &self.brokers[b];
        let m = &self.messages[msg as usize];
        let filters = broker.filter_manager.get_topic(&m.topic);
        if filters.is_empty() {
            return;
        }
        let bf = broker.filter_manager.bloom_filter();
        let mut bits = bf.new_bitmap();
        for fd in filters {
            if let (Some(expr), Some(data)) = (&fd.compiled, &fd.bloom) {
                if filter::evaluate(expr, m) == Verdict::True {
                    let _ = bf.hash_positions_to(&data.bit_pos, &mut bits);
                }
            }
        }
        self.brokers[b].bitmaps.insert(msg, bits);
    }

    fn commit_from_pull(&mut self, b: usize, req: &PullRequest) {
        if let Some(o) = req.commit_offset {
            let group = self.consumers[req.consumer].group.to_string();
            self.brokers[b].offsets.insert((req.mq.topic.clone(), group, req.mq.queue_id), o);
        }
    }

    /// `PullRequestHoldService`: on a new message (`arrived`) or the periodic check.
    fn check_held(&mut self, b: usize, arrived: Option<(&str, u32, i64)>) {
        if self.brokers[b].held.is_empty() {
            return;
        }
        let now = self.now;
        let broker = &self.brokers[b];
        // Decide first without moving anything: most arrivals wake nobody.
        let wakes = |h: &HeldPull| {
            let r = &h.request;
            match arrived {
                Some((topic, q, code)) => {
                    r.mq.queue_id == q
                        && r.mq.topic == topic
                        && h.codes.as_ref().is_none_or(|cs| cs.contains(&(code as i32)))
                        && broker.max_offset(topic, q) > r.offset
                }
                // The periodic check passes no tags code, which every filter accepts.
                None => now >= h.suspended_at + BROKER_SUSPEND_MAX || broker.max_offset(&r.mq.topic, r.mq.queue_id) > r.offset,
            }
        };
        if !broker.held.iter().any(wakes) {
            return;
        }
        let flags: Vec<bool> = broker.held.iter().map(wakes).collect();
        let held = std::mem::take(&mut self.brokers[b].held);
        let (wake, keep): (Vec<_>, Vec<_>) = held.into_iter().zip(flags).partition(|(_, w)| *w);
        self.brokers[b].held = keep.into_iter().map(|(h, _)| h).collect();
        let wake: Vec<HeldPull> = wake.into_iter().map(|(h, _)| h).collect();
        // The woken pulls are caused by what woke them (the stored message), not by the hold.
        let trigger = self.last_emitted.or(self.handler_cause);
        for h in wake {
            self.handler_cause = trigger;
            let req = h.request;
            if let Some((status, next, msgs)) = self.serve_pull(b, &req, false) {
                let latency = self.consumers[req.consumer].latency;
                self.schedule(
                    latency,
                    Action::PullResponse { c: req.consumer, inc: req.incarnation, mq: req.mq, status, next, msgs },
                );
            }
        }
    }

    fn handle_pull_response(&mut self, c: usize, inc: u32, mq: MessageQueue, status: PullStatus, next: u64, msgs: Vec<MsgId>) {
        if !self.consumer_alive(c, inc) {
            return;
        }
        if self.consumers[c].pqs.get(&mq).is_none_or(|pq| pq.dropped) {
            return;
        }
        match status {
            PullStatus::Found => {
                let con = &mut self.consumers[c];
                con.stats.pulled += msgs.len() as u64;
                let own = con.subs.get(&mq.topic).cloned();
                let client = con.client_id.clone();
                let mut kept = Vec::new();
                for m in msgs {
                    let tag = self.messages[m as usize].tag.clone();
                    match &own {
                        Some(sd) if !sd.client_tag_match(tag.as_deref()) => {
                            self.consumers[c].stats.client_filtered += 1;
                            if self.trace_messages {
                                self.emit(Event::ClientFiltered {
                                    msg: m,
                                    client: client.clone(),
                                    expression: sd.sub_string.clone(),
                                });
                            }
                        }
                        _ => kept.push(m),
                    }
                }
                let pq = self.consumers[c].pqs.get_mut(&mq).expect("checked above");
                pq.next_offset = next;
                if !kept.is_empty() {
                    for &m in &kept {
                        let off = self.messages[m as usize].queue_offset;
                        pq.in_flight.insert(off, m);
                        pq.max_offset = Some(pq.max_offset.map_or(off, |x| x.max(off)));
                    }
                    if self.consumers[c].orderly {
                        self.kick_orderly(c, &mq);
                    } else {
                        let delay = self.consumers[c].spec.consume_time_ms;
                        self.schedule(delay, Action::ConsumeDone { c, inc, mq: mq.clone(), msgs: kept });
                    }
                }
                self.schedule(0, Action::PullSend { c, inc, mq });
            }
            PullStatus::NoNewMsg | PullStatus::NoMatchedMsg => {
                let con = &mut self.consumers[c];
                let pq = con.pqs.get_mut(&mq).expect("checked above");
                pq.next_offset = next;
                // correctTagsOffset: nothing in flight, so the offset may jump to nextOffset.
                if pq.in_flight.is_empty() {
                    let e = con.offsets.entry(mq.clone()).or_insert(0);
                    *e = (*e).max(next);
                }
                self.schedule(0, Action::PullSend { c, inc, mq });
            }
            PullStatus::OffsetIllegal => {
                let con = &mut self.consumers[c];
                if let Some(pq) = con.pqs.get_mut(&mq) {
                    pq.next_offset = next;
                    pq.in_flight.clear();
                }
                con.offsets.insert(mq.clone(), next);
                self.persist_one(c, &mq);
                self.schedule(0, Action::PullSend { c, inc, mq });
            }
            PullStatus::Error(_) => {
                self.schedule(PULL_DELAY_ON_EXCEPTION, Action::PullSend { c, inc, mq });
            }
        }
    }

    // ----------------------------------------------------------------- consumption

    fn record_consumed(&mut self, c: usize, m: MsgId) {
        let root = self.messages[m as usize].root();
        let reconsume_times = self.messages[m as usize].reconsume_times;
        let con = &mut self.consumers[c];
        con.stats.consumed += 1;
        con.consumed.push(root);
        let client = con.client_id.clone();
        self.emit(Event::Consumed { msg: m, client, reconsume_times });
    }

    fn handle_consume_done(&mut self, c: usize, inc: u32, mq: MessageQueue, msgs: Vec<MsgId>) {
        if !self.consumer_alive(c, inc) || self.consumers[c].pqs.get(&mq).is_none_or(|pq| pq.dropped) {
            // ConsumeRequest.run skips processConsumeResult on a dropped queue: redelivered later.
            let client = self.consumers[c].client_id.clone();
            self.emit(Event::ResultsDiscarded { client, mq, count: msgs.len() as u32 });
            return;
        }
        for &m in &msgs {
            let times = self.messages[m as usize].reconsume_times;
            if !self.consumers[c].fails(times) {
                self.record_consumed(c, m);
                continue;
            }
            let client = self.consumers[c].client_id.clone();
            self.consumers[c].stats.failed += 1;
            self.emit(Event::ConsumeFailed { msg: m, client, reconsume_times: times });
            if self.consumers[c].model == MessageModel::Clustering {
                self.consumers[c].stats.retried += 1;
                let group = self.consumers[c].group.clone();
                let broker = self.messages[m as usize].broker;
                let latency = self.consumers[c].latency;
                self.schedule(latency, Action::SendBackArrive { broker, msg: m, group });
            }
        }
        let con = &mut self.consumers[c];
        let pq = con.pqs.get_mut(&mq).expect("checked above");
        for &m in &msgs {
            let off = self.messages[m as usize].queue_offset;
            pq.in_flight.remove(&off);
        }
        if let Some(o) = pq.committed_offset() {
            let e = con.offsets.entry(mq).or_insert(0);
            *e = (*e).max(o);
        }
    }

    fn kick_orderly(&mut self, c: usize, mq: &MessageQueue) {
        let inc = self.consumers[c].incarnation;
        let delay = self.consumers[c].spec.consume_time_ms;
        let Some(pq) = self.consumers[c].pqs.get_mut(mq) else { return };
        if pq.consuming {
            return;
        }
        let Some((_, &m)) = pq.in_flight.iter().next() else { return };
        pq.consuming = true;
        self.schedule(delay, Action::OrderlyConsumeDone { c, inc, mq: mq.clone(), msg: m });
    }

    fn handle_orderly_done(&mut self, c: usize, inc: u32, mq: MessageQueue, m: MsgId) {
        if !self.consumer_alive(c, inc) || self.consumers[c].pqs.get(&mq).is_none_or(|pq| pq.dropped) {
            return;
        }
        let local = self.consumers[c].pqs[&mq].local_reconsume.get(&m).copied().unwrap_or(0);
        let times = self.messages[m as usize].reconsume_times + local;
        let fails = self.consumers[c].fails(times);
        if fails {
            let client = self.consumers[c].client_id.clone();
            self.consumers[c].stats.failed += 1;
            self.emit(Event::ConsumeFailed { msg: m, client, reconsume_times: times });
            let delay = self.consumers[c].spec.consume_time_ms + SUSPEND_ORDERLY;
            let pq = self.consumers[c].pqs.get_mut(&mq).expect("checked above");
            *pq.local_reconsume.entry(m).or_insert(0) += 1;
            // SUSPEND_CURRENT_QUEUE_A_MOMENT: the same message again after 1 s; the queue waits.
            self.schedule(delay, Action::OrderlyConsumeDone { c, inc, mq, msg: m });
            return;
        }
        self.record_consumed(c, m);
        let off = self.messages[m as usize].queue_offset;
        let con = &mut self.consumers[c];
        let pq = con.pqs.get_mut(&mq).expect("checked above");
        pq.in_flight.remove(&off);
        pq.local_reconsume.remove(&m);
        pq.consuming = false;
        if let Some(o) = pq.committed_offset() {
            let e = con.offsets.entry(mq.clone()).or_insert(0);
            *e = (*e).max(o);
        }
        self.kick_orderly(c, &mq);
    }

    fn handle_send_back(&mut self, b: usize, m: MsgId, group: Name) {
        let orig = self.messages[m as usize].clone();
        let now = self.now;
        let id = self.messages.len() as MsgId;
        if orig.reconsume_times >= MAX_RECONSUME_TIMES {
            let dlq = super::types::dlq_topic(&group);
            self.brokers[b].ensure_topic(&dlq, 1);
            self.emit(Event::MovedToDlq { msg: m, group });
            self.messages.push(Message {
                id,
                topic: name(&dlq),
                broker: b,
                queue_id: 0,
                queue_offset: 0,
                born_at: now,
                origin: Some(orig.root()),
                ..orig
            });
            self.handle_store(id);
            return;
        }
        let level = (3 + orig.reconsume_times as usize).min(DELAY_LEVELS_MS.len());
        let delay = DELAY_LEVELS_MS[level - 1];
        let rt = retry_topic(&group);
        self.brokers[b].ensure_topic(&rt, 1);
        let reconsume_times = orig.reconsume_times + 1;
        self.emit(Event::SentBack { msg: m, group, delay_ms: delay, reconsume_times });
        let mut copy = Message {
            id,
            topic: name(&rt),
            broker: b,
            queue_id: 0,
            queue_offset: 0,
            born_at: now,
            origin: Some(orig.root()),
            reconsume_times,
            ..orig.clone()
        };
        copy.properties.insert("RETRY_TOPIC".into(), orig.topic.to_string());
        self.messages.push(copy);
        self.schedule(delay, Action::RetryDeliver { msg: id });
    }

    // ----------------------------------------------------------------- offsets

    fn persist_one(&mut self, c: usize, mq: &MessageQueue) {
        let con = &self.consumers[c];
        let Some(&offset) = con.offsets.get(mq) else { return };
        if con.model == MessageModel::Broadcasting {
            self.consumers[c].local_offsets.insert(mq.clone(), offset);
            return;
        }
        let Some(b) = self.broker_index(&mq.broker) else { return };
        let (group, latency) = (con.group.clone(), con.latency);
        self.schedule(latency, Action::OffsetCommitArrive { broker: b, group, mq: mq.clone(), offset });
    }

    fn persist_offsets(&mut self, c: usize) {
        let mqs: Vec<MessageQueue> = self.consumers[c].pqs.keys().cloned().collect();
        for mq in mqs {
            self.persist_one(c, &mq);
        }
    }
}

fn describe_action(a: &scenario::Action) -> String {
    use scenario::Action::*;
    match a {
        StartConsumer { client_id } => format!("startConsumer {client_id}"),
        StopConsumer { client_id } => format!("stopConsumer {client_id}"),
        CrashConsumer { client_id } => format!("crashConsumer {client_id}"),
        AddConsumer { group, consumer } => format!("addConsumer {} to {group}", consumer.client_id),
        Subscribe { client_id, subscription } => {
            format!("subscribe {client_id} {}={:?}", subscription.topic, subscription.expression)
        }
        Unsubscribe { client_id, topic } => format!("unsubscribe {client_id} {topic}"),
        SetQueueCount { topic, queues } => format!("setQueueCount {topic}={queues}"),
        SetAllocation { group, allocation } => format!("setAllocation {group}={}", allocation.name()),
        Produce { producer, send } => {
            format!(
                "produce {producer} {}x {} tag={} every {} ms",
                send.count,
                send.topic,
                send.tag.as_deref().unwrap_or("-"),
                send.interval_ms
            )
        }
    }
}

/// Whether a message counts for a group: retry and DLQ copies count as their origin.
pub fn is_system_topic(topic: &str) -> bool {
    is_retry_topic(topic) || topic.starts_with("%DLQ%")
}
