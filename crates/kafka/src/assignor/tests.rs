//! Javadoc examples of the upstream assignors.

use super::*;

fn member(id: &str, topics: &[&str]) -> ClientMember {
    ClientMember { id: id.into(), generation: -1, topics: topics.iter().map(|t| t.to_string()).collect(), ..Default::default() }
}

fn cluster(topics: &[(&str, i32)]) -> Cluster {
    topics.iter().map(|(t, n)| (t.to_string(), TopicMetadata { partitions: *n, replica_racks: Vec::new() })).collect()
}

fn flat(a: &GroupAssignment, m: &str) -> Vec<(String, i32)> {
    a[m].iter().flat_map(|(t, ps)| ps.iter().map(move |p| (t.to_string(), *p))).collect()
}

#[test]
fn range_javadoc_example() {
    let c = cluster(&[("t0", 3), ("t1", 3)]);
    let a = assign(ClientAssignor::Range, &c, &[member("C0", &["t0", "t1"]), member("C1", &["t0", "t1"])]).unwrap();
    assert_eq!(flat(&a, "C0"), [("t0".into(), 0), ("t0".into(), 1), ("t1".into(), 0), ("t1".into(), 1)]);
    assert_eq!(flat(&a, "C1"), [("t0".into(), 2), ("t1".into(), 2)]);
}

#[test]
fn round_robin_javadoc_example_with_unequal_subscriptions() {
    let c = cluster(&[("t0", 1), ("t1", 2), ("t2", 3)]);
    let members = [member("C0", &["t0"]), member("C1", &["t0", "t1"]), member("C2", &["t0", "t1", "t2"])];
    let a = assign(ClientAssignor::RoundRobin, &c, &members).unwrap();
    assert_eq!(flat(&a, "C0"), [("t0".into(), 0)]);
    assert_eq!(flat(&a, "C1"), [("t1".into(), 0)]);
    assert_eq!(flat(&a, "C2"), [("t1".into(), 1), ("t2".into(), 0), ("t2".into(), 1), ("t2".into(), 2)]);
}

#[test]
fn sticky_balances_fresh_group_and_errors_on_empty_group() {
    let c = cluster(&[("t", 7)]);
    let members: Vec<ClientMember> = (0..3).map(|i| member(&format!("c{i}"), &["t"])).collect();
    for assignor in [ClientAssignor::Sticky, ClientAssignor::CooperativeSticky] {
        let a = assign(assignor, &c, &members).unwrap();
        let mut sizes: Vec<usize> = a.values().map(|t| t.values().map(Vec::len).sum()).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![2, 2, 3]);
    }
    assert!(matches!(assign(ClientAssignor::Sticky, &c, &[]), Err(AssignorError::Arithmetic(_))));
    assert!(matches!(assign(ClientAssignor::RoundRobin, &c, &[]), Err(AssignorError::IllegalArgument(_))));
}

#[test]
fn cooperative_sticky_withholds_moved_partitions_for_one_round() {
    let c = cluster(&[("t", 4)]);
    let mut a = member("a", &["t"]);
    a.generation = 1;
    a.owned = (0..4).map(|p| TopicPartition::new("t", p)).collect();
    let b = member("b", &["t"]);
    let out = assign(ClientAssignor::CooperativeSticky, &c, &[a, b]).unwrap();
    assert_eq!(out["a"]["t"].len(), 2);
    assert!(out["b"].is_empty(), "the two moved partitions are revoked first");
}

#[test]
fn out_of_range_owned_partition_is_an_error() {
    let c = cluster(&[("t", 2)]);
    let mut a = member("a", &["t"]);
    a.owned = vec![TopicPartition::new("t", 5)];
    assert!(matches!(assign(ClientAssignor::Sticky, &c, &[a]), Err(AssignorError::InvalidInput(_))));
}
