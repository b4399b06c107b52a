//! `Utils.murmur2`, `Utils.toPositive` and the keyed partition choice (shared/specs/kafka.md §6).
//! All arithmetic is 32-bit wrapping, shifts are logical, block bytes are little-endian.

const SEED: u32 = 0x9747_b28c;
const M: u32 = 0x5bd1_e995;
const R: u32 = 24;

/// `Utils.murmur2(data)`, the signed 32-bit result.
pub fn murmur2(data: &[u8]) -> i32 {
    let mut h = SEED ^ data.len() as u32;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let mut k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        // The Java switch falls through from the highest tail byte down to the first one.
        for (i, byte) in tail.iter().enumerate().rev() {
            h ^= (*byte as u32) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// `Utils.toPositive`: clears the sign bit (not `abs`, so `MIN_VALUE` maps to 0).
pub fn to_positive(value: i32) -> i32 {
    value & 0x7fff_ffff
}

/// `BuiltInPartitioner.partitionForKey`: over all partitions of the topic, available or not.
/// `None` when `num_partitions` is not positive (Java throws `ArithmeticException` for 0).
pub fn partition_for_key(serialized_key: &[u8], num_partitions: i32) -> Option<i32> {
    (num_partitions > 0).then(|| to_positive(murmur2(serialized_key)) % num_partitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_checks() {
        assert_eq!(murmur2(b"21"), -973932308);
        assert_eq!(murmur2(b"foobar"), -790332482);
        assert_eq!(murmur2(b"abc"), 479470107);
        assert_eq!(murmur2(b""), 275646681);
        assert_eq!(partition_for_key(b"key", 3), Some(1));
        assert_eq!(partition_for_key(b"key", 0), None);
        assert_eq!(to_positive(i32::MIN), 0);
    }
}
