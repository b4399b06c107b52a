//! Client-side (classic protocol) partition assignors: `range`, `roundrobin`, `sticky` and
//! `cooperative-sticky` (shared/specs/kafka.md §1), bit-exact with the upstream Java classes,
//! including their `HashMap` iteration order, rack awareness and the sticky assignor's
//! `NullPointerException` defect (§1.3), reproduced as [`AssignorError::NullPointer`].
//!
//! Input is plain data: cluster metadata and the group's members in the insertion order of the
//! leader's `HashMap` of subscriptions. Output maps every member to `{topic: [partitions]}`.

mod group;
mod rack;
mod range;
mod round_robin;
mod sticky;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The largest partition count a topic may have here (Kafka's practical limits are far lower);
/// larger counts are rejected rather than allocated.
pub const MAX_PARTITIONS_PER_TOPIC: i32 = 1 << 20;

/// One topic of the cluster metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicMetadata {
    pub partitions: i32,
    /// For each partition, the racks of its replicas (`None` for a replica on a broker without
    /// `broker.rack`). Empty when replica placement is unknown.
    pub replica_racks: Vec<Vec<Option<String>>>,
}

/// Topic name to metadata. Topics absent here do not exist.
pub type Cluster = BTreeMap<String, TopicMetadata>;

/// A topic partition.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl TopicPartition {
    pub fn new(topic: impl Into<String>, partition: i32) -> TopicPartition {
        TopicPartition { topic: topic.into(), partition }
    }
}

/// One member's JoinGroup subscription as the leader's assignor sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientMember {
    pub id: String,
    /// `group.instance.id`; `None` for a dynamic member.
    pub instance_id: Option<String>,
    /// `client.rack`; `None` or empty when unset.
    pub rack: Option<String>,
    /// Generation the member last had an assignment in; negative = none.
    pub generation: i32,
    /// The subscribed topics, in the member's order.
    pub topics: Vec<String>,
    /// `sticky`: the previous assignment from userData; `cooperative-sticky`: `ownedPartitions`.
    /// `range` and `roundrobin` ignore it.
    pub owned: Vec<TopicPartition>,
}

/// The four built-in client assignors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClientAssignor {
    Range,
    RoundRobin,
    Sticky,
    CooperativeSticky,
}

impl ClientAssignor {
    /// `ConsumerPartitionAssignor.name()`.
    pub fn name(self) -> &'static str {
        match self {
            ClientAssignor::Range => "range",
            ClientAssignor::RoundRobin => "roundrobin",
            ClientAssignor::Sticky => "sticky",
            ClientAssignor::CooperativeSticky => "cooperative-sticky",
        }
    }

    pub fn from_name(name: &str) -> Option<ClientAssignor> {
        [ClientAssignor::Range, ClientAssignor::RoundRobin, ClientAssignor::Sticky, ClientAssignor::CooperativeSticky]
            .into_iter()
            .find(|a| a.name() == name)
    }

    /// Whether the assignor supports the COOPERATIVE rebalance protocol (§1.4).
    pub fn supports_cooperative(self) -> bool {
        self == ClientAssignor::CooperativeSticky
    }
}

/// A topic name shared by every member's entry (one allocation per topic, not per member).
pub type TopicName = Arc<str>;

/// Member id to `{topic: ascending partitions}`; every member is present.
pub type GroupAssignment = BTreeMap<String, BTreeMap<TopicName, Vec<i32>>>;

/// What the upstream assignor throws. `Display` gives `"<Java class>: <message>"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssignorError {
    /// The sticky general builder dereferences a member it removed (spec §1.3).
    NullPointer(String),
    IllegalState(String),
    IllegalArgument(String),
    /// Integer division by zero (the sticky assignor with no members).
    Arithmetic(String),
    /// KIP-848 `PartitionAssignorException` (unknown topic, partitions left over).
    PartitionAssignor(String),
    /// `ArrayIndexOutOfBoundsException` (a previous target partition beyond the topic's count).
    IndexOutOfBounds(String),
    /// Input the model cannot represent (for example a negative or out-of-range owned partition).
    InvalidInput(String),
}

impl fmt::Display for AssignorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssignorError::NullPointer(m) => write!(f, "NullPointerException: {m}"),
            AssignorError::IllegalState(m) => write!(f, "IllegalStateException: {m}"),
            AssignorError::IllegalArgument(m) => write!(f, "IllegalArgumentException: {m}"),
            AssignorError::Arithmetic(m) => write!(f, "ArithmeticException: {m}"),
            AssignorError::PartitionAssignor(m) => write!(f, "PartitionAssignorException: {m}"),
            AssignorError::IndexOutOfBounds(m) => write!(f, "ArrayIndexOutOfBoundsException: {m}"),
            AssignorError::InvalidInput(m) => write!(f, "invalid input: {m}"),
        }
    }
}

impl std::error::Error for AssignorError {}

/// Runs one client assignor over the group, as the leader does in `onLeaderElected`.
pub fn assign(assignor: ClientAssignor, cluster: &Cluster, members: &[ClientMember]) -> Result<GroupAssignment, AssignorError> {
    let g = group::Group::new(cluster, members)?;
    let per_member = match assignor {
        ClientAssignor::Range => range::assign(&g),
        ClientAssignor::RoundRobin => round_robin::assign(&g)?,
        ClientAssignor::Sticky => sticky::assign(&g, false)?,
        ClientAssignor::CooperativeSticky => sticky::assign(&g, true)?,
    };
    Ok(g.to_assignment(per_member))
}

#[cfg(test)]
mod tests;
