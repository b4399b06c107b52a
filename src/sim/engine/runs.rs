//! A value per log entry, stored once per run of equal values.
//!
//! A log's entries come in bursts that share a time and a cause (a pull serves 32 messages, a
//! consume batch completes 32), so a column of one `u32` per entry mostly repeats itself. Runs
//! keep the column's memory proportional to its changes; a lookup is a binary search.

/// Values indexed by entry number, pushed in increasing entry order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Runs<T> {
    /// (first entry, value) at each change of value.
    runs: Vec<(u32, T)>,
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
        let run = self.runs.partition_point(|&(first, _)| first <= entry);
        run.checked_sub(1).map(|r| self.runs[r].1)
    }

    /// Forgets the runs that end before `entry`; the run covering it is kept.
    pub fn drop_before(&mut self, entry: u32) {
        let run = self.runs.partition_point(|&(first, _)| first <= entry);
        self.runs.drain(..run.saturating_sub(1));
        self.runs.shrink_to_fit();
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
