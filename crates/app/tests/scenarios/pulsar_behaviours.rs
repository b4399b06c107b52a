//! Pulsar behaviours beyond the presets, each in a small scenario: routing and batching, the
//! subscribe rules, cursor initial positions, acks, nacks, ack timeouts, dead letters and retry,
//! Key_Shared variants, unacked limits, scalable-topic QUEUE consumers, sessions, merge, prune
//! and GC, command validation against the state, and determinism.

use std::collections::BTreeMap;

use mqviz_app::registry;
use mqviz_model::{Simulation, Trace};
use mqviz_pulsar::events::Event;
use mqviz_pulsar::hash::java_string_make_hash;
use mqviz_pulsar::key_shared::HoldReason;
use mqviz_pulsar::world::{ClientState, World};
use serde_json::{json, Value};

/// A scenario with the given topics, producers, consumers, timeline and config.
fn scenario(until: u64, body: Value) -> String {
    let mut v = json!({"format": "mqviz-scenario/1", "broker": "pulsar", "name": "t", "seed": 1, "until": until});
    for (k, x) in body.as_object().unwrap() {
        v[k] = x.clone();
    }
    v.to_string()
}

fn run(text: &str) -> World {
    registry::run_pulsar(text).unwrap_or_else(|e| panic!("{e:?}\n{text}"))
}

fn consumer<'a>(w: &'a World, name: &str) -> &'a mqviz_pulsar::world::Consumer {
    w.consumers.iter().find(|c| &*c.name == name).unwrap()
}

fn count(w: &World, pred: impl Fn(&Event) -> bool) -> usize {
    w.log.iter().filter(|e| pred(&e.kind)).count()
}

fn keyed_producer(topic: &str, count: u32, key: &str) -> Value {
    json!({"name": "p", "topic": topic, "batching": false,
           "sends": [{"at": 1000, "count": count, "intervalMs": 10, "key": key}]})
}

#[test]
fn keyed_messages_route_by_java_string_hash() {
    let w = run(&scenario(
        5_000,
        json!({"topics": [{"name": "t", "partitions": 4}], "producers": [keyed_producer("t", 20, "key-{i}")]}),
    ));
    for m in &w.messages {
        let key = w.key_text(m.out.key).unwrap();
        let part = &w.partitions[m.partition as usize];
        assert_eq!(part.partition_index as u32, java_string_make_hash(key) % 4, "{key}");
        assert!(part.name.ends_with(&format!("-partition-{}", part.partition_index)));
    }
}

#[test]
fn keyless_batches_stick_to_one_partition_and_share_an_entry() {
    let w = run(&scenario(
        5_000,
        json!({"topics": [{"name": "t", "partitions": 3}],
               "producers": [{"name": "p", "topic": "t", "sends": [{"at": 1000, "count": 10, "intervalMs": 0}]}]}),
    ));
    let used: std::collections::BTreeSet<u32> = w.messages.iter().map(|m| m.partition).collect();
    assert_eq!(used.len(), 1, "a 10 ms batching window sends every key-less message to one partition");
    let p = &w.partitions[*used.iter().next().unwrap() as usize];
    assert_eq!(p.entries.len(), 1);
    assert_eq!(p.entries[0].messages, 10);
    let ids: Vec<Option<u32>> = w.messages.iter().map(|m| m.batch_index).collect();
    assert_eq!(ids, (0..10).map(Some).collect::<Vec<_>>());
}

#[test]
fn a_batch_entry_is_acked_with_its_last_message() {
    let w = run(&scenario(
        5_000,
        json!({"topics": [{"name": "t"}],
               "producers": [{"name": "p", "topic": "t", "sends": [{"at": 1000, "count": 5, "intervalMs": 0}]}],
               "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Shared",
                              "ack": {"mode": "individual", "processMs": 100}}]}),
    ));
    let acks: Vec<(u32, u64)> = w
        .log
        .iter()
        .filter_map(|e| match &e.kind {
            Event::AcksApplied { acked, .. } => Some((*acked, e.at)),
            _ => None,
        })
        .collect();
    assert_eq!(acks.len(), 1, "one entry ack, sent after the fifth message: {acks:?}");
    assert_eq!(acks[0].0, 1);
    assert!(acks[0].1 >= 1_000 + 5 * 100);
    assert_eq!(consumer(&w, "c").stats.acked, 5);
}

#[test]
fn a_different_subscription_type_is_refused_while_consumers_are_connected() {
    let w = run(&scenario(
        5_000,
        json!({"topics": [{"name": "t"}],
               "consumers": [
                   {"name": "first", "topic": "t", "subscription": "s", "subscriptionType": "Exclusive"},
                   {"name": "shared", "topic": "t", "subscription": "s", "subscriptionType": "Shared", "startAt": 100},
                   {"name": "second", "topic": "t", "subscription": "s", "subscriptionType": "Exclusive", "startAt": 200}]}),
    ));
    let shared = consumer(&w, "shared");
    assert_eq!(shared.state, ClientState::Failed);
    assert!(
        shared.failure.as_deref().unwrap().contains("Active subscription type of 'Exclusive' is different"),
        "{:?}",
        shared.failure
    );
    let second = consumer(&w, "second");
    assert_eq!(second.failure.as_deref(), Some("ConsumerBusyException: Exclusive consumer is already connected"));
    let warnings = w.warnings();
    assert!(warnings.iter().any(|(g, t)| g == "s" && t.contains("shared could not subscribe")), "{warnings:?}");
}

#[test]
fn with_no_consumer_left_the_dispatcher_is_replaced() {
    let w = run(&scenario(
        5_000,
        json!({"topics": [{"name": "t"}],
               "consumers": [
                   {"name": "first", "topic": "t", "subscription": "s", "subscriptionType": "Exclusive", "closeAt": 100},
                   {"name": "then-shared", "topic": "t", "subscription": "s", "subscriptionType": "Shared", "startAt": 200}]}),
    ));
    assert_eq!(consumer(&w, "then-shared").state, ClientState::Running);
}

#[test]
fn initial_position_applies_only_when_the_cursor_is_created() {
    let w = run(&scenario(
        10_000,
        json!({"topics": [{"name": "t"}],
               "producers": [{"name": "p", "topic": "t", "batching": false,
                              "sends": [{"at": 1000, "count": 5, "intervalMs": 10}, {"at": 5000, "count": 5, "intervalMs": 10}]}],
               "consumers": [
                   {"name": "early", "topic": "t", "subscription": "s", "subscriptionType": "Shared", "closeAt": 3000},
                   {"name": "late", "topic": "t", "subscription": "s", "subscriptionType": "Shared",
                    "subscriptionInitialPosition": "Earliest", "startAt": 4000},
                   {"name": "newcomer", "topic": "t", "subscription": "other", "subscriptionType": "Shared", "startAt": 4000}]}),
    ));
    // `late` joins an existing cursor: Earliest does not rewind it.
    assert_eq!(consumer(&w, "early").received.len(), 5);
    assert_eq!(consumer(&w, "late").received.len(), 5);
    // `other` is created at Latest after the first five: they are never delivered to it.
    assert_eq!(consumer(&w, "newcomer").received.len(), 5);
    let report = w.report();
    let never: Vec<&Value> =
        report["messages"]["neverDelivered"].as_array().unwrap().iter().filter(|m| m["subscription"] == "other").collect();
    assert_eq!(never.len(), 5);
    assert!(never[0]["reason"].as_str().unwrap().contains("cursor was created at Latest"));
    assert!(!never[0]["events"].as_array().unwrap().is_empty());
}

#[test]
fn ack_timeout_redelivers_on_shared_with_a_higher_count() {
    let w = run(&scenario(
        8_000,
        json!({"topics": [{"name": "t"}],
               "producers": [keyed_producer("t", 3, "k-{i}")],
               "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Shared",
                              "ack": "never", "ackTimeoutMs": 2000}]}),
    ));
    let c = consumer(&w, "c");
    let first: Vec<u32> = c.received.iter().filter(|r| r.redelivery_count == 1).map(|r| r.msg).collect();
    assert_eq!(first, vec![0, 1, 2], "each message came back once with redeliveryCount 1");
    let again = w.received_at(c.received.iter().find(|r| r.redelivery_count == 1).unwrap());
    assert!((3_000..=4_100).contains(&again), "between timeout and timeout + tick: {again}");
    assert!(count(&w, |e| matches!(e, Event::AckTimedOut { .. })) >= 1);
    assert!(w.warnings().iter().any(|(_, t)| t.contains("never acks")));
}

#[test]
fn a_nack_on_exclusive_rewinds_everything_and_never_dead_letters() {
    let w = run(&scenario(
        10_000,
        json!({"topics": [{"name": "t"}],
               "producers": [keyed_producer("t", 3, "k-{i}")],
               "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Exclusive",
                              "negativeAckRedeliveryDelayMs": 1000, "deadLetterPolicy": {"maxRedeliverCount": 1},
                              "ack": {"mode": "individual", "nackFirst": 1}}]}),
    ));
    let c = consumer(&w, "c");
    assert!(c.received.iter().all(|r| r.redelivery_count == 0), "no redelivery tracker on single-active dispatchers");
    assert!(count(&w, |e| matches!(e, Event::Rewound { .. })) >= 1);
    assert!(count(&w, |e| matches!(e, Event::RedeliveryRequested { messages: None, .. })) >= 1);
    assert_eq!(c.stats.dead_lettered, 0);
    assert!(w.warnings().iter().any(|(_, t)| t.contains("never triggers")));
    assert_eq!(c.stats.acked, 3);
}

#[test]
fn sticky_ranges_leave_unowned_keys_in_the_backlog() {
    let w = run(&scenario(
        5_000,
        json!({"topics": [{"name": "t"}],
               "producers": [keyed_producer("t", 40, "k-{i}")],
               "consumers": [{"name": "low", "topic": "t", "subscription": "s", "subscriptionType": "Key_Shared",
                              "keySharedPolicy": {"mode": "STICKY", "ranges": [[0, 32767]]}}]}),
    ));
    let got = consumer(&w, "low").received.len();
    assert!(got > 5 && got < 35, "only keys hashing into [0, 32767]: {got}");
    assert!(w.warnings().iter().any(|(_, t)| t.contains("[32768-65535] have no consumer")), "{:?}", w.warnings());
    let report = w.report();
    let never = report["messages"]["neverDelivered"].as_array().unwrap();
    assert_eq!(never.len(), 40 - got);
    assert!(
        never.iter().all(|m| m["reason"].as_str().unwrap().contains("STICKY")
            || m["reason"].as_str().unwrap().contains("no connected consumer")),
        "{never:?}"
    );
}

/// A Key_Shared join with the given policy and broker config; returns the world.
fn key_shared_join(policy: Value, config: Value) -> World {
    let c = |name: &str| {
        json!({"name": name, "topic": "t", "subscription": "s", "subscriptionType": "Key_Shared", "keySharedPolicy": policy,
               "ack": {"mode": "individual", "processMs": 60}})
    };
    run(&scenario(
        20_000,
        json!({"config": config, "topics": [{"name": "t"}],
               "producers": [{"name": "p", "topic": "t", "batching": false,
                              "sends": [{"at": 1000, "count": 200, "intervalMs": 10, "key": "k-{i%16}"}]}],
               "consumers": [c("c1"), c("c2")],
               "timeline": [{"at": 1500, "action": "addConsumer", "consumer": c("c3")}]}),
    ))
}

fn per_key_in_order(w: &World) -> bool {
    let mut last: BTreeMap<String, u32> = BTreeMap::new();
    for e in w.log.iter() {
        if let Event::Received { msg, .. } = &e.kind {
            let m = &w.messages[*msg as usize];
            let key = w.key_text(m.out.key).unwrap().to_string();
            if last.get(&key).is_some_and(|&prev| prev >= m.out.body.index) {
                return false;
            }
            last.insert(key, m.out.body.index);
        }
    }
    true
}

#[test]
fn key_shared_variants() {
    let draining = key_shared_join(json!({"mode": "AUTO_SPLIT"}), json!({}));
    assert!(per_key_in_order(&draining));
    assert!(count(&draining, |e| matches!(e, Event::Held { reason: HoldReason::Draining, .. })) > 0);

    let out_of_order = key_shared_join(json!({"mode": "AUTO_SPLIT", "allowOutOfOrderDelivery": true}), json!({}));
    assert_eq!(count(&out_of_order, |e| matches!(e, Event::Held { reason: HoldReason::Draining, .. })), 0);
    assert_eq!(count(&out_of_order, |e| matches!(e, Event::DrainingHashes { .. })), 0);

    let classic =
        key_shared_join(json!({"mode": "AUTO_SPLIT"}), json!({"subscriptionKeySharedUseClassicPersistentImplementation": true}));
    assert!(count(&classic, |e| matches!(e, Event::Held { reason: HoldReason::RecentlyJoined, .. })) > 0);
    assert!(per_key_in_order(&classic));

    let range_split = key_shared_join(json!({"mode": "AUTO_SPLIT"}), json!({"subscriptionKeySharedUseConsistentHashing": false}));
    assert!(per_key_in_order(&range_split));
    for w in [&draining, &out_of_order, &classic, &range_split] {
        let total: usize = w.consumers.iter().map(|c| c.received.len()).sum();
        assert_eq!(total, 200);
        assert!(!consumer(w, "c3").received.is_empty());
    }
}

/// Classic Key_Shared (PIP-282 off): a consumer that joins a busy subscription gets nothing past
/// its join position until markDelete reaches it; then the dispatcher reads again at once
/// (`markDeletePositionMoveForward` calls `readMoreEntries`). That read was missing: once the
/// producer stopped and the first consumer's receiver queue asked for no more, the entries held
/// for the joiner waited for good and the backlog never drained.
#[test]
fn classic_key_shared_releases_a_recent_joiner_when_mark_delete_reaches_it() {
    let c = |name: &str| {
        json!({"name": name, "topic": "t", "subscription": "s", "subscriptionType": "Key_Shared",
               "ack": {"mode": "individual", "processMs": 20}})
    };
    let w = run(&scenario(
        30_000,
        json!({"config": {"subscriptionKeySharedUseClassicPersistentImplementation": true}, "topics": [{"name": "t"}],
               "producers": [{"name": "p", "topic": "t", "batching": false,
                              "sends": [{"at": 1000, "count": 200, "intervalMs": 3, "key": "k-{i%16}"}]}],
               "consumers": [c("c1")],
               "timeline": [{"at": 1300, "action": "addConsumer", "consumer": c("c2")}]}),
    ));
    assert!(count(&w, |e| matches!(e, Event::Held { reason: HoldReason::RecentlyJoined, .. })) > 0);
    let total: usize = w.consumers.iter().map(|c| c.received.len()).sum();
    assert_eq!(total, 200, "every message is delivered once the join position is acked past");
    assert!(!consumer(&w, "c2").received.is_empty());
    assert!(per_key_in_order(&w));
}

#[test]
fn the_unacked_limit_blocks_a_consumer() {
    let w = run(&scenario(
        5_000,
        json!({"config": {"maxUnackedMessagesPerConsumer": 10}, "topics": [{"name": "t"}],
               "producers": [keyed_producer("t", 30, "k-{i}")],
               "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Shared", "ack": "never"}]}),
    ));
    assert_eq!(consumer(&w, "c").received.len(), 10);
    assert_eq!(count(&w, |e| matches!(e, Event::ConsumerBlocked { .. })), 1);
    assert!(w.warnings().iter().any(|(_, t)| t.contains("maxUnackedMessagesPerConsumer")));
}

#[test]
fn a_zero_queue_consumer_asks_for_one_message_at_a_time() {
    let w = run(&scenario(
        5_000,
        json!({"topics": [{"name": "t"}], "producers": [keyed_producer("t", 5, "k-{i}")],
               "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Shared",
                              "receiverQueueSize": 0, "ack": {"mode": "individual", "processMs": 50}}]}),
    ));
    assert_eq!(consumer(&w, "c").received.len(), 5);
    assert!(w.log.iter().all(|e| !matches!(&e.kind, Event::Flow { permits, .. } if *permits != 1)));
}

#[test]
fn reconsume_later_goes_through_the_retry_topic_then_the_dead_letter_topic() {
    let w = run(&scenario(
        20_000,
        json!({"topics": [{"name": "t"}], "producers": [keyed_producer("t", 1, "k")],
               "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Shared", "enableRetry": true,
                              "deadLetterPolicy": {"maxRedeliverCount": 2},
                              "ack": {"mode": "retry", "retryDelayMs": 1000}}]}),
    ));
    let retry = w.topics.iter().find(|t| t.name.ends_with("/t-s-RETRY")).expect("retry topic");
    let dlq = w.topics.iter().find(|t| t.name.ends_with("/t-s-DLQ")).expect("dead-letter topic");
    let messages = |t: &mqviz_pulsar::world::Topic| w.partitions[t.partitions[0] as usize].entries.len();
    assert_eq!(messages(retry), 2, "RECONSUMETIMES 1 and 2");
    assert_eq!(messages(dlq), 1, "the third reconsume exceeds maxRedeliverCount");
    let c = consumer(&w, "c");
    assert_eq!(c.received.len(), 3);
    let times: Vec<u64> = c.received.iter().map(|r| w.received_at(r)).collect();
    assert!(times[1] >= times[0] + 1_000 && times[2] >= times[1] + 1_000, "delayed delivery: {times:?}");
}

fn scalable(until: u64, consumers: Value, timeline: Value, config: Value) -> World {
    run(&scenario(
        until,
        json!({"config": config, "topics": [{"name": "s", "segments": 2}],
               "producers": [{"name": "p", "topic": "s", "batching": false,
                              "sends": [{"at": 100, "count": 20, "intervalMs": 10, "key": "k-{i}"},
                                        {"at": 3000, "count": 20, "intervalMs": 10, "key": "k-{i}"}]}],
               "consumers": consumers, "timeline": timeline}),
    ))
}

#[test]
fn queue_consumers_read_parent_and_children_without_ordering() {
    let w = scalable(
        10_000,
        json!([{"name": "q", "topic": "s", "subscription": "work", "consumerType": "QUEUE",
                "subscriptionInitialPosition": "Earliest", "startAt": 4000, "ack": {"mode": "individual", "processMs": 30}}]),
        json!([{"at": 2000, "action": "splitSegment", "topic": "s", "segment": 0}]),
        json!({}),
    );
    let q = consumer(&w, "q");
    assert_eq!(q.received.len(), 40);
    let seg = |m: u32| w.partitions[w.messages[m as usize].partition as usize].segment.unwrap();
    let first_child = w.received_at(q.received.iter().find(|r| seg(r.msg) >= 2).unwrap());
    let last_parent = w.received_at(q.received.iter().rev().find(|r| seg(r.msg) == 0).unwrap());
    assert!(first_child <= last_parent, "no drain ordering for QUEUE consumers: parent and children are read together");
    assert!(q.received.iter().any(|r| seg(r.msg) == 1), "segment 1 was never split and is read too");
    assert_eq!(count(&w, |e| matches!(e, Event::AssignmentSent { .. })), 0, "no coordinator");
}

#[test]
fn a_crashed_stream_consumer_keeps_its_segments_for_the_grace_period() {
    let c = |name: &str, extra: Value| {
        let mut v = json!({"name": name, "topic": "s", "subscription": "sub", "consumerType": "STREAM",
                           "subscriptionInitialPosition": "Earliest", "ack": "cumulative"});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    let w = scalable(
        200_000,
        json!([c("a", json!({"crashAt": 5000})), c("b", json!({}))]),
        json!([{"at": 10000, "action": "produce", "producer": "p", "send": {"count": 20, "intervalMs": 10, "key": "late-{i}"}}]),
        json!({"scalableTopicConsumerSessionGracePeriodSeconds": 60}),
    );
    let evicted: Vec<u64> = w.log.iter().filter(|e| matches!(e.kind, Event::SessionEvicted { .. })).map(|e| e.at).collect();
    assert_eq!(evicted, vec![65_000]);
    let b_assignments: Vec<(u64, Vec<u64>)> = w
        .log
        .iter()
        .filter_map(|e| match &e.kind {
            Event::AssignmentSent { consumer, segments, .. } if &*w.consumers[*consumer as usize].name == "b" => {
                Some((e.at, segments.to_vec()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(b_assignments.last().unwrap(), &(65_000, vec![0, 1]));
    // The messages of a's segment published while it was gone reach b after the eviction.
    let b = consumer(&w, "b");
    assert!(b.received.iter().any(|r| w.received_at(r) > 65_000));
    let total: usize = w.consumers.iter().map(|x| x.received.len()).sum();
    assert!(total >= 40);

    // Back within the grace period: same assignment, no rebalance for b.
    let w =
        scalable(100_000, json!([c("a", json!({"crashAt": 5000, "restartAt": 20000})), c("b", json!({}))]), json!([]), json!({}));
    assert_eq!(count(&w, |e| matches!(e, Event::SessionEvicted { .. })), 0);
    assert!(count(&w, |e| matches!(e, Event::SessionRegistered { fresh: false, .. })) == 1);
}

#[test]
fn merge_prune_and_sealed_segment_gc() {
    let w = scalable(
        200_000,
        json!([{"name": "q", "topic": "s", "subscription": "work", "consumerType": "QUEUE", "subscriptionInitialPosition": "Earliest"}]),
        json!([{"at": 2000, "action": "mergeSegments", "topic": "s", "segments": [0, 1]}]),
        json!({"sealedSegmentRetentionMs": 30000}),
    );
    let t = &w.topics[0];
    let layout = &t.scalable.as_ref().unwrap().layout;
    assert_eq!(layout.segment(2).map(|s| s.parent_ids.clone()), Some(Vec::<u64>::new()), "pruned parents leave the DAG");
    assert!(layout.segment(0).is_none() && layout.segment(1).is_none(), "drained sealed segments were collected");
    assert_eq!(count(&w, |e| matches!(e, Event::SegmentTopicDeleted { .. })), 2);
    assert_eq!(consumer(&w, "q").received.len(), 40);
}

#[test]
fn producers_re_route_when_their_segment_is_terminated() {
    // Messages in flight to segment 0 when it is sealed are rejected and sent to the children.
    let w = run(&scenario(
        5_000,
        json!({"network": {"latencyMs": 5}, "topics": [{"name": "s", "segments": 1}],
               "producers": [{"name": "p", "topic": "s", "batching": false, "sends": [{"at": 1995, "count": 10, "intervalMs": 1, "key": "k-{i}"}]}],
               "timeline": [{"at": 2000, "action": "splitSegment", "topic": "s", "segment": 0}]}),
    ));
    assert!(count(&w, |e| matches!(e, Event::PublishRejected { .. })) > 0);
    assert_eq!(w.messages.len(), 10, "nothing lost");
    let parent = &w.partitions[w.topics[0].partitions[0] as usize];
    assert!(parent.terminated);
    // Order of the controller's steps: children created, parent terminated, then the layout.
    let order: Vec<&str> = w
        .log
        .iter()
        .filter_map(|e| match e.kind {
            Event::SegmentTopicCreated { .. } => Some("create"),
            Event::SegmentTerminated { .. } => Some("terminate"),
            Event::LayoutUpdated { .. } => Some("metadata"),
            _ => None,
        })
        .collect();
    assert_eq!(order, vec!["create", "create", "terminate", "metadata"]);
}

#[test]
fn commands_are_checked_against_the_current_state() {
    let text = scenario(
        10_000,
        json!({"topics": [{"name": "s", "segments": 1}, {"name": "t"}],
               "producers": [{"name": "p", "topic": "t", "sends": []}],
               "consumers": [
                   {"name": "shared", "topic": "t", "subscription": "a", "subscriptionType": "Shared"},
                   {"name": "sticky", "topic": "t", "subscription": "k", "subscriptionType": "Key_Shared",
                    "keySharedPolicy": {"mode": "STICKY", "ranges": [[0, 100]]}}],
               "timeline": [{"at": 1000, "action": "splitSegment", "topic": "s", "segment": 0}]}),
    );
    let mut sim = registry::parse(&text).unwrap();
    sim.run_until(2_000);
    let digest = sim.digest();
    let refuse = |sim: &mut Box<dyn Simulation>, cmd: Value, path: &str| {
        let errors = sim.enter_command(&cmd).expect_err(&cmd.to_string());
        assert!(errors.iter().any(|e| e.path == path), "{cmd}: {errors:?}");
    };
    refuse(&mut sim, json!({"at": 2000, "action": "splitSegment", "topic": "s", "segment": 0}), "$.segment");
    refuse(&mut sim, json!({"at": 2000, "action": "mergeSegments", "topic": "s", "segments": [1, 9]}), "$.segments");
    refuse(&mut sim, json!({"at": 2000, "action": "splitSegment", "topic": "t", "segment": 0}), "$.topic");
    refuse(&mut sim, json!({"at": 2000, "action": "closeConsumer", "consumer": "nobody"}), "$.consumer");
    refuse(&mut sim, json!({"at": 2000, "action": "setAck", "consumer": "shared", "ack": "cumulative"}), "$.ack.mode");
    refuse(
        &mut sim,
        json!({"at": 2000, "action": "addConsumer", "consumer": {"name": "sticky-2", "topic": "t", "subscription": "k",
               "subscriptionType": "Key_Shared", "keySharedPolicy": {"mode": "STICKY", "ranges": [[50, 60]]}}}),
        "$.consumer.keySharedPolicy.ranges[0]",
    );
    refuse(&mut sim, json!({"at": 2000, "action": "produce", "producer": "q", "send": {"count": 1}}), "$.producer");
    refuse(&mut sim, json!({"at": 2000, "action": "explode"}), "$.action");
    sim.run_until(2_000);
    assert_eq!(sim.digest(), digest, "refused commands change nothing");
    sim.enter_command(&json!({"at": 2000, "action": "splitSegment", "topic": "s", "segment": 1})).unwrap();
    sim.enter_command(&json!({"at": 2000, "action": "produce", "producer": "p", "send": {"count": 3, "key": "x"}})).unwrap();
    sim.run_until(3_000);
    let w = sim.as_any().downcast_ref::<World>().unwrap();
    assert_eq!(w.topics[0].scalable.as_ref().unwrap().layout.epoch, 2);
    assert_eq!(consumer(w, "shared").received.len(), 3);
}

#[test]
fn runs_are_deterministic_and_checkpoints_replay_identically() {
    let text = mqviz_app::presets::by_file("pulsar-key-shared-join.json").unwrap().text;
    let a = registry::run(text).unwrap();
    let b = registry::run(text).unwrap();
    assert_eq!(a.digest(), b.digest());
    let mut sim = registry::parse(text).unwrap();
    sim.run_until(3_500);
    let mut copy = sim.clone_box();
    let cmd = json!({"at": 3500, "action": "closeConsumer", "consumer": "consumer-2"});
    sim.enter_command(&cmd).unwrap();
    copy.enter_command(&cmd).unwrap();
    sim.run_until(30_000);
    copy.run_until(30_000);
    assert_eq!(sim.digest(), copy.digest());
    // Causes always point backwards.
    for i in 0..sim.log_len() {
        if let Some(c) = sim.log_cause(i) {
            assert!(c < i, "#{i} caused by later #{c}");
        }
    }
}

#[test]
fn trace_view_and_cells_agree() {
    for file in ["pulsar-scalable-two-splits.json", "pulsar-shared-dlq.json", "pulsar-failover.json"] {
        let sim = registry::run(mqviz_app::presets::by_file(file).unwrap().text).unwrap();
        let view = sim.view();
        let ids: Vec<u32> = view.topics.iter().flat_map(|t| t.partitions.iter().map(|p| p.id)).collect();
        let mut facts = 0;
        sim.trace(0, sim.log_len(), &mut |_, t| {
            facts += 1;
            match t {
                Trace::Stored { partition, .. } | Trace::Delivered { partition, .. } | Trace::Dropped { partition, .. } => {
                    assert!(ids.contains(&partition), "{file}: {t:?}")
                }
                Trace::Committed { partition, group, .. } => {
                    assert!(ids.contains(&partition), "{file}: {t:?}");
                    assert!((group as usize) < view.groups.len(), "{file}: {t:?}");
                }
                Trace::Reassigned { consumer } => assert!((consumer as usize) < view.consumers.len()),
                Trace::Heartbeat { .. } | Trace::Overwritten { .. } => panic!("{file}: no heartbeats in Pulsar"),
                Trace::Lifecycle { consumer, .. } => assert!((consumer as usize) < view.consumers.len()),
            }
        });
        assert!(facts > 50, "{file}");
        for t in &view.topics {
            for p in &t.partitions {
                let cells = sim.cells(p.id, 0, p.log_end);
                assert_eq!(cells.len() as u64, p.log_end, "{file} {}", p.label);
                for c in &cells {
                    let m = sim.message(c.msg).unwrap();
                    assert!(!sim.provenance(c.msg).is_empty(), "{file} m{}", c.msg);
                    assert!(m.properties.iter().any(|(k, _)| k == "messageId"));
                }
            }
        }
        assert!(!sim.report_text().is_empty());
    }
    // Scalable views: badges and withheld children.
    let mut sim = registry::parse(mqviz_app::presets::by_file("pulsar-scalable-post-split-backlog.json").unwrap().text).unwrap();
    sim.run_until(6_000);
    let view = sim.view();
    let segs = &view.topics[0].partitions;
    assert_eq!(segs[0].badge.as_deref(), Some("sealed"));
    assert!(segs[1].unowned_reason.as_deref().unwrap().starts_with("withheld: parent 0 not drained"), "{:?}", segs[1]);
    sim.run_until(8_000);
    let view = sim.view();
    assert!(view.topics[0].partitions[0].badge.as_deref().unwrap().starts_with("sealed · drained"));
    assert_eq!(view.topics[0].partitions[1].badge.as_deref(), Some("active"));
}

/// Batch-index acks are off by default (client `batchIndexAckEnabled=false`), so a batch's entry is
/// acked only once every message of the batch is acked, and a negative ack brings the whole
/// entry back: every message of the batch is delivered again, the acked ones included
/// (`BatchMessageAcker`, `NegativeAcksTracker`). On Exclusive the nack rewinds the cursor, and
/// the messages of the old copy acked after it cannot ack the entry either. Before the fix, 4
/// acks and 1 nack in a batch of 5 acked the entry and the nacked message was never seen again.
#[test]
fn a_nack_in_a_batch_brings_the_whole_batch_back_and_keeps_its_entry_unacked() {
    for sub_type in ["Shared", "Exclusive"] {
        let w = run(&scenario(
            6_000,
            json!({"topics": [{"name": "t"}],
                   "producers": [{"name": "p", "topic": "t", "sends": [{"at": 1000, "count": 5, "intervalMs": 0, "key": "k-{i}"}]}],
                   "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": sub_type,
                                  "negativeAckRedeliveryDelayMs": 1000,
                                  "ack": {"mode": "individual", "processMs": 10, "nackKeys": ["k-2"]}}]}),
        ));
        assert_eq!(w.partitions[0].entries.len(), 1, "one batch entry of 5");
        let received = |key: &str| {
            w.log
                .iter()
                .filter(|e| match &e.kind {
                    Event::Received { msg, .. } => w.key_text(w.messages[*msg as usize].out.key) == Some(key),
                    _ => false,
                })
                .count()
        };
        // The nacked message and the acked ones of its batch come back.
        assert!(received("k-2") >= 2, "{sub_type}: the nacked message is delivered again");
        assert!(received("k-0") >= 2, "{sub_type}: an acked message of the batch is delivered again with it");
        // The entry is never acked: its nacked message never is.
        let acked = count(&w, |k| matches!(k, Event::AcksApplied { acked, .. } if *acked > 0));
        assert_eq!(acked, 0, "{sub_type}: no ack reached the broker for the entry");
        assert_eq!(w.partitions[0].subscriptions[0].cursor.backlog(), 1, "{sub_type}: the entry stays in the backlog");
    }
}

/// `ConsumerImpl` opens the dead-letter and retry producers with `TopicName.get(name)`: a short
/// custom name is `persistent://public/default/<name>`, the same topic a scenario declares as
/// `<name>`, which a consumer of that short name reads. Before the fix the dead letters went to a
/// separate topic named literally `orders-poison`, and the declared one stayed empty.
#[test]
fn custom_dead_letter_and_retry_topics_are_full_topic_names() {
    let w = run(&scenario(
        10_000,
        json!({"topics": [{"name": "orders"}, {"name": "persistent://public/default/orders-poison"}, {"name": "orders-later"}],
               "producers": [{"name": "p", "topic": "orders", "batching": false,
                              "sends": [{"at": 1000, "count": 4, "intervalMs": 10, "key": "k-{i}"}]}],
               "consumers": [
                   {"name": "c", "topic": "orders", "subscription": "s", "subscriptionType": "Shared",
                    "negativeAckRedeliveryDelayMs": 100,
                    "deadLetterPolicy": {"maxRedeliverCount": 1, "deadLetterTopic": "orders-poison"},
                    "ack": {"mode": "individual", "processMs": 5, "nackKeys": ["k-1"]}},
                   {"name": "r", "topic": "orders", "subscription": "later", "subscriptionType": "Shared", "enableRetry": true,
                    "deadLetterPolicy": {"maxRedeliverCount": 3, "retryLetterTopic": "orders-later"},
                    "ack": {"mode": "retry", "processMs": 5}},
                   {"name": "dlq-reader", "topic": "orders-poison", "subscription": "d", "subscriptionType": "Shared"}]}),
    ));
    let full = |n: &str| format!("persistent://public/default/{n}");
    let names: Vec<&str> = w.topics.iter().map(|t| &*t.name).collect();
    assert!(!names.contains(&"orders-poison") && !names.contains(&"orders-later"), "no topic named literally: {names:?}");
    for n in ["orders-poison", "orders-later"] {
        assert_eq!(names.iter().filter(|x| **x == full(n)).count(), 1, "one {n} topic: {names:?}");
    }
    let topic = |n: &str| w.topics.iter().position(|t| *t.name == full(n)).unwrap();
    let stored_in = |t: usize| w.topics[t].partitions.iter().map(|&p| w.partitions[p as usize].entries.len()).sum::<usize>();
    assert_eq!(stored_in(topic("orders-poison")), 1, "the poison message is in the declared dead-letter topic");
    assert!(stored_in(topic("orders-later")) > 0, "retries are in the declared retry topic");
    assert!(consumer(&w, "dlq-reader").stats.received >= 1, "a consumer of the short name reads the dead letter");
}

/// A zero receiver queue is a `ZeroQueueConsumerImpl`: it closes itself when a batch arrives
/// ("Unsupported Batch message with 0 size receiver queue"), and on a partitioned topic the
/// `MultiTopicsConsumerImpl` refuses it before subscribing. Before the fix both ran and received.
#[test]
fn a_zero_queue_consumer_refuses_batches_and_partitioned_topics() {
    let w = run(&scenario(
        5_000,
        json!({"topics": [{"name": "batched"}, {"name": "single"}, {"name": "parts", "partitions": 2}],
               "producers": [
                   {"name": "b", "topic": "batched", "sends": [{"at": 1000, "count": 5, "intervalMs": 0}]},
                   {"name": "s", "topic": "single", "batching": false, "sends": [{"at": 1000, "count": 5, "intervalMs": 10}]}],
               "consumers": [
                   {"name": "zb", "topic": "batched", "subscription": "x", "subscriptionType": "Shared", "receiverQueueSize": 0},
                   {"name": "zs", "topic": "single", "subscription": "x", "subscriptionType": "Shared", "receiverQueueSize": 0},
                   {"name": "zp", "topic": "parts", "subscription": "x", "subscriptionType": "Shared", "receiverQueueSize": 0}]}),
    ));
    let zb = consumer(&w, "zb");
    assert_eq!(zb.state, ClientState::Closed);
    assert!(
        zb.failure.as_deref().unwrap_or("").contains("Unsupported Batch message with 0 size receiver queue"),
        "{:?}",
        zb.failure
    );
    assert_eq!(zb.stats.received, 0, "the batch is never shown to the application");
    let zs = consumer(&w, "zs");
    assert_eq!(zs.stats.received, 5, "unbatched messages reach a zero-queue consumer one at a time");
    let zp = consumer(&w, "zp");
    assert_eq!(zp.state, ClientState::Failed);
    assert!(zp.failure.as_deref().unwrap_or("").contains("greater than 0 for Topics Consumer"), "{:?}", zp.failure);
}

/// After the only consumer crashes the broker rewinds the cursor at once; when it comes back,
/// the switch's rewind must still say how many unacked entries are read again (the ones the
/// crashed consumer had), not "0" before reading them.
#[test]
fn a_rewind_after_a_restart_counts_the_entries_read_again() {
    let w = run(&scenario(
        6_000,
        json!({"topics": [{"name": "t"}],
               "producers": [{"name": "p", "topic": "t", "batching": false, "sends": [{"at": 1000, "count": 5, "intervalMs": 10}]}],
               "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Exclusive",
                              "crashAt": 1500, "restartAt": 2000, "ack": {"mode": "individual", "processMs": 2000}}]}),
    ));
    let said: Vec<u32> = w
        .log
        .iter()
        .filter(|e| e.at >= 2000)
        .filter_map(|e| match &e.kind {
            Event::ActiveSwitched { redelivered, .. } | Event::Rewound { redelivered, .. } => Some(*redelivered),
            _ => None,
        })
        .collect();
    let again = w.log.iter().filter(|e| e.at >= 2000 && matches!(e.kind, Event::Received { .. })).count() as u32;
    assert!(again >= 5, "the 5 unacked messages come back: {again}");
    assert_eq!(said.first(), Some(&5), "the rewind says so: {said:?}");
}

/// A nack loop over a long run grows without end (about 35 MB per 10^6 ms); the budget stops it
/// cleanly at that instant, and the log, the warnings and the report say so.
#[test]
fn a_run_that_outgrows_its_memory_budget_stops_cleanly() {
    let text = scenario(
        10_000_000_000,
        json!({"memoryBudgetMb": 5, "topics": [{"name": "t"}],
               "producers": [{"name": "p", "topic": "t", "batching": false, "sends": [{"at": 1000, "count": 20, "intervalMs": 1}]}],
               "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Shared",
                              "negativeAckRedeliveryDelayMs": 100, "ack": {"mode": "nack", "processMs": 1}}]}),
    );
    let w = run(&text);
    let stop = w.budget_stop.as_ref().expect("the run stopped at its budget");
    assert!(stop.reached > 5_000_000 && stop.at < 10_000_000_000, "{stop:?}");
    assert_eq!(count(&w, |k| matches!(k, Event::BudgetExceeded { .. })), 1);
    let sim = registry::run(&text).unwrap();
    assert!(sim
        .warnings()
        .iter()
        .any(|(what, text)| what == "memory budget" && text.contains("over its memory budget of 5.0 MB")));
    assert!(sim.report()["stopped"]["reason"].as_str().unwrap().starts_with(&format!("the run stopped at t={}", stop.at)));
    assert!(sim.report_text().contains("stopped early: "));
}

/// A delivery still on the wire when an Exclusive consumer calls `redeliverUnacknowledgedMessages`
/// carries the old epoch: the client drops it, but counts it processed first, so its permit flows
/// back. (Found by `mqviz fuzz --model pulsar`, seed 131: the model dropped it with its permit,
/// and a consumer with a receiver queue of 1 was never sent anything again.)
#[test]
fn a_delivery_dropped_for_its_old_epoch_gives_its_permit_back() {
    let w = run(&scenario(
        20_000,
        json!({"topics": [{"name": "t"}], "producers": [keyed_producer("t", 100, "k")],
               "consumers": [{"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Exclusive",
                              "receiverQueueSize": 1, "latencyMs": 5, "subscriptionInitialPosition": "Earliest"}],
               "timeline": [{"at": 1300, "action": "redeliverUnacknowledged", "consumer": "c"}]}),
    ));
    assert!(count(&w, |e| matches!(e, Event::RedeliveryRequested { .. })) == 1);
    let received: std::collections::BTreeSet<u32> = consumer(&w, "c").received.iter().map(|r| r.msg).collect();
    assert_eq!(received.len(), 100, "every message reaches c after the redelivery");
    let sub = &w.partitions[0].subscriptions[0];
    assert_eq!(sub.cursor.backlog(), 0);
}

/// STICKY ranges are checked against the live range map when a consumer subscribes
/// (`HashRangeExclusiveStickyKeyConsumerSelector.findConflictingConsumer`), and a leaver's ranges
/// are dropped: a consumer may take the range of one that closed, and a conflict with a connected
/// consumer fails that consumer's subscribe at run time, not the scenario file.
#[test]
fn sticky_ranges_conflict_with_connected_consumers_only() {
    let sticky = |name: &str, range: [u32; 2], start: u64| {
        json!({"name": name, "topic": "t", "subscription": "s", "subscriptionType": "Key_Shared", "startAt": start,
               "subscriptionInitialPosition": "Earliest", "keySharedPolicy": {"mode": "STICKY", "ranges": [range]}})
    };
    let mut k1 = sticky("k1", [0, 65535], 0);
    k1["closeAt"] = json!(3000);
    let w = run(&scenario(
        10_000,
        json!({"topics": [{"name": "t"}], "producers": [keyed_producer("t", 50, "key-{i}")],
               "consumers": [k1, sticky("k2", [0, 100], 4000), sticky("k3", [50, 200], 5000)]}),
    ));
    let failed: Vec<String> = w
        .log
        .iter()
        .filter_map(|e| match &e.kind {
            Event::SubscribeFailed { consumer, reason, .. } => {
                Some(format!("{}: {reason}", w.consumers[*consumer as usize].name))
            }
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].starts_with("k3: ConsumerAssignException: Range conflict with consumer k2"), "{failed:?}");
    assert!(count(&w, |e| matches!(e, Event::Subscribed { consumer: 1, .. })) == 1, "k2 takes part of k1's freed range");
}
