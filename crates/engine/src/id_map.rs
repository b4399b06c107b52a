//! A map from small ascending ids (consumer ids, attachment ids) to values, kept as two sorted
//! vectors. It iterates in key order like `BTreeMap`, so swapping one for the other changes no
//! event log, but a lookup is one binary search over contiguous keys: the dispatchers look a
//! consumer up once per entry, and a B-tree's pointer chasing was a sixth of a Key_Shared run.
//!
//! Ids are handed out in increasing order, so an insert is almost always a push; removals are
//! rare (a consumer leaves) and shift the tail. While the keys are contiguous (a group that
//! subscribed together), a lookup is a subtraction.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdMap<V> {
    keys: Vec<u64>,
    values: Vec<V>,
    /// The keys are `first..first + len` with no gap.
    contiguous: bool,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        IdMap { keys: Vec::new(), values: Vec::new(), contiguous: true }
    }
}

impl<V> IdMap<V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn slot(&self, key: u64) -> Result<usize, usize> {
        let Some(&first) = self.keys.first() else { return Err(0) };
        if self.contiguous {
            return match key.checked_sub(first) {
                None => Err(0),
                Some(i) if i < self.keys.len() as u64 => Ok(i as usize),
                Some(_) => Err(self.keys.len()),
            };
        }
        // The newest id needs no search.
        match self.keys.last() {
            Some(&last) if last == key => Ok(self.keys.len() - 1),
            Some(&last) if last < key => Err(self.keys.len()),
            _ => self.keys.binary_search(&key),
        }
    }

    /// Sorted distinct keys are contiguous exactly when their span equals their count.
    fn update_contiguous(&mut self) {
        self.contiguous = match (self.keys.first(), self.keys.last()) {
            (Some(&first), Some(&last)) => last - first + 1 == self.keys.len() as u64,
            _ => true,
        };
    }

    pub fn contains_key(&self, key: &u64) -> bool {
        self.slot(*key).is_ok()
    }

    pub fn get(&self, key: &u64) -> Option<&V> {
        self.slot(*key).ok().map(|i| &self.values[i])
    }

    pub fn get_mut(&mut self, key: &u64) -> Option<&mut V> {
        self.slot(*key).ok().map(|i| &mut self.values[i])
    }

    /// Inserts or replaces; returns the value replaced.
    pub fn insert(&mut self, key: u64, value: V) -> Option<V> {
        match self.slot(key) {
            Ok(i) => Some(std::mem::replace(&mut self.values[i], value)),
            Err(i) => {
                self.keys.insert(i, key);
                self.values.insert(i, value);
                self.update_contiguous();
                None
            }
        }
    }

    pub fn remove(&mut self, key: &u64) -> Option<V> {
        let i = self.slot(*key).ok()?;
        self.keys.remove(i);
        let value = self.values.remove(i);
        self.update_contiguous();
        Some(value)
    }

    pub fn clear(&mut self) {
        self.keys.clear();
        self.values.clear();
        self.contiguous = true;
    }

    /// Keeps the entries `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&u64, &mut V) -> bool) {
        let mut write = 0;
        for read in 0..self.keys.len() {
            if keep(&self.keys[read], &mut self.values[read]) {
                self.keys.swap(write, read);
                self.values.swap(write, read);
                write += 1;
            }
        }
        self.keys.truncate(write);
        self.values.truncate(write);
        self.update_contiguous();
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &u64> + ExactSizeIterator + Clone {
        self.keys.iter()
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + Clone {
        self.values.iter()
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.values.iter_mut()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&u64, &V)> + ExactSizeIterator + Clone {
        self.keys.iter().zip(self.values.iter())
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&u64, &mut V)> + ExactSizeIterator {
        self.keys.iter().zip(self.values.iter_mut())
    }

    /// The entry with the smallest key.
    pub fn first_key_value(&self) -> Option<(&u64, &V)> {
        Some((self.keys.first()?, self.values.first()?))
    }
}

impl<'a, V> IntoIterator for &'a IdMap<V> {
    type Item = (&'a u64, &'a V);
    type IntoIter = std::iter::Zip<std::slice::Iter<'a, u64>, std::slice::Iter<'a, V>>;

    fn into_iter(self) -> Self::IntoIter {
        self.keys.iter().zip(self.values.iter())
    }
}

impl<V> FromIterator<(u64, V)> for IdMap<V> {
    fn from_iter<I: IntoIterator<Item = (u64, V)>>(iter: I) -> Self {
        let mut m = IdMap::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::IdMap;
    use std::collections::BTreeMap;

    /// Random inserts, removals and retains agree with a `BTreeMap` in content and order.
    #[test]
    fn behaves_like_a_btreemap() {
        let mut rng = crate::SplitMix64::new(7);
        let (mut ours, mut theirs) = (IdMap::new(), BTreeMap::new());
        for step in 0..5_000u64 {
            let key = rng.next_u64() % 64;
            match rng.next_u64() % 5 {
                0 | 1 => assert_eq!(ours.insert(key, step), theirs.insert(key, step)),
                2 => assert_eq!(ours.remove(&key), theirs.remove(&key)),
                3 => {
                    if let (Some(a), Some(b)) = (ours.get_mut(&key), theirs.get_mut(&key)) {
                        *a += 1;
                        *b += 1;
                    }
                }
                _ => {
                    let odd = step % 2;
                    ours.retain(|k, _| k % 2 != odd || step % 7 != 0);
                    theirs.retain(|k, _| k % 2 != odd || step % 7 != 0);
                }
            }
            assert_eq!(ours.contains_key(&key), theirs.contains_key(&key));
            assert_eq!(ours.get(&key), theirs.get(&key));
        }
        assert!(ours.iter().map(|(k, v)| (*k, *v)).eq(theirs.iter().map(|(k, v)| (*k, *v))));
        assert_eq!(ours.len(), theirs.len());
    }

    /// A group that subscribed together (contiguous ids), then one leaves and one joins.
    #[test]
    fn contiguous_ids_and_their_gaps() {
        let mut m: IdMap<u64> = (10..20).map(|k| (k, k * 2)).collect();
        assert!(m.contiguous);
        assert_eq!((m.get(&9), m.get(&10), m.get(&19), m.get(&20)), (None, Some(&20), Some(&38), None));
        m.remove(&10);
        assert!(m.contiguous, "removing the first keeps 11..20 contiguous");
        m.remove(&15);
        assert!(!m.contiguous);
        assert_eq!((m.get(&14), m.get(&15), m.get(&16)), (Some(&28), None, Some(&32)));
        m.insert(15, 0);
        assert!(m.contiguous);
        m.insert(25, 1);
        assert_eq!((m.get(&20), m.get(&25)), (None, Some(&1)));
        m.insert(5, 2);
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), vec![5, 11, 12, 13, 14, 15, 16, 17, 18, 19, 25]);
    }
}
