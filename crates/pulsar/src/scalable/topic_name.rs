//! Scalable topic and segment topic names (`SegmentTopicName`, spec §4.1):
//! `topic://tenant/ns/name` → `segment://tenant/ns/name/{start:04x}-{end:04x}-{segmentId}`.

use std::fmt;

use super::hash_range::HashRange;

/// A parsed `topic://tenant/namespace/local-name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalableTopicName {
    pub tenant: String,
    pub namespace: String,
    pub local_name: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidTopicName(pub String);

impl fmt::Display for InvalidTopicName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IllegalArgumentException: {}", self.0)
    }
}

impl ScalableTopicName {
    pub fn parse(name: &str) -> Result<ScalableTopicName, InvalidTopicName> {
        let Some((domain, rest)) = name.split_once("://") else {
            return Err(InvalidTopicName(format!("Invalid topic name: {name}")));
        };
        if domain != "topic" {
            return Err(InvalidTopicName(format!("Parent topic must have domain 'topic', got: {domain}")));
        }
        let mut parts = rest.splitn(3, '/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(t), Some(ns), Some(local)) if !t.is_empty() && !ns.is_empty() && !local.is_empty() => {
                Ok(ScalableTopicName { tenant: t.to_string(), namespace: ns.to_string(), local_name: local.to_string() })
            }
            _ => Err(InvalidTopicName(format!("Invalid topic name: {name}"))),
        }
    }

    /// The backing topic of one segment.
    pub fn segment_topic(&self, range: HashRange, segment_id: u64) -> String {
        format!("segment://{}/{}/{}/{}", self.tenant, self.namespace, self.local_name, segment_descriptor(range, segment_id))
    }
}

impl fmt::Display for ScalableTopicName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "topic://{}/{}/{}", self.tenant, self.namespace, self.local_name)
    }
}

/// `{start:04x}-{end:04x}-{segmentId}`.
pub fn segment_descriptor(range: HashRange, segment_id: u64) -> String {
    format!("{}-{segment_id}", range.hex())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let t = ScalableTopicName::parse("topic://tenant/ns/my-topic").unwrap();
        assert_eq!(t.segment_topic(HashRange { start: 0, end: 0x7fff }, 1), "segment://tenant/ns/my-topic/0000-7fff-1");
        assert_eq!(t.to_string(), "topic://tenant/ns/my-topic");
        assert!(ScalableTopicName::parse("persistent://t/ns/x").unwrap_err().to_string().contains("domain 'topic'"));
        assert!(ScalableTopicName::parse("topic://t/ns").is_err());
        assert!(ScalableTopicName::parse("my-topic").is_err());
    }
}
