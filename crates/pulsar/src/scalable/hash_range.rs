//! `HashRange`: an inclusive `[start, end]` in the 16-bit segment hash space (spec §4.1, §8 adjacency).

use std::fmt;

pub const MIN_HASH: u32 = 0x0000;
pub const MAX_HASH: u32 = 0xFFFF;

/// Ordered by start, then end (the order `computeAssignment` sorts segments by).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HashRange {
    pub start: u32,
    pub end: u32,
}

/// Ranges upstream refuses to build or split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HashRangeError {
    OutOfBounds { start: i64, end: i64 },
    TooSmallToSplit { size: u32 },
    NotAdjacent { a: HashRange, b: HashRange },
}

impl fmt::Display for HashRangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HashRangeError::OutOfBounds { start, end } => {
                write!(
                    f,
                    "IllegalArgumentException: hash range [{start}, {end}] is not within [0x0000, 0xFFFF] with end >= start"
                )
            }
            HashRangeError::TooSmallToSplit { size } => write!(f, "IllegalStateException: Cannot split range of size {size}"),
            HashRangeError::NotAdjacent { a, b } => write!(f, "IllegalArgumentException: Ranges are not adjacent: {a} and {b}"),
        }
    }
}

impl HashRange {
    pub fn new(start: i64, end: i64) -> Result<HashRange, HashRangeError> {
        let in_space = |v: i64| (i64::from(MIN_HASH)..=i64::from(MAX_HASH)).contains(&v);
        if !in_space(start) || !in_space(end) || end < start {
            return Err(HashRangeError::OutOfBounds { start, end });
        }
        Ok(HashRange { start: start as u32, end: end as u32 })
    }

    pub fn full() -> HashRange {
        HashRange { start: MIN_HASH, end: MAX_HASH }
    }

    pub fn contains(&self, hash: u32) -> bool {
        self.start <= hash && hash <= self.end
    }

    pub fn size(&self) -> u32 {
        self.end - self.start + 1
    }

    /// Adjacency is symmetric: either range may come first.
    pub fn is_adjacent_to(&self, other: &HashRange) -> bool {
        self.end + 1 == other.start || other.end + 1 == self.start
    }

    /// `[start, mid]` and `[mid + 1, end]` with `mid = start + (end - start) / 2`.
    pub fn split(&self) -> Result<(HashRange, HashRange), HashRangeError> {
        if self.size() < 2 {
            return Err(HashRangeError::TooSmallToSplit { size: self.size() });
        }
        let mid = self.start + (self.end - self.start) / 2;
        Ok((HashRange { start: self.start, end: mid }, HashRange { start: mid + 1, end: self.end }))
    }

    /// The union of two adjacent ranges, in either order.
    pub fn merge(&self, other: &HashRange) -> Result<HashRange, HashRangeError> {
        if self.end + 1 == other.start {
            Ok(HashRange { start: self.start, end: other.end })
        } else if other.end + 1 == self.start {
            Ok(HashRange { start: other.start, end: self.end })
        } else {
            Err(HashRangeError::NotAdjacent { a: *self, b: *other })
        }
    }

    /// `%04x-%04x`, as in segment topic names.
    pub fn hex(&self) -> String {
        format!("{:04x}-{:04x}", self.start, self.end)
    }
}

impl fmt::Display for HashRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{:04x}, {:04x}]", self.start, self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_merge_adjacency() {
        let (a, b) = HashRange::full().split().unwrap();
        assert_eq!((a.hex(), b.hex()), ("0000-7fff".to_string(), "8000-ffff".to_string()));
        assert!(a.is_adjacent_to(&b) && b.is_adjacent_to(&a));
        assert_eq!(b.merge(&a).unwrap(), HashRange::full());
        assert!(HashRange::new(3, 3).unwrap().split().is_err());
        assert!(HashRange::new(0, 65_536).is_err());
        assert!(HashRange::new(5, 4).is_err());
        assert_eq!(a.to_string(), "[0000, 7fff]");
        assert!(HashRange { start: 0, end: 0x1fff } < HashRange { start: 0, end: 0x3fff });
    }
}
