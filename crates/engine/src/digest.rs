//! The event-log digest, kept with the log it covers.
//!
//! The digest is FNV-1a over the rendered log, and rendering is most of its cost: natively a
//! million-message run takes longer to digest from scratch than to simulate. A page shows the
//! digest as the run grows, so each log keeps a `DigestMemo`: how many lines are hashed and the
//! hash state after them. Asking again renders only the lines added since.
//!
//! Invariant: a log entry's line never changes once the entry is pushed (logs only append; a
//! compaction drops a prefix whose lines are already folded). A clone of a log clones its memo,
//! so a restored checkpoint goes on from its own state.

use std::cell::Cell;
use std::ops::Range;

use super::Millis;
use crate::hash::{fnv1a64_extend, FNV1A64_OFFSET};

#[derive(Clone, Debug)]
pub struct DigestMemo {
    /// The first line not hashed yet.
    next: Cell<u32>,
    /// The FNV-1a state after lines `..next`.
    state: Cell<u64>,
}

impl Default for DigestMemo {
    fn default() -> Self {
        DigestMemo { next: Cell::new(0), state: Cell::new(FNV1A64_OFFSET) }
    }
}

/// Where a fold starts when the memo holds nothing usable: the first line still held and the hash
/// state over the lines before it (a compacted log's folded prefix; `FRESH` for a whole log).
pub type FoldStart = (u32, u64);
pub const FRESH: FoldStart = (0, FNV1A64_OFFSET);

impl DigestMemo {
    /// Hashes up to `max_lines` more of the log's `len` lines, going on from the memo. `lines`
    /// yields the entries of the range it is given, in order; `write` renders one without its
    /// newline. `Some(digest)` once every line is in.
    pub fn fold<I: Iterator>(
        &self,
        start: FoldStart,
        len: u32,
        max_lines: usize,
        lines: impl FnOnce(Range<u32>) -> I,
        mut write: impl FnMut(&mut String, I::Item),
    ) -> Option<u64> {
        let (mut next, mut h) = (self.next.get(), self.state.get());
        if next < start.0 || next > len {
            (next, h) = start;
        }
        let end = len.min(next.saturating_add(u32::try_from(max_lines).unwrap_or(u32::MAX))).max(next);
        let mut line = String::new();
        let mut done = next;
        for item in lines(next..end).take((end - next) as usize) {
            line.clear();
            write(&mut line, item);
            line.push('\n');
            h = fnv1a64_extend(h, line.as_bytes());
            done += 1;
        }
        self.next.set(done);
        self.state.set(h);
        (done == len).then_some(h)
    }
}

/// `#id t=ms cause=#c ` (or `cause=- `): how every model's log line starts. Written without
/// `core::fmt`, whose per-argument dispatch was a fifth of the cost of a digest.
pub fn write_line_prefix(out: &mut String, id: u32, at: Millis, cause: Option<u32>) {
    out.push('#');
    push_decimal(out, id.into());
    out.push_str(" t=");
    push_decimal(out, at);
    match cause {
        Some(c) => {
            out.push_str(" cause=#");
            push_decimal(out, c.into());
            out.push(' ');
        }
        None => out.push_str(" cause=- "),
    }
}

/// `n` in decimal, as `Display` writes it.
pub fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|&d| char::from(d)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventId;
    use std::fmt::Write as _;

    #[test]
    fn the_prefix_is_what_display_writes() {
        for (id, at, cause) in [(0, 0, None), (7, 10, Some(3)), (u32::MAX, u64::MAX, Some(u32::MAX)), (1000, 99, Some(0))] {
            let mut want = String::new();
            let _ = write!(want, "{} t={} ", EventId(id), at);
            match cause {
                Some(c) => {
                    let _ = write!(want, "cause={} ", EventId(c));
                }
                None => want.push_str("cause=- "),
            }
            let mut got = String::new();
            write_line_prefix(&mut got, id, at, cause);
            assert_eq!(got, want);
        }
    }

    /// Folding in pieces, with the log growing between them, gives the digest of the whole text.
    #[test]
    fn a_fold_in_pieces_equals_one_fold_over_the_whole_log() {
        let lines: Vec<String> = (0..100).map(|i| format!("line {i} {}", "x".repeat(i % 7))).collect();
        let whole = lines.iter().fold(FNV1A64_OFFSET, |h, l| fnv1a64_extend(h, format!("{l}\n").as_bytes()));
        let memo = DigestMemo::default();
        let fold = |len: u32, max: usize| {
            memo.fold(FRESH, len, max, |r| lines[r.start as usize..r.end as usize].iter(), |out, l| out.push_str(l))
        };
        assert_eq!(fold(0, 5), Some(FNV1A64_OFFSET));
        assert_eq!(fold(40, 15), None, "only 15 of 40 lines");
        assert_eq!(fold(40, 15), None);
        assert!(fold(40, 15).is_some(), "all 40");
        assert_eq!(fold(100, usize::MAX), Some(whole));
        assert_eq!(fold(100, 0), Some(whole), "nothing new to hash");
        // A clone goes on from its own state; a memo ahead of a shorter log starts over.
        let clone = memo.clone();
        assert_eq!(
            clone.fold(FRESH, 100, 1, |r| lines[r.start as usize..r.end as usize].iter(), |o, l| o.push_str(l)),
            Some(whole)
        );
        let shorter = lines[..10].iter().fold(FNV1A64_OFFSET, |h, l| fnv1a64_extend(h, format!("{l}\n").as_bytes()));
        assert_eq!(fold(10, usize::MAX), Some(shorter));
    }

    #[test]
    fn decimals_match_display() {
        for n in [0u64, 9, 10, 99, 100, 12345, u32::MAX as u64, u64::MAX] {
            let mut s = String::new();
            push_decimal(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }
}
