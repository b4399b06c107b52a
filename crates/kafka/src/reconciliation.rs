//! KIP-848 member reconciliation (shared/specs/kafka.md §3, §8 item 8): the coordinator's
//! `CurrentAssignmentBuilder.build()` and the epoch rules around it.
//!
//! A member first gives up partitions that left its target (UNREVOKED_PARTITIONS, epoch held),
//! and only once its heartbeat no longer reports them moves to the next epoch; target partitions
//! still owned by another member are withheld (UNRELEASED_PARTITIONS) until released. Topics are
//! keyed by a string (the topic id in the coordinator).

use mqviz_engine::sort::CollectSorted;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Topic key -> partitions.
pub type Partitions = BTreeMap<String, BTreeSet<i32>>;

/// `MemberState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemberState {
    Stable,
    UnrevokedPartitions,
    UnreleasedPartitions,
    /// A state from a newer coordinator version; the member is fenced unless it owns nothing.
    Unknown,
}

impl MemberState {
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Stable => "STABLE",
            MemberState::UnrevokedPartitions => "UNREVOKED_PARTITIONS",
            MemberState::UnreleasedPartitions => "UNRELEASED_PARTITIONS",
            MemberState::Unknown => "UNKNOWN",
        }
    }

    pub fn from_name(name: &str) -> Option<MemberState> {
        [MemberState::Stable, MemberState::UnrevokedPartitions, MemberState::UnreleasedPartitions, MemberState::Unknown]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// The reconciliation part of a `ConsumerGroupMember`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberAssignment {
    pub state: MemberState,
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    pub assigned: Partitions,
    pub pending_revocation: Partitions,
}

impl MemberAssignment {
    /// A member that just joined (epoch 0, nothing assigned).
    pub fn joining() -> MemberAssignment {
        MemberAssignment {
            state: MemberState::Stable,
            member_epoch: 0,
            previous_member_epoch: 0,
            assigned: Partitions::new(),
            pending_revocation: Partitions::new(),
        }
    }

    /// `updateMemberEpoch`: the old epoch becomes the previous one.
    fn with_epoch(&self, epoch: i32) -> (i32, i32) {
        (epoch, self.member_epoch)
    }
}

/// `FencedMemberEpochException`: the member must drop all partitions and rejoin with epoch 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fenced(pub String);

impl fmt::Display for Fenced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FencedMemberEpochException: {}", self.0)
    }
}

impl std::error::Error for Fenced {}

/// The group's current target: its epoch and each member's target partitions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetAssignment {
    pub epoch: i32,
    pub members: BTreeMap<String, Partitions>,
}

impl TargetAssignment {
    /// A member's target (empty when it has none).
    pub fn of(&self, member: &str) -> Partitions {
        self.members.get(member).cloned().unwrap_or_default()
    }
}

/// The epoch of each partition's current owner: a partition is owned while it is in some
/// member's assigned or pending-revocation set. Partitions not listed are free (epoch -1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartitionEpochs {
    epochs: BTreeMap<(String, i32), i32>,
}

impl PartitionEpochs {
    pub fn from_members<'a>(members: impl IntoIterator<Item = &'a MemberAssignment>) -> PartitionEpochs {
        let mut epochs = BTreeMap::new();
        for m in members {
            for set in [&m.assigned, &m.pending_revocation] {
                for (topic, parts) in set {
                    for p in parts {
                        epochs.insert((topic.clone(), *p), m.member_epoch);
                    }
                }
            }
        }
        PartitionEpochs { epochs }
    }

    /// `currentPartitionEpoch`: -1 when free.
    pub fn epoch(&self, topic: &str, partition: i32) -> i32 {
        self.epochs.get(&(topic.to_string(), partition)).copied().unwrap_or(-1)
    }
}

fn owns_any(owned: Option<&Partitions>, pending: &Partitions) -> bool {
    let Some(owned) = owned else { return true };
    owned.iter().any(|(topic, parts)| pending.get(topic).is_some_and(|p| parts.iter().any(|x| p.contains(x))))
}

/// `CurrentAssignmentBuilder.build()`. `owned` is the heartbeat's owned partitions (`None` when
/// the request carried no list); `partition_epoch` gives the owner epoch of a partition (-1 free).
pub fn reconcile(
    member: &MemberAssignment,
    target_epoch: i32,
    target: &Partitions,
    partition_epoch: impl Fn(&str, i32) -> i32,
    owned: Option<&Partitions>,
) -> Result<MemberAssignment, Fenced> {
    match member.state {
        MemberState::Stable if member.member_epoch == target_epoch => Ok(member.clone()),
        MemberState::Stable | MemberState::UnreleasedPartitions => {
            Ok(next_assignment(member, member.member_epoch, target_epoch, target, &partition_epoch, owned))
        }
        MemberState::UnrevokedPartitions => {
            if owns_any(owned, &member.pending_revocation) {
                Ok(member.clone())
            } else {
                Ok(next_assignment(member, member.member_epoch.wrapping_add(1), target_epoch, target, &partition_epoch, owned))
            }
        }
        MemberState::Unknown => {
            if owned.is_none_or(|o| !o.is_empty()) {
                Err(Fenced(
                    "The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin."
                        .into(),
                ))
            } else {
                Ok(next_assignment(member, target_epoch, target_epoch, target, &partition_epoch, owned))
            }
        }
    }
}

/// `computeNextAssignment(memberEpoch, assigned)`.
fn next_assignment(
    member: &MemberAssignment,
    epoch: i32,
    target_epoch: i32,
    target: &Partitions,
    partition_epoch: &impl Fn(&str, i32) -> i32,
    owned: Option<&Partitions>,
) -> MemberAssignment {
    let mut unreleased = false;
    let mut assigned = Partitions::new();
    let mut revoke = Partitions::new();
    let mut add = Partitions::new();
    let topics: BTreeSet<&String> = target.keys().chain(member.assigned.keys()).collect_set();
    let empty = BTreeSet::new();
    for topic in topics {
        let wanted = target.get(topic).unwrap_or(&empty);
        let current = member.assigned.get(topic).unwrap_or(&empty);
        let keep: BTreeSet<i32> = current.intersection(wanted).copied().collect_set();
        let gone: BTreeSet<i32> = current.difference(&keep).copied().collect_set();
        let mut new: BTreeSet<i32> = wanted.difference(&keep).copied().collect_set();
        let before = new.len();
        new.retain(|p| partition_epoch(topic, *p) == -1);
        unreleased |= new.len() != before;
        for (set, into) in [(keep, &mut assigned), (gone, &mut revoke), (new, &mut add)] {
            if !set.is_empty() {
                into.insert(topic.clone(), set);
            }
        }
    }
    if !revoke.is_empty() && owns_any(owned, &revoke) {
        let (member_epoch, previous_member_epoch) = member.with_epoch(epoch);
        return MemberAssignment {
            state: MemberState::UnrevokedPartitions,
            member_epoch,
            previous_member_epoch,
            assigned,
            pending_revocation: revoke,
        };
    }
    let state = if !add.is_empty() {
        for (topic, parts) in add {
            assigned.entry(topic).or_default().extend(parts);
        }
        if unreleased {
            MemberState::UnreleasedPartitions
        } else {
            MemberState::Stable
        }
    } else if unreleased {
        MemberState::UnreleasedPartitions
    } else {
        MemberState::Stable
    };
    let (member_epoch, previous_member_epoch) = member.with_epoch(target_epoch);
    MemberAssignment { state, member_epoch, previous_member_epoch, assigned, pending_revocation: Partitions::new() }
}

/// `throwIfConsumerGroupMemberEpochIsInvalid`: a heartbeat epoch ahead of the member is fenced;
/// one behind is accepted only if it is the previous epoch and the owned partitions are a subset
/// of the assigned ones (the response with the new epoch was lost).
pub fn check_heartbeat_epoch(member: &MemberAssignment, received_epoch: i32, owned: Option<&Partitions>) -> Result<(), Fenced> {
    if received_epoch > member.member_epoch {
        return Err(Fenced(format!(
            "The consumer group member has a greater member epoch ({received_epoch}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.",
            member.member_epoch
        )));
    }
    if received_epoch < member.member_epoch {
        let subset = owned.is_some_and(|o| {
            o.iter().all(|(topic, parts)| member.assigned.get(topic).is_some_and(|a| parts.iter().all(|p| a.contains(p))))
        });
        if received_epoch != member.previous_member_epoch || !subset {
            return Err(Fenced(format!(
                "The consumer group member has a smaller member epoch ({received_epoch}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.",
                member.member_epoch
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(spec: &[(&str, &[i32])]) -> Partitions {
        spec.iter().map(|(t, ps)| (t.to_string(), ps.iter().copied().collect())).collect()
    }

    fn stable(epoch: i32, assigned: Partitions) -> MemberAssignment {
        MemberAssignment {
            state: MemberState::Stable,
            member_epoch: epoch,
            previous_member_epoch: epoch,
            assigned,
            pending_revocation: Partitions::new(),
        }
    }

    #[test]
    fn revocation_comes_before_assignment() {
        let m = stable(10, parts(&[("T1", &[1, 2, 3])]));
        let target = parts(&[("T1", &[2, 3, 4])]);
        let next = reconcile(&m, 11, &target, |_, _| -1, None).unwrap();
        assert_eq!(next.state, MemberState::UnrevokedPartitions);
        assert_eq!(next.member_epoch, 10);
        assert_eq!(next.pending_revocation, parts(&[("T1", &[1])]));
        // The heartbeat no longer reports partition 1: move on to epoch 11 and take partition 4.
        let owned = parts(&[("T1", &[2, 3])]);
        let done = reconcile(&next, 11, &target, |_, _| -1, Some(&owned)).unwrap();
        assert_eq!((done.state, done.member_epoch, done.previous_member_epoch), (MemberState::Stable, 11, 10));
        assert_eq!(done.assigned, target);
    }

    #[test]
    fn partitions_still_owned_elsewhere_are_unreleased() {
        let m = stable(10, parts(&[("T1", &[1])]));
        let target = parts(&[("T1", &[1, 2])]);
        let next = reconcile(&m, 11, &target, |_, p| if p == 2 { 10 } else { -1 }, None).unwrap();
        assert_eq!(next.state, MemberState::UnreleasedPartitions);
        assert_eq!(next.assigned, parts(&[("T1", &[1])]));
        assert_eq!(next.member_epoch, 11);
    }

    #[test]
    fn heartbeat_epoch_rules() {
        let mut m = stable(11, parts(&[("T1", &[1, 2])]));
        m.previous_member_epoch = 10;
        assert!(check_heartbeat_epoch(&m, 12, None).is_err());
        assert!(check_heartbeat_epoch(&m, 10, Some(&parts(&[("T1", &[1])]))).is_ok());
        assert!(check_heartbeat_epoch(&m, 10, Some(&parts(&[("T1", &[3])]))).is_err());
        assert!(check_heartbeat_epoch(&m, 9, Some(&parts(&[]))).is_err());
        let epochs = PartitionEpochs::from_members([&m]);
        assert_eq!((epochs.epoch("T1", 2), epochs.epoch("T1", 3)), (11, -1));
    }
}
