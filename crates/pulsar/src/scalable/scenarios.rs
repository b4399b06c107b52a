//! The PR #25642 scenarios (spec §4.6, §8), driven the way a simulation would: a logical clock, the
//! coordinator's effects as timers, and one durable cursor per (segment, subscription).

use std::collections::BTreeMap;

use super::coordinator::{is_segment_drained, ClientCloseEra, ControlledConsumerType, CoordinatorConfig, CoordinatorEffect};
use super::{SegmentLayout, SubscriptionCoordinator, UpstreamGap};
use crate::cursor::{InitialPosition, ManagedCursor};
use mqviz_engine::{Millis, SplitMix64};

/// A subscription on a scalable topic: the coordinator plus the per-segment cursors.
struct Harness {
    coordinator: SubscriptionCoordinator,
    cursors: BTreeMap<u64, ManagedCursor>,
    /// Each consumer's latest assignment, in assignment order.
    assigned: BTreeMap<String, Vec<u64>>,
    poll: Option<(u64, Millis)>,
    /// When each assignment change was received.
    history: Vec<(Millis, String, Vec<u64>)>,
}

impl Harness {
    /// `entries` per segment already published; cursors are created at Earliest when the
    /// subscription first reads a segment (the controller creates children's cursors at Earliest).
    fn new(layout: SegmentLayout, entries: &[(u64, i64)]) -> Harness {
        let cursors = entries.iter().map(|&(seg, n)| (seg, ManagedCursor::create(InitialPosition::Earliest, 0, n - 1))).collect();
        let coordinator = SubscriptionCoordinator::new(layout, None, CoordinatorConfig::default(), false, SplitMix64::new(1));
        Harness { coordinator, cursors, assigned: BTreeMap::new(), poll: None, history: Vec::new() }
    }

    fn apply(&mut self, effects: Vec<CoordinatorEffect>, now: Millis) {
        for e in effects {
            match e {
                CoordinatorEffect::SendAssignment { consumer, assignment } => {
                    let ids: Vec<u64> = assignment.segments.iter().map(|s| s.segment_id).collect();
                    self.history.push((now, consumer.clone(), ids.clone()));
                    self.assigned.insert(consumer, ids);
                }
                CoordinatorEffect::ScheduleDrainPoll { token, at } => self.poll = Some((token, at)),
                CoordinatorEffect::CheckDrained { segments } => {
                    let drained: Vec<u64> = segments
                        .into_iter()
                        .filter(|s| is_segment_drained(self.cursors.get(s).map(|c| c.backlog() as i64)))
                        .collect();
                    let next = self.coordinator.complete_drain_poll(&drained, now);
                    self.apply(next, now);
                }
                CoordinatorEffect::ScheduleGraceExpiry { .. } => {}
            }
        }
    }

    /// Runs due drain polls up to `until`.
    fn run_polls_until(&mut self, until: Millis) {
        while let Some((token, at)) = self.poll.filter(|&(_, at)| at <= until) {
            self.poll = None;
            let effects = self.coordinator.on_drain_poll_timer(token);
            self.apply(effects, at);
        }
    }

    /// The consumer reads and acks (cumulatively) everything on one segment.
    fn drain_segment(&mut self, segment: u64) -> usize {
        let c = self.cursors.get_mut(&segment).expect("cursor");
        let read = c.read_entries(usize::MAX);
        if let Some(&last) = read.last() {
            c.ack_cumulative(last).expect("published");
        }
        read.len()
    }
}

/// testEarliestSubscribePostSplitReadsSealedBacklog: {0} first, {0,1,2} at the first poll after
/// segment 0 drained; no child message before that.
#[test]
fn earliest_subscribe_post_split_reads_sealed_backlog() {
    let layout = SegmentLayout::parse("initial(1).split(0)", 0).unwrap();
    let mut h = Harness::new(layout, &[(0, 50), (1, 27), (2, 23)]);
    let e = h.coordinator.register("stream", ControlledConsumerType::Stream, 0);
    h.apply(e, 0);
    assert_eq!(h.assigned["stream"], vec![0]);
    assert_eq!(h.drain_segment(0), 50);
    h.run_polls_until(1_999);
    assert_eq!(h.assigned["stream"], vec![0], "children withheld until the poll sees 0 drained");
    h.run_polls_until(2_000);
    assert_eq!(h.assigned["stream"], vec![1, 0, 2]);
    assert_eq!(h.history.last().map(|(t, _, _)| *t), Some(2_000));
    assert_eq!(h.drain_segment(1) + h.drain_segment(2), 50);
}

/// The same consumer acking only at the end: the parent never drains, children stay withheld and
/// the poll backs off towards 15 minutes.
#[test]
fn acking_only_at_the_end_withholds_children_forever() {
    let layout = SegmentLayout::parse("initial(1).split(0)", 0).unwrap();
    let mut h = Harness::new(layout, &[(0, 50)]);
    let e = h.coordinator.register("stream", ControlledConsumerType::Stream, 0);
    h.apply(e, 0);
    h.cursors.get_mut(&0).unwrap().read_entries(usize::MAX);
    h.run_polls_until(3_600_000);
    assert_eq!(h.assigned["stream"], vec![0]);
    let (_, next) = h.poll.unwrap();
    assert!(next > 3_600_000 && next <= 3_600_000 + 900_000);
}

/// testEarliestSubscribeAfterTwoSplitsReadsAllBacklog: {1,0} first (sealed 1 is assignable although
/// 0 is undrained: #26274), then all five segments once 0 and 1 drained.
#[test]
fn earliest_subscribe_after_two_splits_reads_all_backlog() {
    let layout = SegmentLayout::parse("initial(1).split(0).split(1)", 0).unwrap();
    let mut h = Harness::new(layout, &[(0, 30), (1, 15), (2, 15), (3, 15), (4, 15)]);
    let e = h.coordinator.register("stream", ControlledConsumerType::Stream, 0);
    h.apply(e, 0);
    assert_eq!(h.assigned["stream"], vec![1, 0]);
    assert!(!h.coordinator.current_assignment().gaps.is_empty(), "#26274 is flagged");
    assert_eq!(h.drain_segment(0) + h.drain_segment(1), 45);
    h.run_polls_until(2_000);
    assert_eq!(h.assigned["stream"], vec![3, 1, 0, 4, 2]);
    let total: usize = [2, 3, 4].iter().map(|&s| h.drain_segment(s)).sum();
    assert_eq!(total, 45);
}

/// testSealedBacklogNotRedeliveredAfterFirstConsumerDrains, pre-#26433 era: A stays registered, B
/// gets a share, and the shared cursor on 0 is at the end, so B reads nothing.
#[test]
fn sealed_backlog_not_redelivered_after_first_consumer_drains() {
    let layout = SegmentLayout::parse("initial(1).split(0)", 0).unwrap();
    let mut h = Harness::new(layout, &[(0, 30)]);
    let e = h.coordinator.register("A", ControlledConsumerType::Stream, 0);
    h.apply(e, 0);
    assert_eq!(h.drain_segment(0), 30);
    let e = h.coordinator.client_closed("A", ClientCloseEra::Pre26433);
    h.apply(e, 500);
    let e = h.coordinator.register("B", ControlledConsumerType::Stream, 600);
    h.apply(e, 600);
    // Only sealed 0 is assignable and "A" sorts first: A keeps it, B has nothing.
    assert_eq!(h.assigned["B"], Vec::<u64>::new());
    h.run_polls_until(2_600);
    assert_eq!(h.assigned["A"], vec![1, 2]);
    assert_eq!(h.assigned["B"], vec![0]);
    let gaps = h.coordinator.current_assignment().gaps;
    assert!(gaps.contains(&UpstreamGap::ConsumerHasOnlyDrainedSegments { consumer: "B".into() }), "#26434 is flagged");
    assert_eq!(h.drain_segment(0), 0, "EARLIEST does not recreate the cursor: nothing to redeliver");
}
