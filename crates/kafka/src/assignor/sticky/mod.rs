//! `AbstractStickyAssignor` and its two subclasses (spec §1.3): `sticky` (eager, previous
//! assignment from userData) and `cooperative-sticky` (owned partitions from the protocol, moved
//! partitions withheld for one round).
//!
//! Step 1 walks the subscriptions in `HashMap` order to settle previously owned partitions; then
//! the constrained builder runs when all subscriptions are equal, the general builder otherwise.

mod constrained;
mod general;
mod load_index;
mod movements;
mod rack_info;

use std::collections::HashSet;

use super::group::{Group, NONE};
use super::AssignorError;
use rack_info::RackInfo;

/// `AbstractStickyAssignor.DEFAULT_GENERATION`.
const DEFAULT_GENERATION: i32 = -1;

/// `memberData(subscription)`. Its partitions are the member's `owned` list (`Group::owned`);
/// the generation is absent for a member that never had an assignment.
struct MemberData {
    generation: Option<i32>,
}

/// Step 1 output (`allSubscriptionsEqual`).
pub(super) struct Ownership {
    /// `consumerToOwnedPartitions`: still-valid claims, one owner per partition.
    pub owned: Vec<Vec<u32>>,
    /// Partitions claimed by two members of the same generation (by gid).
    pub multiple_owners: Vec<bool>,
    pub max_generation: i32,
    pub all_subscriptions_equal: bool,
}

fn member_data(g: &Group, member: usize) -> MemberData {
    let generation = g.members[member].generation;
    MemberData { generation: (generation >= 0).then_some(generation) }
}

/// The protocol-level `Subscription.generationId` (-1 when absent). `ConsumerCoordinator`
/// sends its generation whatever the assignor, so eager `sticky` members carry it too.
fn protocol_generation(g: &Group, member: usize) -> i32 {
    g.members[member].generation.max(DEFAULT_GENERATION)
}

fn remove_first(list: &mut Vec<u32>, gid: u32) {
    if let Some(i) = list.iter().position(|x| *x == gid) {
        list.remove(i);
    }
}

/// `allSubscriptionsEqual`, which also settles competing ownership claims: a newer generation
/// wins, equal generations void the claim for both (§8 item 7).
fn settle_ownership(g: &Group) -> Ownership {
    let mut equal = true;
    // The first non-empty subscription, as a set of name ids (and its size).
    let mut reference: Option<(Vec<bool>, usize)> = None;
    let mut max_generation = DEFAULT_GENERATION;
    let mut owned: Vec<Vec<u32>> = vec![Vec::new(); g.member_count()];
    let mut owner_of = vec![NONE; g.partition_count()];
    let mut multiple_owners = vec![false; g.partition_count()];
    for &m in &g.hash_order {
        let m = m as usize;
        let topics = &g.raw_topics[m];
        match &reference {
            // An empty subscription leaves the reference set empty, so the next one replaces it.
            Some((set, len)) if *len > 0 => {
                if equal && !(topics.len() == *len && topics.iter().all(|t| set[*t as usize])) {
                    equal = false;
                }
            }
            _ => {
                let mut set = vec![false; g.raw_topic_count];
                topics.iter().for_each(|t| set[*t as usize] = true);
                let len = set.iter().filter(|x| **x).count();
                reference = Some((set, len));
            }
        }
        let generation = member_data(g, m).generation.unwrap_or(DEFAULT_GENERATION);
        max_generation = max_generation.max(generation);
        for &gid in &g.owned[m] {
            let other = owner_of[gid as usize];
            if other == NONE {
                owned[m].push(gid);
                owner_of[gid as usize] = m as u32;
                continue;
            }
            let other_generation = protocol_generation(g, other as usize);
            if generation == other_generation {
                multiple_owners[gid as usize] = true;
                remove_first(&mut owned[other as usize], gid);
                owner_of[gid as usize] = m as u32;
            } else if generation > other_generation {
                owned[m].push(gid);
                remove_first(&mut owned[other as usize], gid);
                owner_of[gid as usize] = m as u32;
            }
        }
    }
    Ownership { owned, multiple_owners, max_generation, all_subscriptions_equal: equal }
}

/// Runs the sticky assignor; `cooperative` selects `cooperative-sticky`.
pub(super) fn assign(g: &Group, cooperative: bool) -> Result<Vec<Vec<u32>>, AssignorError> {
    let ownership = settle_ownership(g);
    let rack = RackInfo::new(g);
    if ownership.all_subscriptions_equal {
        let result = constrained::build(g, &rack, &ownership)?;
        let mut assignment = result.assignment;
        if cooperative {
            for (gid, member) in result.transferring {
                remove_first(&mut assignment[member as usize], gid);
            }
        }
        Ok(assignment)
    } else {
        let mut assignment = general::build(g, &rack, ownership)?;
        if cooperative {
            withhold_transferring(g, &mut assignment);
        }
        Ok(assignment)
    }
}

/// `computePartitionsTransferringOwnership` for the general builder: partitions added to one
/// member while another member that reported owning them loses them stay unassigned this round.
fn withhold_transferring(g: &Group, assignment: &mut [Vec<u32>]) {
    let mut added_to = vec![NONE; g.partition_count()];
    let mut revoked = vec![false; g.partition_count()];
    for (m, assigned) in assignment.iter().enumerate() {
        let owned: HashSet<u32> = g.owned[m].iter().copied().collect();
        let assigned_set: HashSet<u32> = assigned.iter().copied().collect();
        for gid in assigned {
            if !owned.contains(gid) {
                added_to[*gid as usize] = m as u32;
            }
        }
        for gid in &g.owned[m] {
            if !assigned_set.contains(gid) {
                revoked[*gid as usize] = true;
            }
        }
    }
    for (gid, member) in added_to.iter().enumerate() {
        if *member != NONE && revoked[gid] {
            remove_first(&mut assignment[*member as usize], gid as u32);
        }
    }
}
