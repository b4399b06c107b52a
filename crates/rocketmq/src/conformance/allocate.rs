//! Kind `rocketmq.allocate`: one strategy configuration, `allocate()` called once per entry of
//! `currentCIDs` (shared/conformance/README.md, section 4).

use serde_json::{Map, Value};

use super::error_value;
use crate::allocate::{allocate, Strategy, DEFAULT_VIRTUAL_NODES};
use crate::types::MessageQueue;

/// Runs one case: `{cid: ["broker:id", ...] | {"error": ...}}`, or a single error value when the
/// input is malformed or the strategy cannot be constructed.
pub fn run(input: &Value) -> Value {
    match run_checked(input) {
        Ok(v) => v,
        Err(text) => error_value(text),
    }
}

fn malformed(what: impl std::fmt::Display) -> String {
    format!("malformed input: {what}")
}

fn run_checked(input: &Value) -> Result<Value, String> {
    if !input.is_object() {
        return Err(malformed("input is not an object"));
    }
    // Java null for `topic` concatenates as "null" in MessageQueue.toString().
    let topic = match input.get("topic") {
        None | Some(Value::Null) => "null",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(malformed("topic is not a string")),
    };
    let name = input.get("strategy").and_then(Value::as_str).ok_or_else(|| malformed("strategy is not a string"))?;
    let empty = Value::Object(Map::new());
    let params = match input.get("params") {
        None | Some(Value::Null) => &empty,
        Some(p @ Value::Object(_)) => p,
        Some(_) => return Err(malformed("params is not an object")),
    };
    let strategy = parse_strategy(name, params, topic)?;
    // Java null and an empty list fail the same check.
    let mq_all = match input.get("mqAll") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => parse_queues(v, topic, "mqAll")?,
    };
    let cid_all = match input.get("cidAll") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => parse_strings(v, "cidAll")?,
    };
    let current = parse_strings(input.get("currentCIDs").unwrap_or(&Value::Null), "currentCIDs")?;
    let mut out = Map::new();
    for cid in current {
        let result = match allocate(&strategy, &cid, &mq_all, &cid_all) {
            Ok(list) => Value::Array(list.iter().map(|mq| Value::String(mq.short())).collect()),
            Err(e) => error_value(e.to_string()),
        };
        out.insert(cid, result);
    }
    Ok(Value::Object(out))
}

/// `strategy` + `params`; `Err` holds the error text (malformed input, or the constructor's
/// exception for a negative `virtualNodeCnt`).
fn parse_strategy(name: &str, params: &Value, topic: &str) -> Result<Strategy, String> {
    Ok(match name {
        "AVG" => Strategy::Avg,
        "AVG_BY_CIRCLE" => Strategy::AvgByCircle,
        "CONFIG" => {
            let list = params.get("messageQueueList").ok_or_else(|| malformed("CONFIG needs messageQueueList"))?;
            Strategy::Config { queues: parse_queues(list, topic, "messageQueueList")? }
        }
        "MACHINE_ROOM" => {
            let idcs = params.get("consumeridcs").ok_or_else(|| malformed("MACHINE_ROOM needs consumeridcs"))?;
            Strategy::MachineRoom { consumer_idcs: parse_strings(idcs, "consumeridcs")?.into_iter().collect() }
        }
        "CONSISTENT_HASH" => Strategy::ConsistentHash { virtual_nodes: parse_virtual_nodes(params)? },
        "MACHINE_ROOM_NEARBY" => {
            match params.get("machineRoomOf") {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) if s == "dash-prefix" => {}
                Some(other) => return Err(malformed(format!("unsupported machineRoomOf {other}"))),
            }
            let inner_name =
                params.get("inner").and_then(Value::as_str).ok_or_else(|| malformed("MACHINE_ROOM_NEARBY needs inner"))?;
            if inner_name == "MACHINE_ROOM_NEARBY" {
                return Err(malformed("MACHINE_ROOM_NEARBY cannot nest itself here"));
            }
            let empty = Value::Object(Map::new());
            let inner_params = match params.get("innerParams") {
                None | Some(Value::Null) => &empty,
                Some(p @ Value::Object(_)) => p,
                Some(_) => return Err(malformed("innerParams is not an object")),
            };
            Strategy::MachineRoomNearby { inner: Box::new(parse_strategy(inner_name, inner_params, topic)?) }
        }
        other => return Err(malformed(format!("unknown strategy {other:?}"))),
    })
}

/// `virtualNodeCnt` (default 10). The upstream constructor rejects a negative count.
fn parse_virtual_nodes(params: &Value) -> Result<u32, String> {
    let n = match params.get("virtualNodeCnt") {
        None | Some(Value::Null) => return Ok(DEFAULT_VIRTUAL_NODES),
        Some(v) => v.as_i64().ok_or_else(|| malformed("virtualNodeCnt is not an integer"))?,
    };
    if n < 0 {
        if n < i64::from(i32::MIN) {
            return Err(malformed("virtualNodeCnt is out of int range"));
        }
        return Err(format!("IllegalArgumentException: illegal virtual node counts :{n}"));
    }
    i32::try_from(n).map(|n| n as u32).map_err(|_| malformed("virtualNodeCnt is out of int range"))
}

fn parse_strings(v: &Value, what: &str) -> Result<Vec<String>, String> {
    let items = v.as_array().ok_or_else(|| malformed(format!("{what} is not a list")))?;
    items.iter().map(|s| s.as_str().map(str::to_string).ok_or_else(|| malformed(format!("{what} holds a non-string")))).collect()
}

/// A list of `"brokerName:queueId"` (split at the last `:`).
fn parse_queues(v: &Value, topic: &str, what: &str) -> Result<Vec<MessageQueue>, String> {
    parse_strings(v, what)?.iter().map(|s| parse_queue(s, topic)).collect()
}

fn parse_queue(s: &str, topic: &str) -> Result<MessageQueue, String> {
    let (broker, id) = s.rsplit_once(':').ok_or_else(|| malformed(format!("queue {s:?} is not brokerName:queueId")))?;
    let id: u32 = id.parse().map_err(|_| malformed(format!("queue id of {s:?} is not a non-negative int")))?;
    if id > i32::MAX as u32 {
        return Err(malformed(format!("queue id of {s:?} is out of int range")));
    }
    Ok(MessageQueue::new(topic, broker, id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqviz_model::conformance::{parse_vector_file, same as matches};
    use serde_json::json;
    use std::path::PathBuf;

    fn vector_dir() -> Option<PathBuf> {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance");
        if dir.is_dir() {
            Some(dir)
        } else {
            eprintln!("note: {} not found; vector files skipped", dir.display());
            None
        }
    }

    /// Runs every case of one vector file through the dispatcher; returns (passed, total).
    fn run_file(dir: &std::path::Path, name: &str) -> (usize, usize) {
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let file = parse_vector_file(name, &text).unwrap();
        let mut failures = Vec::new();
        for (id, input, expected) in &file.cases {
            let actual = super::super::run(&file.kind, input).unwrap();
            if !matches(expected, &actual) {
                failures.push(format!("{id}: expected {expected} | actual {actual}"));
            }
        }
        let total = file.cases.len();
        eprintln!("{name} [{}]: {total} cases, {} passed", file.kind, total - failures.len());
        assert!(failures.is_empty(), "{name}: {} failures:\n{}", failures.len(), failures.join("\n"));
        (total - failures.len(), total)
    }

    #[test]
    fn allocate_vectors() {
        let Some(dir) = vector_dir() else { return };
        let (passed, total) = run_file(&dir, "rocketmq.allocate.json");
        assert_eq!(passed, total);
        assert!(total >= 20);
    }

    #[test]
    fn allocate_sample_vectors() {
        let Some(dir) = vector_dir() else { return };
        let (passed, total) = run_file(&dir, "rocketmq.allocate-sample.json");
        assert_eq!(passed, total);
        assert!(total >= 500);
    }

    #[test]
    fn md5_hash_vectors() {
        let Some(dir) = vector_dir() else { return };
        let (passed, total) = run_file(&dir, "rocketmq.md5_hash.json");
        assert_eq!(passed, total);
        assert!(total >= 10);
    }

    #[test]
    fn shapes_and_java_nulls() {
        let out = run(&json!({
            "strategy": "AVG", "params": {}, "topic": "T",
            "mqAll": ["b:x:0", "b:x:1", "c:2"], "cidAll": ["c1", "c2"], "currentCIDs": ["c1", "c2", "", "zz"]
        }));
        assert_eq!(
            out,
            json!({"c1": ["b:x:0", "b:x:1"], "c2": ["c:2"], "": {"error": "IllegalArgumentException: currentCID is empty"}, "zz": []})
        );
        let out = run(&json!({
            "strategy": "AVG_BY_CIRCLE", "params": {}, "topic": null, "mqAll": null, "cidAll": null, "currentCIDs": ["a"]
        }));
        assert_eq!(out, json!({"a": {"error": "IllegalArgumentException: mqAll is null or mqAll empty"}}));
        let out = run(&json!({
            "strategy": "CONFIG", "params": {"messageQueueList": ["b:1"]}, "topic": null, "mqAll": null,
            "cidAll": null, "currentCIDs": [""]
        }));
        assert_eq!(out, json!({"": ["b:1"]}));
        let out = run(&json!({
            "strategy": "CONSISTENT_HASH", "params": {"virtualNodeCnt": -1}, "topic": "T", "mqAll": ["b:1"],
            "cidAll": ["a"], "currentCIDs": ["a"]
        }));
        assert_eq!(out, json!({"error": "IllegalArgumentException: illegal virtual node counts :-1"}));
        let out = run(&json!({
            "strategy": "MACHINE_ROOM_NEARBY",
            "params": {"inner": "CONSISTENT_HASH", "innerParams": {"virtualNodeCnt": 10}, "machineRoomOf": "dash-prefix"},
            "topic": "T", "mqAll": ["IDC1-b:0", "-b:1"], "cidAll": ["IDC1-a"], "currentCIDs": ["IDC1-a"]
        }));
        assert_eq!(
            out,
            json!({"IDC1-a": {"error":
                "IllegalArgumentException: Machine room is null for mq MessageQueue [topic=T, brokerName=-b, queueId=1]"}})
        );
    }

    #[test]
    fn malformed_inputs_give_errors() {
        let bad = [
            json!(null),
            json!([]),
            json!({}),
            json!({"strategy": 3}),
            json!({"strategy": "STICKY", "currentCIDs": []}),
            json!({"strategy": "AVG", "params": [], "currentCIDs": []}),
            json!({"strategy": "AVG", "mqAll": ["no-colon"], "cidAll": [], "currentCIDs": []}),
            json!({"strategy": "AVG", "mqAll": ["b:-1"], "cidAll": [], "currentCIDs": []}),
            json!({"strategy": "AVG", "mqAll": ["b:99999999999"], "cidAll": [], "currentCIDs": []}),
            json!({"strategy": "AVG", "mqAll": [1], "cidAll": [], "currentCIDs": []}),
            json!({"strategy": "AVG", "mqAll": [], "cidAll": [null], "currentCIDs": []}),
            json!({"strategy": "AVG", "mqAll": [], "cidAll": [], "currentCIDs": "a"}),
            json!({"strategy": "AVG", "mqAll": [], "cidAll": []}),
            json!({"strategy": "CONFIG", "params": {}, "currentCIDs": []}),
            json!({"strategy": "CONFIG", "params": {"messageQueueList": null}, "currentCIDs": []}),
            json!({"strategy": "MACHINE_ROOM", "params": {"consumeridcs": "x"}, "currentCIDs": []}),
            json!({"strategy": "CONSISTENT_HASH", "params": {"virtualNodeCnt": 1.5}, "currentCIDs": []}),
            json!({"strategy": "CONSISTENT_HASH", "params": {"virtualNodeCnt": 3_000_000_000u64}, "currentCIDs": []}),
            json!({"strategy": "MACHINE_ROOM_NEARBY", "params": {"inner": "AVG", "machineRoomOf": "at-prefix"}, "currentCIDs": []}),
            json!({"strategy": "MACHINE_ROOM_NEARBY", "params": {"inner": "NOPE"}, "currentCIDs": []}),
            json!({"strategy": "MACHINE_ROOM_NEARBY", "params": {}, "currentCIDs": []}),
            json!({"strategy": "AVG", "topic": 5, "currentCIDs": []}),
        ];
        for input in bad {
            let out = run(&input);
            let text = out.get("error").and_then(Value::as_str);
            assert!(text.is_some_and(|t| t.starts_with("malformed input")), "{input} -> {out}");
        }
        // Defaults: missing virtualNodeCnt is 10, missing params is {}.
        let out = run(&json!({"strategy": "CONSISTENT_HASH", "topic": "topic_test",
            "mqAll": ["brokerName:0"], "cidAll": ["CID-0"], "currentCIDs": ["CID-0"]}));
        assert_eq!(out, json!({"CID-0": ["brokerName:0"]}));
    }
}
