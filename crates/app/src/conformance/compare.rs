//! check.py's comparison rules: per-kind normalisation of declared sets, then strict deep
//! equality where numbers compare numerically and `{"error": E}` matches any text starting with E.

use mqviz_engine::sort::StableSort;
use serde_json::Value;

fn sort_set(v: &mut Value) {
    if let Value::Array(items) = v {
        items.stable_sort_by_key(|x| x.to_string());
    }
}

fn normalise(kind: &str, v: &Value) -> Value {
    let mut v = v.clone();
    match kind {
        "rocketmq.filterapi" => {
            if let Value::Object(m) = &mut v {
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
        pulsar_kind if pulsar_kind.starts_with("pulsar.") => super::pulsar::normalise(pulsar_kind, &mut v),
        k if k.starts_with("kafka.") => super::kafka::normalise(k, &mut v),
        _ => {}
    }
    v
}

fn error_text(v: &Value) -> Option<&str> {
    match v {
        Value::Object(m) if m.len() == 1 => m.get("error").and_then(Value::as_str),
        _ => None,
    }
}

fn deep(exp: &Value, act: &Value) -> bool {
    if let Some(e) = error_text(exp) {
        return error_text(act).is_some_and(|a| a.starts_with(e));
    }
    match (exp, act) {
        (Value::Object(e), Value::Object(a)) => {
            e.len() == a.len() && e.iter().all(|(k, ev)| a.get(k).is_some_and(|av| deep(ev, av)))
        }
        (Value::Array(e), Value::Array(a)) => e.len() == a.len() && e.iter().zip(a).all(|(x, y)| deep(x, y)),
        (Value::Number(e), Value::Number(a)) => match (e.as_i64(), a.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => e.as_f64() == a.as_f64(),
        },
        (Value::Bool(e), Value::Bool(a)) => e == a,
        (Value::String(e), Value::String(a)) => e == a,
        (Value::Null, Value::Null) => true,
        _ => false,
    }
}

/// Whether `actual` matches `expected` under the rules of `kind`.
pub fn matches(kind: &str, expected: &Value, actual: &Value) -> bool {
    deep(&normalise(kind, expected), &normalise(kind, actual))
}
