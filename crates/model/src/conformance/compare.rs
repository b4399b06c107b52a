//! check.py's comparison rules: each model's normalisation of its declared sets, then strict deep
//! equality where numbers compare numerically and `{"error": E}` matches any text starting with E.

use mqviz_engine::sort::StableSort;
use serde_json::Value;

/// Sorts a declared set (an array whose order upstream does not define) into a fixed order.
pub fn sort_set(v: &mut Value) {
    if let Value::Array(items) = v {
        items.stable_sort_by_key(|x| x.to_string());
    }
}

fn error_text(v: &Value) -> Option<&str> {
    match v {
        Value::Object(m) if m.len() == 1 => m.get("error").and_then(Value::as_str),
        _ => None,
    }
}

/// check.py's strict deep equality: numbers compare numerically, and `{"error": E}` matches any
/// error whose text starts with E.
pub fn same(exp: &Value, act: &Value) -> bool {
    if let Some(e) = error_text(exp) {
        return error_text(act).is_some_and(|a| a.starts_with(e));
    }
    match (exp, act) {
        (Value::Object(e), Value::Object(a)) => {
            e.len() == a.len() && e.iter().all(|(k, ev)| a.get(k).is_some_and(|av| same(ev, av)))
        }
        (Value::Array(e), Value::Array(a)) => e.len() == a.len() && e.iter().zip(a).all(|(x, y)| same(x, y)),
        (Value::Number(e), Value::Number(a)) => match (e.as_i64(), a.as_i64(), e.as_u64(), a.as_u64()) {
            (Some(x), Some(y), _, _) => x == y,
            (_, _, Some(x), Some(y)) => x == y,
            _ => e.as_f64() == a.as_f64(),
        },
        (Value::Bool(e), Value::Bool(a)) => e == a,
        (Value::String(e), Value::String(a)) => e == a,
        (Value::Null, Value::Null) => true,
        _ => false,
    }
}

/// Whether `actual` matches `expected` under the rules of `kind`: both normalised by the model's
/// `normalise` (its declared sets sorted), then `same`.
pub fn matches_with(normalise: fn(&str, &mut Value), kind: &str, expected: &Value, actual: &Value) -> bool {
    let (mut e, mut a) = (expected.clone(), actual.clone());
    normalise(kind, &mut e);
    normalise(kind, &mut a);
    same(&e, &a)
}

#[cfg(test)]
mod tests {
    use super::same as matches;
    use serde_json::json;

    #[test]
    fn matcher_follows_check_py() {
        assert!(matches(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!matches(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!matches(&json!(true), &json!(1)));
        assert!(matches(&json!({"error": "IllegalArgumentException"}), &json!({"error": "IllegalArgumentException: x"})));
        assert!(!matches(&json!({"error": "IllegalArgumentException: x"}), &json!({"error": "IllegalArgument"})));
        assert!(!matches(&json!({"error": "E"}), &json!({"error": "E", "more": 1})));
        assert!(!matches(&json!(["a", "b"]), &json!(["b", "a"])));
    }
}
