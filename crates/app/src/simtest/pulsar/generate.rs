//! Random valid Pulsar scenarios: 1–2 brokers, 1–2 topics (non-partitioned or 2–4 partitions),
//! keyed and unkeyed producers with and without batching (DEFAULT and KEY_BASED batchers), 1–2
//! subscriptions per topic of every subscription type (Key_Shared with consistent hashing or
//! AUTO_SPLIT ranges, in order or not, the current or the classic implementation), consumers that
//! ack one by one or cumulatively, nack, never ack, time out, dead-letter, process slowly, and
//! churn (close, crash, restart, add, switch to acking, redeliver, produce) until `churn_until`;
//! sometimes a scalable topic of 1–4 segments with QUEUE and STREAM consumers, split and merged
//! during the run; a quarter of them start from a snapshot (entries, cursors with ack holes,
//! consumers connected at t=0); then the run settles for [`SETTLE`].

use serde_json::{json, Value};

use crate::simtest::draw::{between, chance, pick};
use mqviz_engine::SplitMix64;
use mqviz_pulsar::scalable::layout::SegmentLayout;

/// How long a generated run continues after its last churn and its last send: nack delays (at
/// most 3 s), ack timeouts (at most 5 s) and slow consumers (50 ms a message over a few hundred
/// messages) drain well within it.
pub const SETTLE: u64 = 60_000;

const TYPES: [&str; 4] = ["Exclusive", "Shared", "Failover", "Key_Shared"];

struct Subscription {
    topic: String,
    name: String,
    sub_type: &'static str,
    key_shared_policy: Option<Value>,
}

/// A random valid scenario for `seed`.
pub fn generate(rng: &mut SplitMix64) -> Value {
    let brokers: Vec<Value> = (0..between(rng, 1, 2)).map(|i| json!({"name": format!("broker-{i}")})).collect();
    let topic_count = between(rng, 1, 2);
    let mut topics = Vec::new();
    let mut names = Vec::new();
    for i in 0..topic_count {
        let name = format!("T{i}");
        topics.push(if chance(rng, 40) {
            json!({"name": name, "partitions": between(rng, 2, 4)})
        } else {
            json!({"name": name})
        });
        names.push(name);
    }
    let churn_until = between(rng, 5_000, 40_000);
    let keys = between(rng, 1, 12);
    let mut producers = Vec::new();
    for (i, topic) in names.iter().enumerate() {
        for j in 0..between(rng, 1, 2) {
            let batching = if chance(rng, 40) {
                json!({"enabled": true, "maxMessages": between(rng, 2, 20), "maxPublishDelayMs": between(rng, 1, 10),
                       "batcher": pick(rng, &["DEFAULT", "KEY_BASED"])})
            } else {
                json!(false)
            };
            let sends: Vec<Value> = (0..between(rng, 1, 3))
                .map(|_| {
                    let mut send = json!({"at": between(rng, 0, churn_until), "count": between(rng, 1, 150),
                                          "intervalMs": between(rng, 0, 200)});
                    if chance(rng, 80) {
                        send["key"] = json!(format!("k{{i%{keys}}}"));
                    }
                    send
                })
                .collect();
            producers.push(json!({"name": format!("P{i}{j}"), "topic": topic, "batching": batching,
                                  "latencyMs": between(rng, 0, 5), "sends": sends}));
        }
    }
    let mut subscriptions = Vec::new();
    for topic in &names {
        for s in 0..between(rng, 1, 2) {
            let sub_type = pick(rng, &TYPES);
            let key_shared_policy =
                (sub_type == "Key_Shared").then(|| json!({"mode": "AUTO_SPLIT", "allowOutOfOrderDelivery": chance(rng, 20)}));
            subscriptions.push(Subscription { topic: topic.clone(), name: format!("S{s}"), sub_type, key_shared_policy });
        }
    }
    let mut consumers = Vec::new();
    let mut next = 0;
    for sub in &subscriptions {
        for _ in 0..between(rng, 1, 4) {
            let start = if chance(rng, 10) { json!("never") } else { json!(between(rng, 0, churn_until / 2)) };
            consumers.push(consumer(rng, sub, &format!("c{next}"), start));
            next += 1;
        }
    }
    let mut timeline = Vec::new();
    if chance(rng, 30) {
        scalable_topic(rng, churn_until, keys, &mut topics, &mut producers, &mut consumers, &mut timeline);
    }
    for _ in 0..between(rng, 0, 8) {
        let at = between(rng, 0, churn_until);
        let who = consumers[rng.index(consumers.len())]["name"].as_str().unwrap_or_default().to_string();
        let action = match rng.index(7) {
            0 => json!({"at": at, "action": "closeConsumer", "consumer": who}),
            1 => json!({"at": at, "action": "crashConsumer", "consumer": who}),
            2 => json!({"at": at, "action": "startConsumer", "consumer": who}),
            3 => {
                let sub = &subscriptions[rng.index(subscriptions.len())];
                let mut added = consumer(rng, sub, &format!("x{next}"), json!(0));
                // An added consumer starts when it is added.
                added.as_object_mut().map(|o| o.remove("startAt"));
                next += 1;
                json!({"at": at, "action": "addConsumer", "consumer": added})
            }
            4 => json!({"at": at, "action": "setAck", "consumer": who, "ack": {"mode": "individual"}}),
            5 => json!({"at": at, "action": "redeliverUnacknowledged", "consumer": who}),
            _ => {
                let producer = producers[rng.index(producers.len())]["name"].clone();
                json!({"at": at, "action": "produce", "producer": producer,
                       "send": {"count": between(rng, 1, 50), "intervalMs": between(rng, 0, 50), "key": format!("late-{{i%{keys}}}")}})
            }
        };
        timeline.push(action);
    }
    let mut config = json!({});
    if chance(rng, 30) {
        config["subscriptionKeySharedUseConsistentHashing"] = json!(false);
    }
    if chance(rng, 15) {
        config["subscriptionKeySharedUseClassicPersistentImplementation"] = json!(true);
    }
    if chance(rng, 30) {
        config["activeConsumerFailoverDelayTimeMillis"] = json!(between(rng, 0, 2_000));
    }
    let mut scenario = json!({
        "format": "mqviz-scenario/1", "broker": "pulsar", "name": "generated",
        "seed": between(rng, 0, 1_000_000), "until": churn_until + SETTLE,
        "network": {"latencyMs": between(rng, 0, 5)},
        "config": config, "brokers": brokers, "topics": topics, "producers": producers,
        "consumers": consumers, "timeline": timeline
    });
    // Drawn last, so the scenarios of earlier seeds are unchanged but for it.
    add_snapshot(rng, &mut scenario);
    scenario
}

/// A quarter of the scenarios start from a snapshot: entries in the ledgers of the v4 topics
/// (keyed or not), a cursor per subscription with its markDelete and sometimes an ack hole, and
/// some consumers connected at t=0 (an Exclusive subscription connects one at most).
fn add_snapshot(rng: &mut SplitMix64, scenario: &mut Value) {
    if !chance(rng, 25) {
        return;
    }
    let mut entries: Vec<(String, Vec<u64>)> = Vec::new();
    for t in scenario["topics"].as_array_mut().into_iter().flatten() {
        if t.get("segments").is_some() {
            continue;
        }
        let partitions = t["partitions"].as_u64().unwrap_or(1).max(1);
        let counts: Vec<u64> = (0..partitions).map(|_| between(rng, 0, 40)).collect();
        t["entries"] = json!(counts);
        if chance(rng, 50) {
            t["backlogKey"] = json!(format!("s{{i%{}}}", between(rng, 1, 6)));
        }
        entries.push((t["name"].as_str().unwrap_or_default().to_string(), counts));
    }
    let consumers = scenario["consumers"].as_array_mut().map(|c| c.as_mut_slice()).unwrap_or_default();
    let mut subscriptions = Vec::new();
    for (topic, counts) in &entries {
        let mut names: Vec<String> = Vec::new();
        for c in consumers.iter().filter(|c| c["topic"] == topic.as_str()) {
            if let Some(n) = c["subscription"].as_str().filter(|n| !names.iter().any(|x| x == n)) {
                names.push(n.to_string());
            }
        }
        for name in names {
            let cursors: Vec<Value> = counts
                .iter()
                .map(|&n| {
                    let mark_delete = between(rng, 0, n) as i64 - 1;
                    let mut c = json!({"markDeletePosition": mark_delete});
                    let first_free = (mark_delete + 2) as u64;
                    if n > first_free && chance(rng, 40) {
                        let a = between(rng, first_free, n - 1);
                        c["individuallyDeleted"] = json!([[a, between(rng, a, n - 1)]]);
                    }
                    c
                })
                .collect();
            let mut connected = Vec::new();
            for c in consumers.iter_mut().filter(|c| c["topic"] == topic.as_str() && c["subscription"] == name.as_str()) {
                let exclusive_taken = c["subscriptionType"] == "Exclusive" && !connected.is_empty();
                if c["startAt"] == "never" || exclusive_taken || !chance(rng, 60) {
                    continue;
                }
                c.as_object_mut().map(|o| o.remove("startAt"));
                connected.push(c["name"].clone());
            }
            subscriptions.push(json!({"topic": topic, "name": name, "cursors": cursors, "connected": connected}));
        }
    }
    scenario["subscriptions"] = json!(subscriptions);
}

/// A consumer of `sub`: how it acks, how fast, its queue, its timeouts and dead-letter policy.
fn consumer(rng: &mut SplitMix64, sub: &Subscription, name: &str, start: Value) -> Value {
    let single_active = matches!(sub.sub_type, "Exclusive" | "Failover");
    let mode = match rng.index(10) {
        0..=5 => "individual",
        6 | 7 if single_active => "cumulative",
        6 | 7 => "individual",
        8 => "nack",
        _ => "never",
    };
    let mut ack = json!({"mode": mode, "processMs": if chance(rng, 20) { between(rng, 1, 50) } else { 0 }});
    if mode == "individual" && chance(rng, 20) {
        ack["nackFirst"] = json!(between(rng, 1, 10));
    }
    let receiver_queue = [1, 5, 100, 1000][rng.index(4)];
    let mut c = json!({
        "name": name, "topic": sub.topic, "subscription": sub.name, "subscriptionType": sub.sub_type,
        "subscriptionInitialPosition": "Earliest",
        "receiverQueueSize": receiver_queue,
        "ack": ack, "startAt": start, "latencyMs": between(rng, 0, 5),
        "negativeAckRedeliveryDelayMs": between(rng, 100, 3_000),
    });
    if let Some(policy) = &sub.key_shared_policy {
        c["keySharedPolicy"] = policy.clone();
    }
    if chance(rng, 15) {
        c["ackTimeoutMs"] = json!(between(rng, 1_000, 5_000));
    }
    if chance(rng, 20) {
        c["deadLetterPolicy"] = json!({"maxRedeliverCount": between(rng, 1, 3)});
    }
    c
}

/// A scalable topic `E` of 1–4 segments: a keyed producer, QUEUE and STREAM subscriptions, and
/// splits and merges the layout allows, drawn in time order on the layout they will meet.
fn scalable_topic(
    rng: &mut SplitMix64,
    churn_until: u64,
    keys: u64,
    topics: &mut Vec<Value>,
    producers: &mut Vec<Value>,
    consumers: &mut Vec<Value>,
    timeline: &mut Vec<Value>,
) {
    let segments = between(rng, 1, 4);
    topics.push(json!({"name": "E", "segments": segments}));
    producers.push(json!({"name": "PE", "topic": "E", "batching": false, "latencyMs": between(rng, 0, 5),
        "sends": [{"at": between(rng, 0, churn_until / 2), "count": between(rng, 10, 200), "intervalMs": between(rng, 5, 200),
                   "key": format!("e{{i%{keys}}}")}]}));
    for (s, kind) in ["QUEUE", "STREAM"].iter().enumerate() {
        if s > 0 && chance(rng, 30) {
            continue;
        }
        let kind = if chance(rng, 50) { *kind } else { pick(rng, &["QUEUE", "STREAM"]) };
        for k in 0..between(rng, 1, 3) {
            let mode = match kind {
                "STREAM" => pick(rng, &["individual", "cumulative"]),
                _ => pick(rng, &["individual", "individual", "nack", "never"]),
            };
            consumers.push(json!({
                "name": format!("e{s}{k}"), "topic": "E", "subscription": format!("E{s}"), "consumerType": kind,
                "subscriptionInitialPosition": "Earliest", "ack": {"mode": mode},
                "startAt": between(rng, 0, churn_until / 2), "latencyMs": between(rng, 0, 5),
                "negativeAckRedeliveryDelayMs": between(rng, 100, 3_000),
            }));
        }
    }
    let Ok(mut layout) = SegmentLayout::initial(segments as i64, 0) else { return };
    let mut at = 0;
    for _ in 0..between(rng, 0, 3) {
        at = between(rng, at + 1, churn_until.max(at + 1));
        let active: Vec<u64> = layout.active_segments().map(|s| s.segment_id).collect();
        if active.is_empty() {
            break;
        }
        let a = active[rng.index(active.len())];
        let action = if active.len() < 2 || chance(rng, 50) {
            let op = json!({"at": at, "action": "splitSegment", "topic": "E", "segment": a});
            layout.split(a, at as i64).ok().map(|next| (next, op))
        } else {
            // A neighbour of `a`, if it has one among the active segments.
            active.iter().find_map(|&b| {
                let op = json!({"at": at, "action": "mergeSegments", "topic": "E", "segments": [a, b]});
                layout.merge(a, b, at as i64).ok().map(|next| (next, op))
            })
        };
        if let Some((next, op)) = action {
            layout = next;
            timeline.push(op);
        }
    }
}
