//! The Pulsar event log, stored compactly. Two of every run's events are per message (a message
//! stored, a message received) and they were most of its memory: 56 bytes each as typed entries.
//! Here they are 24-byte slots; every other event is kept whole on the side and its slot points
//! at it. Entries are decoded on demand, so the rendered log, its digest and every event id are
//! what a plain `EventLog<Event>` would give.

use crate::events::Event;
use mqviz_engine::{DigestMemo, EventId, LogEntry, Millis};

/// `Slot::tag` values; any smaller tag is a `Received` event's redelivery count.
const STORED: u32 = u32::MAX;
const OTHER: u32 = u32::MAX - 1;
/// `Slot::cause` of an event with no cause.
const NO_CAUSE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Slot {
    at: Millis,
    cause: u32,
    tag: u32,
    /// Stored: the message. Received: the consumer. Other: the index in `others`.
    x: u32,
    /// Received: the message.
    y: u32,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 24);

#[derive(Clone, Debug, Default)]
pub struct PulsarLog {
    slots: Vec<Slot>,
    others: Vec<Event>,
    /// The digest so far (`World::digest_within` renders the lines: that needs the world).
    pub(crate) digest: DigestMemo,
}

impl PulsarLog {
    pub fn push(&mut self, at: Millis, cause: Option<EventId>, kind: Event) -> EventId {
        let id = EventId(self.slots.len() as u32);
        let cause = cause.map_or(NO_CAUSE, |c| c.0);
        let slot = match kind {
            Event::MessageStored { msg } => Slot { at, cause, tag: STORED, x: msg, y: 0 },
            Event::Received { consumer, msg, redelivery_count } if redelivery_count < OTHER => {
                Slot { at, cause, tag: redelivery_count, x: consumer, y: msg }
            }
            other => {
                self.others.push(other);
                Slot { at, cause, tag: OTHER, x: self.others.len() as u32 - 1, y: 0 }
            }
        };
        self.slots.push(slot);
        id
    }

    /// Makes room for `additional` more entries.
    pub fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
    }

    /// The bytes the entries take (an event's boxed text not counted).
    pub fn bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>() + self.others.capacity() * std::mem::size_of::<Event>()
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The entry `id`, decoded (rare events are cloned from the side store).
    pub fn get(&self, id: EventId) -> Option<LogEntry<Event>> {
        self.slots.get(id.0 as usize).map(|s| self.decode(id.0, s))
    }

    /// When `id` happened, without decoding it.
    pub fn at(&self, id: EventId) -> Option<Millis> {
        self.slots.get(id.0 as usize).map(|s| s.at)
    }

    /// What caused `id` (`Some(None)`: nothing did), without decoding it.
    pub fn cause(&self, id: EventId) -> Option<Option<EventId>> {
        self.slots.get(id.0 as usize).map(|s| (s.cause != NO_CAUSE).then_some(EventId(s.cause)))
    }

    /// The entries from index `from` on, decoded one at a time.
    pub fn iter_from(&self, from: u32) -> impl Iterator<Item = LogEntry<Event>> + '_ {
        let from = (from as usize).min(self.slots.len());
        self.slots[from..].iter().enumerate().map(move |(i, s)| self.decode((from + i) as u32, s))
    }

    /// Every entry in order, decoded one at a time.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = LogEntry<Event>> + ExactSizeIterator + '_ {
        self.slots.iter().enumerate().map(|(i, s)| self.decode(i as u32, s))
    }

    /// The events kept whole (all but stored and received), in order, by reference.
    pub fn rare(&self) -> impl DoubleEndedIterator<Item = (EventId, Millis, &Event)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.tag == OTHER)
            .map(|(i, s)| (EventId(i as u32), s.at, &self.others[s.x as usize]))
    }

    fn decode(&self, id: u32, s: &Slot) -> LogEntry<Event> {
        let kind = match s.tag {
            STORED => Event::MessageStored { msg: s.x },
            OTHER => self.others[s.x as usize].clone(),
            redelivery_count => Event::Received { consumer: s.x, msg: s.y, redelivery_count },
        };
        LogEntry { id: EventId(id), at: s.at, cause: (s.cause != NO_CAUSE).then_some(EventId(s.cause)), kind }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::RedeliveryReason;
    use mqviz_engine::EventLog;

    /// The compact log gives back exactly what a plain typed log holds.
    #[test]
    fn decodes_what_was_pushed() {
        let events = [
            Event::MessageStored { msg: 7 },
            Event::Received { consumer: 2, msg: 7, redelivery_count: 0 },
            Event::Received { consumer: 3, msg: 7, redelivery_count: 4 },
            Event::Received { consumer: 3, msg: 8, redelivery_count: u32::MAX },
            Event::Nacked { consumer: 1, msg: 9 },
            Event::RedeliveryRequested { consumer: 1, partition: Some(0), messages: None, reason: RedeliveryReason::NegativeAck },
            Event::Command { text: "addConsumer c".into() },
        ];
        let (mut compact, mut plain) = (PulsarLog::default(), EventLog::default());
        for (i, e) in events.iter().enumerate() {
            let cause = (i % 2 == 1).then(|| EventId(i as u32 - 1));
            assert_eq!(compact.push(i as u64 * 10, cause, e.clone()), plain.push(i as u64 * 10, cause, e.clone()));
        }
        assert_eq!(compact.len(), plain.len());
        for (a, b) in compact.iter().zip(plain.entries()) {
            assert_eq!((a.id, a.at, a.cause, &a.kind), (b.id, b.at, b.cause, &b.kind));
            assert_eq!(compact.at(a.id), Some(b.at));
            assert_eq!(compact.cause(a.id), Some(b.cause));
        }
        assert!(compact.get(EventId(99)).is_none());
    }
}
