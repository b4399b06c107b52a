//! `UniformHeterogeneousAssignmentBuilder` (spec §3): keep every previously targeted partition
//! of a still-subscribed topic; give the unassigned ones, topic by topic (partitions per
//! subscriber descending, subscribers ascending, topic id ascending), to the least loaded
//! subscriber; then up to 16 passes move the highest partitions of the most loaded subscribers of
//! each shared topic to the least loaded ones until no pass moves anything.

use mqviz_engine::sort::StableSort;
use std::cmp::Ordering;

use super::spec::{GroupSpec, Target};
use super::AssignorError;

const MAX_ITERATION_COUNT: usize = 16;

struct Builder<'a> {
    spec: &'a GroupSpec<'a>,
    /// `memberIds`: member slots in `memberIds()` order; a member's index is its position here.
    member_slots: Vec<usize>,
    /// Subscribers of each topic slot, ascending member index.
    subscribers: Vec<Vec<usize>>,
    /// Topic slots subscribed by someone.
    topics: Vec<usize>,
    sizes: Vec<i64>,
    /// Owner member index of each partition of each subscribed topic (-1 = none).
    owners: Vec<Vec<i64>>,
    targets: Vec<Target>,
    /// Per member index: its range in the balancing list of the topic being balanced
    /// (`usize::MAX` when it owns none of it).
    start: Vec<usize>,
    end: Vec<usize>,
}

/// `MemberAssignmentBalancer`: a least-loaded range growing rightwards and a most-loaded range
/// growing leftwards over the subscribers sorted by load.
struct Balancer {
    sorted: Vec<usize>,
    least_end: usize,
    least_count: i64,
    next_least: usize,
    most_start: usize,
    most_end: usize,
    most_count: i64,
    next_most: i64,
}

impl Balancer {
    fn new() -> Balancer {
        Balancer {
            sorted: Vec::new(),
            least_end: 0,
            least_count: -1,
            next_least: 0,
            most_start: 0,
            most_end: 0,
            most_count: 1,
            next_most: -1,
        }
    }

    /// Returns the spread between the most and least loaded members.
    fn initialize(&mut self, members: &[usize], sizes: &[i64]) -> i64 {
        self.sorted.clear();
        self.sorted.extend_from_slice(members);
        self.sorted.stable_sort_by_key(|m| (sizes[*m], *m));
        let n = self.sorted.len();
        self.least_end = 0;
        self.least_count = sizes[self.sorted[0]] - 1;
        self.next_least = 0;
        self.most_start = n;
        self.most_end = n;
        self.most_count = sizes[self.sorted[n - 1]] + 1;
        self.next_most = n as i64 - 1;
        sizes[self.sorted[n - 1]] - sizes[self.sorted[0]]
    }

    fn next_least_loaded(&mut self, sizes: &[i64]) -> usize {
        if self.next_least >= self.least_end {
            self.least_count += 1;
            while self.least_end < self.sorted.len() && sizes[self.sorted[self.least_end]] == self.least_count {
                self.least_end += 1;
            }
            self.next_least = 0;
        }
        let m = self.sorted[self.next_least];
        self.next_least += 1;
        m
    }

    fn next_most_loaded(&mut self, sizes: &[i64]) -> Option<usize> {
        if self.next_most < self.most_start as i64 {
            if self.most_end <= self.most_start && self.most_start > 0 {
                self.most_count = sizes[self.sorted[self.most_start - 1]];
            } else {
                self.most_count -= 1;
            }
            while self.most_start > 0 && sizes[self.sorted[self.most_start - 1]] == self.most_count {
                self.most_start -= 1;
            }
            self.next_most = self.most_end as i64 - 1;
        }
        if self.next_most < 0 {
            return None;
        }
        let m = self.sorted[self.next_most as usize];
        self.next_most -= 1;
        Some(m)
    }

    fn exclude_most_loaded(&mut self) {
        let at = (self.next_most + 1) as usize;
        self.sorted.swap(at, self.most_end - 1);
        self.most_end -= 1;
    }

    fn is_balanced(&self) -> bool {
        self.most_count - self.least_count <= 1
    }
}

pub(super) fn assign(spec: &GroupSpec) -> Result<Vec<Target>, AssignorError> {
    let member_slots = spec.member_order.clone();
    let mut subscribers: Vec<Vec<usize>> = vec![Vec::new(); spec.topics.len()];
    let mut topics = Vec::new();
    for (index, &slot) in member_slots.iter().enumerate() {
        for &t in &spec.subscriptions[slot] {
            if spec.topics[t].partitions < 0 {
                return Err(AssignorError::PartitionAssignor(format!(
                    "Members are subscribed to topic {} which doesn't exist in the topic metadata.",
                    spec.topics[t].id
                )));
            }
            let list = &mut subscribers[t];
            if list.is_empty() {
                topics.push(t);
            }
            list.push(index);
        }
    }
    let mut owners = vec![Vec::new(); spec.topics.len()];
    for &t in &topics {
        owners[t] = vec![-1i64; spec.topics[t].partitions as usize];
    }
    let mut b = Builder {
        spec,
        start: vec![usize::MAX; member_slots.len()],
        end: vec![usize::MAX; member_slots.len()],
        sizes: vec![0; member_slots.len()],
        targets: vec![Target::default(); spec.member_count()],
        member_slots,
        subscribers,
        topics,
        owners,
    };
    if b.topics.is_empty() {
        return Ok(b.targets);
    }
    b.keep_subscribed_targets()?;
    b.assign_remaining();
    b.balance();
    Ok(b.targets)
}

impl Builder<'_> {
    /// Partitions per subscriber descending, subscribers ascending, topic id ascending.
    fn topic_order(&self, a: usize, b: usize) -> Ordering {
        let (pa, pb) = (self.spec.topics[a].partitions as f64, self.spec.topics[b].partitions as f64);
        let (sa, sb) = (self.subscribers[a].len(), self.subscribers[b].len());
        (pb / sb as f64)
            .partial_cmp(&(pa / sa as f64))
            .unwrap_or(Ordering::Equal)
            .then(sa.cmp(&sb))
            .then_with(|| self.spec.topics[a].id.java_cmp(&self.spec.topics[b].id))
    }

    fn sorted_topics(&self, topics: &[usize]) -> Vec<usize> {
        let mut sorted = topics.to_vec();
        sorted.stable_sort_by(|a, b| self.topic_order(*a, *b));
        sorted
    }

    fn keep_subscribed_targets(&mut self) -> Result<(), AssignorError> {
        for index in 0..self.member_slots.len() {
            let slot = self.member_slots[index];
            for (t, partitions) in self.spec.previous(slot) {
                if !self.spec.subscribes(slot, *t) {
                    continue;
                }
                self.sizes[index] += partitions.len() as i64;
                let owners = self.owners[*t].as_mut_slice();
                for p in partitions {
                    let Some(owner) = usize::try_from(*p).ok().and_then(|p| owners.get_mut(p)) else {
                        return Err(AssignorError::IndexOutOfBounds(format!(
                            "Index {p} out of bounds for length {}",
                            owners.len()
                        )));
                    };
                    *owner = index as i64;
                }
                self.targets[slot].extend(*t, partitions.iter().copied());
            }
        }
        Ok(())
    }

    fn assign_remaining(&mut self) {
        let with_unassigned: Vec<usize> = self.topics.iter().copied().filter(|t| self.owners[*t].contains(&-1)).collect();
        let mut balancer = Balancer::new();
        for t in self.sorted_topics(&with_unassigned) {
            balancer.initialize(&self.subscribers[t], &self.sizes);
            let unassigned: Vec<i32> =
                (0..self.spec.topics[t].partitions).filter(|p| self.owners[t][*p as usize] == -1).collect();
            for p in unassigned {
                let m = balancer.next_least_loaded(&self.sizes);
                self.move_partition(t, p, m);
            }
        }
    }

    fn move_partition(&mut self, topic: usize, partition: i32, member: usize) {
        let owners = &mut self.owners[topic];
        let old = owners[partition as usize];
        owners[partition as usize] = member as i64;
        if old >= 0 {
            let old = old as usize;
            self.targets[self.member_slots[old]].remove(topic, partition);
            self.sizes[old] -= 1;
        }
        self.targets[self.member_slots[member]].add(topic, partition);
        self.sizes[member] += 1;
    }

    fn balance(&mut self) {
        let shared: Vec<usize> = self.topics.iter().copied().filter(|t| self.subscribers[*t].len() >= 2).collect();
        if shared.is_empty() {
            return;
        }
        let sorted = self.sorted_topics(&shared);
        let mut last_rebalanced: Option<usize> = None;
        let mut balancer = Balancer::new();
        for _ in 0..MAX_ITERATION_COUNT {
            for (i, &t) in sorted.iter().enumerate() {
                if last_rebalanced == Some(i) {
                    return;
                }
                let moved = self.balance_topic(t, &mut balancer);
                if moved > 0 || last_rebalanced.is_none() {
                    last_rebalanced = Some(i);
                }
            }
        }
    }

    fn balance_topic(&mut self, topic: usize, balancer: &mut Balancer) -> usize {
        if balancer.initialize(&self.subscribers[topic], &self.sizes) <= 1 {
            return 0;
        }
        let owners = &self.owners[topic];
        let mut partitions: Vec<i32> = (0..self.spec.topics[topic].partitions).collect();
        partitions.stable_sort_by_key(|p| (owners[*p as usize], *p));
        // Ranges of the list per owner; owners are member indices (-1 never remains here).
        let mut touched: Vec<usize> = Vec::new();
        for (i, p) in partitions.iter().enumerate() {
            let Ok(owner) = usize::try_from(owners[*p as usize]) else { continue };
            if self.start[owner] == usize::MAX {
                self.start[owner] = i;
                touched.push(owner);
            }
            self.end[owner] = i + 1;
        }
        let mut moved = 0;
        while !balancer.is_balanced() {
            let most = loop {
                let Some(m) = balancer.next_most_loaded(&self.sizes) else { break None };
                if self.start[m] != usize::MAX && self.end[m] > self.start[m] {
                    break Some(m);
                }
                balancer.exclude_most_loaded();
            };
            let Some(most) = most else { break };
            self.end[most] -= 1;
            let partition = partitions[self.end[most]];
            let least = balancer.next_least_loaded(&self.sizes);
            if balancer.is_balanced() {
                break;
            }
            self.move_partition(topic, partition, least);
            moved += 1;
        }
        for m in touched {
            self.start[m] = usize::MAX;
            self.end[m] = usize::MAX;
        }
        moved
    }
}
