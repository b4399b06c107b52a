//! Kind `rocketmq.bloom`: RocketMQ's consumer-group bloom filter.
//!
//! `input.op`:
//! - `createByFn {f, n}` → `{"k", "m"}`;
//! - `calcBitPositions {f, n, key}` → `{"bitPos": [k ints]}`;
//! - `bitmap {f, n, hashTo: [keys], isHit: [keys]}` → `{"bitmapHex", "isHit": {key: bool}}`.

use serde_json::{json, Map, Value};

use crate::bloom::BloomFilter;

/// Largest bitmap the runner builds (upstream would allocate up to 2^31 bits).
const MAX_BITMAP_BITS: i32 = 1 << 26;

fn int_field(input: &Value, key: &str) -> Result<i32, String> {
    input
        .get(key)
        .and_then(Value::as_i64)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| format!("input.{key}: missing or not a Java int"))
}

fn string_list<'a>(input: &'a Value, key: &str) -> Result<Vec<&'a str>, String> {
    let list = input.get(key).and_then(Value::as_array).ok_or_else(|| format!("input.{key}: missing or not a list"))?;
    list.iter().map(|v| v.as_str().ok_or_else(|| format!("input.{key}: entries must be strings"))).collect()
}

fn run_op(input: &Value) -> Result<Value, String> {
    let op = input.get("op").and_then(Value::as_str).ok_or("input.op: missing or not a string")?;
    let f = int_field(input, "f")?;
    let n = int_field(input, "n")?;
    let bf = match BloomFilter::create_by_fn(f, n) {
        Ok(bf) => bf,
        Err(e) => return Ok(super::error_value(e.0)),
    };
    match op {
        "createByFn" => Ok(json!({"k": bf.k(), "m": bf.m()})),
        "calcBitPositions" => {
            let key = input.get("key").and_then(Value::as_str).ok_or("input.key: missing or not a string")?;
            Ok(json!({"bitPos": bf.calc_bit_positions(key)}))
        }
        "bitmap" => {
            if bf.m() > MAX_BITMAP_BITS {
                return Err(format!("bitmap of {} bits is larger than this runner builds", bf.m()));
            }
            let mut bits = bf.new_bitmap();
            for key in string_list(input, "hashTo")? {
                if let Err(e) = bf.hash_to(key, &mut bits) {
                    return Ok(super::error_value(e.0));
                }
            }
            let mut hits = Map::new();
            for key in string_list(input, "isHit")? {
                match bf.is_hit_key(key, &bits) {
                    Ok(hit) => {
                        hits.insert(key.to_string(), Value::Bool(hit));
                    }
                    Err(e) => return Ok(super::error_value(e.0)),
                }
            }
            Ok(json!({"bitmapHex": bits.to_hex(), "isHit": hits}))
        }
        other => Err(format!("input.op: unknown operation {other:?}")),
    }
}

pub fn run(input: &Value) -> Value {
    run_op(input).unwrap_or_else(|e| super::error_value(format!("IllegalArgumentException: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_pass() {
        if let Some((_, failed)) = super::super::sql92::tests::run_file("rocketmq.bloom.json", run) {
            assert!(failed.is_empty(), "failing ids {failed:?}");
        }
    }

    #[test]
    fn errors_and_malformed_input() {
        let out = run(&json!({"op": "createByFn", "f": 0, "n": 32}));
        assert!(out["error"].as_str().unwrap().starts_with("IllegalArgumentException: f must be"));
        let out = run(&json!({"op": "createByFn", "f": 20, "n": 0}));
        assert!(out["error"].as_str().unwrap().starts_with("IllegalArgumentException: n must be"));
        for input in [
            json!(null),
            json!({"op": "nope", "f": 20, "n": 32}),
            json!({"op": "createByFn", "f": "20", "n": 32}),
            json!({"op": "createByFn", "f": 20, "n": 1e20}),
            json!({"op": "calcBitPositions", "f": 20, "n": 32}),
            json!({"op": "bitmap", "f": 20, "n": 32, "hashTo": ["a"], "isHit": [1]}),
            json!({"op": "bitmap", "f": 1, "n": 2_000_000_000, "hashTo": [], "isHit": []}),
        ] {
            assert!(run(&input).get("error").is_some(), "{input}");
        }
    }
}
