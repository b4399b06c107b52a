//! What every model's conformance runner shares: reading a vector file of the shared conformance
//! vectors (`shared/conformance/`, format `mqviz-conformance/1`), the error value, and check.py's
//! comparison. Each model runs its own kinds (`mqviz_<model>::conformance`); `mqviz_app::conformance`
//! dispatches a kind to its model.
//!
//! Each kind maps a case `input` to an `actual` value shaped like `expected`; failures that
//! upstream reports as exceptions become `{"error": "<Class>: <message>"}`.

mod compare;

use serde_json::{json, Value};

pub use compare::{matches_with, same, sort_set};

/// The value of a case that upstream answers with an exception.
pub fn error_value(text: impl Into<String>) -> Value {
    json!({ "error": text.into() })
}

/// One vector file, parsed.
pub struct VectorFile {
    pub file: String,
    pub kind: String,
    /// (id, input, expected) per case.
    pub cases: Vec<(String, Value, Value)>,
}

/// Parses a vector file's text; `name` is its basename. A model whose runner needs something of
/// `expected` in its input (Pulsar's `defaults`) adds it after reading.
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
        out.push((id.to_string(), input, expected));
    }
    Ok(VectorFile { file: name.to_string(), kind, cases: out })
}

/// The vector file `name` of `shared/conformance/` beside the repository, parsed; `None` when the
/// shared folder is not there (a model crate's tests then skip the file).
#[cfg(not(target_arch = "wasm32"))]
pub fn shared_vector_file(name: &str) -> Option<VectorFile> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance").join(name);
    let text = std::fs::read_to_string(&path).ok()?;
    Some(parse_vector_file(name, &text).unwrap_or_else(|e| panic!("{e}")))
}
