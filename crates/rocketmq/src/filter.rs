//! Broker-side SQL92 evaluation against a stored message (`isMatchedByCommitLog`). The compiled
//! expressions come from the broker's ConsumerFilterManager.

use std::cell::OnceCell;

use super::sql92::{Expression, PropRef, Properties, Verdict};
use super::store::Message;

/// `BrokerConfig.brokerClusterName` default: the broker stamps it into `CLUSTER` on every send.
pub const DEFAULT_CLUSTER: &str = "DefaultCluster";

/// The message's properties as the broker sees them: user properties plus the system ones every
/// stored message carries, all Strings (spec §2, §9): `TAGS`, `KEYS`, `WAIT` and `UNIQ_KEY` from
/// the Java producer, `CLUSTER` from the broker, `RETRY_TOPIC` on retry copies.
struct BrokerView<'a> {
    message: &'a Message,
    uniq_key: OnceCell<String>,
    /// KEYS rendered from the send script's template on first use.
    keys: OnceCell<Option<String>>,
}

impl Properties for BrokerView<'_> {
    fn property(&self, name: &str) -> Option<PropRef<'_>> {
        let m = self.message;
        match name {
            "TAGS" => m.tag().as_deref().map(PropRef::Str),
            "KEYS" => self.keys.get_or_init(|| m.keys()).as_deref().map(PropRef::Str),
            "WAIT" => Some(PropRef::Str("true")),
            "UNIQ_KEY" => Some(PropRef::Str(self.uniq_key.get_or_init(|| m.uniq_key()))),
            "CLUSTER" => Some(PropRef::Str(DEFAULT_CLUSTER)),
            _ => m.properties().get(name).map(|s| PropRef::Str(s)),
        }
    }
}

/// The three-valued verdict (or error) of an expression on a stored message. Only TRUE matches.
pub fn evaluate(expr: &Expression, m: &Message) -> Verdict {
    expr.evaluate_props(&BrokerView { message: m, uniq_key: OnceCell::new(), keys: OnceCell::new() })
}
