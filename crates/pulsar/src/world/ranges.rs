//! Key_Shared hash ranges as the log, the view and the report show them: per consumer a short
//! summary (the ranges themselves when there are few, else a count), computed in one pass over
//! the selector's snapshot, and which consumers a membership change touched.

use mqviz_engine::sort::StableSort;
use std::collections::BTreeMap;

use crate::key_shared::selector::sweep_owners;
use crate::key_shared::HashRangeAssignment;

/// At most this many hash ranges are spelled out per consumer.
const RANGES_SHOWN: usize = 8;

/// One consumer's hash ranges, summarised.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSummary {
    /// The first `RANGES_SHOWN` ranges.
    pub first: Vec<(u32, u32)>,
    pub ranges: usize,
    pub hashes: u64,
}

impl RangeSummary {
    fn add(&mut self, start: u32, end: u32) {
        if self.first.len() < RANGES_SHOWN {
            self.first.push((start, end));
        }
        self.ranges += 1;
        self.hashes += u64::from(end - start) + 1;
    }

    /// `[a-b], [c-d]`, or `N ranges covering H hashes` when there are many.
    pub fn text(&self) -> String {
        if self.ranges == 0 {
            "none".to_string()
        } else if self.ranges > RANGES_SHOWN {
            format!("{} ranges covering {} hashes", self.ranges, self.hashes)
        } else {
            self.first.iter().map(|(s, e)| format!("[{s}-{e}]")).collect::<Vec<_>>().join(", ")
        }
    }
}

/// `[a-b], [c-d]` (or a count when there are many) for a list of ranges.
pub fn ranges_text(ranges: &[(u32, u32)]) -> String {
    let mut s = RangeSummary::default();
    for &(a, b) in ranges {
        s.add(a, b);
    }
    s.text()
}

/// Summaries of every consumer in a snapshot (ascending ranges).
pub fn summarize(assignments: &[HashRangeAssignment]) -> BTreeMap<u64, RangeSummary> {
    let mut out: BTreeMap<u64, RangeSummary> = BTreeMap::new();
    for a in assignments {
        out.entry(a.consumer).or_default().add(a.start, a.end);
    }
    out
}

/// What changed the ring: a consumer joined (only it gains hashes) or left (only it loses them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Membership {
    Joined(u64),
    Left(u64),
}

/// The consumers whose ranges changed between two snapshots, with their new summary (empty when
/// they own nothing now). Linear in the snapshots: a join only moves hashes to the newcomer, a
/// leave only away from the leaver, so one side of `sweep_owners` finds everyone touched.
pub fn changed(before: &[HashRangeAssignment], after: &[HashRangeAssignment], change: Membership) -> Vec<(u64, RangeSummary)> {
    // A join: everyone who lost hashes (they went to the newcomer); a leave: everyone who gained.
    let mut touched: Vec<u64> = Vec::new();
    let c = match change {
        Membership::Joined(c) => {
            sweep_owners(before, after, |was, _, _, _| touched.extend(was));
            c
        }
        Membership::Left(c) => {
            sweep_owners(before, after, |_, now, _, _| touched.extend(now));
            c
        }
    };
    touched.push(c);
    touched.stable_sort();
    touched.dedup();
    let mut summaries: Vec<RangeSummary> = vec![RangeSummary::default(); touched.len()];
    for a in after {
        if let Ok(i) = touched.binary_search(&a.consumer) {
            summaries[i].add(a.start, a.end);
        }
    }
    touched.into_iter().zip(summaries).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(start: u32, end: u32, consumer: u64) -> HashRangeAssignment {
        HashRangeAssignment { start, end, consumer }
    }

    #[test]
    fn only_touched_consumers_are_reported() {
        let before = [a(0, 9, 1), a(10, 19, 2), a(20, 29, 3)];
        let after = [a(0, 4, 1), a(5, 9, 4), a(10, 19, 2), a(20, 29, 3)];
        let c = changed(&before, &after, Membership::Joined(4));
        assert_eq!(c.iter().map(|(id, s)| (*id, s.text())).collect::<Vec<_>>(), vec![(1, "[0-4]".into()), (4, "[5-9]".into())]);
        let gone = changed(&after, &before[..2], Membership::Left(3));
        assert!(gone.iter().any(|(id, s)| *id == 3 && s.text() == "none"));
        assert_eq!(ranges_text(&[(0, 1); 9]), "9 ranges covering 18 hashes");
    }

    /// The sweep finds exactly the consumers `lost_ranges` names, on real rings and on snapshots
    /// with gaps (STICKY ranges).
    #[test]
    fn the_sweep_agrees_with_lost_ranges() {
        use crate::key_shared::{lost_ranges, ConsistentHashRing};
        let touched = |before: &[HashRangeAssignment], after: &[HashRangeAssignment], change| {
            changed(before, after, change).into_iter().map(|(id, _)| id).collect::<Vec<u64>>()
        };
        let mut ring = ConsistentHashRing::new(100);
        for c in 0..40u64 {
            let before = ring.assignments();
            ring.add(c, &format!("consumer-{c}"));
            let after = ring.assignments();
            let mut expected: Vec<u64> = lost_ranges(&before, &after).into_keys().chain([c]).collect();
            expected.stable_sort();
            expected.dedup();
            assert_eq!(touched(&before, &after, Membership::Joined(c)), expected);
        }
        for c in (0..40u64).step_by(3) {
            let before = ring.assignments();
            ring.remove(c);
            let after = ring.assignments();
            let mut expected: Vec<u64> = lost_ranges(&after, &before).into_keys().chain([c]).collect();
            expected.stable_sort();
            expected.dedup();
            assert_eq!(touched(&before, &after, Membership::Left(c)), expected);
        }
        let gappy = [a(0, 9, 1), a(20, 29, 2), a(40, 49, 3)];
        let joined = [a(0, 9, 1), a(10, 19, 4), a(20, 24, 2), a(25, 29, 4), a(40, 49, 3)];
        let ids = |v: Vec<(u64, RangeSummary)>| v.into_iter().map(|(id, _)| id).collect::<Vec<_>>();
        assert_eq!(ids(changed(&gappy, &joined, Membership::Joined(4))), vec![2, 4]);
        assert_eq!(ids(changed(&joined, &gappy, Membership::Left(4))), vec![2, 4]);
    }
}
