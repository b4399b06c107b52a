//! RocketMQ behaviours beyond the seed article: retry ladder and DLQ, broadcasting, orderly
//! consumption with broker locks, crash and channel expiry, and timeline changes.

use mqviz_rocketmq::events::Event;
use mqviz_rocketmq::report::report_json;
use mqviz_rocketmq::scenario::parse_scenario;
use mqviz_rocketmq::world::World;
use serde_json::{json, Value};

fn scenario(groups: Value, timeline: Value, until: u64, count: u32) -> String {
    json!({
        "format": "mqviz-scenario/1", "until": until, "brokers": [{"name": "broker-a"}],
        "topics": [{"name": "T", "queues": 4}],
        "producers": [{"id": "p", "sends": [{"at": 5000, "topic": "T", "tag": "A", "body": "m{i}", "count": count, "intervalMs": 10}]}],
        "groups": groups, "timeline": timeline,
    })
    .to_string()
}

fn run(text: &str) -> World {
    let mut w = World::new(parse_scenario(text).unwrap_or_else(|e| panic!("{e:?}")));
    w.run_to_end();
    w
}

fn events(w: &World, pred: impl Fn(&Event) -> bool) -> Vec<(u64, Event)> {
    w.log().entries().filter(|e| pred(&e.kind)).map(|e| (e.at, e.kind)).collect()
}

#[test]
fn failed_messages_follow_the_retry_ladder_then_succeed() {
    let groups =
        json!([{"name": "g", "consumers": [{"clientId": "c1", "subscriptions": {"T": "*"}, "consumeResult": {"failTimes": 2}}]}]);
    let w = run(&scenario(groups, json!([]), 200_000, 1));
    let delays: Vec<u64> = events(&w, |e| matches!(e, Event::SentBack { .. }))
        .iter()
        .map(|(_, e)| match e {
            Event::SentBack { delay_ms, .. } => *delay_ms,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(delays, vec![10_000, 30_000], "delay levels 3 and 4: 10 s then 30 s");
    let consumed = events(&w, |e| matches!(e, Event::Consumed { .. }));
    assert_eq!(consumed.len(), 1);
    // Produced at 5 s, failed twice, delivered from %RETRY% after 10 s + 30 s.
    assert!(consumed[0].0 >= 45_000, "consumed at {}", consumed[0].0);
    let r = report_json(&w);
    assert_eq!(r["consumers"]["c1"]["consumed"][0]["topic"], "T", "retried messages restore their original topic");
    assert!(r["unconsumed"].as_array().unwrap().is_empty());
}

#[test]
fn the_seventeenth_failure_goes_to_the_dlq() {
    let groups = json!([{"name": "g", "consumers": [{"clientId": "c1", "subscriptions": {"T": "*"}, "consumeResult": "RECONSUME_LATER"}]}]);
    let w = run(&scenario(groups, json!([]), 20_000_000, 1));
    assert_eq!(events(&w, |e| matches!(e, Event::ConsumeFailed { .. })).len(), 17);
    assert_eq!(events(&w, |e| matches!(e, Event::SentBack { .. })).len(), 16);
    let dlq = events(&w, |e| matches!(e, Event::MovedToDlq { .. }));
    assert_eq!(dlq.len(), 1);
    // 10 s + 30 s + 1 m + ... + 2 h = 17,140 s of delays before the last attempt.
    assert!(dlq[0].0 >= 5_000 + 17_140_000, "dlq at {}", dlq[0].0);
    let r = report_json(&w);
    let un = r["unconsumed"].as_array().unwrap();
    assert_eq!(un.len(), 1);
    assert!(un[0]["reason"].as_str().unwrap().contains("%DLQ%g"), "{}", un[0]["reason"]);
}

#[test]
fn broadcasting_delivers_every_message_to_every_consumer() {
    let groups = json!([{"name": "g", "messageModel": "BROADCASTING", "consumers": [
        {"clientId": "c1", "subscriptions": {"T": "*"}}, {"clientId": "c2", "subscriptions": {"T": "*"}, "startAt": 1000}]}]);
    let w = run(&scenario(groups, json!([]), 60_000, 20));
    let r = report_json(&w);
    for c in ["c1", "c2"] {
        assert_eq!(r["consumers"][c]["consumed"].as_array().unwrap().len(), 20, "{c}");
    }
    // BROADCASTING never notifies (5.x) and has no retry subscription.
    assert!(events(&w, |e| matches!(e, Event::HeartbeatApplied { notify: true, .. })).is_empty());
    assert!(events(&w, |e| matches!(e, Event::NotifyReceived { .. })).is_empty());
}

#[test]
fn orderly_consumption_holds_broker_locks_and_keeps_queue_order() {
    let groups = json!([{"name": "g", "orderly": true, "consumers": [
        {"clientId": "c1", "subscriptions": {"T": "*"}, "consumeResult": {"failTimes": 1}},
        {"clientId": "c2", "subscriptions": {"T": "*"}, "startAt": 1000}]}]);
    let w = run(&scenario(groups, json!([]), 120_000, 40));
    let locks = events(&w, |e| matches!(e, Event::QueueLocked { granted: true, .. }));
    assert!(locks.len() >= 4, "every allocated queue is locked at the broker first");
    let r = report_json(&w);
    let mut total = 0;
    for c in ["c1", "c2"] {
        let consumed = r["consumers"][c]["consumed"].as_array().unwrap();
        total += consumed.len();
        for q in 0..4 {
            let offsets: Vec<u64> =
                consumed.iter().filter(|m| m["queueId"] == q).map(|m| m["offset"].as_u64().unwrap()).collect();
            assert!(offsets.windows(2).all(|p| p[0] < p[1]), "{c} queue {q}: {offsets:?}");
        }
    }
    assert_eq!(total, 40);
    // Orderly failures are retried locally (SUSPEND), never sent back.
    assert!(events(&w, |e| matches!(e, Event::SentBack { .. })).is_empty());
    assert!(!events(&w, |e| matches!(e, Event::ConsumeFailed { .. })).is_empty());
}

#[test]
fn a_crashed_consumer_expires_silently_and_survivors_notice_at_their_next_rebalance() {
    let groups = json!([{"name": "g", "consumers": [
        {"clientId": "c1", "subscriptions": {"T": "*"}}, {"clientId": "c2", "subscriptions": {"T": "*"}, "startAt": 1000, "crashAt": 30000}]}]);
    let w = run(&scenario(groups, json!([]), 250_000, 0));
    assert!(w.consumers[1].crashed && !w.consumers[1].running);
    let expired = events(&w, |e| matches!(e, Event::ChannelExpired { .. }));
    assert_eq!(expired.len(), 1);
    let t = expired[0].0;
    // c2's last heartbeat was at most 30 s in; expiry needs 120 s of silence, scanned every 10 s.
    assert!((121_000..=170_000).contains(&t), "expired at {t}");
    assert!(events(&w, |e| matches!(e, Event::NotifyReceived { .. })).iter().all(|(at, _)| *at < t), "expiry sends no notify");
    let takeover = events(
        &w,
        |e| matches!(e, Event::Allocated { client, topic, queues, .. } if &**client == "c1" && &**topic == "T" && queues.len() == 4),
    );
    let after: Vec<u64> = takeover.iter().map(|(at, _)| *at).filter(|at| *at > t).collect();
    assert!(!after.is_empty() && after[0] <= t + 20_001, "c1 took all queues at {after:?}, expiry at {t}");
}

#[test]
fn queue_count_and_strategy_changes_take_effect_through_routes_and_rebalance() {
    let groups = json!([{"name": "g", "consumers": [
        {"clientId": "c1", "subscriptions": {"T": "*"}}, {"clientId": "c2", "subscriptions": {"T": "*"}, "startAt": 1000}]}]);
    let timeline = json!([
        {"at": 40000, "action": "setQueueCount", "topic": "T", "queues": 8},
        {"at": 120000, "action": "setAllocation", "group": "g", "allocation": "AVG_BY_CIRCLE"}]);
    let w = run(&scenario(groups, timeline, 200_000, 0));
    // The last allocation c1 computed before `t`.
    let alloc_before = |t: u64| -> Vec<u32> {
        w.log()
            .entries()
            .rev()
            .filter(|e| e.at < t)
            .find_map(|e| match &e.kind {
                Event::Allocated { client, topic, queues, .. } if &**client == "c1" && &**topic == "T" => Some(queues.clone()),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(alloc_before(40_000), vec![0, 1]);
    // After the route refresh (every 30 s) c1 gets half of 8 queues.
    let eight = w.log().entries().find(
        |e| matches!(&e.kind, Event::Allocated { client, queues, .. } if &**client == "c1" && queues.len() == 4 && e.at > 40_000),
    );
    let eight = eight.expect("c1 allocated 4 of 8 queues");
    assert!(eight.at <= 40_000 + 30_000 + 20_001, "at {}", eight.at);
    let circle = w.log().entries().find(|e| matches!(&e.kind, Event::Allocated { client, topic, strategy: "AVG_BY_CIRCLE", .. } if &**client == "c1" && &**topic == "T"));
    match circle.as_ref().map(|e| &e.kind) {
        Some(Event::Allocated { queues, .. }) => assert_eq!(queues, &vec![0, 2, 4, 6]),
        other => panic!("no AVG_BY_CIRCLE allocation: {other:?}"),
    }
}

#[test]
fn produce_commands_add_send_scripts_mid_run() {
    let groups = json!([{"name": "g", "consumers": [{"clientId": "c1", "subscriptions": {"T": "B"}}]}]);
    let timeline = json!([{"at": 20000, "action": "produce", "producer": "p",
        "send": {"topic": "T", "tag": "B", "body": "late {i}", "count": 5, "intervalMs": 100}}]);
    let w = run(&scenario(groups, timeline, 60_000, 3));
    let r = report_json(&w);
    let bodies: Vec<&str> =
        r["consumers"]["c1"]["consumed"].as_array().unwrap().iter().map(|m| m["body"].as_str().unwrap()).collect();
    assert_eq!(bodies.len(), 5, "{bodies:?}");
    assert!(bodies.iter().all(|b| b.starts_with("late ")));
    let first = w.log().entries().find(|e| matches!(&e.kind, Event::MessageStored { tag: Some(t), .. } if &**t == "B")).unwrap();
    assert!(first.at >= 20_000);
    // The scripted sends and the command's share the producer's queue index: round-robin continues.
    let queues: Vec<u32> = w.messages.iter().map(|m| m.queue_id()).collect();
    assert_eq!(queues, vec![0, 1, 2, 3, 0, 1, 2, 3]);
}

#[test]
fn explicit_send_times_are_honoured() {
    let text = json!({
        "format": "mqviz-scenario/1", "until": 30000, "brokers": [{"name": "broker-a"}],
        "topics": [{"name": "T", "queues": 2}],
        "producers": [{"id": "p", "sends": [{"topic": "T", "tag": "A", "body": "m{i}", "times": [3000, 3500, 9000]}]}],
        "groups": [{"name": "g", "consumers": [{"clientId": "c1", "subscriptions": {"T": "*"}}]}]
    })
    .to_string();
    let w = run(&text);
    let born: Vec<u64> = w.messages.iter().map(|m| m.born_at).collect();
    assert_eq!(born, vec![3000, 3500, 9000]);
    assert_eq!(w.consumers[0].stats.consumed, 3);
}

/// Before a member's first rebalance (up to a second after its start) its queues are not
/// allocated yet: no owner then is no fault, so neither the warnings nor the view call it one
/// (issue 42: an all-red "unowned" table at t=0 was a red herring). Once the members have
/// rebalanced, a queue left without an owner is a fault again.
#[test]
fn queues_before_the_first_rebalance_are_not_reported_unowned() {
    let groups = json!([{"name": "g", "consumers": [{"clientId": "c1", "subscriptions": {"T": "*"}},
        {"clientId": "c2", "subscriptions": {"T": "*"}, "startAt": 3000}]}]);
    let text = scenario(groups, json!([{"at": 8000, "action": "crashConsumer", "consumer": "c1"}]), 60_000, 1);
    let mut w = World::new(parse_scenario(&text).unwrap());
    let unowned = |w: &World| {
        let v = mqviz_model::Simulation::view(w);
        v.topics.iter().flat_map(|t| t.partitions.iter()).filter(|p| p.unowned_reason.is_some()).count()
    };
    let warns = |w: &World| mqviz_model::Simulation::warnings(w).iter().any(|(_, t)| t.contains("with no owner"));
    w.run_until(0);
    assert_eq!(w.awaiting_first_rebalance("T").map(|(c, _)| c), Some("c1"));
    assert_eq!((unowned(&w), warns(&w)), (0, false), "t=0: nothing allocated yet is no fault");
    w.run_until(2000);
    assert!(w.awaiting_first_rebalance("T").is_none());
    // c1 crashed at 8 s: c2 takes its queues only once the broker expires c1's channel, so
    // in between the queues c1 held are owned by nobody, and that is reported.
    w.run_until(9000);
    assert!(unowned(&w) > 0 && warns(&w), "an orphan after the first rebalance is reported");
}
