//! Assignment sizes for the general builder, indexed so that each question the upstream code
//! answers by scanning is answered from heaps:
//!
//! - `sortedCurrentSubscriptions` (members by size, then id): its extremes come from a size
//!   histogram, and its first member subscribed to a topic from a per-topic heap of
//!   (size, id rank) entries;
//! - `isBalanced()`: a member `c` below its maximum assignment size is unbalanced when a partition
//!   of one of its topics sits with a member holding at least two more than `c`. That holder is
//!   never `c` itself, so per topic it is enough to compare the largest holder with the smallest
//!   potential consumer below its maximum. Holders need not subscribe to the topic: a partition
//!   can go back to its previous owner after that owner unsubscribed.
//!
//! Heaps are lazy: a size change pushes fresh entries and entries that no longer describe their
//! member are dropped when they reach the top.

use mqviz_engine::sort::StableSort;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// (assignment size, rank of the member id in Java `String` order).
type Load = (u32, u32);

pub(super) struct LoadIndex {
    rank: Vec<u32>,
    member_of_rank: Vec<u32>,
    size: Vec<u32>,
    /// Members still in `currentAssignment` (not removed as fixed).
    active: Vec<bool>,
    /// Distinct potential topics of each member.
    potential: Vec<Vec<u32>>,
    /// `getMaxAssignmentSize` of each member.
    max_assignment: Vec<u32>,
    /// Partitions of each topic held by each member.
    held: Vec<BTreeMap<u32, u32>>,
    /// Active members per assignment size.
    sizes: BTreeMap<u32, u32>,
    /// Per topic: active potential consumers, least loaded first.
    by_topic: Vec<BinaryHeap<Reverse<Load>>>,
    /// Heap size past which a topic's heaps drop their stale entries.
    compact_at: Vec<usize>,
    balance: Option<BalanceTracker>,
}

struct BalanceTracker {
    /// Per topic: active potential consumers below their maximum size, least loaded first.
    below_max: Vec<BinaryHeap<Reverse<Load>>>,
    /// Per topic: (size, member) of active holders, largest first.
    holders: Vec<BinaryHeap<(u32, u32)>>,
    /// Topics with at least one potential consumer (the only ones `isBalanced` looks at).
    topics: Vec<u32>,
}

impl LoadIndex {
    pub fn new(rank: &[u32], potential: Vec<Vec<u32>>, max_assignment: Vec<u32>, topics: usize) -> LoadIndex {
        let mut member_of_rank = vec![0; rank.len()];
        for (m, r) in rank.iter().enumerate() {
            member_of_rank[*r as usize] = m as u32;
        }
        let members = rank.len();
        let mut compact_at = vec![64usize; topics];
        for list in &potential {
            for t in list {
                compact_at[*t as usize] += 4;
            }
        }
        let mut index = LoadIndex {
            compact_at,
            rank: rank.to_vec(),
            member_of_rank,
            size: vec![0; members],
            active: vec![true; members],
            potential,
            max_assignment,
            held: vec![BTreeMap::new(); members],
            sizes: BTreeMap::new(),
            by_topic: vec![BinaryHeap::new(); topics],
            balance: None,
        };
        index.rebuild();
        index
    }

    pub fn size(&self, member: usize) -> u32 {
        self.size[member]
    }

    pub fn is_active(&self, member: usize) -> bool {
        self.active[member]
    }

    pub fn held_topics(&self, member: usize) -> impl Iterator<Item = u32> + '_ {
        self.held[member].keys().copied()
    }

    fn add_size(&mut self, size: u32, delta: i32) {
        let n = self.sizes.entry(size).or_default();
        *n = n.wrapping_add_signed(delta);
        if *n == 0 {
            self.sizes.remove(&size);
        }
    }

    /// Pushes the member's current entries (after a size change).
    fn publish(&mut self, member: usize) {
        if !self.active[member] {
            return;
        }
        let load = (self.size[member], self.rank[member]);
        let below_max = load.0 != self.max_assignment[member];
        for &t in &self.potential[member] {
            let t = t as usize;
            self.by_topic[t].push(Reverse(load));
            if self.by_topic[t].len() > self.compact_at[t] {
                let live = self.live_consumers(&self.by_topic[t], false);
                self.by_topic[t] = live.into_iter().map(Reverse).collect();
            }
            if below_max {
                if let Some(b) = &mut self.balance {
                    b.below_max[t].push(Reverse(load));
                }
            }
            if let Some(b) = &self.balance {
                if b.below_max[t].len() > self.compact_at[t] {
                    let live = self.live_consumers(&b.below_max[t], true);
                    if let Some(b) = &mut self.balance {
                        b.below_max[t] = live.into_iter().map(Reverse).collect();
                    }
                }
            }
        }
        if let Some(b) = &mut self.balance {
            for &t in self.held[member].keys() {
                let t = t as usize;
                b.holders[t].push((load.0, member as u32));
                if b.holders[t].len() > self.compact_at[t] + self.size.len() {
                    let mut live: Vec<(u32, u32)> = b.holders[t]
                        .drain()
                        .filter(|(s, m)| {
                            let m = *m as usize;
                            self.active[m] && self.size[m] == *s && self.held[m].contains_key(&(t as u32))
                        })
                        .collect();
                    live.stable_sort();
                    live.dedup();
                    b.holders[t] = BinaryHeap::from(live);
                }
            }
        }
    }

    /// The entries of a consumer heap that still describe their member, sorted, without repeats.
    fn live_consumers(&self, heap: &BinaryHeap<Reverse<Load>>, below_max: bool) -> Vec<Load> {
        let mut live: Vec<Load> = heap.iter().map(|r| r.0).filter(|l| self.valid_consumer(*l, below_max)).collect();
        live.stable_sort();
        live.dedup();
        live
    }

    /// Moves one partition of `topic` from `from` (if any) to `to`.
    pub fn transfer(&mut self, topic: u32, from: Option<usize>, to: usize) {
        for (m, delta) in from.map(|f| (f, -1i32)).into_iter().chain([(to, 1)]) {
            if self.active[m] {
                self.add_size(self.size[m], -1);
                self.add_size(self.size[m].wrapping_add_signed(delta), 1);
            }
            self.size[m] = self.size[m].wrapping_add_signed(delta);
            let count = self.held[m].entry(topic).or_default();
            *count = count.wrapping_add_signed(delta);
            if *count == 0 {
                self.held[m].remove(&topic);
            }
        }
        if let Some(f) = from {
            self.publish(f);
        }
        self.publish(to);
    }

    /// Drops a member from the balancing scope (a "fixed" assignment).
    pub fn deactivate(&mut self, member: usize) {
        if self.active[member] {
            self.add_size(self.size[member], -1);
            self.active[member] = false;
        }
    }

    /// Starts tracking `isBalanced()`; call once the balancing scope is final.
    pub fn track_balance(&mut self) {
        let topics = self.by_topic.len();
        let mut with_consumers = vec![false; topics];
        for m in 0..self.size.len() {
            if self.active[m] {
                for t in &self.potential[m] {
                    with_consumers[*t as usize] = true;
                }
            }
        }
        self.balance = Some(BalanceTracker {
            below_max: vec![BinaryHeap::new(); topics],
            holders: vec![BinaryHeap::new(); topics],
            topics: (0..topics as u32).filter(|t| with_consumers[*t as usize]).collect(),
        });
        for m in 0..self.size.len() {
            self.publish(m);
        }
    }

    fn valid_consumer(&self, load: Load, below_max: bool) -> bool {
        let m = self.member_of_rank[load.1 as usize] as usize;
        self.active[m] && self.size[m] == load.0 && (!below_max || self.max_assignment[m] != load.0)
    }

    /// `isBalanced()` over the active members; needs [`LoadIndex::track_balance`].
    pub fn is_balanced(&mut self) -> bool {
        let (Some((&min, _)), Some((&max, _))) = (self.sizes.first_key_value(), self.sizes.last_key_value()) else { return true };
        if min + 1 >= max {
            return true;
        }
        let Some(mut b) = self.balance.take() else { return true };
        let mut balanced = true;
        for &t in &b.topics {
            let holders = &mut b.holders[t as usize];
            let largest = loop {
                match holders.peek() {
                    None => break None,
                    Some(&(s, m)) => {
                        let m = m as usize;
                        if self.active[m] && self.size[m] == s && self.held[m].contains_key(&t) {
                            break Some(s);
                        }
                        holders.pop();
                    }
                }
            };
            let Some(largest) = largest else { continue };
            let consumers = &mut b.below_max[t as usize];
            let smallest = loop {
                match consumers.peek() {
                    None => break None,
                    Some(&Reverse(load)) if self.valid_consumer(load, true) => break Some(load.0),
                    Some(_) => {
                        consumers.pop();
                    }
                }
            };
            if smallest.is_some_and(|s| largest >= s + 2) {
                balanced = false;
                break;
            }
        }
        self.balance = Some(b);
        balanced
    }

    /// The largest assignment size among active members (0 when none).
    pub fn max_size(&self) -> u32 {
        self.sizes.last_key_value().map_or(0, |(s, _)| *s)
    }

    /// The least loaded active potential consumer of a topic (ties: smaller member id).
    pub fn least_loaded(&mut self, topic: u32) -> Option<usize> {
        let heap = &mut self.by_topic[topic as usize];
        loop {
            let &Reverse(load) = heap.peek()?;
            let m = self.member_of_rank[load.1 as usize] as usize;
            if self.active[m] && self.size[m] == load.0 {
                return Some(m);
            }
            heap.pop();
        }
    }

    /// Active potential consumers of a topic from the least loaded (ties: smaller member id).
    pub fn consumers_by_load(&self, topic: u32) -> Vec<usize> {
        self.live_consumers(&self.by_topic[topic as usize], false)
            .into_iter()
            .map(|l| self.member_of_rank[l.1 as usize] as usize)
            .collect()
    }

    /// Sizes of the active members, for the balance score.
    pub fn active_sizes(&self) -> Vec<u32> {
        self.sizes.iter().flat_map(|(s, n)| std::iter::repeat_n(*s, *n as usize)).collect()
    }

    /// Rebuilds every view from `size`, `held` and `active`; balance tracking stops.
    fn rebuild(&mut self) {
        self.balance = None;
        self.sizes.clear();
        self.by_topic.iter_mut().for_each(BinaryHeap::clear);
        for m in 0..self.size.len() {
            if self.active[m] {
                self.add_size(self.size[m], 1);
            }
            self.publish(m);
        }
    }

    /// Restores sizes and holdings saved earlier.
    pub fn restore(&mut self, size: Vec<u32>, held: Vec<BTreeMap<u32, u32>>) {
        self.size = size;
        self.held = held;
        self.rebuild();
    }

    pub fn snapshot(&self) -> (Vec<u32>, Vec<BTreeMap<u32, u32>>) {
        (self.size.clone(), self.held.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqviz_engine::SplitMix64;

    /// The upstream definitions, by brute force.
    fn naive_balanced(index: &LoadIndex, owner: &[(u32, usize)], topics: usize) -> bool {
        let active: Vec<usize> = (0..index.size.len()).filter(|m| index.active[*m]).collect();
        let (Some(min), Some(max)) = (active.iter().map(|m| index.size[*m]).min(), active.iter().map(|m| index.size[*m]).max())
        else {
            return true;
        };
        if min + 1 >= max {
            return true;
        }
        for &c in &active {
            if index.size[c] == index.max_assignment[c] {
                continue;
            }
            for t in 0..topics as u32 {
                if !index.potential[c].contains(&t) {
                    continue;
                }
                if owner.iter().any(|(pt, o)| *pt == t && *o != c && index.active[*o] && index.size[c] + 1 < index.size[*o]) {
                    return false;
                }
            }
        }
        true
    }

    #[test]
    fn lazy_heaps_agree_with_brute_force() {
        let mut rng = SplitMix64::new(42);
        for round in 0..40 {
            let members = 2 + rng.index(12);
            let topics = 1 + rng.index(5);
            let potential: Vec<Vec<u32>> = (0..members)
                .map(|_| {
                    let mut p: Vec<u32> = (0..topics as u32).filter(|_| rng.one_in(2)).collect();
                    p.dedup();
                    p
                })
                .collect();
            let max: Vec<u32> = (0..members).map(|_| 3 + rng.index(20) as u32).collect();
            let rank: Vec<u32> = (0..members as u32).rev().collect();
            let mut index = LoadIndex::new(&rank, potential.clone(), max, topics);
            // Partitions: (topic, owner); owners may hold topics they do not subscribe to.
            let mut owner: Vec<(u32, usize)> = Vec::new();
            for _ in 0..30 {
                let t = rng.index(topics) as u32;
                let m = rng.index(members);
                index.transfer(t, None, m);
                owner.push((t, m));
            }
            if round % 3 == 0 {
                index.deactivate(rng.index(members));
            }
            index.track_balance();
            for _ in 0..400 {
                let i = rng.index(owner.len());
                let to = rng.index(members);
                let (t, from) = owner[i];
                if from == to || !index.active[to] || !index.active[from] {
                    continue;
                }
                index.transfer(t, Some(from), to);
                owner[i].1 = to;
                assert_eq!(index.is_balanced(), naive_balanced(&index, &owner, topics));
                for t in 0..topics as u32 {
                    let expect = (0..members)
                        .filter(|m| index.active[*m] && potential[*m].contains(&t))
                        .min_by_key(|m| (index.size[*m], rank[*m]));
                    assert_eq!(index.least_loaded(t), expect);
                }
            }
        }
    }
}
