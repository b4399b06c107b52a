//! `SubscriptionCoordinator.computeAssignment` for STREAM and CHECKPOINT consumers (spec §4.4,
//! §4.7, §8 scenario 4): assignable segments sorted by (range, id), dealt round robin to the
//! consumers sorted by name.
//!
//! The #25642 rule is reproduced as upstream wrote it, including two reported gaps, which the
//! result lists so a view can mark them:
//! - #26274: only *direct* parents gate an ACTIVE child, and SEALED segments are always
//!   assignable, so a sealed child can be read while its sealed parent is undrained;
//! - #26434: drained sealed segments still take round-robin slots, so a consumer can end up with
//!   nothing but dead segments.

use mqviz_engine::sort::StableSort;
use std::collections::BTreeSet;

use super::hash_range::HashRange;
use super::layout::{SegmentInfo, SegmentLayout};
use super::topic_name::ScalableTopicName;
use crate::hash::java_string_compare;

/// Which upstream version of `computeAssignment`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AssignmentEra {
    /// Before PR #25642: ACTIVE segments only, no drain ordering (a new EARLIEST subscription
    /// never reads sealed backlog).
    Pre25642,
    /// PR #25642: sealed segments always, active children gated on their direct parents' drain.
    #[default]
    Pr25642,
    /// A later upstream version that retires drained sealed parents from the assignment.
    RetireDrainedSealed,
}

impl AssignmentEra {
    pub fn parse(name: &str) -> Option<AssignmentEra> {
        match name {
            "pre-25642" => Some(AssignmentEra::Pre25642),
            "25642" | "pr-25642" => Some(AssignmentEra::Pr25642),
            "retire-drained" | "retire-drained-sealed" | "post-25642-retire-drained" => Some(AssignmentEra::RetireDrainedSealed),
            _ => None,
        }
    }
}

/// What the coordinator knows about drained segments of one subscription.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DrainState {
    /// Installed on the first STREAM register; never removed.
    pub checker_installed: bool,
    /// Sealed segments seen drained; only ever grows (a seek does not reset it, #26274).
    pub drained: BTreeSet<u64>,
}

/// `isAssignable` of the #25642 coordinator.
pub fn is_assignable(segment: &SegmentInfo, layout: &SegmentLayout, drain: &DrainState) -> bool {
    if !drain.checker_installed || !segment.is_active() {
        return true;
    }
    // A parent no longer in the layout was pruned: nothing left to wait for.
    segment.parent_ids.iter().all(|p| layout.segment(*p).is_none() || drain.drained.contains(p))
}

/// One segment handed to a consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignedSegment {
    pub segment_id: u64,
    pub hash_range: HashRange,
    /// The segment's backing topic, when the parent topic name is known.
    pub segment_topic: Option<String>,
}

/// An upstream gap that shows in this assignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpstreamGap {
    /// #26274: sealed `segment` is assigned while its parent `undrained_parent` is not drained,
    /// so the two can be read concurrently (ordering holds one level deep only).
    SealedChildBeforeParentDrained { segment: u64, undrained_parent: u64 },
    /// #26434: `segment` is sealed and already drained but still takes a round-robin slot.
    DrainedSegmentAssigned { segment: u64, consumer: String },
    /// #26434: every segment `consumer` got is sealed and drained: it reads nothing.
    ConsumerHasOnlyDrainedSegments { consumer: String },
}

impl UpstreamGap {
    pub fn issue(&self) -> &'static str {
        match self {
            UpstreamGap::SealedChildBeforeParentDrained { .. } => "apache/pulsar#26274",
            _ => "apache/pulsar#26434",
        }
    }
}

/// The assignment of every consumer, in consumer-name order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignment {
    pub layout_epoch: u64,
    pub by_consumer: Vec<(String, Vec<AssignedSegment>)>,
    pub gaps: Vec<UpstreamGap>,
}

impl Assignment {
    pub fn segments_of(&self, consumer: &str) -> Option<&[AssignedSegment]> {
        self.by_consumer.iter().find(|(c, _)| c == consumer).map(|(_, s)| s.as_slice())
    }

    pub fn segment_ids_of(&self, consumer: &str) -> Vec<u64> {
        self.segments_of(consumer).map(|s| s.iter().map(|a| a.segment_id).collect()).unwrap_or_default()
    }
}

/// `computeAssignment`. Consumers are session names (duplicates collapse, as sessions are keyed by name).
pub fn compute_assignment(
    layout: &SegmentLayout,
    consumers: &[String],
    drain: &DrainState,
    era: AssignmentEra,
    topic: Option<&ScalableTopicName>,
) -> Assignment {
    let mut names: Vec<&String> = consumers.iter().collect();
    names.stable_sort_by(|a, b| java_string_compare(a, b));
    names.dedup();
    let mut assignment = Assignment { layout_epoch: layout.epoch, ..Assignment::default() };
    if names.is_empty() {
        return assignment;
    }
    // One pass over the DAG decides assignability and collects what the gap report needs, so
    // the deal below does no further lookups.
    let mut candidates: Vec<(HashRange, u64, bool)> = Vec::new();
    for s in layout.all_segments() {
        let keep = match era {
            AssignmentEra::Pre25642 => s.is_active(),
            AssignmentEra::Pr25642 => is_assignable(s, layout, drain),
            AssignmentEra::RetireDrainedSealed => {
                is_assignable(s, layout, drain) && (s.is_active() || !drain.drained.contains(&s.segment_id))
            }
        };
        if !keep {
            continue;
        }
        let drained_sealed = !s.is_active() && drain.drained.contains(&s.segment_id);
        if drain.checker_installed && !s.is_active() {
            for &p in &s.parent_ids {
                if layout.segment(p).is_some() && !drain.drained.contains(&p) {
                    assignment
                        .gaps
                        .push(UpstreamGap::SealedChildBeforeParentDrained { segment: s.segment_id, undrained_parent: p });
                }
            }
        }
        candidates.push((s.hash_range, s.segment_id, drained_sealed));
    }
    candidates.stable_sort();
    let mut slots: Vec<(Vec<AssignedSegment>, bool)> = names.iter().map(|_| (Vec::new(), true)).collect();
    for (i, &(hash_range, segment_id, drained_sealed)) in candidates.iter().enumerate() {
        let slot = &mut slots[i % names.len()];
        slot.1 &= drained_sealed;
        if drained_sealed {
            assignment
                .gaps
                .push(UpstreamGap::DrainedSegmentAssigned { segment: segment_id, consumer: names[i % names.len()].clone() });
        }
        slot.0.push(AssignedSegment {
            segment_id,
            hash_range,
            segment_topic: topic.map(|t| t.segment_topic(hash_range, segment_id)),
        });
    }
    for (name, (segments, only_drained)) in names.iter().zip(slots) {
        if only_drained && !segments.is_empty() {
            assignment.gaps.push(UpstreamGap::ConsumerHasOnlyDrainedSegments { consumer: (*name).clone() });
        }
        assignment.by_consumer.push(((*name).clone(), segments));
    }
    assignment
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assign(expr: &str, consumers: &[&str], checker: bool, drained: &[u64], era: AssignmentEra) -> Assignment {
        let layout = SegmentLayout::parse(expr, 0).unwrap();
        let drain = DrainState { checker_installed: checker, drained: drained.iter().copied().collect() };
        let names: Vec<String> = consumers.iter().map(|c| c.to_string()).collect();
        compute_assignment(&layout, &names, &drain, era, None)
    }

    #[test]
    fn children_wait_for_their_parent() {
        let a = assign("initial(4).split(0)", &["consumer-1"], true, &[], AssignmentEra::Pr25642);
        assert_eq!(a.segment_ids_of("consumer-1"), vec![0, 1, 2, 3]);
        let a = assign("initial(4).split(0)", &["consumer-1"], true, &[0], AssignmentEra::Pr25642);
        assert_eq!(a.segment_ids_of("consumer-1"), vec![4, 0, 5, 1, 2, 3]);
        let a = assign("initial(4).split(0)", &["consumer-1"], true, &[0], AssignmentEra::RetireDrainedSealed);
        assert_eq!(a.segment_ids_of("consumer-1"), vec![4, 5, 1, 2, 3]);
        let a = assign("initial(4).split(0)", &["consumer-1"], false, &[], AssignmentEra::Pre25642);
        assert_eq!(a.segment_ids_of("consumer-1"), vec![4, 5, 1, 2, 3]);
    }

    #[test]
    fn consumers_sorted_by_name() {
        let a = assign("initial(4).split(0)", &["consumer-b", "consumer-a"], true, &[0], AssignmentEra::Pr25642);
        assert_eq!(a.segment_ids_of("consumer-a"), vec![4, 5, 2]);
        assert_eq!(a.segment_ids_of("consumer-b"), vec![0, 1, 3]);
        assert_eq!(a.gaps, vec![UpstreamGap::DrainedSegmentAssigned { segment: 0, consumer: "consumer-b".into() }]);
    }

    #[test]
    fn deep_dag_gap_26274_is_flagged() {
        let a = assign("initial(1).split(0).split(1)", &["c"], true, &[], AssignmentEra::Pr25642);
        assert_eq!(a.segment_ids_of("c"), vec![1, 0]);
        assert_eq!(a.gaps, vec![UpstreamGap::SealedChildBeforeParentDrained { segment: 1, undrained_parent: 0 }]);
        assert_eq!(a.gaps[0].issue(), "apache/pulsar#26274");
    }

    #[test]
    fn gap_26434_dead_only_consumer() {
        // Segments sort 1 [0,7fff], 0 [0,ffff], 2 [8000,ffff]: consumer "a" gets 1 and 2, "b" only drained 0.
        let a = assign("initial(1).split(0)", &["a", "b"], true, &[0], AssignmentEra::Pr25642);
        assert_eq!(a.segment_ids_of("b"), vec![0]);
        assert!(a.gaps.contains(&UpstreamGap::ConsumerHasOnlyDrainedSegments { consumer: "b".into() }));
    }

    #[test]
    fn pruned_parents_count_as_drained() {
        let a = assign("initial(2).split(0).prune(0)", &["c"], true, &[], AssignmentEra::Pr25642);
        assert_eq!(a.segment_ids_of("c"), vec![2, 3, 1]);
        assert!(assign("initial(2)", &[], true, &[], AssignmentEra::Pr25642).by_consumer.is_empty());
    }
}
