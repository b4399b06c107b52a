//! `UniformHomogeneousAssignmentBuilder` (spec §3, §10; checklist §8 item 9). Every member has
//! the same subscription. The first `T % N` members in `memberIds` order get the +1 quota whatever
//! they own; each keeps its previous target up to its quota (topics in map order, partitions in
//! set order); the unassigned partitions, topic-major in the order of the `HashSet` of topic ids,
//! go out in contiguous chunks to the members left under quota.

use super::spec::{GroupSpec, Target};
use super::AssignorError;

pub(super) fn assign(spec: &GroupSpec) -> Result<Vec<Target>, AssignorError> {
    let subscribed = spec.subscribed_topic_set(spec.member_order[0]);
    let mut targets = vec![Target::default(); spec.member_count()];
    if subscribed.is_empty() {
        return Ok(targets);
    }

    let mut unassigned: Vec<(usize, i32)> = Vec::new();
    let mut total: i64 = 0;
    for &t in &subscribed {
        let count = spec.topics[t].partitions;
        if count < 0 {
            return Err(AssignorError::PartitionAssignor(format!(
                "Members are subscribed to topic {} which doesn't exist in the topic metadata.",
                spec.topics[t].id
            )));
        }
        unassigned.extend((0..count).filter(|p| !spec.is_assigned(t, *p)).map(|p| (t, p)));
        total += count as i64;
    }
    let members = spec.member_count() as i64;
    let min_quota = total / members;
    let mut extra = total % members;

    let mut unfilled: Vec<(usize, i64)> = Vec::new();
    for &m in &spec.member_order {
        let mut quota = min_quota;
        if extra > 0 {
            quota += 1;
            extra -= 1;
        }
        for (t, partitions) in spec.previous_in_java_order(m) {
            if !subscribed.contains(&t) {
                continue;
            }
            if partitions.len() as i64 <= quota {
                quota -= partitions.len() as i64;
                targets[m].extend(t, partitions);
            } else {
                let keep = quota.max(0) as usize;
                quota -= keep as i64;
                targets[m].extend(t, partitions[..keep].iter().copied());
                unassigned.extend(partitions[keep..].iter().map(|p| (t, *p)));
            }
        }
        if quota > 0 {
            unfilled.push((m, quota));
        }
    }

    let mut next = 0usize;
    for (m, quota) in unfilled {
        for _ in 0..quota {
            let Some(&(t, p)) = unassigned.get(next) else { break };
            next += 1;
            targets[m].add(t, p);
        }
    }
    if next < unassigned.len() {
        return Err(AssignorError::PartitionAssignor("Partitions were left unassigned".into()));
    }
    Ok(targets)
}
