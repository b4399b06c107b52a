//! Kafka conformance kinds (shared/conformance/README.md §4): `kafka.assignor`, `kafka.murmur2`,
//! `kafka.subscription_state`, `kafka.reconciliation`, plus check.py's normalisation of them.

mod assignor;
mod murmur2;
mod normalise;
mod read;
mod reconciliation;
mod subscription_state;

use serde_json::Value;

use mqviz_model::conformance::{error_value, matches_with};
pub use normalise::normalise;

/// The Kafka kinds this build runs.
pub const KINDS: &[&str] = &["kafka.assignor", "kafka.murmur2", "kafka.subscription_state", "kafka.reconciliation"];

/// Runs one case of a Kafka kind; `Err` for a kind that is not one. Malformed input gives
/// `{"error": "malformed input: ..."}`.
pub fn run(kind: &str, input: &Value) -> Result<Value, String> {
    let result = match kind {
        "kafka.assignor" => assignor::run(input),
        "kafka.murmur2" => murmur2::run(input),
        "kafka.subscription_state" => subscription_state::run(input),
        "kafka.reconciliation" => reconciliation::run(input),
        other => return Err(format!("kind {other} is not a Kafka kind")),
    };
    Ok(result.unwrap_or_else(|e| error_value(format!("malformed input: {e}"))))
}

/// Whether `actual` matches `expected` under check.py's rules for the Kafka `kind`.
pub fn matches(kind: &str, expected: &Value, actual: &Value) -> bool {
    matches_with(normalise, kind, expected, actual)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use mqviz_model::conformance::parse_vector_file;

    /// Runs every case of a shared vector file, when the shared directory is present.
    fn run_file(name: &str) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance").join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("skipping {}: not found", path.display());
            return;
        };
        let file = parse_vector_file(name, &text).expect("vector file parses");
        let mut failed = Vec::new();
        for (id, input, expected) in &file.cases {
            let actual = run(&file.kind, input).unwrap();
            if !matches(&file.kind, expected, &actual) {
                failed.push(format!("{id}: expected {expected} | actual {actual}"));
            }
        }
        assert!(failed.is_empty(), "{name}: {} of {} cases failed:\n{}", failed.len(), file.cases.len(), failed.join("\n"));
    }

    #[test]
    fn assignor_vectors() {
        run_file("kafka.assignor.json");
    }

    #[test]
    fn assignor_sample_vectors() {
        run_file("kafka.assignor-sample.json");
    }

    #[test]
    fn murmur2_vectors() {
        run_file("kafka.murmur2.json");
        run_file("kafka.murmur2-sample.json");
    }

    #[test]
    fn subscription_state_vectors() {
        run_file("kafka.subscription_state.json");
    }

    #[test]
    fn reconciliation_vectors() {
        run_file("kafka.reconciliation.json");
    }

    /// Replaces one random node of `v` with odd data.
    fn mutate(v: &mut Value, rng: &mut mqviz_engine::SplitMix64) {
        let junk = [
            Value::Null,
            serde_json::json!(-1),
            serde_json::json!(i64::MAX),
            serde_json::json!(i32::MIN),
            serde_json::json!(0),
            serde_json::json!("\u{1F600}x"),
            serde_json::json!([]),
            serde_json::json!({}),
            serde_json::json!([["t", -3]]),
        ];
        let descend = rng.index(3) > 0;
        match v {
            Value::Array(items) if descend && !items.is_empty() => {
                let i = rng.index(items.len());
                mutate(&mut items[i], rng);
            }
            Value::Object(map) if descend && !map.is_empty() => {
                let Some(key) = map.keys().nth(rng.index(map.len())).cloned() else { return };
                if rng.one_in(6) {
                    map.remove(&key);
                } else if let Some(x) = map.get_mut(&key) {
                    mutate(x, rng);
                }
            }
            _ => *v = junk[rng.index(junk.len())].clone(),
        }
    }

    /// Odd input never panics: every vector case, mutated a few times, still gives a value.
    #[test]
    fn mutated_vectors_never_panic() {
        let mut rng = mqviz_engine::SplitMix64::new(848);
        for name in [
            "kafka.assignor.json",
            "kafka.assignor-sample.json",
            "kafka.murmur2.json",
            "kafka.subscription_state.json",
            "kafka.reconciliation.json",
        ] {
            let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance").join(name);
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let file = parse_vector_file(name, &text).expect("vector file parses");
            for (_, input, _) in &file.cases {
                for _ in 0..8 {
                    let mut odd = input.clone();
                    for _ in 0..1 + rng.index(3) {
                        mutate(&mut odd, &mut rng);
                    }
                    let _ = run(&file.kind, &odd).unwrap();
                }
            }
        }
    }

    #[test]
    fn malformed_input_is_an_error_value() {
        for kind in KINDS {
            for input in [Value::Null, serde_json::json!({"steps": 3, "members": "x", "keyHex": "zz"})] {
                let out = run(kind, &input).unwrap();
                assert!(out.get("error").is_some(), "{kind}: {out}");
            }
        }
    }
}
