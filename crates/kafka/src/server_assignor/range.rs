//! Server-side `RangeAssignor` (spec §3): members sorted (static by instance id first, then by
//! member id); per topic, consecutive ranges of `n / k` partitions over the topic's subscribers,
//! the first `n % k` of them one more. Not sticky, not rack-aware in this snapshot.

use super::spec::{GroupSpec, SubscriptionType, Target};
use super::AssignorError;
use crate::java_order::java_string_cmp;
use mqviz_engine::sort::StableSort;

struct TopicRanges {
    partitions: i32,
    members: i32,
    min_quota: i32,
    extra: i32,
    next: i32,
}

impl TopicRanges {
    fn new(partitions: i32, members: i32) -> TopicRanges {
        TopicRanges { partitions, members, min_quota: -1, extra: -1, next: 0 }
    }

    /// `addPartitionsToAssignment`: the next range, or `None` when it is empty.
    fn next_range(&mut self) -> Option<std::ops::Range<i32>> {
        if self.min_quota == -1 {
            self.min_quota = self.partitions / self.members;
            self.extra = self.partitions % self.members;
        }
        let start = self.next;
        let mut quota = self.min_quota;
        if self.extra > 0 {
            quota += 1;
            self.extra -= 1;
        }
        let end = (start + quota).min(self.partitions);
        self.next = end;
        (start < end).then_some(start..end)
    }
}

fn sorted_members(spec: &GroupSpec) -> Vec<usize> {
    let mut members = spec.member_order.clone();
    members.stable_sort_by(|a, b| match (&spec.member(*a).instance_id, &spec.member(*b).instance_id) {
        (Some(x), Some(y)) => java_string_cmp(x, y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => java_string_cmp(&spec.member(*a).id, &spec.member(*b).id),
    });
    members
}

fn non_existent() -> AssignorError {
    AssignorError::PartitionAssignor("Member is subscribed to a non-existent topic".into())
}

pub(super) fn assign(spec: &GroupSpec) -> Result<Vec<Target>, AssignorError> {
    let members = sorted_members(spec);
    let mut targets = vec![Target::default(); spec.member_count()];
    let mut ranges: Vec<Option<TopicRanges>> = (0..spec.topics.len()).map(|_| None).collect();
    if spec.subscription_type == SubscriptionType::Homogeneous {
        let topics = &spec.subscriptions[members[0]];
        for &t in topics {
            let partitions = spec.topics[t].partitions;
            if partitions < 0 {
                return Err(non_existent());
            }
            ranges[t] = Some(TopicRanges::new(partitions, spec.member_count() as i32));
        }
        for &m in &members {
            for &t in topics {
                if let Some(range) = ranges[t].as_mut().and_then(TopicRanges::next_range) {
                    targets[m].extend(t, range);
                }
            }
        }
    } else {
        for &m in &members {
            for &t in &spec.subscriptions[m] {
                let partitions = spec.topics[t].partitions;
                if partitions < 0 {
                    return Err(non_existent());
                }
                ranges[t].get_or_insert_with(|| TopicRanges::new(partitions, 0)).members += 1;
            }
        }
        for &m in &members {
            for &t in &spec.subscriptions[m] {
                if let Some(range) = ranges[t].as_mut().and_then(TopicRanges::next_range) {
                    targets[m].extend(t, range);
                }
            }
        }
    }
    Ok(targets)
}
