//! Random valid RocketMQ scenarios: 1–2 brokers, 1–3 topics of 1–32 queues, 1–8 consumers in 1–2
//! groups (CLUSTERING or BROADCASTING, orderly or concurrent, every allocation strategy, TAG and
//! SQL92 subscriptions, consistent or not), producers with tags and properties, random latencies
//! and consume failures, and churn (add, stop, crash, restart, subscribe, setQueueCount,
//! setAllocation, produce) until `churn_until`; then the run settles for [`SETTLE`].

use serde_json::{json, Value};

use crate::simtest::draw::{between, chance, pick};
use mqviz_engine::SplitMix64;

/// How long a generated run continues after its last churn and its last send: channel expiry
/// (120 s + the 10 s scan), route refresh (30 s), rebalance (20 s), a dropped orderly queue's
/// pull expiry (120 s), the first four retry delays (10 s + 30 s + 1 m + 2 m), with room to spare.
pub const SETTLE: u64 = 420_000;

const ROOMS: [&str; 2] = ["r1", "r2"];
const TAGS: [&str; 5] = ["A", "B", "C", "Aa", "BB"];
const SQL: [&str; 6] =
    ["a > 5", "a > 5 AND region = 'eu'", "region = 'eu' OR a < 3", "a BETWEEN 2 AND 8", "TAGS = 'A'", "UNIQ_KEY IS NOT NULL"];

struct Topic {
    name: String,
    queues: u32,
}

/// One consumer as generated: its scenario JSON and what the churn may do with it.
struct Member {
    name: String,
    group: usize,
    json: Value,
}

/// A random valid scenario for `seed`.
pub fn generate(rng: &mut SplitMix64) -> Value {
    let broker_count = between(rng, 1, 2) as usize;
    let brokers: Vec<String> = (0..broker_count).map(|i| format!("{}@b-{}", ROOMS[i % 2], ["a", "b"][i])).collect();
    let any_sql = chance(rng, 35);
    let broker_json: Vec<Value> = brokers
        .iter()
        .map(|b| {
            let mut v = json!({"name": b});
            if any_sql && chance(rng, 85) {
                v["enablePropertyFilter"] = json!(true);
                if chance(rng, 25) {
                    v["enableCalcFilterBitMap"] = json!(true);
                }
            }
            if chance(rng, 30) {
                v["filterIndex"] = json!("groupIndex");
            }
            v
        })
        .collect();
    let topic_count = between(rng, 1, 3) as usize;
    let topics: Vec<Topic> = (0..topic_count)
        .map(|i| Topic { name: format!("T{i}"), queues: [1, 2, 3, 4, 4, 6, 8, 8, 16, 32][rng.index(10)] })
        .collect();
    let topic_json: Vec<Value> = topics
        .iter()
        .map(|t| {
            let mut v = json!({"name": t.name, "queues": t.queues});
            if broker_count > 1 && chance(rng, 25) {
                v["brokers"] = json!([brokers[rng.index(broker_count)]]);
            }
            v
        })
        .collect();

    // Groups and their members.
    let group_count = between(rng, 1, 2) as usize;
    let consumer_count = between(rng, 1, 8) as usize;
    let mut groups: Vec<Value> = (0..group_count).map(|g| group_json(rng, g)).collect();
    let group_subs: Vec<Value> = (0..group_count).map(|_| subscriptions(rng, &topics, any_sql)).collect();
    let consistent: Vec<bool> = (0..group_count).map(|_| chance(rng, 70)).collect();
    let mut members: Vec<Member> = Vec::new();
    for i in 0..consumer_count {
        let g = if i < group_count { i } else { rng.index(group_count) };
        let subs = if consistent[g] { group_subs[g].clone() } else { subscriptions(rng, &topics, any_sql) };
        let client_id = if !members.is_empty() && chance(rng, 6) {
            members[rng.index(members.len())].json["clientId"].as_str().unwrap_or("").to_string()
        } else {
            format!("{}@b-c{i}", pick(rng, &ROOMS))
        };
        let name = format!("C{i}");
        let mut c = consumer_json(rng, &name, &client_id, subs);
        if chance(rng, 10) {
            c["startAt"] = json!("never");
        } else {
            c["startAt"] = json!(between(rng, 0, 10_000));
        }
        members.push(Member { name, group: g, json: c });
    }

    // Producers.
    let producer_count = between(rng, 1, 2) as usize;
    let mut send_end = 0;
    let producers: Vec<Value> = (0..producer_count)
        .map(|p| {
            let sends: Vec<Value> = (0..between(rng, 1, 3)).map(|_| send_json(rng, &topics, &mut send_end)).collect();
            let mut v = json!({"id": format!("P{p}"), "sends": sends});
            if chance(rng, 40) {
                v["startIndex"] = json!("random");
            }
            if chance(rng, 30) {
                v["latencyMs"] = json!(between(rng, 0, 30));
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
        let kind = rng.index(10);
        let target = members[rng.index(members.len())].name.clone();
        match kind {
            0 | 1 => timeline.push(json!({"at": at, "action": "stopConsumer", "consumer": target})),
            2 | 3 => timeline.push(json!({"at": at, "action": "crashConsumer", "consumer": target})),
            4 | 5 => timeline.push(json!({"at": at, "action": "startConsumer", "consumer": target})),
            6 if members.len() + added < 8 => {
                let g = rng.index(group_count);
                let subs = if consistent[g] { group_subs[g].clone() } else { subscriptions(rng, &topics, any_sql) };
                let name = format!("X{added}");
                let client_id = format!("{}@b-x{added}", pick(rng, &ROOMS));
                let mut c = consumer_json(rng, &name, &client_id, subs);
                c["startAt"] = json!(at);
                added += 1;
                timeline.push(json!({"at": at, "action": "addConsumer", "group": group_name(g), "consumer": c}));
            }
            7 => {
                // A subscription change: to the whole group when it is consistent, so it ends consistent.
                let g = members.iter().find(|m| m.name == target).map(|m| m.group).unwrap_or(0);
                let topic = &topics[rng.index(topics.len())].name;
                let (expression, sql) = expression(rng, any_sql);
                let who: Vec<String> = if consistent[g] {
                    members.iter().filter(|m| m.group == g).map(|m| m.name.clone()).collect()
                } else {
                    vec![target]
                };
                for (k, name) in who.iter().enumerate() {
                    let mut a = json!({"at": at + k as u64 * 5, "action": "subscribe", "consumer": name, "topic": topic, "expression": expression});
                    if sql {
                        a["type"] = json!("SQL92");
                    }
                    timeline.push(a);
                }
            }
            8 => {
                let t = &topics[rng.index(topics.len())];
                let queues = [1, 2, 3, 4, 6, 8, 12, 16, 32][rng.index(9)].max(1);
                timeline.push(json!({"at": at, "action": "setQueueCount", "topic": t.name, "queues": queues}));
            }
            _ => {
                let g = rng.index(group_count);
                let allocation = allocation(rng);
                timeline.push(json!({"at": at, "action": "setAllocation", "group": group_name(g), "allocation": allocation}));
            }
        }
    }
    if chance(rng, 30) {
        let at = between(rng, 1_000, churn_until);
        let mut send = send_json(rng, &topics, &mut send_end);
        if let Some(o) = send.as_object_mut() {
            o.remove("at");
        }
        timeline.push(json!({"at": at, "action": "produce", "producer": "P0", "send": send}));
        send_end = send_end.max(at + 60_000);
    }
    for (g, group) in groups.iter_mut().enumerate() {
        group["consumers"] = json!(members.iter().filter(|m| m.group == g).map(|m| m.json.clone()).collect::<Vec<_>>());
    }
    // CONFIG lists name every queue id any topic will have on every broker (the retry topic's 0
    // included): the strategy returns them verbatim, existing or not.
    let max_queues =
        topics.iter().map(|t| t.queues as u64).chain(timeline.iter().filter_map(|a| a["queues"].as_u64())).max().unwrap_or(1);
    let list: Vec<String> = brokers.iter().flat_map(|b| (0..max_queues).map(move |q| format!("{b}:{q}"))).collect();
    let holders = groups.iter_mut().chain(timeline.iter_mut().filter(|a| a.get("allocation").is_some()));
    for a in holders.map(|h| &mut h["allocation"]) {
        if a["strategy"] == "CONFIG" {
            a["queues"] = json!(list);
        }
    }
    let until = churn_until.max(send_end) + SETTLE;
    let mut scenario = json!({
        "format": "mqviz-scenario/1",
        "broker": "rocketmq",
        "name": "generated",
        "seed": rng.next_u64() % 1_000_000,
        "until": until,
        "network": {"latencyMs": between(rng, 0, 5)},
        "brokers": broker_json,
        "topics": topic_json,
        "producers": producers,
        "groups": groups,
        "timeline": timeline,
    });
    // Drawn last, so that the scenarios of earlier seeds are unchanged but for their snapshot.
    add_snapshot(rng, &mut scenario, &topics, &brokers);
    scenario
}

/// A quarter of the scenarios start from a snapshot: queues holding messages, committed offsets,
/// and members running with queues of their own (not always what their strategy would give them,
/// so that the first rebalance may move them).
fn add_snapshot(rng: &mut SplitMix64, scenario: &mut Value, topics: &[Topic], brokers: &[String]) {
    if !chance(rng, 25) {
        return;
    }
    // Every queue of every hosting broker, with its max offset.
    let mut queues: Vec<(String, String, u32, u64)> = Vec::new();
    for (t, json) in scenario["topics"].as_array_mut().into_iter().flatten().enumerate() {
        let hosts: Vec<String> = match json["brokers"].as_array() {
            Some(list) => list.iter().filter_map(|b| b.as_str().map(str::to_string)).collect(),
            None => brokers.to_vec(),
        };
        let mut offsets = serde_json::Map::new();
        for b in hosts {
            let maxes: Vec<u64> = (0..topics[t].queues).map(|_| between(rng, 0, 40)).collect();
            queues.extend(maxes.iter().enumerate().map(|(q, &m)| (topics[t].name.clone(), b.clone(), q as u32, m)));
            offsets.insert(b, json!(maxes));
        }
        json["brokerOffsets"] = Value::Object(offsets);
    }
    for json in scenario["groups"].as_array_mut().into_iter().flatten() {
        let mut committed = serde_json::Map::new();
        for (t, b, q, max) in &queues {
            if chance(rng, 50) {
                committed.insert(format!("{t}:{b}:{q}"), json!(between(rng, 0, *max)));
            }
        }
        if !committed.is_empty() {
            json["committed"] = Value::Object(committed);
        }
        if !chance(rng, 70) {
            continue;
        }
        let broadcasting = json["messageModel"] == "BROADCASTING";
        let consumers = json["consumers"].as_array_mut().map(|c| c.as_mut_slice()).unwrap_or_default();
        let members: Vec<usize> =
            (0..consumers.len()).filter(|&i| consumers[i]["startAt"] != "never" && chance(rng, 80)).collect();
        let mut owned: Vec<Vec<String>> = vec![Vec::new(); members.len()];
        for (t, b, q, _) in &queues {
            let readers: Vec<usize> =
                (0..members.len()).filter(|&m| consumers[members[m]]["subscriptions"].get(t.as_str()).is_some()).collect();
            if readers.is_empty() {
                continue;
            }
            let owners = if broadcasting { readers } else { vec![readers[rng.index(readers.len())]] };
            for m in owners {
                owned[m].push(format!("{t}:{b}:{q}"));
            }
        }
        for (m, &i) in members.iter().enumerate() {
            consumers[i].as_object_mut().map(|o| o.remove("startAt"));
            consumers[i]["assigned"] = json!(owned[m]);
        }
    }
}

fn group_name(g: usize) -> String {
    format!("G{g}")
}

fn group_json(rng: &mut SplitMix64, g: usize) -> Value {
    let mut v = json!({"name": group_name(g), "allocation": allocation(rng)});
    if chance(rng, 25) {
        v["messageModel"] = json!("BROADCASTING");
    }
    if chance(rng, 25) {
        v["orderly"] = json!(true);
    }
    match rng.index(5) {
        0 => v["consumeFromWhere"] = json!("CONSUME_FROM_FIRST_OFFSET"),
        1 => {
            v["consumeFromWhere"] = json!("CONSUME_FROM_TIMESTAMP");
            if chance(rng, 50) {
                v["consumeTimestamp"] = json!(between(rng, 0, 30_000));
            }
        }
        _ => {}
    }
    v
}

fn allocation(rng: &mut SplitMix64) -> Value {
    match rng.index(7) {
        0 | 1 => json!("AVG"),
        2 => json!("AVG_BY_CIRCLE"),
        3 => json!({"strategy": "CONSISTENT_HASH", "virtualNodeCnt": between(rng, 1, 10)}),
        // Filled in by `configure_lists` once the largest queue count is known.
        4 => json!({"strategy": "CONFIG", "queues": []}),
        5 => {
            let idcs: Vec<&str> = if chance(rng, 80) { ROOMS.to_vec() } else { vec![ROOMS[rng.index(2)]] };
            json!({"strategy": "MACHINE_ROOM", "consumeridcs": idcs})
        }
        _ => {
            let inner = ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"][rng.index(3)];
            json!({"strategy": "MACHINE_ROOM_NEARBY", "inner": inner})
        }
    }
}

/// A tag expression or (sometimes, when some broker may filter SQL92) a SQL92 one.
fn expression(rng: &mut SplitMix64, any_sql: bool) -> (String, bool) {
    if any_sql && chance(rng, 40) {
        return (pick(rng, &SQL).to_string(), true);
    }
    let e = match rng.index(6) {
        0 | 1 => "*".to_string(),
        2 => pick(rng, &TAGS).to_string(),
        3 => format!("{} || {}", pick(rng, &TAGS), pick(rng, &TAGS)),
        4 => "A || B || C".to_string(),
        _ => format!("{}||", pick(rng, &TAGS)),
    };
    (e, false)
}

fn subscriptions(rng: &mut SplitMix64, topics: &[Topic], any_sql: bool) -> Value {
    let mut subs = serde_json::Map::new();
    let first = rng.index(topics.len());
    for (i, t) in topics.iter().enumerate() {
        if i == first || chance(rng, 40) {
            let (e, sql) = expression(rng, any_sql);
            subs.insert(t.name.clone(), if sql { json!({"type": "SQL92", "expression": e}) } else { json!(e) });
        }
    }
    if chance(rng, 5) {
        // A topic that does not exist (yet): allowed, as the real client allows it.
        subs.insert("Missing".into(), json!("*"));
    }
    Value::Object(subs)
}

fn consumer_json(rng: &mut SplitMix64, name: &str, client_id: &str, subs: Value) -> Value {
    let mut c = json!({"name": name, "clientId": client_id, "subscriptions": subs});
    if chance(rng, 40) {
        c["latencyMs"] = json!(between(rng, 0, 40));
    }
    c["consumeTimeMs"] = json!(if chance(rng, 12) { between(rng, 400, 4_000) } else { between(rng, 0, 30) });
    match rng.index(20) {
        0..=3 => c["consumeResult"] = json!({"failTimes": between(rng, 1, 3)}),
        4 => c["consumeResult"] = json!("RECONSUME_LATER"),
        _ => {}
    }
    if chance(rng, 30) {
        c["onStartFailure"] = json!("ignore");
    }
    c
}

fn send_json(rng: &mut SplitMix64, topics: &[Topic], send_end: &mut u64) -> Value {
    let t = &topics[rng.index(topics.len())];
    let at = between(rng, 0, 60_000);
    let count = between(rng, 1, 40);
    let interval = [0, 10, 50, 200, 1_000][rng.index(5)];
    *send_end = (*send_end).max(at + count * interval);
    let mut v = json!({"at": at, "topic": t.name, "body": format!("{}-{{i}}", t.name), "count": count, "intervalMs": interval});
    if chance(rng, 75) {
        v["tag"] = json!(pick(rng, &TAGS));
    }
    if chance(rng, 60) {
        let a = ["1", "3", "6", "9", "x", "6.5"][rng.index(6)];
        let mut props = json!({"a": a});
        if chance(rng, 50) {
            props["region"] = json!(["eu", "us"][rng.index(2)]);
        }
        v["properties"] = props;
    }
    v
}
