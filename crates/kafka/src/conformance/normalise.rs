//! check.py's normalisation for the Kafka kinds: declared sets are sorted and a topic with an
//! empty partition list counts as absent. The `kafka.subscription_state` queries that answer
//! with a list (`subscription`, `assignedPartitions`) are its only list results, so every list
//! result is treated as a set.

use mqviz_model::conformance::sort_set;
use serde_json::Value;

fn is_error(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.len() == 1 && m.get("error").is_some_and(Value::is_string))
}

fn topic_map(v: &mut Value) {
    if is_error(v) {
        return;
    }
    if let Value::Object(m) = v {
        m.retain(|_, ps| !matches!(ps, Value::Array(list) if list.is_empty()));
        m.values_mut().for_each(sort_set);
    }
}

/// Normalises `v` in place for a Kafka kind.
pub fn normalise(kind: &str, v: &mut Value) {
    match kind {
        "kafka.assignor" if !is_error(v) => {
            if let Value::Object(members) = v {
                members.values_mut().for_each(topic_map);
            }
        }
        "kafka.reconciliation" => {
            if let Value::Object(m) = v {
                for key in ["assigned", "pendingRevocation"] {
                    if let Some(x) = m.get_mut(key) {
                        topic_map(x);
                    }
                }
            }
        }
        "kafka.subscription_state" => {
            if let Some(Value::Array(results)) = v.get_mut("results") {
                results.iter_mut().for_each(sort_set);
            }
        }
        _ => {}
    }
}
