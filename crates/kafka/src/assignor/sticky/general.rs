//! `GeneralAssignmentBuilder` (spec §1.3 step 2b), used when subscriptions differ: keep valid
//! owned partitions, give each unassigned partition to the least loaded subscriber, then move
//! partitions until balanced, reverting when the result is not more balanced than before.
//!
//! Members that cannot take part in balancing ("fixed") leave `currentAssignment`; upstream then
//! dereferences such a member when a partition's previous owner is one of them, a
//! `NullPointerException` reproduced here as [`AssignorError::NullPointer`].

use super::super::group::{Group, NONE};
use super::super::AssignorError;
use super::load_index::LoadIndex;
use super::movements::{partition_hash, PartitionMovements};
use super::rack_info::RackInfo;
use super::{member_data, Ownership, DEFAULT_GENERATION};
use mqviz_engine::sort::StableSort;

struct Builder<'a> {
    g: &'a Group<'a>,
    rack: &'a RackInfo,
    /// `topic2AllPotentialConsumers`, in subscription `HashMap` order, duplicates kept.
    topic_consumers: Vec<Vec<u32>>,
    /// `currentPartitionConsumer`.
    owner: Vec<u32>,
    /// `prevAssignment`: gid -> (member, generation) of the newest older-generation claim.
    prev: Vec<(u32, i32)>,
    /// `getMaxAssignmentSize`: all partitions when the (possibly repetitive) list of potential
    /// topics is as long as the topic list, else the sum over that list.
    max_assignment: Vec<u32>,
    index: LoadIndex,
    movements: PartitionMovements,
}

fn npe(what: &str) -> AssignorError {
    AssignorError::NullPointer(format!("{what} is not in currentAssignment"))
}

pub(super) fn build(g: &Group, rack: &RackInfo, ownership: Ownership) -> Result<Vec<Vec<u32>>, AssignorError> {
    let members = g.member_count();
    let topics = g.topics.len();
    let mut topic_consumers = vec![Vec::new(); topics];
    let mut potential = vec![Vec::new(); members];
    for &m in &g.hash_order {
        for &t in &g.subscribed[m as usize] {
            potential[m as usize].push(t);
            topic_consumers[t as usize].push(m);
        }
    }
    let mut topic_order: Vec<u32> = (0..topics as u32).collect();
    topic_order.stable_sort_by_key(|t| (topic_consumers[*t as usize].len(), *t));
    let mut sorted_all: Vec<u32> = Vec::with_capacity(g.partition_count());
    for t in topic_order {
        let topic = &g.topics[t as usize];
        sorted_all.extend(topic.first_gid..topic.first_gid + topic.count);
    }

    let prev = previous_assignment(g, ownership.max_generation);
    let max_assignment: Vec<u32> = potential
        .iter()
        .map(|topics| {
            if topics.len() == g.topics.len() {
                g.partition_count() as u32
            } else {
                topics.iter().map(|t| g.topics[*t as usize].count).sum()
            }
        })
        .collect();
    let distinct: Vec<Vec<u32>> = potential
        .iter()
        .map(|list| {
            let mut d = list.clone();
            d.stable_sort();
            d.dedup();
            d
        })
        .collect();
    let mut b = Builder {
        g,
        rack,
        topic_consumers,
        owner: vec![NONE; g.partition_count()],
        prev,
        index: LoadIndex::new(&g.rank, distinct, max_assignment.clone(), topics),
        max_assignment,
        movements: PartitionMovements::new(),
    };

    // assignOwnedPartitions: claims on unsubscribed topics or other racks are dropped.
    let mut revocation_required = false;
    for (m, owned) in ownership.owned.iter().enumerate() {
        for &gid in owned {
            let t = g.topic_of[gid as usize];
            if !g.subscribes(m, t) || rack.mismatch(m, gid) {
                revocation_required = true;
            } else {
                b.owner[gid as usize] = m as u32;
                b.index.transfer(t, None, m);
            }
        }
    }
    let unassigned: Vec<u32> = sorted_all.iter().copied().filter(|gid| b.owner[*gid as usize] == NONE).collect();
    b.balance(sorted_all, unassigned, revocation_required)?;

    let mut out = vec![Vec::new(); members];
    for (gid, m) in b.owner.iter().enumerate() {
        if *m != NONE {
            out[*m as usize].push(gid as u32);
        }
    }
    Ok(out)
}

/// `prepopulateCurrentAssignments`: claims of members older than the newest generation (members
/// without one count as generation -1 once some member has one); the newest older claim wins,
/// the first in `HashMap` order on ties.
fn previous_assignment(g: &Group, max_generation: i32) -> Vec<(u32, i32)> {
    let mut prev = vec![(NONE, 0); g.partition_count()];
    for &m in &g.hash_order {
        let generation = match member_data(g, m as usize).generation {
            Some(gen) if gen < max_generation => gen,
            None if max_generation > DEFAULT_GENERATION => DEFAULT_GENERATION,
            _ => continue,
        };
        for &gid in &g.owned[m as usize] {
            let slot = &mut prev[gid as usize];
            if slot.0 == NONE || generation > slot.1 {
                *slot = (m, generation);
            }
        }
    }
    prev
}

fn balance_score(sizes: &[u32]) -> i64 {
    let mut sorted: Vec<i64> = sizes.iter().map(|s| *s as i64).collect();
    sorted.stable_sort();
    let n = sorted.len() as i64;
    sorted.iter().enumerate().map(|(i, s)| s * (2 * i as i64 - n + 1)).sum()
}

impl Builder<'_> {
    fn can_participate(&self, member: usize) -> bool {
        self.index.size(member) < self.max_assignment[member]
            || self.index.held_topics(member).any(|t| self.topic_consumers[t as usize].len() >= 2)
    }

    fn maybe_assign(&mut self, gid: u32, match_racks: bool) -> bool {
        let t = self.g.topic_of[gid as usize];
        if self.topic_consumers[t as usize].is_empty() {
            return false;
        }
        let found = if match_racks {
            self.index.consumers_by_load(t).into_iter().find(|m| !self.rack.mismatch(*m, gid))
        } else {
            self.index.least_loaded(t)
        };
        let Some(m) = found else { return false };
        self.owner[gid as usize] = m as u32;
        self.index.transfer(t, None, m);
        true
    }

    fn balance(
        &mut self,
        mut sorted_all: Vec<u32>,
        mut unassigned: Vec<u32>,
        revocation_required: bool,
    ) -> Result<(), AssignorError> {
        let initializing = self.index.max_size() == 0;
        let mut to_assign = unassigned.clone();
        if self.rack.enabled() {
            to_assign.retain(|gid| !self.maybe_assign(*gid, true));
        }
        for gid in to_assign {
            self.maybe_assign(gid, false);
        }

        let fixed_topic: Vec<bool> = self.topic_consumers.iter().map(|c| c.len() < 2).collect();
        let topic_of = &self.g.topic_of;
        sorted_all.retain(|gid| !fixed_topic[topic_of[*gid as usize] as usize]);
        unassigned.retain(|gid| !fixed_topic[topic_of[*gid as usize] as usize]);
        for m in 0..self.g.member_count() {
            if !self.can_participate(m) {
                self.index.deactivate(m);
            }
        }

        let saved_owner = self.owner.clone();
        let (saved_size, saved_held) = self.index.snapshot();
        let saved_score = balance_score(&self.index.active_sizes());
        self.index.track_balance();
        if !revocation_required {
            self.perform_reassignments(&unassigned)?;
        }
        let performed = self.perform_reassignments(&sorted_all)?;
        if !initializing && performed && balance_score(&self.index.active_sizes()) >= saved_score {
            self.owner = saved_owner;
            self.index.restore(saved_size, saved_held);
        }
        Ok(())
    }

    fn perform_reassignments(&mut self, partitions: &[u32]) -> Result<bool, AssignorError> {
        let mut performed = false;
        loop {
            let mut modified = false;
            for &gid in partitions {
                if self.index.is_balanced() {
                    break;
                }
                let t = self.g.topic_of[gid as usize];
                let c = self.owner[gid as usize];
                if c == NONE || !self.index.is_active(c as usize) {
                    return Err(npe("the partition's consumer"));
                }
                let c_size = self.index.size(c as usize);
                let (previous, _) = self.prev[gid as usize];
                if previous != NONE {
                    if !self.index.is_active(previous as usize) {
                        return Err(npe(&format!("previous owner {}", self.g.members[previous as usize].id)));
                    }
                    if c_size > self.index.size(previous as usize) + 1 {
                        self.reassign(gid, previous as usize);
                        performed = true;
                        modified = true;
                        continue;
                    }
                }
                let least = self.index.least_loaded(t);
                let lighter_exists = least.is_some_and(|m| c_size > self.index.size(m) + 1);
                if self.same_rack_consumer_is_lighter(gid, c as usize)? || lighter_exists {
                    let Some(least) = least else { return Err(npe("new consumer")) };
                    self.reassign(gid, least);
                    performed = true;
                    modified = true;
                }
            }
            if !modified {
                return Ok(performed);
            }
        }
    }

    /// The rack-aware check of `performReassignments`: the owner is on one of the partition's
    /// racks and some same-rack potential consumer has at least two partitions fewer.
    fn same_rack_consumer_is_lighter(&self, gid: u32, owner: usize) -> Result<bool, AssignorError> {
        let Some(owner_rack) = self.rack.consumer_rack(owner) else { return Ok(false) };
        let racks = self.rack.partition_racks(gid);
        if racks.is_empty() || !racks.contains(&owner_rack) {
            return Ok(false);
        }
        let owner_size = self.index.size(owner);
        for &other in &self.topic_consumers[self.g.topic_of[gid as usize] as usize] {
            let Some(other_rack) = self.rack.consumer_rack(other as usize) else { continue };
            if !racks.contains(&other_rack) {
                continue;
            }
            if !self.index.is_active(other as usize) {
                return Err(npe("a potential consumer"));
            }
            if owner_size > self.index.size(other as usize) + 1 {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `reassignPartition(partition, newConsumer)` + `processPartitionMovement`.
    fn reassign(&mut self, gid: u32, new_owner: usize) {
        let t = self.g.topic_of[gid as usize];
        let current = self.owner[gid as usize];
        let moved = self.movements.actual_partition_to_move(gid, t, current, new_owner as u32);
        let old = self.owner[moved as usize];
        let topic = &self.g.topics[t as usize];
        self.movements.move_partition(moved, t, partition_hash(topic.name_hash, moved - topic.first_gid), old, new_owner as u32);
        self.owner[moved as usize] = new_owner as u32;
        self.index.transfer(t, (old != NONE).then_some(old as usize), new_owner);
    }
}
