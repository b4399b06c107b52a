//! The scalable-topic controller's protocols (spec §4.2, §4.4 QUEUE, §6 item 8): split and merge
//! as ordered steps (child topics with Earliest cursors, then terminate the parents, then the
//! metadata CAS, then coordinators), sealed-segment GC, and which segments a QUEUE consumer reads.

use super::layout::{LayoutError, SegmentLayout};
use super::topic_name::ScalableTopicName;

/// One step of a layout change, in the order the controller performs them. Terminating before
/// the metadata update means parent and children never both accept writes, and the children's
/// cursors exist before producers see the new layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControllerStep {
    /// Create a child segment topic with a cursor at Earliest for each existing subscription.
    CreateSegmentTopic { segment_id: u64, topic: Option<String>, subscriptions_at_earliest: Vec<String> },
    /// Terminate a parent: its producers get `TopicTerminated` and re-route.
    TerminateSegment { segment_id: u64, topic: Option<String> },
    /// Compare-and-set the topic metadata to the new layout.
    UpdateMetadata { epoch: u64 },
    /// `onLayoutChange` on every subscription coordinator.
    NotifyCoordinators { epoch: u64 },
    /// GC: delete a pruned segment's backing topic.
    DeleteSegmentTopic { segment_id: u64, topic: Option<String> },
}

fn segment_topic(layout: &SegmentLayout, topic: Option<&ScalableTopicName>, id: u64) -> Option<String> {
    let s = layout.segment(id)?;
    topic.map(|t| t.segment_topic(s.hash_range, id))
}

fn change_steps(
    old: &SegmentLayout,
    new: &SegmentLayout,
    parents: &[u64],
    subscriptions: &[String],
    topic: Option<&ScalableTopicName>,
) -> Vec<ControllerStep> {
    let mut steps: Vec<ControllerStep> = (old.next_segment_id..new.next_segment_id)
        .map(|child| ControllerStep::CreateSegmentTopic {
            segment_id: child,
            topic: segment_topic(new, topic, child),
            subscriptions_at_earliest: subscriptions.to_vec(),
        })
        .collect();
    steps
        .extend(parents.iter().map(|&p| ControllerStep::TerminateSegment { segment_id: p, topic: segment_topic(old, topic, p) }));
    steps.push(ControllerStep::UpdateMetadata { epoch: new.epoch });
    steps.push(ControllerStep::NotifyCoordinators { epoch: new.epoch });
    steps
}

/// Splits `id`: the new layout and the steps that commit it.
pub fn plan_split(
    layout: &SegmentLayout,
    id: u64,
    subscriptions: &[String],
    topic: Option<&ScalableTopicName>,
    now_ms: i64,
) -> Result<(SegmentLayout, Vec<ControllerStep>), LayoutError> {
    let new = layout.split(id, now_ms)?;
    let steps = change_steps(layout, &new, &[id], subscriptions, topic);
    Ok((new, steps))
}

/// Merges `a` and `b`: one child, both parents terminated in turn.
pub fn plan_merge(
    layout: &SegmentLayout,
    a: u64,
    b: u64,
    subscriptions: &[String],
    topic: Option<&ScalableTopicName>,
    now_ms: i64,
) -> Result<(SegmentLayout, Vec<ControllerStep>), LayoutError> {
    let new = layout.merge(a, b, now_ms)?;
    let steps = change_steps(layout, &new, &[a, b], subscriptions, topic);
    Ok((new, steps))
}

/// Segment retention for GC: the topic policy, else the namespace's, else the broker default.
/// A negative value keeps sealed segments forever.
pub fn effective_retention_ms(topic_policy: Option<i64>, namespace_policy: Option<i64>, broker_default: i64) -> i64 {
    topic_policy.or(namespace_policy).unwrap_or(broker_default)
}

/// The GC pass (every 60 s, PR #25668): sealed segments older than the retention that **every**
/// subscription reports drained (a CHECKPOINT subscription never does).
pub fn gc_candidates(layout: &SegmentLayout, now_ms: i64, retention_ms: i64, drained_by_all: impl Fn(u64) -> bool) -> Vec<u64> {
    if retention_ms < 0 {
        return Vec::new();
    }
    layout
        .all_segments()
        .filter(|s| !s.is_active() && now_ms - s.sealed_at_ms >= retention_ms)
        .map(|s| s.segment_id)
        .filter(|&id| drained_by_all(id))
        .collect()
}

/// Prunes all candidates in one metadata update, then notifies and deletes the backing topics.
pub fn plan_prune(
    layout: &SegmentLayout,
    ids: &[u64],
    topic: Option<&ScalableTopicName>,
) -> Result<(SegmentLayout, Vec<ControllerStep>), LayoutError> {
    let mut new = layout.clone();
    for &id in ids {
        new = new.prune(id)?;
    }
    let mut steps =
        vec![ControllerStep::UpdateMetadata { epoch: new.epoch }, ControllerStep::NotifyCoordinators { epoch: new.epoch }];
    steps.extend(
        ids.iter().map(|&id| ControllerStep::DeleteSegmentTopic { segment_id: id, topic: segment_topic(layout, topic, id) }),
    );
    Ok((new, steps))
}

/// Which segments a QUEUE consumer subscribes (a Shared v4 consumer on each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueEra {
    /// Before PR #25611: active segments only (sealed backlog orphaned for new subscriptions).
    ActiveOnly,
    /// PR #25611: every segment in the DAG, active and sealed; no drain ordering.
    #[default]
    AllSegments,
}

/// The segment ids a QUEUE consumer reads, ascending.
pub fn queue_segments(layout: &SegmentLayout, era: QueueEra) -> Vec<u64> {
    layout.all_segments().filter(|s| era == QueueEra::AllSegments || s.is_active()).map(|s| s.segment_id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_terminates_before_the_metadata_update() {
        let layout = SegmentLayout::initial(1, 0).unwrap();
        let topic = ScalableTopicName::parse("topic://t/ns/x").unwrap();
        let (new, steps) = plan_split(&layout, 0, &["sub".to_string()], Some(&topic), 5).unwrap();
        assert_eq!(new.epoch, 1);
        let kinds: Vec<&str> = steps
            .iter()
            .map(|s| match s {
                ControllerStep::CreateSegmentTopic { .. } => "create",
                ControllerStep::TerminateSegment { .. } => "terminate",
                ControllerStep::UpdateMetadata { .. } => "cas",
                ControllerStep::NotifyCoordinators { .. } => "notify",
                ControllerStep::DeleteSegmentTopic { .. } => "delete",
            })
            .collect();
        assert_eq!(kinds, vec!["create", "create", "terminate", "cas", "notify"]);
        assert_eq!(
            steps[0],
            ControllerStep::CreateSegmentTopic {
                segment_id: 1,
                topic: Some("segment://t/ns/x/0000-7fff-1".into()),
                subscriptions_at_earliest: vec!["sub".into()]
            }
        );
        let (_, merge_steps) = plan_merge(&new, 1, 2, &[], None, 6).unwrap();
        assert_eq!(merge_steps.len(), 1 + 2 + 2);
    }

    #[test]
    fn gc_needs_age_and_every_subscription_drained() {
        let layout = SegmentLayout::initial(1, 0).unwrap().split(0, 1_000).unwrap();
        assert_eq!(gc_candidates(&layout, 5_000, 4_000, |_| true), vec![0]);
        assert!(gc_candidates(&layout, 4_999, 4_000, |_| true).is_empty());
        assert!(gc_candidates(&layout, 9_000, 4_000, |_| false).is_empty());
        assert!(gc_candidates(&layout, 9_000, -1, |_| true).is_empty());
        assert_eq!(effective_retention_ms(None, Some(7), 9), 7);
        let (pruned, steps) = plan_prune(&layout, &[0], None).unwrap();
        assert_eq!((pruned.len(), steps.len()), (2, 3));
    }

    #[test]
    fn queue_reads_sealed_segments_since_25611() {
        let layout = SegmentLayout::parse("initial(1).split(0)", 0).unwrap();
        assert_eq!(queue_segments(&layout, QueueEra::AllSegments), vec![0, 1, 2]);
        assert_eq!(queue_segments(&layout, QueueEra::ActiveOnly), vec![1, 2]);
    }
}
