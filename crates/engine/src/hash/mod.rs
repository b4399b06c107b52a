//! Hash functions the brokers use, bit for bit.

pub mod md5;
pub mod murmur3;

/// Java `String.hashCode()`: over UTF-16 code units with 32-bit wrap-around.
pub fn java_string_hash(s: &str) -> i32 {
    let mut h: i32 = 0;
    for unit in s.encode_utf16() {
        h = h.wrapping_mul(31).wrapping_add(unit as i32);
    }
    h
}

/// FNV-1a, 64 bit: the digest of event logs (portable, no dependencies).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a64_extend(FNV1A64_OFFSET, bytes)
}

/// FNV-1a's starting state: `fnv1a64_extend(FNV1A64_OFFSET, a ++ b)` =
/// `fnv1a64_extend(fnv1a64_extend(FNV1A64_OFFSET, a), b)`, so long texts hash in pieces.
pub const FNV1A64_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Continues an FNV-1a hash over more bytes.
pub fn fnv1a64_extend(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// FNV-1a, 64 bit, fed in pieces: the same digest as `fnv1a64` over the concatenation.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a64(u64);

impl Default for Fnv1a64 {
    fn default() -> Self {
        Fnv1a64::new()
    }
}

impl Fnv1a64 {
    pub fn new() -> Fnv1a64 {
        Fnv1a64(FNV1A64_OFFSET)
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.0 = fnv1a64_extend(self.0, bytes);
    }

    pub fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_matches_known_values() {
        assert_eq!(java_string_hash("TagA"), 2598919);
        assert_eq!(java_string_hash("Aa"), java_string_hash("BB"));
        assert_eq!(java_string_hash(""), 0);
    }
}
