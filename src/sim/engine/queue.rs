//! The event queue: earliest time first, ties broken by insertion order.
//!
//! A calendar of buckets, one FIFO per distinct time: a burst of a million events at one instant
//! pops in O(1) each, and insertion order within an instant is kept by construction.

use std::collections::{BTreeMap, VecDeque};

use super::{EventId, Millis};

/// A scheduled action, the time it fires and the log event that scheduled it.
#[derive(Clone, Debug)]
pub struct Scheduled<A> {
    pub at: Millis,
    pub cause: Option<EventId>,
    pub action: A,
}

/// The largest emptied bucket kept for reuse, in entries.
const SPARE_CAPACITY: usize = 4096;

type Bucket<A> = VecDeque<(Option<EventId>, A)>;

#[derive(Clone, Debug)]
pub struct EventQueue<A> {
    buckets: BTreeMap<Millis, Bucket<A>>,
    /// Emptied buckets kept for reuse, so steady runs do not allocate one per instant.
    spare: Vec<Bucket<A>>,
    len: usize,
}

impl<A> Default for EventQueue<A> {
    fn default() -> Self {
        EventQueue { buckets: BTreeMap::new(), spare: Vec::new(), len: 0 }
    }
}

impl<A> EventQueue<A> {
    pub fn push(&mut self, at: Millis, cause: Option<EventId>, action: A) {
        self.len += 1;
        if let Some(bucket) = self.buckets.get_mut(&at) {
            bucket.push_back((cause, action));
            return;
        }
        let mut bucket = self.spare.pop().unwrap_or_default();
        bucket.push_back((cause, action));
        self.buckets.insert(at, bucket);
    }

    pub fn peek_time(&self) -> Option<Millis> {
        self.buckets.first_key_value().map(|(t, _)| *t)
    }

    pub fn pop(&mut self) -> Option<Scheduled<A>> {
        let mut entry = self.buckets.first_entry()?;
        let at = *entry.key();
        let (cause, action) = entry.get_mut().pop_front()?;
        if entry.get().is_empty() {
            let bucket = entry.remove();
            // A burst's bucket (a million sends at one instant) is given back, not kept: its
            // capacity would stay resident for the rest of the run.
            if self.spare.len() < 64 && bucket.capacity() <= SPARE_CAPACITY {
                self.spare.push(bucket);
            }
        }
        self.len -= 1;
        Some(Scheduled { at, cause, action })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, None, "b1");
        q.push(1, None, "a");
        q.push(5, None, "b2");
        q.push(5, None, "b3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|s| s.action)).collect();
        assert_eq!(order, vec!["a", "b1", "b2", "b3"]);
    }

    /// Random interleavings of pushes and pops, against a plain list sorted by (time, push order):
    /// buckets created, drained, reused and re-created must never reorder or misplace an action.
    #[test]
    fn pops_as_a_sorted_list_would_under_random_interleavings() {
        for seed in 0..200 {
            let mut rng = crate::engine::SplitMix64::new(seed);
            let mut q = EventQueue::default();
            let mut reference: Vec<(Millis, u64)> = Vec::new();
            let mut now = 0;
            for n in 0..400u64 {
                if rng.below(3) == 0 {
                    let expected = (!reference.is_empty()).then(|| reference.remove(0));
                    let got = q.pop().map(|s| (s.at, s.action));
                    assert_eq!(got, expected, "seed {seed}");
                    if let Some((at, _)) = got {
                        now = at;
                    }
                } else {
                    let at = now + rng.below(4);
                    q.push(at, None, n);
                    let pos = reference.partition_point(|&(t, _)| t <= at);
                    reference.insert(pos, (at, n));
                }
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.peek_time(), reference.first().map(|&(t, _)| t));
            }
        }
    }
}
