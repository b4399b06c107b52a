//! The Kafka world: brokers with partition logs, producers, group coordinators (classic and
//! KIP-848) and consumers, driven by one event queue. Every request and response crosses the
//! network as a scheduled action; `dispatch` has one arm per action, and each concern lives in its
//! own `impl World` (commands, produce, partitions, consumer, fetch, commit, the two coordinators
//! and the two client-side membership managers).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::events::{Event, MsgId, Name, Part};
use super::scenario::{Scenario, TimedAction};
use crate::assignor::TopicPartition;
use crate::uuid::Uuid;
use mqviz_engine::{Burst, EventId, EventLog, EventQueue, Millis, SplitMix64};
use mqviz_model::Fate;

mod budget;
mod commands;
mod commit;
pub mod consumer;
pub mod coordinator_classic;
pub mod coordinator_kip848;
mod fetch;
pub mod member_classic;
pub mod member_kip848;
pub mod partitions;
pub mod produce;
pub mod snapshot;

pub use consumer::{Consumer, Life};
pub use coordinator_classic::{ClassicGroup, ClassicState};
pub use coordinator_kip848::{ConsumerGroup, ModernState};
pub use partitions::{PartitionLog, Rec};
pub use produce::{Message, ProducerState};

/// A broker: it leads partitions, answers fetches, and coordinates some groups.
#[derive(Clone, Debug)]
pub struct Broker {
    pub name: Name,
}

/// A topic in the cluster: its partitions' neutral ids in partition order.
#[derive(Clone, Debug)]
pub struct Topic {
    pub name: Name,
    pub id: Uuid,
    pub pids: Vec<u32>,
}

/// One consumer group on its coordinator: whichever protocol it runs now, and its committed
/// offsets (kept across protocol changes).
#[derive(Clone, Debug)]
pub struct Group {
    pub name: Name,
    pub protocol: super::scenario::GroupProtocol,
    pub coordinator: usize,
    pub initial_rebalance_delay: Millis,
    pub classic: ClassicGroup,
    pub modern: ConsumerGroup,
    /// Partition id -> (offset, leader epoch of the record before it).
    pub committed: BTreeMap<u32, fetch::Committed>,
}

/// Everything a network message or timer can do. Responses carry the client's incarnation so a
/// restarted consumer ignores what was meant for its previous life.
#[derive(Clone, Debug)]
pub(crate) enum Action {
    Command(super::scenario::Action),
    ProduceNext {
        producer: usize,
        send: usize,
        i: u32,
    },
    ProduceArrive {
        producer: usize,
        pid: u32,
        records: Vec<produce::Pending>,
    },

    Poll {
        c: usize,
        inc: u32,
        seq: u64,
    },
    ProcessingDone {
        c: usize,
        inc: u32,
        records: u32,
    },

    MetadataArrive {
        c: usize,
        inc: u32,
    },
    MetadataResponse {
        c: usize,
        inc: u32,
        snapshot: Arc<fetch::MetadataSnapshot>,
    },
    MetadataRefresh {
        c: usize,
        inc: u32,
        seq: u64,
    },
    MetadataRetry {
        c: usize,
        inc: u32,
    },
    FetchArrive {
        broker: usize,
        request: fetch::FetchRequest,
    },
    FetchWaitExpired {
        broker: usize,
        id: u64,
    },
    FetchResponse {
        c: usize,
        inc: u32,
        broker: usize,
        parts: Vec<fetch::FetchPart>,
    },
    ListOffsetsArrive {
        broker: usize,
        c: usize,
        inc: u32,
        parts: Vec<(u32, crate::fetch_state::OffsetResetStrategy)>,
    },
    ListOffsetsResponse {
        c: usize,
        inc: u32,
        parts: Vec<fetch::ListOffsetsPart>,
    },
    EpochsArrive {
        broker: usize,
        c: usize,
        inc: u32,
        parts: Vec<fetch::EpochRequestPart>,
    },
    EpochsResponse {
        c: usize,
        inc: u32,
        parts: Vec<fetch::EpochResponsePart>,
    },

    CommitArrive {
        g: usize,
        request: commit::CommitRequest,
    },
    CommitResponse {
        c: usize,
        inc: u32,
        id: u64,
        error: Option<&'static str>,
    },
    OffsetFetchArrive {
        g: usize,
        c: usize,
        inc: u32,
        pids: Vec<u32>,
    },
    OffsetFetchResponse {
        c: usize,
        inc: u32,
        offsets: Vec<(u32, Option<fetch::Committed>)>,
    },

    JoinArrive {
        g: usize,
        request: coordinator_classic::JoinRequest,
    },
    JoinResponse {
        c: usize,
        inc: u32,
        response: coordinator_classic::JoinResponse,
    },
    SyncArrive {
        g: usize,
        request: coordinator_classic::SyncRequest,
    },
    SyncResponse {
        c: usize,
        inc: u32,
        generation: i32,
        result: Result<Vec<TopicPartition>, &'static str>,
    },
    HeartbeatTick {
        c: usize,
        inc: u32,
        seq: u64,
    },
    /// The poll timer of the heartbeat chain `seq` runs out (if no `poll()` came since).
    PollTimerExpiry {
        c: usize,
        inc: u32,
        seq: u64,
    },
    HeartbeatArrive {
        g: usize,
        c: usize,
        inc: u32,
        member: Name,
        instance: Option<Name>,
        generation: i32,
    },
    HeartbeatResponse {
        c: usize,
        inc: u32,
        generation: i32,
        member: Name,
        error: Option<&'static str>,
    },
    LeaveArrive {
        g: usize,
        member: Name,
        instance: Option<Name>,
        reason: &'static str,
    },
    InitialJoinDelay {
        g: usize,
        round: u64,
        delay: Millis,
        remaining: Millis,
    },
    JoinTimeout {
        g: usize,
        round: u64,
    },
    SyncTimeout {
        g: usize,
        generation: i32,
        round: u64,
    },
    SessionExpiry {
        g: usize,
        member: Name,
        token: u64,
    },

    CgHeartbeatTick {
        c: usize,
        inc: u32,
        seq: u64,
    },
    CgHeartbeatArrive {
        g: usize,
        request: coordinator_kip848::CgHeartbeatRequest,
    },
    CgHeartbeatResponse {
        c: usize,
        inc: u32,
        response: coordinator_kip848::CgHeartbeatResponse,
    },
    CgSessionExpiry {
        g: usize,
        member: Name,
        token: u64,
    },
    CgRebalanceTimeout {
        g: usize,
        member: Name,
        epoch: i32,
        token: u64,
    },
}

/// No action of this model forms a run: each is queued as its own entry.
impl Burst for Action {}

/// The whole simulation state: a plain value, cloneable as a checkpoint.
#[derive(Clone, Debug)]
pub struct World {
    pub scenario: Arc<Scenario>,
    pub now: Millis,
    queue: EventQueue<Action>,
    pub log: EventLog<Event>,
    rng: SplitMix64,
    pub brokers: Vec<Broker>,
    pub topics: Vec<Topic>,
    /// Indexed by neutral partition id (given in order of creation).
    pub partitions: Vec<PartitionLog>,
    pub producers: Vec<ProducerState>,
    pub groups: Vec<Group>,
    pub consumers: Vec<Consumer>,
    pub messages: Vec<Message>,
    /// What became of each message, for the cells of the canvas.
    pub fates: Vec<Fate>,
    /// Per group, how many times each message was handed to one of its consumers.
    pub deliveries: Vec<Vec<u16>>,
    /// Per group and partition, the offset below which every record was delivered to the group
    /// or reported skipped: where the next skip report starts. A committed offset is no such
    /// mark: a seek past the log end commits an offset that records appended later fall under.
    pub skip_cursors: Vec<BTreeMap<u32, u64>>,
    /// (partition, consumer) -> a position a seek set past the log end, and why. Records
    /// appended below it are skipped once a fetch from it succeeds (`fetch_response`).
    pub skip_gaps: BTreeMap<(u32, usize), (u64, String)>,
    /// Per group, partition -> the offset it had committed in the scenario's snapshot: records
    /// below it were read before t=0 (`snapshot.rs`).
    pub snapshot_committed: Vec<BTreeMap<u32, u64>>,
    /// Keys in order of first use: a key's index is its colour key (at most `MAX_KEY_COLOURS`).
    pub key_labels: Vec<Name>,
    key_index: crate::fast_hash::LookupMap<Name, u32>,
    /// (message, log event) pairs: the provenance index.
    pub msg_events: Vec<(MsgId, EventId)>,
    /// Held fetches (long polling), by id.
    held: BTreeMap<u64, fetch::FetchRequest>,
    next_id: u64,
    handler_cause: Option<EventId>,
    last_emitted: Option<EventId>,
    /// Keep per-message provenance. Benchmarks may turn this off.
    pub trace_messages: bool,
    /// Bytes the run may hold (`budget.rs`), steps run, and why it stopped early, if it did.
    memory_budget: u64,
    steps: u64,
    pub budget_stop: Option<mqviz_engine::budget::BudgetStop>,
}

/// Distinct keys beyond this share the "no key" colour.
pub const MAX_KEY_COLOURS: usize = 24;

impl World {
    /// Builds the initial state and schedules the scenario's producers and timeline.
    pub fn new(scenario: Scenario) -> World {
        let scenario = Arc::new(scenario);
        let mut rng = SplitMix64::new(scenario.seed);
        let brokers: Vec<Broker> = scenario.brokers.iter().map(|b| Broker { name: Name::from(b.name.as_str()) }).collect();
        let mut w = World {
            scenario: scenario.clone(),
            now: 0,
            queue: EventQueue::default(),
            log: EventLog::default(),
            rng: SplitMix64::new(0),
            brokers,
            topics: Vec::new(),
            partitions: Vec::new(),
            producers: Vec::new(),
            groups: Vec::new(),
            consumers: Vec::new(),
            messages: Vec::new(),
            fates: Vec::new(),
            deliveries: Vec::new(),
            skip_cursors: Vec::new(),
            skip_gaps: BTreeMap::new(),
            snapshot_committed: Vec::new(),
            key_labels: Vec::new(),
            key_index: Default::default(),
            msg_events: Vec::new(),
            held: BTreeMap::new(),
            next_id: 0,
            handler_cause: None,
            last_emitted: None,
            trace_messages: true,
            memory_budget: mqviz_engine::budget::budget_bytes(scenario.memory_budget_mb),
            steps: 0,
            budget_stop: None,
        };
        for t in &scenario.topics {
            let id = Uuid::new(rng.next_u64() as i64, rng.next_u64() as i64);
            w.create_topic(t, id);
        }
        w.rng = rng;
        w.producers = scenario.producers.iter().map(ProducerState::new).collect();
        // Room for the records the scenario's scripts will send (bounded), so long runs do not
        // keep copying their message table as it grows.
        let scripted: u64 = scenario.producers.iter().flat_map(|p| &p.sends).map(|s| s.count as u64).sum();
        let room = scripted.min(4_000_000) as usize;
        w.messages.reserve(room);
        w.fates.reserve(room);
        w.deliveries = vec![Vec::with_capacity(room); scenario.groups.len()];
        w.skip_cursors = vec![BTreeMap::new(); scenario.groups.len()];
        w.snapshot_committed = vec![BTreeMap::new(); scenario.groups.len()];
        for (gi, g) in scenario.groups.iter().enumerate() {
            w.groups.push(Group::new(g, w.coordinator_for(&g.name)));
            for c in &g.consumers {
                let made = Consumer::new(&scenario, gi, c);
                w.consumers.push(made);
            }
        }
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
        w.restore_snapshot();
        w
    }

    /// The broker that coordinates a group: `abs(hash(group)) % 50` picks the `__consumer_offsets`
    /// partition, whose leader is taken round-robin over the brokers.
    fn coordinator_for(&self, group: &str) -> usize {
        let h = crate::java_order::java_string_hash(group);
        let offsets_partition = (h & 0x7fff_ffff) as usize % 50;
        offsets_partition % self.brokers.len().max(1)
    }

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
        self.queue.push(at, None, Action::Command(cmd.action));
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

    pub fn run_to_end(&mut self) {
        let until = self.scenario.until;
        self.run_until(until);
    }

    fn emit(&mut self, kind: Event) -> EventId {
        self.update_fates(&kind);
        let id = self.log.push(self.now, self.handler_cause, kind);
        if self.trace_messages {
            self.index_messages(id);
        }
        self.last_emitted = Some(id);
        id
    }

    /// Records what an event means for its messages: a delivery is final; a skip or a loss does
    /// not undo one.
    fn update_fates(&mut self, kind: &Event) {
        match kind {
            Event::Polled { client, msgs, .. } => {
                let group = self.consumers.iter().find(|c| c.name == *client).map(|c| c.group);
                for &m in msgs.iter() {
                    if let Some(f) = self.fates.get_mut(m as usize) {
                        *f = Fate::Consumed;
                    }
                    if let Some(d) = group.and_then(|g| self.deliveries.get_mut(g)).and_then(|d| d.get_mut(m as usize)) {
                        *d = d.saturating_add(1);
                    }
                }
            }
            Event::Truncated { part, offset, .. } => {
                for cursors in &mut self.skip_cursors {
                    if let Some(cursor) = cursors.get_mut(&part.pid) {
                        *cursor = (*cursor).min(*offset);
                    }
                }
                self.mark_skipped(kind);
            }
            Event::Skipped { .. } => self.mark_skipped(kind),
            _ => {}
        }
    }

    fn mark_skipped(&mut self, kind: &Event) {
        match kind {
            Event::Skipped { msgs, .. } | Event::Truncated { lost: msgs, .. } => {
                for &m in msgs.iter() {
                    if let Some(f) = self.fates.get_mut(m as usize) {
                        if *f != Fate::Consumed {
                            *f = Fate::Skipped;
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn index_messages(&mut self, id: EventId) {
        let Some(entry) = self.log.get(id) else { return };
        match &entry.kind {
            Event::Appended { first_msg, count, .. } => {
                let (first, count) = (*first_msg, *count);
                self.msg_events.extend((first..first + count).map(|m| (m, id)));
            }
            Event::Polled { msgs, .. } | Event::Skipped { msgs, .. } | Event::Truncated { lost: msgs, .. } => {
                let msgs = msgs.clone();
                self.msg_events.extend(msgs.iter().map(|m| (*m, id)));
            }
            _ => {}
        }
    }

    fn schedule(&mut self, delay: Millis, action: Action) {
        let cause = self.last_emitted.or(self.handler_cause);
        self.queue.push(self.now.saturating_add(delay), cause, action);
    }

    /// How many times a group received a message.
    pub fn delivered(&self, group: usize, msg: MsgId) -> u16 {
        self.deliveries.get(group).and_then(|d| d.get(msg as usize)).copied().unwrap_or(0)
    }

    /// The most times any one group received a message.
    pub fn max_deliveries(&self, msg: MsgId) -> u16 {
        (0..self.groups.len()).map(|g| self.delivered(g, msg)).max().unwrap_or(0)
    }

    fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The colour key of a record key, given in order of first use.
    fn key_colour(&mut self, key: Option<&str>) -> u32 {
        let Some(key) = key else { return mqviz_model::NO_KEY };
        if let Some(k) = self.key_index.get(key) {
            return *k;
        }
        if self.key_labels.len() >= MAX_KEY_COLOURS {
            return mqviz_model::NO_KEY;
        }
        let name = Name::from(key);
        self.key_labels.push(name.clone());
        let k = (self.key_labels.len() - 1) as u32;
        self.key_index.insert(name, k);
        k
    }

    pub fn find_consumer(&self, name: &str) -> Option<usize> {
        self.consumers.iter().position(|c| &*c.name == name)
    }

    pub fn find_group(&self, name: &str) -> Option<usize> {
        self.groups.iter().position(|g| &*g.name == name)
    }

    pub fn topic_index(&self, name: &str) -> Option<usize> {
        self.topics.iter().position(|t| &*t.name == name)
    }

    /// The neutral id of a topic partition that exists now.
    pub fn pid_of(&self, tp: &TopicPartition) -> Option<u32> {
        let t = self.topic_index(&tp.topic)?;
        self.topics[t].pids.get(usize::try_from(tp.partition).ok()?).copied()
    }

    pub fn part(&self, pid: u32) -> Part {
        self.partitions[pid as usize].part.clone()
    }

    pub fn tp_of(&self, pid: u32) -> TopicPartition {
        let p = &self.partitions[pid as usize];
        TopicPartition::new(self.topics[p.topic].name.to_string(), p.partition as i32)
    }

    fn dispatch(&mut self, action: Action) {
        match action {
            Action::Command(cmd) => self.handle_command_now(cmd),
            Action::ProduceNext { producer, send, i } => self.produce_next(producer, send, i),
            Action::ProduceArrive { producer, pid, records } => self.append(producer, pid, records),
            Action::Poll { c, inc, seq } => self.poll_tick(c, inc, seq),
            Action::ProcessingDone { c, inc, records } => self.processing_done(c, inc, records),
            Action::MetadataArrive { c, inc } => self.serve_metadata(c, inc),
            Action::MetadataResponse { c, inc, snapshot } => self.metadata_response(c, inc, &snapshot),
            Action::MetadataRefresh { c, inc, seq } => self.metadata_refresh_tick(c, inc, seq),
            Action::MetadataRetry { c, inc } => {
                if self.alive(c, inc) {
                    self.request_metadata(c);
                }
            }
            Action::FetchArrive { broker, request } => self.serve_fetch(broker, request),
            Action::FetchWaitExpired { broker, id } => self.fetch_wait_expired(broker, id),
            Action::FetchResponse { c, inc, broker, parts } => self.fetch_response(c, inc, broker, parts),
            Action::ListOffsetsArrive { broker, c, inc, parts } => self.serve_list_offsets(broker, c, inc, parts),
            Action::ListOffsetsResponse { c, inc, parts } => self.list_offsets_response(c, inc, parts),
            Action::EpochsArrive { broker, c, inc, parts } => self.serve_epochs(broker, c, inc, parts),
            Action::EpochsResponse { c, inc, parts } => self.epochs_response(c, inc, parts),
            Action::CommitArrive { g, request } => self.serve_commit(g, request),
            Action::CommitResponse { c, inc, id, error } => self.commit_response(c, inc, id, error),
            Action::OffsetFetchArrive { g, c, inc, pids } => self.serve_offset_fetch(g, c, inc, pids),
            Action::OffsetFetchResponse { c, inc, offsets } => self.offset_fetch_response(c, inc, offsets),
            Action::JoinArrive { g, request } => self.serve_join(g, request),
            Action::JoinResponse { c, inc, response } => self.join_response(c, inc, response),
            Action::SyncArrive { g, request } => self.serve_sync(g, request),
            Action::SyncResponse { c, inc, generation, result } => self.sync_response(c, inc, generation, result),
            Action::HeartbeatTick { c, inc, seq } => self.heartbeat_tick(c, inc, seq),
            Action::PollTimerExpiry { c, inc, seq } => self.poll_timer_expiry(c, inc, seq),
            Action::HeartbeatArrive { g, c, inc, member, instance, generation } => {
                self.serve_heartbeat(g, c, inc, member, instance, generation)
            }
            Action::HeartbeatResponse { c, inc, generation, member, error } => {
                self.heartbeat_response(c, inc, generation, member, error)
            }
            Action::LeaveArrive { g, member, instance, reason } => self.serve_leave(g, member, instance, reason),
            Action::InitialJoinDelay { g, round, delay, remaining } => self.initial_join_delay(g, round, delay, remaining),
            Action::JoinTimeout { g, round } => self.join_timeout(g, round),
            Action::SyncTimeout { g, generation, round } => self.sync_timeout(g, generation, round),
            Action::SessionExpiry { g, member, token } => self.session_expiry(g, member, token),
            Action::CgHeartbeatTick { c, inc, seq } => self.cg_heartbeat_tick(c, inc, seq),
            Action::CgHeartbeatArrive { g, request } => self.serve_cg_heartbeat(g, request),
            Action::CgHeartbeatResponse { c, inc, response } => self.cg_heartbeat_response(c, inc, response),
            Action::CgSessionExpiry { g, member, token } => self.cg_session_expiry(g, member, token),
            Action::CgRebalanceTimeout { g, member, epoch, token } => self.cg_rebalance_timeout(g, member, epoch, token),
        }
    }
}

impl Group {
    fn new(spec: &super::scenario::GroupSpec, coordinator: usize) -> Group {
        let name = Name::from(spec.name.as_str());
        Group {
            name: name.clone(),
            protocol: spec.protocol,
            coordinator,
            initial_rebalance_delay: spec.initial_rebalance_delay_ms,
            classic: ClassicGroup::default(),
            modern: ConsumerGroup::default(),
            committed: BTreeMap::new(),
        }
    }
}
