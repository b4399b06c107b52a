//! Random valid Kafka scenarios: 1–3 brokers, 1–3 topics of 1–12 partitions, 1–2 groups under the
//! classic protocol (every client assignor, EAGER and COOPERATIVE) or KIP-848 (both server
//! assignors), dynamic and static members subscribing by list or pattern, sometimes an `assign()`
//! group, keyed and unkeyed producers, auto and manual commits, slow consumers, and churn (add,
//! stop, crash, restart, subscribe, seek, leader changes, unclean truncation, partition growth,
//! topic creation, assignor and protocol changes) until `churn_until`; then the run settles for
//! [`SETTLE`]. A quarter of the runs start from a snapshot (logs, committed offsets, a Stable
//! classic generation or KIP-848 epoch), as `mqviz import` writes one.

use serde_json::{json, Value};

use crate::simtest::draw::{between, chance, pick};
use mqviz_engine::sort::StableSort;
use mqviz_engine::SplitMix64;

/// How long a generated run continues after its last churn and its last send: a session timeout
/// (at most 20 s), a rebalance timeout (`maxPollIntervalMs`, at most 60 s), a metadata refresh (at
/// most 30 s), the initial rebalance delay, a slow member's batch, with room to spare.
pub const SETTLE: u64 = 200_000;

const CLASSIC_ASSIGNORS: [&[&str]; 6] = [
    &["range"],
    &["roundrobin"],
    &["sticky"],
    &["cooperative-sticky"],
    &["range", "cooperative-sticky"],
    &["cooperative-sticky", "range"],
];

struct Topic {
    name: String,
    partitions: u32,
}

/// A member as generated: the JSON and what churn may do with it.
struct Member {
    /// The scenario name the timeline refers to (the clientId may be shared).
    name: String,
    group: usize,
    json: Value,
}

/// What a generated group runs.
struct Group {
    name: String,
    consumer_protocol: bool,
    /// Members subscribe alike (a subscription change then goes to all of them).
    consistent: bool,
    subscription: Value,
    /// An `assign()` group: no membership, fixed partitions.
    manual: bool,
}

/// A random valid scenario for `seed`.
pub fn generate(rng: &mut SplitMix64) -> Value {
    let broker_count = between(rng, 1, 3) as usize;
    let brokers: Vec<String> = (0..broker_count).map(|i| format!("broker-{i}")).collect();
    let topics: Vec<Topic> = (0..between(rng, 1, 3))
        .map(|i| Topic { name: format!("T{i}"), partitions: [1, 2, 3, 4, 6, 8, 12][rng.index(7)] })
        .collect();
    let topic_json: Vec<Value> = topics.iter().map(|t| json!({"name": t.name, "partitions": t.partitions})).collect();
    // A topic created during the run, which subscriptions may name before it exists.
    let later = chance(rng, 25).then(|| between(rng, 1_000, 60_000));

    let mut groups: Vec<Group> = (0..between(rng, 1, 2))
        .map(|g| {
            let subscription = subscription(rng, &topics, later.is_some());
            Group {
                name: format!("G{g}"),
                consumer_protocol: chance(rng, 35),
                consistent: chance(rng, 70),
                subscription,
                manual: false,
            }
        })
        .collect();
    if chance(rng, 15) {
        groups.push(Group {
            name: "A".into(),
            consumer_protocol: false,
            consistent: true,
            subscription: Value::Null,
            manual: true,
        });
    }
    let mut group_json: Vec<Value> = groups.iter().map(|g| settings(rng, g)).collect();

    let mut members: Vec<Member> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let count = if g.manual { 1 } else { between(rng, 1, 5) };
        for k in 0..count {
            let name = format!("c{gi}{k}");
            let mut c = member_json(rng, g, &name, &topics, k as usize, later.is_some());
            c["startAt"] = if chance(rng, 8) { json!("never") } else { json!(between(rng, 0, 10_000)) };
            members.push(Member { name, group: gi, json: c });
        }
    }

    let mut send_end = 0;
    let producers: Vec<Value> = (0..between(rng, 1, 2))
        .map(|p| {
            let sends: Vec<Value> = (0..between(rng, 1, 3)).map(|_| send_json(rng, &topics, &mut send_end, true)).collect();
            let mut v = json!({"id": format!("P{p}"), "sends": sends});
            if chance(rng, 30) {
                v["partitioner"] = json!("roundRobin");
            }
            if chance(rng, 30) {
                v["latencyMs"] = json!(between(rng, 0, 20));
            }
            v
        })
        .collect();

    // Churn.
    let churn_until = between(rng, 20_000, 90_000);
    let mut timeline = Vec::new();
    let mut added = 0;
    for _ in 0..between(rng, 0, 8) {
        let at = between(rng, 1_000, churn_until);
        let target = &members[rng.index(members.len())];
        let (client, gi) = (target.name.clone(), target.group);
        let topic = &topics[rng.index(topics.len())];
        let partition = format!("{}-{}", topic.name, rng.below(topic.partitions as u64));
        match rng.index(13) {
            0 | 1 => timeline.push(json!({"at": at, "action": "stopConsumer", "consumer": client})),
            2 | 3 => timeline.push(json!({"at": at, "action": "crashConsumer", "consumer": client})),
            4 | 5 => timeline.push(json!({"at": at, "action": "startConsumer", "consumer": client})),
            6 if members.len() + added < 10 => {
                let g = rng.index(groups.len());
                if groups[g].manual {
                    continue;
                }
                let name = format!("x{added}");
                let mut c = member_json(rng, &groups[g], &name, &topics, 5 + added, later.is_some());
                c.as_object_mut().map(|o| o.remove("startAt"));
                added += 1;
                timeline.push(json!({"at": at, "action": "addConsumer", "group": groups[g].name, "consumer": c}));
            }
            7 if !groups[gi].manual => {
                // A subscription change: to the whole group when it subscribes alike.
                let subs = subscription(rng, &topics, later.is_some());
                let who: Vec<String> = if groups[gi].consistent {
                    members.iter().filter(|m| m.group == gi).map(|m| m.name.clone()).collect()
                } else {
                    vec![client]
                };
                for (k, id) in who.iter().enumerate() {
                    let mut a = json!({"at": at + k as u64 * 5, "consumer": id});
                    match &subs {
                        Value::String(p) => {
                            a["action"] = json!("subscribePattern");
                            a["pattern"] = json!(p);
                        }
                        list => {
                            a["action"] = json!("subscribe");
                            a["topics"] = list.clone();
                        }
                    }
                    timeline.push(a);
                }
            }
            8 if !groups[gi].manual || chance(rng, 50) => {
                let to = match rng.index(3) {
                    0 => json!("beginning"),
                    1 => json!("end"),
                    _ => json!(between(rng, 0, 30)),
                };
                timeline.push(json!({"at": at, "action": "seek", "consumer": client, "partition": partition, "to": to}));
            }
            9 => {
                let leader = &brokers[rng.index(broker_count)];
                timeline.push(json!({"at": at, "action": "leaderChange", "partition": partition, "leader": leader}));
            }
            10 => {
                let leader = &brokers[rng.index(broker_count)];
                let offset = between(rng, 0, 20);
                timeline
                    .push(json!({"at": at, "action": "truncate", "partition": partition, "offset": offset, "leader": leader}));
            }
            11 => {
                let grown = topic.partitions + between(rng, 1, 4) as u32;
                timeline.push(json!({"at": at, "action": "addPartitions", "topic": topic.name, "partitions": grown}));
            }
            _ => {
                let g = &groups[rng.index(groups.len())];
                if g.manual {
                    continue;
                }
                if chance(rng, 25) {
                    let protocol = if g.consumer_protocol { "classic" } else { "consumer" };
                    timeline.push(json!({"at": at, "action": "setProtocol", "group": g.name, "protocol": protocol}));
                } else if g.consumer_protocol {
                    let assignor = pick(rng, &["uniform", "range"]);
                    timeline.push(json!({"at": at, "action": "setRemoteAssignor", "group": g.name, "assignor": assignor}));
                } else {
                    let assignors = CLASSIC_ASSIGNORS[rng.index(CLASSIC_ASSIGNORS.len())];
                    timeline.push(json!({"at": at, "action": "setAssignors", "group": g.name, "assignors": assignors}));
                }
            }
        }
    }
    // Growing a topic changes nothing a later action names; a shrinking count is an error, so
    // only the largest growth per topic stays.
    keep_growing_partition_counts(&mut timeline, &topics);
    if let Some(at) = later {
        timeline.push(json!({"at": at, "action": "createTopic", "topic": {"name": "T9", "partitions": between(rng, 1, 4)}}));
    }
    if chance(rng, 30) {
        let at = between(rng, 1_000, churn_until);
        let mut send = send_json(rng, &topics, &mut send_end, false);
        send.as_object_mut().map(|o| o.remove("at"));
        timeline.push(json!({"at": at, "action": "produce", "producer": "P0", "send": send}));
        send_end = send_end.max(at + 40_000);
    }
    for (g, group) in group_json.iter_mut().enumerate() {
        group["consumers"] = json!(members.iter().filter(|m| m.group == g).map(|m| m.json.clone()).collect::<Vec<_>>());
    }
    let until = churn_until.max(send_end) + SETTLE;
    let mut scenario = json!({
        "format": "mqviz-scenario/1",
        "broker": "kafka",
        "name": "generated",
        "seed": rng.next_u64() % 1_000_000,
        "until": until,
        "network": {"latencyMs": between(rng, 0, 5)},
        "brokers": brokers.iter().map(|b| json!({"name": b})).collect::<Vec<_>>(),
        "topics": topic_json,
        "producers": producers,
        "groups": group_json,
        "timeline": timeline,
    });
    // Drawn last, so every other draw of a seed is what it was before snapshots existed.
    add_snapshot(rng, &mut scenario, &topics, &groups);
    scenario
}

/// Sometimes the run starts from a snapshot, as `mqviz import` writes one: logs that already
/// hold records, committed offsets (at or below the log end, sometimes below where the log now
/// starts), and a group Stable at t=0 (a classic generation or a KIP-848 epoch) whose members own
/// every partition of their topics.
fn add_snapshot(rng: &mut SplitMix64, scenario: &mut Value, topics: &[Topic], groups: &[Group]) {
    if !chance(rng, 25) {
        return;
    }
    let ends: Vec<Vec<u64>> = topics.iter().map(|t| (0..t.partitions).map(|_| between(rng, 0, 40)).collect()).collect();
    for (t, json) in scenario["topics"].as_array_mut().into_iter().flatten().enumerate() {
        json["logEndOffsets"] = json!(ends[t]);
        if chance(rng, 20) {
            json["logStartOffsets"] = json!(ends[t].iter().map(|e| between(rng, 0, *e)).collect::<Vec<_>>());
        }
    }
    for (g, json) in scenario["groups"].as_array_mut().into_iter().flatten().enumerate() {
        let mut committed = serde_json::Map::new();
        for (t, topic) in topics.iter().enumerate() {
            for p in 0..topic.partitions {
                if chance(rng, 50) {
                    committed.insert(format!("{}-{p}", topic.name), json!(between(rng, 0, ends[t][p as usize])));
                }
            }
        }
        if !committed.is_empty() {
            json["committed"] = Value::Object(committed);
        }
        if groups[g].manual || !chance(rng, 70) {
            continue;
        }
        // Members: the consumers subscribing to a list of topics that exist at t=0.
        let exists = |t: &Value| topics.iter().any(|x| t == x.name.as_str());
        let consumers = json["consumers"].as_array_mut().map(std::mem::take).unwrap_or_default();
        let mut members: Vec<Value> = Vec::new();
        let mut others: Vec<Value> = Vec::new();
        for c in consumers {
            let listed = c["subscribe"].as_array().is_some_and(|l| l.iter().all(exists));
            if listed && chance(rng, 80) {
                members.push(c);
            } else {
                others.push(c);
            }
        }
        let mut owned: Vec<Vec<String>> = vec![Vec::new(); members.len()];
        for topic in topics {
            let readers: Vec<usize> = (0..members.len())
                .filter(|&m| members[m]["subscribe"].as_array().is_some_and(|l| l.iter().any(|t| t == topic.name.as_str())))
                .collect();
            if readers.is_empty() {
                continue;
            }
            for p in 0..topic.partitions {
                owned[readers[rng.index(readers.len())]].push(format!("{}-{p}", topic.name));
            }
        }
        for (m, c) in members.iter_mut().enumerate() {
            c.as_object_mut().map(|o| o.remove("startAt"));
            c["assigned"] = json!(owned[m]);
            if chance(rng, 50) {
                c["memberId"] = json!(format!("{}-snapshot-{m}", c["clientId"].as_str().unwrap_or("c")));
            }
        }
        if !members.is_empty() && chance(rng, 50) {
            json["generation"] = json!(between(rng, 1, 40));
        }
        members.extend(others);
        json["consumers"] = json!(members);
    }
}

/// Drops `addPartitions` actions that would not grow their topic, in time order.
fn keep_growing_partition_counts(timeline: &mut Vec<Value>, topics: &[Topic]) {
    let mut order: Vec<usize> = (0..timeline.len()).collect();
    order.stable_sort_by_key(|&i| timeline[i]["at"].as_u64().unwrap_or(0));
    let mut counts: Vec<u32> = topics.iter().map(|t| t.partitions).collect();
    let mut dropped = vec![false; timeline.len()];
    for i in order {
        let a = &timeline[i];
        if a["action"] != "addPartitions" {
            continue;
        }
        let t = topics.iter().position(|t| a["topic"] == t.name.as_str()).unwrap_or(0);
        let n = a["partitions"].as_u64().unwrap_or(0) as u32;
        if n > counts[t] {
            counts[t] = n;
        } else {
            dropped[i] = true;
        }
    }
    let mut i = 0;
    timeline.retain(|_| {
        i += 1;
        !dropped[i - 1]
    });
}

/// A topic list, or sometimes a pattern (which may match `T9`, created later). A list names
/// `T9` only when the timeline creates it: a scenario may not name an unknown topic.
fn subscription(rng: &mut SplitMix64, topics: &[Topic], t9_later: bool) -> Value {
    if chance(rng, 20) {
        return json!(pick(rng, &["T[0-1]", "T.*", "T0|T9", "T[12]"]));
    }
    let first = rng.index(topics.len());
    let mut list: Vec<&str> =
        topics.iter().enumerate().filter(|(i, _)| *i == first || chance(rng, 35)).map(|(_, t)| t.name.as_str()).collect();
    if t9_later && chance(rng, 40) {
        list.push("T9");
    }
    json!(list)
}

fn settings(rng: &mut SplitMix64, g: &Group) -> Value {
    let mut v = json!({"name": g.name});
    if g.consumer_protocol {
        v["protocol"] = json!("consumer");
        if chance(rng, 50) {
            v["remoteAssignor"] = json!(pick(rng, &["uniform", "range"]));
        }
    } else if chance(rng, 80) {
        v["assignors"] = json!(CLASSIC_ASSIGNORS[rng.index(CLASSIC_ASSIGNORS.len())]);
    }
    if !g.consumer_protocol && chance(rng, 50) {
        v["initialRebalanceDelayMs"] = json!(between(rng, 0, 3_000));
    }
    let session = between(rng, 6_000, 20_000);
    v["sessionTimeoutMs"] = json!(session);
    v["heartbeatIntervalMs"] = json!(between(rng, 500, 3_000).min(session / 3));
    v["maxPollIntervalMs"] = json!(between(rng, 10_000, 60_000));
    v["metadataMaxAgeMs"] = json!(between(rng, 5_000, 30_000));
    v["autoOffsetReset"] = json!(if chance(rng, 65) { "earliest" } else { "latest" });
    if chance(rng, 30) {
        v["enableAutoCommit"] = json!(false);
    } else {
        v["autoCommitIntervalMs"] = json!(between(rng, 500, 5_000));
    }
    if chance(rng, 40) {
        v["manualCommit"] = json!(pick(rng, &["sync", "async"]));
    }
    v["maxPollRecords"] = json!([1, 5, 20, 100, 500][rng.index(5)]);
    v
}

fn member_json(rng: &mut SplitMix64, g: &Group, name: &str, topics: &[Topic], k: usize, t9_later: bool) -> Value {
    // client.id is only a label: instances of one deployment often share it, told apart by name.
    let mut c = if chance(rng, 15) { json!({"name": name, "clientId": "app"}) } else { json!({"clientId": name}) };
    if g.manual {
        let t = &topics[rng.index(topics.len())];
        let parts: Vec<String> = (0..t.partitions).filter(|_| chance(rng, 60)).map(|p| format!("{}-{p}", t.name)).collect();
        c["assign"] = json!(if parts.is_empty() { vec![format!("{}-0", t.name)] } else { parts });
        return c;
    }
    let subs = if g.consistent { g.subscription.clone() } else { subscription(rng, topics, t9_later) };
    match subs {
        Value::String(p) => c["subscribePattern"] = json!(p),
        list => c["subscribe"] = list,
    }
    if chance(rng, 20) {
        c["groupInstanceId"] = json!(format!("host-{k}"));
    }
    if chance(rng, 30) {
        c["latencyMs"] = json!(between(rng, 0, 20));
    }
    if chance(rng, 12) {
        // A slow member: its batches may outlast max.poll.interval.ms.
        c["recordProcessingMs"] = json!(between(rng, 50, 500));
        c["maxPollRecords"] = json!(between(rng, 1, 20));
    } else if chance(rng, 30) {
        c["recordProcessingMs"] = json!(between(rng, 0, 20));
    }
    c
}

fn send_json(rng: &mut SplitMix64, topics: &[Topic], send_end: &mut u64, scripted: bool) -> Value {
    let t = &topics[rng.index(topics.len())];
    let at = between(rng, 0, 60_000);
    let count = between(rng, 1, 40);
    let interval = [0, 10, 50, 200, 1_000][rng.index(5)];
    *send_end = (*send_end).max(at + count * interval);
    let mut v = json!({"at": at, "topic": t.name, "value": format!("{}-{{i}}", t.name), "count": count, "intervalMs": interval});
    match rng.index(4) {
        0 | 1 => v["key"] = json!(format!("k{}-{{i}}", rng.below(4))),
        2 if scripted => v["partition"] = json!(rng.below(t.partitions as u64)),
        _ => {}
    }
    v
}
