//! Reading and validating the Kafka section of a scenario. Every error names its JSON path;
//! nothing panics.

use mqviz_engine::sort::CollectSorted;
use mqviz_engine::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::config::{read_assignors, read_overrides, ConfigOverrides, ConsumerConfig};
use super::*;
use crate::pattern::TopicPattern;
use mqviz_engine::json_path::{as_str, as_u64_in, parse_json, type_name, Errors, Obj, PathError};
use mqviz_engine::scenario::{
    bounded, consumer_reference, duplicate_consumer_name, non_empty, read_envelope, MAX_LATENCY, MAX_MESSAGES_PER_SEND,
    MAX_MESSAGES_TOTAL, MAX_TIME,
};

/// The largest partition count of a topic (the assignors refuse far larger counts).
pub const MAX_PARTITIONS: u64 = 100_000;
/// The most partitions a cluster may have in all (topics created or grown by the timeline count).
pub const MAX_TOTAL_PARTITIONS: u64 = 1_000_000;
/// The most brokers a cluster may have (each consumer keeps per-broker fetch state).
pub const MAX_BROKERS: usize = 1_000;
/// The largest `batch.size`.
const MAX_BATCH_SIZE: u64 = 1 << 30;

/// Parses scenario text. `Err` lists every problem found, each with its JSON path.
pub fn parse_scenario(text: &str) -> Result<Scenario, Vec<PathError>> {
    let v = parse_json(text).map_err(|e| vec![e])?;
    parse_scenario_value(&v)
}

pub fn parse_scenario_value(v: &Value) -> Result<Scenario, Vec<PathError>> {
    let mut e = Errors::default();
    let read = read_scenario(v, &mut e);
    if let Some((s, paths)) = &read {
        check_references(s, paths, &mut e);
    }
    match read.map(|(s, _)| s) {
        Some(s) if e.is_empty() => Ok(s),
        _ => {
            if e.list.is_empty() {
                e.push("$", "invalid scenario");
            }
            Err(e.list)
        }
    }
}

/// Reads one timeline entry (`{"at", "action", ...}`) entered during a run. References to
/// consumers, topics and groups are checked by the world that runs it.
pub fn parse_action(v: &Value, path: &str) -> Result<TimedAction, Vec<PathError>> {
    let mut e = Errors::default();
    match read_timed_action(v, path, &mut e) {
        Some(a) if e.is_empty() => Ok(a),
        _ => {
            if e.list.is_empty() {
                e.push(path, "invalid action");
            }
            Err(e.list)
        }
    }
}

/// `"orders-3"` (Kafka's `TopicPartition.toString()`): the topic is everything before the last `-`.
pub fn parse_partition_ref(s: &str) -> Option<PartitionRef> {
    let (topic, p) = s.rsplit_once('-')?;
    if topic.is_empty() || p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 9 {
        return None;
    }
    Some(PartitionRef { topic: topic.to_string(), partition: p.parse().ok()? })
}

fn read_partition_ref(v: &Value, path: &str, e: &mut Errors) -> Option<PartitionRef> {
    let s = as_str(v, path, e)?;
    let r = parse_partition_ref(s);
    if r.is_none() {
        e.push(path, format!("expected \"<topic>-<partition>\", found {s:?}"));
    }
    r
}

fn partition_list(o: &mut Obj, key: &'static str, e: &mut Errors) -> Vec<PartitionRef> {
    o.array(key, e).into_iter().filter_map(|(p, v)| read_partition_ref(v, &p, e)).collect()
}

/// Everything read, with the JSON paths the cross-reference checks report at.
struct Paths {
    /// Aligned with the sorted timeline.
    timeline: Vec<String>,
    /// Per group: its explicit settings.
    group_overrides: Vec<ConfigOverrides>,
}

fn read_scenario(v: &Value, e: &mut Errors) -> Option<(Scenario, Paths)> {
    let (env, mut o) = read_envelope(v, e)?;
    if env.broker != "kafka" {
        e.push("$.broker", format!("expected \"kafka\" for this model, found {:?}", env.broker));
    }
    let brokers = bounded(o.array("brokers", e), "$.brokers", e).into_iter().filter_map(|(p, v)| read_broker(v, &p, e)).collect();
    let topics =
        bounded(o.array("topics", e), "$.topics", e).into_iter().filter_map(|(p, v)| read_topic(v, &p, e, true)).collect();
    let producers =
        bounded(o.array("producers", e), "$.producers", e).into_iter().filter_map(|(p, v)| read_producer(v, &p, e)).collect();
    let mut timeline = Vec::new();
    let mut group_overrides = Vec::new();
    let groups = bounded(o.array("groups", e), "$.groups", e)
        .into_iter()
        .filter_map(|(p, v)| {
            let (g, ov) = read_group(v, &p, e, &mut timeline)?;
            group_overrides.push(ov);
            Some(g)
        })
        .collect();
    for (p, v) in bounded(o.array("timeline", e), "$.timeline", e) {
        if let Some(a) = read_timed_action(v, &p, e) {
            timeline.push((a, p));
        }
    }
    // Stable: equal times keep file order (consumer lifecycle first, then the timeline).
    timeline.stable_sort_by_key(|(a, _)| a.at);
    let (timeline, paths): (Vec<TimedAction>, Vec<String>) = timeline.into_iter().unzip();
    let memory_budget_mb = o.u64_in("memoryBudgetMb", 1, mqviz_engine::budget::MAX_MEMORY_BUDGET_MB, e);
    o.finish(e);
    let scenario = Scenario {
        name: env.name,
        description: env.description,
        seed: env.seed,
        until: env.until,
        latency_ms: env.latency_ms,
        brokers,
        topics,
        producers,
        groups,
        timeline,
        memory_budget_mb,
    };
    Some((scenario, Paths { timeline: paths, group_overrides }))
}

fn read_broker(v: &Value, path: &str, e: &mut Errors) -> Option<BrokerSpec> {
    let mut o = Obj::new(v, path, e)?;
    let name = o.req_str("name", e).map(str::to_string);
    o.finish(e);
    Some(BrokerSpec { name: non_empty(name?, &format!("{path}.name"), e)? })
}

/// The largest offset a snapshot may give (Kafka offsets are signed 64-bit).
const MAX_OFFSET: u64 = i64::MAX as u64;

/// A snapshot's offsets, one per partition.
fn offset_list(o: &mut Obj, key: &'static str, partitions: Option<u64>, e: &mut Errors) -> Vec<u64> {
    let given = o.get(key).is_some();
    let list: Vec<u64> = o.array(key, e).into_iter().filter_map(|(p, v)| as_u64_in(v, &p, 0, MAX_OFFSET, e)).collect();
    if let Some(n) = partitions.filter(|n| given && list.len() as u64 != *n) {
        e.push(&o.child_path(key), format!("expected one offset per partition ({n}), found {}", list.len()));
    }
    list
}

/// `snapshot`: the log offsets may be given (scenario topics only, not `createTopic`).
fn read_topic(v: &Value, path: &str, e: &mut Errors, snapshot: bool) -> Option<TopicSpec> {
    let mut o = Obj::new(v, path, e)?;
    let name = o.req_str("name", e).map(str::to_string);
    let partitions = o.req_u64_in("partitions", 1, MAX_PARTITIONS, e);
    let leaders = mqviz_engine::scenario::string_list(&mut o, "leaders", e);
    let (log_end_offsets, log_start_offsets) = if snapshot {
        (offset_list(&mut o, "logEndOffsets", partitions, e), offset_list(&mut o, "logStartOffsets", partitions, e))
    } else {
        (Vec::new(), Vec::new())
    };
    if log_end_offsets.len() == log_start_offsets.len() {
        for (p, (start, end)) in log_start_offsets.iter().zip(&log_end_offsets).enumerate() {
            if start > end {
                e.push(
                    &format!("{path}.logStartOffsets[{p}]"),
                    format!("the log of partition {p} starts at {start}, after its end {end}"),
                );
            }
        }
    }
    o.finish(e);
    let name = non_empty(name?, &format!("{path}.name"), e)?;
    if name.len() > 249 || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-') {
        e.push(&format!("{path}.name"), "a topic name is 1 to 249 characters of ASCII letters, digits, '.', '_' and '-'");
    }
    Some(TopicSpec { name, partitions: partitions? as u32, leaders, log_end_offsets, log_start_offsets })
}

fn read_producer(v: &Value, path: &str, e: &mut Errors) -> Option<ProducerSpec> {
    let mut o = Obj::new(v, path, e)?;
    let id = o.req_str("id", e).map(str::to_string);
    let partitioner = match o.str("partitioner", e) {
        None | Some("builtin") => PartitionerSpec::BuiltIn,
        Some("roundRobin") => PartitionerSpec::RoundRobin,
        Some(other) => {
            e.push(&o.child_path("partitioner"), format!("expected builtin or roundRobin, found {other:?}"));
            PartitionerSpec::BuiltIn
        }
    };
    let batch_size = o.u64_in("batchSize", 1, MAX_BATCH_SIZE, e).unwrap_or(16_384) as u32;
    let ignore_keys = o.bool("ignoreKeys", e).unwrap_or(false);
    let latency_ms = o.u64_in("latencyMs", 0, MAX_LATENCY, e);
    let sends =
        bounded(o.array("sends", e), &format!("{path}.sends"), e).into_iter().filter_map(|(p, v)| read_send(v, &p, e)).collect();
    o.finish(e);
    Some(ProducerSpec { id: non_empty(id?, &format!("{path}.id"), e)?, partitioner, batch_size, ignore_keys, latency_ms, sends })
}

fn read_send(v: &Value, path: &str, e: &mut Errors) -> Option<SendSpec> {
    let mut o = Obj::new(v, path, e)?;
    let at = o.u64_in("at", 0, MAX_TIME, e).unwrap_or(0);
    let topic = o.req_str("topic", e).map(str::to_string);
    let key = o.str("key", e).map(str::to_string);
    let value = o.str("value", e).unwrap_or("value {i}").to_string();
    let partition = o.u64_in("partition", 0, MAX_PARTITIONS - 1, e).map(|p| p as u32);
    let count = o.u64_in("count", 0, MAX_MESSAGES_PER_SEND, e).unwrap_or(1);
    let interval_ms = o.u64_in("intervalMs", 0, MAX_TIME, e).unwrap_or(0);
    let mut times = Vec::new();
    for (p, v) in o.array("times", e) {
        if let Some(t) = as_u64_in(v, &p, 0, MAX_TIME, e) {
            if times.last().is_some_and(|last| t < *last) {
                e.push(&p, "send times must not decrease");
            }
            times.push(t);
        }
    }
    if times.len() as u64 > MAX_MESSAGES_PER_SEND {
        e.push(path, "too many send times");
    }
    let (at, count) = match times.first() {
        Some(first) => (*first, times.len() as u64),
        None => (at, count),
    };
    o.finish(e);
    Some(SendSpec { at, topic: topic?, key, value, partition, count: count as u32, interval_ms, times })
}

fn read_group(
    v: &Value,
    path: &str,
    e: &mut Errors,
    timeline: &mut Vec<(TimedAction, String)>,
) -> Option<(GroupSpec, ConfigOverrides)> {
    let mut o = Obj::new(v, path, e)?;
    let name = o.req_str("name", e).map(str::to_string);
    let protocol = match o.str("protocol", e) {
        None => GroupProtocol::Classic,
        Some(p) => GroupProtocol::from_name(p).unwrap_or_else(|| {
            e.push(&o.child_path("protocol"), format!("expected classic or consumer, found {p:?}"));
            GroupProtocol::Classic
        }),
    };
    let initial_rebalance_delay_ms = o.u64_in("initialRebalanceDelayMs", 0, MAX_TIME, e).unwrap_or(3_000);
    let overrides = read_overrides(&mut o, e);
    let mut config = ConsumerConfig::default();
    if protocol == GroupProtocol::Consumer {
        // The coordinator's group.consumer.heartbeat.interval.ms.
        config.heartbeat_interval_ms = 5_000;
    }
    let config = config.with(&overrides);
    let mut members = Vec::new();
    let consumers: Vec<ConsumerSpec> = bounded(o.array("consumers", e), &format!("{path}.consumers"), e)
        .into_iter()
        .filter_map(|(p, v)| {
            let (c, member) = read_consumer(v, &p, e, Some(timeline))?;
            members.extend(member.map(|m| (c.name.clone(), m)));
            Some(c)
        })
        .collect();
    let mut snapshot = read_group_snapshot(&mut o, e);
    snapshot.members = members;
    // Snapshot members are running at t=0: the world restores them rather than starting them.
    let members: BTreeSet<&str> = snapshot.members.iter().map(|(name, _)| name.as_str()).collect();
    timeline.retain(|(a, _)| {
        !(a.at == 0 && matches!(&a.action, Action::StartConsumer { consumer } if members.contains(consumer.as_str())))
    });
    o.finish(e);
    let name = non_empty(name?, &format!("{path}.name"), e)?;
    Some((GroupSpec { name, protocol, initial_rebalance_delay_ms, config, consumers, snapshot }, overrides))
}

fn read_group_snapshot(o: &mut Obj, e: &mut Errors) -> GroupSnapshot {
    let generation = o.u64_in("generation", 1, i32::MAX as u64, e).map(|g| g as i32);
    let leader = o.str("leader", e).map(str::to_string);
    let mut committed = BTreeMap::new();
    if let Some(v) = o.get("committed") {
        let path = o.child_path("committed");
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    let p = format!("{path}[{k:?}]");
                    let Some(r) = parse_partition_ref(k) else {
                        e.push(&p, format!("expected \"<topic>-<partition>\" as the key, found {k:?}"));
                        continue;
                    };
                    if let Some(off) = as_u64_in(v, &p, 0, MAX_OFFSET, e) {
                        committed.insert(r, off);
                    }
                }
            }
            other => e.push(&path, format!("expected an object of \"<topic>-<partition>\": offset, found {}", type_name(other))),
        }
    }
    GroupSnapshot { committed, generation, leader, members: Vec::new() }
}

fn read_subscription(o: &mut Obj, path: &str, e: &mut Errors) -> Option<SubscriptionSpec> {
    let topics = o.get("subscribe").is_some().then(|| mqviz_engine::scenario::string_list(o, "subscribe", e));
    let pattern = o.str("subscribePattern", e).map(str::to_string);
    let assign = o.get("assign").is_some().then(|| partition_list(o, "assign", e));
    let given = [topics.is_some(), pattern.is_some(), assign.is_some()].iter().filter(|x| **x).count();
    if given > 1 {
        e.push(
            path,
            "subscribe, subscribePattern and assign are mutually exclusive (IllegalStateException: Subscription to topics, partitions and pattern are mutually exclusive)",
        );
        return None;
    }
    if let Some(p) = &pattern {
        if let Err(m) = TopicPattern::compile(p) {
            e.push(&o.child_path("subscribePattern"), m);
        }
    }
    match (topics, pattern, assign) {
        (Some(t), _, _) => {
            if t.is_empty() {
                e.push(&o.child_path("subscribe"), "subscribe needs at least one topic (an empty list is unsubscribe())");
            }
            Some(SubscriptionSpec::Topics(t))
        }
        (_, Some(p), _) => Some(SubscriptionSpec::Pattern(p)),
        (_, _, Some(a)) => Some(SubscriptionSpec::Assign(a)),
        _ => None,
    }
}

fn read_consumer(
    v: &Value,
    path: &str,
    e: &mut Errors,
    lifecycle: Option<&mut Vec<(TimedAction, String)>>,
) -> Option<(ConsumerSpec, Option<MemberSnapshot>)> {
    let mut o = Obj::new(v, path, e)?;
    let client_id = o.req_str("clientId", e).map(str::to_string);
    let name = o.str("name", e).map(str::to_string);
    let instance_id = o.str("groupInstanceId", e).map(str::to_string);
    if instance_id.as_deref().is_some_and(|i| i.trim().is_empty()) {
        e.push(&o.child_path("groupInstanceId"), "must not be empty");
    }
    let subscription = read_subscription(&mut o, path, e);
    let overrides = read_overrides(&mut o, e);
    let start_at = match o.get("startAt") {
        Some(Value::String(s)) if s == "never" => None,
        Some(v) => {
            let p = o.child_path("startAt");
            as_u64_in(v, &p, 0, MAX_TIME, e)
        }
        None => Some(0),
    };
    let stop_at = o.u64_in("stopAt", 0, MAX_TIME, e);
    let crash_at = o.u64_in("crashAt", 0, MAX_TIME, e);
    let restart_at = o.u64_in("restartAt", 0, MAX_TIME, e);
    let latency_ms = o.u64_in("latencyMs", 0, MAX_LATENCY, e);
    let member_id = o.str("memberId", e).map(str::to_string);
    let member_epoch = o.u64_in("memberEpoch", 1, i32::MAX as u64, e).map(|x| x as i32);
    let target = o.get("target").is_some().then(|| partition_list(&mut o, "target", e));
    let snapshot = match o.get("assigned") {
        Some(_) => Some(MemberSnapshot { member_id, assigned: partition_list(&mut o, "assigned", e), member_epoch, target }),
        None => {
            for (field, given) in
                [("memberId", member_id.is_some()), ("memberEpoch", member_epoch.is_some()), ("target", target.is_some())]
            {
                if given {
                    e.push(
                        &o.child_path(field),
                        format!("a {field} belongs to a snapshot member: give its \"assigned\" partitions too"),
                    );
                }
            }
            None
        }
    };
    if snapshot.is_some() {
        if lifecycle.is_none() {
            e.push(&o.child_path("assigned"), "a consumer added by the timeline joins the group; it has no snapshot");
        } else if start_at != Some(0) {
            e.push(&o.child_path("assigned"), "a snapshot member runs from t=0: remove its startAt");
        }
    }
    o.finish(e);
    let client_id = non_empty(client_id?, &format!("{path}.clientId"), e)?;
    let name = match name {
        Some(n) => non_empty(n, &format!("{path}.name"), e)?,
        None => client_id.clone(),
    };
    if let Some(timeline) = lifecycle {
        let id = || name.clone();
        let mut add = |at: Option<u64>, action: Action, field: &str| {
            if let Some(at) = at {
                timeline.push((TimedAction { at, action }, format!("{path}.{field}")));
            }
        };
        add(start_at, Action::StartConsumer { consumer: id() }, "startAt");
        add(stop_at, Action::StopConsumer { consumer: id() }, "stopAt");
        add(crash_at, Action::CrashConsumer { consumer: id() }, "crashAt");
        add(restart_at, Action::StartConsumer { consumer: id() }, "restartAt");
    } else if stop_at.is_some() || crash_at.is_some() || restart_at.is_some() {
        e.push(path, "lifecycle times are not allowed here; add timeline actions instead");
    }
    Some((ConsumerSpec { name, client_id, instance_id, subscription, overrides, start_at, latency_ms }, snapshot))
}

fn read_seek_target(v: &Value, path: &str, e: &mut Errors) -> Option<SeekTarget> {
    match v {
        Value::String(s) if s == "beginning" => Some(SeekTarget::Beginning),
        Value::String(s) if s == "end" => Some(SeekTarget::End),
        Value::Number(_) => as_u64_in(v, path, 0, i64::MAX as u64, e).map(SeekTarget::Offset),
        other => {
            e.push(path, format!("expected an offset, \"beginning\" or \"end\", found {}", type_name(other)));
            None
        }
    }
}

fn read_timed_action(v: &Value, path: &str, e: &mut Errors) -> Option<TimedAction> {
    let mut o = Obj::new(v, path, e)?;
    let at = o.req_u64_in("at", 0, MAX_TIME, e);
    let kind = o.req_str("action", e);
    let client = |o: &mut Obj, e: &mut Errors| consumer_reference(o, path, e);
    let group = |o: &mut Obj, e: &mut Errors| o.req_str("group", e).map(str::to_string);
    let partition = |o: &mut Obj, e: &mut Errors| {
        let p = o.child_path("partition");
        o.required("partition", e).and_then(|v| read_partition_ref(v, &p, e))
    };
    let leader = |o: &mut Obj, e: &mut Errors| o.str("leader", e).map(str::to_string);
    let action = match kind? {
        "startConsumer" => client(&mut o, e).map(|consumer| Action::StartConsumer { consumer }),
        "stopConsumer" => client(&mut o, e).map(|consumer| Action::StopConsumer { consumer }),
        "crashConsumer" => client(&mut o, e).map(|consumer| Action::CrashConsumer { consumer }),
        "unsubscribe" => client(&mut o, e).map(|consumer| Action::Unsubscribe { consumer }),
        "addConsumer" => {
            let group = group(&mut o, e);
            let consumer =
                o.required("consumer", e).and_then(|cv| read_consumer(cv, &format!("{path}.consumer"), e, None)).map(|(c, _)| c);
            Some(Action::AddConsumer { group: group?, consumer: consumer? })
        }
        "subscribe" => {
            let consumer = client(&mut o, e);
            o.required("topics", e);
            let topics = mqviz_engine::scenario::string_list(&mut o, "topics", e);
            if topics.is_empty() {
                e.push(&format!("{path}.topics"), "subscribe needs at least one topic (use unsubscribe)");
            }
            Some(Action::Subscribe { consumer: consumer?, subscription: SubscriptionSpec::Topics(topics) })
        }
        "subscribePattern" => {
            let consumer = client(&mut o, e);
            let pattern = o.req_str("pattern", e).map(str::to_string);
            if let Some(Err(m)) = pattern.as_deref().map(TopicPattern::compile) {
                e.push(&format!("{path}.pattern"), m);
            }
            Some(Action::Subscribe { consumer: consumer?, subscription: SubscriptionSpec::Pattern(pattern?) })
        }
        "assign" => {
            let consumer = client(&mut o, e);
            o.required("partitions", e);
            let partitions = partition_list(&mut o, "partitions", e);
            Some(Action::Subscribe { consumer: consumer?, subscription: SubscriptionSpec::Assign(partitions) })
        }
        "setAssignors" => {
            let group = group(&mut o, e);
            o.required("assignors", e);
            let assignors = read_assignors(&mut o, e);
            Some(Action::SetAssignors { group: group?, assignors: assignors? })
        }
        "setRemoteAssignor" => {
            let group = group(&mut o, e);
            let name = o.req_str("assignor", e);
            let assignor = name.and_then(|n| {
                let a = crate::server_assignor::ServerAssignor::from_name(n);
                if a.is_none() {
                    e.push(&format!("{path}.assignor"), format!("unknown server assignor {n:?} (expected uniform or range)"));
                }
                a
            });
            Some(Action::SetRemoteAssignor { group: group?, assignor: assignor? })
        }
        "setProtocol" => {
            let group = group(&mut o, e);
            let name = o.req_str("protocol", e);
            let protocol = name.and_then(|n| {
                let p = GroupProtocol::from_name(n);
                if p.is_none() {
                    e.push(&format!("{path}.protocol"), format!("expected classic or consumer, found {n:?}"));
                }
                p
            });
            Some(Action::SetProtocol { group: group?, protocol: protocol? })
        }
        "pause" | "resume" => {
            let consumer = client(&mut o, e);
            o.required("partitions", e);
            let partitions = partition_list(&mut o, "partitions", e);
            let consumer = consumer?;
            Some(if kind == Some("pause") {
                Action::Pause { consumer, partitions }
            } else {
                Action::Resume { consumer, partitions }
            })
        }
        "seek" => {
            let consumer = client(&mut o, e);
            let partition = partition(&mut o, e);
            let to = o.required("to", e).and_then(|v| read_seek_target(v, &format!("{path}.to"), e));
            Some(Action::Seek { consumer: consumer?, partition: partition?, to: to? })
        }
        "produce" => {
            let producer = o.req_str("producer", e).map(str::to_string);
            let send = o.required("send", e).and_then(|sv| read_send(sv, &format!("{path}.send"), e));
            match (at, producer, send) {
                (Some(at), Some(producer), Some(mut send)) => {
                    if send.times.is_empty() {
                        send.at = at;
                    }
                    Some(Action::Produce { producer, send })
                }
                _ => None,
            }
        }
        "leaderChange" => {
            let partition = partition(&mut o, e);
            let leader = leader(&mut o, e);
            Some(Action::LeaderChange { partition: partition?, leader })
        }
        "truncate" => {
            let partition = partition(&mut o, e);
            let offset = o.req_u64_in("offset", 0, i64::MAX as u64, e);
            let leader = leader(&mut o, e);
            Some(Action::Truncate { partition: partition?, offset: offset?, leader })
        }
        "addPartitions" => {
            let topic = o.req_str("topic", e).map(str::to_string);
            let partitions = o.req_u64_in("partitions", 1, MAX_PARTITIONS, e);
            Some(Action::AddPartitions { topic: topic?, partitions: partitions? as u32 })
        }
        "createTopic" => {
            let topic = o.required("topic", e).and_then(|tv| read_topic(tv, &format!("{path}.topic"), e, false));
            Some(Action::CreateTopic { topic: topic? })
        }
        other => {
            e.push(&format!("{path}.action"), format!("unknown action {other:?} (expected {ACTION_NAMES})"));
            None
        }
    };
    o.finish(e);
    Some(TimedAction { at: at?, action: action? })
}

/// Topic name -> partition count, as known at the start, grown by the timeline's
/// `createTopic` and `addPartitions` (partition references are checked against the largest count).
fn topic_counts(s: &Scenario) -> BTreeMap<&str, u32> {
    let mut counts: BTreeMap<&str, u32> = s.topics.iter().map(|t| (t.name.as_str(), t.partitions)).collect_map();
    for a in &s.timeline {
        match &a.action {
            Action::CreateTopic { topic } => {
                counts.entry(&topic.name).or_insert(topic.partitions);
            }
            Action::AddPartitions { topic, partitions } => {
                if let Some(c) = counts.get_mut(topic.as_str()) {
                    *c = (*c).max(*partitions);
                }
            }
            _ => {}
        }
    }
    counts
}

fn check_partition(counts: &BTreeMap<&str, u32>, r: &PartitionRef, path: &str, e: &mut Errors) {
    match counts.get(r.topic.as_str()) {
        None => e.push(path, format!("unknown topic {:?}", r.topic)),
        Some(n) if r.partition >= *n => e.push(path, crate::scenario::beyond_the_topic(r, &r.topic, *n)),
        _ => {}
    }
}

fn check_subscription(counts: &BTreeMap<&str, u32>, sub: &SubscriptionSpec, path: &str, e: &mut Errors) {
    match sub {
        SubscriptionSpec::Topics(topics) => {
            for (i, t) in topics.iter().enumerate() {
                if !counts.contains_key(t.as_str()) {
                    e.push(&format!("{path}.subscribe[{i}]"), format!("unknown topic {t:?}"));
                }
            }
        }
        SubscriptionSpec::Pattern(_) => {}
        SubscriptionSpec::Assign(parts) => {
            for (i, r) in parts.iter().enumerate() {
                check_partition(counts, r, &format!("{path}.assign[{i}]"), e);
            }
        }
    }
}

/// Settings a consumer may not give under `group.protocol=consumer`, and the timing rule every
/// classic member must satisfy.
fn check_config(
    protocol: GroupProtocol,
    config: &ConsumerConfig,
    own: &ConfigOverrides,
    group_own: Option<&ConfigOverrides>,
    path: &str,
    group_path: &str,
    e: &mut Errors,
) {
    if protocol == GroupProtocol::Consumer {
        for (set, key) in [
            (own.assignors.is_some(), "assignors"),
            (group_own.is_some() && own.session_timeout_ms.is_some(), "sessionTimeoutMs"),
            (group_own.is_some() && own.heartbeat_interval_ms.is_some(), "heartbeatIntervalMs"),
        ] {
            if set {
                e.push(
                    &format!("{path}.{key}"),
                    format!("{key} is a classic-protocol setting; under group.protocol=consumer the coordinator decides it (set remoteAssignor, or the group's sessionTimeoutMs and heartbeatIntervalMs)"),
                );
            }
        }
    } else if own.remote_assignor.is_some() {
        e.push(
            &format!("{path}.remoteAssignor"),
            "remoteAssignor is used only with protocol \"consumer\"; classic groups use assignors",
        );
    }
    if config.heartbeat_interval_ms >= config.session_timeout_ms {
        let at = if own.heartbeat_interval_ms.is_some() || own.session_timeout_ms.is_some() || group_own.is_none() {
            path
        } else {
            group_path
        };
        e.push(
            &format!("{at}.heartbeatIntervalMs"),
            format!(
                "heartbeat interval ({} ms) must be below the session timeout ({} ms)",
                config.heartbeat_interval_ms, config.session_timeout_ms
            ),
        );
    }
}

/// A snapshot that cannot be consistent is refused: committed past the log end, a partition
/// with two owners, or an owner that does not subscribe to it.
fn check_group_snapshot(s: &Scenario, g: &GroupSpec, counts: &BTreeMap<&str, u32>, gp: &str, e: &mut Errors) {
    let ends: BTreeMap<&str, &TopicSpec> = s.topics.iter().map(|t| (t.name.as_str(), t)).collect_map();
    for (r, off) in &g.snapshot.committed {
        let p = format!("{gp}.committed[\"{r}\"]");
        check_partition(counts, r, &p, e);
        let end = ends.get(r.topic.as_str()).map_or(0, |t| t.log_end_offsets.get(r.partition as usize).copied().unwrap_or(0));
        if counts.get(r.topic.as_str()).is_some_and(|n| r.partition < *n) && *off > end {
            e.push(&p, format!("committed offset {off} of {r} is past the log end {end} (give the topic's logEndOffsets)"));
        }
    }
    let members: Vec<(usize, &ConsumerSpec, &MemberSnapshot)> = g
        .snapshot
        .members
        .iter()
        .filter_map(|(name, m)| g.consumers.iter().enumerate().find(|(_, c)| &c.name == name).map(|(j, c)| (j, c, m)))
        .collect();
    if members.is_empty() {
        if g.snapshot.generation.is_some() {
            e.push(
                &format!("{gp}.generation"),
                "a generation needs the members that hold it: give consumers their \"assigned\" partitions",
            );
        }
        if g.snapshot.leader.is_some() {
            e.push(
                &format!("{gp}.leader"),
                "a leader needs the members of the snapshot: give consumers their \"assigned\" partitions",
            );
        }
        return;
    }
    let lists: Vec<Vec<String>> = members
        .iter()
        .map(|(_, c, _)| g.config.with(&c.overrides).assignors.iter().map(|a| a.name().to_string()).collect())
        .collect();
    let classic = g.protocol == GroupProtocol::Classic;
    if let (true, Err(why)) = (classic, crate::classic_group::select_protocol(&lists)) {
        e.push(&format!("{gp}.consumers"), format!("the snapshot's members cannot form one generation: {why}"));
    }
    if let Some(leader) = &g.snapshot.leader {
        if !members.iter().any(|(_, c, _)| &c.name == leader) {
            e.push(&format!("{gp}.leader"), format!("{leader:?} is not a member of the snapshot (a consumer with \"assigned\")"));
        }
    }
    let mut owners: BTreeMap<&PartitionRef, &str> = BTreeMap::new();
    let mut targets: BTreeMap<&PartitionRef, &str> = BTreeMap::new();
    let mut member_ids: BTreeSet<&str> = BTreeSet::new();
    let group_epoch = g.snapshot.generation.unwrap_or(1);
    for &(j, c, m) in &members {
        let cp = format!("{gp}.consumers[{j}]");
        if classic && (m.member_epoch.is_some() || m.target.is_some()) {
            let field = if m.member_epoch.is_some() { "memberEpoch" } else { "target" };
            e.push(
                &format!("{cp}.{field}"),
                "a member's own epoch and target belong to a consumer-protocol (KIP-848) group: a classic generation has one epoch",
            );
        }
        if let Some(me) = m.member_epoch.filter(|me| *me > group_epoch) {
            e.push(
                &format!("{cp}.memberEpoch"),
                format!("member epoch {me} is past the group epoch {group_epoch} (\"generation\")"),
            );
        }
        for (k, r) in m.target.iter().flatten().enumerate() {
            let p = format!("{cp}.target[{k}]");
            check_partition(counts, r, &p, e);
            if let Some(first) = targets.insert(r, &c.name) {
                e.push(
                    &p,
                    format!("{r} is in the targets of {first:?} and of {:?}: the target assignment gives it to one", c.name),
                );
            } else if matches!(&c.subscription, Some(SubscriptionSpec::Topics(t)) if !t.contains(&r.topic)) {
                e.push(&p, format!("{:?}'s target has {r}, but it does not subscribe to {:?}", c.name, r.topic));
            }
        }
    }
    for (j, c, m) in members {
        let cp = format!("{gp}.consumers[{j}]");
        if let Some(id) = &m.member_id {
            if id.trim().is_empty() {
                e.push(&format!("{cp}.memberId"), "must not be empty");
            } else if !member_ids.insert(id) {
                e.push(&format!("{cp}.memberId"), format!("duplicate member id {id:?} in group {:?}", g.name));
            }
        }
        for (k, r) in m.assigned.iter().enumerate() {
            let p = format!("{cp}.assigned[{k}]");
            check_partition(counts, r, &p, e);
            if let Some(first) = owners.insert(r, &c.name) {
                e.push(
                    &p,
                    format!("{r} is assigned to {first:?} and to {:?}: a partition has one owner in a generation", c.name),
                );
                continue;
            }
            let subscribed = match &c.subscription {
                Some(SubscriptionSpec::Topics(t)) => t.contains(&r.topic),
                Some(SubscriptionSpec::Assign(_) | SubscriptionSpec::Pattern(_)) | None => {
                    e.push(
                        &p,
                        format!(
                            "{:?}: a snapshot member subscribes to topics (\"subscribe\"); a pattern or assign() is not restored",
                            c.name
                        ),
                    );
                    break;
                }
            };
            if !subscribed {
                e.push(&p, format!("{:?} owns {r} but does not subscribe to {:?}", c.name, r.topic));
            }
        }
    }
}

/// Cross-references: names are unique and everything referenced exists.
fn check_references(s: &Scenario, paths: &Paths, e: &mut Errors) {
    if s.brokers.is_empty() {
        e.push("$.brokers", "at least one broker is required");
    }
    if s.brokers.len() > MAX_BROKERS {
        e.push("$.brokers", format!("{} brokers is more than the {MAX_BROKERS} the simulator accepts", s.brokers.len()));
    }
    let mut brokers = BTreeSet::new();
    for (i, b) in s.brokers.iter().enumerate() {
        if !brokers.insert(b.name.as_str()) {
            e.push(&format!("$.brokers[{i}].name"), format!("duplicate broker {:?}", b.name));
        }
    }
    let check_topic = |t: &TopicSpec, path: &str, e: &mut Errors| {
        if !t.leaders.is_empty() && t.leaders.len() != t.partitions as usize {
            e.push(&format!("{path}.leaders"), format!("{} leaders for {} partitions", t.leaders.len(), t.partitions));
        }
        for (j, b) in t.leaders.iter().enumerate() {
            if !brokers.contains(b.as_str()) {
                e.push(&format!("{path}.leaders[{j}]"), format!("unknown broker {b:?}"));
            }
        }
    };
    let mut topics = BTreeSet::new();
    for (i, t) in s.topics.iter().enumerate() {
        if !topics.insert(t.name.as_str()) {
            e.push(&format!("$.topics[{i}].name"), format!("duplicate topic {:?}", t.name));
        }
        check_topic(t, &format!("$.topics[{i}]"), e);
    }
    let counts = topic_counts(s);
    let total_partitions: u64 = counts.values().map(|n| *n as u64).sum();
    if total_partitions > MAX_TOTAL_PARTITIONS {
        e.push(
            "$.topics",
            format!("{total_partitions} partitions in all is more than the {MAX_TOTAL_PARTITIONS} the simulator accepts"),
        );
    }
    let mut total_messages: u64 = 0;
    let mut producers = BTreeSet::new();
    for (i, p) in s.producers.iter().enumerate() {
        if !producers.insert(p.id.as_str()) {
            e.push(&format!("$.producers[{i}].id"), format!("duplicate producer {:?}", p.id));
        }
        for (j, send) in p.sends.iter().enumerate() {
            total_messages += send.count as u64;
            let sp = format!("$.producers[{i}].sends[{j}]");
            match (counts.get(send.topic.as_str()), send.partition) {
                (None, _) => e.push(&format!("{sp}.topic"), format!("unknown topic {:?}", send.topic)),
                (Some(n), Some(p)) if p >= *n => {
                    e.push(&format!("{sp}.partition"), crate::scenario::beyond_the_topic(p, &send.topic, *n))
                }
                _ => {}
            }
        }
    }
    for a in &s.timeline {
        if let Action::Produce { send, .. } = &a.action {
            total_messages += send.count as u64;
        }
    }
    let in_snapshot = s.snapshot_records();
    total_messages += in_snapshot;
    if total_messages > MAX_MESSAGES_TOTAL {
        e.push(
            if in_snapshot > 0 { "$.topics" } else { "$.producers" },
            format!("{total_messages} messages in total is more than the {MAX_MESSAGES_TOTAL} the simulator accepts"),
        );
    }
    let mut names = BTreeSet::new();
    let mut groups: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, g) in s.groups.iter().enumerate() {
        let gp = format!("$.groups[{i}]");
        if groups.insert(g.name.as_str(), i).is_some() {
            e.push(&format!("{gp}.name"), format!("duplicate group {:?}", g.name));
        }
        let group_own = &paths.group_overrides[i];
        check_config(g.protocol, &g.config, group_own, None, &gp, &gp, e);
        let mut instances = BTreeSet::new();
        for (j, c) in g.consumers.iter().enumerate() {
            let cp = format!("{gp}.consumers[{j}]");
            if !names.insert(c.name.clone()) {
                e.push(&format!("{cp}.name"), duplicate_consumer_name(&c.name));
            }
            if let Some(inst) = &c.instance_id {
                if !instances.insert(inst.as_str()) {
                    e.push(
                        &format!("{cp}.groupInstanceId"),
                        format!("duplicate group.instance.id {inst:?} in group {:?}", g.name),
                    );
                }
            }
            if let Some(sub) = &c.subscription {
                check_subscription(&counts, sub, &cp, e);
            }
            check_config(g.protocol, &g.config.with(&c.overrides), &c.overrides, Some(group_own), &cp, &gp, e);
        }
        check_group_snapshot(s, g, &counts, &gp, e);
    }
    for (a, p) in s.timeline.iter().zip(&paths.timeline) {
        let name = a.action.name();
        if let Some(consumer) = a.action.consumer_name() {
            if !names.contains(consumer) && !matches!(a.action, Action::AddConsumer { .. }) {
                e.push(p, format!("{name}: unknown consumer {consumer:?}"));
            }
        }
        match &a.action {
            Action::AddConsumer { group, consumer } => match groups.get(group.as_str()) {
                None => e.push(p, format!("addConsumer: unknown group {group:?}")),
                Some(&gi) => {
                    if !names.insert(consumer.name.clone()) {
                        e.push(p, format!("addConsumer: {}", duplicate_consumer_name(&consumer.name)));
                    }
                    if let Some(sub) = &consumer.subscription {
                        check_subscription(&counts, sub, &format!("{p}.consumer"), e);
                    }
                    let g = &s.groups[gi];
                    let own = &paths.group_overrides[gi];
                    check_config(
                        g.protocol,
                        &g.config.with(&consumer.overrides),
                        &consumer.overrides,
                        Some(own),
                        &format!("{p}.consumer"),
                        p,
                        e,
                    );
                }
            },
            Action::Subscribe { subscription, .. } => {
                let sp = p.clone();
                match subscription {
                    SubscriptionSpec::Topics(topics) => {
                        for (i, t) in topics.iter().enumerate() {
                            if !counts.contains_key(t.as_str()) {
                                e.push(&format!("{sp}.topics[{i}]"), format!("unknown topic {t:?}"));
                            }
                        }
                    }
                    SubscriptionSpec::Assign(parts) => {
                        for (i, r) in parts.iter().enumerate() {
                            check_partition(&counts, r, &format!("{sp}.partitions[{i}]"), e);
                        }
                    }
                    SubscriptionSpec::Pattern(_) => {}
                }
            }
            Action::SetAssignors { group, .. } | Action::SetRemoteAssignor { group, .. } | Action::SetProtocol { group, .. } => {
                let want = match &a.action {
                    Action::SetAssignors { .. } => Some(GroupProtocol::Classic),
                    Action::SetRemoteAssignor { .. } => Some(GroupProtocol::Consumer),
                    _ => None,
                };
                match groups.get(group.as_str()) {
                    None => e.push(p, format!("{name}: unknown group {group:?}")),
                    Some(&gi) => {
                        if let Some(w) = want {
                            let changes_protocol = s
                                .timeline
                                .iter()
                                .any(|x| matches!(&x.action, Action::SetProtocol { group: g2, .. } if g2 == group));
                            if s.groups[gi].protocol != w && !changes_protocol {
                                e.push(p, format!("{name}: group {group:?} uses protocol {:?}", s.groups[gi].protocol.name()));
                            }
                        }
                    }
                }
            }
            Action::Pause { partitions, .. } | Action::Resume { partitions, .. } => {
                for (i, r) in partitions.iter().enumerate() {
                    check_partition(&counts, r, &format!("{p}.partitions[{i}]"), e);
                }
            }
            Action::Seek { partition, .. } => check_partition(&counts, partition, &format!("{p}.partition"), e),
            Action::Produce { producer, send } => {
                if !producers.contains(producer.as_str()) {
                    e.push(p, format!("produce: unknown producer {producer:?}"));
                }
                match (counts.get(send.topic.as_str()), send.partition) {
                    (None, _) => e.push(&format!("{p}.send.topic"), format!("unknown topic {:?}", send.topic)),
                    (Some(n), Some(x)) if x >= *n => {
                        e.push(&format!("{p}.send.partition"), crate::scenario::beyond_the_topic(x, &send.topic, *n))
                    }
                    _ => {}
                }
            }
            Action::LeaderChange { partition, leader } | Action::Truncate { partition, leader, .. } => {
                check_partition(&counts, partition, &format!("{p}.partition"), e);
                if let Some(l) = leader {
                    if !brokers.contains(l.as_str()) {
                        e.push(&format!("{p}.leader"), format!("unknown broker {l:?}"));
                    }
                }
            }
            Action::AddPartitions { topic, partitions } => match s.topics.iter().find(|t| &t.name == topic) {
                None if !counts.contains_key(topic.as_str()) => e.push(&format!("{p}.topic"), format!("unknown topic {topic:?}")),
                Some(t) if *partitions <= t.partitions => e.push(
                    &format!("{p}.partitions"),
                    format!("{topic} already has {} partitions; partition counts only grow", t.partitions),
                ),
                _ => {}
            },
            Action::CreateTopic { topic } => {
                if s.topics.iter().any(|t| t.name == topic.name) {
                    e.push(&format!("{p}.topic.name"), format!("topic {:?} already exists", topic.name));
                }
                check_topic(topic, &format!("{p}.topic"), e);
            }
            Action::StartConsumer { .. }
            | Action::StopConsumer { .. }
            | Action::CrashConsumer { .. }
            | Action::Unsubscribe { .. } => {}
        }
    }
}

/// The setting rules for a consumer added to `group` during a run (`addConsumer`): classic-only
/// settings under the consumer protocol, and the heartbeat interval below the session timeout.
pub fn check_consumer_config(group: &GroupSpec, consumer: &ConsumerSpec, path: &str) -> Vec<PathError> {
    let mut e = Errors::default();
    let config = group.config.with(&consumer.overrides);
    check_config(group.protocol, &config, &consumer.overrides, Some(&ConfigOverrides::default()), path, path, &mut e);
    e.list
}
