//! Scalable topics (PIP-460/468): the controller's split, merge and prune protocols (child
//! segment topics with Earliest cursors, terminate, metadata update, coordinators), STREAM
//! consumers driven by their `SubscriptionCoordinator` (sessions with grace, assignments, the
//! drain poll with its backoff), QUEUE consumers on every segment, and sealed-segment GC.
//! Upstream gaps (#26274, #26434) show up in the coordinator's assignments and are logged as such.

use super::{Action, ClientState, World, SEGMENT_GC_INTERVAL};
use crate::cursor::InitialPosition;
use crate::events::{DrainPoll, Event, GapNote, Name};
use crate::scalable::{
    gc_candidates, is_segment_drained, plan_merge, plan_prune, plan_split, queue_segments, ClientCloseEra,
    ControlledConsumerType, ControllerStep, CoordinatorConfig, CoordinatorEffect, LayoutError, SegmentLayout,
    SubscriptionCoordinator, UpstreamGap,
};
use crate::scenario::ScalableConsumerType;
use mqviz_engine::{Millis, SplitMix64};

fn gap_text(gap: &UpstreamGap) -> String {
    match gap {
        UpstreamGap::SealedChildBeforeParentDrained { segment, undrained_parent } => format!(
            "sealed segment {segment} is assigned while its parent {undrained_parent} is not drained (only direct parents of ACTIVE segments are checked), so parent and child are read concurrently"
        ),
        UpstreamGap::DrainedSegmentAssigned { segment, consumer } => {
            format!("drained sealed segment {segment} still takes a round-robin slot (assigned to {consumer})")
        }
        UpstreamGap::ConsumerHasOnlyDrainedSegments { consumer } => {
            format!("{consumer} is assigned only drained sealed segments and reads nothing")
        }
    }
}

fn active_ids(layout: &SegmentLayout) -> String {
    let ids: Vec<String> = layout.active_segments().map(|s| s.segment_id.to_string()).collect();
    format!("[{}]", ids.join(","))
}

impl World {
    /// The subscription exists on every segment from its first consumer on, with that consumer's
    /// initial position; segments created later get it at Earliest (the controller's split).
    pub(super) fn ensure_scalable_subscription(&mut self, t: u32, sub: &Name, initial: InitialPosition) {
        let Some(scalable) = self.topics[t as usize].scalable.as_mut() else { return };
        if !scalable.subscriptions.insert(sub.clone()) {
            return;
        }
        let partitions: Vec<u32> = scalable.segment_partitions.values().copied().collect();
        for p in partitions {
            if !self.partitions[p as usize].deleted {
                self.ensure_subscription(p, sub, initial);
            }
        }
    }

    /// A STREAM consumer registers with its subscription's coordinator (created with the drain
    /// checker, as the controller does for STREAM).
    pub(super) fn stream_register(&mut self, c: u32) {
        let con = &self.consumers[c as usize];
        let (t, sub, name, initial) = (con.topic, con.subscription.clone(), con.name.clone(), con.spec.initial_position);
        self.ensure_scalable_subscription(t, &sub, initial);
        let now = self.now;
        let config = &self.scenario.config;
        let coordinator_config = CoordinatorConfig {
            grace_period_ms: config.session_grace_ms,
            drain_initial_delay_ms: config.drain_initial_delay_ms,
            drain_max_delay_ms: config.drain_max_delay_ms,
            era: config.assignment_era,
        };
        let seed = self.rng.next_u64();
        let group = self.group_of(t, &sub);
        let scalable = self.topics[t as usize].scalable.as_mut().expect("STREAM consumers read scalable topics");
        let created = !scalable.coordinators.contains_key(&sub);
        if created {
            let coordinator = SubscriptionCoordinator::new(
                scalable.layout.clone(),
                Some(scalable.name.clone()),
                coordinator_config,
                true,
                SplitMix64::new(seed),
            );
            scalable.coordinators.insert(sub.clone(), coordinator);
        }
        let coordinator = scalable.coordinators.get_mut(&sub).expect("inserted above");
        let fresh = !coordinator.sessions().contains_key(&*name);
        let effects = coordinator.register(&name, ControlledConsumerType::Stream, now);
        if created {
            self.emit(Event::DrainCheckerInstalled { group });
        }
        self.emit(Event::SessionRegistered { group, consumer: c, fresh });
        self.apply_coordinator_effects(t, &sub, effects);
    }

    /// A STREAM consumer closes (as its era handles a close) or its connection drops (grace period).
    pub(super) fn stream_leave(&mut self, c: u32, crashed: bool) {
        let con = &self.consumers[c as usize];
        let (t, sub, name) = (con.topic, con.subscription.clone(), con.name.clone());
        let now = self.now;
        let era = self.scenario.config.client_close_era;
        let group = self.group_of(t, &sub);
        let Some(coordinator) = self.topics[t as usize].scalable.as_mut().and_then(|s| s.coordinators.get_mut(&sub)) else {
            return;
        };
        let effects = if crashed {
            let effects = coordinator.disconnect(&name, now);
            let grace_until = coordinator.sessions().get(&*name).and_then(|s| s.grace_deadline).unwrap_or(now);
            self.emit(Event::SessionDisconnected { group, consumer: c, grace_until });
            effects
        } else {
            let effects = coordinator.client_closed(&name, era);
            if era == ClientCloseEra::Pre26433 {
                self.emit(Event::EraNote {
                    text: format!(
                        "{name} closed before PR #26433: a clean close does not unregister, so its session stays registered and keeps its share of the segments"
                    )
                    .into_boxed_str(),
                });
            }
            effects
        };
        self.apply_coordinator_effects(t, &sub, effects);
    }

    /// Carries out what a coordinator asked for: assignments over the network, timers, drain checks.
    fn apply_coordinator_effects(&mut self, t: u32, sub: &Name, effects: Vec<CoordinatorEffect>) {
        let group = self.group_of(t, sub);
        let mut assigned = false;
        for effect in effects {
            match effect {
                CoordinatorEffect::SendAssignment { consumer, assignment } => {
                    assigned = true;
                    let segments: Vec<u64> = assignment.segments.iter().map(|s| s.segment_id).collect();
                    let consumer_name: Name = Name::from(consumer.as_str());
                    let index = self.consumer_index(&consumer).map_or(u32::MAX, |c| c as u32);
                    self.emit(Event::AssignmentSent {
                        group,
                        consumer: index,
                        epoch: u32::try_from(assignment.layout_epoch).unwrap_or(u32::MAX),
                        segments: segments.clone().into_boxed_slice(),
                    });
                    for s in &assignment.segments {
                        let what = format!("segment {} [{}]", s.segment_id, s.hash_range.hex());
                        self.record_owner(group, what, Some(consumer_name.clone()));
                    }
                    let target = self
                        .consumers
                        .iter()
                        .position(|c| *c.name == *consumer && c.running() && c.topic == t && c.subscription == *sub);
                    if let Some(c) = target {
                        let con = &self.consumers[c];
                        let (inc, latency) = (con.incarnation, con.latency);
                        self.schedule(latency, Action::AssignmentArrive { consumer: c as u32, incarnation: inc, segments });
                    }
                }
                CoordinatorEffect::ScheduleDrainPoll { token, at } => {
                    self.emit(Event::DrainPollScheduled { group, at });
                    let delay = at.saturating_sub(self.now);
                    self.schedule(delay, Action::DrainPoll { topic: t, subscription: sub.clone(), token });
                }
                CoordinatorEffect::ScheduleGraceExpiry { consumer, token, at } => {
                    let delay = at.saturating_sub(self.now);
                    let consumer = Name::from(consumer.as_str());
                    self.schedule(delay, Action::GraceExpired { topic: t, subscription: sub.clone(), consumer, token });
                }
                CoordinatorEffect::CheckDrained { segments } => {
                    let next = self.check_drained(t, sub, &segments);
                    self.apply_coordinator_effects(t, sub, next);
                }
            }
        }
        if assigned {
            self.report_gaps(t, sub);
        }
    }

    /// `isSegmentDrained` for each segment (backlog ≤ 0; no cursor = 404 = not drained), then
    /// the poll completes.
    fn check_drained(&mut self, t: u32, sub: &Name, segments: &[u64]) -> Vec<CoordinatorEffect> {
        let scalable = self.topics[t as usize].scalable.as_ref().expect("coordinators live on scalable topics");
        let mut drained = Vec::new();
        let mut backlogs = Vec::new();
        for &seg in segments {
            let backlog = scalable.segment_partitions.get(&seg).and_then(|&p| {
                let part = &self.partitions[p as usize];
                part.subscription(sub).map(|s| part.subscriptions[s].cursor.backlog() as i64)
            });
            backlogs.push(match backlog {
                Some(b) => format!("{seg}:{b}"),
                None => format!("{seg}:404"),
            });
            if is_segment_drained(backlog) {
                drained.push(seg);
            }
        }
        let group = self.group_of(t, sub);
        self.emit(Event::DrainPolled {
            group,
            poll: Box::new(DrainPoll {
                backlogs: backlogs.join(" ").into_boxed_str(),
                drained: drained.clone().into_boxed_slice(),
            }),
        });
        let now = self.now;
        let coordinator = self.coordinator_mut(t, sub).expect("the poll came from this coordinator");
        coordinator.complete_drain_poll(&drained, now)
    }

    fn coordinator_mut(&mut self, t: u32, sub: &Name) -> Option<&mut SubscriptionCoordinator> {
        self.topics[t as usize].scalable.as_mut()?.coordinators.get_mut(sub)
    }

    /// Logs each upstream gap the current assignment shows, once.
    fn report_gaps(&mut self, t: u32, sub: &Name) {
        let Some(scalable) = self.topics[t as usize].scalable.as_mut() else { return };
        let Some(coordinator) = scalable.coordinators.get(sub) else { return };
        let mut fresh = Vec::new();
        for gap in coordinator.current_assignment().gaps {
            let key = format!("{sub} {gap:?}");
            if scalable.gaps_reported.insert(key) {
                fresh.push(gap);
            }
        }
        for gap in fresh {
            let text = format!("{sub}: {}", gap_text(&gap)).into_boxed_str();
            self.emit(Event::UpstreamGap { gap: Box::new(GapNote { issue: gap.issue(), text }) });
        }
    }

    pub(super) fn handle_drain_poll(&mut self, t: u32, sub: Name, token: u64) {
        let Some(coordinator) = self.coordinator_mut(t, &sub) else { return };
        let effects = coordinator.on_drain_poll_timer(token);
        self.apply_coordinator_effects(t, &sub, effects);
    }

    pub(super) fn handle_grace_expired(&mut self, t: u32, sub: Name, consumer: Name, token: u64) {
        let Some(coordinator) = self.coordinator_mut(t, &sub) else { return };
        let was = coordinator.sessions().contains_key(&*consumer);
        let effects = coordinator.on_grace_expired(&consumer, token);
        let evicted = was && !coordinator.sessions().contains_key(&*consumer);
        if evicted {
            let group = self.group_of(t, &sub);
            let c = self.consumer_index(&consumer).map_or(u32::MAX, |c| c as u32);
            self.emit(Event::SessionEvicted { group, consumer: c });
        }
        self.apply_coordinator_effects(t, &sub, effects);
    }

    /// A STREAM consumer applies its new assignment: it closes the segment consumers it lost and
    /// opens (Exclusive, per segment) the ones it gained.
    pub(super) fn handle_assignment(&mut self, c: u32, incarnation: u32, segments: Vec<u64>) {
        if !self.consumer_alive(c, incarnation) {
            return;
        }
        let t = self.consumers[c as usize].topic;
        let Some(scalable) = self.topics[t as usize].scalable.as_ref() else { return };
        let wanted: Vec<u32> = segments.iter().filter_map(|s| scalable.segment_partitions.get(s).copied()).collect();
        let latency = self.consumers[c as usize].latency;
        let con = &mut self.consumers[c as usize];
        con.assigned_segments = segments;
        let mut leaving = Vec::new();
        for att in con.attachments.iter_mut().filter(|a| !a.closed && !wanted.contains(&a.partition)) {
            att.closed = true;
            if att.connected {
                leaving.push((att.partition, att.subscription, att.consumer_id));
            }
        }
        for (partition, subscription, consumer_id) in leaving {
            self.schedule(latency, Action::CloseArrive { partition, subscription, consumer_id });
        }
        for p in wanted {
            if self.consumers[c as usize].attachment_on(p).is_none() && !self.partitions[p as usize].deleted {
                self.attach(c, p);
            }
        }
    }

    /// A QUEUE consumer sees a new layout and subscribes to the segments it does not read yet.
    pub(super) fn handle_layout_arrive(&mut self, c: u32, incarnation: u32) {
        if !self.consumer_alive(c, incarnation) {
            return;
        }
        let t = self.consumers[c as usize].topic;
        let era = self.scenario.config.queue_era;
        let Some(scalable) = self.topics[t as usize].scalable.as_ref() else { return };
        let targets: Vec<u32> =
            queue_segments(&scalable.layout, era).iter().filter_map(|s| scalable.segment_partitions.get(s).copied()).collect();
        for p in targets {
            if self.consumers[c as usize].attachment_on(p).is_none() && !self.partitions[p as usize].deleted {
                self.attach(c, p);
            }
        }
    }

    fn refuse_layout_change(&mut self, t: u32, e: LayoutError) {
        let topic = self.topics[t as usize].name.clone();
        self.emit(Event::Command { text: format!("refused on {topic}: {e}").into_boxed_str() });
    }

    pub(super) fn split_segment(&mut self, t: u32, segment: u64) {
        let Some(scalable) = self.topics[t as usize].scalable.as_ref() else { return };
        let subs: Vec<String> = scalable.subscriptions.iter().map(|s| s.to_string()).collect();
        match plan_split(&scalable.layout, segment, &subs, Some(&scalable.name), self.now as i64) {
            Ok((layout, steps)) => self.run_controller_steps(t, layout, steps, format!("split {segment}")),
            Err(e) => self.refuse_layout_change(t, e),
        }
    }

    pub(super) fn merge_segments(&mut self, t: u32, a: u64, b: u64) {
        let Some(scalable) = self.topics[t as usize].scalable.as_ref() else { return };
        let subs: Vec<String> = scalable.subscriptions.iter().map(|s| s.to_string()).collect();
        match plan_merge(&scalable.layout, a, b, &subs, Some(&scalable.name), self.now as i64) {
            Ok((layout, steps)) => self.run_controller_steps(t, layout, steps, format!("merge {a} and {b}")),
            Err(e) => self.refuse_layout_change(t, e),
        }
    }

    pub(super) fn prune_segments(&mut self, t: u32, ids: &[u64]) {
        let Some(scalable) = self.topics[t as usize].scalable.as_ref() else { return };
        match plan_prune(&scalable.layout, ids, Some(&scalable.name)) {
            Ok((layout, steps)) => {
                let list: Vec<String> = ids.iter().map(u64::to_string).collect();
                self.run_controller_steps(t, layout, steps, format!("prune {}", list.join(",")))
            }
            Err(e) => self.refuse_layout_change(t, e),
        }
    }

    /// The controller's steps, in its order: children (with Earliest cursors) before the parent
    /// is terminated, the metadata update after, the coordinators last.
    fn run_controller_steps(&mut self, t: u32, layout: SegmentLayout, steps: Vec<ControllerStep>, change: String) {
        let topic = self.topics[t as usize].name.clone();
        for step in steps {
            match step {
                ControllerStep::CreateSegmentTopic { segment_id, topic: segment_topic, subscriptions_at_earliest } => {
                    let seg_name = segment_topic.unwrap_or_else(|| format!("{topic}/{segment_id}"));
                    let p = self.create_partition(t, &seg_name, -1, Some(segment_id));
                    self.topics[t as usize].partitions.push(p);
                    if let Some(s) = self.topics[t as usize].scalable.as_mut() {
                        s.segment_partitions.insert(segment_id, p);
                    }
                    self.emit(Event::SegmentTopicCreated {
                        topic: t,
                        segment: segment_id,
                        partition: p,
                        cursors_at_earliest: subscriptions_at_earliest.len() as u32,
                    });
                    for sub in subscriptions_at_earliest {
                        self.ensure_subscription(p, &Name::from(sub.as_str()), InitialPosition::Earliest);
                    }
                }
                ControllerStep::TerminateSegment { segment_id, .. } => {
                    let Some(p) = self.segment_partition(t, segment_id) else { continue };
                    self.partitions[p as usize].terminated = true;
                    self.emit(Event::SegmentTerminated { topic: t, segment: segment_id, partition: p });
                    for s in 0..self.partitions[p as usize].subscriptions.len() {
                        self.check_end_of_topic(p, s as u32);
                    }
                }
                ControllerStep::UpdateMetadata { epoch } => {
                    let active = active_ids(&layout);
                    if let Some(s) = self.topics[t as usize].scalable.as_mut() {
                        s.layout = layout.clone();
                    }
                    let change_and_active = format!("({change}); active segments {active}").into_boxed_str();
                    self.emit(Event::LayoutUpdated { topic: t, epoch, change_and_active });
                }
                ControllerStep::NotifyCoordinators { .. } => self.notify_layout_change(t, &layout),
                ControllerStep::DeleteSegmentTopic { segment_id, .. } => {
                    let Some(p) = self.segment_partition(t, segment_id) else { continue };
                    self.delete_segment_partition(p);
                    self.emit(Event::SegmentTopicDeleted { topic: t, segment: segment_id });
                }
            }
        }
    }

    fn segment_partition(&self, t: u32, segment: u64) -> Option<u32> {
        self.topics[t as usize].scalable.as_ref()?.segment_partitions.get(&segment).copied()
    }

    /// `onLayoutChange` on every coordinator; QUEUE consumers learn the layout too.
    fn notify_layout_change(&mut self, t: u32, layout: &SegmentLayout) {
        let now = self.now;
        let subs: Vec<Name> =
            self.topics[t as usize].scalable.as_ref().map(|s| s.coordinators.keys().cloned().collect()).unwrap_or_default();
        for sub in subs {
            let Some(coordinator) = self.coordinator_mut(t, &sub) else { continue };
            let effects = coordinator.on_layout_change(layout.clone(), now);
            self.apply_coordinator_effects(t, &sub, effects);
        }
        let queue_consumers: Vec<(u32, u32, Millis)> = self
            .consumers
            .iter()
            .enumerate()
            .filter(|(_, c)| c.topic == t && c.running() && c.spec.scalable_type() == Some(ScalableConsumerType::Queue))
            .map(|(i, c)| (i as u32, c.incarnation, c.latency))
            .collect();
        for (c, incarnation, latency) in queue_consumers {
            self.schedule(latency, Action::LayoutArrive { consumer: c, incarnation });
        }
    }

    /// A pruned segment's topic is deleted: its consumers are disconnected.
    fn delete_segment_partition(&mut self, p: u32) {
        let part = &mut self.partitions[p as usize];
        part.deleted = true;
        for sub in &mut part.subscriptions {
            sub.members.clear();
            sub.dispatcher = None;
        }
        for con in self.consumers.iter_mut().filter(|c| c.state == ClientState::Running) {
            for att in con.attachments.iter_mut().filter(|a| a.partition == p) {
                att.closed = true;
            }
        }
    }

    /// Sealed-segment GC (every 60 s): sealed segments past the retention that every
    /// subscription reports drained are pruned in one metadata update.
    pub(super) fn handle_segment_gc(&mut self, t: u32) {
        self.schedule(SEGMENT_GC_INTERVAL, Action::SegmentGc { topic: t });
        let Some(retention) = self.scenario.config.sealed_segment_retention_ms else { return };
        let Some(scalable) = self.topics[t as usize].scalable.as_ref() else { return };
        let drained_by_all = |seg: u64| {
            scalable.subscriptions.iter().all(|sub| match scalable.coordinators.get(sub) {
                Some(c) => c.drain_state().drained.contains(&seg),
                None => scalable.segment_partitions.get(&seg).is_some_and(|&p| {
                    let part = &self.partitions[p as usize];
                    part.subscription(sub).is_some_and(|s| part.subscriptions[s].cursor.backlog() == 0)
                }),
            })
        };
        let candidates = gc_candidates(&scalable.layout, self.now as i64, retention as i64, drained_by_all);
        if !candidates.is_empty() {
            self.prune_segments(t, &candidates);
        }
    }
}
