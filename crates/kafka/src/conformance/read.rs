//! Small typed readers over `serde_json::Value` for the Kafka runners; errors name the field.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

pub fn object<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, String> {
    v.as_object().ok_or_else(|| format!("{what}: expected an object"))
}

pub fn array<'a>(v: &'a Value, what: &str) -> Result<&'a Vec<Value>, String> {
    v.as_array().ok_or_else(|| format!("{what}: expected an array"))
}

pub fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("{key}: missing"))
}

pub fn string(v: &Value, what: &str) -> Result<String, String> {
    v.as_str().map(str::to_string).ok_or_else(|| format!("{what}: expected a string"))
}

pub fn opt_string(v: Option<&Value>, what: &str) -> Result<Option<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(s) => string(s, what).map(Some),
    }
}

pub fn i64_of(v: &Value, what: &str) -> Result<i64, String> {
    v.as_i64().ok_or_else(|| format!("{what}: expected an integer"))
}

pub fn i32_of(v: &Value, what: &str) -> Result<i32, String> {
    i32::try_from(i64_of(v, what)?).map_err(|_| format!("{what}: out of int range"))
}

pub fn opt_i32(v: Option<&Value>, what: &str) -> Result<Option<i32>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(x) => i32_of(x, what).map(Some),
    }
}

pub fn opt_i64(v: Option<&Value>, what: &str) -> Result<Option<i64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(x) => i64_of(x, what).map(Some),
    }
}

pub fn strings(v: &Value, what: &str) -> Result<Vec<String>, String> {
    array(v, what)?.iter().enumerate().map(|(i, s)| string(s, &format!("{what}[{i}]"))).collect()
}

pub fn ints(v: &Value, what: &str) -> Result<Vec<i32>, String> {
    array(v, what)?.iter().enumerate().map(|(i, x)| i32_of(x, &format!("{what}[{i}]"))).collect()
}

/// `{topic: [partitions]}` in the map's key order.
pub fn topic_lists(v: &Value, what: &str) -> Result<Vec<(String, Vec<i32>)>, String> {
    object(v, what)?.iter().map(|(t, ps)| Ok((t.clone(), ints(ps, &format!("{what}.{t}"))?))).collect()
}

/// `{topic: [partitions]}` as sets.
pub fn topic_sets(v: &Value, what: &str) -> Result<BTreeMap<String, BTreeSet<i32>>, String> {
    Ok(topic_lists(v, what)?.into_iter().map(|(t, ps)| (t, ps.into_iter().collect())).collect())
}

pub fn topic_sets_json(m: &BTreeMap<String, BTreeSet<i32>>) -> Value {
    Value::Object(m.iter().map(|(t, ps)| (t.clone(), Value::from(ps.iter().copied().collect::<Vec<i32>>()))).collect())
}
