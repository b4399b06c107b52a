//! Strict JSON reading with paths: every problem is reported as `$.a.b[2].c: reason`, unknown
//! fields are errors, and reading never panics. Errors accumulate so a user sees all of them.

use crate::sort::StableSort;
use std::fmt;

use serde_json::{Map, Value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Collects every error found while reading one document.
#[derive(Default, Debug)]
pub struct Errors {
    pub list: Vec<PathError>,
}

impl Errors {
    pub fn push(&mut self, path: &str, message: impl Into<String>) {
        // Bounded: a hostile document must not make the error list itself huge.
        if self.list.len() < 200 {
            self.list.push(PathError { path: path.to_string(), message: message.into() });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Parses JSON text; syntax errors carry line and column.
pub fn parse_json(text: &str) -> Result<Value, PathError> {
    serde_json::from_str(text).map_err(|e| PathError {
        path: "$".to_string(),
        message: format!("invalid JSON at line {}, column {}: {}", e.line(), e.column(), e),
    })
}

pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON object being read field by field; `finish` reports fields nobody asked for.
pub struct Obj<'a> {
    pub path: String,
    map: &'a Map<String, Value>,
    allowed: Vec<&'static str>,
}

impl<'a> Obj<'a> {
    /// Reads `v` as an object; on a type error records it and returns `None`.
    pub fn new(v: &'a Value, path: &str, errors: &mut Errors) -> Option<Obj<'a>> {
        match v {
            Value::Object(map) => Some(Obj { path: path.to_string(), map, allowed: Vec::new() }),
            other => {
                errors.push(path, format!("expected an object, found {}", type_name(other)));
                None
            }
        }
    }

    pub fn child_path(&self, key: &str) -> String {
        if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !key.is_empty() {
            format!("{}.{}", self.path, key)
        } else {
            format!("{}[{:?}]", self.path, key)
        }
    }

    pub fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.allowed.push(key);
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn required(&mut self, key: &'static str, errors: &mut Errors) -> Option<&'a Value> {
        let v = self.get(key);
        if v.is_none() {
            errors.push(&self.child_path(key), "required field is missing");
        }
        v
    }

    pub fn str(&mut self, key: &'static str, errors: &mut Errors) -> Option<&'a str> {
        let path = self.child_path(key);
        self.get(key).and_then(|v| as_str(v, &path, errors))
    }

    pub fn req_str(&mut self, key: &'static str, errors: &mut Errors) -> Option<&'a str> {
        let path = self.child_path(key);
        self.required(key, errors).and_then(|v| as_str(v, &path, errors))
    }

    pub fn u64_in(&mut self, key: &'static str, lo: u64, hi: u64, errors: &mut Errors) -> Option<u64> {
        let path = self.child_path(key);
        self.get(key).and_then(|v| as_u64_in(v, &path, lo, hi, errors))
    }

    pub fn req_u64_in(&mut self, key: &'static str, lo: u64, hi: u64, errors: &mut Errors) -> Option<u64> {
        let path = self.child_path(key);
        self.required(key, errors).and_then(|v| as_u64_in(v, &path, lo, hi, errors))
    }

    pub fn bool(&mut self, key: &'static str, errors: &mut Errors) -> Option<bool> {
        let path = self.child_path(key);
        match self.get(key) {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                errors.push(&path, format!("expected a boolean, found {}", type_name(other)));
                None
            }
        }
    }

    pub fn array(&mut self, key: &'static str, errors: &mut Errors) -> Vec<(String, &'a Value)> {
        let path = self.child_path(key);
        match self.get(key) {
            None => Vec::new(),
            Some(Value::Array(items)) => items.iter().enumerate().map(|(i, v)| (format!("{path}[{i}]"), v)).collect(),
            Some(other) => {
                errors.push(&path, format!("expected an array, found {}", type_name(other)));
                Vec::new()
            }
        }
    }

    /// Reports unknown fields.
    pub fn finish(self, errors: &mut Errors) {
        for key in self.map.keys() {
            if !self.allowed.iter().any(|a| a == key) {
                let mut known = self.allowed.clone();
                known.stable_sort();
                known.dedup();
                errors.push(&self.child_path(key), format!("unknown field (expected one of: {})", known.join(", ")));
            }
        }
    }
}

pub fn as_str<'a>(v: &'a Value, path: &str, errors: &mut Errors) -> Option<&'a str> {
    match v {
        Value::String(s) => Some(s),
        other => {
            errors.push(path, format!("expected a string, found {}", type_name(other)));
            None
        }
    }
}

pub fn as_u64_in(v: &Value, path: &str, lo: u64, hi: u64, errors: &mut Errors) -> Option<u64> {
    match v {
        Value::Number(n) => match n.as_u64() {
            Some(x) if (lo..=hi).contains(&x) => Some(x),
            Some(x) => {
                errors.push(path, format!("{x} is out of range {lo}..={hi}"));
                None
            }
            None => {
                errors.push(path, format!("expected a whole number in {lo}..={hi}, found {n}"));
                None
            }
        },
        other => {
            errors.push(path, format!("expected a number, found {}", type_name(other)));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_and_types_are_reported_with_paths() {
        let v = parse_json(r#"{"a": "x", "b": -1, "zzz": 1}"#).unwrap();
        let mut e = Errors::default();
        let mut o = Obj::new(&v, "$", &mut e).unwrap();
        o.str("a", &mut e);
        o.u64_in("b", 0, 10, &mut e);
        o.finish(&mut e);
        let text: Vec<String> = e.list.iter().map(|x| x.to_string()).collect();
        assert!(text.iter().any(|t| t.starts_with("$.b: expected a whole number")), "{text:?}");
        assert!(text.iter().any(|t| t.starts_with("$.zzz: unknown field")), "{text:?}");
    }

    #[test]
    fn syntax_errors_have_positions() {
        let err = parse_json("{\n  \"a\": ,\n}").unwrap_err();
        assert!(err.message.contains("line 2"), "{}", err.message);
    }
}
