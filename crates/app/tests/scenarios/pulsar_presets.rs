//! The Pulsar presets, each run to its end and checked against what it claims to show
//! (spec §4.6 for the four PR #25642 scenarios, §1.2, §1.3, §1.4.6 and §2.3 for the others).

use std::collections::BTreeMap;

use mqviz_app::presets::by_file;
use mqviz_app::registry::run_pulsar;
use mqviz_pulsar::events::Event;
use mqviz_pulsar::key_shared::HoldReason;
use mqviz_pulsar::world::World;

fn run(file: &str) -> World {
    run_pulsar(by_file(file).unwrap_or_else(|| panic!("{file} is not a preset")).text).unwrap_or_else(|e| panic!("{file}: {e:?}"))
}

/// Every assignment sent to `consumer`: (time, event id, segments).
fn assignments(w: &World, consumer: &str) -> Vec<(u64, u32, Vec<u64>)> {
    w.log
        .iter()
        .filter_map(|e| match &e.kind {
            Event::AssignmentSent { consumer: c, segments, .. } if &*w.consumers[*c as usize].name == consumer => {
                Some((e.at, e.id.0, segments.to_vec()))
            }
            _ => None,
        })
        .collect()
}

/// (time, consumer, message) of every delivery to an application, in log order.
fn receipts(w: &World) -> Vec<(u64, String, u32)> {
    w.log
        .iter()
        .filter_map(|e| match &e.kind {
            Event::Received { consumer, msg, .. } => Some((e.at, w.consumers[*consumer as usize].name.to_string(), *msg)),
            _ => None,
        })
        .collect()
}

fn consumer<'a>(w: &'a World, name: &str) -> &'a mqviz_pulsar::world::Consumer {
    w.consumers.iter().find(|c| &*c.name == name).unwrap_or_else(|| panic!("no consumer {name}"))
}

fn segment_of(w: &World, msg: u32) -> Option<u64> {
    w.partitions[w.messages[msg as usize].partition as usize].segment
}

fn gap_issues(w: &World) -> Vec<(&'static str, String)> {
    w.log
        .iter()
        .filter_map(|e| match &e.kind {
            Event::UpstreamGap { gap } => Some((gap.issue, gap.text.to_string())),
            _ => None,
        })
        .collect()
}

/// §4.6 scenario 1: {0} first, {0,1,2} at the first poll after segment 0 drained, 100 messages,
/// no child message before the parent is drained.
#[test]
fn post_split_backlog_is_read_before_the_children() {
    let w = run("pulsar-scalable-post-split-backlog.json");
    let a = assignments(&w, "stream-consumer");
    assert_eq!(a.first().map(|x| x.2.clone()), Some(vec![0]), "{a:?}");
    let (released_at, _, last) = a.last().cloned().unwrap();
    assert_eq!(last, vec![1, 0, 2], "sorted by hash range: 1 [0000-7fff], 0 [0000-ffff], 2 [8000-ffff]");
    // The consumer registered at 5 s; the first poll is 2 s later and finds segment 0 drained.
    assert_eq!(released_at, 7_000);
    let r = receipts(&w);
    assert_eq!(r.len(), 100);
    assert!(released_at <= 5_000 + 30_000, "all 100 within 30 s");
    let first_child = r.iter().find(|(_, _, m)| segment_of(&w, *m) != Some(0)).unwrap();
    let last_parent = r.iter().rev().find(|(_, _, m)| segment_of(&w, *m) == Some(0)).unwrap();
    assert!(first_child.0 > released_at, "child message at {} before segment 0 was drained at {released_at}", first_child.0);
    assert!(last_parent.0 < first_child.0);
    let drained: Vec<u64> = w
        .log
        .iter()
        .filter_map(|e| match &e.kind {
            Event::DrainPolled { poll, .. } if poll.drained.contains(&0) => Some(e.at),
            _ => None,
        })
        .collect();
    assert_eq!(drained, vec![7_000]);
}

/// §4.6 scenario 2 (and §8): 1,0 first (sealed 1 assignable although 0 is undrained: #26274),
/// 3,1,0,4,2 once both drained, 90 messages.
#[test]
fn two_splits_read_all_generations() {
    let w = run("pulsar-scalable-two-splits.json");
    let a = assignments(&w, "stream-consumer");
    assert_eq!(a.first().map(|x| x.2.clone()), Some(vec![1, 0]));
    assert_eq!(a.last().map(|x| x.2.clone()), Some(vec![3, 1, 0, 4, 2]));
    assert_eq!(receipts(&w).len(), 90);
    assert!(
        gap_issues(&w).iter().any(|(i, t)| *i == "apache/pulsar#26274" && t.contains("sealed segment 1")),
        "{:?}",
        gap_issues(&w)
    );
    // No message of the active generation (segments 2, 3, 4) before the final assignment.
    let final_at = a.last().unwrap().0;
    assert!(receipts(&w).iter().all(|(t, _, m)| matches!(segment_of(&w, *m), Some(0 | 1)) || *t > final_at));
}

/// §4.6 scenario 3 (pre-#26433 era): B gets only drained segment 0, reaches its end, receives
/// nothing; nothing is redelivered.
#[test]
fn drained_sealed_segment_is_not_redelivered() {
    let w = run("pulsar-scalable-sealed-not-redelivered.json");
    assert_eq!(consumer(&w, "consumer-A").received.len(), 30);
    assert_eq!(consumer(&w, "consumer-B").received.len(), 0);
    let b = assignments(&w, "consumer-B");
    assert_eq!(b.last().map(|x| x.2.clone()), Some(vec![0]));
    assert_eq!(assignments(&w, "consumer-A").last().map(|x| x.2.clone()), Some(vec![1, 2]));
    let reached = w.log.iter().any(|e| {
        matches!(&e.kind, Event::ReachedEndOfTopic { consumer, partition }
            if &*w.consumers[*consumer as usize].name == "consumer-B" && w.partitions[*partition as usize].name.ends_with("-0"))
    });
    assert!(reached, "B hears TopicTerminated on segment 0");
    assert!(w.log.iter().any(|e| matches!(&e.kind, Event::EraNote { text } if text.contains("#26433"))));
    assert!(gap_issues(&w).iter().any(|(_, t)| t.contains("consumer-B is assigned only drained sealed segments")));
    let report = mqviz_model::Simulation::report(&w);
    assert_eq!(report["messages"]["redelivered"].as_array().map(Vec::len), Some(0), "{}", report["messages"]);
}

/// §4.6 scenario 4: exactly {0,1,2,3} while 0 has backlog; then 4,0,5,1,2,3.
#[test]
fn children_blocked_until_parent_drained() {
    let w = run("pulsar-scalable-children-blocked.json");
    let a = assignments(&w, "consumer-1");
    let after_split: Vec<&(u64, u32, Vec<u64>)> = a.iter().filter(|x| x.0 >= 500).collect();
    assert_eq!(after_split.first().map(|x| x.2.clone()), Some(vec![0, 1, 2, 3]));
    let (released_at, _, last) = a.last().cloned().unwrap();
    assert_eq!(last, vec![4, 0, 5, 1, 2, 3]);
    let r = receipts(&w);
    assert!(r.iter().all(|(t, _, m)| !matches!(segment_of(&w, *m), Some(4 | 5)) || *t > released_at));
    assert!(r.iter().any(|(_, _, m)| matches!(segment_of(&w, *m), Some(4 | 5))), "children are read once released");
    assert_eq!(r.len(), 48);
}

/// PIP-379: the joiner receives moved keys only after their previous owner acked them; every key
/// stays in publish order.
#[test]
fn key_shared_join_keeps_per_key_order() {
    let w = run("pulsar-key-shared-join.json");
    let r = receipts(&w);
    assert_eq!(r.len(), 240, "every order exactly once");
    let mut by_key: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut owner_changes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, c, m) in &r {
        let key = w.key_text(w.messages[*m as usize].out.key).unwrap().to_string();
        by_key.entry(key.clone()).or_default().push(w.messages[*m as usize].out.body.index);
        let owners = owner_changes.entry(key).or_default();
        if owners.last() != Some(c) {
            owners.push(c.clone());
        }
    }
    for (key, indexes) in &by_key {
        assert!(indexes.windows(2).all(|p| p[0] < p[1]), "{key} out of order: {indexes:?}");
    }
    assert!(!consumer(&w, "consumer-4").received.is_empty(), "the joiner gets keys");
    let moved: Vec<&String> = owner_changes.iter().filter(|(_, o)| o.len() > 1).map(|(k, _)| k).collect();
    assert!(!moved.is_empty(), "some key moved to consumer-4");
    let draining = w.log.iter().any(|e| matches!(&e.kind, Event::Held { reason: HoldReason::Draining, .. }));
    assert!(draining, "a moved key was held until its previous owner acked");
    assert!(w.log.iter().any(|e| matches!(e.kind, Event::DrainingHashes { .. })));
}

/// Failover: modulo over the top priority level, 1 s delay, rewind: a's unacked messages go to b.
#[test]
fn failover_switch_rewinds_to_the_new_active_consumer() {
    let w = run("pulsar-failover.json");
    assert!(consumer(&w, "consumer-z").received.is_empty(), "priority 1 never becomes active");
    let a = consumer(&w, "consumer-a");
    let unacked_at_a: Vec<u32> = a.received.iter().map(|r| r.msg).filter(|m| !a.acked.contains(m)).collect();
    assert!(!unacked_at_a.is_empty(), "a crashed holding unacked messages");
    let b = consumer(&w, "consumer-b");
    for m in &unacked_at_a {
        assert!(
            b.received.iter().any(|r| r.msg == *m && w.received_at(r) >= 6_001),
            "m{m} was not redelivered to b after the 1 s delay"
        );
    }
    let switched: Vec<u64> = w
        .log
        .iter()
        .filter_map(|e| match &e.kind {
            Event::ActiveSwitched { active, .. } if &*w.consumers[*active as usize].name == "consumer-b" && e.at > 5_000 => {
                Some(e.at)
            }
            _ => None,
        })
        .collect();
    assert_eq!(switched, vec![6_001, 6_001], "p0 and p2 switch 1 s after the broker saw the crash");
    // Initially a has p0 and p2, b has p1; after c joins, p1 goes to c.
    let p1_owner_after_c = w.owners.iter().rev().find(|o| o.what.contains("partition-1")).and_then(|o| o.owner.clone());
    assert_eq!(p1_owner_after_c.as_deref(), Some("consumer-c"));
    let c = consumer(&w, "consumer-c");
    assert!(!c.received.is_empty());
    // b's unacked p1 messages were rewound to c while b still worked through its copies.
    let twice = c.received.iter().filter(|r| b.received.iter().any(|x| x.msg == r.msg)).count();
    assert!(twice > 0, "failover's rewind processes some messages twice");
    // Every payment was received by someone.
    let all: std::collections::BTreeSet<u32> = w.consumers.iter().flat_map(|c| c.received.iter().map(|r| r.msg)).collect();
    assert_eq!(all.len(), 120);
}

/// Shared DLQ: each poison job is delivered maxRedeliverCount + 1 = 4 times (counts 0..3), then
/// goes to `<topic>-<subscription>-DLQ`; the other jobs once each.
#[test]
fn poison_jobs_are_dead_lettered_after_four_deliveries() {
    let w = run("pulsar-shared-dlq.json");
    let dlq = w.topics.iter().find(|t| &*t.name == "persistent://public/default/jobs-work-DLQ").expect("DLQ topic");
    let dlq_messages: u32 =
        dlq.partitions.iter().map(|&p| w.partitions[p as usize].entries.iter().map(|e| e.messages).sum::<u32>()).sum();
    assert_eq!(dlq_messages, 2);
    let mut counts: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for c in &w.consumers {
        for r in &c.received {
            let key = w.key_text(w.messages[r.msg as usize].out.key).unwrap().to_string();
            counts.entry(key).or_default().push(r.redelivery_count);
        }
    }
    for poison in ["poison-0", "poison-1"] {
        let mut seen = counts[poison].clone();
        seen.sort_unstable();
        assert_eq!(seen, vec![0, 1, 2, 3], "{poison}");
    }
    assert_eq!(counts.iter().filter(|(k, v)| k.starts_with("job-") && v == &&vec![0]).count(), 40);
    let jobs = &w.partitions[w.topics[0].partitions[0] as usize];
    assert_eq!(jobs.subscriptions[0].cursor.backlog(), 0, "everything acked, the poison jobs by the DLQ step");
    let report = mqviz_model::Simulation::report(&w);
    assert_eq!(report["messages"]["deadLettered"].as_array().map(Vec::len), Some(2));
}
