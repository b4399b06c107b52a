//! The bytes Key_Shared hashes for an entry (`Commands.peekStickyKey`, spec §1.4.1): the ordering
//! key if set, else the partition key (base64-decoded when flagged), else the literal `NONE_KEY`.

use std::fmt;

/// The sticky key of messages that carry no key at all.
pub const NONE_KEY: &[u8] = b"NONE_KEY";

/// The key fields of one entry's metadata.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntryKeys<'a> {
    pub ordering_key: Option<&'a [u8]>,
    pub partition_key: Option<&'a str>,
    pub partition_key_b64_encoded: bool,
}

/// A partition key flagged as base64 that `Base64.getDecoder()` rejects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidBase64(pub String);

impl fmt::Display for InvalidBase64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IllegalArgumentException: {}", self.0)
    }
}

/// The sticky key bytes of an entry.
pub fn sticky_key(keys: EntryKeys<'_>) -> Result<Vec<u8>, InvalidBase64> {
    if let Some(ordering) = keys.ordering_key {
        return Ok(ordering.to_vec());
    }
    match keys.partition_key {
        Some(pk) if keys.partition_key_b64_encoded => decode_base64(pk),
        Some(pk) => Ok(pk.as_bytes().to_vec()),
        None => Ok(NONE_KEY.to_vec()),
    }
}

fn sextet(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// RFC 4648 base64 with the basic alphabet, as Java's basic decoder reads it: padding is
/// optional, but nothing may follow it and a lone trailing character is an error.
pub fn decode_base64(text: &str) -> Result<Vec<u8>, InvalidBase64> {
    let bytes = text.as_bytes();
    let data_len = bytes.iter().position(|&b| b == b'=').unwrap_or(bytes.len());
    let padding = &bytes[data_len..];
    if padding.len() > 2 || padding.iter().any(|&b| b != b'=') || (!padding.is_empty() && (data_len + padding.len()) % 4 != 0) {
        return Err(InvalidBase64("Input byte array has incorrect ending byte".into()));
    }
    let mut out = Vec::with_capacity(data_len * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in &bytes[..data_len] {
        let v = sextet(c).ok_or_else(|| InvalidBase64(format!("Illegal base64 character {:x}", c)))?;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if data_len % 4 == 1 {
        return Err(InvalidBase64("Last unit does not have enough valid bits".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_order() {
        let ok = sticky_key(EntryKeys { ordering_key: Some(b"ok"), partition_key: Some("pk"), ..Default::default() });
        assert_eq!(ok.unwrap(), b"ok");
        assert_eq!(sticky_key(EntryKeys { partition_key: Some("pk"), ..Default::default() }).unwrap(), b"pk");
        let b64 = EntryKeys { partition_key: Some("cGs="), partition_key_b64_encoded: true, ..Default::default() };
        assert_eq!(sticky_key(b64).unwrap(), b"pk");
        assert_eq!(sticky_key(EntryKeys::default()).unwrap(), NONE_KEY);
    }

    #[test]
    fn base64_edge_cases() {
        assert_eq!(decode_base64("").unwrap(), b"");
        assert_eq!(decode_base64("cGs").unwrap(), b"pk");
        assert_eq!(decode_base64("aGVsbG8gd29ybGQ=").unwrap(), b"hello world");
        assert!(decode_base64("c").is_err());
        assert!(decode_base64("cG*=").is_err());
        assert!(decode_base64("cGs=x").is_err());
        assert!(decode_base64("cGs===").is_err());
    }
}
