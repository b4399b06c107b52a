//! `mqviz review` (issue 32): the verdict on a change in a scenario's timeline, read from the run.

use mqviz_app::registry;
use mqviz_app::review::{change_at, review};
use serde_json::{json, Value};

/// The consistent-group preset (two members subscribing "TagA || TagB", 20 messages from 10 s)
/// with `timeline` as the change under review.
fn consistent_group_with(timeline: Value) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../static/scenarios/consistent-group.json"))
        .expect("preset");
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["timeline"] = timeline;
    v.to_string()
}

fn review_of(text: &str) -> mqviz_app::review::Review {
    let start = registry::parse(text).unwrap_or_else(|e| panic!("{e:?}"));
    review(&*start, start.until(), change_at(&serde_json::from_str(text).unwrap()))
}

#[test]
fn one_member_switching_its_tag_is_a_risk_that_names_the_lost_messages() {
    let r = review_of(&consistent_group_with(
        json!([{"at": 5000, "action": "subscribe", "consumer": "ConsumerB", "topic": "TopicTestA", "expression": "TagB"}]),
    ));
    assert!(r.risky(), "{}", r.text());
    assert!(r.verdict().starts_with("RISK:"), "{}", r.verdict());
    assert!(!r.lost.is_empty(), "{}", r.text());
    assert_eq!(r.lost.len() as u64, r.totals.lost, "every lost message is listed: {}", r.text());
    // Each lost message says where it is and why, with the events behind it.
    for f in &r.lost {
        assert!(f.message.starts_with("TopicTestA q"), "{f:?}");
        assert_eq!(f.group, "testGroupConsumer");
        assert!(f.reason.contains("subscription table"), "{f:?}");
        assert!(!f.events.is_empty(), "{f:?}");
    }
    assert!(!r.warnings.is_empty(), "the inconsistent subscription is warned about: {}", r.text());
    let md = r.markdown();
    assert!(md.contains("**RISK:") && md.contains("**Lost ("), "{md}");
    assert_eq!(r.json()["risky"], json!(true));
}

#[test]
fn a_member_added_with_the_same_subscription_is_safe() {
    let r = review_of(&consistent_group_with(json!([{"at": 5000, "action": "addConsumer", "group": "testGroupConsumer",
        "consumer": {"clientId": "ConsumerC", "subscriptions": {"TopicTestA": "TagA || TagB"}}}])));
    assert!(!r.risky(), "{}", r.text());
    assert!(r.verdict().starts_with("SAFE:"), "{}", r.verdict());
    // Four queues over three members: the newcomer takes some, and the group settles.
    assert!(r.moves.iter().any(|m| m.to == "ConsumerC"), "{}", r.text());
    assert!(r.settled_at.is_some_and(|t| t >= 5000), "{}", r.text());
    assert!(r.text().contains("The change begins at t=5000"), "{}", r.text());
    assert!(r.unowned_at_end.is_empty() && r.lost.is_empty() && r.duplicated.is_empty(), "{}", r.text());
}

#[test]
fn a_kafka_member_leaving_for_good_is_reviewed_from_the_kafka_report() {
    let text = json!({
        "format": "mqviz-scenario/1", "broker": "kafka", "until": 70000, "seed": 3,
        "brokers": [{"name": "b0"}],
        "topics": [{"name": "t", "partitions": 4}],
        "producers": [{"id": "p", "sends": [{"at": 500, "topic": "t", "key": "k{i}", "value": "v{i}", "count": 100, "intervalMs": 100}]}],
        "groups": [{"name": "g", "autoOffsetReset": "earliest", "consumers": [
            {"clientId": "a", "subscribe": ["t"]}, {"clientId": "b", "subscribe": ["t"]}]}],
        "timeline": [{"at": 8000, "action": "crashConsumer", "consumer": "b"}]
    })
    .to_string();
    let r = review_of(&text);
    // b's partitions move to a once its session (45 s from its last heartbeat) times out; what b polled but had not
    // committed is polled again by a.
    assert!(r.moves.iter().any(|m| m.from == "b" && m.to == "a"), "{}", r.text());
    assert!(r.gaps.iter().all(|g| g.to.is_some()), "every partition has an owner again: {}", r.text());
    assert!(r.duplicated.iter().all(|f| f.reason.contains("b crashed")), "{}", r.text());
    assert_eq!(r.duplicated.len() as u64, r.totals.duplicated, "{}", r.text());
    assert_eq!(r.risky(), r.totals.duplicated > 0 || r.totals.lost > 0, "{}", r.text());
    // Before the session timeout the crashed member's partitions have no owner: a risk.
    let early = json!(serde_json::from_str::<Value>(&text)
        .map(|mut v| {
            v["until"] = json!(30000);
            v
        })
        .unwrap())
    .to_string();
    let r = review_of(&early);
    assert!(r.risky() && r.unowned_at_end.len() == 2, "{}", r.text());
}

/// Pulsar: a consumer that nacks every message of one key, with a dead-letter policy, loses them
/// to the dead-letter topic after redeliveries; the review reads both from the Pulsar report.
#[test]
fn a_pulsar_change_that_dead_letters_is_a_risk() {
    let c = |name: &str, nack: bool| {
        let mut v = json!({"name": name, "topic": "t", "subscription": "s", "subscriptionType": "Shared",
                           "negativeAckRedeliveryDelayMs": 500, "deadLetterPolicy": {"maxRedeliverCount": 1},
                           "ack": {"mode": "individual"}});
        if nack {
            v["ack"] = json!({"mode": "individual", "nackFirst": 100});
        }
        v
    };
    let text = json!({
        "format": "mqviz-scenario/1", "broker": "pulsar", "name": "nacking joiner", "seed": 1, "until": 20000,
        "topics": [{"name": "t"}],
        "producers": [{"name": "p", "topic": "t", "batching": false, "sends": [{"at": 3000, "count": 20, "intervalMs": 100, "key": "k-{i}"}]}],
        "consumers": [c("steady", false)],
        "timeline": [{"at": 2000, "action": "addConsumer", "consumer": c("nacker", true)}]
    })
    .to_string();
    let r = review_of(&text);
    assert_eq!(r.change_at, Some(2000));
    assert!(r.risky(), "{}", r.text());
    // Dead-lettered messages count as lost, in the verdict too.
    assert!(!r.lost.is_empty() && r.lost_count() == r.lost.len() as u64, "{}", r.text());
    assert!(r.verdict().contains(&format!("{} lost", r.lost.len())), "{}", r.verdict());
    assert!(r.lost.iter().all(|f| f.reason.contains("DLQ") && !f.events.is_empty()), "{}", r.text());
    // Redeliveries are listed with their story and its events.
    assert!(!r.duplicated.is_empty(), "{}", r.text());
    assert!(r.duplicated.iter().all(|f| !f.reason.is_empty() && !f.events.is_empty()), "{}", r.text());
}
