//! `FilterAPI.buildSubscriptionData` / `FilterAPI.build` (spec §3).

use mqviz_engine::vec_map::VecSet;
use std::sync::Arc;

use mqviz_engine::hash::java_string_hash;

use super::types::SUB_ALL;

/// `ExpressionType`: TAG, or anything else (SQL92) with no client-side compilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpressionType {
    Tag,
    Other(String),
}

impl ExpressionType {
    pub fn name(&self) -> &str {
        match self {
            ExpressionType::Tag => "TAG",
            ExpressionType::Other(s) => s,
        }
    }

    pub fn is_sql92(&self) -> bool {
        matches!(self, ExpressionType::Other(s) if s == "SQL92")
    }
}

/// `SubscriptionData` as the client builds it. `sub_version` is the logical time of creation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionData {
    pub topic: String,
    /// Shared: every pull logs the expression that ran, and interning a shared name costs a
    /// pointer comparison where a `String` cost a copy and a text lookup.
    pub sub_string: Arc<str>,
    pub tags: VecSet<String>,
    pub codes: VecSet<i32>,
    pub sub_version: u64,
    pub expression_type: ExpressionType,
}

impl SubscriptionData {
    /// `subString == "*"`: the broker's tag filter lets everything through.
    pub fn is_all(&self) -> bool {
        *self.sub_string == *SUB_ALL
    }

    /// Broker-side consume-queue check for TAG subscriptions (`ExpressionMessageFilter.isMatchedByConsumeQueue`).
    pub fn broker_tag_match(&self, tags_code: i64) -> bool {
        if self.expression_type != ExpressionType::Tag || self.is_all() {
            return true;
        }
        self.codes.contains(&(tags_code as i32))
    }

    /// Client-side re-filter (`PullAPIWrapper.processPullResult`): exact tag membership, applied
    /// only when the client's own tag set is non-empty.
    pub fn client_tag_match(&self, tag: Option<&str>) -> bool {
        if self.tags.is_empty() {
            return true;
        }
        match tag {
            Some(t) => self.tags.contains(t),
            None => false,
        }
    }
}

/// Why `buildSubscriptionData` refused an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterApiError {
    SplitError,
    NullSql92,
}

impl std::fmt::Display for FilterApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FilterApiError::SplitError => write!(f, "Exception: subString split error"),
            FilterApiError::NullSql92 => write!(f, "IllegalArgumentException: Expression can't be null! SQL92"),
        }
    }
}

/// Java `s.split("\\|\\|")`: split on every `||`, then drop trailing empty strings.
fn java_split_double_bar(s: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split("||").collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// `FilterAPI.buildSubscriptionData(topic, subString)`; `None` is Java null.
pub fn build_subscription_data(
    topic: &str,
    sub_string: Option<&str>,
    sub_version: u64,
) -> Result<SubscriptionData, FilterApiError> {
    let mut sd = SubscriptionData {
        topic: topic.to_string(),
        sub_string: sub_string.unwrap_or_default().into(),
        tags: VecSet::new(),
        codes: VecSet::new(),
        sub_version,
        expression_type: ExpressionType::Tag,
    };
    let s = sub_string.unwrap_or_default();
    if s.is_empty() || s == SUB_ALL {
        sd.sub_string = SUB_ALL.into();
        return Ok(sd);
    }
    let parts = java_split_double_bar(s);
    if parts.is_empty() {
        return Err(FilterApiError::SplitError);
    }
    for p in parts {
        // Java String.trim() strips every char <= U+0020.
        let t = p.trim_matches(|c: char| c <= '\u{20}');
        if !t.is_empty() {
            sd.codes.insert(java_string_hash(t));
            sd.tags.insert(t.to_string());
        }
    }
    Ok(sd)
}

/// `FilterAPI.build(topic, subString, type)`; `None` type or `"TAG"` means a tag expression.
pub fn build(
    topic: &str,
    sub_string: Option<&str>,
    expression_type: Option<&str>,
    sub_version: u64,
) -> Result<SubscriptionData, FilterApiError> {
    match expression_type {
        None | Some("TAG") => build_subscription_data(topic, sub_string, sub_version),
        Some(other) => match sub_string {
            None | Some("") => Err(FilterApiError::NullSql92),
            Some(s) => Ok(SubscriptionData {
                topic: topic.to_string(),
                sub_string: s.into(),
                tags: VecSet::new(),
                codes: VecSet::new(),
                sub_version,
                expression_type: ExpressionType::Other(other.to_string()),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_and_leading_bars() {
        let sd = build_subscription_data("T", Some("TagA||"), 0).unwrap();
        assert_eq!(sd.tags.iter().collect::<Vec<_>>(), vec!["TagA"]);
        let sd = build_subscription_data("T", Some("||TagA"), 0).unwrap();
        assert_eq!(sd.tags.len(), 1);
        assert_eq!(build_subscription_data("T", Some("||"), 0), Err(FilterApiError::SplitError));
        let sd = build_subscription_data("T", Some("|||"), 0).unwrap();
        assert!(sd.tags.contains("|"));
    }

    #[test]
    fn whitespace_only_matches_nothing() {
        let sd = build_subscription_data("T", Some("   "), 0).unwrap();
        assert_eq!(&*sd.sub_string, "   ");
        assert!(sd.tags.is_empty());
        assert!(!sd.broker_tag_match(java_string_hash("TagA") as i64));
    }

    #[test]
    fn hash_collision_shares_code() {
        let sd = build_subscription_data("T", Some("Aa||BB"), 0).unwrap();
        assert_eq!(sd.codes.len(), 1);
    }
}
