//! `RangeAssignor` (spec §1.1): per topic, consumers in `MemberInfo` order take contiguous runs of
//! `n / k` partitions, the first `n % k` one more. With consumer racks (KIP-881) a rack-matching
//! pass runs first, co-partitioned topics (same consumers, same partition count) moving together;
//! balance per topic is never given up for rack alignment.

use mqviz_engine::sort::CollectSorted;
use std::collections::{BTreeMap, BTreeSet};

use super::group::Group;
use super::rack::{replica_racks, use_rack_aware};

struct TopicState<'a> {
    topic: u32,
    /// Subscribers in `MemberInfo` order.
    consumers: Vec<u32>,
    /// Each consumer's rack, parallel to `consumers`.
    consumer_racks: Vec<Option<&'a str>>,
    /// Replica racks per partition; empty when no subscriber has a rack.
    partition_racks: Vec<BTreeSet<&'a str>>,
    needs_rack_aware: bool,
    /// Whether each partition is still unassigned; `first_free` is the lowest such partition.
    free: Vec<bool>,
    first_free: u32,
    free_count: u32,
    assigned_count: Vec<u32>,
    per_consumer: u32,
    remaining_with_extra: u32,
}

impl<'a> TopicState<'a> {
    fn new(g: &'a Group, topic: u32, consumers: Vec<u32>) -> TopicState<'a> {
        let t = &g.topics[topic as usize];
        let consumer_racks: Vec<Option<&str>> = consumers.iter().map(|m| g.rack_of(*m as usize)).collect();
        let all_consumer_racks: BTreeSet<&str> = consumer_racks.iter().flatten().copied().collect_set();
        let partition_racks: Vec<BTreeSet<&str>> =
            if all_consumer_racks.is_empty() { Vec::new() } else { (0..t.count).map(|p| replica_racks(t.metadata, p)).collect() };
        let all_partition_racks: BTreeSet<&str> = partition_racks.iter().flatten().copied().collect_set();
        let needs_rack_aware = use_rack_aware(&all_consumer_racks, &all_partition_racks, partition_racks.iter());
        let k = consumers.len() as u32;
        TopicState {
            topic,
            needs_rack_aware,
            free: vec![true; t.count as usize],
            first_free: 0,
            free_count: t.count,
            assigned_count: vec![0; consumers.len()],
            per_consumer: t.count.checked_div(k).unwrap_or(0),
            remaining_with_extra: t.count.checked_rem(k).unwrap_or(0),
            consumers,
            consumer_racks,
            partition_racks,
        }
    }

    fn max_assignable(&self, slot: usize) -> u32 {
        (self.per_consumer + u32::from(self.remaining_with_extra > 0)).saturating_sub(self.assigned_count[slot])
    }

    fn racks_match(&self, slot: usize, partition: u32) -> bool {
        match self.consumer_racks[slot] {
            None => true,
            Some(rack) => self.partition_racks.get(partition as usize).is_some_and(|r| r.contains(rack)),
        }
    }

    fn on_assigned(&mut self, slot: usize, partitions: &[u32]) {
        self.assigned_count[slot] += partitions.len() as u32;
        if self.assigned_count[slot] > self.per_consumer {
            self.remaining_with_extra = self.remaining_with_extra.saturating_sub(1);
        }
        for p in partitions {
            if std::mem::replace(&mut self.free[*p as usize], false) {
                self.free_count -= 1;
            }
        }
        while (self.first_free as usize) < self.free.len() && !self.free[self.first_free as usize] {
            self.first_free += 1;
        }
    }

    fn unassigned(&self) -> impl Iterator<Item = u32> + '_ {
        (self.first_free..self.free.len() as u32).filter(|p| self.free[*p as usize])
    }
}

fn give(state: &mut TopicState, slot: usize, partitions: &[u32], out: &mut [Vec<u32>], g: &Group) {
    let first = g.topics[state.topic as usize].first_gid;
    out[state.consumers[slot] as usize].extend(partitions.iter().map(|p| first + p));
    state.on_assigned(slot, partitions);
}

fn assign_ranges(state: &mut TopicState, rack_match: bool, out: &mut [Vec<u32>], g: &Group) {
    let mut picked: Vec<u32> = Vec::new();
    for slot in 0..state.consumers.len() {
        if state.free_count == 0 {
            break;
        }
        let limit = state.max_assignable(slot) as usize;
        if limit == 0 {
            continue;
        }
        picked.clear();
        picked.extend(state.unassigned().filter(|p| !rack_match || state.racks_match(slot, *p)).take(limit));
        if !picked.is_empty() {
            give(state, slot, &picked, out, g);
        }
    }
}

/// `assignCoPartitionedWithRackMatching`: partition `i` of every topic goes to the first consumer
/// that matches racks for all of them and still has room in all of them.
fn assign_co_partitioned(states: &mut [&mut TopicState], partitions: u32, out: &mut [Vec<u32>], g: &Group) {
    let mut remaining: Vec<usize> = (0..states[0].consumers.len()).collect();
    for p in 0..partitions {
        let found =
            remaining.iter().position(|slot| states.iter().all(|s| s.racks_match(*slot, p) && s.max_assignable(*slot) > 0));
        let Some(at) = found else { continue };
        let slot = remaining[at];
        for s in states.iter_mut() {
            give(s, slot, &[p], out, g);
        }
        if states.iter().all(|s| s.max_assignable(slot) == 0) {
            remaining.remove(at);
            if remaining.is_empty() {
                break;
            }
        }
    }
}

pub(super) fn assign(g: &Group) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new(); g.member_count()];
    // Each topic's consumers in `MemberInfo` order: the group sorted once, then split by topic.
    let mut ordered = g.hash_order.clone();
    g.sort_member_info(&mut ordered);
    let mut consumers: Vec<Vec<u32>> = vec![Vec::new(); g.topics.len()];
    for &m in &ordered {
        for &t in &g.subscribed[m as usize] {
            let list = &mut consumers[t as usize];
            if list.last() != Some(&m) {
                list.push(m);
            }
        }
    }
    let mut states: Vec<TopicState> = consumers.into_iter().enumerate().map(|(t, c)| TopicState::new(g, t as u32, c)).collect();
    if states.iter().any(|s| s.needs_rack_aware) {
        // Groups of topics with the same consumers, then the same number of partition-rack
        // entries (0 when no consumer has a rack). Each topic is in one group, so the order of
        // the groups does not matter.
        let mut groups: BTreeMap<(Vec<u32>, usize), Vec<usize>> = BTreeMap::new();
        for (i, s) in states.iter().enumerate() {
            groups.entry((s.consumers.clone(), s.partition_racks.len())).or_default().push(i);
        }
        for ((_, partitions), members) in groups {
            let mut picked: Vec<&mut TopicState> =
                states.iter_mut().enumerate().filter(|(i, _)| members.contains(i)).map(|(_, s)| s).collect();
            if picked.len() > 1 {
                assign_co_partitioned(&mut picked, partitions as u32, &mut out, g);
            } else if picked[0].needs_rack_aware {
                assign_ranges(picked[0], true, &mut out, g);
            }
        }
    }
    for s in &mut states {
        assign_ranges(s, false, &mut out, g);
    }
    out
}
