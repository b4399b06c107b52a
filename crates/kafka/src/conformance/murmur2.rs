//! Kind `kafka.murmur2`: `{"keyHex", "partitionCounts"}` -> `{"murmur2", "partitions": {"<n>": p}}`.

use serde_json::{json, Map, Value};

use super::read::{array, field, i64_of, string};
use crate::conformance::error_value;
use crate::murmur2::{murmur2, to_positive};

fn hex_bytes(hex: &str) -> Result<Vec<u8>, String> {
    if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("keyHex: expected an even number of hex digits".into());
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| format!("keyHex: bad digits at {i}")))
        .collect()
}

pub fn run(input: &Value) -> Result<Value, String> {
    let key = hex_bytes(&string(field(input, "keyHex")?, "keyHex")?)?;
    let hash = murmur2(&key);
    let mut partitions = Map::new();
    for (i, n) in array(field(input, "partitionCounts")?, "partitionCounts")?.iter().enumerate() {
        let n = i32::try_from(i64_of(n, &format!("partitionCounts[{i}]"))?)
            .map_err(|_| format!("partitionCounts[{i}]: out of int range"))?;
        // Java `%`: the sign follows the dividend, and a zero divisor throws.
        let value = match to_positive(hash).checked_rem(n) {
            Some(p) => json!(p),
            None => error_value("ArithmeticException: / by zero"),
        };
        partitions.insert(n.to_string(), value);
    }
    Ok(json!({ "murmur2": hash, "partitions": partitions }))
}
