//! A corpus of broken Pulsar scenarios: each gives an error naming the JSON path of the problem,
//! and a few thousand byte-mutated documents never make the reader or the simulation panic.

use mqviz_app::registry::parse;
use mqviz_engine::SplitMix64;
use serde_json::{json, Value};

const GOOD: &str = r#"{"format": "mqviz-scenario/1", "broker": "pulsar", "until": 5000,
  "topics": [{"name": "t", "partitions": 2}, {"name": "s", "segments": 1}],
  "producers": [{"name": "p", "topic": "t", "sends": [{"count": 3, "key": "k-{i}"}]}],
  "consumers": [
    {"name": "c1", "topic": "t", "subscription": "sub", "subscriptionType": "Shared"},
    {"name": "k1", "topic": "t", "subscription": "ks", "subscriptionType": "Key_Shared",
     "keySharedPolicy": {"mode": "STICKY", "ranges": [[0, 100]]}},
    {"name": "st", "topic": "s", "subscription": "stream", "consumerType": "STREAM"}],
  "timeline": [{"at": 1000, "action": "splitSegment", "topic": "s", "segment": 0}]}"#;

fn with(patch: impl Fn(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(GOOD).unwrap();
    patch(&mut v);
    v.to_string()
}

fn expect_error(text: &str, path: &str, words: &str) {
    let result = std::panic::catch_unwind(|| parse(text).map(|_| ()));
    let errors = match result {
        Ok(Ok(())) => panic!("accepted: {text}"),
        Ok(Err(e)) => e,
        Err(_) => panic!("panicked on: {text}"),
    };
    assert!(
        errors.iter().any(|e| e.path == path && e.message.contains(words)),
        "expected an error at {path} mentioning {words:?}, got {:?}",
        errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn the_good_scenario_is_accepted() {
    parse(GOOD).unwrap();
}

#[test]
fn an_out_of_range_sticky_range_has_one_error() {
    let text = with(|v| v["consumers"][1]["keySharedPolicy"]["ranges"] = json!([[0, 70000]]));
    expect_error(&text, "$.consumers[1].keySharedPolicy.ranges[0][1]", "");
    let errors = parse(&text).map(|_| ()).unwrap_err();
    assert!(!errors.iter().any(|e| e.message.contains("must not be empty")), "{errors:?}");
    expect_error(
        &with(|v| v["consumers"][1]["keySharedPolicy"]["ranges"] = json!([])),
        "$.consumers[1].keySharedPolicy.ranges",
        "must not be empty",
    );
}

#[test]
fn a_lifecycle_out_of_order_is_refused_with_its_path() {
    let at = |key: &'static str, ms: u64| with(move |v| v["consumers"][0][key] = ms.into());
    let both = |a: (&'static str, u64), b: (&'static str, u64)| {
        with(move |v| {
            v["consumers"][0][a.0] = a.1.into();
            v["consumers"][0][b.0] = b.1.into();
        })
    };
    expect_error(&both(("startAt", 2000), ("closeAt", 1000)), "$.consumers[0].closeAt", "before the consumer starts");
    expect_error(&both(("startAt", 2000), ("crashAt", 1500)), "$.consumers[0].crashAt", "before the consumer starts");
    expect_error(&both(("crashAt", 3000), ("restartAt", 2000)), "$.consumers[0].restartAt", "not after the consumer goes down");
    expect_error(&at("restartAt", 2000), "$.consumers[0].restartAt", "needs a crashAt or closeAt");
    parse(&both(("crashAt", 2000), ("restartAt", 3000))).unwrap();
}

#[test]
fn unknown_subscription_type_and_modes() {
    expect_error(&with(|v| v["consumers"][0]["subscriptionType"] = "Fanout".into()), "$.consumers[0].subscriptionType", "Fanout");
    expect_error(&with(|v| v["consumers"][2]["consumerType"] = "CHECKPOINT".into()), "$.consumers[2].consumerType", "CHECKPOINT");
    expect_error(
        &with(|v| v["consumers"][1]["keySharedPolicy"]["mode"] = "RANDOM".into()),
        "$.consumers[1].keySharedPolicy.mode",
        "RANDOM",
    );
    expect_error(&with(|v| v["consumers"][0]["ack"] = "maybe".into()), "$.consumers[0].ack", "maybe");
    expect_error(&with(|v| v["config"] = json!({"assignmentEra": "future"})), "$.config.assignmentEra", "future");
    expect_error(
        &with(|v| v["producers"][0]["messageRoutingMode"] = "Custom".into()),
        "$.producers[0].messageRoutingMode",
        "Custom",
    );
    expect_error(&with(|v| v["timeline"][0]["action"] = "explode".into()), "$.timeline[0].action", "explode");
}

#[test]
fn split_of_a_sealed_segment_and_other_layout_errors() {
    let twice = |v: &mut Value| {
        v["timeline"] = json!([{"at": 1000, "action": "splitSegment", "topic": "s", "segment": 0},
                               {"at": 2000, "action": "splitSegment", "topic": "s", "segment": 0}]);
    };
    expect_error(&with(twice), "$.timeline[1].segment", "Cannot split non-active segment: 0");
    expect_error(
        &with(|v| {
            v["timeline"]
                .as_array_mut()
                .unwrap()
                .push(json!({"at": 2000, "action": "mergeSegments", "topic": "s", "segments": [0, 2]}))
        }),
        "$.timeline[1].segments",
        "Both segments must be active",
    );
    expect_error(
        &with(|v| {
            v["topics"][1]["segments"] = 4.into();
            v["timeline"]
                .as_array_mut()
                .unwrap()
                .push(json!({"at": 2000, "action": "mergeSegments", "topic": "s", "segments": [4, 2]}));
        }),
        "$.timeline[1].segments",
        "not adjacent",
    );
    expect_error(
        &with(|v| {
            v["timeline"].as_array_mut().unwrap().push(json!({"at": 2000, "action": "pruneSegment", "topic": "s", "segment": 1}))
        }),
        "$.timeline[1].segment",
        "Cannot prune an active segment",
    );
    expect_error(&with(|v| v["timeline"][0]["segment"] = 7.into()), "$.timeline[0].segment", "Segment not found: 7");
    expect_error(&with(|v| v["timeline"][0]["topic"] = "t".into()), "$.timeline[0].topic", "not a scalable topic");
    expect_error(
        &with(|v| v["timeline"][0] = json!({"at": 1, "action": "mergeSegments", "topic": "s", "segments": [0]})),
        "$.timeline[0].segments",
        "two segment ids",
    );
}

#[test]
fn cumulative_ack_on_shared_and_key_shared() {
    expect_error(
        &with(|v| v["consumers"][0]["ack"] = "cumulative".into()),
        "$.consumers[0].ack.mode",
        "Cannot use cumulative acks",
    );
    expect_error(
        &with(|v| v["consumers"][1]["ack"] = json!({"mode": "cumulative", "processMs": 5})),
        "$.consumers[1].ack.mode",
        "Key_Shared",
    );
    expect_error(
        &with(|v| {
            v["timeline"]
                .as_array_mut()
                .unwrap()
                .push(json!({"at": 2000, "action": "setAck", "consumer": "c1", "ack": "cumulative"}));
        }),
        "$.timeline[1].ack.mode",
        "Cannot use cumulative acks",
    );
    expect_error(&with(|v| v["consumers"][2]["ack"] = "nack".into()), "$.consumers[2].ack.mode", "STREAM");
    expect_error(&with(|v| v["consumers"][0]["ack"] = "retry".into()), "$.consumers[0].ack.mode", "enableRetry");
}

/// A consumer's own STICKY ranges must be valid; a conflict with another consumer's ranges is not
/// a scenario error but a run-time subscribe failure (pulsar_behaviours.rs).
#[test]
fn sticky_ranges_must_not_overlap() {
    expect_error(
        &with(|v| v["consumers"][1]["keySharedPolicy"]["ranges"] = json!([[0, 10], [5, 20]])),
        "$.consumers[1].keySharedPolicy.ranges[1]",
        "own ranges conflict",
    );
    expect_error(
        &with(|v| v["consumers"][1]["keySharedPolicy"]["ranges"] = json!([[9, 3]])),
        "$.consumers[1].keySharedPolicy.ranges[0]",
        "start > end",
    );
    expect_error(
        &with(|v| v["consumers"][1]["keySharedPolicy"]["ranges"] = json!([])),
        "$.consumers[1].keySharedPolicy.ranges",
        "must not be empty",
    );
    expect_error(
        &with(|v| v["consumers"][1]["keySharedPolicy"]["ranges"] = json!([[0, 70000]])),
        "$.consumers[1].keySharedPolicy.ranges[0][1]",
        "out of range",
    );
    // Ranges that overlap another consumer's are the run's business, not the file's.
    let second = json!({"name": "k2", "topic": "t", "subscription": "ks", "subscriptionType": "Key_Shared",
                        "keySharedPolicy": {"mode": "STICKY", "ranges": [[50, 200]]}});
    parse(&with(|v| v["consumers"].as_array_mut().unwrap().push(second.clone()))).unwrap();
}

#[test]
fn absurd_sizes() {
    expect_error(&with(|v| v["topics"][0]["partitions"] = 1_000_000_000.into()), "$.topics[0].partitions", "out of range");
    expect_error(&with(|v| v["topics"][1]["segments"] = 100_000.into()), "$.topics[1].segments", "out of range");
    expect_error(&with(|v| v["topics"][1]["segments"] = 0.into()), "$.topics[1].segments", "out of range");
    expect_error(
        &with(|v| v["producers"][0]["sends"][0]["count"] = 100_000_000u64.into()),
        "$.producers[0].sends[0].count",
        "out of range",
    );
    expect_error(
        &with(|v| v["consumers"][0]["receiverQueueSize"] = 5_000_000_000u64.into()),
        "$.consumers[0].receiverQueueSize",
        "out of range",
    );
    expect_error(&with(|v| v["until"] = 1e15.into()), "$.until", "");
    expect_error(
        &with(|v| {
            let sends: Vec<Value> = (0..6).map(|_| json!({"count": 10_000_000})).collect();
            v["producers"][0]["sends"] = sends.into();
        }),
        "$.producers",
        "messages in total",
    );
    expect_error(
        &with(|v| v["consumers"] = (0..20_001).map(|i| json!({"name": format!("c{i}")})).collect::<Vec<_>>().into()),
        "$.consumers",
        "too many entries",
    );
    expect_error(
        &with(|v| v["consumers"][0]["ackTimeoutMs"] = 500.into()),
        "$.consumers[0].ackTimeoutMs",
        "greater than 1000 ms",
    );
    expect_error(
        &with(|v| v["consumers"][0]["deadLetterPolicy"] = json!({"maxRedeliverCount": 0})),
        "$.consumers[0].deadLetterPolicy.maxRedeliverCount",
        "must be > 0",
    );
    expect_error(
        &with(|v| v["config"] = json!({"drainInitialDelayMs": 9000, "drainMaxDelayMs": 10})),
        "$.config.drainMaxDelayMs",
        "below",
    );
}

#[test]
fn unknown_references() {
    expect_error(&with(|v| v["consumers"][0]["topic"] = "nope".into()), "$.consumers[0].topic", "unknown topic");
    expect_error(&with(|v| v["producers"][0]["topic"] = "nope".into()), "$.producers[0].topic", "unknown topic");
    expect_error(&with(|v| v["timeline"][0]["topic"] = "nope".into()), "$.timeline[0].topic", "unknown topic");
    expect_error(
        &with(|v| v["timeline"][0] = json!({"at": 5, "action": "closeConsumer", "consumer": "ghost"})),
        "$.timeline[0].consumer",
        "unknown consumer",
    );
    expect_error(
        &with(|v| v["timeline"][0] = json!({"at": 5, "action": "produce", "producer": "ghost", "send": {"count": 1}})),
        "$.timeline[0].producer",
        "unknown producer",
    );
    expect_error(&with(|v| v["consumers"][1]["name"] = "c1".into()), "$.consumers[1].name", "duplicate consumer");
    expect_error(&with(|v| v["topics"][1]["name"] = "t".into()), "$.topics[1].name", "duplicate topic");
    expect_error(&with(|v| v["consumers"][2]["topic"] = "t".into()), "$.consumers[2].consumerType", "not a scalable topic");
    expect_error(&with(|v| v["consumers"][0]["topic"] = "s".into()), "$.consumers[0].consumerType", "need consumerType");
    expect_error(&with(|v| v["topics"][1]["name"] = "persistent://x/y/z".into()), "$.topics[1].name", "domain");
    expect_error(&with(|v| v["broker"] = "kafka-ish".into()), "$.broker", "unknown broker");
}

#[test]
fn wrong_types_and_unknown_fields() {
    expect_error(&with(|v| v["topics"][0]["partitions"] = "4".into()), "$.topics[0].partitions", "expected a number");
    expect_error(&with(|v| v["consumers"][0]["ack"] = 5.into()), "$.consumers[0].ack", "expected an object");
    expect_error(
        &with(|v| v["consumers"][1]["keySharedPolicy"]["ranges"] = "0-10".into()),
        "$.consumers[1].keySharedPolicy.ranges",
        "expected an array",
    );
    expect_error(
        &with(|v| v["consumers"][1]["keySharedPolicy"]["ranges"] = json!([5])),
        "$.consumers[1].keySharedPolicy.ranges[0]",
        "expected a range",
    );
    expect_error(
        &with(|v| v["consumers"][0]["keySharedPolicy"] = json!({})),
        "$.consumers[0].keySharedPolicy",
        "needs subscriptionType Key_Shared",
    );
    expect_error(&with(|v| v["timeline"][0] = json!("split")), "$.timeline[0]", "expected an object");
    expect_error(
        &with(|v| v["consumers"][0]["subscriptionTyp"] = "Shared".into()),
        "$.consumers[0].subscriptionTyp",
        "unknown field",
    );
    expect_error(&with(|v| v["brokers"] = json!([{"name": "b", "queues": 4}])), "$.brokers[0].queues", "unknown field");
    expect_error(&with(|v| v["groups"] = json!([])), "$.groups", "unknown field");
    expect_error(
        &with(|v| v["producers"][0]["sends"][0]["times"] = json!([5, 3])),
        "$.producers[0].sends[0].times[1]",
        "must not decrease",
    );
    expect_error(
        &with(|v| v["consumers"][0]["priorityLevel"] = (-1).into()),
        "$.consumers[0].priorityLevel",
        "expected a whole number",
    );
    expect_error(&with(|v| v["consumers"][0]["startAt"] = "later".into()), "$.consumers[0].startAt", "expected a number");
    expect_error("{\"format\": \"mqviz-scenario/1\", \"broker\": \"pulsar\",\n \"until\": }", "$", "line 2");
}

/// Flips, inserts and deletes bytes of valid documents; whatever parses is run for a while.
#[test]
fn mutated_documents_never_panic() {
    let mut seeds: Vec<&str> = vec![GOOD];
    seeds.extend(mqviz_app::presets::PRESETS.iter().filter(|p| p.file.starts_with("pulsar-")).map(|p| p.text));
    let mut rng = SplitMix64::new(0x5eed);
    let (mut parsed, mut ran) = (0, 0);
    for round in 0..3_000 {
        let base = seeds[round % seeds.len()].as_bytes();
        let mut doc = base.to_vec();
        for _ in 0..1 + rng.index(4) {
            if doc.is_empty() {
                break;
            }
            let at = rng.index(doc.len());
            match rng.index(4) {
                0 => doc[at] = b"0123456789{}[]\",:-.eE tfnaz"[rng.index(27)],
                1 => doc.insert(at, b"0123456789{}[]\",:-"[rng.index(18)]),
                2 => {
                    doc.remove(at);
                }
                _ => doc[at] ^= 1 << rng.index(8),
            }
        }
        let text = String::from_utf8_lossy(&doc).into_owned();
        let outcome = std::panic::catch_unwind(|| {
            let Ok(mut sim) = parse(&text) else { return (false, false) };
            // Keep the run short: a mutation may ask for millions of messages.
            let small = mqviz_pulsar::scenario::parse_scenario(&text)
                .map(|s| s.producers.iter().flat_map(|p| p.sends.iter()).map(|x| u64::from(x.count)).sum::<u64>() < 5_000)
                .unwrap_or(false);
            if small {
                sim.run_until(sim.until().min(8_000));
                let _ = sim.view();
                let _ = sim.report();
            }
            (true, small)
        });
        match outcome {
            Ok((p, r)) => {
                parsed += usize::from(p);
                ran += usize::from(r);
            }
            Err(_) => panic!("round {round} panicked on:\n{text}"),
        }
    }
    assert!(parsed > 100 && ran > 100, "the mutations should leave many documents valid ({parsed} parsed, {ran} ran)");
}
