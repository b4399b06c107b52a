//! Classic-protocol group decisions that depend on Java ordering (shared/specs/kafka.md §1.4,
//! §2, §10): the rebalance protocol a consumer uses, the group's protocol vote, and the leader
//! after the leader leaves. `ClassicGroup.members` is a plain `HashMap` of member ids, so its
//! iteration order (emulated by [`MemberTable`]) decides the vote's ties and the next leader.

use super::assignor::ClientAssignor;
use super::java_order::{iteration_order, java_string_hash, JavaHashSet, TableInit};

/// `ConsumerPartitionAssignor.RebalanceProtocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RebalanceProtocol {
    Eager,
    Cooperative,
}

/// The highest protocol every configured assignor supports: the default
/// `[range, cooperative-sticky]` is EAGER (checklist §8 item 1).
pub fn rebalance_protocol(assignors: &[ClientAssignor]) -> RebalanceProtocol {
    if !assignors.is_empty() && assignors.iter().all(|a| a.supports_cooperative()) {
        RebalanceProtocol::Cooperative
    } else {
        RebalanceProtocol::Eager
    }
}

/// The member ids of a classic group in `HashMap` insertion history.
#[derive(Clone, Debug)]
pub struct MemberTable {
    ids: JavaHashSet<String>,
}

impl Default for MemberTable {
    fn default() -> Self {
        MemberTable { ids: JavaHashSet::new(TableInit::Default) }
    }
}

impl MemberTable {
    pub fn add(&mut self, id: &str) -> bool {
        self.ids.insert(id.to_string(), java_string_hash(id))
    }

    pub fn remove(&mut self, id: &str) -> bool {
        self.ids.remove(&id.to_string())
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The ids in Java iteration order.
    pub fn ordered(&self) -> Vec<&str> {
        self.ids.iter_ordered().into_iter().map(String::as_str).collect()
    }

    /// The leader chosen when the leader leaves: the first member in iteration order.
    pub fn first(&self) -> Option<&str> {
        self.ids.first().map(String::as_str)
    }
}

/// `ClassicGroup.selectProtocol`: candidates are the protocols every member supports; each
/// member (in `members` iteration order) votes for its first candidate; the most votes win, and
/// among equals the first in the iteration order of the vote `HashMap`. `protocols` gives each
/// member's protocol names in preference order, in the same order as `members.ordered()`.
pub fn select_protocol(protocols: &[Vec<String>]) -> Result<String, String> {
    if protocols.is_empty() {
        return Err("IllegalStateException: Cannot select protocol for empty group".into());
    }
    let supported_by_all = |name: &String| protocols.iter().filter(|p| p.contains(name)).count() == protocols.len();
    let mut votes: Vec<(String, usize)> = Vec::new();
    for member in protocols {
        let Some(vote) = member.iter().find(|p| supported_by_all(p)) else {
            return Err("IllegalArgumentException: Member does not support any of the candidate protocols".into());
        };
        match votes.iter_mut().find(|(name, _)| name == vote) {
            Some((_, n)) => *n += 1,
            None => votes.push((vote.clone(), 1)),
        }
    }
    let order = iteration_order(&votes.iter().map(|(n, _)| java_string_hash(n)).collect::<Vec<_>>(), TableInit::Default);
    let mut best: Option<&(String, usize)> = None;
    for i in order {
        if best.is_none_or(|b| votes[i].1 > b.1) {
            best = Some(&votes[i]);
        }
    }
    best.map(|b| b.0.clone()).ok_or_else(|| "no protocol".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_strategy_is_eager() {
        assert_eq!(rebalance_protocol(&[ClientAssignor::Range, ClientAssignor::CooperativeSticky]), RebalanceProtocol::Eager);
        assert_eq!(rebalance_protocol(&[ClientAssignor::CooperativeSticky]), RebalanceProtocol::Cooperative);
    }

    #[test]
    fn vote_follows_preferences_and_hash_order_on_ties() {
        let a = names(&["range", "cooperative-sticky"]);
        let b = names(&["cooperative-sticky", "range"]);
        // One vote each: the tie goes to whichever name the vote HashMap iterates first.
        let tie = select_protocol(&[a.clone(), b.clone()]).unwrap();
        let order = iteration_order(&[java_string_hash("range"), java_string_hash("cooperative-sticky")], TableInit::Default);
        assert_eq!(tie, if order[0] == 0 { "range" } else { "cooperative-sticky" });
        assert_eq!(select_protocol(&[a.clone(), b.clone(), b]).unwrap(), "cooperative-sticky");
        assert!(select_protocol(&[names(&["range"]), names(&["roundrobin"])]).is_err());
    }

    #[test]
    fn next_leader_is_first_in_hash_order() {
        let mut t = MemberTable::default();
        for id in ["m-3", "m-1", "m-2"] {
            t.add(id);
        }
        let first = t.first().unwrap().to_string();
        t.remove(&first);
        assert_eq!(t.len(), 2);
        assert_eq!(t.first(), t.ordered().first().copied());
    }
}
