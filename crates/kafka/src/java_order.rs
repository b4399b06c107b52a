//! Java ordering rules that decide Kafka assignor outputs (shared/specs/kafka.md §0.2, §0.3).
//!
//! Several upstream algorithms iterate a `java.util.HashMap`/`HashSet`, so their results depend on
//! Java's iteration order: buckets ascending (`(h ^ (h >>> 16)) & (capacity - 1)`), entries of one
//! bucket in insertion order. Resizes split buckets without reordering them and tables never shrink,
//! so the order is fully described by the final capacity and each live entry's last insertion.
//! Treeified bins (a bucket of 9+ entries in a table of 64+ slots) are not emulated; below 64 slots
//! such a bucket forces a resize, which is emulated.

use mqviz_engine::sort::StableSort;
use std::cmp::Ordering;

pub use mqviz_engine::hash::java_string_hash;

const DEFAULT_CAPACITY: usize = 16;
const MIN_TREEIFY_CAPACITY: usize = 64;
const TREEIFY_THRESHOLD: u32 = 8;
const MAXIMUM_CAPACITY: usize = 1 << 30;

/// Java `String.compareTo`: UTF-16 code units, lexicographically.
pub fn java_string_cmp(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let common = x.iter().zip(y).take_while(|(p, q)| p == q).count();
    // Byte order equals UTF-16 order unless the first difference sits in a non-ASCII character.
    if x.get(common).is_none_or(|c| c.is_ascii()) && y.get(common).is_none_or(|c| c.is_ascii()) {
        return x.cmp(y);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Kafka `TopicPartition.hashCode()`: `31 * (31 + partition) + topic.hashCode()`.
pub fn topic_partition_hash(topic_hash: i32, partition: i32) -> i32 {
    31i32.wrapping_mul(31i32.wrapping_add(partition)).wrapping_add(topic_hash)
}

/// `HashMap.hash()`: the high half folded into the low half.
pub fn spread(hash: i32) -> u32 {
    let h = hash as u32;
    h ^ (h >> 16)
}

/// `HashMap.tableSizeFor`: the smallest power of two `>= capacity` (1 for 0).
pub fn table_size_for(capacity: usize) -> usize {
    capacity.max(1).next_power_of_two().min(MAXIMUM_CAPACITY)
}

/// How a Java hash table was constructed; this fixes its first capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableInit {
    /// `new HashMap<>()` / `new HashSet<>()`: 16 slots on the first insert.
    Default,
    /// `new HashMap<>(n)` / `new HashSet<>(n)`.
    WithCapacity(usize),
    /// `new HashSet<>(collection)` of `n` elements: `max((int) (n / .75f) + 1, 16)` slots.
    CopyOfCollection(usize),
    /// `new HashMap<>(map)` / `putAll` into an empty map of `n` entries: room for `n / .75 + 1`.
    CopyOfMap(usize),
}

/// Capacity and resize threshold of a Java hash table, grown as entries are added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableShape {
    capacity: usize,
    threshold: usize,
}

fn float_threshold(capacity: usize) -> usize {
    (capacity as f32 * 0.75) as usize
}

impl TableShape {
    pub fn new(init: TableInit) -> TableShape {
        let capacity = match init {
            TableInit::Default => DEFAULT_CAPACITY,
            TableInit::WithCapacity(n) => table_size_for(n),
            TableInit::CopyOfCollection(n) => table_size_for(((n as f32 / 0.75) as usize + 1).max(DEFAULT_CAPACITY)),
            TableInit::CopyOfMap(n) => table_size_for((n as f32 / 0.75 + 1.0) as usize),
        };
        TableShape { capacity, threshold: float_threshold(capacity) }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The slot of a spread hash.
    pub fn bucket(&self, spread_hash: u32) -> usize {
        spread_hash as usize & (self.capacity - 1)
    }

    fn double(&mut self) {
        if self.capacity >= MAXIMUM_CAPACITY {
            return;
        }
        let old = self.capacity;
        self.capacity *= 2;
        self.threshold = if old >= DEFAULT_CAPACITY { self.threshold * 2 } else { float_threshold(self.capacity) };
    }

    /// Applies the growth rules of `putVal` after a new entry was linked: `bucket_len_before` is
    /// how many entries its bucket held before, `size_after` the table size with it.
    fn after_insert(&mut self, bucket_len_before: u32, size_after: usize) -> bool {
        let mut resized = false;
        if bucket_len_before >= TREEIFY_THRESHOLD && self.capacity < MIN_TREEIFY_CAPACITY {
            self.double();
            resized = true;
        }
        if size_after > self.threshold {
            self.double();
            resized = true;
        }
        resized
    }
}

/// Java iteration order of distinct keys inserted once each, in the given order, into a table
/// created with `init`. Takes `HashMap.hash` inputs (`hashCode()` values); returns indices.
pub fn iteration_order(hash_codes: &[i32], init: TableInit) -> Vec<usize> {
    let spread_hashes: Vec<u32> = hash_codes.iter().map(|h| spread(*h)).collect();
    let mut shape = TableShape::new(init);
    let mut bucket_len = vec![0u32; shape.capacity];
    for (i, h) in spread_hashes.iter().enumerate() {
        let b = shape.bucket(*h);
        let before = bucket_len[b];
        bucket_len[b] += 1;
        if shape.after_insert(before, i + 1) {
            bucket_len = vec![0; shape.capacity];
            for h in &spread_hashes[..=i] {
                bucket_len[shape.bucket(*h)] += 1;
            }
        }
    }
    let mut order: Vec<usize> = (0..hash_codes.len()).collect();
    order.stable_sort_by_key(|&i| (shape.bucket(spread_hashes[i]), i));
    order
}

/// A `java.util.HashSet` that only needs insertion, removal and its first element in iteration
/// order (what `PartitionMovements` asks of it). Small sets: operations scan the live entries.
#[derive(Clone, Debug)]
pub struct JavaHashSet<K> {
    shape: TableShape,
    entries: Vec<SetEntry<K>>,
    next_seq: u64,
}

#[derive(Clone, Debug)]
struct SetEntry<K> {
    key: K,
    spread_hash: u32,
    seq: u64,
}

impl<K: PartialEq + Clone> JavaHashSet<K> {
    pub fn new(init: TableInit) -> Self {
        JavaHashSet { shape: TableShape::new(init), entries: Vec::new(), next_seq: 0 }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn contains(&self, key: &K) -> bool {
        self.entries.iter().any(|e| e.key == *key)
    }

    /// `add`: false if already present (its position is kept).
    pub fn insert(&mut self, key: K, hash_code: i32) -> bool {
        if self.contains(&key) {
            return false;
        }
        let spread_hash = spread(hash_code);
        let bucket = self.shape.bucket(spread_hash);
        let before = self.entries.iter().filter(|e| self.shape.bucket(e.spread_hash) == bucket).count() as u32;
        self.entries.push(SetEntry { key, spread_hash, seq: self.next_seq });
        self.next_seq += 1;
        self.shape.after_insert(before, self.entries.len());
        true
    }

    pub fn remove(&mut self, key: &K) -> bool {
        match self.entries.iter().position(|e| e.key == *key) {
            Some(i) => {
                self.entries.remove(i);
                true
            }
            None => false,
        }
    }

    /// `iterator().next()`.
    pub fn first(&self) -> Option<&K> {
        self.entries.iter().min_by_key(|e| (self.shape.bucket(e.spread_hash), e.seq)).map(|e| &e.key)
    }

    /// All elements in Java iteration order.
    pub fn iter_ordered(&self) -> Vec<&K> {
        let mut v: Vec<&SetEntry<K>> = self.entries.iter().collect();
        v.stable_sort_by_key(|e| (self.shape.bucket(e.spread_hash), e.seq));
        v.into_iter().map(|e| &e.key).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_compare_follows_utf16() {
        assert_eq!(java_string_cmp("a", "b"), Ordering::Less);
        assert_eq!(java_string_cmp("ab", "a"), Ordering::Greater);
        // U+FF5E sorts after U+1F600 in UTF-8 but before it in UTF-16 (surrogates are 0xD83D...).
        assert_eq!(java_string_cmp("\u{1F600}", "\u{FF5E}"), Ordering::Less);
        assert_eq!("\u{1F600}".cmp("\u{FF5E}"), Ordering::Greater);
    }

    #[test]
    fn small_integers_iterate_by_bucket() {
        // new HashSet<>(List.of(5, 20)): 16 slots, 20 lands in bucket 4 before 5.
        let order = iteration_order(&[5, 20], TableInit::CopyOfCollection(2));
        assert_eq!(order, vec![1, 0]);
        // 12 elements copied: (int)(12/.75f)+1 = 17 -> 32 slots, so 20 stays after 5.
        let hashes: Vec<i32> = vec![5, 20, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11];
        let order = iteration_order(&hashes, TableInit::CopyOfCollection(12));
        assert_eq!(order[..4], [2, 3, 4, 5]);
        assert!(order.iter().position(|&i| i == 0) < order.iter().position(|&i| i == 1));
    }

    #[test]
    fn default_map_resizes_past_twelve_entries() {
        let hashes: Vec<i32> = (0..13).map(|i| i * 16).collect();
        // 13 entries -> 32 slots: multiples of 32 (bucket 0) first, then the odd multiples of 16.
        let order = iteration_order(&hashes, TableInit::Default);
        assert_eq!(order, vec![0, 2, 4, 6, 8, 10, 12, 1, 3, 5, 7, 9, 11]);
    }

    #[test]
    fn crowded_bucket_resizes_small_table() {
        // Nine keys in one bucket of a 16-slot table force a resize to 32 slots.
        let hashes: Vec<i32> = (0..9).map(|i| i * 16).collect();
        let order = iteration_order(&hashes, TableInit::Default);
        assert_eq!(order, vec![0, 2, 4, 6, 8, 1, 3, 5, 7]);
    }

    #[test]
    fn hash_set_first_tracks_removals() {
        let mut s = JavaHashSet::new(TableInit::Default);
        s.insert("b", 2);
        s.insert("a", 1);
        s.insert("c", 17);
        assert_eq!(s.first(), Some(&"a"));
        s.remove(&"a");
        assert_eq!(s.first(), Some(&"c"));
        assert_eq!(s.iter_ordered(), vec![&"c", &"b"]);
    }

    #[test]
    fn topic_partition_hash_matches_java() {
        // new TopicPartition("t", 0).hashCode() == 31 * 31 + "t".hashCode() == 961 + 116.
        assert_eq!(topic_partition_hash(java_string_hash("t"), 0), 1077);
    }
}
