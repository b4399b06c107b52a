//! The event queue: earliest time first, ties broken by insertion sequence.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{EventId, Millis};

#[derive(Clone, Debug)]
struct Entry<A> {
    at: Millis,
    seq: u64,
    cause: Option<EventId>,
    action: A,
}

impl<A> PartialEq for Entry<A> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<A> Eq for Entry<A> {}
impl<A> PartialOrd for Entry<A> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<A> Ord for Entry<A> {
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
    heap: BinaryHeap<Entry<A>>,
    next_seq: u64,
}

impl<A> Default for EventQueue<A> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), next_seq: 0 }
    }
}

impl<A> EventQueue<A> {
    pub fn push(&mut self, at: Millis, cause: Option<EventId>, action: A) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, cause, action });
    }

    pub fn peek_time(&self) -> Option<Millis> {
        self.heap.peek().map(|e| e.at)
    }

    pub fn pop(&mut self) -> Option<Scheduled<A>> {
        self.heap.pop().map(|e| Scheduled { at: e.at, cause: e.cause, action: e.action })
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
