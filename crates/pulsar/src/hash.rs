//! Pulsar's hash primitives, bit for bit (spec §0.2, §1.4.1, §3, §4.3).
//!
//! Every hash that decides an outcome (partition, sticky-key slot, ring point, segment) goes
//! through this file so the eras and ranges are named in one place.

use mqviz_engine::hash::{java_string_hash, murmur3::murmur3_x86_32};

/// MurmurHash3_x86_32 with seed 0 over raw bytes (`Murmur3_32Hash` before masking).
pub fn murmur3_raw(bytes: &[u8]) -> u32 {
    murmur3_x86_32(bytes, 0)
}

/// `Murmur3_32Hash.makeHash`: the raw hash with the sign bit cleared, so it is a non-negative Java int.
pub fn make_hash(bytes: &[u8]) -> u32 {
    murmur3_raw(bytes) & 0x7fff_ffff
}

/// `JavaStringHash.makeHash`: `String.hashCode() & Integer.MAX_VALUE` (over UTF-16 code units).
pub fn java_string_make_hash(s: &str) -> u32 {
    (java_string_hash(s) as u32) & 0x7fff_ffff
}

/// `MathUtils.signSafeMod`: a remainder in `[0, n)` for any sign of `x` (`n > 0`).
pub fn sign_safe_mod(x: i64, n: i64) -> i64 {
    x.rem_euclid(n)
}

/// Sticky-key hash 0 means "not set" (`StickyKeyConsumerSelector.STICKY_KEY_HASH_NOT_SET`).
pub const STICKY_KEY_HASH_NOT_SET: u32 = 0;

/// `DEFAULT_RANGE_SIZE = 2 << 15`: the slot space of range selectors and STICKY ranges.
pub const KEY_HASH_RANGE_SIZE: u32 = 65_536;

/// `StickyKeyConsumerSelectorUtils.makeStickyKeyHash` for a selector whose hash range is
/// `[start, end]`: the hash is folded into that range, and 0 (reserved for "not set") becomes 1.
pub fn sticky_key_hash_in_range(key: &[u8], start: u32, end: u32) -> u32 {
    fold_sticky_hash(make_hash(key), start, end)
}

/// The second half of `makeStickyKeyHash`: a key's `makeHash` folded into `[start, end]`, 0 → 1.
/// A simulation that stores each entry's `makeHash` once can fold it for any selector's range.
pub fn fold_sticky_hash(make_hash: u32, start: u32, end: u32) -> u32 {
    let width = end.saturating_sub(start).saturating_add(1).max(1);
    let h = make_hash % width + start;
    if h == STICKY_KEY_HASH_NOT_SET {
        1
    } else {
        h
    }
}

/// The consistent-hashing selector's range `[1, 65535]` (§1.4.2, §8): `makeHash % 65535 + 1`.
pub fn consistent_sticky_hash(key: &[u8]) -> u32 {
    sticky_key_hash_in_range(key, 1, KEY_HASH_RANGE_SIZE - 1)
}

/// The range selectors' (AUTO_SPLIT range splitting, STICKY) range `[0, 65535]`: `makeHash % 65536`, 0 → 1.
pub fn range_selector_sticky_hash(key: &[u8]) -> u32 {
    sticky_key_hash_in_range(key, 0, KEY_HASH_RANGE_SIZE - 1)
}

/// Which 16 bits of the key's Murmur3 hash pick a scalable-topic segment (§4.3). One era per simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SegmentHashEra {
    /// PR #25642 `SegmentRouter`: `makeHash & 0xFFFF`, the low bits.
    Pip468LowBits,
    /// PIP-486 `ScalableTopicHashing`: `raw >>> 16`, the high bits (the low bits pick an entry bucket).
    Pip486HighBits,
}

impl SegmentHashEra {
    pub fn parse(name: &str) -> Option<SegmentHashEra> {
        match name {
            "pip468_lowbits" => Some(SegmentHashEra::Pip468LowBits),
            "pip486_highbits" => Some(SegmentHashEra::Pip486HighBits),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SegmentHashEra::Pip468LowBits => "pip468_lowbits",
            SegmentHashEra::Pip486HighBits => "pip486_highbits",
        }
    }
}

/// The 16-bit segment hash of a key under `era`.
pub fn segment_hash(key: &[u8], era: SegmentHashEra) -> u16 {
    match era {
        SegmentHashEra::Pip468LowBits => (make_hash(key) & 0xffff) as u16,
        SegmentHashEra::Pip486HighBits => (murmur3_raw(key) >> 16) as u16,
    }
}

/// The producer's `hashingScheme` for keyed partition routing (§3). The Java client default is `JavaStringHash`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HashingScheme {
    #[default]
    JavaStringHash,
    Murmur3_32Hash,
}

impl HashingScheme {
    pub fn parse(name: &str) -> Option<HashingScheme> {
        match name {
            "JavaStringHash" => Some(HashingScheme::JavaStringHash),
            "Murmur3_32Hash" => Some(HashingScheme::Murmur3_32Hash),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HashingScheme::JavaStringHash => "JavaStringHash",
            HashingScheme::Murmur3_32Hash => "Murmur3_32Hash",
        }
    }

    /// The non-negative hash the router takes modulo the partition count.
    pub fn key_hash(self, key: &str) -> u32 {
        match self {
            HashingScheme::JavaStringHash => java_string_make_hash(key),
            HashingScheme::Murmur3_32Hash => make_hash(key.as_bytes()),
        }
    }
}

/// Java `String.compareTo`: lexicographic over UTF-16 code units, which differs from Rust's byte
/// order for characters above U+FFFF against U+E000..U+FFFF. Consumer names sort this way upstream.
pub fn java_string_compare(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_key_hashes() {
        // shared/conformance/pulsar.hash.json, key "key1" and "user-42".
        assert_eq!(murmur3_raw(b"key1"), 2_610_364_709);
        assert_eq!(make_hash(b"key1"), 462_881_061);
        assert_eq!(consistent_sticky_hash(b"key1"), 7357);
        assert_eq!(range_selector_sticky_hash(b"key1"), 293);
        assert_eq!(segment_hash(b"key1", SegmentHashEra::Pip468LowBits), 293);
        assert_eq!(segment_hash(b"key1", SegmentHashEra::Pip486HighBits), 39_831);
        assert_eq!(java_string_hash("user-42"), -147_182_656);
        assert_eq!(java_string_make_hash("user-42"), 2_000_300_992);
    }

    #[test]
    fn sign_safe_mod_is_never_negative() {
        assert_eq!(sign_safe_mod(-1, 5), 4);
        assert_eq!(sign_safe_mod(i64::MIN, 7), i64::MIN.rem_euclid(7));
        assert_eq!(sign_safe_mod(12, 5), 2);
    }

    #[test]
    fn range_hash_never_returns_the_unset_value() {
        // Any key whose makeHash is a multiple of 65536 would give 0; it must map to 1.
        assert_eq!(sticky_key_hash_in_range(b"", 0, 65_535), 1);
    }

    #[test]
    fn java_compare_uses_utf16_order() {
        use std::cmp::Ordering;
        // U+1F600 is the surrogate pair D83D DE00, which sorts before U+FF01 in UTF-16.
        assert_eq!(java_string_compare("\u{1F600}", "\u{FF01}"), Ordering::Less);
        assert_eq!("\u{1F600}".cmp("\u{FF01}"), Ordering::Greater);
    }
}
