//! Ordered views of assignment sizes for the general builder, kept in step with every move so
//! each question the upstream code answers by scanning is answered in logarithmic time:
//!
//! - `sortedCurrentSubscriptions` (members by size, then id) and its first member subscribed to
//!   a topic: a per-topic ordered set of potential consumers;
//! - `isBalanced()`: some member `c` with fewer partitions than its maximum is unbalanced when a
//!   partition of one of its topics sits with a member holding at least two more than `c`. The
//!   largest holder of a topic is never `c` itself in that case, so per topic it is enough to
//!   compare the largest holder with the smallest such member. Holders need not subscribe to the
//!   topic: a partition can go back to its previous owner after that owner unsubscribed.
//!   A counter of unbalanced topics makes `isBalanced()` constant time.

use std::collections::{BTreeMap, BTreeSet};

/// (assignment size, rank of the member id in Java `String` order).
pub(super) type Load = (u32, u32);

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
    sorted: BTreeSet<Load>,
    by_topic: Vec<BTreeSet<Load>>,
    /// Per topic, the potential consumers below (or above) their maximum assignment size.
    below_max_by_topic: Vec<BTreeSet<Load>>,
    balance: Option<BalanceTracker>,
}

struct BalanceTracker {
    /// Per topic: size -> number of holders of that size.
    holder_sizes: Vec<BTreeMap<u32, u32>>,
    unbalanced: Vec<bool>,
    unbalanced_topics: usize,
}

impl LoadIndex {
    pub fn new(rank: &[u32], potential: Vec<Vec<u32>>, max_assignment: Vec<u32>, topics: usize) -> LoadIndex {
        let mut member_of_rank = vec![0; rank.len()];
        for (m, r) in rank.iter().enumerate() {
            member_of_rank[*r as usize] = m as u32;
        }
        let members = rank.len();
        let mut index = LoadIndex {
            rank: rank.to_vec(),
            member_of_rank,
            size: vec![0; members],
            active: vec![true; members],
            potential,
            max_assignment,
            held: vec![BTreeMap::new(); members],
            sorted: BTreeSet::new(),
            by_topic: vec![BTreeSet::new(); topics],
            below_max_by_topic: vec![BTreeSet::new(); topics],
            balance: None,
        };
        for m in 0..members {
            index.attach(m);
        }
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

    fn load(&self, member: usize) -> Load {
        (self.size[member], self.rank[member])
    }

    fn detach(&mut self, member: usize) {
        if !self.active[member] {
            return;
        }
        let load = self.load(member);
        let below_max = load.0 != self.max_assignment[member];
        self.sorted.remove(&load);
        for t in &self.potential[member] {
            self.by_topic[*t as usize].remove(&load);
            if below_max {
                self.below_max_by_topic[*t as usize].remove(&load);
            }
        }
        if let Some(b) = &mut self.balance {
            for t in self.held[member].keys() {
                let sizes = &mut b.holder_sizes[*t as usize];
                if let Some(n) = sizes.get_mut(&load.0) {
                    *n -= 1;
                    if *n == 0 {
                        sizes.remove(&load.0);
                    }
                }
            }
        }
    }

    fn attach(&mut self, member: usize) {
        if !self.active[member] {
            return;
        }
        let load = self.load(member);
        let below_max = load.0 != self.max_assignment[member];
        self.sorted.insert(load);
        for t in &self.potential[member] {
            self.by_topic[*t as usize].insert(load);
            if below_max {
                self.below_max_by_topic[*t as usize].insert(load);
            }
        }
        if let Some(b) = &mut self.balance {
            for t in self.held[member].keys() {
                *b.holder_sizes[*t as usize].entry(load.0).or_default() += 1;
            }
        }
    }

    /// Moves one partition of `topic` from `from` (if any) to `to`.
    pub fn transfer(&mut self, topic: u32, from: Option<usize>, to: usize) {
        let mut touched: Vec<u32> = Vec::new();
        if self.balance.is_some() {
            for m in from.into_iter().chain([to]) {
                touched.extend_from_slice(&self.potential[m]);
                touched.extend(self.held[m].keys());
            }
        }
        if let Some(f) = from {
            self.detach(f);
        }
        self.detach(to);
        if let Some(f) = from {
            self.size[f] -= 1;
            if let Some(n) = self.held[f].get_mut(&topic) {
                *n -= 1;
                if *n == 0 {
                    self.held[f].remove(&topic);
                }
            }
        }
        self.size[to] += 1;
        *self.held[to].entry(topic).or_default() += 1;
        if let Some(f) = from {
            self.attach(f);
        }
        self.attach(to);
        if self.balance.is_some() {
            touched.push(topic);
            touched.sort_unstable();
            touched.dedup();
            for t in touched {
                self.refresh_topic(t as usize);
            }
        }
    }

    /// Drops a member from the balancing scope (a "fixed" assignment).
    pub fn deactivate(&mut self, member: usize) {
        self.detach(member);
        self.active[member] = false;
    }

    /// Starts tracking `isBalanced()`; call once the balancing scope is final.
    pub fn track_balance(&mut self) {
        let topics = self.by_topic.len();
        self.balance = Some(BalanceTracker {
            holder_sizes: vec![BTreeMap::new(); topics],
            unbalanced: vec![false; topics],
            unbalanced_topics: 0,
        });
        for m in 0..self.size.len() {
            if !self.active[m] {
                continue;
            }
            let size = self.size[m];
            let b = self.balance.as_mut().expect("just set");
            for t in self.held[m].keys() {
                *b.holder_sizes[*t as usize].entry(size).or_default() += 1;
            }
        }
        for t in 0..topics {
            self.refresh_topic(t);
        }
    }

    fn refresh_topic(&mut self, topic: usize) {
        let smallest = self.below_max_by_topic[topic].first().map(|l| l.0);
        let Some(b) = &mut self.balance else { return };
        let largest_holder = b.holder_sizes[topic].last_key_value().map(|(s, _)| *s);
        let now = matches!((smallest, largest_holder), (Some(s), Some(h)) if h >= s + 2);
        if now != b.unbalanced[topic] {
            b.unbalanced[topic] = now;
            if now {
                b.unbalanced_topics += 1;
            } else {
                b.unbalanced_topics -= 1;
            }
        }
    }

    /// `isBalanced()` over the active members; needs [`LoadIndex::track_balance`].
    pub fn is_balanced(&self) -> bool {
        let (Some(min), Some(max)) = (self.sorted.first(), self.sorted.last()) else { return true };
        min.0 + 1 >= max.0 || self.balance.as_ref().is_none_or(|b| b.unbalanced_topics == 0)
    }

    /// The largest assignment size among active members (0 when none).
    pub fn max_size(&self) -> u32 {
        self.sorted.last().map_or(0, |l| l.0)
    }

    /// Active potential consumers of a topic from the least loaded (ties: smaller member id).
    pub fn consumers_by_load(&self, topic: u32) -> impl Iterator<Item = usize> + '_ {
        self.by_topic[topic as usize].iter().map(|l| self.member_of_rank[l.1 as usize] as usize)
    }

    /// Smallest assignment size among the active potential consumers of a topic.
    pub fn min_load(&self, topic: u32) -> Option<u32> {
        self.by_topic[topic as usize].first().map(|l| l.0)
    }

    /// Sizes of the active members, for the balance score.
    pub fn active_sizes(&self) -> Vec<u32> {
        self.sorted.iter().map(|l| l.0).collect()
    }

    /// Restores sizes and holdings saved earlier; sorted views are rebuilt, tracking stops.
    pub fn restore(&mut self, size: Vec<u32>, held: Vec<BTreeMap<u32, u32>>) {
        self.size = size;
        self.held = held;
        self.balance = None;
        self.sorted.clear();
        self.by_topic.iter_mut().for_each(BTreeSet::clear);
        self.below_max_by_topic.iter_mut().for_each(BTreeSet::clear);
        for m in 0..self.size.len() {
            self.attach(m);
        }
    }

    pub fn snapshot(&self) -> (Vec<u32>, Vec<BTreeMap<u32, u32>>) {
        (self.size.clone(), self.held.clone())
    }
}
