//! PIP-379 draining hashes (`DrainingHashesTracker`, spec §1.4.6, §8 Key_Shared): a hash that
//! moved away from a consumer with pending acks stays with that consumer until it has acked (or
//! lost) every pending message of the hash; meanwhile the new owner is blocked for that hash.

use std::collections::BTreeMap;
use std::fmt;

use crate::hash::STICKY_KEY_HASH_NOT_SET;

/// One draining hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrainingEntry {
    /// The consumer that held the hash's pending acks when it moved.
    pub consumer: u64,
    /// Pending acks of the hash at that consumer.
    pub ref_count: u32,
    /// Dispatch attempts to another consumer that this entry blocked.
    pub blocked: u32,
}

/// Misuse the upstream tracker throws for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DrainingError {
    ZeroHash,
    OtherConsumerDraining { hash: u32, draining: u64, other: u64 },
}

impl fmt::Display for DrainingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DrainingError::ZeroHash => write!(f, "IllegalArgumentException: Sticky hash cannot be 0"),
            DrainingError::OtherConsumerDraining { hash, draining, other } => write!(
                f,
                "IllegalStateException: Consumer {draining} is already draining hash {hash}. Same hash being used for consumer {other}."
            ),
        }
    }
}

/// A blocked hash became free: the dispatcher schedules a read after `keySharedUnblockingIntervalMs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnblockNotice {
    Hash(u32),
    /// Unblocks happened inside a batch; one notice for all of them (upstream passes -1).
    Batch,
}

/// The tracker of one Key_Shared dispatcher.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DrainingHashesTracker {
    entries: BTreeMap<u32, DrainingEntry>,
    batch_level: u32,
    unblocked_while_batching: bool,
}

impl DrainingHashesTracker {
    pub fn new() -> DrainingHashesTracker {
        DrainingHashesTracker::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entry(&self, hash: u32) -> Option<&DrainingEntry> {
        self.entries.get(&hash)
    }

    /// All draining hashes, ascending (for views and stats).
    pub fn entries(&self) -> impl Iterator<Item = (u32, &DrainingEntry)> {
        self.entries.iter().map(|(&h, e)| (h, e))
    }

    /// A pending ack of `hash` at `consumer` must drain before the hash may go elsewhere.
    pub fn add_entry(&mut self, consumer: u64, hash: u32) -> Result<(), DrainingError> {
        if hash == STICKY_KEY_HASH_NOT_SET {
            return Err(DrainingError::ZeroHash);
        }
        let entry = self.entries.entry(hash).or_insert(DrainingEntry { consumer, ref_count: 0, blocked: 0 });
        if entry.consumer != consumer {
            return Err(DrainingError::OtherConsumerDraining { hash, draining: entry.consumer, other: consumer });
        }
        entry.ref_count += 1;
        Ok(())
    }

    /// A pending ack of `hash` at `consumer` went away (acked, or the consumer closed). At zero
    /// the entry is removed; if it had blocked someone and the consumer is not closing, the
    /// dispatcher is told to read again.
    pub fn reduce_ref_count(&mut self, consumer: u64, hash: u32, closing: bool) -> Result<Option<UnblockNotice>, DrainingError> {
        if hash == STICKY_KEY_HASH_NOT_SET {
            return Ok(None);
        }
        let Some(entry) = self.entries.get_mut(&hash) else { return Ok(None) };
        if entry.consumer != consumer {
            return Err(DrainingError::OtherConsumerDraining { hash, draining: entry.consumer, other: consumer });
        }
        entry.ref_count = entry.ref_count.saturating_sub(1);
        if entry.ref_count > 0 {
            return Ok(None);
        }
        let removed = self.entries.remove(&hash).map(|e| e.blocked > 0).unwrap_or(false);
        if closing || !removed {
            return Ok(None);
        }
        if self.batch_level > 0 {
            self.unblocked_while_batching = true;
            return Ok(None);
        }
        Ok(Some(UnblockNotice::Hash(hash)))
    }

    /// Whether dispatching `hash` to `consumer` must wait. The hash coming back to its drainer
    /// ends the draining.
    pub fn should_block(&mut self, consumer: u64, hash: u32) -> bool {
        if hash == STICKY_KEY_HASH_NOT_SET {
            return false;
        }
        let Some(entry) = self.entries.get_mut(&hash) else { return false };
        if entry.consumer == consumer {
            self.entries.remove(&hash);
            return false;
        }
        entry.blocked += 1;
        true
    }

    /// Batches nest; unblocks inside a batch are reported once, when the outermost batch ends.
    pub fn start_batch(&mut self) {
        self.batch_level += 1;
    }

    pub fn end_batch(&mut self) -> Option<UnblockNotice> {
        self.batch_level = self.batch_level.saturating_sub(1);
        if self.batch_level == 0 && self.unblocked_while_batching {
            self.unblocked_while_batching = false;
            return Some(UnblockNotice::Batch);
        }
        None
    }

    /// Forgets everything (dispatcher reset).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_other_consumers_until_drained() {
        let mut t = DrainingHashesTracker::new();
        t.add_entry(1, 7).unwrap();
        t.add_entry(1, 7).unwrap();
        assert!(t.should_block(2, 7));
        assert_eq!(t.reduce_ref_count(1, 7, false), Ok(None));
        assert!(t.should_block(2, 7));
        assert_eq!(t.reduce_ref_count(1, 7, false), Ok(Some(UnblockNotice::Hash(7))));
        assert!(!t.should_block(2, 7));
    }

    #[test]
    fn returning_to_the_drainer_removes_the_entry() {
        let mut t = DrainingHashesTracker::new();
        t.add_entry(1, 1).unwrap();
        assert!(!t.should_block(1, 1));
        assert_eq!(t.entry(1), None);
    }

    #[test]
    fn closing_and_unblocked_entries_do_not_notify() {
        let mut t = DrainingHashesTracker::new();
        t.add_entry(1, 1).unwrap();
        assert!(t.should_block(2, 1));
        assert_eq!(t.reduce_ref_count(1, 1, true), Ok(None));
        t.add_entry(1, 2).unwrap();
        assert_eq!(t.reduce_ref_count(1, 2, false), Ok(None));
    }

    #[test]
    fn misuse_is_an_error() {
        let mut t = DrainingHashesTracker::new();
        assert_eq!(t.add_entry(1, 0), Err(DrainingError::ZeroHash));
        t.add_entry(1, 5).unwrap();
        assert!(t.add_entry(2, 5).is_err());
        assert!(t.reduce_ref_count(2, 5, false).is_err());
        assert_eq!(t.reduce_ref_count(2, 0, false), Ok(None));
        assert!(!t.should_block(2, 0));
    }

    #[test]
    fn batches_report_once() {
        let mut t = DrainingHashesTracker::new();
        for h in [1, 2] {
            t.add_entry(1, h).unwrap();
            t.should_block(2, h);
        }
        t.start_batch();
        t.start_batch();
        assert_eq!(t.reduce_ref_count(1, 1, false), Ok(None));
        assert_eq!(t.reduce_ref_count(1, 2, false), Ok(None));
        assert_eq!(t.end_batch(), None);
        assert_eq!(t.end_batch(), Some(UnblockNotice::Batch));
    }
}
