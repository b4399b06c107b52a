//! Kafka `org.apache.kafka.common.Uuid` (shared/specs/kafka.md §0.2, §0.3): the 22-character
//! URL-safe base64 form, `hashCode` (feeds `HashSet<Uuid>` order) and `compareTo` (signed
//! most-significant long, then signed least-significant long).

use std::cmp::Ordering;
use std::fmt;

/// A topic id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Uuid {
    pub most_significant: i64,
    pub least_significant: i64,
}

impl Uuid {
    pub fn new(most_significant: i64, least_significant: i64) -> Uuid {
        Uuid { most_significant, least_significant }
    }

    /// `Uuid.fromString`: URL-safe base64 of 16 bytes, padding optional. The error text is the
    /// Java exception (`IllegalArgumentException: ...`).
    pub fn parse(text: &str) -> Result<Uuid, String> {
        if text.len() > 24 {
            return Err(format!("IllegalArgumentException: Input string `{text}` is too long to be decoded as a base64 UUID"));
        }
        let bytes = decode_base64_url(text).ok_or_else(|| format!("IllegalArgumentException: Illegal base64 UUID `{text}`"))?;
        let Ok(bytes) = <[u8; 16]>::try_from(bytes.as_slice()) else {
            return Err(format!(
                "IllegalArgumentException: Input string `{text}` decoded as {} bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID",
                bytes.len()
            ));
        };
        let (high, low) = bytes.split_at(8);
        Ok(Uuid {
            most_significant: i64::from_be_bytes(high.try_into().unwrap_or_default()),
            least_significant: i64::from_be_bytes(low.try_into().unwrap_or_default()),
        })
    }

    /// `Uuid.hashCode()`.
    pub fn java_hash(&self) -> i32 {
        let folded = self.most_significant ^ self.least_significant;
        ((folded >> 32) as i32) ^ (folded as i32)
    }

    /// `Uuid.compareTo`.
    pub fn java_cmp(&self, other: &Uuid) -> Ordering {
        self.most_significant.cmp(&other.most_significant).then(self.least_significant.cmp(&other.least_significant))
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.most_significant.to_be_bytes());
        bytes[8..].copy_from_slice(&self.least_significant.to_be_bytes());
        f.write_str(&encode_base64_url(&bytes))
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn decode_base64_url(text: &str) -> Option<Vec<u8>> {
    let trimmed = text.trim_end_matches('=');
    if text.len() - trimmed.len() > 2 || trimmed.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(trimmed.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in trimmed.bytes() {
        let v = ALPHABET.iter().position(|a| *a == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn encode_base64_url(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |acc, b| (acc << 8) | *b as u32) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_base64() {
        let u = Uuid::parse("oSrp5aZ7Qi4ZfnDM4cRAhg").unwrap();
        assert_eq!(u.to_string(), "oSrp5aZ7Qi4ZfnDM4cRAhg");
        assert!(Uuid::parse("short").is_err());
        assert!(Uuid::parse("oSrp5aZ7Qi4ZfnDM4cRAh!").is_err());
    }

    #[test]
    fn hash_and_order_follow_java() {
        let u = Uuid::new(1 << 32, 5);
        assert_eq!(u.java_hash(), 1 ^ 5);
        assert_eq!(Uuid::new(-1, 0).java_cmp(&Uuid::new(1, 0)), Ordering::Less);
    }
}
