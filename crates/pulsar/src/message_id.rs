//! Message ids `ledger:entry[:batchIndex]` and the entry allocation of one topic (or partition):
//! a batch is one entry whose messages share the entry id and differ by batch index (spec §1.4.1:
//! dispatch, acks of the cursor and backlog count entries, not messages).

use std::fmt;
use std::str::FromStr;

/// A message id as the simulation displays it. Ordered by (ledger, entry, batch index); a
/// non-batched id sorts before any batch index of the same entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MessageId {
    pub ledger_id: i64,
    pub entry_id: i64,
    pub batch_index: Option<u32>,
}

impl MessageId {
    pub fn entry(ledger_id: i64, entry_id: i64) -> MessageId {
        MessageId { ledger_id, entry_id, batch_index: None }
    }

    /// The id of the entry this message lives in (what cursors and dispatchers track).
    pub fn entry_position(self) -> MessageId {
        MessageId { batch_index: None, ..self }
    }
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.batch_index {
            Some(b) => write!(f, "{}:{}:{}", self.ledger_id, self.entry_id, b),
            None => write!(f, "{}:{}", self.ledger_id, self.entry_id),
        }
    }
}

impl FromStr for MessageId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split(':').collect();
        let num = |p: &str| p.parse::<i64>().map_err(|_| format!("message id {s:?}: {p:?} is not an integer"));
        match parts.as_slice() {
            [l, e] => Ok(MessageId::entry(num(l)?, num(e)?)),
            [l, e, b] => {
                let batch = b.parse::<u32>().map_err(|_| format!("message id {s:?}: batch index {b:?} is not an index"))?;
                Ok(MessageId { ledger_id: num(l)?, entry_id: num(e)?, batch_index: Some(batch) })
            }
            _ => Err(format!("message id {s:?}: expected ledger:entry[:batchIndex]")),
        }
    }
}

/// Hands out entry ids in one ledger, in publish order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryAllocator {
    pub ledger_id: i64,
    pub next_entry_id: i64,
}

impl EntryAllocator {
    pub fn new(ledger_id: i64) -> EntryAllocator {
        EntryAllocator { ledger_id, next_entry_id: 0 }
    }

    /// Ids for one published entry holding `messages` messages: a single non-batched id for a
    /// non-batched send, or one id per message with batch indexes `0..messages` for a batch.
    pub fn publish(&mut self, messages: u32, batched: bool) -> Vec<MessageId> {
        let entry_id = self.next_entry_id;
        self.next_entry_id += 1;
        if batched {
            (0..messages.max(1)).map(|b| MessageId { ledger_id: self.ledger_id, entry_id, batch_index: Some(b) }).collect()
        } else {
            vec![MessageId::entry(self.ledger_id, entry_id)]
        }
    }

    /// The last entry published, if any (the cursor's `lastConfirmedEntry`).
    pub fn last_entry(&self) -> Option<MessageId> {
        (self.next_entry_id > 0).then(|| MessageId::entry(self.ledger_id, self.next_entry_id - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_parse_round_trip() {
        for text in ["3:7", "3:7:2", "-1:-1"] {
            let id: MessageId = text.parse().unwrap();
            assert_eq!(id.to_string(), text);
        }
        assert!("3".parse::<MessageId>().is_err());
        assert!("3:x".parse::<MessageId>().is_err());
        assert!("3:4:-1".parse::<MessageId>().is_err());
    }

    #[test]
    fn batches_share_an_entry() {
        let mut a = EntryAllocator::new(5);
        assert_eq!(a.last_entry(), None);
        let single = a.publish(1, false);
        let batch = a.publish(3, true);
        assert_eq!(single, vec![MessageId::entry(5, 0)]);
        assert_eq!(batch.iter().map(|m| m.to_string()).collect::<Vec<_>>(), vec!["5:1:0", "5:1:1", "5:1:2"]);
        assert!(batch.iter().all(|m| m.entry_position() == MessageId::entry(5, 1)));
        assert_eq!(a.last_entry(), Some(MessageId::entry(5, 1)));
        assert!(MessageId::entry(5, 1) < batch[0]);
    }
}
