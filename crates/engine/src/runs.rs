//! A value per log entry, stored once per run of equal values.
//!
//! A log's entries come in bursts that share a time and a cause (a pull serves 32 messages, a
//! consume batch completes 32), so a column of one `u32` per entry mostly repeats itself. Runs
//! keep the column's memory proportional to its changes; a lookup is a binary search, unless
//! it falls in the run of the previous lookup or the next one (readers mostly go front to back).

use std::cell::Cell;

/// Values indexed by entry number, pushed in increasing entry order.
#[derive(Clone, Debug, Default)]
pub struct Runs<T> {
    /// (first entry, value) at each change of value.
    runs: Vec<(u32, T)>,
    /// The run the last lookup fell in.
    hint: Cell<usize>,
}

impl<T: Copy + PartialEq> Runs<T> {
    /// Records `value` for `entry`, which must come after every entry pushed before.
    pub fn push(&mut self, entry: u32, value: T) {
        if self.runs.last().is_none_or(|&(_, v)| v != value) {
            self.runs.push((entry, value));
        }
    }

    /// The value of `entry`: that of the run it falls in (`None` before the first run).
    pub fn get(&self, entry: u32) -> Option<T> {
        let covers = |r: usize| {
            self.runs.get(r).is_some_and(|&(first, _)| first <= entry)
                && self.runs.get(r + 1).is_none_or(|&(next, _)| entry < next)
        };
        let hint = self.hint.get();
        let run = if covers(hint) {
            hint
        } else if covers(hint + 1) {
            hint + 1
        } else {
            self.runs.partition_point(|&(first, _)| first <= entry).checked_sub(1)?
        };
        self.hint.set(run);
        Some(self.runs[run].1)
    }

    /// The values of `entry` and every entry after it, in order: one binary search, then a walk
    /// (a log read front to back would otherwise search once per entry).
    pub fn values_from(&self, entry: u32) -> impl Iterator<Item = Option<T>> + '_ {
        let mut run = self.runs.partition_point(|&(first, _)| first <= entry);
        (entry..).map(move |e| {
            while self.runs.get(run).is_some_and(|&(first, _)| first <= e) {
                run += 1;
            }
            run.checked_sub(1).map(|r| self.runs[r].1)
        })
    }

    /// Forgets the runs that end before `entry`; the run covering it is kept.
    pub fn drop_before(&mut self, entry: u32) {
        let run = self.runs.partition_point(|&(first, _)| first <= entry);
        self.runs.drain(..run.saturating_sub(1));
        self.runs.shrink_to_fit();
        self.hint.set(0);
    }

    /// Bytes held by the runs.
    pub fn bytes(&self) -> usize {
        self.runs.len() * std::mem::size_of::<(u32, T)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_holds_until_the_next_change() {
        let mut r = Runs::default();
        for (entry, v) in [(0, 7u64), (1, 7), (2, 9), (3, 9), (4, 7)] {
            r.push(entry, v);
        }
        assert_eq!(r.bytes(), 3 * std::mem::size_of::<(u32, u64)>());
        let got: Vec<_> = (0..6).map(|e| r.get(e)).collect();
        assert_eq!(got, [Some(7), Some(7), Some(9), Some(9), Some(7), Some(7)]);
        for from in 0..6 {
            let walked: Vec<_> = r.values_from(from).take(6 - from as usize).collect();
            assert_eq!(walked, got[from as usize..], "from entry {from}");
        }
        // Lookups in any order agree with a search from scratch (the hint only saves searches).
        let mut state = 12345u32;
        for _ in 0..200 {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let e = (state >> 16) % 6;
            assert_eq!(r.get(e), got[e as usize], "entry {e}");
        }
        let late = Runs::<u32> { runs: vec![(3, 1)], hint: Cell::new(0) };
        assert_eq!(late.get(1), None);
        assert_eq!(late.values_from(1).take(4).collect::<Vec<_>>(), [None, None, Some(1), Some(1)]);
    }

    #[test]
    fn dropping_a_prefix_keeps_the_run_that_covers_the_new_first_entry() {
        let mut r = Runs::default();
        for (entry, v) in [(0, 1u32), (5, 2), (10, 3)] {
            r.push(entry, v);
        }
        r.drop_before(7);
        assert_eq!(r.get(7), Some(2));
        assert_eq!(r.get(12), Some(3));
        assert_eq!(r.bytes(), 2 * std::mem::size_of::<(u32, u32)>());
        assert_eq!(Runs::<u32>::default().get(0), None);
    }
}
