//! A column that grows in fixed-size chunks, so appending never moves what is already stored.
//!
//! A vector that doubles copies itself as it grows (always in wasm, where realloc cannot remap
//! pages) and touches about twice the memory it ends with. The log's columns and the consumption
//! records hold millions of entries in a long run: in a browser seek over 1 M messages their
//! reallocations alone took 5% of the time.
//!
//! The first chunk grows like a vector up to 1/64 of a chunk (a small run stays small), then takes
//! its full size; every later chunk is allocated once, full size. Dropping a prefix (log compaction) frees whole chunks.

use std::ops::Index;

/// A chunk holds 2^20 entries (12 MB of log slots): in wasm, chunks of 2^16 made the throughput
/// benchmark 10% slower than plain vectors, chunks of 2^20 made it 10% faster, and both held
/// about a third less memory at 5 M messages (Node's WASI, 512 and 551 MB against 817).
pub const CHUNK_BITS: u32 = 20;

/// `BITS` sets the chunk size, 2^`BITS` entries (the tests use small chunks).
#[derive(Clone, Debug)]
pub struct Chunked<T, const BITS: u32 = CHUNK_BITS> {
    /// Every chunk but the last holds exactly 2^`BITS` entries.
    chunks: Vec<Vec<T>>,
    /// Entries at the front of the first chunk that `drop_front` dropped (kept until their
    /// whole chunk goes).
    front: usize,
    len: usize,
}

impl<T, const BITS: u32> Default for Chunked<T, BITS> {
    fn default() -> Self {
        Chunked { chunks: Vec::new(), front: 0, len: 0 }
    }
}

impl<T, const BITS: u32> Chunked<T, BITS> {
    const CHUNK: usize = 1 << BITS;
    const MASK: usize = Self::CHUNK - 1;
    /// Entries up to which the first chunk grows by doubling (a small run stays small).
    const SMALL: usize = Self::CHUNK >> 6;

    pub fn push(&mut self, value: T) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < Self::CHUNK => {
                // The first chunk stops doubling once it is past small: it takes its full size in
                // one step, so it is copied once more instead of ten more times (a wasm realloc
                // copies: these doublings were 2% of the wasm throughput benchmark).
                if last.len() == last.capacity() && last.len() >= Self::SMALL {
                    last.reserve_exact(Self::CHUNK - last.len());
                }
                last.push(value)
            }
            _ => {
                let mut chunk = if self.chunks.is_empty() { Vec::new() } else { Vec::with_capacity(Self::CHUNK) };
                chunk.push(value);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        let p = i + self.front;
        self.chunks.get(p >> BITS)?.get(p & Self::MASK)
    }

    pub fn last(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// The entries from `from` on, in order.
    pub fn iter_from(&self, from: usize) -> impl Iterator<Item = &T> + '_ {
        let p = from.min(self.len) + self.front;
        let (chunk, offset) = (p >> BITS, p & Self::MASK);
        self.chunks
            .iter()
            .skip(chunk)
            .enumerate()
            .flat_map(move |(k, c)| c[if k == 0 { offset.min(c.len()) } else { 0 }..].iter())
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.iter_from(0)
    }

    /// Drops the first `n` entries (all of them if fewer); the chunks they filled are freed.
    pub fn drop_front(&mut self, n: usize) {
        let n = n.min(self.len);
        self.len -= n;
        self.front += n;
        let whole = (self.front >> BITS).min(self.chunks.len());
        self.chunks.drain(..whole);
        self.front -= whole << BITS;
        if self.len == 0 {
            self.chunks.clear();
            self.front = 0;
        }
    }

    /// Bytes the entries take (the models' memory estimates count entries, not room).
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
}

impl<T, const BITS: u32> Index<usize> for Chunked<T, BITS> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(v) => v,
            None => panic!("index {i} out of range for a column of {}", self.len),
        }
    }
}

impl<'a, T, const BITS: u32> IntoIterator for &'a Chunked<T, BITS> {
    type Item = &'a T;
    type IntoIter = Box<dyn Iterator<Item = &'a T> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks of 16 entries in the tests, so that runs cross many chunk boundaries.
    const CHUNK: usize = 16;
    type Small<T> = Chunked<T, 4>;

    /// Pushes and front drops across chunk boundaries, against a plain vector.
    #[test]
    fn reads_as_a_vector_would_across_chunks_and_drops() {
        let mut c = Small::default();
        let mut v: Vec<u64> = Vec::new();
        let mut rng = crate::SplitMix64::new(5);
        let mut next = 0u64;
        for round in 0..300 {
            for _ in 0..rng.below(3 * CHUNK as u64 / 2) {
                c.push(next);
                v.push(next);
                next += 1;
            }
            if round % 3 == 2 {
                let n = rng.below(v.len() as u64 + 2) as usize;
                c.drop_front(n);
                v.drain(..n.min(v.len()));
            }
            assert_eq!(c.len(), v.len());
            assert_eq!(c.last(), v.last());
            for i in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, v.len().saturating_sub(1), v.len(), v.len() + 1] {
                assert_eq!(c.get(i), v.get(i), "round {round} index {i}");
            }
            let from = rng.below(v.len() as u64 + 1) as usize;
            assert!(c.iter_from(from).eq(v[from..].iter()), "round {round} from {from}");
            assert!(c.chunks.len() <= v.len().div_ceil(CHUNK) + 1);
        }
        assert!(c.iter().eq(v.iter()));
        assert!((&c).into_iter().eq(v.iter()));
    }

    #[test]
    fn a_small_column_takes_small_room() {
        let mut c: Chunked<u32> = Chunked::default();
        for i in 0..10u32 {
            c.push(i);
        }
        assert!(c.chunks[0].capacity() < 1024, "{}", c.chunks[0].capacity());
        c.drop_front(10);
        assert!(c.is_empty() && c.chunks.is_empty());
        c.push(7);
        assert_eq!((c.get(0), c.len()), (Some(&7), 1));
    }
}
