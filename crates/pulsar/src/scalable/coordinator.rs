//! `SubscriptionCoordinator` of one scalable-topic subscription (spec §4.4, §4.5, §4.6, §8):
//! consumer sessions with a grace period, rebalancing, the drain checker and its backoff poller.
//!
//! Time and I/O stay outside: every method takes the logical time and returns effects (messages
//! to send, timers to schedule, drain checks to run). Timers carry a token; a timer whose token
//! is no longer current was cancelled and is ignored when it fires.

use std::collections::BTreeMap;

use super::assignment::{compute_assignment, AssignedSegment, Assignment, AssignmentEra, DrainState};
use super::backoff::Backoff;
use super::layout::SegmentLayout;
use super::topic_name::ScalableTopicName;
use crate::defaults::{CONSUMER_SESSION_GRACE_PERIOD_MS, DRAIN_INITIAL_DELAY_MS, DRAIN_MAX_DELAY_MS};
use mqviz_engine::{Millis, SplitMix64};

/// Controller-driven consumer types. QUEUE consumers have no coordinator (see `controller::queue_segments`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlledConsumerType {
    /// Exclusive per segment, cumulative acks, parent-drain ordering.
    Stream,
    /// Client-side checkpoints; never drains, so never installs the checker.
    Checkpoint,
}

/// How a client's `close()` reaches the coordinator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientCloseEra {
    /// Before PR #26433: a clean close in the same process did not unregister; the session stays
    /// registered and connected and keeps its share of the segments.
    #[default]
    Pre26433,
    /// PR #26433: close unregisters.
    Unregisters,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoordinatorConfig {
    pub grace_period_ms: Millis,
    pub drain_initial_delay_ms: Millis,
    pub drain_max_delay_ms: Millis,
    pub era: AssignmentEra,
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        CoordinatorConfig {
            grace_period_ms: CONSUMER_SESSION_GRACE_PERIOD_MS,
            drain_initial_delay_ms: DRAIN_INITIAL_DELAY_MS,
            drain_max_delay_ms: DRAIN_MAX_DELAY_MS,
            era: AssignmentEra::default(),
        }
    }
}

/// A consumer session, keyed by consumer name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    pub connected: bool,
    /// When a disconnected session is evicted.
    pub grace_deadline: Option<Millis>,
    grace_token: u64,
}

/// One consumer's assignment as sent to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerAssignment {
    pub layout_epoch: u64,
    pub segments: Vec<AssignedSegment>,
}

/// What the simulation must do after a coordinator call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoordinatorEffect {
    /// Push an assignment to a connected consumer.
    SendAssignment { consumer: String, assignment: ConsumerAssignment },
    /// Call `on_drain_poll_timer(token, ..)` at `at`.
    ScheduleDrainPoll { token: u64, at: Millis },
    /// Call `on_grace_expired(consumer, token, ..)` at `at`.
    ScheduleGraceExpiry { consumer: String, token: u64, at: Millis },
    /// Ask each segment's owner for this subscription's backlog (`isSegmentDrained`: backlog ≤ 0;
    /// a 404 counts as not drained), then call `complete_drain_poll` with the drained ones.
    CheckDrained { segments: Vec<u64> },
}

/// The coordinator state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionCoordinator {
    pub config: CoordinatorConfig,
    pub topic: Option<ScalableTopicName>,
    layout: SegmentLayout,
    sessions: BTreeMap<String, Session>,
    drain: DrainState,
    backoff: Backoff,
    rng: SplitMix64,
    poll_scheduled: Option<(u64, Millis)>,
    poll_in_progress: bool,
    closed: bool,
    next_token: u64,
}

impl SubscriptionCoordinator {
    /// A coordinator over `layout`. `drain_checker` is true when created by a STREAM register,
    /// false on the QUEUE/CHECKPOINT and leader-failover restore paths. `rng` jitters the backoff.
    pub fn new(
        layout: SegmentLayout,
        topic: Option<ScalableTopicName>,
        config: CoordinatorConfig,
        drain_checker: bool,
        rng: SplitMix64,
    ) -> SubscriptionCoordinator {
        let backoff = Backoff::new(config.drain_initial_delay_ms, config.drain_max_delay_ms);
        SubscriptionCoordinator {
            config,
            topic,
            layout,
            sessions: BTreeMap::new(),
            drain: DrainState { checker_installed: drain_checker, drained: Default::default() },
            backoff,
            rng,
            poll_scheduled: None,
            poll_in_progress: false,
            closed: false,
            next_token: 0,
        }
    }

    pub fn layout(&self) -> &SegmentLayout {
        &self.layout
    }

    pub fn drain_state(&self) -> &DrainState {
        &self.drain
    }

    pub fn sessions(&self) -> &BTreeMap<String, Session> {
        &self.sessions
    }

    /// The pending drain poll, if any: (token, when).
    pub fn scheduled_poll(&self) -> Option<(u64, Millis)> {
        self.poll_scheduled
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The assignment every session would get now.
    pub fn current_assignment(&self) -> Assignment {
        let names: Vec<String> = self.sessions.keys().cloned().collect();
        compute_assignment(&self.layout, &names, &self.drain, self.config.era, self.topic.as_ref())
    }

    fn token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }

    fn send_to(&self, assignment: &Assignment, only: Option<&str>) -> Vec<CoordinatorEffect> {
        assignment
            .by_consumer
            .iter()
            .filter(|(name, _)| only.is_none_or(|o| o == name))
            .filter(|(name, _)| self.sessions.get(name).is_some_and(|s| s.connected))
            .map(|(name, segments)| CoordinatorEffect::SendAssignment {
                consumer: name.clone(),
                assignment: ConsumerAssignment { layout_epoch: assignment.layout_epoch, segments: segments.clone() },
            })
            .collect()
    }

    fn rebalance(&self) -> Vec<CoordinatorEffect> {
        self.send_to(&self.current_assignment(), None)
    }

    fn reset_and_rearm(&mut self, now: Millis) -> Vec<CoordinatorEffect> {
        self.backoff.reset();
        self.poll_scheduled = None;
        self.ensure_poller(now)
    }

    fn ensure_poller(&mut self, now: Millis) -> Vec<CoordinatorEffect> {
        if self.closed || !self.drain.checker_installed || self.poll_scheduled.is_some() {
            return Vec::new();
        }
        let delay = self.backoff.next_delay(&mut self.rng);
        let token = self.token();
        self.poll_scheduled = Some((token, now + delay));
        vec![CoordinatorEffect::ScheduleDrainPoll { token, at: now + delay }]
    }

    /// A consumer registers. STREAM installs the drain checker first (a no-op once installed).
    /// A known name is a reconnect: it gets its current assignment, nobody else is rebalanced and
    /// the poll is not reset. A new name is persisted, everyone is rebalanced and the poll resets.
    pub fn register(&mut self, name: &str, kind: ControlledConsumerType, now: Millis) -> Vec<CoordinatorEffect> {
        let mut effects = Vec::new();
        if kind == ControlledConsumerType::Stream {
            effects.extend(self.install_drain_checker(now));
        }
        if let Some(session) = self.sessions.get_mut(name) {
            session.connected = true;
            session.grace_deadline = None;
            session.grace_token = 0;
            effects.extend(self.send_to(&self.current_assignment(), Some(name)));
            return effects;
        }
        self.sessions.insert(name.to_string(), Session { connected: true, grace_deadline: None, grace_token: 0 });
        effects.extend(self.rebalance());
        effects.extend(self.reset_and_rearm(now));
        effects
    }

    /// The consumer asked to leave: no grace, immediate rebalance.
    pub fn unregister(&mut self, name: &str) -> Vec<CoordinatorEffect> {
        if self.sessions.remove(name).is_none() || self.sessions.is_empty() {
            return Vec::new();
        }
        self.rebalance()
    }

    /// The client closed its consumer, as the given era handles it.
    pub fn client_closed(&mut self, name: &str, era: ClientCloseEra) -> Vec<CoordinatorEffect> {
        match era {
            ClientCloseEra::Pre26433 => Vec::new(),
            ClientCloseEra::Unregisters => self.unregister(name),
        }
    }

    /// The connection dropped: the session waits out the grace period before eviction.
    pub fn disconnect(&mut self, name: &str, now: Millis) -> Vec<CoordinatorEffect> {
        if !self.sessions.get(name).is_some_and(|s| s.connected) {
            return Vec::new();
        }
        let token = self.token();
        let at = now + self.config.grace_period_ms;
        let session = self.sessions.get_mut(name).expect("checked above");
        session.connected = false;
        session.grace_deadline = Some(at);
        session.grace_token = token;
        vec![CoordinatorEffect::ScheduleGraceExpiry { consumer: name.to_string(), token, at }]
    }

    /// A grace timer fired: evict the session if it is still disconnected, and rebalance.
    pub fn on_grace_expired(&mut self, name: &str, token: u64) -> Vec<CoordinatorEffect> {
        match self.sessions.get(name) {
            Some(s) if !s.connected && s.grace_token == token => {}
            _ => return Vec::new(),
        }
        self.sessions.remove(name);
        if self.sessions.is_empty() {
            Vec::new()
        } else {
            self.rebalance()
        }
    }

    /// Leader failover: persisted sessions come back as just disconnected, each with a fresh grace
    /// timer. Nothing is sent; consumers get their assignment when they reconnect.
    pub fn restore(&mut self, names: &[String], now: Millis) -> Vec<CoordinatorEffect> {
        let mut effects = Vec::new();
        for name in names {
            if self.sessions.contains_key(name) {
                continue;
            }
            let token = self.token();
            let at = now + self.config.grace_period_ms;
            self.sessions.insert(name.clone(), Session { connected: false, grace_deadline: Some(at), grace_token: token });
            effects.push(CoordinatorEffect::ScheduleGraceExpiry { consumer: name.clone(), token, at });
        }
        effects
    }

    /// A split, merge or prune was committed. With no sessions nothing else happens (the poll is
    /// not reset); otherwise everyone is rebalanced and the poll restarts at the initial delay.
    pub fn on_layout_change(&mut self, layout: SegmentLayout, now: Millis) -> Vec<CoordinatorEffect> {
        self.layout = layout;
        if self.sessions.is_empty() {
            return Vec::new();
        }
        let mut effects = self.rebalance();
        effects.extend(self.reset_and_rearm(now));
        effects
    }

    /// Turns on parent-drain ordering (first STREAM register, or after a restore). Once installed
    /// it is never removed.
    pub fn install_drain_checker(&mut self, now: Millis) -> Vec<CoordinatorEffect> {
        if self.drain.checker_installed {
            return Vec::new();
        }
        self.drain.checker_installed = true;
        let mut effects = if self.sessions.is_empty() { Vec::new() } else { self.rebalance() };
        effects.extend(self.reset_and_rearm(now));
        effects
    }

    /// The drain-poll timer fired. Stale tokens, a closed coordinator, a poll already in flight or
    /// no sessions stop here; with nothing left to check the backoff resets and the poller idles.
    pub fn on_drain_poll_timer(&mut self, token: u64) -> Vec<CoordinatorEffect> {
        if self.poll_scheduled.map(|(t, _)| t) != Some(token) {
            return Vec::new();
        }
        self.poll_scheduled = None;
        if self.closed || self.poll_in_progress || self.sessions.is_empty() {
            return Vec::new();
        }
        let to_check: Vec<u64> = self
            .layout
            .all_segments()
            .filter(|s| !s.is_active() && !self.drain.drained.contains(&s.segment_id))
            .map(|s| s.segment_id)
            .collect();
        if to_check.is_empty() {
            self.backoff.reset();
            return Vec::new();
        }
        self.poll_in_progress = true;
        vec![CoordinatorEffect::CheckDrained { segments: to_check }]
    }

    /// The drain checks of the poll in flight came back. Progress rebalances and restarts the
    /// backoff; otherwise the next poll waits longer.
    pub fn complete_drain_poll(&mut self, drained: &[u64], now: Millis) -> Vec<CoordinatorEffect> {
        let mut effects = self.mark_segments_drained(drained, now);
        self.poll_in_progress = false;
        effects.extend(self.ensure_poller(now));
        effects
    }

    /// Records sealed segments as drained (the poll's result, or a test hook).
    pub fn mark_segments_drained(&mut self, drained: &[u64], now: Millis) -> Vec<CoordinatorEffect> {
        let before = self.drain.drained.len();
        self.drain.drained.extend(drained.iter().copied());
        if self.drain.drained.len() == before {
            return Vec::new();
        }
        let mut effects = if self.sessions.is_empty() { Vec::new() } else { self.rebalance() };
        effects.extend(self.reset_and_rearm(now));
        effects
    }

    /// Stops the poller for good; a poll in flight does not re-arm when it completes.
    pub fn close(&mut self) {
        self.closed = true;
        self.poll_scheduled = None;
    }
}

/// `isSegmentDrained`: the backlog endpoint answered and reported nothing left (`None` = 404).
pub fn is_segment_drained(backlog: Option<i64>) -> bool {
    backlog.is_some_and(|b| b <= 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coordinator(expr: &str, checker: bool) -> SubscriptionCoordinator {
        let layout = SegmentLayout::parse(expr, 0).unwrap();
        let topic = ScalableTopicName::parse("topic://t/ns/x").ok();
        SubscriptionCoordinator::new(layout, topic, CoordinatorConfig::default(), checker, SplitMix64::new(7))
    }

    fn sent(effects: &[CoordinatorEffect], consumer: &str) -> Option<Vec<u64>> {
        effects.iter().rev().find_map(|e| match e {
            CoordinatorEffect::SendAssignment { consumer: c, assignment } if c == consumer => {
                Some(assignment.segments.iter().map(|s| s.segment_id).collect())
            }
            _ => None,
        })
    }

    fn poll_at(effects: &[CoordinatorEffect]) -> Option<(u64, Millis)> {
        effects.iter().find_map(|e| match e {
            CoordinatorEffect::ScheduleDrainPoll { token, at } => Some((*token, *at)),
            _ => None,
        })
    }

    /// SubscriptionCoordinatorTest#testActiveChildrenBlockedUntilParentDrained, as a timeline.
    #[test]
    fn children_blocked_until_the_poll_sees_the_parent_drained() {
        let mut c = coordinator("initial(4)", true);
        let e = c.register("consumer-1", ControlledConsumerType::Stream, 0);
        assert_eq!(sent(&e, "consumer-1"), Some(vec![0, 1, 2, 3]));
        let layout = c.layout().split(0, 100).unwrap();
        let e = c.on_layout_change(layout, 100);
        assert_eq!(sent(&e, "consumer-1"), Some(vec![0, 1, 2, 3]));
        let (token, at) = poll_at(&e).unwrap();
        assert_eq!(at, 2_100);
        assert_eq!(c.on_drain_poll_timer(token), vec![CoordinatorEffect::CheckDrained { segments: vec![0] }]);
        // Not drained yet: the next poll backs off (4 s minus up to 10 %).
        let e = c.complete_drain_poll(&[], at);
        let (token, next) = poll_at(&e).unwrap();
        assert!((at + 3_601..=at + 4_000).contains(&next));
        c.on_drain_poll_timer(token);
        let e = c.complete_drain_poll(&[0], next);
        assert_eq!(sent(&e, "consumer-1"), Some(vec![4, 0, 5, 1, 2, 3]));
        // Progress resets the backoff; the next poll finds nothing to check and idles.
        let (token, again) = poll_at(&e).unwrap();
        assert_eq!(again, next + 2_000);
        assert!(c.on_drain_poll_timer(token).is_empty());
        assert_eq!(c.scheduled_poll(), None);
    }

    #[test]
    fn restore_then_stream_register_enables_ordering() {
        let mut c = coordinator("initial(4).split(0)", false);
        let e = c.restore(&["consumer-1".to_string()], 0);
        assert!(matches!(&e[..], [CoordinatorEffect::ScheduleGraceExpiry { at: 60_000, .. }]));
        assert_eq!(c.current_assignment().segment_ids_of("consumer-1"), vec![4, 0, 5, 1, 2, 3]);
        let e = c.register("consumer-1", ControlledConsumerType::Stream, 10);
        assert_eq!(sent(&e, "consumer-1"), Some(vec![0, 1, 2, 3]));
        assert!(c.drain_state().checker_installed);
    }

    #[test]
    fn grace_period_and_reconnect() {
        let mut c = coordinator("initial(2)", true);
        c.register("a", ControlledConsumerType::Stream, 0);
        c.register("b", ControlledConsumerType::Stream, 0);
        let e = c.disconnect("a", 1_000);
        let CoordinatorEffect::ScheduleGraceExpiry { token, at, .. } = e[0].clone() else { panic!() };
        assert_eq!(at, 61_000);
        // Reconnect within grace: only "a" hears, and the old timer is void.
        let e = c.register("a", ControlledConsumerType::Stream, 30_000);
        assert_eq!(e.len(), 1);
        assert!(c.on_grace_expired("a", token).is_empty());
        let e = c.disconnect("b", 40_000);
        let CoordinatorEffect::ScheduleGraceExpiry { token, .. } = e[0].clone() else { panic!() };
        let e = c.on_grace_expired("b", token);
        assert_eq!(sent(&e, "a"), Some(vec![0, 1]));
        assert_eq!(c.sessions().len(), 1);
    }

    #[test]
    fn fresh_register_rearms_a_backed_off_poll_and_close_stops_it() {
        let mut c = coordinator("initial(1).split(0)", true);
        let e = c.register("a", ControlledConsumerType::Stream, 0);
        let (mut token, mut at) = poll_at(&e).unwrap();
        for _ in 0..4 {
            c.on_drain_poll_timer(token);
            (token, at) = poll_at(&c.complete_drain_poll(&[], at)).unwrap();
        }
        assert!(at > 2_000 + 4_000 + 8_000);
        let e = c.register("b", ControlledConsumerType::Checkpoint, at - 1);
        let (_, fresh_at) = poll_at(&e).unwrap();
        assert_eq!(fresh_at, at - 1 + 2_000);
        assert!(c.on_drain_poll_timer(token).is_empty(), "the backed-off poll was cancelled");
        let (token, _) = c.scheduled_poll().unwrap();
        assert_eq!(c.on_drain_poll_timer(token).len(), 1);
        c.close();
        assert!(c.complete_drain_poll(&[], at).is_empty(), "a poll in flight does not re-arm after close");
    }

    #[test]
    fn layout_change_without_sessions_does_not_reset() {
        let mut c = coordinator("initial(1)", true);
        let layout = c.layout().split(0, 0).unwrap();
        assert!(c.on_layout_change(layout, 0).is_empty());
        assert!(c.current_assignment().by_consumer.is_empty());
        assert!(is_segment_drained(Some(0)) && !is_segment_drained(None) && !is_segment_drained(Some(3)));
    }

    #[test]
    fn close_era_decides_whether_a_closed_consumer_keeps_segments() {
        let mut c = coordinator("initial(1).split(0)", true);
        c.register("A", ControlledConsumerType::Stream, 0);
        c.register("B", ControlledConsumerType::Stream, 0);
        // Only sealed 0 is assignable; "A" sorts first and keeps it although it closed.
        assert!(c.client_closed("A", ClientCloseEra::Pre26433).is_empty());
        assert_eq!(c.current_assignment().segment_ids_of("A"), vec![0]);
        assert_eq!(c.current_assignment().segment_ids_of("B"), Vec::<u64>::new());
        let e = c.client_closed("A", ClientCloseEra::Unregisters);
        assert_eq!(sent(&e, "B"), Some(vec![0]));
    }
}
