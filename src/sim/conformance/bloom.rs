use serde_json::Value;

pub fn run(_input: &Value) -> Value {
    super::error_value("not implemented")
}
