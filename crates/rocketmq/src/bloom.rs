//! RocketMQ's consumer-group bloom filter (`filter/util/BloomFilter.java`, `BitsArray.java`),
//! the optional SQL92 pre-filter over consume-queue bitmaps (shared/specs/rocketmq.md §9).
//!
//! `createByFn(f, n)`: `k = ceil(log_0.5(f/100))`, `m = ceil(n * log2(100/f) * log2(e))` rounded
//! up to a multiple of 8 (broker default f = 20, n = 32: k = 3, m = 112). A key (`group#topic`)
//! maps to k positions by double hashing of Guava's murmur3_128 `asLong()`.

use std::fmt;

use mqviz_engine::hash::murmur3::guava_murmur3_128_as_long;

/// An upstream `IllegalArgumentException` (or index error), with its Java-style text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomError(pub String);

impl fmt::Display for BloomError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BloomError {}

fn illegal(msg: impl fmt::Display) -> BloomError {
    BloomError(format!("IllegalArgumentException: {msg}"))
}

/// `BitsArray`: bit `i` lives in byte `i / 8` under mask `1 << (i % 8)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitsArray {
    bytes: Vec<u8>,
    bit_length: usize,
}

impl BitsArray {
    /// All-zero array of `bit_length` bits (`ceil(bit_length / 8)` bytes).
    pub fn create(bit_length: usize) -> Self {
        BitsArray { bytes: vec![0; bit_length.div_ceil(8)], bit_length }
    }

    pub fn bit_length(&self) -> usize {
        self.bit_length
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn check(&self, pos: i64) -> Result<usize, BloomError> {
        if pos < 0 || pos >= self.bit_length as i64 {
            return Err(illegal(format!("Illegal bit pos: {pos}, bit length: {}", self.bit_length)));
        }
        Ok(pos as usize)
    }

    pub fn set_bit(&mut self, pos: i64, value: bool) -> Result<(), BloomError> {
        let p = self.check(pos)?;
        let mask = 1u8 << (p % 8);
        if value {
            self.bytes[p / 8] |= mask;
        } else {
            self.bytes[p / 8] &= !mask;
        }
        Ok(())
    }

    pub fn get_bit(&self, pos: i64) -> Result<bool, BloomError> {
        let p = self.check(pos)?;
        Ok(self.bytes[p / 8] & (1u8 << (p % 8)) != 0)
    }

    /// The bytes in lowercase hex.
    pub fn to_hex(&self) -> String {
        self.bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// `BloomFilterData`: the positions of one key, and the filter size they belong to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilterData {
    pub bit_pos: Vec<i32>,
    pub bit_num: i32,
}

/// `BloomFilter`, parameterised by error rate `f` (percent) and expected key count `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BloomFilter {
    f: i32,
    n: i32,
    k: i32,
    m: i32,
}

/// `log_base(x)` the way upstream computes it (`Math.log(x) / Math.log(base)`).
fn log_mn(base: f64, x: f64) -> f64 {
    x.ln() / base.ln()
}

impl BloomFilter {
    /// `BloomFilter.createByFn(f, n)`. Requires `1 <= f < 100` and `n >= 1`.
    pub fn create_by_fn(f: i32, n: i32) -> Result<Self, BloomError> {
        if !(1..100).contains(&f) {
            return Err(illegal("f must be greater or equal than 1 and less than 100"));
        }
        if n < 1 {
            return Err(illegal("n must be greater than 0"));
        }
        let error_rate = f64::from(f) / 100.0;
        // Java's (int) cast of a double saturates, as Rust's `as` does.
        let k = log_mn(0.5, error_rate).ceil() as i32;
        if k < 1 {
            return Err(illegal("Hash function num is less than 1, maybe you should change the value of error rate or bit num!"));
        }
        let m = (f64::from(n) * log_mn(2.0, 1.0 / error_rate) * log_mn(2.0, std::f64::consts::E)).ceil() as i32;
        let m = (8.0 * (f64::from(m) / 8.0).ceil()) as i32;
        Ok(BloomFilter { f, n, k, m })
    }

    pub fn f(&self) -> i32 {
        self.f
    }

    pub fn n(&self) -> i32 {
        self.n
    }

    /// Number of hash functions.
    pub fn k(&self) -> i32 {
        self.k
    }

    /// Number of bits.
    pub fn m(&self) -> i32 {
        self.m
    }

    /// `calcBitPositions(key)`: `h = murmur3_128(utf8 key).asLong()`, `h1 = (int) h`,
    /// `h2 = (int) (h >>> 32)`; for i in 1..=k: `c = h1 + i*h2` (int arithmetic), flipped with `~`
    /// when negative, position `c % m`.
    pub fn calc_bit_positions(&self, key: &str) -> Vec<i32> {
        let h = guava_murmur3_128_as_long(key);
        let h1 = h as i32;
        let h2 = ((h as u64) >> 32) as i32;
        (1..=self.k)
            .map(|i| {
                let mut c = h1.wrapping_add(i.wrapping_mul(h2));
                if c < 0 {
                    c = !c;
                }
                c % self.m
            })
            .collect()
    }

    /// `generate(key)`.
    pub fn generate(&self, key: &str) -> BloomFilterData {
        BloomFilterData { bit_pos: self.calc_bit_positions(key), bit_num: self.m }
    }

    /// `isValid(data)`: sized for this filter.
    pub fn is_valid(&self, data: &BloomFilterData) -> bool {
        data.bit_num == self.m && data.bit_pos.len() == self.k as usize
    }

    fn check(&self, bits: &BitsArray) -> Result<(), BloomError> {
        if bits.bit_length() != self.m as usize {
            return Err(illegal(format!("Length({}) of bits in BitsArray is not equal to {}!", bits.bit_length(), self.m)));
        }
        Ok(())
    }

    /// `hashTo(key, bits)`: sets the key's positions.
    pub fn hash_to(&self, key: &str, bits: &mut BitsArray) -> Result<(), BloomError> {
        self.hash_positions_to(&self.calc_bit_positions(key), bits)
    }

    /// `hashTo(int[] positions, bits)`.
    pub fn hash_positions_to(&self, positions: &[i32], bits: &mut BitsArray) -> Result<(), BloomError> {
        self.check(bits)?;
        for &p in positions {
            bits.set_bit(i64::from(p), true)?;
        }
        Ok(())
    }

    /// `isHit(int[] positions, bits)`: all positions set.
    pub fn is_hit(&self, positions: &[i32], bits: &BitsArray) -> Result<bool, BloomError> {
        self.check(bits)?;
        if positions.is_empty() {
            return Err(BloomError("ArrayIndexOutOfBoundsException: Index 0 out of bounds for length 0".into()));
        }
        let mut hit = true;
        for &p in positions {
            hit &= bits.get_bit(i64::from(p))?;
        }
        Ok(hit)
    }

    /// `isHit(key, bits)`.
    pub fn is_hit_key(&self, key: &str, bits: &BitsArray) -> Result<bool, BloomError> {
        self.is_hit(&self.calc_bit_positions(key), bits)
    }

    /// An all-zero bitmap of this filter's size.
    pub fn new_bitmap(&self) -> BitsArray {
        BitsArray::create(self.m.max(0) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_defaults() {
        let bf = BloomFilter::create_by_fn(20, 32).unwrap();
        assert_eq!((bf.k(), bf.m()), (3, 112));
        assert_eq!(bf.calc_bit_positions("CID_0#topic0"), vec![80, 66, 42]);
        assert_eq!(bf.calc_bit_positions(""), vec![0, 0, 0]);
        let mut bits = bf.new_bitmap();
        bf.hash_to("GID_A#TopicA", &mut bits).unwrap();
        assert!(bf.is_hit_key("GID_A#TopicA", &bits).unwrap());
        assert!(bf.is_valid(&bf.generate("x")));
    }

    #[test]
    fn bits_array_layout_and_errors() {
        let mut b = BitsArray::create(12);
        assert_eq!(b.bytes().len(), 2);
        b.set_bit(0, true).unwrap();
        b.set_bit(9, true).unwrap();
        assert_eq!(b.to_hex(), "0102");
        assert!(b.get_bit(9).unwrap());
        b.set_bit(9, false).unwrap();
        assert!(!b.get_bit(9).unwrap());
        assert!(b.set_bit(12, true).is_err());
        assert!(b.get_bit(-1).is_err());
        let bf = BloomFilter::create_by_fn(20, 32).unwrap();
        assert!(bf.hash_to("x", &mut b).is_err(), "wrong size");
        assert!(BloomFilter::create_by_fn(0, 32).is_err());
        assert!(BloomFilter::create_by_fn(100, 32).is_err());
        assert!(BloomFilter::create_by_fn(20, 0).is_err());
        let big = BloomFilter::create_by_fn(1, i32::MAX).unwrap();
        assert_eq!(big.m(), i32::MAX, "saturating int casts, as in Java");
    }
}
