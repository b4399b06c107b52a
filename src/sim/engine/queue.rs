//! The event queue: earliest time first, ties broken by insertion sequence.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{EventId, Millis};

/// The heap holds only small keys; payloads sit in a slab so sifting moves 24 bytes, not a whole
/// action (a burst of a million sends keeps a million entries queued).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    at: Millis,
    seq: u64,
    slot: u32,
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    // BinaryHeap is a max-heap: reverse so the earliest (then first inserted) pops first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.at.cmp(&self.at).then_with(|| other.seq.cmp(&self.seq))
    }
}

/// A scheduled action, the time it fires and the log event that scheduled it.
#[derive(Clone, Debug)]
pub struct Scheduled<A> {
    pub at: Millis,
    pub cause: Option<EventId>,
    pub action: A,
}

#[derive(Clone, Debug)]
pub struct EventQueue<A> {
    heap: BinaryHeap<Key>,
    slots: Vec<Option<(Option<EventId>, A)>>,
    free: Vec<u32>,
    next_seq: u64,
}

impl<A> Default for EventQueue<A> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), slots: Vec::new(), free: Vec::new(), next_seq: 0 }
    }
}

impl<A> EventQueue<A> {
    pub fn push(&mut self, at: Millis, cause: Option<EventId>, action: A) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some((cause, action));
                i
            }
            None => {
                self.slots.push(Some((cause, action)));
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Key { at, seq, slot });
    }

    pub fn peek_time(&self) -> Option<Millis> {
        self.heap.peek().map(|k| k.at)
    }

    pub fn pop(&mut self) -> Option<Scheduled<A>> {
        let k = self.heap.pop()?;
        let (cause, action) = self.slots[k.slot as usize].take()?;
        self.free.push(k.slot);
        Some(Scheduled { at: k.at, cause, action })
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
