//! The event queue: earliest time first, ties broken by insertion order.
//!
//! A calendar of buckets, one FIFO per distinct time: a burst of a million events at one instant
//! pops in O(1) each, and insertion order within an instant is kept by construction.
//!
//! A burst is also stored compactly: an action that continues the run queued just before it (at
//! the same instant, by the same cause) is absorbed into it, so a million sends scheduled back to
//! back hold one entry, not a million (see [`Burst`]).

use std::collections::{BTreeMap, VecDeque};

use super::{EventId, Millis};

/// A scheduled action, the time it fires and the log event that scheduled it.
#[derive(Clone, Debug)]
pub struct Scheduled<A> {
    pub at: Millis,
    pub cause: Option<EventId>,
    pub action: A,
}

/// Actions that can stand for a run of actions. Pushing actions that `absorb` into the last one
/// queued and popping them again must yield each pushed action, in order, unchanged. Models whose
/// actions never form runs take the defaults.
pub trait Burst: Sized {
    /// Takes `next` into this run when it continues it (and so would pop right after it).
    fn absorb(&mut self, _next: &Self) -> bool {
        false
    }

    /// Takes the first action off a run of two or more; `None` when this is a single action.
    fn split_first(&mut self) -> Option<Self> {
        None
    }
}

/// The largest emptied bucket kept for reuse, in entries.
const SPARE_CAPACITY: usize = 4096;

type Bucket<A> = VecDeque<(Option<EventId>, A)>;

#[derive(Clone, Debug)]
pub struct EventQueue<A> {
    /// A bucket that a pop drained stays until a later pop finds it first and drops it, so that
    /// an action scheduled for the same instant (as a send's next send is) does not re-create it.
    /// Empty buckets never hold up a pop or a peek.
    buckets: BTreeMap<Millis, Bucket<A>>,
    /// Emptied buckets kept for reuse, so steady runs do not allocate one per instant.
    spare: Vec<Bucket<A>>,
    len: usize,
    /// Entries in the buckets (a run is one).
    entries: usize,
    /// Actions popped since the queue was made: with the clock, it names one event of a run
    /// exactly, even inside an instant (a link made after Step carries it).
    popped: u64,
}

impl<A> Default for EventQueue<A> {
    fn default() -> Self {
        EventQueue { buckets: BTreeMap::new(), spare: Vec::new(), len: 0, entries: 0, popped: 0 }
    }
}

impl<A: Burst> EventQueue<A> {
    pub fn push(&mut self, at: Millis, cause: Option<EventId>, action: A) {
        self.len += 1;
        if let Some(bucket) = self.buckets.get_mut(&at) {
            if let Some((last_cause, last)) = bucket.back_mut() {
                if *last_cause == cause && last.absorb(&action) {
                    return;
                }
            }
            self.entries += 1;
            bucket.push_back((cause, action));
            return;
        }
        self.entries += 1;
        let mut bucket = self.spare.pop().unwrap_or_default();
        bucket.push_back((cause, action));
        self.buckets.insert(at, bucket);
    }

    pub fn peek_time(&self) -> Option<Millis> {
        self.buckets.iter().find(|(_, bucket)| !bucket.is_empty()).map(|(t, _)| *t)
    }

    pub fn pop(&mut self) -> Option<Scheduled<A>> {
        self.pop_due(Millis::MAX)
    }

    /// Pops the earliest action if it is due at `limit` or earlier.
    pub fn pop_due(&mut self, limit: Millis) -> Option<Scheduled<A>> {
        let mut entry = self.buckets.first_entry()?;
        while entry.get().is_empty() {
            let bucket = entry.remove();
            self.recycle(bucket);
            entry = self.buckets.first_entry()?;
        }
        let at = *entry.key();
        if at > limit {
            return None;
        }
        let bucket = entry.get_mut();
        let (cause, run) = bucket.front_mut()?;
        let (cause, action) = match run.split_first() {
            Some(first) => (*cause, first),
            None => {
                self.entries -= 1;
                bucket.pop_front()?
            }
        };
        self.len -= 1;
        self.popped += 1;
        Some(Scheduled { at, cause, action })
    }
}

impl<A> EventQueue<A> {
    fn recycle(&mut self, bucket: Bucket<A>) {
        // A burst's bucket (many distinct actions at one instant) is given back, not kept: its
        // capacity would stay resident for the rest of the run.
        if self.spare.len() < 64 && bucket.capacity() <= SPARE_CAPACITY {
            self.spare.push(bucket);
        }
    }

    /// Actions queued (a run counts each of its actions).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops every queued action (a run stopped early); the count of those popped stays.
    pub fn clear(&mut self) {
        let popped = self.popped;
        *self = EventQueue { popped, ..EventQueue::default() };
    }

    /// Actions popped so far (each action of a run counts).
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// The bytes the queued entries take (a run is one entry).
    pub fn bytes(&self) -> usize {
        self.entries * std::mem::size_of::<(Option<EventId>, A)>()
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// A test action: `Act(kind, index, count)` stands for `count` actions of `kind` with indexes
    /// counting up from `index`; kind 1 forms runs, kind 0 never does.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Act(u64, u64, u64);

    impl Burst for Act {
        fn absorb(&mut self, next: &Self) -> bool {
            let continues = self.0 == 1 && next.0 == 1 && next.2 == 1 && next.1 == self.1 + self.2;
            if continues {
                self.2 += 1;
            }
            continues
        }
        fn split_first(&mut self) -> Option<Self> {
            (self.2 > 1).then(|| {
                let first = Act(self.0, self.1, 1);
                *self = Act(self.0, self.1 + 1, self.2 - 1);
                first
            })
        }
    }

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, None, Act(0, 1, 1));
        q.push(1, None, Act(0, 0, 1));
        q.push(5, None, Act(0, 2, 1));
        q.push(5, None, Act(0, 3, 1));
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|s| s.action.1)).collect();
        assert_eq!(order, vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_burst_of_consecutive_actions_is_one_entry() {
        let mut q = EventQueue::default();
        for i in 0..1000 {
            q.push(7, Some(EventId(3)), Act(1, i, 1));
        }
        assert_eq!((q.len(), q.bytes()), (1000, std::mem::size_of::<(Option<EventId>, Act)>()));
        // A different cause, a gap in the indexes or another kind starts a new entry.
        q.push(7, Some(EventId(4)), Act(1, 1000, 1));
        q.push(7, Some(EventId(4)), Act(1, 1002, 1));
        q.push(7, Some(EventId(4)), Act(0, 1003, 1));
        assert_eq!(q.bytes(), 4 * std::mem::size_of::<(Option<EventId>, Act)>());
        let popped: Vec<_> = std::iter::from_fn(|| q.pop().map(|s| (s.cause, s.action))).collect();
        let mut expected: Vec<_> = (0..1000).map(|i| (Some(EventId(3)), Act(1, i, 1))).collect();
        expected.extend([
            (Some(EventId(4)), Act(1, 1000, 1)),
            (Some(EventId(4)), Act(1, 1002, 1)),
            (Some(EventId(4)), Act(0, 1003, 1)),
        ]);
        assert_eq!(popped, expected);
        assert!(q.is_empty());
    }

    /// Random interleavings of pushes and pops, against a plain list sorted by (time, push order):
    /// buckets created, drained, reused and re-created, and runs extended and split, must never
    /// reorder, misplace or alter an action or its cause.
    #[test]
    fn pops_as_a_sorted_list_would_under_random_interleavings() {
        for seed in 0..300 {
            let mut rng = crate::SplitMix64::new(seed);
            let mut q = EventQueue::default();
            let mut reference: Vec<(Millis, Option<EventId>, Act)> = Vec::new();
            let mut now = 0;
            let mut last_index = 0;
            for n in 0..600u64 {
                if rng.below(3) == 0 {
                    let limit = if rng.below(2) == 0 { Millis::MAX } else { now + rng.below(2) };
                    let due = reference.first().is_some_and(|&(t, ..)| t <= limit);
                    let expected = due.then(|| reference.remove(0));
                    let got = q.pop_due(limit).map(|s| (s.at, s.cause, s.action));
                    assert_eq!(got, expected, "seed {seed}");
                    if let Some((at, ..)) = got {
                        now = at;
                    }
                } else {
                    // Sometimes before the last pop: a drained bucket kept for reuse must not hide
                    // what comes after it.
                    let at = (now + rng.below(4)).saturating_sub(1);
                    let cause = (rng.below(4) > 0).then(|| EventId(rng.below(2) as u32));
                    // Mostly the next index of a sequence, so runs form, break and interleave.
                    let action = match rng.below(4) {
                        0 => Act(0, n, 1),
                        1 => Act(1, n, 1),
                        _ => {
                            last_index += 1;
                            Act(1, last_index, 1)
                        }
                    };
                    q.push(at, cause, action);
                    let pos = reference.partition_point(|&(t, ..)| t <= at);
                    reference.insert(pos, (at, cause, action));
                }
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.peek_time(), reference.first().map(|&(t, ..)| t));
            }
        }
    }
}
