//! The seed article's experiments (shared/seeds/000_...), number for number.

use crate::common::*;
use mqviz_rocketmq::events::{Event, PullStatus};

#[test]
fn same_topic_different_tags_reproduces_the_article() {
    let (w, r) = run_preset("seed-same-topic-different-tags.json");
    let g = &r["groups"]["testGroupConsumer"];
    assert_eq!(g["subscriptionTable"]["TopicTestA"]["expression"], "TagB");
    assert_eq!(total_consumed(&r, "ConsumerA"), 0);
    assert_eq!(consumed_numbers(&r, "ConsumerB", "TopicTestA.TagB"), vec![0, 1, 4, 5, 8, 9]);
    assert_eq!(total_consumed(&r, "ConsumerB"), 6);
    // ConsumerA shut down at 60 s: ConsumerB took all four queues and still consumed nothing more.
    for q in 0..4 {
        assert_eq!(g["assignment"]["TopicTestA"][format!("broker-a:{q}")], "ConsumerB");
    }
    // TagB #2, 3, 6, 7 are unconsumed and the reason names ConsumerA's own filter.
    let lost: Vec<&serde_json::Value> =
        r["unconsumed"].as_array().unwrap().iter().filter(|u| u["body"].as_str().unwrap().ends_with("TopicTestA.TagB")).collect();
    let mut nums: Vec<String> = lost.iter().map(|u| u["body"].as_str().unwrap().to_string()).collect();
    nums.sort();
    assert_eq!(
        nums,
        vec![
            "Hello RocketMQ 2TopicTestA.TagB",
            "Hello RocketMQ 3TopicTestA.TagB",
            "Hello RocketMQ 6TopicTestA.TagB",
            "Hello RocketMQ 7TopicTestA.TagB"
        ]
    );
    for u in &lost {
        let reason = u["reason"].as_str().unwrap();
        assert!(reason.contains("ConsumerA") && reason.contains("\"TagA\""), "{reason}");
        assert!(!u["events"].as_array().unwrap().is_empty());
    }
    // All ten TagA messages are unconsumed too.
    assert_eq!(r["unconsumed"].as_array().unwrap().len(), 14);
    // The warning spells out the consequence.
    let warnings = g["warnings"].as_array().unwrap();
    assert!(warnings
        .iter()
        .any(|w| w.as_str().unwrap().contains("Different subscription") && w.as_str().unwrap().contains("lost")));
    // The history shows ConsumerB overwriting ConsumerA's TagA.
    let hist = g["subscriptionHistory"].as_array().unwrap();
    assert!(hist.iter().any(|h| h["change"] == "overwritten"
        && h["oldExpression"] == "TagA"
        && h["newExpression"] == "TagB"
        && h["byClient"] == "ConsumerB"));
    assert!(w.log().entries().any(|e| matches!(e.kind, Event::ClientFiltered { .. })));
}

#[test]
fn mirror_variant_table_keeps_tag_a() {
    let (_, r) = run_preset("seed-same-topic-different-tags-a-wins.json");
    assert_eq!(r["groups"]["testGroupConsumer"]["subscriptionTable"]["TopicTestA"]["expression"], "TagA");
    assert_eq!(consumed_numbers(&r, "ConsumerA", "TopicTestA.TagA"), vec![0, 1, 4, 5, 8, 9]);
    assert_eq!(total_consumed(&r, "ConsumerA"), 6);
    assert_eq!(total_consumed(&r, "ConsumerB"), 0);
}

#[test]
fn different_topics_same_tag_leaves_queues_unpulled() {
    let (w, r) = run_preset("seed-different-topics-same-tag.json");
    let g = &r["groups"]["testGroupConsumer"];
    let a = &g["assignment"];
    assert_eq!(a["TopicTestA"]["broker-a:0"], "ConsumerA");
    assert_eq!(a["TopicTestA"]["broker-a:1"], "ConsumerA");
    assert!(a["TopicTestA"]["broker-a:2"].is_null() && a["TopicTestA"]["broker-a:3"].is_null());
    assert!(a["TopicTestB"]["broker-a:0"].is_null() && a["TopicTestB"]["broker-a:1"].is_null());
    assert_eq!(a["TopicTestB"]["broker-a:2"], "ConsumerB");
    // Messages on TopicTestA queues 2-3 and TopicTestB queues 0-1 stay unconsumed, with the allocation as reason.
    let un = r["unconsumed"].as_array().unwrap();
    assert_eq!(un.len(), 10);
    for u in un {
        let (topic, q) = (u["topic"].as_str().unwrap(), u["queueId"].as_u64().unwrap());
        assert!((topic == "TopicTestA" && q >= 2) || (topic == "TopicTestB" && q <= 1), "{u}");
        assert!(u["reason"].as_str().unwrap().contains("does not subscribe"), "{u}");
    }
    assert_eq!(consumed_numbers(&r, "ConsumerA", "TopicTestA.TagA"), vec![0, 1, 4, 5, 8, 9]);
    assert_eq!(consumed_numbers(&r, "ConsumerB", "TopicTestB.TagA"), vec![2, 3, 6, 7]);
    // The table flips between the topics on successive heartbeats.
    let hist = g["subscriptionHistory"].as_array().unwrap();
    let flips: Vec<(&str, &str)> = hist
        .iter()
        .filter(|h| h["topic"] != "%RETRY%testGroupConsumer")
        .map(|h| (h["topic"].as_str().unwrap(), h["change"].as_str().unwrap()))
        .collect();
    let removed_a = flips.iter().filter(|f| *f == &("TopicTestA", "removed")).count();
    let added_a = flips.iter().filter(|f| *f == &("TopicTestA", "added")).count();
    assert!(removed_a >= 3 && added_a >= 3, "{flips:?}");
    // Pulls fail with SUBSCRIPTION_NOT_EXIST while the table lacks the puller's topic.
    assert!(w
        .log()
        .entries()
        .any(|e| matches!(&e.kind, Event::PullServed { status: PullStatus::Error("SUBSCRIPTION_NOT_EXIST"), .. })));
}

#[test]
fn consistent_group_consumes_everything_exactly_once() {
    let (_, r) = run_preset("consistent-group.json");
    let mut all: Vec<String> = ["ConsumerA", "ConsumerB"]
        .iter()
        .flat_map(|c| r["consumers"][*c]["consumed"].as_array().unwrap().iter().map(|m| m["body"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(all.len(), 20);
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 20);
    assert!(r["unconsumed"].as_array().unwrap().is_empty());
    assert!(r["groups"]["testGroupConsumer"]["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn same_scenario_twice_gives_byte_identical_logs() {
    for name in ["seed-same-topic-different-tags.json", "seed-different-topics-same-tag.json", "consistent-group.json"] {
        let (a, _) = run_preset(name);
        let (b, _) = run_preset(name);
        assert_eq!(a.log().render(), b.log().render(), "{name}");
        assert!(a.log().len() > 50);
    }
}

#[test]
fn every_event_cause_points_backwards() {
    let (w, _) = run_preset("seed-same-topic-different-tags.json");
    for e in w.log().entries() {
        if let Some(c) = e.cause {
            assert!(c < e.id, "{} caused by later {}", e.id, c);
        }
    }
    // A consumed message's cause chain goes back through the pull to the stored message.
    let consumed = w.log().entries().find(|e| matches!(e.kind, Event::Consumed { .. })).unwrap();
    let chain = w.log().cause_chain(consumed.id);
    assert!(chain.iter().any(|e| matches!(e.kind, Event::PullServed { .. })), "{chain:?}");
    assert!(chain.iter().any(|e| matches!(e.kind, Event::MessageStored { .. })), "{chain:?}");
}

#[test]
fn checkpoint_clone_replays_identically() {
    let text = preset_text("seed-same-topic-different-tags.json");
    let s = mqviz_rocketmq::scenario::parse_scenario(&text).unwrap();
    let mut w = mqviz_rocketmq::world::World::new(s);
    w.run_until(10_500);
    let mut checkpoint = w.clone();
    w.run_to_end();
    checkpoint.run_to_end();
    assert_eq!(w.log().render(), checkpoint.log().render());
}
