//! Broker-side SQL92 evaluation against a stored message (`isMatchedByCommitLog`). The compiled
//! expressions come from the broker's ConsumerFilterManager.

use super::sql92::{Expression, PropRef, Properties, Verdict};
use super::store::Message;

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

/// The three-valued verdict (or error) of an expression on a stored message. Only TRUE matches.
pub fn evaluate(expr: &Expression, m: &Message) -> Verdict {
    expr.evaluate_props(&BrokerView(m))
}
