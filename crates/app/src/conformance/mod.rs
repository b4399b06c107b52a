//! Runs the shared conformance vectors (`shared/conformance/`, format `mqviz-conformance/1`).
//!
//! Each kind maps a case `input` to an `actual` value shaped like `expected`; failures that
//! upstream reports as exceptions become `{"error": "<Class>: <message>"}`.

mod allocate;
mod bloom;
mod compare;
mod kafka;
mod pulsar;
mod rocketmq;
mod sql92;

use serde_json::{json, Value};

pub use compare::matches;

/// Kinds this build can run (RocketMQ, Pulsar and Kafka); any other kind is reported as unsupported.
pub const SUPPORTED_KINDS: &[&str] = &[
    "rocketmq.allocate",
    "rocketmq.filterapi",
    "rocketmq.consumer_group_info",
    "rocketmq.producer_index",
    "rocketmq.md5_hash",
    "rocketmq.sql92",
    "rocketmq.bloom",
    "pulsar.hash",
    "pulsar.routing",
    "pulsar.failover",
    "pulsar.shared_dispatch",
    "pulsar.key_shared",
    "pulsar.scalable",
    "pulsar.cursor",
    "kafka.assignor",
    "kafka.murmur2",
    "kafka.subscription_state",
    "kafka.reconciliation",
];

/// Runs one case. `Err` means the kind is not supported by this build.
pub fn run_case(kind: &str, input: &Value) -> Result<Value, String> {
    match kind {
        "rocketmq.allocate" => Ok(allocate::run(input)),
        "rocketmq.filterapi" => Ok(rocketmq::filterapi(input)),
        "rocketmq.consumer_group_info" => Ok(rocketmq::consumer_group_info(input)),
        "rocketmq.producer_index" => Ok(rocketmq::producer_index(input)),
        "rocketmq.md5_hash" => Ok(rocketmq::md5_hash(input)),
        "rocketmq.sql92" => Ok(sql92::run(input)),
        "rocketmq.bloom" => Ok(bloom::run(input)),
        pulsar_kind if pulsar_kind.starts_with("pulsar.") => pulsar::run(pulsar_kind, input),
        k if kafka::KINDS.contains(&k) => Ok(kafka::run(k, input)),
        other => Err(format!("kind {other} is not supported yet")),
    }
}

/// `{"error": text}`, the conformance format's representation of an upstream exception.
pub fn error_value(text: impl Into<String>) -> Value {
    json!({ "error": text.into() })
}

/// One vector file, parsed.
pub struct VectorFile {
    pub file: String,
    pub kind: String,
    pub cases: Vec<(String, Value, Value)>,
}

/// Parses a vector file's text; `name` is its basename.
pub fn parse_vector_file(name: &str, text: &str) -> Result<VectorFile, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("{name}: line {}, column {}: {e}", e.line(), e.column()))?;
    let kind =
        v.get("kind").and_then(Value::as_str).ok_or_else(|| format!("{name}: $.kind: missing or not a string"))?.to_string();
    let cases = v.get("cases").and_then(Value::as_array).ok_or_else(|| format!("{name}: $.cases: missing or not an array"))?;
    let mut out = Vec::with_capacity(cases.len());
    for (i, c) in cases.iter().enumerate() {
        let id =
            c.get("id").and_then(Value::as_str).ok_or_else(|| format!("{name}: $.cases[{i}].id: missing or not a string"))?;
        let input = c.get("input").cloned().unwrap_or(Value::Null);
        let expected = c.get("expected").cloned().unwrap_or(Value::Null);
        let input = pulsar::name_requested_defaults(&kind, input, &expected);
        out.push((id.to_string(), input, expected));
    }
    Ok(VectorFile { file: name.to_string(), kind, cases: out })
}
