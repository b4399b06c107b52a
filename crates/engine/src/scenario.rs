//! The scenario envelope (`docs/scenario-format.md`): the fields every broker model shares.
//!
//! The envelope knows no broker. It reads `format`, `broker`, `name`, `description`, `seed`,
//! `until` and `network`, and hands the rest of the same JSON object to the model that
//! `mqviz_model` picks by the `broker` name. Each model reads its own fields from that object and
//! reports unknown ones, so a scenario is validated as one document with one set of JSON paths.
//!
//! A run is fully described by the scenario, its seed and the timed commands entered during it
//! (timeline entries in the model's JSON form), so edits made in the UI are just more timeline
//! entries.

use serde_json::Value;

use crate::json_path::{as_str, Errors, Obj};
use crate::Millis;

pub const FORMAT: &str = "mqviz-scenario/1";

/// Upper bounds shared by every model: they keep a hostile or mistaken scenario from exhausting
/// memory or time.
pub const MAX_TIME: u64 = 10_000_000_000; // ~115 days of logical time
pub const MAX_ENTITIES: usize = 20_000;
pub const MAX_LATENCY: u64 = 600_000;
/// 16.7 M (2^24): a RocketMQ message keeps its index within its send (`{i}`) in 24 bits, which
/// keeps it at 48 bytes. Longer scripts are several sends (an hour at 10,000 a second, 36 M, is
/// three); the scenario's total and the memory budget bound the rest.
pub const MAX_MESSAGES_PER_SEND: u64 = 1 << 24;
pub const MAX_MESSAGES_TOTAL: u64 = 50_000_000;

/// The shared part of every scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// The model's name as written (`rocketmq` when absent); `mqviz_model` resolves it.
    pub broker: String,
    pub name: String,
    pub description: String,
    pub seed: u64,
    /// Where the scenario's story ends (the run may continue past it).
    pub until: Millis,
    /// Default one-way latency of every link.
    pub latency_ms: Millis,
    /// A variant to show side by side when the scenario opens: its label and a JSON merge patch
    /// (RFC 7386) applied to this document.
    pub compare: Option<(String, Value)>,
}

/// Reads the envelope fields of a scenario object. Returns the envelope and the object reader,
/// positioned so that the model reads its own fields and then calls `finish`.
pub fn read_envelope<'a>(v: &'a Value, e: &mut Errors) -> Option<(Envelope, Obj<'a>)> {
    let mut o = Obj::new(v, "$", e)?;
    match o.req_str("format", e) {
        Some(FORMAT) | None => {}
        Some(other) => e.push("$.format", format!("unsupported format {other:?} (expected {FORMAT:?})")),
    }
    let broker = o.str("broker", e).unwrap_or("rocketmq").to_string();
    let name = o.str("name", e).unwrap_or("untitled").to_string();
    let description = o.str("description", e).unwrap_or("").to_string();
    let seed = o.u64_in("seed", 0, u64::MAX, e).unwrap_or(0);
    let until = o.req_u64_in("until", 1, MAX_TIME, e).unwrap_or(1);
    let latency_ms = match o.get("network") {
        Some(n) => {
            let path = o.child_path("network");
            Obj::new(n, &path, e)
                .map(|mut n| {
                    let l = n.u64_in("latencyMs", 0, MAX_LATENCY, e).unwrap_or(1);
                    n.finish(e);
                    l
                })
                .unwrap_or(1)
        }
        None => 1,
    };
    let compare = match o.get("compare") {
        Some(c) => {
            let path = o.child_path("compare");
            Obj::new(c, &path, e).and_then(|mut c| {
                let label = c.req_str("label", e).map(str::to_string);
                let patch = c.required("patch", e).cloned();
                if patch.as_ref().is_some_and(|p| !p.is_object()) {
                    e.push(&format!("{path}.patch"), "expected an object (a JSON merge patch of this scenario)");
                }
                c.finish(e);
                Some((label?, patch?))
            })
        }
        None => None,
    };
    Some((Envelope { broker, name, description, seed, until, latency_ms, compare }, o))
}

/// Applies a JSON merge patch (RFC 7386): objects merge key by key, `null` removes a key, any
/// other value replaces what was there.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    let Value::Object(t) = target else { return };
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// The variant a scenario asks to be compared with, built from its `compare` field (the field
/// itself removed from both): `(label, variant)`.
pub fn compare_variant(scenario: &Value) -> Option<(String, Value)> {
    let c = scenario.get("compare")?;
    let label = c.get("label")?.as_str()?.to_string();
    let mut variant = scenario.clone();
    if let Some(o) = variant.as_object_mut() {
        o.remove("compare");
    }
    merge_patch(&mut variant, c.get("patch")?);
    Some((label, variant))
}

/// The `broker` field of a scenario document, without validating anything else (so a model
/// registry can pick the parser before reading the rest).
pub fn broker_name(v: &Value) -> &str {
    v.get("broker").and_then(Value::as_str).unwrap_or("rocketmq")
}

/// A list field, refused whole when it has more than `MAX_ENTITIES` entries.
pub fn bounded<'a>(items: Vec<(String, &'a Value)>, path: &str, e: &mut Errors) -> Vec<(String, &'a Value)> {
    if items.len() > MAX_ENTITIES {
        e.push(path, format!("too many entries ({}, at most {MAX_ENTITIES})", items.len()));
        return Vec::new();
    }
    items
}

/// `s` unless it is blank, which is reported at `path`.
pub fn non_empty(s: String, path: &str, e: &mut Errors) -> Option<String> {
    if s.trim().is_empty() {
        e.push(path, "must not be empty");
        None
    } else {
        Some(s)
    }
}

/// A timeline action's consumer, by its scenario name. `clientId` is the older spelling of the
/// same reference: a consumer's name defaults to its clientId, so scenarios written before names
/// existed keep working.
pub fn consumer_reference(o: &mut Obj, path: &str, e: &mut Errors) -> Option<String> {
    match (o.str("consumer", e), o.str("clientId", e)) {
        (Some(n), None) | (None, Some(n)) => Some(n.to_string()),
        (Some(_), Some(_)) => {
            e.push(path, "give either \"consumer\" or \"clientId\", not both");
            None
        }
        (None, None) => {
            e.push(path, "missing field \"consumer\" (the consumer's name)");
            None
        }
    }
}

/// Consumers may share a clientId (it is a label), so the scenario tells them apart by name.
pub fn duplicate_consumer_name(name: &str) -> String {
    format!("duplicate consumer name {name:?} (consumers may share a clientId, but each needs its own \"name\")")
}

/// An optional array of strings.
pub fn string_list(o: &mut Obj, key: &'static str, e: &mut Errors) -> Vec<String> {
    o.array(key, e).into_iter().filter_map(|(p, v)| as_str(v, &p, e).map(str::to_string)).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let mut t = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]});
        merge_patch(&mut t, &json!({"a": "z", "c": {"f": null}, "l": [3], "n": {"x": 1}}));
        assert_eq!(t, json!({"a": "z", "c": {"d": "e"}, "l": [3], "n": {"x": 1}}));
    }

    #[test]
    fn a_scenario_names_its_comparison() {
        let s = json!({"name": "n", "groups": [{"allocation": "AVG"}], "compare": {"label": "hash", "patch": {"name": "n2"}}});
        let (label, v) = compare_variant(&s).unwrap();
        assert_eq!(label, "hash");
        assert_eq!(v, json!({"name": "n2", "groups": [{"allocation": "AVG"}]}));
    }
}
