//! A subscription's durable cursor (`ManagedCursorImpl`, spec §2.1, §2.2, §6 item 5): the
//! mark-delete position, the individually acked ranges above it, and the read position.
//!
//! Positions are entry ids of one topic in publish order; -1 means "before the first entry".

use std::collections::VecDeque;
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

/// The individually acked entries above markDelete, as a bitmap over positions: an ack, a
/// lookup and the backlog are O(1), and markDelete absorbs a run of acked entries a word at a
/// time. Bit 0 of the first word is position `base`; positions at or below markDelete are
/// always clear. (Upstream keeps a range set; only its contents matter here.)
#[derive(Clone, Debug, Default)]
struct AckedAbove {
    base: i64,
    words: VecDeque<u64>,
    covered: u64,
}

impl PartialEq for AckedAbove {
    fn eq(&self, other: &Self) -> bool {
        self.covered == other.covered && self.ranges() == other.ranges()
    }
}

impl Eq for AckedAbove {}

impl AckedAbove {
    fn new(mark_delete: i64) -> AckedAbove {
        AckedAbove { base: mark_delete + 1, words: VecDeque::new(), covered: 0 }
    }

    fn contains(&self, p: i64) -> bool {
        let off = p - self.base;
        off >= 0 && self.words.get((off / 64) as usize).is_some_and(|w| w >> (off % 64) & 1 == 1)
    }

    /// Adds `p`, which must be above markDelete and not acked yet.
    fn insert(&mut self, p: i64) {
        let off = p - self.base;
        let index = (off / 64) as usize;
        while self.words.len() <= index {
            self.words.push_back(0);
        }
        self.words[index] |= 1 << (off % 64);
        self.covered += 1;
    }

    fn count(&self) -> u64 {
        self.covered
    }

    /// How many consecutive positions from `p` on are acked.
    fn run_from(&self, p: i64) -> i64 {
        let mut off = p - self.base;
        let mut run = 0;
        while off >= 0 {
            let Some(&word) = self.words.get((off / 64) as usize) else { break };
            let bit = off % 64;
            let ones = i64::from((!(word >> bit)).trailing_zeros()).min(64 - bit);
            run += ones;
            off += ones;
            if ones < 64 - bit {
                break;
            }
        }
        run
    }

    /// markDelete moved to `m`: everything at or below it is forgotten.
    fn advance_to(&mut self, m: i64) {
        while !self.words.is_empty() && self.base + 64 <= m + 1 {
            let w = self.words.pop_front().unwrap_or(0);
            self.covered -= u64::from(w.count_ones());
            self.base += 64;
        }
        if self.words.is_empty() {
            self.base = self.base.max(m + 1);
            return;
        }
        let below = m + 1 - self.base;
        if below > 0 {
            let mask = (1u64 << below) - 1;
            self.covered -= u64::from((self.words[0] & mask).count_ones());
            self.words[0] &= !mask;
        }
    }

    /// The acked positions as inclusive ranges, ascending.
    fn ranges(&self) -> Vec<(i64, i64)> {
        let mut out: Vec<(i64, i64)> = Vec::new();
        for (i, &w) in self.words.iter().enumerate() {
            let mut bits = w;
            while bits != 0 {
                let b = i64::from(bits.trailing_zeros());
                bits &= bits - 1;
                let p = self.base + i as i64 * 64 + b;
                match out.last_mut() {
                    Some(last) if last.1 + 1 == p => last.1 = p,
                    _ => out.push((p, p)),
                }
            }
        }
        out
    }
}

/// The cursor of one subscription on one topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagedCursor {
    mark_delete: i64,
    acked_above: AckedAbove,
    read_position: i64,
    last_entry: i64,
    /// One past the furthest entry ever read: a rewind says how many unacked entries will be read
    /// again even when an earlier rewind (the last consumer leaving) already moved the read
    /// position back.
    read_end: i64,
}

impl ManagedCursor {
    /// Creates a subscription's cursor over a topic whose retained entries are
    /// `first_retained..=last_entry` (`last_entry` = -1 when nothing was published).
    pub fn create(initial: InitialPosition, first_retained: i64, last_entry: i64) -> ManagedCursor {
        let mark_delete = match initial {
            InitialPosition::Latest => last_entry,
            InitialPosition::Earliest => first_retained.min(last_entry + 1) - 1,
        };
        let read_position = mark_delete + 1;
        ManagedCursor {
            mark_delete,
            acked_above: AckedAbove::new(mark_delete),
            read_position,
            last_entry,
            read_end: read_position,
        }
    }

    /// A cursor as an admin tool saw it: `mark_delete` and the individually acked inclusive
    /// `acked` ranges above it, over entries `0..=last_entry`. Reading restarts at markDelete+1,
    /// as after a reconnect: what was read but not acked is read again. A range that starts right
    /// after markDelete is folded into it, as upstream would have.
    pub fn restore(mark_delete: i64, acked: &[(i64, i64)], last_entry: i64) -> ManagedCursor {
        let mut cursor = ManagedCursor {
            mark_delete,
            acked_above: AckedAbove::new(mark_delete),
            read_position: mark_delete + 1,
            last_entry,
            read_end: mark_delete + 1,
        };
        for &(first, last) in acked {
            for p in first.max(mark_delete + 1)..=last.min(last_entry) {
                if !cursor.acked_above.contains(p) {
                    cursor.acked_above.insert(p);
                }
            }
        }
        cursor.absorb_acked_prefix();
        cursor
    }

    pub fn mark_delete(&self) -> i64 {
        self.mark_delete
    }

    pub fn read_position(&self) -> i64 {
        self.read_position
    }

    /// One past the furthest entry ever read (at least the read position).
    pub fn read_end(&self) -> i64 {
        self.read_end.max(self.read_position)
    }

    pub fn last_entry(&self) -> i64 {
        self.last_entry
    }

    /// A new entry was published to the topic.
    pub fn on_entry_added(&mut self, position: i64) {
        self.last_entry = self.last_entry.max(position);
    }

    pub fn is_acked(&self, position: i64) -> bool {
        position <= self.mark_delete || self.acked_above.contains(position)
    }

    /// The individually acked entries above markDelete, ascending.
    pub fn individually_acked(&self) -> Vec<i64> {
        self.acked_above.ranges().into_iter().flat_map(|(s, e)| s..=e).collect()
    }

    /// The acked ranges above markDelete as upstream stores them, `(prev, end]` written `[start, end]`.
    pub fn individually_acked_ranges(&self) -> Vec<(i64, i64)> {
        self.acked_above.ranges()
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
        let run = self.acked_above.run_from(self.mark_delete + 1);
        if run > 0 {
            self.mark_delete += run;
            self.acked_above.advance_to(self.mark_delete);
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
        self.acked_above.advance_to(position);
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
        self.read_entries_into(max, &mut out);
        out
    }

    /// `read_entries` into a caller's buffer (appended), so a hot loop can reuse one allocation.
    pub fn read_entries_into(&mut self, max: usize, out: &mut Vec<i64>) {
        let max = max.saturating_add(out.len());
        let mut p = self.read_position.max(self.mark_delete + 1);
        while out.len() < max && p <= self.last_entry {
            if self.acked_above.contains(p) {
                p += self.acked_above.run_from(p);
            } else {
                out.push(p);
                p += 1;
            }
        }
        self.read_position = p;
        self.read_end = self.read_end.max(p);
    }

    /// Whether a read would return anything.
    pub fn has_more_entries(&self) -> bool {
        let mut p = self.read_position.max(self.mark_delete + 1);
        p += self.acked_above.run_from(p);
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
    fn backlog_matches_a_brute_force_count() {
        let mut rng = mqviz_engine::SplitMix64::new(9);
        let mut c = ManagedCursor::create(InitialPosition::Earliest, 0, 199);
        let mut acked = [false; 200];
        for _ in 0..2_000 {
            let p = rng.index(200) as i64;
            if rng.one_in(8) {
                c.ack_cumulative(p).unwrap();
                acked[..=p as usize].iter_mut().for_each(|a| *a = true);
            } else {
                c.ack(p).unwrap();
                acked[p as usize] = true;
            }
            assert_eq!(c.backlog(), acked.iter().filter(|a| !**a).count() as u64);
            let md = c.mark_delete();
            let above: Vec<i64> = (md + 1..200).filter(|&q| acked[q as usize]).collect();
            assert_eq!(c.individually_acked(), above);
            assert!((0..=md).all(|q| acked[q as usize]));
            assert!(md + 1 >= 200 || !acked[(md + 1) as usize], "markDelete stops at the first hole");
        }
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

    #[test]
    fn a_restored_cursor_reads_the_holes_and_folds_a_leading_range() {
        let c = ManagedCursor::restore(4, &[(7, 8), (11, 11)], 12);
        assert_eq!(state(&c), (4, vec![7, 8, 11], 5));
        let mut c = ManagedCursor::restore(4, &[(5, 6), (9, 9)], 12);
        assert_eq!(c.mark_delete(), 6, "a range right after markDelete is folded into it");
        assert_eq!(c.read_entries(10), vec![7, 8, 10, 11, 12]);
        let c = ManagedCursor::restore(-1, &[], -1);
        assert_eq!(state(&c), (-1, vec![], 0));
    }
}
