//! The Pulsar world: brokers serving partitions and segments, producers with their routers and
//! batch containers, and client consumers, driven by one event queue. The algorithm layer
//! (`mqviz_pulsar::{failover, shared_subscription, key_shared, cursor, scalable}`) decides; this
//! module keeps time, moves commands over the network and logs what happened. One `impl World`
//! per concern lives in the sibling files; `dispatch` below routes each queued action to them.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::events::{Event, MsgId, Name, RedeliveryReason};
use crate::log::PulsarLog;
use crate::routing::{partition_switch_ms, partition_topic_name, PartitionRouter};
use crate::scalable::{ScalableTopicName, SegmentLayout, SegmentRouter};
use crate::scenario::{self, ConsumerSpec, RoutingMode, Scenario, TimedAction, TopicKind};
use mqviz_engine::{Burst, EventId, EventQueue, Millis, SplitMix64};
use mqviz_model::Fate;

mod ack;
mod budget;
mod client;
mod commands;
mod dispatch;
mod failover;
pub mod keys;
mod produce;
pub mod ranges;
mod redelivery;
mod scalable;
mod snapshot;
pub mod state;
mod subscribe;

pub use dispatch::hold_reason_text;
pub use keys::{KeyId, KeyTable};
pub use ranges::ranges_text;
pub use snapshot::SNAPSHOT_WRITER;
pub use state::*;

/// Sealed-segment GC period (PR #25668).
pub const SEGMENT_GC_INTERVAL: Millis = crate::defaults::SEGMENT_GC_INTERVAL_MS;
/// A client retries a refused segment subscribe (an Exclusive segment still held) after this long.
pub const RESUBSCRIBE_DELAY: Millis = 100;
/// Dispatch rounds one read event may run before yielding to other events at the same instant.
const MAX_ROUNDS_PER_READ: u32 = 32;
/// The first ledger id handed out (ids are global, like BookKeeper's).
const FIRST_LEDGER_ID: i64 = 10;
/// Capacity reserved up front is for at most this many messages.
const RESERVE_AT_MOST: u64 = 2_000_000;

/// One entry sent to a consumer, on the wire.
#[derive(Clone, Copy, Debug)]
pub struct DeliverItem {
    pub consumer: u32,
    pub attachment: u32,
    pub consumer_id: u64,
    pub partition: u32,
    pub entry: i64,
    pub redelivery_count: u32,
    pub epoch: u32,
}

#[derive(Clone, Debug)]
enum Action {
    Command(Box<scenario::Action>),
    ProduceTick {
        producer: u32,
        send: u32,
        i: u32,
    },
    FlushBatch {
        producer: u32,
        partition: u32,
        generation: u64,
    },
    PublishArrive {
        producer: u32,
        partition: u32,
        batched: bool,
        messages: Vec<Outgoing>,
    },
    SubscribeArrive {
        consumer: u32,
        incarnation: u32,
        attachment: u32,
    },
    SubscribeResult {
        consumer: u32,
        incarnation: u32,
        attachment: u32,
        subscription: u32,
        error: Option<String>,
    },
    FlowArrive {
        partition: u32,
        subscription: u32,
        consumer_id: u64,
        permits: u32,
    },
    Read {
        partition: u32,
        subscription: u32,
    },
    Deliver {
        items: Vec<DeliverItem>,
    },
    EndOfTopicArrive {
        consumer: u32,
        incarnation: u32,
        attachment: u32,
    },
    ProcessDone {
        consumer: u32,
        incarnation: u32,
    },
    AckFlush {
        consumer: u32,
        incarnation: u32,
    },
    AckArrive {
        partition: u32,
        subscription: u32,
        consumer_id: u64,
        individual: Vec<i64>,
        cumulative: Option<i64>,
    },
    RedeliverArrive {
        partition: u32,
        subscription: u32,
        consumer_id: u64,
        positions: Option<Vec<i64>>,
        epoch: u32,
        reason: RedeliveryReason,
    },
    CloseArrive {
        partition: u32,
        subscription: u32,
        consumer_id: u64,
    },
    NackTimer {
        consumer: u32,
        incarnation: u32,
        attachment: u32,
    },
    AckTimeoutTick {
        consumer: u32,
        incarnation: u32,
    },
    FailoverSwitch {
        partition: u32,
        subscription: u32,
    },
    DelayedDue {
        partition: u32,
        subscription: u32,
        position: i64,
    },
    DrainPoll {
        topic: u32,
        subscription: Name,
        token: u64,
    },
    GraceExpired {
        topic: u32,
        subscription: Name,
        consumer: Name,
        token: u64,
    },
    AssignmentArrive {
        consumer: u32,
        incarnation: u32,
        segments: Vec<u64>,
    },
    LayoutArrive {
        consumer: u32,
        incarnation: u32,
    },
    SegmentGc {
        topic: u32,
    },
}

/// No action of this model forms a run: each is queued as its own entry.
impl Burst for Action {}

/// Buffers the hot paths reuse instead of allocating per dispatch round (they hold nothing
/// between events).
#[derive(Clone, Debug, Default)]
struct Scratch {
    positions: Vec<i64>,
    keyed: Vec<crate::key_shared::KeyedEntry>,
    items: Vec<Vec<DeliverItem>>,
    /// One flag per consumer, all false between uses.
    consumer_seen: Vec<bool>,
    /// Consumers a delivery reached (empty between uses).
    touched: Vec<u32>,
    /// Emptied position lists (acks on the wire) for the next ack group.
    positions_pool: Vec<Vec<i64>>,
    /// Positions an ack group newly acked (empty between uses).
    newly_acked: Vec<i64>,
    /// The Key_Shared dispatcher's output, reused from round to round.
    key_shared_round: crate::key_shared::KeySharedRound,
}

/// The whole simulation state: a plain value, cloneable as a checkpoint.
#[derive(Clone, Debug)]
pub struct World {
    pub scenario: Arc<Scenario>,
    pub now: Millis,
    queue: EventQueue<Action>,
    pub log: PulsarLog,
    rng: SplitMix64,
    pub brokers: Vec<Name>,
    pub topics: Vec<Topic>,
    /// Partitions, segments and dead-letter/retry topics; the index is the neutral partition id.
    pub partitions: Vec<Partition>,
    pub producers: Vec<Producer>,
    pub consumers: Vec<Consumer>,
    pub messages: Vec<Message>,
    /// The messages' keys (`Outgoing::key` and `ordering_key` index it).
    pub keys: KeyTable,
    /// What became of each message (indexed by message id), for the cells of the canvas.
    pub fates: Vec<Fate>,
    /// (message, log event) pairs: the provenance index.
    pub msg_events: Vec<(MsgId, EventId)>,
    /// Dead-letter and retry copies -> the original they copy (their fates are the original's).
    pub copy_of: BTreeMap<MsgId, MsgId>,
    /// (topic, subscription) of each `View::groups` entry, in creation order.
    pub groups: Vec<(u32, Name)>,
    /// Who owned which partition, key range or segment, when.
    pub owners: Vec<OwnerRecord>,
    next_ledger_id: i64,
    next_consumer_id: u64,
    handler_cause: Option<EventId>,
    last_emitted: Option<EventId>,
    /// Keep per-message provenance. Benchmarks may turn this off.
    pub trace_messages: bool,
    scratch: Scratch,
    /// Bytes the run may hold (`budget.rs`), steps run, and why it stopped early, if it did.
    memory_budget: u64,
    steps: u64,
    pub budget_stop: Option<mqviz_engine::budget::BudgetStop>,
    /// Log entries the snapshot's restore wrote at t=0 (`world/snapshot.rs`).
    pub restored_events: u32,
}

fn name(s: &str) -> Name {
    Arc::from(s)
}

impl World {
    /// Builds the initial state and schedules the scenario's producers and timeline.
    pub fn new(scenario: Scenario) -> World {
        let scenario = Arc::new(scenario);
        let mut w = World {
            scenario: scenario.clone(),
            now: 0,
            queue: EventQueue::default(),
            log: PulsarLog::default(),
            rng: SplitMix64::new(scenario.seed),
            brokers: scenario.brokers.iter().map(|b| name(b)).collect(),
            topics: Vec::new(),
            partitions: Vec::new(),
            producers: Vec::new(),
            consumers: Vec::new(),
            messages: Vec::new(),
            fates: Vec::new(),
            msg_events: Vec::new(),
            keys: KeyTable::default(),
            copy_of: BTreeMap::new(),
            groups: Vec::new(),
            owners: Vec::new(),
            next_ledger_id: FIRST_LEDGER_ID,
            next_consumer_id: 0,
            handler_cause: None,
            last_emitted: None,
            trace_messages: true,
            scratch: Scratch::default(),
            memory_budget: mqviz_engine::budget::budget_bytes(scenario.memory_budget_mb),
            steps: 0,
            budget_stop: None,
            restored_events: 0,
        };
        // Room for the messages the scenario announces (bounded: a run may stop early).
        let announced: u64 = scenario.producers.iter().flat_map(|p| p.sends.iter()).map(|s| u64::from(s.count)).sum::<u64>()
            + scenario.snapshot_entries();
        let expected = announced.min(RESERVE_AT_MOST) as usize;
        w.messages.reserve(expected);
        w.fates.reserve(expected);
        // Stored, received, acked: about three provenance links per message.
        w.msg_events.reserve(3 * expected);
        w.log.reserve(2 * expected);
        for t in &scenario.topics {
            w.create_topic(t);
        }
        for p in &scenario.producers {
            w.create_producer(p);
        }
        for c in &scenario.consumers {
            w.create_consumer(c.clone());
        }
        w.restore_snapshot();
        w.restored_events = w.log.len() as u32;
        for (pi, p) in scenario.producers.iter().enumerate() {
            for (si, s) in p.sends.iter().enumerate() {
                if s.count > 0 {
                    w.queue.push(s.time_of(0), None, Action::ProduceTick { producer: pi as u32, send: si as u32, i: 0 });
                }
            }
        }
        for a in &scenario.timeline {
            w.queue.push(a.at, None, Action::Command(Box::new(a.action.clone())));
        }
        if scenario.config.sealed_segment_retention_ms.is_some() {
            for t in 0..w.topics.len() {
                if w.topics[t].scalable.is_some() {
                    w.queue.push(SEGMENT_GC_INTERVAL, None, Action::SegmentGc { topic: t as u32 });
                }
            }
        }
        w
    }

    fn create_topic(&mut self, spec: &scenario::TopicSpec) {
        let full = spec.full_name();
        let t = self.topics.len() as u32;
        let mut topic = Topic {
            name: name(&full),
            written: spec.name.clone(),
            role: TopicRole::User,
            partitioned: matches!(spec.kind, TopicKind::Partitioned { .. }),
            partitions: Vec::new(),
            scalable: None,
        };
        match spec.kind {
            TopicKind::NonPartitioned => topic.partitions.push(self.create_partition(t, &full, -1, None)),
            TopicKind::Partitioned { partitions } => {
                for i in 0..partitions {
                    topic.partitions.push(self.create_partition(t, &partition_topic_name(&full, i), i as i32, None));
                }
            }
            TopicKind::Scalable { initial_segments } => {
                // The reader checked the domain and the segment count.
                let topic_name = ScalableTopicName::parse(&full).unwrap_or(ScalableTopicName {
                    tenant: "public".into(),
                    namespace: "default".into(),
                    local_name: spec.name.clone(),
                });
                let layout = SegmentLayout::initial(i64::from(initial_segments), 0)
                    .unwrap_or_else(|_| SegmentLayout::initial(1, 0).expect("one segment is always valid"));
                let mut segment_partitions = BTreeMap::new();
                for s in layout.all_segments() {
                    let seg_name = topic_name.segment_topic(s.hash_range, s.segment_id);
                    let p = self.create_partition(t, &seg_name, -1, Some(s.segment_id));
                    topic.partitions.push(p);
                    segment_partitions.insert(s.segment_id, p);
                }
                topic.scalable = Some(Box::new(ScalableTopic {
                    name: topic_name,
                    layout,
                    segment_partitions,
                    subscriptions: Default::default(),
                    coordinators: BTreeMap::new(),
                    gaps_reported: Default::default(),
                }));
            }
        }
        self.topics.push(topic);
    }

    /// A new broker-side topic (partition, segment or dead-letter/retry topic) with its own ledger.
    fn create_partition(&mut self, topic: u32, full_name: &str, partition_index: i32, segment: Option<u64>) -> u32 {
        let id = self.partitions.len() as u32;
        let ledger_id = self.next_ledger_id;
        self.next_ledger_id += 1;
        self.partitions.push(Partition {
            name: name(full_name),
            topic,
            partition_index,
            segment,
            broker: id % self.brokers.len().max(1) as u32,
            ledger_id,
            entries: Vec::new(),
            terminated: false,
            deleted: false,
            subscriptions: Vec::new(),
        });
        id
    }

    fn create_producer(&mut self, spec: &scenario::ProducerSpec) {
        let topic = self.topic_index(&spec.topic).unwrap_or(0) as u32;
        let t = &self.topics[topic as usize];
        let n = t.partitions.len() as u32;
        let router = if t.partitioned {
            // Upstream draws the start index (or the single partition) when the producer is created.
            let start = PartitionRouter::random_start_index(n, &mut self.rng);
            let switch_ms =
                spec.batching.enabled.then(|| partition_switch_ms(spec.batching.max_publish_delay_ms.saturating_mul(1_000), 10));
            match spec.routing {
                RoutingMode::RoundRobinPartition => PartitionRouter::round_robin(n, spec.hashing, start, switch_ms).ok(),
                RoutingMode::SinglePartition => PartitionRouter::single_partition(n, spec.hashing, start).ok(),
            }
        } else {
            None
        };
        let segment_router = t.scalable.is_some().then(|| SegmentRouter::new(self.scenario.config.segment_hash_era));
        self.producers.push(Producer {
            name: name(&spec.name),
            spec: Arc::new(spec.clone()),
            topic,
            scripts: spec.sends.iter().cloned().map(Script::new).collect(),
            router,
            segment_router,
            containers: BTreeMap::new(),
            latency: spec.latency_ms.unwrap_or(self.scenario.latency_ms),
            sent: 0,
        });
    }

    fn create_consumer(&mut self, spec: ConsumerSpec) -> u32 {
        let topic = self.topic_index(&spec.topic).unwrap_or(0) as u32;
        self.consumers.push(Consumer {
            name: name(&spec.name),
            ack: spec.ack.clone(),
            topic,
            subscription: name(&spec.subscription),
            state: ClientState::NotStarted,
            failure: None,
            incarnation: 0,
            attachments: Vec::new(),
            incoming: Default::default(),
            processing: None,
            pending_acks: Vec::new(),
            flush_scheduled: false,
            ack_timeout_ticking: false,
            seen: BTreeMap::new(),
            assigned_segments: Vec::new(),
            retry_partition: None,
            stats: ConsumerStats::default(),
            received: Vec::new(),
            acked: Vec::new(),
            latency: spec.latency_ms.unwrap_or(self.scenario.latency_ms),
            spec: Arc::new(spec),
        });
        self.consumers.len() as u32 - 1
    }

    /// When a consumer received what `r` records (the time of its `Received` event).
    pub fn received_at(&self, r: &ReceivedRecord) -> Millis {
        self.log.at(r.event).unwrap_or(0)
    }

    /// The topic a scenario reference names (as written or in full).
    pub fn topic_index(&self, reference: &str) -> Option<usize> {
        self.topics.iter().position(|t| t.written == reference || &*t.name == reference)
    }

    pub fn consumer_index(&self, name: &str) -> Option<usize> {
        self.consumers.iter().position(|c| &*c.name == name)
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

    /// Enters a command at its time (or now, if that has passed): the UI's edits go through here.
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

    /// Records what an event means for its message's fate. Dead-lettering is final.
    fn update_fate(&mut self, kind: &Event) {
        let (m, fate) = match kind {
            Event::Received { msg, .. } => (*msg, Fate::Consumed),
            Event::Nacked { msg, .. } | Event::Reconsumed { msg, .. } => (*msg, Fate::Retrying),
            Event::DeadLettered { msg, .. } => (*msg, Fate::DeadLettered),
            _ => return,
        };
        // Copies are rare and kept apart, so this does not have to read the message itself.
        let root = self.copy_of.get(&m).copied().unwrap_or(m) as usize;
        if let Some(f) = self.fates.get_mut(root) {
            if *f != Fate::DeadLettered {
                *f = fate;
            }
        }
    }

    fn emit(&mut self, kind: Event) -> EventId {
        self.update_fate(&kind);
        let msg = kind.message();
        let id = self.log.push(self.now, self.handler_cause, kind);
        if let (Some(m), true) = (msg, self.trace_messages) {
            self.msg_events.push((m, id));
        }
        self.last_emitted = Some(id);
        id
    }

    /// Links a message to an event about it (acks, replays) without a log line of its own.
    fn index_message(&mut self, msg: MsgId, event: EventId) {
        if self.trace_messages {
            self.msg_events.push((msg, event));
        }
    }

    fn schedule(&mut self, delay: Millis, action: Action) {
        let cause = self.last_emitted.or(self.handler_cause);
        self.queue.push(self.now + delay, cause, action);
    }

    fn consumer_alive(&self, c: u32, incarnation: u32) -> bool {
        self.consumers.get(c as usize).is_some_and(|x| x.running() && x.incarnation == incarnation)
    }

    fn dispatch(&mut self, action: Action) {
        match action {
            Action::Command(cmd) => self.handle_command_now(*cmd),
            Action::ProduceTick { producer, send, i } => self.handle_produce_tick(producer, send, i),
            Action::FlushBatch { producer, partition, generation } => self.handle_flush_batch(producer, partition, generation),
            Action::PublishArrive { producer, partition, batched, messages } => {
                self.handle_publish(producer, partition, batched, messages)
            }
            Action::SubscribeArrive { consumer, incarnation, attachment } => {
                self.handle_subscribe(consumer, incarnation, attachment)
            }
            Action::SubscribeResult { consumer, incarnation, attachment, subscription, error } => {
                self.handle_subscribe_result(consumer, incarnation, attachment, subscription, error)
            }
            Action::FlowArrive { partition, subscription, consumer_id, permits } => {
                self.handle_flow(partition, subscription, consumer_id, permits)
            }
            Action::Read { partition, subscription } => self.handle_read(partition, subscription),
            Action::Deliver { items } => self.handle_deliver(items),
            Action::EndOfTopicArrive { consumer, incarnation, attachment } => {
                self.handle_end_of_topic(consumer, incarnation, attachment)
            }
            Action::ProcessDone { consumer, incarnation } => self.handle_process_done(consumer, incarnation),
            Action::AckFlush { consumer, incarnation } => self.handle_ack_flush(consumer, incarnation),
            Action::AckArrive { partition, subscription, consumer_id, individual, cumulative } => {
                self.handle_acks(partition, subscription, consumer_id, individual, cumulative)
            }
            Action::RedeliverArrive { partition, subscription, consumer_id, positions, epoch, reason } => {
                self.handle_redeliver(partition, subscription, consumer_id, positions, epoch, reason)
            }
            Action::CloseArrive { partition, subscription, consumer_id } => {
                self.handle_consumer_removed(partition, subscription, consumer_id)
            }
            Action::NackTimer { consumer, incarnation, attachment } => self.handle_nack_timer(consumer, incarnation, attachment),
            Action::AckTimeoutTick { consumer, incarnation } => self.handle_ack_timeout_tick(consumer, incarnation),
            Action::FailoverSwitch { partition, subscription } => self.complete_failover_switch(partition, subscription),
            Action::DelayedDue { partition, subscription, position } => {
                self.handle_delayed_due(partition, subscription, position)
            }
            Action::DrainPoll { topic, subscription, token } => self.handle_drain_poll(topic, subscription, token),
            Action::GraceExpired { topic, subscription, consumer, token } => {
                self.handle_grace_expired(topic, subscription, consumer, token)
            }
            Action::AssignmentArrive { consumer, incarnation, segments } => {
                self.handle_assignment(consumer, incarnation, segments)
            }
            Action::LayoutArrive { consumer, incarnation } => self.handle_layout_arrive(consumer, incarnation),
            Action::SegmentGc { topic } => self.handle_segment_gc(topic),
        }
    }
}
