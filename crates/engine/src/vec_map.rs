//! Ordered maps and sets kept as one sorted vector: `BTreeMap`'s and `BTreeSet`'s behaviour
//! (key order everywhere, the same method names) in a fraction of the code.
//!
//! Why: every key and value type of a `BTreeMap` compiles its own B-tree (insertion with node
//! splits, removal with merges and steals, `clone_subtree`, a dying-iterator drop), several KB of
//! wasm per type. The RocketMQ model used some sixty of them, and ordered-map code was an eighth
//! of the page's first download (518 -> 477 KB gzipped with the maps below as `VecMap`s). A
//! sorted vector compiles to a binary search, a `memmove` and a `Vec`'s clone and drop.
//!
//! When: for maps keyed by things a group has at most thousands of (consumers, topics, groups,
//! brokers, queues, colour keys), which are read far more often than they change, and for maps
//! keyed by message whose keys arrive in increasing order (an insert is a push). Insertion and
//! removal shift the tail, so a map whose keys arrive in no order and grow with the run stays a
//! `BTreeMap` (the event queue, a process queue's in-flight offsets).
//!
//! The maps the seek's loop looks up for every message (a consumer's process queues, routes,
//! subscriptions and offsets, the broker's consume queues and committed offsets) are `VecMap`s
//! too, for 14 KB gzipped. They first made the page's seek over a million messages 1.15-1.25x
//! slower in wasm (not natively): `iter` was a `Map` over a `fn` pointer, an indirect call per
//! entry. With `Iter` a type of its own the seek is within 1.1x of the B-trees'.
//!
//! Iteration order is the key order, exactly as in a `BTreeMap`, so swapping one for the other
//! changes no event log.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;

use crate::sort::StableSort;

/// An ordered map: `BTreeMap`'s interface over a vector sorted by key.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct VecMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap { entries: Vec::new() }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Entries in key order. A type of its own rather than a `Map` over a `fn` pointer: in wasm that
/// pointer is an indirect call per entry, which the optimiser at `s` did not always see through.
#[derive(Clone)]
pub struct Iter<'a, K, V>(std::slice::Iter<'a, (K, V)>);

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<K, V> DoubleEndedIterator for Iter<'_, K, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl<K, V> ExactSizeIterator for Iter<'_, K, V> {}

/// Entries in key order, values mutable.
pub struct IterMut<'a, K, V>(std::slice::IterMut<'a, (K, V)>);

impl<'a, K, V> Iterator for IterMut<'a, K, V> {
    type Item = (&'a K, &'a mut V);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&*k, v))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<K, V> DoubleEndedIterator for IterMut<'_, K, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (&*k, v))
    }
}

impl<K, V> ExactSizeIterator for IterMut<'_, K, V> {}

impl<K, V> VecMap<K, V> {
    pub const fn new() -> Self {
        VecMap { entries: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter(self.entries.iter())
    }

    pub fn iter_mut(&mut self) -> IterMut<'_, K, V> {
        IterMut(self.entries.iter_mut())
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        self.entries.into_iter().map(|(k, _)| k)
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = V> + ExactSizeIterator {
        self.entries.into_iter().map(|(_, v)| v)
    }

    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.entries.first().map(|(k, v)| (k, v))
    }

    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.entries.last().map(|(k, v)| (k, v))
    }

    /// As `BTreeMap::retain`: visits the entries in key order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }
}

impl<K: Ord, V> VecMap<K, V> {
    /// Where `key` is, or where it would go.
    fn find<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| (&self.entries[i].0, &self.entries[i].1))
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).is_ok()
    }

    /// As `BTreeMap::insert`: an existing key keeps its first instance and gets the new value.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| self.entries.remove(i).1)
    }

    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        match self.find(&key) {
            Ok(at) => Entry::Occupied(OccupiedEntry { map: self, at }),
            Err(at) => Entry::Vacant(VacantEntry { map: self, at, key }),
        }
    }
}

/// As `btree_map::Entry`.
pub enum Entry<'a, K, V> {
    Occupied(OccupiedEntry<'a, K, V>),
    Vacant(VacantEntry<'a, K, V>),
}

pub struct OccupiedEntry<'a, K, V> {
    map: &'a mut VecMap<K, V>,
    at: usize,
}

pub struct VacantEntry<'a, K, V> {
    map: &'a mut VecMap<K, V>,
    at: usize,
    key: K,
}

impl<'a, K, V> OccupiedEntry<'a, K, V> {
    pub fn get(&self) -> &V {
        &self.map.entries[self.at].1
    }

    pub fn get_mut(&mut self) -> &mut V {
        &mut self.map.entries[self.at].1
    }

    pub fn into_mut(self) -> &'a mut V {
        &mut self.map.entries[self.at].1
    }

    pub fn insert(&mut self, value: V) -> V {
        std::mem::replace(self.get_mut(), value)
    }

    pub fn remove(self) -> V {
        self.map.entries.remove(self.at).1
    }
}

impl<'a, K, V> VacantEntry<'a, K, V> {
    pub fn insert(self, value: V) -> &'a mut V {
        self.map.entries.insert(self.at, (self.key, value));
        &mut self.map.entries[self.at].1
    }
}

impl<'a, K, V> Entry<'a, K, V> {
    pub fn or_insert(self, default: V) -> &'a mut V {
        self.or_insert_with(|| default)
    }

    pub fn or_insert_with(self, default: impl FnOnce() -> V) -> &'a mut V {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(default()),
        }
    }

    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }

    pub fn and_modify(mut self, f: impl FnOnce(&mut V)) -> Self {
        if let Entry::Occupied(e) = &mut self {
            f(e.get_mut());
        }
        self
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    /// As `collect` into a `BTreeMap`: a later duplicate key's value replaces an earlier one.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(items: I) -> Self {
        let mut entries: Vec<(K, V)> = items.into_iter().collect();
        if entries.windows(2).any(|w| w[0].0 >= w[1].0) {
            // Stable, so equal keys stay in arrival order and the last one's value wins below.
            entries.stable_sort_by(|a, b| a.0.cmp(&b.0));
            let mut kept: Vec<(K, V)> = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                match kept.last_mut() {
                    Some(last) if last.0 == k => last.1 = v,
                    _ => kept.push((k, v)),
                }
            }
            entries = kept;
        }
        VecMap { entries }
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for VecMap<K, V> {
    fn from(items: [(K, V); N]) -> Self {
        items.into_iter().collect()
    }
}

impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, items: I) {
        for (k, v) in items {
            self.insert(k, v);
        }
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, K, V> IntoIterator for &'a mut VecMap<K, V> {
    type Item = (&'a K, &'a mut V);
    type IntoIter = IterMut<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<K: Ord + Borrow<Q>, Q: Ord + ?Sized, V> std::ops::Index<&Q> for VecMap<K, V> {
    type Output = V;
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<K: PartialOrd, V: PartialOrd> PartialOrd for VecMap<K, V> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.entries.partial_cmp(&other.entries)
    }
}

impl<K: Ord, V: Ord> Ord for VecMap<K, V> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.entries.cmp(&other.entries)
    }
}

/// An ordered set: `BTreeSet`'s interface over a sorted vector.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VecSet<T> {
    items: Vec<T>,
}

impl<T> Default for VecSet<T> {
    fn default() -> Self {
        VecSet { items: Vec::new() }
    }
}

impl<T: fmt::Debug> fmt::Debug for VecSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<T> VecSet<T> {
    pub const fn new() -> Self {
        VecSet { items: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    pub fn first(&self) -> Option<&T> {
        self.items.first()
    }

    pub fn last(&self) -> Option<&T> {
        self.items.last()
    }

    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.items.retain(keep);
    }
}

impl<T: Ord> VecSet<T> {
    fn find<Q>(&self, item: &Q) -> Result<usize, usize>
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.items.binary_search_by(|t| t.borrow().cmp(item))
    }

    pub fn contains<Q>(&self, item: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(item).is_ok()
    }

    /// As `BTreeSet::insert`: false, and the set unchanged, if an equal item is there.
    pub fn insert(&mut self, item: T) -> bool {
        match self.find(&item) {
            Ok(_) => false,
            Err(i) => {
                self.items.insert(i, item);
                true
            }
        }
    }

    pub fn remove<Q>(&mut self, item: &Q) -> bool
    where
        T: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(item).ok().map(|i| self.items.remove(i)).is_some()
    }

    pub fn is_subset(&self, other: &VecSet<T>) -> bool {
        self.items.iter().all(|t| other.contains(t))
    }
}

impl<T: Ord> FromIterator<T> for VecSet<T> {
    /// As `collect` into a `BTreeSet`: the first of equal items is kept.
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut items: Vec<T> = items.into_iter().collect();
        if items.windows(2).any(|w| w[0] >= w[1]) {
            items.stable_sort();
            items.dedup();
        }
        VecSet { items }
    }
}

impl<T: Ord, const N: usize> From<[T; N]> for VecSet<T> {
    fn from(items: [T; N]) -> Self {
        items.into_iter().collect()
    }
}

impl<T: Ord> Extend<T> for VecSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        for t in items {
            self.insert(t);
        }
    }
}

impl<T> IntoIterator for VecSet<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a VecSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SplitMix64;
    use std::collections::{BTreeMap, BTreeSet};

    /// The same random operations on a `VecMap` and a `BTreeMap` return the same values and
    /// leave the same entries in the same order.
    #[test]
    fn behaves_as_a_btree_map_under_random_operations() {
        let mut rng = SplitMix64::new(11);
        for round in 0..50 {
            let mut ours: VecMap<u64, u64> = VecMap::new();
            let mut theirs: BTreeMap<u64, u64> = BTreeMap::new();
            for step in 0..300u64 {
                let k = rng.below(40);
                match rng.below(6) {
                    0 | 1 => assert_eq!(ours.insert(k, step), theirs.insert(k, step)),
                    2 => assert_eq!(ours.remove(&k), theirs.remove(&k)),
                    3 => {
                        *ours.entry(k).or_default() += step;
                        *theirs.entry(k).or_default() += step;
                    }
                    4 => {
                        ours.entry(k).and_modify(|v| *v *= 3).or_insert(step);
                        theirs.entry(k).and_modify(|v| *v *= 3).or_insert(step);
                    }
                    _ => {
                        let cut = rng.below(40);
                        ours.retain(|&k, v| k % 7 != cut % 7 || *v > step / 2);
                        theirs.retain(|&k, v| k % 7 != cut % 7 || *v > step / 2);
                    }
                }
                assert_eq!(ours.get(&k), theirs.get(&k), "round {round} step {step}");
                assert_eq!(ours.len(), theirs.len());
            }
            let a: Vec<_> = ours.iter().map(|(k, v)| (*k, *v)).collect();
            let b: Vec<_> = theirs.iter().map(|(k, v)| (*k, *v)).collect();
            assert_eq!(a, b, "round {round}");
        }
    }

    #[test]
    fn collects_as_a_btree_map_does() {
        let mut rng = SplitMix64::new(3);
        for len in [0usize, 1, 2, 5, 40, 300] {
            let pairs: Vec<(u64, u64)> = (0..len as u64).map(|i| (rng.below(20), i)).collect();
            let ours: VecMap<_, _> = pairs.iter().copied().collect();
            let theirs: BTreeMap<_, _> = pairs.iter().copied().collect();
            assert_eq!(ours.into_iter().collect::<Vec<_>>(), theirs.into_iter().collect::<Vec<_>>());
            let ours: VecSet<_> = pairs.iter().map(|p| p.0).collect();
            let theirs: BTreeSet<_> = pairs.iter().map(|p| p.0).collect();
            assert_eq!(ours.into_iter().collect::<Vec<_>>(), theirs.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn looks_up_borrowed_keys_and_keeps_the_first_key() {
        let mut m: VecMap<String, u32> = VecMap::new();
        m.insert("b".into(), 1);
        m.insert("a".into(), 2);
        assert_eq!(m.insert("b".into(), 3), Some(1));
        assert_eq!(m.get("b"), Some(&3));
        assert_eq!(m["a"], 2);
        assert!(m.contains_key("a") && !m.contains_key("c"));
        assert_eq!(m.keys().map(String::as_str).collect::<Vec<_>>(), ["a", "b"]);
        let mut s: VecSet<&str> = ["z", "x", "y", "x"].into_iter().collect();
        assert!(!s.insert("y"));
        assert!(s.insert("w"));
        assert!(s.remove("z"));
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), ["w", "x", "y"]);
    }
}
