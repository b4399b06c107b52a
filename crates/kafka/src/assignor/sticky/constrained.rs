//! `ConstrainedAssignmentBuilder` (spec §1.3 step 2a), used when every member subscribes to the
//! same topics. Members keep owned partitions up to their quota, in `HashMap` order, so the first
//! members to claim `maxQuota` keep it; owned partitions are kept in (partition, topic) order.
//! The rest is dealt round-robin to members below `minQuota`, then to members at `minQuota`.

use mqviz_engine::sort::StableSort;
use std::collections::VecDeque;

use super::super::group::{Group, NONE};
use super::super::AssignorError;
use super::rack_info::RackInfo;
use super::Ownership;

pub(super) struct Constrained {
    pub assignment: Vec<Vec<u32>>,
    /// `partitionsTransferringOwnership`: gid -> its new owner, in assignment order.
    pub transferring: Vec<(u32, u32)>,
}

struct Builder<'a> {
    g: &'a Group<'a>,
    rack: &'a RackInfo,
    multiple_owners: &'a [bool],
    min_quota: usize,
    max_quota: usize,
    expected_over_min: usize,
    current_over_min: usize,
    /// gid -> the member that owned it and may have to give it up.
    maybe_revoked: Vec<u32>,
    under_min: Vec<u32>,
    exactly_min: VecDeque<u32>,
    assignment: Vec<Vec<u32>>,
    transferring: Vec<(u32, u32)>,
}

pub(super) fn build(g: &Group, rack: &RackInfo, ownership: &Ownership) -> Result<Constrained, AssignorError> {
    let members = g.member_count();
    if members == 0 {
        return Err(AssignorError::Arithmetic("/ by zero".into()));
    }
    let total = g.partition_count();
    let mut b = Builder {
        g,
        rack,
        multiple_owners: &ownership.multiple_owners,
        min_quota: total / members,
        max_quota: total.div_ceil(members),
        expected_over_min: total % members,
        current_over_min: 0,
        maybe_revoked: vec![NONE; total],
        under_min: Vec::new(),
        exactly_min: VecDeque::new(),
        assignment: vec![Vec::new(); members],
        transferring: Vec::new(),
    };
    let mut kept = vec![false; total];
    b.assign_owned(&ownership.owned, &mut kept);
    let mut unassigned: Vec<u32> = (0..total as u32).filter(|gid| !kept[*gid as usize]).collect();
    let rank = &g.rank;
    b.under_min.stable_sort_by_key(|m| rank[*m as usize]);
    b.exactly_min.make_contiguous().stable_sort_by_key(|m| rank[*m as usize]);
    rack.sort_by_rack_consumers(&mut unassigned);
    if rack.enabled() {
        unassigned = b.assign_rack_aware_round_robin(unassigned);
    }
    b.assign_round_robin(&unassigned)?;
    b.verify_unfilled()?;
    Ok(Constrained { assignment: b.assignment, transferring: b.transferring })
}

impl Builder<'_> {
    fn assign_owned(&mut self, owned: &[Vec<u32>], kept: &mut [bool]) {
        for &m in &self.g.hash_order {
            let mut list: Vec<u32> = Vec::with_capacity(owned[m as usize].len());
            for &gid in &owned[m as usize] {
                if self.rack.mismatch(m as usize, gid) {
                    self.maybe_revoked[gid as usize] = m;
                } else {
                    list.push(gid);
                }
            }
            // Partition number first, then topic: topic indices follow name order.
            let g = self.g;
            list.stable_sort_by_key(|gid| (g.partition_of(*gid), g.topic_of[*gid as usize]));
            list.retain(|gid| !self.multiple_owners[*gid as usize]);
            let keep = if list.len() < self.min_quota {
                self.under_min.push(m);
                list.len()
            } else if list.len() >= self.max_quota && self.current_over_min < self.expected_over_min {
                self.current_over_min += 1;
                if self.current_over_min == self.expected_over_min {
                    self.exactly_min.clear();
                }
                self.max_quota
            } else {
                if self.current_over_min < self.expected_over_min {
                    self.exactly_min.push_back(m);
                }
                self.min_quota
            };
            for &gid in &list[keep..] {
                self.maybe_revoked[gid as usize] = m;
            }
            for &gid in &list[..keep] {
                kept[gid as usize] = true;
            }
            self.assignment[m as usize].extend_from_slice(&list[..keep]);
        }
    }

    /// Returns the partitions it could not place on a same-rack member.
    fn assign_rack_aware_round_robin(&mut self, unassigned: Vec<u32>) -> Vec<u32> {
        let mut left = Vec::with_capacity(unassigned.len());
        let mut next_index = 0usize;
        for gid in unassigned {
            let mut consumer = None;
            if let Some(mut index) = self.rack.next_rack_consumer(gid, &self.under_min, next_index) {
                let m = self.under_min[index];
                consumer = Some(m);
                let count = self.assignment[m as usize].len() + 1;
                if count >= self.min_quota {
                    self.under_min.remove(index);
                    if count < self.max_quota && self.current_over_min < self.expected_over_min {
                        self.exactly_min.push_back(m);
                    }
                } else {
                    index += 1;
                }
                next_index = if self.under_min.is_empty() { 0 } else { index % self.under_min.len() };
            } else if !self.exactly_min.is_empty() {
                let candidates: Vec<u32> = self.exactly_min.iter().copied().collect();
                if let Some(first) = self.rack.next_rack_consumer(gid, &candidates, 0) {
                    let m = candidates[first];
                    consumer = Some(m);
                    if self.assignment[m as usize].len() + 1 == self.max_quota {
                        self.exactly_min.remove(first);
                        self.current_over_min += 1;
                        if self.current_over_min == self.expected_over_min {
                            self.exactly_min.clear();
                        }
                    }
                }
            }
            match consumer {
                Some(m) => {
                    self.assign_new_partition(gid, m);
                }
                None => left.push(gid),
            }
        }
        left
    }

    fn assign_round_robin(&mut self, unassigned: &[u32]) -> Result<(), AssignorError> {
        // A LinkedList iterator over `under_min` that removes the member it just returned once
        // that member reaches minQuota: entries before `read` are compacted into `..write`.
        let (mut read, mut write) = (0usize, 0usize);
        for &gid in unassigned {
            let from_cursor = if read < self.under_min.len() {
                true
            } else if write == 0 && self.exactly_min.is_empty() {
                return Err(AssignorError::IllegalState("No more unfilled consumers to be assigned.".into()));
            } else if write == 0 {
                false
            } else {
                self.under_min.truncate(write);
                (read, write) = (0, 0);
                true
            };
            let consumer = if from_cursor {
                read += 1;
                self.under_min[read - 1]
            } else {
                self.exactly_min.pop_front().unwrap_or(NONE)
            };
            let count = self.assign_new_partition(gid, consumer);
            let reached_min = count == self.min_quota;
            if reached_min {
                if !from_cursor {
                    return Err(AssignorError::IllegalState("iterator remove without a current element".into()));
                }
                self.exactly_min.push_back(consumer);
            } else if count == self.max_quota {
                self.current_over_min += 1;
            }
            if from_cursor && !reached_min {
                self.under_min[write] = consumer;
                write += 1;
            }
        }
        self.under_min.drain(write..read);
        Ok(())
    }

    fn assign_new_partition(&mut self, gid: u32, member: u32) -> usize {
        let list = &mut self.assignment[member as usize];
        list.push(gid);
        let revoked_from = self.maybe_revoked[gid as usize];
        if (revoked_from != NONE && revoked_from != member) || self.multiple_owners[gid as usize] {
            self.transferring.push((gid, member));
        }
        list.len()
    }

    fn verify_unfilled(&self) -> Result<(), AssignorError> {
        if self.under_min.is_empty() {
            return Ok(());
        }
        if self.current_over_min != self.expected_over_min {
            return Err(AssignorError::IllegalState(
                "We haven't reached the expected number of members with more than the minQuota partitions, but no more partitions to be assigned"
                    .into(),
            ));
        }
        for &m in &self.under_min {
            if self.assignment[m as usize].len() != self.min_quota {
                return Err(AssignorError::IllegalState(format!(
                    "Consumer: [{}] doesn't reach minQuota partitions, and no more partitions to be assigned",
                    self.g.members[m as usize].id
                )));
            }
        }
        Ok(())
    }
}
