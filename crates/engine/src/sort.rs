//! Stable sorting with one copy of the sort algorithm in the binary.
//!
//! `slice::sort_by` is generic over the element and the comparator, so each call site compiles
//! its own copy of driftsort (about ten functions, 3–5 KB of wasm per site). Sixty call sites
//! made sorting a tenth of the page's code. Here the algorithm runs once, on positions, through a
//! `dyn` comparator; each call site adds only a closure and the permutation that moves its
//! elements.
//!
//! Collecting into a `BTreeMap` or `BTreeSet` sorts its items first, with another driftsort per
//! item type; `CollectSorted` inserts them one by one instead.
//!
//! Results equal `slice::sort_by`'s exactly: ties keep their order (the positions are sorted
//! stably), and a stable sort has only one correct output. Replacing `sort_unstable` is safe
//! where equal elements are identical (integers, strings, derived `Ord` over every field).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Stable sorts for slices and vectors, one algorithm for every element type.
pub trait StableSort<T> {
    /// As `slice::sort_by`.
    fn stable_sort_by(&mut self, cmp: impl Fn(&T, &T) -> Ordering);

    /// As `slice::sort_by_key`.
    fn stable_sort_by_key<K: Ord>(&mut self, key: impl Fn(&T) -> K) {
        self.stable_sort_by(|a, b| key(a).cmp(&key(b)));
    }

    /// As `slice::sort`.
    fn stable_sort(&mut self)
    where
        T: Ord,
    {
        self.stable_sort_by(T::cmp);
    }
}

impl<T> StableSort<T> for [T] {
    fn stable_sort_by(&mut self, cmp: impl Fn(&T, &T) -> Ordering) {
        if self.len() < 2 {
            return;
        }
        let len = u32::try_from(self.len()).expect("sorting fewer than 2^32 elements");
        let mut order: Vec<u32> = (0..len).collect();
        let elements: &[T] = self;
        sort_positions(&mut order, &|a, b| cmp(&elements[a as usize], &elements[b as usize]));
        permute(self, &mut order);
    }
}

/// `collect` into ordered collections without compiling a sort per item type. As with
/// `collect`, a later duplicate key's value replaces an earlier one. Keys are kept from the first
/// insertion, which is indistinguishable wherever equal keys are identical (strings, integers,
/// message queues), as they are here.
pub trait CollectSorted: Iterator + Sized {
    fn collect_map<K: Ord, V>(self) -> BTreeMap<K, V>
    where
        Self: Iterator<Item = (K, V)>,
    {
        let mut map = BTreeMap::new();
        for (k, v) in self {
            map.insert(k, v);
        }
        map
    }

    fn collect_set<T: Ord>(self) -> BTreeSet<T>
    where
        Self: Iterator<Item = T>,
    {
        let mut set = BTreeSet::new();
        for item in self {
            set.insert(item);
        }
        set
    }
}

impl<I: Iterator> CollectSorted for I {}

/// The only instance of the sort algorithm: orders positions by the comparator, stably.
#[inline(never)]
fn sort_positions(order: &mut [u32], cmp: &dyn Fn(u32, u32) -> Ordering) {
    order.sort_by(|&a, &b| cmp(a, b));
}

/// Rearranges `v` so that position `i` holds the element that was at `order[i]`, in place, one
/// cycle of the permutation at a time. `order` is used up.
fn permute<T>(v: &mut [T], order: &mut [u32]) {
    const DONE: u32 = u32::MAX;
    for start in 0..v.len() {
        if order[start] == DONE {
            continue;
        }
        // The element first at `start` travels along the cycle until its own slot comes up.
        let mut pos = start;
        loop {
            let from = order[pos] as usize;
            order[pos] = DONE;
            if from == start {
                break;
            }
            v.swap(pos, from);
            pos = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SplitMix64;

    /// Against the standard library's stable sort, with many ties that differ in a second field.
    #[test]
    fn matches_slice_sort_by_on_random_input_with_ties() {
        let mut rng = SplitMix64::new(7);
        for len in [0usize, 1, 2, 3, 5, 17, 64, 257, 1000] {
            for _ in 0..20 {
                let v: Vec<(u64, u64)> = (0..len as u64).map(|i| (rng.below(6), i)).collect();
                let mut expected = v.clone();
                expected.sort_by_key(|x| x.0);
                let mut got = v.clone();
                got.stable_sort_by_key(|x| x.0);
                assert_eq!(got, expected, "len {len}");
                let mut desc = v.clone();
                desc.stable_sort_by(|a, b| b.0.cmp(&a.0));
                let mut expected_desc = v;
                expected_desc.sort_by_key(|x| std::cmp::Reverse(x.0));
                assert_eq!(desc, expected_desc);
            }
        }
    }

    #[test]
    fn collects_as_collect_does() {
        let pairs = [(3, "c"), (1, "a"), (3, "z"), (2, "b")];
        assert_eq!(pairs.iter().copied().collect_map(), pairs.iter().copied().collect::<BTreeMap<_, _>>());
        assert_eq!(pairs.iter().map(|p| p.0).collect_set(), pairs.iter().map(|p| p.0).collect::<BTreeSet<_>>());
    }

    #[test]
    fn moves_owned_values_without_loss() {
        let mut v: Vec<String> = ["d", "b", "a", "c", "b"].iter().map(|s| s.to_string()).collect();
        v.stable_sort();
        assert_eq!(v, ["a", "b", "b", "c", "d"]);
    }
}
