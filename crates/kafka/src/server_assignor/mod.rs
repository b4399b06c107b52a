//! KIP-848 server-side assignors (shared/specs/kafka.md §3, §10): `uniform` (homogeneous and
//! heterogeneous builders) and `range`, as the group coordinator runs them from
//! `TargetAssignmentBuilder.build()`.
//!
//! The input is the coordinator's view: members in the insertion order of its `memberSpecs`
//! `HashMap` (whose iteration order the assignors follow), each with its subscribed topic names and
//! its previous **target** assignment, plus the topics image (name, id, partition count).

mod range;
mod spec;
mod uniform_heterogeneous;
mod uniform_homogeneous;

use std::collections::BTreeMap;

pub use super::assignor::{AssignorError, GroupAssignment, TopicName, MAX_PARTITIONS_PER_TOPIC};
use super::uuid::Uuid;
pub use spec::SubscriptionType;

/// One topic of the coordinator's metadata image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerTopic {
    pub id: Uuid,
    /// Partition count; negative when the image knows the id but the subscription metadata has
    /// no entry for it (the assignor then sees `numPartitions == -1`).
    pub partitions: i32,
}

/// Topic name to image entry.
pub type TopicsImage = BTreeMap<String, ServerTopic>;

/// One consumer group member as the target assignment builder hands it to the assignor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerMember {
    pub id: String,
    pub instance_id: Option<String>,
    pub rack: Option<String>,
    /// Subscribed topic names (a set upstream; duplicates are ignored).
    pub topics: Vec<String>,
    /// The previous target assignment, topic name -> partitions, in the order its `HashMap` was
    /// filled. Topics unknown to the image are ignored.
    pub target: Vec<(String, Vec<i32>)>,
}

/// The server assignors of `group.consumer.assignors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ServerAssignor {
    Uniform,
    Range,
}

impl ServerAssignor {
    pub fn name(self) -> &'static str {
        match self {
            ServerAssignor::Uniform => "uniform",
            ServerAssignor::Range => "range",
        }
    }

    pub fn from_name(name: &str) -> Option<ServerAssignor> {
        [ServerAssignor::Uniform, ServerAssignor::Range].into_iter().find(|a| a.name() == name)
    }
}

/// Computes the new target assignment. Every member is present in the result.
pub fn assign(assignor: ServerAssignor, image: &TopicsImage, members: &[ServerMember]) -> Result<GroupAssignment, AssignorError> {
    if let Some((name, t)) = image.iter().find(|(_, t)| t.partitions > MAX_PARTITIONS_PER_TOPIC) {
        return Err(AssignorError::InvalidInput(format!("topic {name} has too many partitions ({})", t.partitions)));
    }
    let spec = spec::GroupSpec::new(image, members);
    let targets = if spec.member_count() == 0 {
        Vec::new()
    } else {
        match (assignor, spec.subscription_type) {
            (ServerAssignor::Uniform, SubscriptionType::Homogeneous) => uniform_homogeneous::assign(&spec)?,
            (ServerAssignor::Uniform, SubscriptionType::Heterogeneous) => uniform_heterogeneous::assign(&spec)?,
            (ServerAssignor::Range, _) => range::assign(&spec)?,
        }
    };
    Ok(spec.to_assignment(targets))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuid(n: i64) -> Uuid {
        Uuid::new(n, n * 7)
    }

    fn member(id: &str, topics: &[&str]) -> ServerMember {
        ServerMember { id: id.into(), topics: topics.iter().map(|t| t.to_string()).collect(), ..Default::default() }
    }

    #[test]
    fn range_homogeneous_is_co_partitioned() {
        let image: TopicsImage =
            [("a", 1), ("b", 2)].into_iter().map(|(n, i)| (n.to_string(), ServerTopic { id: uuid(i), partitions: 3 })).collect();
        let members = vec![member("m1", &["a", "b"]), member("m0", &["a", "b"])];
        let out = assign(ServerAssignor::Range, &image, &members).unwrap();
        assert_eq!(out["m0"]["a"], vec![0, 1]);
        assert_eq!(out["m0"]["b"], vec![0, 1]);
        assert_eq!(out["m1"]["a"], vec![2]);
    }

    #[test]
    fn uniform_spreads_evenly_and_reports_unknown_topics() {
        let image: TopicsImage = [
            ("a".to_string(), ServerTopic { id: uuid(1), partitions: 7 }),
            ("b".to_string(), ServerTopic { id: uuid(2), partitions: -1 }),
        ]
        .into_iter()
        .collect();
        let out = assign(ServerAssignor::Uniform, &image, &[member("x", &["a"]), member("y", &["a"])]).unwrap();
        let sizes: Vec<usize> = out.values().map(|t| t.values().map(Vec::len).sum()).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 7);
        assert!(sizes.iter().all(|s| *s == 3 || *s == 4));
        assert!(assign(ServerAssignor::Uniform, &image, &[member("x", &["b"])]).is_err());
        assert!(assign(ServerAssignor::Uniform, &image, &[]).unwrap().is_empty());
    }
}
