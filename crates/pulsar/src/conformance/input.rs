//! Lenient, non-panicking reads of a case `input`: unknown fields are ignored (held-back cases may
//! carry more), missing or mistyped required fields are `Err("input.<key>: ...")`.

use serde_json::Value;

pub type Res<T> = Result<T, String>;

/// A JSON object being read; `path` prefixes error messages.
#[derive(Clone, Copy)]
pub struct In<'a> {
    pub value: &'a Value,
    pub path: &'a str,
}

impl<'a> In<'a> {
    pub fn root(value: &'a Value) -> Res<In<'a>> {
        if !value.is_object() {
            return Err("input is not an object".into());
        }
        Ok(In { value, path: "input" })
    }

    pub fn op(&self) -> Res<&'a str> {
        self.str("op")
    }

    fn missing(&self, key: &str, what: &str) -> String {
        format!("{}.{key}: missing or not {what}", self.path)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.value.get(key).filter(|v| !v.is_null())
    }

    pub fn str(&self, key: &str) -> Res<&'a str> {
        self.get(key).and_then(Value::as_str).ok_or_else(|| self.missing(key, "a string"))
    }

    pub fn opt_str(&self, key: &str) -> Res<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or_else(|| self.missing(key, "a string")),
        }
    }

    pub fn i64(&self, key: &str) -> Res<i64> {
        self.get(key).and_then(Value::as_i64).ok_or_else(|| self.missing(key, "an integer"))
    }

    pub fn opt_i64(&self, key: &str) -> Res<Option<i64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| self.missing(key, "an integer")),
        }
    }

    /// An integer within `[lo, hi]`.
    pub fn int_in(&self, key: &str, lo: i64, hi: i64) -> Res<i64> {
        let v = self.i64(key)?;
        if v < lo || v > hi {
            return Err(format!("{}.{key}: {v} is outside [{lo}, {hi}]", self.path));
        }
        Ok(v)
    }

    pub fn bool_or(&self, key: &str, default: bool) -> Res<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| self.missing(key, "a boolean")),
        }
    }

    pub fn array(&self, key: &str) -> Res<&'a Vec<Value>> {
        self.get(key).and_then(Value::as_array).ok_or_else(|| self.missing(key, "a list"))
    }

    pub fn opt_array(&self, key: &str) -> Res<Option<&'a Vec<Value>>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_array().map(Some).ok_or_else(|| self.missing(key, "a list")),
        }
    }

    pub fn strings(&self, key: &str) -> Res<Vec<&'a str>> {
        self.array(key)?
            .iter()
            .map(|v| v.as_str().ok_or_else(|| format!("{}.{key}: entries must be strings", self.path)))
            .collect()
    }

    pub fn ints(&self, key: &str) -> Res<Vec<i64>> {
        self.array(key)?
            .iter()
            .map(|v| v.as_i64().ok_or_else(|| format!("{}.{key}: entries must be integers", self.path)))
            .collect()
    }

    /// A nested object.
    pub fn object(&self, key: &str, path: &'a str) -> Res<In<'a>> {
        let v = self.get(key).filter(|v| v.is_object()).ok_or_else(|| self.missing(key, "an object"))?;
        Ok(In { value: v, path })
    }

    /// An element of a list, as an object.
    pub fn item(value: &'a Value, path: &'a str) -> Res<In<'a>> {
        if !value.is_object() {
            return Err(format!("{path}: not an object"));
        }
        Ok(In { value, path })
    }
}

/// A JSON integer as a non-negative `u32`.
pub fn as_u32(v: &Value, what: &str) -> Res<u32> {
    v.as_i64().and_then(|i| u32::try_from(i).ok()).ok_or_else(|| format!("{what}: not an integer in [0, 2^32)"))
}

/// Integer ranges `[[start, end], ...]` within `[0, 2^32)`.
pub fn ranges(v: &Value, what: &str) -> Res<Vec<(u32, u32)>> {
    let list = v.as_array().ok_or_else(|| format!("{what}: not a list"))?;
    list.iter()
        .map(|r| match r.as_array().map(Vec::as_slice) {
            Some([s, e]) => Ok((as_u32(s, what)?, as_u32(e, what)?)),
            _ => Err(format!("{what}: ranges are [start, end]")),
        })
        .collect()
}
