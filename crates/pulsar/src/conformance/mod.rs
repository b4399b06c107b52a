//! The seven `pulsar.*` conformance kinds (shared/conformance/README.md §4, spec
//! shared/specs/pulsar.md). Each runner reads a case `input`, drives `mqviz_pulsar`, and shapes
//! the result like `expected`; malformed input gives `{"error": "malformed input: ..."}`.
//!
//! The `defaults` operation asks for named upstream defaults, and its names are the keys of the
//! case's `expected` (the comparison is exact, and two cases of one file can ask for different
//! names with the same input). `name_requested_defaults` copies those names into the input when
//! the vector file is read; the values still come from `crate::defaults`.

use mqviz_engine::sort::StableSort;

mod cursor;
mod failover;
mod hash;
mod input;
mod key_shared;
mod routing;
mod scalable;
mod shared_dispatch;

use serde_json::{Map, Value};

use crate::defaults::{area_defaults, lookup, DefaultValue, DefaultsArea};
use mqviz_model::conformance::{error_value, matches_with, sort_set};

/// The Pulsar kinds this build runs.
pub const KINDS: &[&str] = &[
    "pulsar.hash",
    "pulsar.routing",
    "pulsar.failover",
    "pulsar.shared_dispatch",
    "pulsar.key_shared",
    "pulsar.scalable",
    "pulsar.cursor",
];

/// Runs one case of a pulsar kind; `Err` for a kind this module does not know.
pub fn run(kind: &str, input: &Value) -> Result<Value, String> {
    let result = match kind {
        "pulsar.hash" => hash::run(input),
        "pulsar.routing" => routing::run(input),
        "pulsar.failover" => failover::run(input),
        "pulsar.shared_dispatch" => shared_dispatch::run(input),
        "pulsar.key_shared" => key_shared::run(input),
        "pulsar.scalable" => scalable::run(input),
        "pulsar.cursor" => cursor::run(input),
        other => return Err(format!("kind {other} is not supported yet")),
    };
    Ok(result.unwrap_or_else(|e| error_value(format!("malformed input: {e}"))))
}

fn area_of(kind: &str) -> Option<DefaultsArea> {
    Some(match kind {
        "pulsar.routing" => DefaultsArea::Routing,
        "pulsar.failover" => DefaultsArea::Failover,
        "pulsar.shared_dispatch" => DefaultsArea::SharedDispatch,
        "pulsar.key_shared" => DefaultsArea::KeyShared,
        "pulsar.scalable" => DefaultsArea::Scalable,
        "pulsar.cursor" => DefaultsArea::Cursor,
        _ => return None,
    })
}

/// For a pulsar `{"op": "defaults"}` case without `names`, adds `"names"`: the keys of `expected`.
/// Every other input is returned unchanged.
pub fn name_requested_defaults(kind: &str, mut input: Value, expected: &Value) -> Value {
    let is_defaults = kind.starts_with("pulsar.") && input.get("op").and_then(Value::as_str) == Some("defaults");
    if let (true, Value::Object(fields), Value::Object(wanted)) = (is_defaults, &mut input, expected) {
        if !fields.contains_key("names") && !wanted.contains_key("error") {
            fields.insert("names".into(), Value::Array(wanted.keys().cloned().map(Value::String).collect()));
        }
    }
    input
}

fn default_json(v: &DefaultValue) -> Value {
    match v {
        DefaultValue::Int(i) => Value::from(*i),
        DefaultValue::Bool(b) => Value::Bool(*b),
        DefaultValue::Text(s) => Value::String(s.to_string()),
    }
}

/// `{"op": "defaults", "names"?: [...]}`: the requested defaults (unknown names give an error
/// entry), or the whole area when no names are given.
fn defaults(kind: &str, input: &Value) -> Result<Value, String> {
    let area = area_of(kind).ok_or("this kind has no defaults")?;
    let mut out = Map::new();
    match input.get("names") {
        None | Some(Value::Null) => {
            for (name, v) in area_defaults(area) {
                out.insert(name.to_string(), default_json(&v));
            }
        }
        Some(Value::Array(names)) => {
            for n in names {
                let name = n.as_str().ok_or("input.names: entries must be strings")?;
                let value = lookup(area, name)
                    .map(|v| default_json(&v))
                    .unwrap_or_else(|| error_value(format!("no default named {name}")));
                out.insert(name.to_string(), value);
            }
        }
        Some(_) => return Err("input.names: not a list".into()),
    }
    Ok(Value::Object(out))
}

/// check.py's per-kind normalisation for the pulsar kinds: the lists the README declares sets.
/// check.py selects by `input.op`; the keys sorted here occur only in those operations' values.
pub fn normalise(kind: &str, v: &mut Value) {
    match kind {
        "pulsar.key_shared" => {
            if let Some(Value::Object(by_consumer)) = v.get_mut("rangesByConsumer") {
                by_consumer.values_mut().for_each(sort_set);
            }
            if let Some(Value::Array(steps)) = v.get_mut("rangesAfterEachStep") {
                steps.iter_mut().for_each(sort_set);
            }
        }
        "pulsar.scalable" => {
            if let Some(Value::Array(segments)) = v.get_mut("segments") {
                for s in segments.iter_mut() {
                    for k in ["parents", "children"] {
                        if let Some(x) = s.get_mut(k) {
                            sort_set(x);
                        }
                    }
                }
                segments.stable_sort_by_key(|s| s.get("id").map(Value::to_string).unwrap_or_default());
            }
        }
        "pulsar.cursor" => {
            if let Some(Value::Array(after)) = v.get_mut("after") {
                for s in after.iter_mut() {
                    if let Some(x) = s.get_mut("individuallyAcked") {
                        sort_set(x);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Whether `actual` matches `expected` under check.py's rules for the Pulsar `kind`.
pub fn matches(kind: &str, expected: &Value, actual: &Value) -> bool {
    matches_with(normalise, kind, expected, actual)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use mqviz_model::conformance::parse_vector_file;

    #[test]
    fn defaults_names_come_from_expected_keys() {
        let input = name_requested_defaults("pulsar.cursor", json!({"op": "defaults"}), &json!({"ackTimeoutMs": 0}));
        assert_eq!(input, json!({"op": "defaults", "names": ["ackTimeoutMs"]}));
        assert_eq!(run("pulsar.cursor", &input).unwrap(), json!({"ackTimeoutMs": 0}));
        let other = name_requested_defaults("rocketmq.bloom", json!({"op": "defaults"}), &json!({"x": 1}));
        assert_eq!(other, json!({"op": "defaults"}));
        let unknown = run("pulsar.cursor", &json!({"op": "defaults", "names": ["nope"]})).unwrap();
        assert!(unknown["nope"]["error"].is_string());
        assert_eq!(
            run("pulsar.failover", &json!({"op": "defaults"})).unwrap(),
            json!({"activeConsumerFailoverDelayTimeMillis": 1000})
        );
    }

    #[test]
    fn set_normalisation() {
        let a = json!({"rangesByConsumer": {"c": [[5, 6], [1, 2]]}});
        let b = json!({"rangesByConsumer": {"c": [[1, 2], [5, 6]]}});
        assert!(matches("pulsar.key_shared", &a, &b));
        let a = json!({"segments": [{"id": 1, "parents": [3, 2]}, {"id": 0, "parents": []}]});
        let b = json!({"segments": [{"id": 0, "parents": []}, {"id": 1, "parents": [2, 3]}]});
        assert!(matches("pulsar.scalable", &a, &b));
        assert!(!matches("pulsar.routing", &json!([1, 2]), &json!([2, 1])));
    }

    #[test]
    fn bad_input_is_an_error_value_not_a_panic() {
        for kind in KINDS {
            for input in
                [json!(null), json!(7), json!({}), json!({"op": 3}), json!({"op": "nope"}), json!({"op": "defaults", "names": 5})]
            {
                let v = run(kind, &input).unwrap();
                assert!(v.get("error").is_some(), "{kind} {input} gave {v}");
            }
        }
    }

    /// Every case of every public pulsar vector file, through the same path as `mqviz conformance`.
    #[test]
    fn pulsar_vector_files() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance");
        if !dir.is_dir() {
            eprintln!("note: {} not found; pulsar vector files skipped", dir.display());
            return;
        }
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(&dir).map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
        files
            .retain(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("pulsar.") && n.ends_with(".json")));
        files.stable_sort();
        let mut failures = Vec::new();
        let mut total = 0;
        for path in &files {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
            let file = parse_vector_file(name, &text).unwrap();
            for (id, input, expected) in &file.cases {
                let input = name_requested_defaults(&file.kind, input.clone(), expected);
                let actual = run(&file.kind, &input).unwrap();
                total += 1;
                if !matches(&file.kind, expected, &actual) {
                    failures.push(format!("{name} {id}: expected {expected} | actual {actual}"));
                }
            }
            eprintln!("{name} [{}]: {} cases", file.kind, file.cases.len());
        }
        assert!(failures.is_empty(), "{} of {total} failed:\n{}", failures.len(), failures.join("\n"));
    }
}
