//! Regression tests for the divergences of issue 9: ProcessQueue identity under churn, orderly
//! removal, discarded results, long-poll commits, rebalance pacing, producers and routes, filters,
//! CHECK_CLIENT_CONFIG, duplicate clientIds and missing topics. Each test states the real
//! client's or broker's rule it checks (shared/specs/rocketmq.md).

use mqviz_rocketmq::events::{Event, PullStatus};
use mqviz_rocketmq::report::report_json;
use mqviz_rocketmq::scenario::parse_scenario;
use mqviz_rocketmq::world::World;
use serde_json::{json, Value};

fn build(v: Value) -> World {
    World::new(parse_scenario(&v.to_string()).unwrap_or_else(|e| panic!("{e:?}")))
}

fn run(v: Value) -> World {
    let mut w = build(v);
    w.run_to_end();
    w
}

fn events(w: &World, pred: impl Fn(&Event) -> bool) -> Vec<(u64, Event)> {
    w.log().entries().filter(|e| pred(&e.kind)).map(|e| (e.at, e.kind)).collect()
}

fn scenario(topic_queues: u32, groups: Value, sends: Value, timeline: Value, until: u64) -> Value {
    json!({
        "format": "mqviz-scenario/1", "until": until, "brokers": [{"name": "broker-a"}],
        "topics": [{"name": "T", "queues": topic_queues}],
        "producers": [{"id": "p", "sends": sends}],
        "groups": groups, "timeline": timeline,
    })
}

fn consumed_total(r: &Value) -> usize {
    r["consumers"].as_object().unwrap().values().map(|c| c["consumed"].as_array().unwrap().len()).sum()
}

/// Issue 9's new-user group: 5 consumers started 500 ms apart, AVG_BY_CIRCLE, 10 queues, 100
/// messages after everyone joined. Queues leave and come back while their pulls are held; a
/// re-added queue is a new ProcessQueue with one new PullRequest, the old chain dies.
#[test]
fn five_consumers_avg_by_circle_consume_each_message_exactly_once() {
    let consumers: Vec<Value> =
        (0..5).map(|i| json!({"clientId": format!("C{i}"), "subscriptions": {"T": "*"}, "startAt": i * 500})).collect();
    let w = run(scenario(
        10,
        json!([{"name": "g", "allocation": "AVG_BY_CIRCLE", "consumers": consumers}]),
        json!([{"at": 10000, "topic": "T", "body": "m{i}", "count": 100, "intervalMs": 10}]),
        json!([]),
        120_000,
    ));
    let r = report_json(&w);
    assert_eq!(consumed_total(&r), 100);
    assert!(r["duplicates"].as_array().unwrap().is_empty(), "{}", r["duplicates"]);
    assert!(r["unconsumed"].as_array().unwrap().is_empty());
    // Every consumption came from a ProcessQueue that was live at that instant.
    for c in &w.consumptions {
        let pq = w.process_queue_record(c.pq).unwrap();
        assert!(pq.created_at <= c.started_at && pq.dropped.is_none_or(|(t, _)| t >= c.at), "{c:?} from {pq:?}");
    }
}

/// A queue leaves C1 while C1's pull on it is held by the broker, and comes back before the hold
/// ends: the re-added queue is a new ProcessQueue with one new PullRequest, and the old held
/// pull, woken by the next message, finds its ProcessQueue dropped (its chain ends there). The
/// model used to run both chains and consume that queue twice.
#[test]
fn a_queue_that_comes_back_while_its_pull_is_held_is_pulled_by_one_chain() {
    let w = run(scenario(
        2,
        json!([{"name": "g", "consumers": [
            {"clientId": "C1", "subscriptions": {"T": "*"}},
            {"clientId": "C2", "subscriptions": {"T": "*"}, "startAt": 5000, "stopAt": 8000}]}]),
        json!([{"at": 9000, "topic": "T", "body": "m{i}", "count": 20, "intervalMs": 100}]),
        json!([]),
        60_000,
    ));
    let c1_queue1: Vec<_> = w.process_queues.iter().filter(|pq| pq.consumer == 0 && pq.mq.queue_id == 1).collect();
    assert_eq!(c1_queue1.len(), 2, "queue 1 left C1 and came back: {c1_queue1:?}");
    let r = report_json(&w);
    assert_eq!(r["consumers"]["C1"]["consumed"].as_array().unwrap().len(), 20);
    assert!(r["duplicates"].as_array().unwrap().is_empty(), "{}", r["duplicates"]);
}

/// A ProcessQueue never has two pull requests in flight: each response answers the one
/// outstanding request of the ProcessQueue it was sent for, or is ignored.
#[test]
fn a_stale_pull_response_does_not_restart_a_second_chain() {
    let consumers: Vec<Value> =
        (0..3).map(|i| json!({"clientId": format!("C{i}"), "subscriptions": {"T": "*"}, "startAt": i * 700})).collect();
    let w = run(scenario(
        6,
        json!([{"name": "g", "allocation": "AVG_BY_CIRCLE", "consumers": consumers}]),
        json!([{"at": 3000, "topic": "T", "body": "m{i}", "count": 60, "intervalMs": 50}]),
        json!([{"at": 9000, "action": "stopConsumer", "consumer": "C1"}, {"at": 12000, "action": "startConsumer", "consumer": "C1"}]),
        60_000,
    ));
    // Per (client, queue), successive pull-served offsets never go backwards within one chain:
    // two chains would interleave and re-serve old offsets.
    let r = report_json(&w);
    assert_eq!(consumed_total(&r) - r["duplicates"].as_array().unwrap().len(), 60);
    for d in r["duplicates"].as_array().unwrap() {
        assert!(!d["cause"].as_str().unwrap().contains("unexplained"), "{d}");
    }
}

/// A concurrently consumed batch that runs when its queue moves has run the listener: it counts
/// as a consumption, its result is discarded, and the new owner consumes the message again; the
/// report lists that duplicate with its cause (spec §5 step 3, §11.7).
#[test]
fn discarded_in_flight_results_count_as_consumptions_and_are_reported_as_duplicates() {
    let w = run(scenario(
        2,
        json!([{"name": "g", "consumers": [
            {"clientId": "C1", "subscriptions": {"T": "*"}, "consumeTimeMs": 8000},
            {"clientId": "C2", "subscriptions": {"T": "*"}, "startAt": "never"}]}]),
        json!([{"at": 5000, "topic": "T", "body": "m{i}", "count": 2, "intervalMs": 10}]),
        json!([{"at": 7000, "action": "startConsumer", "consumer": "C2"}]),
        60_000,
    ));
    assert!(!events(&w, |e| matches!(e, Event::ResultsDiscarded { .. })).is_empty());
    assert!(w.consumptions.iter().any(|c| c.result_discarded()));
    let r = report_json(&w);
    let dups = r["duplicates"].as_array().unwrap();
    assert_eq!(dups.len(), 1, "{dups:?}");
    assert_eq!(dups[0]["consumers"], json!(["C1", "C2"]));
    assert!(dups[0]["cause"].as_str().unwrap().contains("result was discarded"), "{}", dups[0]);
    assert_eq!(r["consumers"]["C1"]["stats"]["resultsDiscarded"], 1);
}

/// A held pull woken by a message re-executes with brokerAllowSuspend = false: it does not commit
/// its (stale) commitOffset again (spec §7 step 5).
#[test]
fn a_woken_long_poll_does_not_commit_its_offset_again() {
    let mut w = build(scenario(
        1,
        json!([{"name": "g", "consumers": [{"clientId": "C1", "subscriptions": {"T": "*"}, "consumeTimeMs": 3000}]}]),
        json!([{"at": 3000, "topic": "T", "body": "a{i}", "count": 5},
               {"at": 6000, "topic": "T", "body": "b{i}", "count": 5},
               {"at": 19000, "topic": "T", "body": "c{i}", "count": 1}]),
        json!([]),
        30_000,
    ));
    // By 15 s the persist task has committed 10; the pull held since ~6 s carries commitOffset 5.
    w.run_until(18_000);
    assert_eq!(w.brokers[0].committed("T", "g", 0), Some(10));
    // The message at 19 s wakes that pull; the broker must keep 10.
    w.run_until(19_500);
    assert_eq!(w.brokers[0].committed("T", "g", 0), Some(10));
}

/// Orderly: a rebalance cannot remove a queue whose listener holds the consume lock; it stays
/// with its owner (broker lock included) and removal is retried at the next rebalance. The new
/// owner's lock fails meanwhile and 5.x retries within about a second, not at the next 20 s run.
#[test]
fn an_orderly_queue_stays_with_its_busy_owner_and_the_new_owner_retries_soon() {
    let w = run(scenario(
        2,
        json!([{"name": "g", "orderly": true, "consumers": [
            {"clientId": "C1", "subscriptions": {"T": "*"}, "consumeTimeMs": 6000},
            {"clientId": "C2", "subscriptions": {"T": "*"}, "startAt": "never"}]}]),
        json!([{"at": 3000, "topic": "T", "body": "m{i}", "count": 6, "intervalMs": 10}]),
        json!([{"at": 5000, "action": "startConsumer", "consumer": "C2"}]),
        120_000,
    ));
    let deferred = events(&w, |e| matches!(e, Event::RemovalDeferred { client, .. } if &**client == "C1"));
    assert!(!deferred.is_empty(), "C1's removal waited for its listener");
    let refused: Vec<u64> = events(&w, |e| matches!(e, Event::QueueLocked { client, granted: false, .. } if &**client == "C2"))
        .iter()
        .map(|x| x.0)
        .collect();
    assert!(!refused.is_empty());
    assert!(refused.windows(2).all(|p| p[1] - p[0] <= 1_500), "C2 retried the lock every ~1 s: {refused:?}");
    // No two consumers consumed the same queue at overlapping times.
    for a in &w.consumptions {
        for b in &w.consumptions {
            let (ma, mb) = (&w.messages[a.msg as usize], &w.messages[b.msg as usize]);
            if a.consumer() != b.consumer() && ma.queue_id() == mb.queue_id() && ma.topic() == mb.topic() {
                assert!(a.at <= b.started_at || b.at <= a.started_at, "{a:?} overlaps {b:?}");
            }
        }
    }
    let r = report_json(&w);
    assert_eq!(consumed_total(&r) - r["duplicates"].as_array().unwrap().len(), 6);
}

/// BROADCASTING with CONSUME_FROM_TIMESTAMP searches each queue from consumeTimestamp (default:
/// the consumer's start − 30 min); the local offset store ignores the broker's young-queue rule.
#[test]
fn broadcasting_from_a_timestamp_searches_the_queue() {
    let group = |ts: Option<u64>| {
        let mut g = json!({"name": "g", "messageModel": "BROADCASTING", "consumeFromWhere": "CONSUME_FROM_TIMESTAMP",
            "consumers": [{"clientId": "C1", "subscriptions": {"T": "*"}, "startAt": 2_400_000}]});
        if let Some(ts) = ts {
            g["consumeTimestamp"] = json!(ts);
        }
        json!([g])
    };
    let sends = json!([{"at": 300_000, "topic": "T", "body": "early{i}", "count": 4},
                       {"at": 2_100_000, "topic": "T", "body": "late{i}", "count": 4}]);
    let bodies = |w: &World| -> Vec<String> {
        let r = report_json(w);
        let mut v: Vec<String> = r["consumers"]["C1"]["consumed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["body"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    // Started at 40 min: searched from 10 min, so only the messages of 35 min.
    let w = run(scenario(2, group(None), sends.clone(), json!([]), 2_500_000));
    assert_eq!(bodies(&w), vec!["late0", "late1", "late2", "late3"]);
    let r = report_json(&w);
    let un = r["unconsumed"].as_array().unwrap();
    assert_eq!(un.len(), 4);
    assert!(un.iter().all(|u| u["consumer"] == "C1" && u["kind"] == "before-member-start"), "{un:?}");
    // An explicit consumeTimestamp before everything reads it all.
    let w = run(scenario(2, group(Some(0)), sends, json!([]), 2_500_000));
    assert_eq!(bodies(&w).len(), 8);
}

/// BROADCASTING reports, per member, what it did not consume.
#[test]
fn broadcasting_reports_unconsumed_messages_per_member() {
    let w = run(scenario(
        2,
        json!([{"name": "g", "messageModel": "BROADCASTING", "consumers": [
            {"clientId": "C1", "subscriptions": {"T": "*"}},
            {"clientId": "C2", "subscriptions": {"T": "*"}, "startAt": "never"}]}]),
        json!([{"at": 5000, "topic": "T", "body": "m{i}", "count": 4}]),
        json!([]),
        30_000,
    ));
    let r = report_json(&w);
    let un = r["unconsumed"].as_array().unwrap();
    assert_eq!(un.len(), 4, "{un:?}");
    assert!(un.iter().all(|u| u["consumer"] == "C2" && u["reason"].as_str().unwrap().contains("never started")));
}

/// A route change gives the producer a new TopicPublishInfo and ThreadLocalIndex; until then a
/// stale route sends to queue ids the broker refuses (msgCheck: queueId >= max(read, write)),
/// and a synchronous send retries another queue, up to 3 attempts.
#[test]
fn a_stale_producer_route_is_refused_and_the_send_retries_another_queue() {
    let w = run(scenario(
        8,
        json!([{"name": "g", "consumers": [{"clientId": "C1", "subscriptions": {"T": "*"}}]}]),
        json!([{"at": 1000, "topic": "T", "body": "m{i}", "count": 200, "intervalMs": 200}]),
        json!([{"at": 10_000, "action": "setQueueCount", "topic": "T", "queues": 4}]),
        60_000,
    ));
    let refused = events(&w, |e| matches!(e, Event::SendRefused { .. }));
    assert!(!refused.is_empty(), "the stale route hit removed queues");
    // Nothing is stored in a removed queue after the shrink.
    for m in &w.messages {
        if m.stored_at >= 10_000 {
            assert!(m.queue_id() < 4, "m{} stored in queue {} at {}", m.id, m.queue_id(), m.stored_at);
        }
    }
    // After the 30 s route poll the new index starts at startIndex (0) on the 4-queue list.
    let after: Vec<u32> = w.messages.iter().filter(|m| m.born_at > 32_000).take(4).map(|m| m.queue_id()).collect();
    assert_eq!(after.len(), 4);
    let r = report_json(&w);
    // Every message is consumed or reported: failed sends are listed with their reason.
    let failed = events(&w, |e| matches!(e, Event::SendFailed { .. })).len();
    assert_eq!(consumed_total(&r) + failed, 200, "{}", r["unconsumed"]);
    assert!(r["unconsumed"].as_array().unwrap().iter().all(|u| u["kind"] == "send-failed"));
}

/// A retried message keeps RETRY_TOPIC = the original topic on every retry.
#[test]
fn retry_topic_names_the_original_topic_on_every_retry() {
    let w = run(scenario(
        1,
        json!([{"name": "g", "consumers": [{"clientId": "C1", "subscriptions": {"T": "*"}, "consumeResult": {"failTimes": 3}}]}]),
        json!([{"at": 1000, "topic": "T", "body": "m{i}", "count": 1}]),
        json!([]),
        400_000,
    ));
    let copies: Vec<_> = w.messages.iter().filter(|m| m.origin().is_some()).collect();
    assert_eq!(copies.len(), 3);
    assert!(copies.iter().all(|m| m.properties().get("RETRY_TOPIC").map(String::as_str) == Some("T")));
    assert_eq!(report_json(&w)["consumers"]["C1"]["consumed"][0]["reconsumeTimes"], 3);
}

/// Orderly: a message that keeps failing blocks its queue; the report says so and shows the
/// local retry count.
#[test]
fn orderly_messages_behind_a_failing_one_say_what_blocks_them() {
    let w = run(scenario(
        1,
        json!([{"name": "g", "orderly": true, "consumers": [
            {"clientId": "C1", "subscriptions": {"T": "*"}, "consumeResult": "RECONSUME_LATER"}]}]),
        json!([{"at": 3000, "topic": "T", "body": "m{i}", "count": 3}]),
        json!([]),
        20_000,
    ));
    let r = report_json(&w);
    let local = r["consumers"]["C1"]["stats"]["localRetries"].as_u64().unwrap();
    assert!(local >= 10, "{local}");
    let un = r["unconsumed"].as_array().unwrap();
    assert_eq!(un.len(), 3);
    let blocked: Vec<&Value> = un.iter().filter(|u| u["kind"] == "blocked-behind-failing").collect();
    assert_eq!(blocked.len(), 2, "{un:?}");
    assert!(blocked[0]["reason"].as_str().unwrap().contains("re-consumed locally"), "{}", blocked[0]);
}

/// The client re-filters a pull response with the SubscriptionData captured when the pull was
/// sent: after a runtime switch from TagA to TagB, a pull issued under TagA drops the TagB message
/// the broker (already on TagB) returns. The message is lost.
#[test]
fn the_client_refilters_with_the_subscription_the_pull_was_sent_with() {
    let w = run(scenario(
        1,
        json!([{"name": "g", "consumers": [{"clientId": "C1", "subscriptions": {"T": "TagA"}}]}]),
        json!([{"at": 21_100, "topic": "T", "tag": "TagB", "body": "b{i}", "count": 1}]),
        json!([{"at": 21_000, "action": "subscribe", "consumer": "C1", "topic": "T", "expression": "TagB"}]),
        60_000,
    ));
    let dropped = events(&w, |e| matches!(e, Event::ClientFiltered { current: Some(_), .. }));
    assert_eq!(dropped.len(), 1, "the pull sent under TagA dropped the TagB message");
    let r = report_json(&w);
    assert_eq!(consumed_total(&r), 0);
    let reason = r["unconsumed"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("the subscription its pull was sent with"), "{reason}");
}

fn sql_scenario(expr: &str, props: Value) -> Value {
    json!({
        "format": "mqviz-scenario/1", "until": 20000,
        "brokers": [{"name": "broker-a", "enablePropertyFilter": true}],
        "topics": [{"name": "T", "queues": 1}],
        "producers": [{"id": "p", "sends": [{"at": 5000, "topic": "T", "properties": props, "body": "m{i}", "count": 1}]}],
        "groups": [{"name": "g", "consumers": [{"clientId": "C1", "subscriptions": {"T": {"type": "SQL92", "expression": expr}}}]}]
    })
}

/// SQL92 sees the system properties of a stored message: UNIQ_KEY (set by the producer) and
/// CLUSTER (set by the broker), like TAGS and KEYS.
#[test]
fn sql92_sees_uniq_key_and_cluster() {
    for expr in ["CLUSTER = 'DefaultCluster'", "UNIQ_KEY IS NOT NULL", "UNIQ_KEY STARTSWITH '7F000001'"] {
        let w = run(sql_scenario(expr, json!({"a": "1"})));
        assert_eq!(w.consumers[0].stats.consumed, 1, "{expr}");
    }
}

/// Bloom "in live" compares the message's store time with the filter data's born time, strictly:
/// a matching message stored in the same millisecond as the registration is evaluated, not
/// dropped as BLOOM_MISS.
#[test]
fn bloom_in_live_uses_the_store_time_strictly() {
    let v = json!({
        "format": "mqviz-scenario/1", "until": 20000, "network": {"latencyMs": 0},
        "brokers": [{"name": "broker-a", "enablePropertyFilter": true, "enableCalcFilterBitMap": true, "filterIndex": "groupIndex"}],
        "topics": [{"name": "T", "queues": 1}],
        "producers": [{"id": "p", "sends": [{"at": 3000, "topic": "T", "properties": {"a": "10"}, "body": "m{i}", "count": 1}]}],
        "groups": [
            {"name": "other", "consumers": [{"clientId": "O", "subscriptions": {"T": {"type": "SQL92", "expression": "b = 1"}}}]},
            {"name": "g", "consumers": [{"clientId": "C1", "subscriptions": {"T": {"type": "SQL92", "expression": "a > 5"}}, "startAt": 3000}]}]
    });
    let w = run(v);
    // The message was stored at 3000, in the millisecond C1's filter data was born.
    assert_eq!(w.messages[0].stored_at, 3000);
    assert_eq!(w.consumers[1].stats.consumed, 1);
    assert!(events(&w, |e| matches!(e, Event::BrokerFiltered { client, verdict: Some("BLOOM_MISS"), .. } if &**client == "C1"))
        .is_empty());
}

/// A held SQL92 pull wakes only for a message that passes its filter.
#[test]
fn a_held_sql92_pull_wakes_only_for_a_matching_message() {
    let v = json!({
        "format": "mqviz-scenario/1", "until": 20000,
        "brokers": [{"name": "broker-a", "enablePropertyFilter": true}],
        "topics": [{"name": "T", "queues": 1}],
        "producers": [{"id": "p", "sends": [
            {"at": 5000, "topic": "T", "properties": {"a": "1"}, "body": "no{i}", "count": 1},
            {"at": 5700, "topic": "T", "properties": {"a": "9"}, "body": "yes{i}", "count": 1}]}],
        "groups": [{"name": "g", "consumers": [{"clientId": "C1", "subscriptions": {"T": {"type": "SQL92", "expression": "a > 5"}}}]}]
    });
    let w = run(v);
    let served: Vec<u64> = events(&w, |e| matches!(e, Event::PullServed { status, .. } if *status != PullStatus::NoNewMsg))
        .iter()
        .map(|x| x.0)
        .collect();
    assert!(!served.contains(&5001), "the non-matching arrival woke the held pull: {served:?}");
    assert!(served.contains(&5701), "{served:?}");
}

/// When the table's SQL92 expression does not compile, the filter data registered earlier
/// (another member's) is what runs; the report names it, not the table's expression.
#[test]
fn the_report_names_the_registered_sql92_filter_when_the_table_expression_does_not_compile() {
    let v = json!({
        "format": "mqviz-scenario/1", "until": 40000,
        "brokers": [{"name": "broker-a", "enablePropertyFilter": true}],
        "topics": [{"name": "T", "queues": 1}],
        "producers": [{"id": "p", "sends": [{"at": 20000, "topic": "T", "properties": {"a": "1"}, "body": "m{i}", "count": 1}]}],
        "groups": [{"name": "g", "consumers": [
            {"clientId": "A", "subscriptions": {"T": {"type": "SQL92", "expression": "a > 5"}}},
            {"clientId": "B", "subscriptions": {"T": {"type": "SQL92", "expression": "a >"}}, "startAt": 4000, "onStartFailure": "ignore"}]}]
    });
    let w = run(v);
    let r = report_json(&w);
    let warnings: Vec<&str> = r["groups"]["g"]["warnings"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    assert!(warnings.iter().any(|x| x.contains("does not compile")), "{warnings:?}");
    for e in events(&w, |e| matches!(e, Event::BrokerFiltered { .. })) {
        if let Event::BrokerFiltered { expression, .. } = e.1 {
            assert_eq!(expression, "a > 5", "the filter that ran is the registered one");
        }
    }
}

/// A tag-hash collision ("Aa" and "BB" share hashCode 2112) lets a message through the broker;
/// provenance says so.
#[test]
fn a_tag_hash_collision_is_named_in_provenance() {
    let w = run(scenario(
        1,
        json!([{"name": "g", "consumers": [{"clientId": "C1", "subscriptions": {"T": "Aa"}}]}]),
        json!([{"at": 5000, "topic": "T", "tag": "BB", "body": "m{i}", "count": 1}]),
        json!([]),
        20_000,
    ));
    assert_eq!(events(&w, |e| matches!(e, Event::TagHashCollision { code: 2112, .. })).len(), 1);
    let r = report_json(&w);
    let u = &r["unconsumed"][0];
    assert_eq!(u["kind"], "tag-hash-collision");
    assert!(u["reason"].as_str().unwrap().contains("hashCode (2112)"), "{u}");
}

fn check_config_scenario(seed: u64, on_failure: &str) -> Value {
    json!({
        "format": "mqviz-scenario/1", "until": 60000, "seed": seed,
        "brokers": [{"name": "broker-a", "enablePropertyFilter": true}, {"name": "broker-b"}],
        "topics": [{"name": "T", "queues": 2}],
        "producers": [{"id": "p", "sends": [{"at": 5000, "topic": "T", "properties": {"a": "9"}, "body": "m{i}", "count": 8}]}],
        "groups": [{"name": "g", "consumers": [
            {"clientId": "C1", "subscriptions": {"T": {"type": "SQL92", "expression": "a > 5"}}, "onStartFailure": on_failure}]}]
    })
}

/// CHECK_CLIENT_CONFIG asks one broker of the topic, picked at random (seeded): with one broker
/// able to filter SQL92 and one not, some seeds start and some throw.
#[test]
fn check_client_config_asks_one_random_broker() {
    let outcomes: Vec<bool> =
        (1..=16).map(|seed| run(check_config_scenario(seed, "shutdown")).consumers[0].start_error.is_none()).collect();
    assert!(outcomes.contains(&true) && outcomes.contains(&false), "{outcomes:?}");
}

/// The check runs once the consumer is RUNNING: by default the application shuts it down; if it
/// ignores the exception, the consumer keeps heartbeating, rebalancing and pulling (and its pulls
/// at the broker without enablePropertyFilter fail).
#[test]
fn a_start_failure_is_shut_down_by_default_or_keeps_running_when_ignored() {
    let failing = (1..=16).find(|&s| run(check_config_scenario(s, "shutdown")).consumers[0].start_error.is_some()).unwrap();
    let w = run(check_config_scenario(failing, "shutdown"));
    assert!(!w.consumers[0].running);
    assert!(events(&w, |e| matches!(e, Event::ConsumerStarted { .. })).len() == 1);
    assert!(events(&w, |e| matches!(e, Event::ConsumerStopped { graceful: true, .. })).len() == 1);
    let w = run(check_config_scenario(failing, "ignore"));
    assert!(w.consumers[0].running && w.consumers[0].start_error.is_some());
    assert!(!events(&w, |e| matches!(e, Event::Allocated { .. })).is_empty(), "it rebalances");
    assert!(!events(&w, |e| matches!(e, Event::PullServed { status: PullStatus::Error("SYSTEM_ERROR"), .. })).is_empty());
    let r = report_json(&w);
    assert!(r["groups"]["g"]["warnings"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().contains("ignored")));
}

/// Subscribing to a topic that does not exist is allowed: the route is not found and every
/// rebalance warns, until the topic is created; then it is consumed.
#[test]
fn subscribing_to_a_missing_topic_warns_until_it_appears() {
    let v = json!({
        "format": "mqviz-scenario/1", "until": 90000, "brokers": [{"name": "broker-a"}],
        "topics": [{"name": "T", "queues": 1}],
        "producers": [{"id": "p", "sends": []}],
        "groups": [{"name": "g", "consumers": [{"clientId": "C1", "subscriptions": {"Later": "*"}}]}],
        "timeline": [{"at": 30000, "action": "setQueueCount", "topic": "Later", "queues": 2},
                     {"at": 70000, "action": "produce", "producer": "p", "send": {"topic": "Later", "body": "m{i}", "count": 4}}]
    });
    let mut w = build(v);
    w.run_until(25_000);
    let r = report_json(&w);
    assert!(r["groups"]["g"]["warnings"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().contains("does not exist")));
    w.run_to_end();
    let not_found: Vec<u64> = events(&w, |e| matches!(e, Event::RouteNotFound { .. })).iter().map(|x| x.0).collect();
    assert!(!not_found.is_empty() && not_found.iter().all(|&t| t < 61_000), "{not_found:?}");
    assert_eq!(w.consumers[0].stats.consumed, 4);
}

/// The duplicate-client-id preset: two instances share a clientId, compute the same AVG block
/// and consume it twice, while the block of the list's second copy has no owner (spec §6).
#[test]
fn duplicate_client_ids_share_a_block_and_orphan_another() {
    let text = mqviz_app::presets::by_file("duplicate-client-id.json").unwrap().text;
    let mut w = World::new(parse_scenario(text).unwrap());
    w.run_to_end();
    let r = report_json(&w);
    let per = |n: &str| r["consumers"][n]["consumed"].as_array().unwrap().len();
    assert_eq!((per("pod-a"), per("pod-b"), per("pod-c")), (20, 20, 20));
    assert_eq!(r["consumers"]["pod-a"]["clientId"], "10.0.0.5@1");
    let a = &r["groups"]["orderService"]["assignment"]["Orders"];
    assert_eq!(a["broker-a:0"], "pod-a, pod-b");
    assert!(a["broker-a:2"].is_null() && a["broker-a:3"].is_null());
    let dups = r["duplicates"].as_array().unwrap();
    assert_eq!(dups.len(), 20);
    assert!(dups.iter().all(|d| d["cause"].as_str().unwrap().starts_with("duplicate clientId")));
    let un = r["unconsumed"].as_array().unwrap();
    assert_eq!(un.len(), 20);
    assert!(un.iter().all(|u| u["kind"] == "duplicate-client-id" && [2, 3].contains(&u["queueId"].as_u64().unwrap())));
    let warnings = r["groups"]["orderService"]["warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|x| x.as_str().unwrap().contains("share clientId 10.0.0.5@1")));
}

/// Orderly: a listener that returns within the 500 ms tryLock lets the removal complete when it
/// returns; the broker lock is released then and the new owner takes the queue within a second.
#[test]
fn an_orderly_removal_waits_for_a_short_listener_then_unlocks() {
    let w = run(scenario(
        2,
        json!([{"name": "g", "orderly": true, "consumers": [
            {"clientId": "C1", "subscriptions": {"T": "*"}, "consumeTimeMs": 300},
            {"clientId": "C2", "subscriptions": {"T": "*"}, "startAt": "never"}]}]),
        json!([{"at": 3000, "topic": "T", "body": "m{i}", "count": 40, "intervalMs": 50}]),
        json!([{"at": 5000, "action": "startConsumer", "consumer": "C2"}]),
        60_000,
    ));
    assert!(events(&w, |e| matches!(e, Event::RemovalDeferred { .. })).is_empty());
    let c2_locked = events(&w, |e| matches!(e, Event::QueueLocked { client, granted: true, .. } if &**client == "C2"));
    assert!(!c2_locked.is_empty() && c2_locked[0].0 < 7_500, "{c2_locked:?}");
    let r = report_json(&w);
    assert_eq!(consumed_total(&r) - r["duplicates"].as_array().unwrap().len(), 40);
    assert!(r["unconsumed"].as_array().unwrap().is_empty());
}
