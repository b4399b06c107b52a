//! Kind `rocketmq.sql92`: compile an expression, evaluate it against a property map.
//!
//! `input`: `{"expr": str, "props": {name: value}, "version"?: "5" | "4.9"}` where a value is a
//! JSON string (a String property) or `{"t": "int"|"long"|"double"|"bool", "v": ...}`,
//! `{"t": "null"}`, `{"t": "object"}`. `version` (optional, default 5.x) is an extension.
//! Output: `{"compile": "ok"|"error", "result": "TRUE"|"FALSE"|"NULL"|"EVAL_ERROR"|null,
//! "brokerMatch": bool}`.

use mqviz_engine::vec_map::VecMap;

use serde_json::{json, Value};

use crate::sql92::{compile, PropValue, Sql92Version};

fn prop_value(name: &str, v: &Value) -> Result<PropValue, String> {
    if let Some(s) = v.as_str() {
        return Ok(PropValue::Str(s.to_string()));
    }
    let t = v.get("t").and_then(Value::as_str).ok_or_else(|| format!("props.{name}: expected a string or {{\"t\": ...}}"))?;
    let raw = v.get("v");
    let bad = || format!("props.{name}: bad value for type {t}");
    Ok(match t {
        "int" => PropValue::Int(raw.and_then(Value::as_i64).and_then(|x| i32::try_from(x).ok()).ok_or_else(bad)?),
        "long" => PropValue::Long(raw.and_then(Value::as_i64).ok_or_else(bad)?),
        "double" => PropValue::Double(raw.and_then(Value::as_f64).ok_or_else(bad)?),
        "bool" => PropValue::Bool(raw.and_then(Value::as_bool).ok_or_else(bad)?),
        "null" => PropValue::Null,
        "object" => PropValue::Object,
        other => return Err(format!("props.{name}: unknown type {other:?}")),
    })
}

fn parse_input(input: &Value) -> Result<(String, VecMap<String, PropValue>, Sql92Version), String> {
    let expr = input.get("expr").and_then(Value::as_str).ok_or("input.expr: missing or not a string")?;
    let mut props = VecMap::new();
    match input.get("props") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (k, v) in map {
                props.insert(k.clone(), prop_value(k, v)?);
            }
        }
        Some(_) => return Err("input.props: not an object".to_string()),
    }
    let version = match input.get("version") {
        None | Some(Value::Null) => Sql92Version::V5,
        Some(v) => match v.as_str() {
            Some("4.9" | "4.9.8" | "V4_9") => Sql92Version::V4_9,
            Some("5" | "5.x" | "V5") => Sql92Version::V5,
            _ => return Err(format!("input.version: unsupported {v}")),
        },
    };
    Ok((expr.to_string(), props, version))
}

pub fn run(input: &Value) -> Value {
    let (expr, props, version) = match parse_input(input) {
        Ok(parts) => parts,
        Err(e) => return super::error_value(format!("IllegalArgumentException: {e}")),
    };
    match compile(&expr, version) {
        Err(_) => json!({"compile": "error", "result": null, "brokerMatch": false}),
        Ok(e) => {
            let verdict = e.evaluate_props(&props);
            json!({"compile": "ok", "result": verdict.as_str(), "brokerMatch": verdict.is_match()})
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mqviz_model::conformance::{same, shared_vector_file};

    /// Runs every case of a vector file; returns (passed, failed ids). `None` if the file is absent.
    pub(crate) fn run_file(name: &str, runner: fn(&Value) -> Value) -> Option<(usize, Vec<String>)> {
        let Some(file) = shared_vector_file(name) else {
            println!("note: shared/conformance/{name} not found, skipping");
            return None;
        };
        let mut passed = 0;
        let mut failed = Vec::new();
        for (id, input, expected) in &file.cases {
            let actual = runner(input);
            if same(expected, &actual) {
                passed += 1;
            } else {
                println!("FAIL {name} {id}: expected {expected}, actual {actual}");
                failed.push(id.clone());
            }
        }
        println!("{name}: {passed} passed, {} failed", failed.len());
        Some((passed, failed))
    }

    #[test]
    fn vectors_pass() {
        for name in ["rocketmq.sql92.json", "rocketmq.sql92-sample.json"] {
            if let Some((_, failed)) = run_file(name, run) {
                assert!(failed.is_empty(), "{name}: failing ids {failed:?}");
            }
        }
    }

    #[test]
    fn malformed_input_is_an_error_value() {
        for input in [
            json!(null),
            json!({}),
            json!({"expr": 5}),
            json!({"expr": "a", "props": []}),
            json!({"expr": "a", "props": {"a": 1}}),
            json!({"expr": "a", "props": {"a": {"t": "int", "v": 1e12}}}),
            json!({"expr": "a", "props": {"a": {"t": "weird"}}}),
            json!({"expr": "a", "version": "3"}),
        ] {
            let out = run(&input);
            assert!(out.get("error").is_some(), "{input} -> {out}");
        }
        let out = run(&json!({"expr": "a CONTAINS 'x'", "props": {"a": "x"}, "version": "4.9"}));
        assert_eq!(out, json!({"compile": "ok", "result": "FALSE", "brokerMatch": false}));
        let out = run(&json!({"expr": "a = 1", "props": {"a": {"t": "long", "v": 1}}}));
        assert_eq!(out, json!({"compile": "ok", "result": "TRUE", "brokerMatch": true}));
    }
}
