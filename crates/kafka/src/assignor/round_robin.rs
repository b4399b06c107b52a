//! `RoundRobinAssignor` (spec §1.2): every member in `MemberInfo` order on one circular cursor that
//! is never reset; topics in name order, partitions ascending; the cursor skips members that do not
//! subscribe to the partition's topic.

use super::group::Group;
use super::AssignorError;

pub(super) fn assign(g: &Group) -> Result<Vec<Vec<u32>>, AssignorError> {
    let mut out = vec![Vec::new(); g.member_count()];
    let mut members: Vec<u32> = g.hash_order.clone();
    if members.is_empty() {
        return Err(AssignorError::IllegalArgument("CircularIterator can only be used on non-empty lists".into()));
    }
    g.sort_member_info(&mut members);
    let mut cursor = 0usize;
    // Topics without metadata have no partitions, so walking `partitionsPerTopic` in name order
    // visits the same partitions as the upstream TreeSet of all subscribed names.
    for (t, topic) in g.topics.iter().enumerate() {
        for p in 0..topic.count {
            while !g.subscribes(members[cursor] as usize, t as u32) {
                cursor = (cursor + 1) % members.len();
            }
            out[members[cursor] as usize].push(topic.first_gid + p);
            cursor = (cursor + 1) % members.len();
        }
    }
    Ok(out)
}
