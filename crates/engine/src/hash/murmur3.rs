//! MurmurHash3 (Austin Appleby's public-domain reference, SMHasher), written out from the
//! algorithm description:
//! - x64_128, as Guava's `Hashing.murmur3_128()` computes it (RocketMQ's bloom filter uses
//!   `hashString(key, UTF_8).asLong()`, i.e. the first 8 bytes of the hash, little-endian: `h1`);
//! - x86_32 (Pulsar's `Murmur3_32Hash`, Guava's `murmur3_32_fixed`).

const C1_128: u64 = 0x87c3_7b91_1142_53d5;
const C2_128: u64 = 0x4cf5_ad43_2745_937f;

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1_128).rotate_left(31).wrapping_mul(C2_128)
}

fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2_128).rotate_left(33).wrapping_mul(C1_128)
}

/// Little-endian integer from up to 8 bytes.
fn le_u64(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// MurmurHash3_x64_128 with both halves started from `seed` (the reference C code's
/// zero-extended 32-bit seed is `seed as u64`; Guava sign-extends its `int` seed).
fn x64_128(data: &[u8], seed: u64) -> (u64, u64) {
    let mut h1 = seed;
    let mut h2 = seed;
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        let k1 = le_u64(&block[..8]);
        let k2 = le_u64(&block[8..]);
        h1 ^= mix_k1(k1);
        h1 = h1.rotate_left(27).wrapping_add(h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(k2);
        h2 = h2.rotate_left(31).wrapping_add(h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    if tail.len() > 8 {
        h2 ^= mix_k2(le_u64(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(le_u64(&tail[..tail.len().min(8)]));
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

/// MurmurHash3_x64_128 (reference semantics, 32-bit seed): the two 64-bit halves `(h1, h2)`.
pub fn murmur3_x64_128(data: &[u8], seed: u32) -> (u64, u64) {
    x64_128(data, u64::from(seed))
}

/// Guava `Hashing.murmur3_128(seed).hashBytes(data).asBytes()`: `h1` then `h2`, little-endian.
pub fn guava_murmur3_128_bytes(data: &[u8], seed: i32) -> [u8; 16] {
    let (h1, h2) = x64_128(data, i64::from(seed) as u64);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&h1.to_le_bytes());
    out[8..].copy_from_slice(&h2.to_le_bytes());
    out
}

/// Guava `Hashing.murmur3_128().hashString(s, UTF_8).asLong()` (seed 0): `h1` as a Java long.
pub fn guava_murmur3_128_as_long(s: &str) -> i64 {
    x64_128(s.as_bytes(), 0).0 as i64
}

/// MurmurHash3_x86_32.
pub fn murmur3_x86_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        h ^= mix(k);
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        h ^= mix(le_u64(tail) as u32);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x64_128_known_values() {
        assert_eq!(murmur3_x64_128(b"", 0), (0, 0));
        // Guava's Murmur3Hash128Test / the SMHasher reference.
        assert_eq!(
            murmur3_x64_128(b"The quick brown fox jumps over the lazy dog", 0),
            (0xe34b_bc7b_bc07_1b6c, 0x7a43_3ca9_c49a_9347)
        );
        assert_eq!(murmur3_x64_128(b"hell", 0), (0x6299_4269_3e10_f867, 0x92db_0b82_baeb_5347));
        assert_eq!(murmur3_x64_128(b"hello", 1), (0xa78d_dff5_adae_8d10, 0x1289_00ef_2090_0135));
        assert_eq!(murmur3_x64_128(b"hello ", 2), (0x8a48_6b23_f422_e826, 0xf962_a2c5_8947_765f));
        assert_eq!(murmur3_x64_128(b"hello w", 3), (0x2ea5_9f46_6f6b_ed8c, 0xc610_990a_cc42_8a17));
        assert_eq!(murmur3_x64_128(b"hello wo", 4), (0x79f6_305a_386c_572c, 0x4630_5aed_3483_b94e));
        assert_eq!(murmur3_x64_128(b"hello wor", 5), (0xc221_9d21_3ec1_f1b5, 0xa1d8_e2e0_a527_85bd));
        assert_eq!(guava_murmur3_128_as_long("The quick brown fox jumps over the lazy dog"), 0xe34b_bc7b_bc07_1b6c_u64 as i64);
        let bytes = guava_murmur3_128_bytes(b"The quick brown fox jumps over the lazy dog", 0);
        assert_eq!(bytes[0], 0x6c);
        assert_eq!(bytes[15], 0x7a);
        // Every tail length hashes without panicking and differently.
        let data: Vec<u8> = (0u8..40).collect();
        let all: std::collections::BTreeSet<_> = (0..=40).map(|n| murmur3_x64_128(&data[..n], 0)).collect();
        assert_eq!(all.len(), 41);
    }

    #[test]
    fn x86_32_known_values() {
        // SMHasher reference values (also in shared/conformance/pulsar.hash.json).
        assert_eq!(murmur3_x86_32(b"", 0), 0);
        assert_eq!(murmur3_x86_32(b"test", 0), 0xba6b_d213);
        assert_eq!(murmur3_x86_32(b"Hello, world!", 0), 0xc036_3e43);
        assert_eq!(murmur3_x86_32(b"The quick brown fox jumps over the lazy dog", 0), 0x2e4f_f723);
        assert_eq!(murmur3_x86_32(b"a", 0), 0x3c25_69b2);
        assert_eq!(murmur3_x86_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_x86_32(b"", 0xffff_ffff), 0x81f1_6f39);
    }
}
