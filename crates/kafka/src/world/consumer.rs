//! One `KafkaConsumer` and the application loop around it: start, `close()`, crash, and the poll
//! loop (`poll()` → process the records → commit if the application does → `poll()` again).
//!
//! `poll()` does what `ClassicKafkaConsumer.poll` does, in order: the coordinator's poll (join,
//! heartbeat timer, auto-commit), `updateFetchPositions` (validate, committed offsets, resets),
//! collect buffered records up to `max.poll.records`, send fetches. With nothing to return it
//! blocks until data arrives or its timeout expires.

use mqviz_engine::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::member_classic::ClassicClient;
use super::member_kip848::ModernClient;
use super::*;
use crate::events::CommitKind;
use crate::fetch_state::{FetchState, LeaderAndEpoch};
use crate::pattern::TopicPattern;
use crate::scenario::{ConfigOverrides, ConsumerConfig, ConsumerSpec, GroupProtocol, ManualCommit, SubscriptionSpec};
use crate::subscription_state::SubscriptionState;

/// Where a consumer is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Life {
    NotStarted,
    Running,
    Stopped,
    Crashed,
    /// An exception ended the application's loop; it closed the consumer.
    Failed,
}

/// The client's metadata cache: leaders with epochs, topic partition counts.
#[derive(Clone, Debug, Default)]
pub struct ClientMetadata {
    pub leaders: BTreeMap<u32, (usize, i32)>,
    pub topics: BTreeMap<Name, u32>,
    pub known: bool,
    pub in_flight: bool,
    pub refresh_seq: u64,
    /// Bumped whenever the cache changes (`Metadata.updateVersion`).
    pub version: u64,
    /// Retries in a row for subscribed topics the brokers do not know yet.
    pub missing_retries: u32,
}

impl ClientMetadata {
    pub fn leader(&self, pid: u32) -> LeaderAndEpoch {
        match self.leaders.get(&pid) {
            Some((broker, epoch)) => LeaderAndEpoch { leader: Some(*broker as i32), epoch: Some(*epoch) },
            None => LeaderAndEpoch::unknown(),
        }
    }
}

/// A fetch response's records for one partition, waiting for `poll()`.
#[derive(Clone, Debug)]
pub struct Completed {
    pub pid: u32,
    pub tp: TopicPartition,
    pub records: Vec<Rec>,
    pub first_offset: u64,
    pub pos: usize,
}

#[derive(Clone, Debug, Default)]
pub struct FetchClient {
    /// A fetch in flight to each broker (one at a time per node).
    pub in_flight: Vec<bool>,
    pub buffered: VecDeque<Completed>,
    pub validating: BTreeSet<u32>,
    pub resetting: BTreeSet<u32>,
    pub committed_in_flight: BTreeSet<u32>,
    /// An exception the next `poll()` throws (LogTruncation, NoOffsetForPartition, ...).
    pub pending_error: Option<String>,
}

/// Why a commit was sent: what happens when its answer comes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitPurpose {
    Auto,
    /// `onJoinPrepare` waits for it before revoking and joining.
    PrepareJoin,
    /// KIP-848 reconciliation waits for it before revoking.
    Reconcile,
    AppSync,
    AppAsync,
    Close,
}

impl CommitPurpose {
    pub fn kind(self) -> CommitKind {
        match self {
            CommitPurpose::Auto => CommitKind::Auto,
            CommitPurpose::PrepareJoin | CommitPurpose::Reconcile => CommitKind::BeforeRebalance,
            CommitPurpose::AppSync => CommitKind::Sync,
            CommitPurpose::AppAsync => CommitKind::Async,
            CommitPurpose::Close => CommitKind::OnClose,
        }
    }
}

/// The application thread.
#[derive(Clone, Debug, Default)]
pub struct AppLoop {
    /// Identifies the one scheduled `poll()` wake-up that counts.
    pub seq: u64,
    /// Blocked inside `poll()` with nothing to return yet.
    pub waiting: bool,
    pub processing: bool,
    pub last_poll: Millis,
    pub next_auto_commit: Millis,
    /// Commits in flight, by request id.
    pub commits: BTreeMap<u64, CommitPurpose>,
    /// A `commitSync()` the loop waits for.
    pub awaiting_commit: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct Consumer {
    /// The scenario's name for this consumer, unique: the log and the report use it.
    pub name: Name,
    /// `client.id`, which other instances may share; it prefixes a classic member id.
    pub client_id: Name,
    pub group: usize,
    pub instance_id: Option<Name>,
    /// What the application subscribes to now.
    pub subscription: Option<SubscriptionSpec>,
    pub overrides: ConfigOverrides,
    pub config: ConsumerConfig,
    pub protocol: GroupProtocol,
    pub latency: Millis,
    /// Bumped on every start: messages meant for an earlier life are dropped.
    pub inc: u32,
    pub life: Life,
    pub failure: Option<String>,
    pub subs: SubscriptionState,
    pub pattern: Option<TopicPattern>,
    pub meta: ClientMetadata,
    pub classic: ClassicClient,
    pub modern: ModernClient,
    pub fetch: FetchClient,
    pub app: AppLoop,
    /// Records returned by `poll()` so far (all lives).
    pub consumed: u64,
}

impl Consumer {
    pub fn new(scenario: &crate::scenario::Scenario, group: usize, spec: &ConsumerSpec) -> Consumer {
        let g = &scenario.groups[group];
        let config = g.config.with(&spec.overrides);
        Consumer {
            name: Name::from(spec.name.as_str()),
            client_id: Name::from(spec.client_id.as_str()),
            group,
            instance_id: spec.instance_id.as_deref().map(Name::from),
            subscription: spec.subscription.clone(),
            overrides: spec.overrides.clone(),
            subs: SubscriptionState::new(config.auto_offset_reset),
            protocol: g.protocol,
            latency: spec.latency_ms.unwrap_or(scenario.latency_ms),
            config,
            inc: 0,
            life: Life::NotStarted,
            failure: None,
            pattern: None,
            meta: ClientMetadata::default(),
            classic: ClassicClient::default(),
            modern: ModernClient::default(),
            fetch: FetchClient::default(),
            app: AppLoop::default(),
            consumed: 0,
        }
    }

    pub fn running(&self) -> bool {
        self.life == Life::Running
    }

    /// Partitions come from the group (subscribe), not from `assign()`.
    pub fn group_managed(&self) -> bool {
        self.subs.has_auto_assigned_partitions()
    }
}

impl World {
    pub(super) fn alive(&self, c: usize, inc: u32) -> bool {
        self.consumers.get(c).is_some_and(|x| x.running() && x.inc == inc)
    }

    /// Partitions in `TopicPartition` order (topic, then partition), as upstream's sorted sets.
    pub(super) fn parts_sorted(&self, tps: &[TopicPartition]) -> Vec<Part> {
        let mut sorted: Vec<&TopicPartition> = tps.iter().collect();
        sorted.stable_sort();
        sorted.into_iter().filter_map(|tp| self.pid_of(tp)).map(|p| self.part(p)).collect()
    }

    pub(super) fn client(&self, c: usize) -> Name {
        self.consumers[c].name.clone()
    }

    pub(super) fn group_name(&self, c: usize) -> Name {
        self.groups[self.consumers[c].group].name.clone()
    }

    /// The consumer's fetch state and position for a partition, for before/after comparisons.
    pub(super) fn fetch_snapshot(&self, c: usize, tp: &TopicPartition) -> Option<(FetchState, Option<i64>)> {
        let s = self.consumers[c].subs.state(tp)?;
        Some((s.fetch_state, s.position.map(|p| p.offset)))
    }

    /// Logs a partition's fetch state if it differs from `before` (a transition that was not
    /// allowed changes nothing and logs nothing).
    pub(super) fn note_fetch_state(
        &mut self,
        c: usize,
        tp: &TopicPartition,
        before: Option<(FetchState, Option<i64>)>,
        why: &str,
    ) {
        let after = self.fetch_snapshot(c, tp);
        if after == before {
            return;
        }
        let Some(pid) = self.pid_of(tp) else { return };
        let name = |s: Option<(FetchState, Option<i64>)>| s.map(|x| x.0.name()).unwrap_or("UNASSIGNED");
        let (from, to) = (name(before), name(after));
        let position = after.and_then(|x| x.1);
        let (client, part) = (self.client(c), self.part(pid));
        self.emit(Event::FetchStateChanged { client, part, from, to, position, why: why.to_string() });
    }

    pub(super) fn start_consumer(&mut self, c: usize) {
        if self.consumers[c].running() {
            return;
        }
        let group = &self.scenario.groups[self.consumers[c].group];
        let config = group.config.with(&self.consumers[c].overrides);
        let brokers = self.brokers.len();
        let now = self.now;
        let con = &mut self.consumers[c];
        con.config = config;
        con.inc += 1;
        con.life = Life::Running;
        con.failure = None;
        con.subs = SubscriptionState::new(con.config.auto_offset_reset);
        con.pattern = None;
        con.meta = ClientMetadata::default();
        con.classic = ClassicClient::default();
        con.modern = ModernClient::default();
        con.fetch = FetchClient { in_flight: vec![false; brokers], ..FetchClient::default() };
        con.app = AppLoop { last_poll: now, next_auto_commit: now + con.config.auto_commit_interval_ms, ..AppLoop::default() };
        let text = con.subscription.as_ref().map(|s| s.describe()).unwrap_or_else(|| "(no subscription)".into());
        let client = con.name.clone();
        self.emit(Event::ConsumerStarted { client, subscription: text });
        let sub = self.consumers[c].subscription.clone();
        if let Some(sub) = sub {
            self.apply_subscription(c, &sub);
        }
        self.request_metadata(c);
        let inc = self.consumers[c].inc;
        let seq = self.consumers[c].meta.refresh_seq;
        let age = self.consumers[c].config.metadata_max_age_ms;
        self.schedule(age, Action::MetadataRefresh { c, inc, seq });
        self.wake_now(c);
    }

    /// `subscribe(topics)`, `subscribe(pattern)` or `assign(partitions)`; a call the current
    /// subscription type forbids throws and changes nothing.
    pub(super) fn apply_subscription(&mut self, c: usize, sub: &SubscriptionSpec) {
        let result = match sub {
            SubscriptionSpec::Topics(topics) => self.consumers[c].subs.subscribe(topics.iter().cloned()).map(drop),
            SubscriptionSpec::Pattern(p) => {
                let r = self.consumers[c].subs.subscribe_pattern(p.clone());
                if r.is_ok() {
                    self.consumers[c].pattern = TopicPattern::compile(p).ok();
                    self.refresh_pattern_subscription(c);
                }
                r
            }
            SubscriptionSpec::Assign(parts) => {
                let tps: Vec<TopicPartition> =
                    parts.iter().map(|r| TopicPartition::new(r.topic.clone(), r.partition as i32)).collect();
                let before: Vec<_> = tps.iter().map(|tp| self.fetch_snapshot(c, tp)).collect();
                let r = self.consumers[c].subs.assign_from_user(&tps).map(drop);
                if r.is_ok() {
                    for (tp, b) in tps.iter().zip(before) {
                        self.note_fetch_state(c, tp, b, "assign()");
                    }
                }
                r
            }
        };
        match result {
            Ok(()) => {
                if self.consumers[c].group_managed() {
                    match self.consumers[c].protocol {
                        GroupProtocol::Classic => self.request_rejoin(c, "subscription changed"),
                        GroupProtocol::Consumer => self.cg_subscription_changed(c),
                    }
                }
            }
            Err(e) => {
                let client = self.client(c);
                let call = match sub {
                    SubscriptionSpec::Topics(_) | SubscriptionSpec::Pattern(_) => "subscribe",
                    SubscriptionSpec::Assign(_) => "assign",
                };
                self.emit(Event::CallThrew { client, call, error: e.to_string() });
            }
        }
    }

    /// `unsubscribe()`: revokes everything (committing first with auto-commit) and leaves.
    pub(super) fn unsubscribe(&mut self, c: usize) {
        if !self.consumers[c].running() {
            return;
        }
        self.leave_group(c, "unsubscribe()", false);
        let before: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
        let snaps: Vec<_> = before.iter().map(|tp| self.fetch_snapshot(c, tp)).collect();
        self.consumers[c].subs.unsubscribe();
        self.consumers[c].pattern = None;
        self.consumers[c].fetch.buffered.clear();
        for (tp, s) in before.iter().zip(snaps) {
            self.note_fetch_state(c, tp, s, "unsubscribe()");
        }
        self.consumers[c].classic = ClassicClient::default();
        self.consumers[c].modern = ModernClient::default();
    }

    /// Runs the revocation callback and leaves the group, as `close()` and `unsubscribe()` do;
    /// `close()` commits first with auto-commit.
    fn leave_group(&mut self, c: usize, why: &'static str, closing: bool) {
        if closing && self.consumers[c].config.enable_auto_commit {
            self.commit_all_consumed(c, CommitPurpose::Close);
        }
        let assigned: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
        if !assigned.is_empty() && self.consumers[c].group_managed() {
            let parts = self.parts_sorted(&assigned);
            let client = self.client(c);
            self.emit(Event::Revoked { client, partitions: parts, lost: false, reason: why });
        }
        if self.consumers[c].group_managed() {
            match self.consumers[c].protocol {
                GroupProtocol::Classic => self.classic_leave(c, why),
                GroupProtocol::Consumer => self.cg_leave(c),
            }
        }
    }

    /// `close()`.
    pub(super) fn close_consumer(&mut self, c: usize, reason: &'static str, life: Life) {
        if !self.consumers[c].running() {
            return;
        }
        self.leave_group(c, "close()", true);
        self.consumers[c].life = life;
        let client = self.client(c);
        self.emit(Event::ConsumerClosed { client, reason });
    }

    /// The process dies: no commit, no leave; the coordinator finds out at session timeout.
    pub(super) fn crash_consumer(&mut self, c: usize) {
        if !self.consumers[c].running() {
            return;
        }
        self.consumers[c].life = Life::Crashed;
        let client = self.client(c);
        self.emit(Event::ConsumerCrashed { client });
    }

    /// Schedules a `poll()` now, superseding any pending wake-up.
    pub(super) fn wake_now(&mut self, c: usize) {
        let con = &mut self.consumers[c];
        con.app.seq += 1;
        con.app.waiting = false;
        let (inc, seq) = (con.inc, con.app.seq);
        self.schedule(0, Action::Poll { c, inc, seq });
    }

    /// Wakes the application if it is blocked in `poll()` (data or an assignment arrived).
    pub(super) fn wake_if_waiting(&mut self, c: usize) {
        if self.consumers[c].app.waiting {
            self.wake_now(c);
        }
    }

    pub(super) fn poll_tick(&mut self, c: usize, inc: u32, seq: u64) {
        if !self.alive(c, inc) || self.consumers[c].app.seq != seq {
            return;
        }
        self.poll(c);
    }

    fn poll(&mut self, c: usize) {
        if let Some(error) = self.consumers[c].fetch.pending_error.take() {
            let client = self.client(c);
            self.emit(Event::PollThrew { client, error });
            self.close_consumer(c, "the application's poll loop ended with an exception", Life::Failed);
            return;
        }
        self.consumers[c].app.waiting = false;
        self.consumers[c].app.last_poll = self.now;
        if self.consumers[c].group_managed() {
            match self.consumers[c].protocol {
                GroupProtocol::Classic => self.classic_poll(c),
                GroupProtocol::Consumer => self.cg_poll(c),
            }
        }
        if !self.consumers[c].running() {
            return;
        }
        self.maybe_auto_commit(c);
        self.update_fetch_positions(c);
        let returned = self.collect_fetch(c);
        self.send_fetches(c);
        let con = &mut self.consumers[c];
        if returned > 0 {
            con.app.processing = true;
            let delay = con.config.record_processing_ms.saturating_mul(returned as u64);
            let inc = con.inc;
            self.schedule(delay, Action::ProcessingDone { c, inc, records: returned });
        } else {
            con.app.seq += 1;
            con.app.waiting = true;
            let (inc, seq, timeout) = (con.inc, con.app.seq, con.config.poll_timeout_ms);
            self.schedule(timeout, Action::Poll { c, inc, seq });
        }
    }

    /// The application finished the records of the last `poll()`.
    pub(super) fn processing_done(&mut self, c: usize, inc: u32, records: u32) {
        if !self.alive(c, inc) {
            return;
        }
        let con = &mut self.consumers[c];
        con.app.processing = false;
        con.consumed += records as u64;
        match con.config.manual_commit {
            ManualCommit::None => self.wake_now(c),
            ManualCommit::Async => {
                self.commit_all_consumed(c, CommitPurpose::AppAsync);
                self.wake_now(c);
            }
            ManualCommit::Sync => match self.commit_all_consumed(c, CommitPurpose::AppSync) {
                Some(id) => self.consumers[c].app.awaiting_commit = Some(id),
                None => self.wake_now(c),
            },
        }
    }

    /// `maybeAutoCommitOffsetsAsync`: when the interval has passed, commit every position.
    fn maybe_auto_commit(&mut self, c: usize) {
        let con = &self.consumers[c];
        if !con.config.enable_auto_commit || self.now < con.app.next_auto_commit {
            return;
        }
        let interval = con.config.auto_commit_interval_ms;
        self.consumers[c].app.next_auto_commit = self.now + interval;
        self.commit_all_consumed(c, CommitPurpose::Auto);
    }
}
