//! Whether a document needs the SQL92 engine, which the page fetches on demand
//! (`rocketmq::sql92::Engine`): it must be in place before a run with a SQL92 subscription is
//! built or such a subscription is entered.

use serde_json::Value;

/// Whether a scenario document (with its edits), a command or a timeline entry may name a SQL92
/// subscription: whether the string `"SQL92"`, the only spelling the reader accepts for the
/// expression type, is anywhere in it. A false positive only fetches the engine early.
pub fn uses_sql92(v: &Value) -> bool {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if s == "SQL92" => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_the_type_anywhere() {
        let tag = json!({"groups": [{"consumers": [{"subscriptions": [{"topic": "T", "expression": "SQL92 || TagA"}]}]}]});
        assert!(!uses_sql92(&tag), "an expression that mentions SQL92 is a tag expression");
        let group =
            json!({"groups": [{"consumers": [{"subscriptions": [{"topic": "T", "expression": "a > 1", "type": "SQL92"}]}]}]});
        assert!(uses_sql92(&group));
        let edit = json!({"edits": [{"at": 5, "subscribe": {"consumer": "C", "subscription": {"type": "SQL92"}}}]});
        assert!(uses_sql92(&edit));
        assert!(!uses_sql92(&json!({"type": "sql92"})), "the reader accepts only \"SQL92\"");
    }
}
