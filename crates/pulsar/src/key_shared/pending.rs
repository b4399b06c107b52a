//! The entries a consumer was sent and has not acked, by position. Positions go out mostly in
//! ascending order and come back (acked) mostly in the same order, so they live in a deque
//! sorted by position: a send appends, an ack marks its slot empty, and empty slots are
//! trimmed from the front. Both are O(1) in the common case where a B-tree paid a search and
//! node rebalancing per message. A replayed (lower) position is inserted in place.

use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct PendingAcks<V> {
    /// Ascending positions; `None` is an acked hole not yet trimmed.
    slots: VecDeque<(i64, Option<V>)>,
    live: usize,
}

impl<V> Default for PendingAcks<V> {
    fn default() -> Self {
        PendingAcks { slots: VecDeque::new(), live: 0 }
    }
}

impl<V: Copy> PendingAcks<V> {
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    fn find(&self, position: i64) -> Result<usize, usize> {
        // Acks mostly come for the oldest pending entry.
        if self.slots.front().is_some_and(|&(p, _)| p == position) {
            return Ok(0);
        }
        self.slots.binary_search_by_key(&position, |&(p, _)| p)
    }

    pub fn get(&self, position: i64) -> Option<&V> {
        let i = self.find(position).ok()?;
        self.slots[i].1.as_ref()
    }

    /// Records `position` as pending (replacing what was pending there).
    pub fn insert(&mut self, position: i64, value: V) {
        if self.slots.back().is_none_or(|&(last, _)| last < position) {
            self.slots.push_back((position, Some(value)));
            self.live += 1;
            return;
        }
        match self.find(position) {
            Ok(i) => {
                if self.slots[i].1.replace(value).is_none() {
                    self.live += 1;
                }
            }
            Err(i) => {
                self.slots.insert(i, (position, Some(value)));
                self.live += 1;
            }
        }
    }

    /// Forgets `position`; returns what was pending there.
    pub fn remove(&mut self, position: i64) -> Option<V> {
        let i = self.find(position).ok()?;
        let value = self.slots[i].1.take()?;
        self.live -= 1;
        while self.slots.front().is_some_and(|(_, v)| v.is_none()) {
            self.slots.pop_front();
        }
        // Out-of-order acks behind a long-pending head leave holes: compact when they dominate.
        if self.slots.len() > 64 && self.slots.len() > 4 * self.live {
            self.slots.retain(|(_, v)| v.is_some());
        }
        Some(value)
    }

    /// Pending positions and values, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (i64, &V)> + '_ {
        self.slots.iter().filter_map(|(p, v)| v.as_ref().map(|v| (*p, v)))
    }
}

impl<V: Copy + PartialEq> PartialEq for PendingAcks<V> {
    fn eq(&self, other: &Self) -> bool {
        self.live == other.live && self.iter().eq(other.iter())
    }
}

impl<V: Copy + Eq> Eq for PendingAcks<V> {}

#[cfg(test)]
mod tests {
    use super::PendingAcks;
    use mqviz_engine::SplitMix64;
    use std::collections::BTreeMap;

    /// Sends mostly ascending, acks in any order, replays of low positions: same as a `BTreeMap`.
    #[test]
    fn behaves_like_a_btreemap() {
        let mut rng = SplitMix64::new(11);
        let (mut ours, mut theirs) = (PendingAcks::default(), BTreeMap::new());
        let mut next = 0i64;
        for step in 0..20_000u32 {
            match rng.below(10) {
                0..=3 => {
                    ours.insert(next, step);
                    theirs.insert(next, step);
                    next += 1;
                }
                4 => {
                    let p = rng.below(next.max(1) as u64) as i64;
                    ours.insert(p, step);
                    theirs.insert(p, step);
                }
                _ => {
                    // Acks favour the oldest pending entries, as consumers do.
                    let p = match theirs.keys().next() {
                        Some(&first) if rng.below(3) > 0 => first,
                        _ => rng.below(next.max(1) as u64) as i64,
                    };
                    assert_eq!(ours.remove(p), theirs.remove(&p));
                }
            }
            assert_eq!(ours.len(), theirs.len());
        }
        assert!(ours.iter().map(|(p, v)| (p, *v)).eq(theirs.iter().map(|(p, v)| (*p, *v))));
        for p in 0..next {
            assert_eq!(ours.get(p), theirs.get(&p));
        }
    }
}
