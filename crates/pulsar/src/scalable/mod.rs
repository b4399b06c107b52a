//! Scalable topics (PIP-460 / PIP-468, PRs #25611 and #25642; spec §4): the segment DAG, the
//! controller's split/merge/GC protocols, producer routing, and the per-subscription coordinator
//! that assigns segments to STREAM/CHECKPOINT consumers and polls for drained parents.
//!
//! Upstream gaps #26274 and #26434 are reproduced, and reported in `Assignment::gaps`.

pub mod assignment;
pub mod backoff;
pub mod controller;
pub mod coordinator;
pub mod hash_range;
pub mod layout;
pub mod producer;
#[cfg(test)]
mod scenarios;
pub mod topic_name;

pub use assignment::{compute_assignment, is_assignable, AssignedSegment, Assignment, AssignmentEra, DrainState, UpstreamGap};
pub use backoff::{Backoff, DelayBounds};
pub use controller::{gc_candidates, plan_merge, plan_prune, plan_split, queue_segments, ControllerStep, QueueEra};
pub use coordinator::{
    is_segment_drained, ClientCloseEra, ConsumerAssignment, ControlledConsumerType, CoordinatorConfig, CoordinatorEffect,
    Session, SubscriptionCoordinator,
};
pub use hash_range::HashRange;
pub use layout::{LayoutError, SegmentInfo, SegmentLayout, SegmentState};
pub use producer::SegmentRouter;
pub use topic_name::ScalableTopicName;
