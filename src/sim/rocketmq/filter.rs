//! Broker-side SQL92 evaluation against a stored message (`isMatchedByCommitLog`), with compiled
//! expressions cached by their text.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::store::Message;

/// A compiled SQL92 expression (placeholder until the SQL92 module lands).
#[derive(Clone, Debug)]
pub struct Compiled {
    pub text: Arc<str>,
}

#[derive(Clone, Debug, Default)]
pub struct FilterCache {
    cache: BTreeMap<String, Result<Compiled, String>>,
}

impl FilterCache {
    pub fn compile(&mut self, expr: &str) -> Result<Compiled, String> {
        if let Some(r) = self.cache.get(expr) {
            return r.clone();
        }
        let r = Err("SQL92 filtering is not available in this build".to_string());
        self.cache.insert(expr.to_string(), r.clone());
        r
    }
}

/// The message's properties as the broker sees them: user properties plus system ones, all Strings.
pub fn property<'a>(m: &'a Message, key: &str) -> Option<std::borrow::Cow<'a, str>> {
    match key {
        "TAGS" => m.tag.as_deref().map(Into::into),
        "KEYS" => m.keys.as_deref().map(Into::into),
        "WAIT" => Some("true".into()),
        _ => m.properties.get(key).map(|s| s.as_str().into()),
    }
}

pub fn matches_sql(_expr: &Compiled, _m: &Message) -> bool {
    false
}
