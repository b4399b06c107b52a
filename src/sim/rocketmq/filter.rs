//! Broker-side SQL92 evaluation against a stored message (`isMatchedByCommitLog`), with compiled
//! expressions cached by their text (upstream caches parses, errors included).

use std::collections::BTreeMap;

use super::sql92::{self, Expression, PropRef, Properties, Sql92Version};
use super::store::Message;

#[derive(Clone, Debug, Default)]
pub struct FilterCache {
    cache: BTreeMap<String, Result<Expression, String>>,
}

impl FilterCache {
    pub fn compile(&mut self, expr: &str) -> Result<Expression, String> {
        if let Some(r) = self.cache.get(expr) {
            return r.clone();
        }
        let r = sql92::compile(expr, Sql92Version::V5).map_err(|e| e.to_string());
        self.cache.insert(expr.to_string(), r.clone());
        r
    }
}

/// The message's properties as the broker sees them: user properties plus system ones, all Strings.
struct BrokerView<'a>(&'a Message);

impl Properties for BrokerView<'_> {
    fn property(&self, name: &str) -> Option<PropRef<'_>> {
        let m = self.0;
        match name {
            "TAGS" => m.tag.as_deref().map(PropRef::Str),
            "KEYS" => m.keys.as_deref().map(PropRef::Str),
            "WAIT" => Some(PropRef::Str("true")),
            _ => m.properties.get(name).map(|s| PropRef::Str(s)),
        }
    }
}

/// `isMatchedByCommitLog` for SQL92: matched only when the expression evaluates to TRUE.
pub fn matches_sql(expr: &Expression, m: &Message) -> bool {
    expr.matches_broker(&BrokerView(m))
}
