//! The RocketMQ conformance kinds (shared/conformance/README.md): `rocketmq.allocate`
//! (allocate.rs), `rocketmq.sql92` (sql92.rs), `rocketmq.bloom` (bloom.rs), and the kinds whose
//! operations are small, here: filterapi, consumer_group_info, producer_index, md5_hash.

mod allocate;
mod bloom;
mod sql92;

use serde_json::{json, Map, Value};

use crate::filterapi::{self, SubscriptionData};
use crate::group_info::ConsumerGroupInfo;
use crate::producer_index::ThreadLocalIndex;
use mqviz_engine::hash::java_string_hash;
use mqviz_model::conformance::{error_value, matches_with, sort_set};

fn subscription_json(sd: &SubscriptionData) -> Value {
    json!({
        "topic": sd.topic,
        "subString": &*sd.sub_string,
        "tagsSet": sd.tags.iter().collect::<Vec<_>>(),
        "codeSet": sd.codes.iter().collect::<Vec<_>>(),
        "expressionType": sd.expression_type.name(),
    })
}

pub fn filterapi(input: &Value) -> Value {
    let op = input.get("op").and_then(Value::as_str).unwrap_or("");
    let topic = input.get("topic").and_then(Value::as_str).unwrap_or("");
    let sub = input.get("subString").and_then(Value::as_str);
    let result = match op {
        "buildSubscriptionData" => filterapi::build_subscription_data(topic, sub, 0),
        "build" => filterapi::build(topic, sub, input.get("type").and_then(Value::as_str), 0),
        "stringHashCode" => {
            let s = input.get("s").and_then(Value::as_str).unwrap_or("");
            return json!({ "hashCode": java_string_hash(s) });
        }
        other => return error_value(format!("unknown op {other}")),
    };
    match result {
        Ok(sd) => subscription_json(&sd),
        Err(e) => error_value(e.to_string()),
    }
}

fn sub_list(v: &Value) -> Result<Vec<SubscriptionData>, String> {
    let arr = v.as_array().ok_or("subList is not an array")?;
    arr.iter()
        .map(|s| {
            let topic = s.get("topic").and_then(Value::as_str).ok_or("topic missing")?;
            let version = s.get("subVersion").and_then(Value::as_u64).ok_or("subVersion missing")?;
            filterapi::build_subscription_data(topic, s.get("subString").and_then(Value::as_str), version)
                .map(|mut sd| {
                    // The table stores the client's subString verbatim.
                    if let Some(raw) = s.get("subString").and_then(Value::as_str) {
                        sd.sub_string = raw.into();
                    }
                    sd
                })
                .map_err(|e| e.to_string())
        })
        .collect()
}

pub fn consumer_group_info(input: &Value) -> Value {
    let mut group = ConsumerGroupInfo::default();
    let mut results = Vec::new();
    let steps = match input.get("steps").and_then(Value::as_array) {
        Some(s) => s,
        None => return error_value("steps missing"),
    };
    for step in steps {
        let op = step.get("op").and_then(Value::as_str).unwrap_or("");
        match op {
            "updateSubscription" => match sub_list(step.get("subList").unwrap_or(&Value::Null)) {
                Ok(list) => {
                    let (updated, _) = group.update_subscription(&list);
                    let mut table = Map::new();
                    for (topic, sd) in &group.subscription_table {
                        table.insert(topic.clone(), json!({ "subString": &*sd.sub_string, "subVersion": sd.sub_version }));
                    }
                    results.push(json!({ "updated": updated, "subscriptionTable": table }));
                }
                Err(e) => {
                    results.push(error_value(e));
                    break;
                }
            },
            "updateChannel" => {
                let channel = step.get("channel").and_then(Value::as_str).unwrap_or("");
                let client = step.get("clientId").and_then(Value::as_str).unwrap_or("");
                let updated = group.update_channel(channel, client, 0);
                results.push(json!({ "updated": updated, "allClientIds": group.all_client_ids() }));
            }
            other => {
                results.push(error_value(format!("unknown op {other}")));
                break;
            }
        }
    }
    json!({ "results": results })
}

pub fn producer_index(input: &Value) -> Value {
    let stored = input.get("storedValueBefore").and_then(Value::as_i64).unwrap_or(0) as i32;
    let calls = input.get("calls").and_then(Value::as_u64).unwrap_or(0).min(1_000_000);
    let mut index = ThreadLocalIndex::with_stored(stored);
    let returns: Vec<i32> = (0..calls).map(|_| index.increment_and_get()).collect();
    let mut positions = Map::new();
    for n in input.get("queueCounts").and_then(Value::as_array).into_iter().flatten() {
        let Some(size) = n.as_i64().filter(|s| *s > 0) else { continue };
        let list: Vec<i64> = returns.iter().map(|r| (*r as i64 % size).abs()).collect();
        positions.insert(size.to_string(), json!(list));
    }
    json!({ "returns": returns, "queuePositions": positions })
}

/// `{"key": string}` -> `{"hash": first 4 bytes of MD5(UTF-8 key), unsigned big-endian}`.
pub fn md5_hash(input: &Value) -> Value {
    match input.get("key").and_then(Value::as_str) {
        Some(key) => serde_json::json!({ "hash": mqviz_engine::hash::md5::rocketmq_md5_hash(key) }),
        None => error_value("malformed input: key must be a string"),
    }
}

/// The RocketMQ kinds this build runs.
pub const KINDS: &[&str] = &[
    "rocketmq.allocate",
    "rocketmq.filterapi",
    "rocketmq.consumer_group_info",
    "rocketmq.producer_index",
    "rocketmq.md5_hash",
    "rocketmq.sql92",
    "rocketmq.bloom",
];

/// Runs one case of a RocketMQ kind; `Err` for a kind that is not one.
pub fn run(kind: &str, input: &Value) -> Result<Value, String> {
    Ok(match kind {
        "rocketmq.allocate" => allocate::run(input),
        "rocketmq.filterapi" => filterapi(input),
        "rocketmq.consumer_group_info" => consumer_group_info(input),
        "rocketmq.producer_index" => producer_index(input),
        "rocketmq.md5_hash" => md5_hash(input),
        "rocketmq.sql92" => sql92::run(input),
        "rocketmq.bloom" => bloom::run(input),
        other => return Err(format!("kind {other} is not a RocketMQ kind")),
    })
}

/// check.py's normalisation for the RocketMQ kinds: their declared sets sorted.
pub fn normalise(kind: &str, v: &mut Value) {
    match kind {
        "rocketmq.filterapi" => {
            if let Value::Object(m) = v {
                if !m.contains_key("error") {
                    for k in ["tagsSet", "codeSet"] {
                        if let Some(x) = m.get_mut(k) {
                            sort_set(x);
                        }
                    }
                }
            }
        }
        "rocketmq.consumer_group_info" => {
            if let Some(Value::Array(results)) = v.get_mut("results") {
                for r in results {
                    if let Some(x) = r.get_mut("allClientIds") {
                        sort_set(x);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Whether `actual` matches `expected` under check.py's rules for the RocketMQ `kind`.
pub fn matches(kind: &str, expected: &Value, actual: &Value) -> bool {
    matches_with(normalise, kind, expected, actual)
}
