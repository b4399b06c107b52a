//! A subscription's durable cursor (`ManagedCursorImpl`, spec §2.1, §2.2, §6 item 5): the
//! mark-delete position, the individually acked ranges above it, and the read position.
//!
//! Positions are entry ids of one topic in publish order; -1 means "before the first entry".

use std::collections::BTreeMap;
use std::fmt;

/// Where a **new** subscription's cursor starts. An existing subscription keeps its cursor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InitialPosition {
    /// After the last entry: backlog 0 (the client default).
    #[default]
    Latest,
    /// Before the first retained entry.
    Earliest,
}

impl InitialPosition {
    pub fn parse(name: &str) -> Option<InitialPosition> {
        match name {
            "Latest" => Some(InitialPosition::Latest),
            "Earliest" => Some(InitialPosition::Earliest),
            _ => None,
        }
    }
}

/// Acks the cursor cannot apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CursorError {
    /// The position was never published.
    InvalidPosition { position: i64, last_entry: i64 },
}

impl fmt::Display for CursorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CursorError::InvalidPosition { position, last_entry } => {
                write!(f, "ManagedLedgerException: Invalid position {position} (last entry {last_entry})")
            }
        }
    }
}

/// What an ack did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckOutcome {
    /// The position was acked now; `mark_delete_moved` tells whether markDelete advanced.
    Acked { mark_delete_moved: bool },
    /// Already covered (at or below markDelete, or acked before): upstream skips it.
    AlreadyAcked,
}

/// Inclusive ranges `[start, end]`, disjoint and non-adjacent, keyed by start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct RangeSet {
    ranges: BTreeMap<i64, i64>,
}

impl RangeSet {
    fn containing(&self, p: i64) -> Option<(i64, i64)> {
        self.ranges.range(..=p).next_back().filter(|(_, &e)| e >= p).map(|(&s, &e)| (s, e))
    }

    fn insert(&mut self, p: i64) {
        let (mut start, mut end) = (p, p);
        if let Some((s, _)) = self.ranges.range(..p).next_back().filter(|(_, &e)| e + 1 == p).map(|(&s, &e)| (s, e)) {
            start = s;
            self.ranges.remove(&s);
        }
        if let Some(e) = self.ranges.remove(&(p + 1)) {
            end = e;
        }
        self.ranges.insert(start, end);
    }

    /// Drops everything at or below `p`.
    fn remove_at_most(&mut self, p: i64) {
        let doomed: Vec<(i64, i64)> = self.ranges.range(..=p).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in doomed {
            self.ranges.remove(&s);
            if e > p {
                self.ranges.insert(p + 1, e);
            }
        }
    }

    fn count(&self) -> u64 {
        self.ranges.iter().map(|(s, e)| (e - s + 1) as u64).sum()
    }

    fn first(&self) -> Option<(i64, i64)> {
        self.ranges.iter().next().map(|(&s, &e)| (s, e))
    }
}

/// The cursor of one subscription on one topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagedCursor {
    mark_delete: i64,
    acked_above: RangeSet,
    read_position: i64,
    last_entry: i64,
}

impl ManagedCursor {
    /// Creates a subscription's cursor over a topic whose retained entries are
    /// `first_retained..=last_entry` (`last_entry` = -1 when nothing was published).
    pub fn create(initial: InitialPosition, first_retained: i64, last_entry: i64) -> ManagedCursor {
        let mark_delete = match initial {
            InitialPosition::Latest => last_entry,
            InitialPosition::Earliest => first_retained.min(last_entry + 1) - 1,
        };
        ManagedCursor { mark_delete, acked_above: RangeSet::default(), read_position: mark_delete + 1, last_entry }
    }

    pub fn mark_delete(&self) -> i64 {
        self.mark_delete
    }

    pub fn read_position(&self) -> i64 {
        self.read_position
    }

    pub fn last_entry(&self) -> i64 {
        self.last_entry
    }

    /// A new entry was published to the topic.
    pub fn on_entry_added(&mut self, position: i64) {
        self.last_entry = self.last_entry.max(position);
    }

    pub fn is_acked(&self, position: i64) -> bool {
        position <= self.mark_delete || self.acked_above.containing(position).is_some()
    }

    /// The individually acked entries above markDelete, ascending.
    pub fn individually_acked(&self) -> Vec<i64> {
        self.acked_above.ranges.iter().flat_map(|(&s, &e)| s..=e).collect()
    }

    /// The acked ranges above markDelete as upstream stores them, `(prev, end]` written `[start, end]`.
    pub fn individually_acked_ranges(&self) -> Vec<(i64, i64)> {
        self.acked_above.ranges.iter().map(|(&s, &e)| (s, e)).collect()
    }

    /// Entries in `(markDelete, lastEntry]` not individually acked (batched entries count once).
    pub fn backlog(&self) -> u64 {
        (self.last_entry - self.mark_delete).max(0) as u64 - self.acked_above.count()
    }

    fn check_published(&self, position: i64) -> Result<(), CursorError> {
        if position > self.last_entry || position < -1 {
            return Err(CursorError::InvalidPosition { position, last_entry: self.last_entry });
        }
        Ok(())
    }

    /// Folds acked ranges that start right after markDelete into it.
    fn absorb_acked_prefix(&mut self) {
        while let Some((s, e)) = self.acked_above.first() {
            if s != self.mark_delete + 1 {
                break;
            }
            self.acked_above.ranges.remove(&s);
            self.mark_delete = e;
        }
        self.read_position = self.read_position.max(self.mark_delete + 1);
    }

    /// An individual ack.
    pub fn ack(&mut self, position: i64) -> Result<AckOutcome, CursorError> {
        self.check_published(position)?;
        if self.is_acked(position) {
            return Ok(AckOutcome::AlreadyAcked);
        }
        let before = self.mark_delete;
        self.acked_above.insert(position);
        self.absorb_acked_prefix();
        Ok(AckOutcome::Acked { mark_delete_moved: self.mark_delete != before })
    }

    /// A cumulative ack (mark-delete): everything up to `position` is acked, and markDelete then
    /// continues over any acked range that follows.
    pub fn ack_cumulative(&mut self, position: i64) -> Result<AckOutcome, CursorError> {
        self.check_published(position)?;
        if position <= self.mark_delete {
            return Ok(AckOutcome::AlreadyAcked);
        }
        self.mark_delete = position;
        self.acked_above.remove_at_most(position);
        self.absorb_acked_prefix();
        Ok(AckOutcome::Acked { mark_delete_moved: true })
    }

    /// "Rewind": reading restarts at markDelete+1 (every unacked entry will be read again).
    pub fn rewind(&mut self) {
        self.read_position = self.mark_delete + 1;
    }

    /// Reads up to `max` entries from the read position, skipping individually acked ones.
    pub fn read_entries(&mut self, max: usize) -> Vec<i64> {
        let mut out = Vec::new();
        let mut p = self.read_position.max(self.mark_delete + 1);
        while out.len() < max && p <= self.last_entry {
            match self.acked_above.containing(p) {
                Some((_, end)) => p = end + 1,
                None => {
                    out.push(p);
                    p += 1;
                }
            }
        }
        self.read_position = p;
        out
    }

    /// Whether a read would return anything.
    pub fn has_more_entries(&self) -> bool {
        let mut p = self.read_position.max(self.mark_delete + 1);
        while let Some((_, end)) = self.acked_above.containing(p) {
            p = end + 1;
        }
        p <= self.last_entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(c: &ManagedCursor) -> (i64, Vec<i64>, u64) {
        (c.mark_delete(), c.individually_acked(), c.backlog())
    }

    #[test]
    fn individual_acks_fold_into_mark_delete() {
        let mut c = ManagedCursor::create(InitialPosition::Earliest, 0, 9);
        let mut seen = Vec::new();
        for p in [2, 0, 1, 5, 3, 4] {
            c.ack(p).unwrap();
            seen.push(state(&c));
        }
        assert_eq!(
            seen,
            vec![(-1, vec![2], 9), (0, vec![2], 8), (2, vec![], 7), (2, vec![5], 6), (3, vec![5], 5), (5, vec![], 4)]
        );
        assert_eq!(c.ack(1), Ok(AckOutcome::AlreadyAcked));
    }

    #[test]
    fn cumulative_ack_runs_over_acked_ranges() {
        let mut c = ManagedCursor::create(InitialPosition::Earliest, 0, 9);
        c.ack(5).unwrap();
        c.ack(6).unwrap();
        c.ack_cumulative(4).unwrap();
        assert_eq!(state(&c), (6, vec![], 3));
        assert_eq!(c.ack_cumulative(2), Ok(AckOutcome::AlreadyAcked));
        assert!(c.ack(10).is_err());
    }

    #[test]
    fn initial_positions_apply_at_creation() {
        assert_eq!(state(&ManagedCursor::create(InitialPosition::Latest, 0, 9)), (9, vec![], 0));
        assert_eq!(state(&ManagedCursor::create(InitialPosition::Earliest, 3, 9)), (2, vec![], 7));
        assert_eq!(state(&ManagedCursor::create(InitialPosition::Earliest, 0, -1)), (-1, vec![], 0));
    }

    #[test]
    fn reads_skip_acked_entries_and_rewind_restarts_after_mark_delete() {
        let mut c = ManagedCursor::create(InitialPosition::Earliest, 0, 5);
        c.ack(1).unwrap();
        c.ack(2).unwrap();
        assert_eq!(c.read_entries(3), vec![0, 3, 4]);
        assert!(c.has_more_entries());
        assert_eq!(c.read_entries(10), vec![5]);
        assert!(!c.has_more_entries());
        c.rewind();
        assert_eq!(c.read_entries(10), vec![0, 3, 4, 5]);
        c.on_entry_added(6);
        assert_eq!(c.read_entries(10), vec![6]);
    }
}
