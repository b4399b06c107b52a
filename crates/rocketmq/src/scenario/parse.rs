//! Reading and validating the RocketMQ section of a scenario. Every error names its JSON path;
//! nothing panics.

use mqviz_engine::sort::StableSort;
use mqviz_engine::vec_map::{VecMap, VecSet};

use serde_json::Value;

use super::*;
use crate::filter_manager::IndexDesign;
use crate::sql92::Sql92Version;
use crate::types::MessageQueue;
use mqviz_engine::json_path::{as_str, parse_json, type_name, Errors, Obj, PathError};
use mqviz_engine::scenario::{
    bounded, consumer_reference, duplicate_consumer_name, non_empty, read_envelope, string_list, MAX_LATENCY,
    MAX_MESSAGES_PER_SEND, MAX_MESSAGES_TOTAL, MAX_TIME,
};

pub const MAX_QUEUES: u64 = 65_536;

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

/// Reads one timeline entry (`{"at", "action", ...}`) entered during a run. `path` names it in
/// errors. References to consumers, topics and groups are checked by the World that runs it.
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

/// 1 TB: a budget is a ceiling, so any size a machine could hold is accepted.
use mqviz_engine::budget::MAX_MEMORY_BUDGET_MB;

/// The scenario and, aligned with its sorted timeline, the JSON path each entry came from.
fn read_scenario(v: &Value, e: &mut Errors) -> Option<(Scenario, Vec<String>)> {
    let (env, mut o) = read_envelope(v, e)?;
    if env.broker != "rocketmq" {
        e.push("$.broker", format!("expected \"rocketmq\" for this model, found {:?}", env.broker));
    }
    let brokers = bounded(o.array("brokers", e), "$.brokers", e).into_iter().filter_map(|(p, v)| read_broker(v, &p, e)).collect();
    let topics = bounded(o.array("topics", e), "$.topics", e).into_iter().filter_map(|(p, v)| read_topic(v, &p, e)).collect();
    let producers =
        bounded(o.array("producers", e), "$.producers", e).into_iter().filter_map(|(p, v)| read_producer(v, &p, e)).collect();
    let mut timeline = Vec::new();
    let groups = bounded(o.array("groups", e), "$.groups", e)
        .into_iter()
        .filter_map(|(p, v)| read_group(v, &p, e, &mut timeline))
        .collect();
    for (p, v) in bounded(o.array("timeline", e), "$.timeline", e) {
        if let Some(a) = read_timed_action(v, &p, e) {
            timeline.push((a, p));
        }
    }
    let memory_budget_mb = o.u64_in("memoryBudgetMb", 1, MAX_MEMORY_BUDGET_MB, e);
    // Stable: equal times keep file order (consumer lifecycle first, then the timeline).
    timeline.stable_sort_by_key(|(a, _)| a.at);
    let (timeline, paths): (Vec<TimedAction>, Vec<String>) = timeline.into_iter().unzip();
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
    Some((scenario, paths))
}

fn read_broker(v: &Value, path: &str, e: &mut Errors) -> Option<BrokerSpec> {
    let mut o = Obj::new(v, path, e)?;
    let name = o.req_str("name", e).map(str::to_string);
    let enable_property_filter = o.bool("enablePropertyFilter", e).unwrap_or(false);
    let enable_calc_filter_bitmap = o.bool("enableCalcFilterBitMap", e).unwrap_or(false);
    let filter_index = match o.str("filterIndex", e) {
        None => IndexDesign::TopicScan,
        Some(s) => IndexDesign::parse(s).unwrap_or_else(|| {
            e.push(&format!("{path}.filterIndex"), format!("expected \"topicScan\" or \"groupIndex\", found {s:?}"));
            IndexDesign::TopicScan
        }),
    };
    let sql92_version = match o.str("sql92Version", e) {
        None | Some("5") => Sql92Version::V5,
        Some("4.9") => Sql92Version::V4_9,
        Some(s) => {
            e.push(&format!("{path}.sql92Version"), format!("expected \"4.9\" or \"5\", found {s:?}"));
            Sql92Version::V5
        }
    };
    o.finish(e);
    Some(BrokerSpec {
        name: non_empty(name?, &format!("{path}.name"), e)?,
        enable_property_filter,
        enable_calc_filter_bitmap,
        filter_index,
        sql92_version,
    })
}

fn read_topic(v: &Value, path: &str, e: &mut Errors) -> Option<TopicSpec> {
    let mut o = Obj::new(v, path, e)?;
    let name = o.req_str("name", e).map(str::to_string);
    let queues = o.req_u64_in("queues", 0, MAX_QUEUES, e);
    let brokers = string_list(&mut o, "brokers", e);
    let broker_offsets = offsets_by_broker(&mut o, "brokerOffsets", queues, e);
    let min_offsets = offsets_by_broker(&mut o, "minOffsets", queues, e);
    let backlog_tag = o.str("backlogTag", e).map(str::to_string);
    if backlog_tag.as_deref() == Some("") {
        e.push(&o.child_path("backlogTag"), "a tag is not empty (leave backlogTag out for messages without one)");
    }
    for (broker, mins) in &min_offsets {
        let Some(maxes) = broker_offsets.get(broker) else { continue };
        for (q, (min, max)) in mins.iter().zip(maxes).enumerate() {
            if min > max {
                e.push(
                    &format!("{path}.minOffsets[{broker:?}][{q}]"),
                    format!("the min offset {min} is past the queue's max offset {max}"),
                );
            }
        }
    }
    o.finish(e);
    Some(TopicSpec {
        name: non_empty(name?, &format!("{path}.name"), e)?,
        queues: queues? as u32,
        brokers,
        broker_offsets,
        min_offsets,
        backlog_tag,
    })
}

/// The largest queue offset a snapshot may give (`long` upstream, but a queue here counts its
/// messages in 32 bits: `store::Message::queue_offset`).
pub const MAX_QUEUE_OFFSET: u64 = u32::MAX as u64;

/// A snapshot's per-queue offsets by broker: `{"broker-a": [offset per queue]}`.
fn offsets_by_broker(o: &mut Obj, key: &'static str, queues: Option<u64>, e: &mut Errors) -> VecMap<String, Vec<u64>> {
    let mut out = VecMap::new();
    let Some(v) = o.get(key) else { return out };
    let path = o.child_path(key);
    let Value::Object(map) = v else {
        e.push(&path, format!("expected an object {{broker: [offset per queue]}}, found {}", type_name(v)));
        return out;
    };
    for (broker, list) in map {
        let bp = format!("{path}[{broker:?}]");
        let Value::Array(items) = list else {
            e.push(&bp, format!("expected an array of offsets, found {}", type_name(list)));
            continue;
        };
        let offsets: Vec<u64> = items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| mqviz_engine::json_path::as_u64_in(v, &format!("{bp}[{i}]"), 0, MAX_QUEUE_OFFSET, e))
            .collect();
        if let Some(n) = queues.filter(|n| items.len() as u64 != *n) {
            e.push(&bp, format!("expected one offset per queue ({n}), found {}", items.len()));
        }
        out.insert(broker.clone(), offsets);
    }
    out
}

/// `"topic:broker:queueId"`, the form `CONFIG` allocations use: topics and broker names have no `:`
/// in RocketMQ (`TopicValidator`), so the last `:` starts the queue id.
pub(crate) fn parse_queue_ref(s: &str) -> Option<MessageQueue> {
    let (topic, rest) = s.split_once(':')?;
    let (broker, id) = rest.rsplit_once(':')?;
    let id: u32 = id.parse().ok()?;
    (!topic.is_empty() && !broker.is_empty()).then(|| MessageQueue::new(topic, broker, id))
}

fn queue_ref(v: &Value, path: &str, e: &mut Errors) -> Option<MessageQueue> {
    let s = as_str(v, path, e)?;
    let q = parse_queue_ref(s);
    if q.is_none() {
        e.push(path, format!("expected \"<topic>:<broker>:<queueId>\", found {s:?}"));
    }
    q
}

fn read_producer(v: &Value, path: &str, e: &mut Errors) -> Option<ProducerSpec> {
    let mut o = Obj::new(v, path, e)?;
    let id = o.req_str("id", e).map(str::to_string);
    let group = o.str("group", e).unwrap_or("producerGroup").to_string();
    let start_index = match o.get("startIndex") {
        None => StartIndex::Fixed(0),
        Some(Value::String(s)) if s == "random" => StartIndex::Random,
        Some(v) => {
            let p = o.child_path("startIndex");
            match v.as_u64() {
                Some(n) if n <= i32::MAX as u64 => StartIndex::Fixed(n as u32),
                _ => {
                    e.push(&p, format!("expected a whole number 0..={} or \"random\", found {}", i32::MAX, type_name(v)));
                    StartIndex::Fixed(0)
                }
            }
        }
    };
    let latency_ms = o.u64_in("latencyMs", 0, MAX_LATENCY, e);
    let sends = o.array("sends", e).into_iter().filter_map(|(p, v)| read_send(v, &p, e)).collect();
    o.finish(e);
    Some(ProducerSpec { id: non_empty(id?, &format!("{path}.id"), e)?, group, start_index, latency_ms, sends })
}

fn read_send(v: &Value, path: &str, e: &mut Errors) -> Option<SendSpec> {
    let mut o = Obj::new(v, path, e)?;
    let at = o.u64_in("at", 0, MAX_TIME, e).unwrap_or(0);
    let topic = o.req_str("topic", e).map(str::to_string);
    let tag = o.str("tag", e).map(str::to_string);
    let keys = o.str("keys", e).map(str::to_string);
    let mut properties = VecMap::new();
    if let Some(pv) = o.get("properties") {
        let pp = o.child_path("properties");
        if let Some(mut po) = Obj::new(pv, &pp, e) {
            if let Value::Object(map) = pv {
                for (k, val) in map {
                    let kp = po.child_path(k);
                    if let Some(s) = as_str(val, &kp, e) {
                        match super::properties::check_property(k, s) {
                            Ok(()) => {
                                properties.insert(k.clone(), s.to_string());
                            }
                            Err(reason) => e.push(&kp, reason),
                        }
                    }
                }
            }
            // All keys are accepted: property names are user data.
            po.get("");
        }
    }
    let body = o.str("body", e).unwrap_or("message {i}").to_string();
    let count = o.u64_in("count", 0, MAX_MESSAGES_PER_SEND, e).unwrap_or(1);
    let interval_ms = o.u64_in("intervalMs", 0, MAX_TIME, e).unwrap_or(0);
    let mut times = Vec::new();
    for (p, v) in o.array("times", e) {
        if let Some(t) = mqviz_engine::json_path::as_u64_in(v, &p, 0, MAX_TIME, e) {
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
    Some(SendSpec { at, topic: topic?, tag, keys, properties, body, count: count as u32, interval_ms, times })
}

fn read_allocation(v: &Value, path: &str, e: &mut Errors, depth: u32) -> Option<AllocationSpec> {
    if let Value::String(s) = v {
        return match s.as_str() {
            "AVG" => Some(AllocationSpec::Avg),
            "AVG_BY_CIRCLE" => Some(AllocationSpec::AvgByCircle),
            "CONSISTENT_HASH" => Some(AllocationSpec::ConsistentHash { virtual_nodes: 10 }),
            other => {
                e.push(path, format!("unknown or incomplete strategy {other:?}; use an object for CONFIG, MACHINE_ROOM and MACHINE_ROOM_NEARBY"));
                None
            }
        };
    }
    let mut o = Obj::new(v, path, e)?;
    let strategy = o.req_str("strategy", e)?;
    let spec = match strategy {
        "AVG" => AllocationSpec::Avg,
        "AVG_BY_CIRCLE" => AllocationSpec::AvgByCircle,
        "CONSISTENT_HASH" => {
            AllocationSpec::ConsistentHash { virtual_nodes: o.u64_in("virtualNodeCnt", 0, 1000, e).unwrap_or(10) as u32 }
        }
        "CONFIG" => AllocationSpec::Config { queues: string_list(&mut o, "queues", e) },
        "MACHINE_ROOM" => AllocationSpec::MachineRoom { consumer_idcs: string_list(&mut o, "consumeridcs", e) },
        "MACHINE_ROOM_NEARBY" => {
            let inner = match o.required("inner", e) {
                Some(iv) if depth == 0 => {
                    let ip = o.child_path("inner");
                    read_allocation(iv, &ip, e, depth + 1)?
                }
                Some(_) => {
                    e.push(&o.child_path("inner"), "MACHINE_ROOM_NEARBY cannot be nested");
                    return None;
                }
                None => return None,
            };
            AllocationSpec::MachineRoomNearby { inner: Box::new(inner) }
        }
        other => {
            e.push(&o.child_path("strategy"), format!("unknown strategy {other:?} (expected AVG, AVG_BY_CIRCLE, CONFIG, MACHINE_ROOM, MACHINE_ROOM_NEARBY or CONSISTENT_HASH)"));
            return None;
        }
    };
    o.finish(e);
    Some(spec)
}

fn read_group(v: &Value, path: &str, e: &mut Errors, timeline: &mut Vec<(TimedAction, String)>) -> Option<GroupSpec> {
    let mut o = Obj::new(v, path, e)?;
    let name = o.req_str("name", e).map(str::to_string);
    let message_model = match o.str("messageModel", e).unwrap_or("CLUSTERING") {
        "CLUSTERING" => MessageModel::Clustering,
        "BROADCASTING" => MessageModel::Broadcasting,
        other => {
            e.push(&o.child_path("messageModel"), format!("expected CLUSTERING or BROADCASTING, found {other:?}"));
            MessageModel::Clustering
        }
    };
    let allocation = match o.get("allocation") {
        Some(a) => {
            let p = o.child_path("allocation");
            read_allocation(a, &p, e, 0).unwrap_or(AllocationSpec::Avg)
        }
        None => AllocationSpec::Avg,
    };
    let consume_from_where = match o.str("consumeFromWhere", e).unwrap_or("CONSUME_FROM_LAST_OFFSET") {
        "CONSUME_FROM_LAST_OFFSET" => ConsumeFromWhere::LastOffset,
        "CONSUME_FROM_FIRST_OFFSET" => ConsumeFromWhere::FirstOffset,
        "CONSUME_FROM_TIMESTAMP" => ConsumeFromWhere::Timestamp,
        other => {
            e.push(&o.child_path("consumeFromWhere"), format!("unknown value {other:?}"));
            ConsumeFromWhere::LastOffset
        }
    };
    let consume_timestamp = o.u64_in("consumeTimestamp", 0, MAX_TIME, e);
    let orderly = o.bool("orderly", e).unwrap_or(false);
    let mut snapshot = GroupSnapshot::default();
    if let Some(v) = o.get("committed") {
        let cp = o.child_path("committed");
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    let p = format!("{cp}[{k:?}]");
                    let Some(mq) = parse_queue_ref(k) else {
                        e.push(&p, format!("expected \"<topic>:<broker>:<queueId>\" as the key, found {k:?}"));
                        continue;
                    };
                    if let Some(off) = mqviz_engine::json_path::as_u64_in(v, &p, 0, MAX_QUEUE_OFFSET, e) {
                        snapshot.committed.push((mq, off));
                    }
                }
            }
            other => {
                e.push(&cp, format!("expected an object of \"<topic>:<broker>:<queueId>\": offset, found {}", type_name(other)))
            }
        }
    }
    let consumers = o
        .array("consumers", e)
        .into_iter()
        .filter_map(|(p, v)| read_consumer(v, &p, e, Some((&mut *timeline, &mut snapshot.members))))
        .collect();
    o.finish(e);
    Some(GroupSpec {
        name: non_empty(name?, &format!("{path}.name"), e)?,
        message_model,
        allocation,
        consume_from_where,
        consume_timestamp,
        orderly,
        consumers,
        snapshot,
    })
}

fn read_subscription(topic: &str, v: &Value, path: &str, e: &mut Errors) -> Option<SubscriptionSpec> {
    match v {
        Value::String(expr) => {
            Some(SubscriptionSpec { topic: topic.to_string(), expression: expr.clone(), expression_type: None })
        }
        Value::Object(_) => {
            let mut o = Obj::new(v, path, e)?;
            let expression = o.req_str("expression", e).map(str::to_string);
            let t = o.str("type", e).map(str::to_string);
            o.finish(e);
            let expression_type = match t.as_deref() {
                None | Some("TAG") => None,
                Some("SQL92") => Some("SQL92".to_string()),
                Some(other) => {
                    e.push(&format!("{path}.type"), format!("expected TAG or SQL92, found {other:?}"));
                    None
                }
            };
            Some(SubscriptionSpec { topic: topic.to_string(), expression: expression?, expression_type })
        }
        other => {
            e.push(path, format!("expected a tag expression string or {{\"type\", \"expression\"}}, found {}", type_name(other)));
            None
        }
    }
}

/// Where a group's consumers leave what they say beyond themselves: their lifecycle times (as
/// timeline entries with their paths) and, for snapshot members, their assigned queues.
type GroupConsumers<'a> = (&'a mut Vec<(TimedAction, String)>, &'a mut VecMap<String, Vec<MessageQueue>>);

fn read_consumer(v: &Value, path: &str, e: &mut Errors, lifecycle: Option<GroupConsumers<'_>>) -> Option<ConsumerSpec> {
    let mut o = Obj::new(v, path, e)?;
    let assigned = o
        .get("assigned")
        .is_some()
        .then(|| o.array("assigned", e).into_iter().filter_map(|(p, v)| queue_ref(v, &p, e)).collect::<Vec<MessageQueue>>());
    if assigned.is_some() {
        if lifecycle.is_none() {
            e.push(&o.child_path("assigned"), "a consumer added by the timeline starts then; it has no snapshot");
        } else if o.get("startAt").is_some() {
            e.push(&o.child_path("assigned"), "a snapshot member runs from t=0: remove its startAt");
        }
    }
    let client_id = o.req_str("clientId", e).map(str::to_string);
    let name = o.str("name", e).map(str::to_string);
    let mut subscriptions = Vec::new();
    if let Some(sv) = o.get("subscriptions") {
        let sp = o.child_path("subscriptions");
        if let Value::Object(map) = sv {
            for (topic, expr) in map {
                let tp = format!("{sp}[{topic:?}]");
                if let Some(s) = read_subscription(topic, expr, &tp, e) {
                    subscriptions.push(s);
                }
            }
        } else {
            e.push(&sp, format!("expected an object {{topic: expression}}, found {}", type_name(sv)));
        }
    }
    let start_at = match o.get("startAt") {
        Some(Value::String(s)) if s == "never" => None,
        Some(v) => {
            let p = o.child_path("startAt");
            mqviz_engine::json_path::as_u64_in(v, &p, 0, MAX_TIME, e)
        }
        None => Some(0),
    };
    let stop_at = o.u64_in("stopAt", 0, MAX_TIME, e);
    let crash_at = o.u64_in("crashAt", 0, MAX_TIME, e);
    let restart_at = o.u64_in("restartAt", 0, MAX_TIME, e);
    let latency_ms = o.u64_in("latencyMs", 0, MAX_LATENCY, e);
    let consume_time_ms = o.u64_in("consumeTimeMs", 0, MAX_TIME, e).unwrap_or(1);
    let result = match o.get("consumeResult") {
        None => ConsumeResultPolicy::Success,
        Some(Value::String(s)) if s == "CONSUME_SUCCESS" => ConsumeResultPolicy::Success,
        Some(Value::String(s)) if s == "RECONSUME_LATER" => ConsumeResultPolicy::AlwaysFail,
        Some(v @ Value::Object(_)) => {
            let p = o.child_path("consumeResult");
            let mut r = Obj::new(v, &p, e)?;
            let n = r.req_u64_in("failTimes", 0, 1000, e).unwrap_or(0);
            r.finish(e);
            ConsumeResultPolicy::FailTimes(n as u32)
        }
        Some(other) => {
            e.push(
                &o.child_path("consumeResult"),
                format!("expected \"CONSUME_SUCCESS\", \"RECONSUME_LATER\" or {{\"failTimes\": n}}, found {other}"),
            );
            ConsumeResultPolicy::Success
        }
    };
    let on_start_failure = match o.str("onStartFailure", e) {
        None | Some("shutdown") => StartFailurePolicy::Shutdown,
        Some("ignore") => StartFailurePolicy::Ignore,
        Some(other) => {
            e.push(&o.child_path("onStartFailure"), format!("expected \"shutdown\" or \"ignore\", found {other:?}"));
            StartFailurePolicy::Shutdown
        }
    };
    o.finish(e);
    let client_id = non_empty(client_id?, &format!("{path}.clientId"), e)?;
    let name = match name {
        Some(n) => non_empty(n, &format!("{path}.name"), e)?,
        None => client_id.clone(),
    };
    if let Some((timeline, members)) = lifecycle {
        let id = || name.clone();
        // A snapshot member is restored at t=0 (world/snapshot.rs), not started.
        let start_at = match assigned {
            Some(queues) => {
                members.insert(name.clone(), queues);
                None
            }
            None => start_at,
        };
        if let Some(at) = start_at {
            timeline.push((TimedAction { at, action: Action::StartConsumer { consumer: id() } }, format!("{path}.startAt")));
        }
        if let Some(at) = stop_at {
            timeline.push((TimedAction { at, action: Action::StopConsumer { consumer: id() } }, format!("{path}.stopAt")));
        }
        if let Some(at) = crash_at {
            timeline.push((TimedAction { at, action: Action::CrashConsumer { consumer: id() } }, format!("{path}.crashAt")));
        }
        if let Some(at) = restart_at {
            timeline.push((TimedAction { at, action: Action::StartConsumer { consumer: id() } }, format!("{path}.restartAt")));
        }
    } else if stop_at.is_some() || crash_at.is_some() || restart_at.is_some() {
        e.push(path, "lifecycle times are not allowed here; add timeline actions instead");
    }
    Some(ConsumerSpec { name, client_id, subscriptions, start_at, latency_ms, consume_time_ms, result, on_start_failure })
}

fn read_timed_action(v: &Value, path: &str, e: &mut Errors) -> Option<TimedAction> {
    let mut o = Obj::new(v, path, e)?;
    let at = o.req_u64_in("at", 0, MAX_TIME, e);
    let kind = o.req_str("action", e);
    let client = |o: &mut Obj, e: &mut Errors| consumer_reference(o, path, e);
    let action = match kind? {
        "startConsumer" => client(&mut o, e).map(|consumer| Action::StartConsumer { consumer }),
        "stopConsumer" => client(&mut o, e).map(|consumer| Action::StopConsumer { consumer }),
        "crashConsumer" => client(&mut o, e).map(|consumer| Action::CrashConsumer { consumer }),
        "addConsumer" => {
            let group = o.req_str("group", e).map(str::to_string);
            let consumer = o.required("consumer", e).and_then(|cv| {
                let p = format!("{path}.consumer");
                read_consumer(cv, &p, e, None)
            });
            match (group, consumer) {
                (Some(group), Some(consumer)) => Some(Action::AddConsumer { group, consumer }),
                _ => None,
            }
        }
        "subscribe" => {
            let consumer = client(&mut o, e);
            let topic = o.req_str("topic", e).map(str::to_string);
            let expression = o.req_str("expression", e).map(str::to_string);
            let t = o.str("type", e).map(str::to_string);
            match (consumer, topic, expression) {
                (Some(consumer), Some(topic), Some(expression)) => {
                    let expression_type = match t.as_deref() {
                        None | Some("TAG") => None,
                        Some("SQL92") => Some("SQL92".to_string()),
                        Some(other) => {
                            e.push(&format!("{path}.type"), format!("expected TAG or SQL92, found {other:?}"));
                            None
                        }
                    };
                    Some(Action::Subscribe { consumer, subscription: SubscriptionSpec { topic, expression, expression_type } })
                }
                _ => None,
            }
        }
        "unsubscribe" => {
            let consumer = client(&mut o, e);
            let topic = o.req_str("topic", e).map(str::to_string);
            Some(Action::Unsubscribe { consumer: consumer?, topic: topic? })
        }
        "setQueueCount" => {
            let topic = o.req_str("topic", e).map(str::to_string);
            let queues = o.req_u64_in("queues", 0, MAX_QUEUES, e);
            Some(Action::SetQueueCount { topic: topic?, queues: queues? as u32 })
        }
        "produce" => {
            let producer = o.req_str("producer", e).map(str::to_string);
            let send = o.required("send", e).and_then(|sv| read_send(sv, &format!("{path}.send"), e));
            match (at, producer, send) {
                (Some(at), Some(producer), Some(mut send)) => {
                    send.at = at;
                    Some(Action::Produce { producer, send })
                }
                _ => None,
            }
        }
        "setAllocation" => {
            let group = o.req_str("group", e).map(str::to_string);
            let allocation = o.required("allocation", e).and_then(|av| read_allocation(av, &format!("{path}.allocation"), e, 0));
            Some(Action::SetAllocation { group: group?, allocation: allocation? })
        }
        other => {
            e.push(&format!("{path}.action"), format!("unknown action {other:?} (expected startConsumer, stopConsumer, crashConsumer, addConsumer, subscribe, unsubscribe, setQueueCount, setAllocation or produce)"));
            None
        }
    };
    o.finish(e);
    Some(TimedAction { at: at?, action: action? })
}

/// Cross-references: names are unique and everything referenced exists.
fn check_references(s: &Scenario, paths: &[String], e: &mut Errors) {
    if s.brokers.is_empty() {
        e.push("$.brokers", "at least one broker is required");
    }
    let mut brokers = VecSet::new();
    for (i, b) in s.brokers.iter().enumerate() {
        if !brokers.insert(b.name.as_str()) {
            e.push(&format!("$.brokers[{i}].name"), format!("duplicate broker {:?}", b.name));
        }
    }
    let mut topics = VecSet::new();
    for (i, t) in s.topics.iter().enumerate() {
        if !topics.insert(t.name.as_str()) {
            e.push(&format!("$.topics[{i}].name"), format!("duplicate topic {:?}", t.name));
        }
        for (j, b) in t.brokers.iter().enumerate() {
            if !brokers.contains(b.as_str()) {
                e.push(&format!("$.topics[{i}].brokers[{j}]"), format!("unknown broker {b:?}"));
            }
        }
    }
    let mut total_messages: u64 = 0;
    for (i, p) in s.producers.iter().enumerate() {
        for (j, send) in p.sends.iter().enumerate() {
            total_messages += send.count as u64;
            if !topics.contains(send.topic.as_str()) {
                e.push(&format!("$.producers[{i}].sends[{j}].topic"), format!("unknown topic {:?}", send.topic));
            }
        }
    }
    let in_snapshot = s.snapshot_messages();
    total_messages += in_snapshot;
    if total_messages > MAX_MESSAGES_TOTAL {
        e.push(
            if in_snapshot > 0 { "$.topics" } else { "$.producers" },
            format!("{total_messages} messages in total (the snapshot's {in_snapshot} included) is more than the {MAX_MESSAGES_TOTAL} the simulator accepts"),
        );
    }
    check_snapshot(s, e);
    // Consumers are referenced by their unique name; clientIds may repeat (spec §6: duplicates
    // share an allocation block). Topics a consumer subscribes need not exist (spec §5: no route,
    // warnings until the topic appears).
    let mut names = VecSet::new();
    let mut groups = VecSet::new();
    for (i, g) in s.groups.iter().enumerate() {
        if !groups.insert(g.name.as_str()) {
            e.push(&format!("$.groups[{i}].name"), format!("duplicate group {:?}", g.name));
        }
        for (j, c) in g.consumers.iter().enumerate() {
            if !names.insert(c.name.clone()) {
                e.push(&format!("$.groups[{i}].consumers[{j}].name"), duplicate_consumer_name(&c.name));
            }
        }
    }
    for (a, p) in s.timeline.iter().zip(paths) {
        if let Action::AddConsumer { group, consumer } = &a.action {
            if !groups.contains(group.as_str()) {
                e.push(p, format!("addConsumer: unknown group {group:?}"));
            }
            if !names.insert(consumer.name.clone()) {
                e.push(p, format!("addConsumer: {}", duplicate_consumer_name(&consumer.name)));
            }
        }
    }
    // A topic exists for producers once it is declared or created by `setQueueCount` (updateTopic).
    let mut created: VecSet<&str> = topics.clone();
    for (a, p) in s.timeline.iter().zip(paths) {
        match &a.action {
            Action::StartConsumer { consumer }
            | Action::StopConsumer { consumer }
            | Action::CrashConsumer { consumer }
            | Action::Subscribe { consumer, .. }
            | Action::Unsubscribe { consumer, .. } => {
                if !names.contains(consumer) {
                    e.push(p, format!("{}: unknown consumer {consumer:?}", a.action.name()));
                }
            }
            Action::SetQueueCount { topic, .. } => {
                created.insert(topic.as_str());
            }
            Action::Produce { producer, send } => {
                if !s.producers.iter().any(|p| &p.id == producer) {
                    e.push(p, format!("produce: unknown producer {producer:?}"));
                }
                if !created.contains(send.topic.as_str()) {
                    e.push(
                        p,
                        format!("produce: unknown topic {:?} (declare it, or create it first with setQueueCount)", send.topic),
                    );
                }
            }
            Action::SetAllocation { group, .. } => {
                if !groups.contains(group.as_str()) {
                    e.push(p, format!("setAllocation: unknown group {group:?}"));
                }
            }
            Action::AddConsumer { .. } => {}
        }
    }
}

/// A snapshot that cannot be consistent is refused with its path: offsets for a broker that does
/// not host the topic, unknown queues, committed past the max offset, a queue held by two members
/// of a CLUSTERING group, a member holding a queue of a topic it does not subscribe.
fn check_snapshot(s: &Scenario, e: &mut Errors) {
    for (i, t) in s.topics.iter().enumerate() {
        for (key, offsets) in [("brokerOffsets", &t.broker_offsets), ("minOffsets", &t.min_offsets)] {
            for broker in offsets.keys() {
                if !s.hosts(t, broker) {
                    e.push(&format!("$.topics[{i}].{key}[{broker:?}]"), format!("{broker:?} does not host {:?}", t.name));
                }
            }
        }
    }
    let exists = |mq: &MessageQueue| {
        s.topics.iter().find(|t| *t.name == *mq.topic).is_some_and(|t| mq.queue_id < t.queues && s.hosts(t, &mq.broker))
    };
    let unknown =
        |mq: &MessageQueue| format!("no queue {}:{} of topic {:?} in this scenario", mq.broker, mq.queue_id, &*mq.topic);
    for (g, group) in s.groups.iter().enumerate() {
        for (mq, off) in &group.snapshot.committed {
            let p = format!("$.groups[{g}].committed[\"{}:{}:{}\"]", mq.topic, mq.broker, mq.queue_id);
            if !exists(mq) {
                e.push(&p, unknown(mq));
                continue;
            }
            let (_, max) = s.snapshot_range(mq);
            if *off > max {
                e.push(&p, format!("committed offset {off} is past the queue's max offset {max} (brokerOffsets)"));
            }
        }
        let mut owners: VecMap<&MessageQueue, &str> = VecMap::new();
        for (j, c) in group.consumers.iter().enumerate() {
            let Some(queues) = group.snapshot.members.get(&c.name) else { continue };
            for (k, mq) in queues.iter().enumerate() {
                let p = format!("$.groups[{g}].consumers[{j}].assigned[{k}]");
                if !exists(mq) {
                    e.push(&p, unknown(mq));
                    continue;
                }
                if !c.subscriptions.iter().any(|sub| *sub.topic == *mq.topic) {
                    e.push(&p, format!("{:?} holds a queue of {:?}, which it does not subscribe", c.name, &*mq.topic));
                }
                if group.message_model == MessageModel::Clustering {
                    if let Some(first) = owners.insert(mq, &c.name) {
                        e.push(
                            &p,
                            format!("{mq} is held by both {first:?} and {:?}; in CLUSTERING a queue has one owner", c.name),
                        );
                    }
                }
            }
        }
    }
}
