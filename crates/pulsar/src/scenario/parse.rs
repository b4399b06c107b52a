//! Reading and validating the Pulsar section of a scenario. Every error names its JSON path;
//! nothing panics. Cross-references (and the segment operations of the timeline, replayed on the
//! layout) are checked in `check.rs`.

use mqviz_engine::sort::StableSort;
use serde_json::Value;

use super::*;
use crate::defaults::{ACKNOWLEDGEMENTS_GROUP_TIME_MS, ACK_TIMEOUT_MIN_MS, NEGATIVE_ACK_REDELIVERY_DELAY_MS};
use crate::hash::KEY_HASH_RANGE_SIZE;
use mqviz_engine::json_path::{as_str, as_u64_in, parse_json, type_name, Errors, Obj, PathError};
use mqviz_engine::scenario::{
    bounded, non_empty, read_envelope, MAX_LATENCY, MAX_MESSAGES_PER_SEND, MAX_MESSAGES_TOTAL, MAX_TIME,
};
use std::collections::BTreeSet;

/// Parses scenario text. `Err` lists every problem found, each with its JSON path.
pub fn parse_scenario(text: &str) -> Result<Scenario, Vec<PathError>> {
    let v = parse_json(text).map_err(|e| vec![e])?;
    parse_scenario_value(&v)
}

pub fn parse_scenario_value(v: &Value) -> Result<Scenario, Vec<PathError>> {
    let mut e = Errors::default();
    let read = read_scenario(v, &mut e);
    if let Some((s, paths)) = &read {
        if e.is_empty() {
            super::check::check_references(s, paths, &mut e);
        }
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
/// errors. References are checked by the World that runs it, against its current state.
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

/// The scenario and, aligned with its sorted timeline, the JSON path each entry came from.
fn read_scenario(v: &Value, e: &mut Errors) -> Option<(Scenario, Vec<String>)> {
    let (env, mut o) = read_envelope(v, e)?;
    if env.broker != "pulsar" {
        e.push("$.broker", format!("expected \"pulsar\" for this model, found {:?}", env.broker));
    }
    let config = match o.get("config") {
        Some(c) => read_config(c, "$.config", e),
        None => PulsarConfig::default(),
    };
    let brokers: Vec<String> = bounded(o.array("brokers", e), "$.brokers", e)
        .into_iter()
        .filter_map(|(p, v)| {
            let mut b = Obj::new(v, &p, e)?;
            let name = b.req_str("name", e).map(str::to_string);
            b.finish(e);
            non_empty(name?, &format!("{p}.name"), e)
        })
        .collect();
    let topics = bounded(o.array("topics", e), "$.topics", e).into_iter().filter_map(|(p, v)| read_topic(v, &p, e)).collect();
    let producers =
        bounded(o.array("producers", e), "$.producers", e).into_iter().filter_map(|(p, v)| read_producer(v, &p, e)).collect();
    let mut timeline = Vec::new();
    let consumers = bounded(o.array("consumers", e), "$.consumers", e)
        .into_iter()
        .filter_map(|(p, v)| read_consumer(v, &p, e, Some(&mut timeline)))
        .collect();
    for (p, v) in bounded(o.array("timeline", e), "$.timeline", e) {
        if let Some(a) = read_timed_action(v, &p, e) {
            timeline.push((a, p));
        }
    }
    let subscriptions: Vec<SubscriptionSnapshot> = bounded(o.array("subscriptions", e), "$.subscriptions", e)
        .into_iter()
        .filter_map(|(p, v)| read_subscription_snapshot(v, &p, e))
        .collect();
    // A connected consumer is running at t=0: the world restores it rather than starting it.
    let connected: BTreeSet<&str> = subscriptions.iter().flat_map(|s| s.connected.iter().map(String::as_str)).collect();
    if let Some(Value::Array(raw)) = v.get("consumers") {
        for (i, c) in raw.iter().enumerate() {
            let named = c.get("name").and_then(Value::as_str).is_some_and(|n| connected.contains(n));
            if !named {
                continue;
            }
            if c.get("startAt").is_some_and(|x| !x.is_null()) {
                e.push(
                    &format!("$.consumers[{i}].startAt"),
                    "a consumer connected in the snapshot runs from t=0: remove its startAt",
                );
            }
            let own = format!("$.consumers[{i}]");
            timeline.retain(|(a, p): &(TimedAction, String)| {
                !(a.at == 0 && *p == own && matches!(a.action, Action::StartConsumer { .. }))
            });
        }
    }
    // Stable: equal times keep file order (consumer lifecycle first, then the timeline).
    timeline.stable_sort_by_key(|(a, _)| a.at);
    let (timeline, paths): (Vec<TimedAction>, Vec<String>) = timeline.into_iter().unzip();
    let memory_budget_mb = o.u64_in("memoryBudgetMb", 1, mqviz_engine::budget::MAX_MEMORY_BUDGET_MB, e);
    o.finish(e);
    let brokers = if brokers.is_empty() { vec!["broker-1".to_string()] } else { brokers };
    let scenario = Scenario {
        name: env.name,
        description: env.description,
        seed: env.seed,
        until: env.until,
        latency_ms: env.latency_ms,
        config,
        brokers,
        topics,
        producers,
        consumers,
        timeline,
        subscriptions,
        memory_budget_mb,
    };
    Some((scenario, paths))
}

/// One of `options` by name, or an error listing them.
fn one_of<T: Copy>(value: &str, options: &[(&str, T)], what: &str, path: &str, e: &mut Errors) -> Option<T> {
    match options.iter().find(|(n, _)| *n == value) {
        Some((_, t)) => Some(*t),
        None => {
            let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
            e.push(path, format!("unknown {what} {value:?} (expected one of: {})", names.join(", ")));
            None
        }
    }
}

fn enum_field<T: Copy>(o: &mut Obj, key: &'static str, options: &[(&str, T)], what: &str, e: &mut Errors) -> Option<T> {
    let path = o.child_path(key);
    let s = o.str(key, e)?;
    one_of(s, options, what, &path, e)
}

fn u32_field(o: &mut Obj, key: &'static str, lo: u64, hi: u64, e: &mut Errors) -> Option<u32> {
    o.u64_in(key, lo, hi.min(u64::from(u32::MAX)), e).map(|v| v as u32)
}

pub(super) const FAILOVER_ERAS: &[(&str, FailoverEra)] = &[("current", FailoverEra::Current), ("pre-3.0", FailoverEra::Pre30)];
pub(super) const SEGMENT_HASH_ERAS: &[(&str, SegmentHashEra)] =
    &[("pip468_lowbits", SegmentHashEra::Pip468LowBits), ("pip486_highbits", SegmentHashEra::Pip486HighBits)];
pub(super) const ASSIGNMENT_ERAS: &[(&str, AssignmentEra)] = &[
    ("25642", AssignmentEra::Pr25642),
    ("pre-25642", AssignmentEra::Pre25642),
    ("retire-drained", AssignmentEra::RetireDrainedSealed),
];
pub(super) const CLIENT_CLOSE_ERAS: &[(&str, ClientCloseEra)] =
    &[("pre-26433", ClientCloseEra::Pre26433), ("unregisters", ClientCloseEra::Unregisters)];
pub(super) const QUEUE_ERAS: &[(&str, QueueEra)] =
    &[("all-segments", QueueEra::AllSegments), ("active-only", QueueEra::ActiveOnly)];

fn read_config(v: &Value, path: &str, e: &mut Errors) -> PulsarConfig {
    let mut c = PulsarConfig::default();
    let Some(mut o) = Obj::new(v, path, e) else { return c };
    const BIG: u64 = 100_000_000;
    if let Some(x) = enum_field(&mut o, "failoverEra", FAILOVER_ERAS, "failover era", e) {
        c.failover_era = x;
    }
    if let Some(x) = o.u64_in("activeConsumerFailoverDelayTimeMillis", 0, MAX_LATENCY, e) {
        c.failover_delay_ms = x;
    }
    if let Some(x) = o.bool("activeConsumerFailoverConsistentHashing", e) {
        c.failover_consistent_hashing = x;
    }
    if let Some(x) = u32_field(&mut o, "dispatcherMaxRoundRobinBatchSize", 1, 10_000, e) {
        c.round_robin_batch = x;
    }
    if let Some(x) = u32_field(&mut o, "dispatcherMaxReadBatchSize", 1, 10_000, e) {
        c.max_read_batch = x;
    }
    if let Some(x) = u32_field(&mut o, "maxUnackedMessagesPerConsumer", 0, BIG, e) {
        c.max_unacked_per_consumer = x;
    }
    if let Some(x) = u32_field(&mut o, "maxUnackedMessagesPerSubscription", 0, BIG, e) {
        c.max_unacked_per_subscription = x;
    }
    if let Some(x) = o.bool("subscriptionKeySharedUseConsistentHashing", e) {
        c.key_shared_consistent_hashing = x;
    }
    if let Some(x) = u32_field(&mut o, "subscriptionKeySharedConsistentHashingReplicaPoints", 1, 10_000, e) {
        c.key_shared_replica_points = x;
    }
    if let Some(x) = o.bool("subscriptionKeySharedUseClassicPersistentImplementation", e) {
        c.key_shared_classic = x;
    }
    if let Some(x) = u32_field(&mut o, "keySharedLookAheadMsgInReplayThresholdPerConsumer", 0, BIG, e) {
        c.look_ahead_per_consumer = x;
    }
    if let Some(x) = u32_field(&mut o, "keySharedLookAheadMsgInReplayThresholdPerSubscription", 0, BIG, e) {
        c.look_ahead_per_subscription = x;
    }
    if let Some(x) = o.u64_in("keySharedUnblockingIntervalMs", 0, MAX_LATENCY, e) {
        c.unblocking_interval_ms = x;
    }
    if let Some(x) = enum_field(&mut o, "segmentHashEra", SEGMENT_HASH_ERAS, "segment hash era", e) {
        c.segment_hash_era = x;
    }
    if let Some(x) = enum_field(&mut o, "assignmentEra", ASSIGNMENT_ERAS, "assignment era", e) {
        c.assignment_era = x;
    }
    if let Some(x) = enum_field(&mut o, "clientCloseEra", CLIENT_CLOSE_ERAS, "client close era", e) {
        c.client_close_era = x;
    }
    if let Some(x) = enum_field(&mut o, "queueConsumerEra", QUEUE_ERAS, "queue consumer era", e) {
        c.queue_era = x;
    }
    if let Some(x) = o.u64_in("scalableTopicConsumerSessionGracePeriodSeconds", 0, MAX_TIME / 1_000, e) {
        c.session_grace_ms = x * 1_000;
    }
    if let Some(x) = o.u64_in("drainInitialDelayMs", 1, MAX_TIME, e) {
        c.drain_initial_delay_ms = x;
    }
    if let Some(x) = o.u64_in("drainMaxDelayMs", 1, MAX_TIME, e) {
        c.drain_max_delay_ms = x;
    }
    if c.drain_max_delay_ms < c.drain_initial_delay_ms {
        e.push(&format!("{path}.drainMaxDelayMs"), "must not be below drainInitialDelayMs");
    }
    if let Some(x) = o.u64_in("sealedSegmentRetentionMs", 0, MAX_TIME, e) {
        c.sealed_segment_retention_ms = Some(x);
    }
    o.finish(e);
    c
}

fn read_topic(v: &Value, path: &str, e: &mut Errors) -> Option<TopicSpec> {
    let mut o = Obj::new(v, path, e)?;
    let name = o.req_str("name", e).map(str::to_string);
    let partitions = o.u64_in("partitions", 0, MAX_PARTITIONS, e);
    let segments = o.u64_in("segments", 1, MAX_INITIAL_SEGMENTS, e);
    let entries_path = o.child_path("entries");
    let entries = match o.get("entries") {
        None => Vec::new(),
        // A non-partitioned topic's one ledger may be given as a number.
        Some(Value::Number(_)) => {
            as_u64_in(o.get("entries").unwrap_or(&Value::Null), &entries_path, 0, MAX_MESSAGES_TOTAL, e).into_iter().collect()
        }
        Some(_) => bounded(o.array("entries", e), &entries_path, e)
            .into_iter()
            .filter_map(|(p, v)| as_u64_in(v, &p, 0, MAX_MESSAGES_TOTAL, e))
            .collect(),
    };
    let backlog_key = o.str("backlogKey", e).map(str::to_string);
    o.finish(e);
    let kind = match (partitions, segments) {
        (Some(_), Some(_)) => {
            e.push(path, "a topic has either partitions or segments (scalable), not both");
            return None;
        }
        (Some(0) | None, None) => TopicKind::NonPartitioned,
        (Some(p), None) => TopicKind::Partitioned { partitions: p as u32 },
        (None, Some(s)) => TopicKind::Scalable { initial_segments: s as u32 },
    };
    let name = non_empty(name?, &format!("{path}.name"), e)?;
    if let Some((domain, _)) = name.split_once("://") {
        let expected = if matches!(kind, TopicKind::Scalable { .. }) { "topic" } else { "persistent" };
        if domain != expected {
            e.push(
                &format!("{path}.name"),
                format!("a {} topic name has domain {expected:?}, found {domain:?}", kind_word(&kind)),
            );
        }
    }
    let expected = match kind {
        TopicKind::NonPartitioned => 1,
        TopicKind::Partitioned { partitions } => partitions as usize,
        TopicKind::Scalable { .. } => 0,
    };
    if !entries.is_empty() && expected == 0 {
        e.push(&entries_path, "a scalable topic cannot start from a snapshot (its segments' stats are not read yet)");
    } else if !entries.is_empty() && entries.len() != expected {
        e.push(&entries_path, format!("{} entry counts for {expected} partitions: give one per partition", entries.len()));
    }
    if backlog_key.is_some() && entries.is_empty() {
        e.push(&format!("{path}.backlogKey"), "backlogKey keys the snapshot's entries: give \"entries\" too");
    }
    Some(TopicSpec { name, kind, snapshot: TopicSnapshot { entries, backlog_key } })
}

/// One of `$.subscriptions`: a durable subscription at t=0 (cross-checked in `check.rs`).
fn read_subscription_snapshot(v: &Value, path: &str, e: &mut Errors) -> Option<SubscriptionSnapshot> {
    let mut o = Obj::new(v, path, e)?;
    let topic = o.req_str("topic", e).map(str::to_string);
    let name = o.req_str("name", e).map(str::to_string);
    let cursors_path = o.child_path("cursors");
    let cursors: Vec<CursorSnapshot> =
        bounded(o.array("cursors", e), &cursors_path, e).into_iter().filter_map(|(p, v)| read_cursor(v, &p, e)).collect();
    if o.get("cursors").is_none() {
        e.push(&cursors_path, "required field is missing (one cursor per partition)");
    }
    let names = |o: &mut Obj, key: &'static str, e: &mut Errors| -> Vec<Option<String>> {
        let p = o.child_path(key);
        bounded(o.array(key, e), &p, e)
            .into_iter()
            .map(|(p, v)| match v {
                Value::Null => None,
                v => as_str(v, &p, e).map(str::to_string),
            })
            .collect()
    };
    let connected: Vec<String> = names(&mut o, "connected", e).into_iter().flatten().collect();
    let active_consumers = names(&mut o, "activeConsumers", e);
    let mut key_hash_ranges = Vec::new();
    if let Some(v) = o.get("keyHashRanges") {
        let p = o.child_path("keyHashRanges");
        match v {
            Value::Object(map) => {
                for (consumer, ranges) in map {
                    let rp = format!("{p}[{consumer:?}]");
                    key_hash_ranges.push((consumer.clone(), read_ranges(ranges, &rp, e)));
                }
            }
            other => e.push(&p, format!("expected an object of consumer -> ranges, found {}", type_name(other))),
        }
    }
    o.finish(e);
    Some(SubscriptionSnapshot {
        topic: topic?,
        name: non_empty(name?, &format!("{path}.name"), e)?,
        cursors,
        connected,
        active_consumers,
        key_hash_ranges,
    })
}

/// Inclusive hash ranges `[[start, end], ...]` in `[0, 65535]`.
fn read_ranges(v: &Value, path: &str, e: &mut Errors) -> Vec<(u32, u32)> {
    let Value::Array(items) = v else {
        e.push(path, format!("expected a list of ranges [start, end], found {}", type_name(v)));
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, r) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        match r {
            Value::Array(pair) if pair.len() == 2 => {
                let hi = u64::from(KEY_HASH_RANGE_SIZE - 1);
                let (s, t) =
                    (as_u64_in(&pair[0], &format!("{p}[0]"), 0, hi, e), as_u64_in(&pair[1], &format!("{p}[1]"), 0, hi, e));
                match (s, t) {
                    (Some(s), Some(t)) if s <= t => out.push((s as u32, t as u32)),
                    (Some(s), Some(t)) => e.push(&p, format!("range [{s}, {t}] starts after its end")),
                    _ => {}
                }
            }
            other => e.push(&p, format!("expected a range [start, end], found {}", type_name(other))),
        }
    }
    out
}

/// A cursor: `{"markDeletePosition": entry, "individuallyDeleted": [[from, to], ...]}`.
fn read_cursor(v: &Value, path: &str, e: &mut Errors) -> Option<CursorSnapshot> {
    let mut o = Obj::new(v, path, e)?;
    let md_path = o.child_path("markDeletePosition");
    let mark_delete = match o.required("markDeletePosition", e) {
        Some(Value::Number(n)) => match n.as_i64() {
            Some(x) if (-1..MAX_MESSAGES_TOTAL as i64).contains(&x) => Some(x),
            _ => {
                e.push(&md_path, format!("expected an entry index from -1 (nothing acked), found {n}"));
                None
            }
        },
        Some(other) => {
            e.push(&md_path, format!("expected a number, found {}", type_name(other)));
            None
        }
        None => None,
    };
    let acked_path = o.child_path("individuallyDeleted");
    let mut acked = Vec::new();
    for (p, r) in bounded(o.array("individuallyDeleted", e), &acked_path, e) {
        match r {
            Value::Array(pair) if pair.len() == 2 => {
                let hi = MAX_MESSAGES_TOTAL;
                if let (Some(a), Some(b)) =
                    (as_u64_in(&pair[0], &format!("{p}[0]"), 0, hi, e), as_u64_in(&pair[1], &format!("{p}[1]"), 0, hi, e))
                {
                    acked.push((a as i64, b as i64, p));
                }
            }
            other => e.push(&p, format!("expected an entry range [first, last], found {}", type_name(other))),
        }
    }
    o.finish(e);
    let mark_delete = mark_delete?;
    let mut last = mark_delete;
    for (a, b, p) in &acked {
        if a > b {
            e.push(p, format!("range [{a}, {b}] starts after its end"));
        } else if *a <= last {
            e.push(p, format!("range [{a}, {b}] is not above markDeletePosition and the ranges before it (entry {last}): the ranges are ascending and disjoint"));
        }
        last = last.max(*b);
    }
    Some(CursorSnapshot { mark_delete, acked: acked.into_iter().map(|(a, b, _)| (a, b)).collect() })
}

fn kind_word(kind: &TopicKind) -> &'static str {
    match kind {
        TopicKind::NonPartitioned => "non-partitioned",
        TopicKind::Partitioned { .. } => "partitioned",
        TopicKind::Scalable { .. } => "scalable",
    }
}

const ROUTING_MODES: &[(&str, RoutingMode)] =
    &[("RoundRobinPartition", RoutingMode::RoundRobinPartition), ("SinglePartition", RoutingMode::SinglePartition)];
const HASHING_SCHEMES: &[(&str, HashingScheme)] =
    &[("JavaStringHash", HashingScheme::JavaStringHash), ("Murmur3_32Hash", HashingScheme::Murmur3_32Hash)];
const BATCHERS: &[(&str, BatcherKind)] = &[("DEFAULT", BatcherKind::Default), ("KEY_BASED", BatcherKind::KeyBased)];

fn read_producer(v: &Value, path: &str, e: &mut Errors) -> Option<ProducerSpec> {
    let mut o = Obj::new(v, path, e)?;
    let name = o.req_str("name", e).map(str::to_string);
    let topic = o.req_str("topic", e).map(str::to_string);
    let routing = enum_field(&mut o, "messageRoutingMode", ROUTING_MODES, "routing mode", e).unwrap_or_default();
    let hashing = enum_field(&mut o, "hashingScheme", HASHING_SCHEMES, "hashing scheme", e).unwrap_or_default();
    let batching = match o.get("batching") {
        Some(b) => {
            let p = o.child_path("batching");
            read_batching(b, &p, e)
        }
        None => BatchingSpec::default(),
    };
    let latency_ms = o.u64_in("latencyMs", 0, MAX_LATENCY, e);
    let sends =
        bounded(o.array("sends", e), &o.child_path("sends"), e).into_iter().filter_map(|(p, v)| read_send(v, &p, e)).collect();
    o.finish(e);
    Some(ProducerSpec {
        name: non_empty(name?, &format!("{path}.name"), e)?,
        topic: topic?,
        routing,
        hashing,
        batching,
        latency_ms,
        sends,
    })
}

fn read_batching(v: &Value, path: &str, e: &mut Errors) -> BatchingSpec {
    let mut b = BatchingSpec::default();
    if let Value::Bool(on) = v {
        b.enabled = *on;
        return b;
    }
    let Some(mut o) = Obj::new(v, path, e) else { return b };
    if let Some(x) = o.bool("enabled", e) {
        b.enabled = x;
    }
    if let Some(x) = u32_field(&mut o, "maxMessages", 1, 100_000, e) {
        b.max_messages = x;
    }
    if let Some(x) = o.u64_in("maxPublishDelayMs", 0, MAX_LATENCY, e) {
        b.max_publish_delay_ms = x;
    }
    if let Some(x) = enum_field(&mut o, "batcher", BATCHERS, "batcher", e) {
        b.batcher = x;
    }
    o.finish(e);
    b
}

pub(super) fn read_send(v: &Value, path: &str, e: &mut Errors) -> Option<SendSpec> {
    let mut o = Obj::new(v, path, e)?;
    let at = o.u64_in("at", 0, MAX_TIME, e).unwrap_or(0);
    let count = o.u64_in("count", 0, MAX_MESSAGES_PER_SEND, e).unwrap_or(1);
    let interval_ms = o.u64_in("intervalMs", 0, MAX_TIME, e).unwrap_or(0);
    let burst = o.u64_in("burst", 1, MAX_MESSAGES_PER_SEND, e).unwrap_or(1);
    let key = o.str("key", e).map(str::to_string);
    let ordering_key = o.str("orderingKey", e).map(str::to_string);
    let body = o.str("body", e).unwrap_or("message {i}").to_string();
    let times_path = o.child_path("times");
    let items = o.array("times", e);
    if items.len() as u64 > MAX_MESSAGES_PER_SEND {
        e.push(&times_path, format!("too many send times ({}, at most {MAX_MESSAGES_PER_SEND})", items.len()));
    }
    let mut times: Vec<Millis> = Vec::new();
    for (p, v) in items.into_iter().take(MAX_MESSAGES_PER_SEND as usize) {
        if let Some(t) = as_u64_in(v, &p, 0, MAX_TIME, e) {
            if times.last().is_some_and(|last| t < *last) {
                e.push(&p, "send times must not decrease");
            }
            times.push(t);
        }
    }
    o.finish(e);
    let (at, count) = match times.first() {
        Some(first) => (*first, times.len() as u64),
        None => (at, count),
    };
    let bursts = count.div_ceil(burst);
    if !times.is_empty() || count == 0 || at.saturating_add(interval_ms.saturating_mul(bursts - 1)) <= MAX_TIME {
        Some(SendSpec { at, count: count as u32, interval_ms, burst: burst as u32, times, key, ordering_key, body })
    } else {
        e.push(path, format!("the last send would be after {MAX_TIME} ms"));
        None
    }
}

pub(super) const SUBSCRIPTION_TYPES: &[(&str, SubscriptionType)] = &[
    ("Exclusive", SubscriptionType::Exclusive),
    ("Shared", SubscriptionType::Shared),
    ("Failover", SubscriptionType::Failover),
    ("Key_Shared", SubscriptionType::KeyShared),
];
const SCALABLE_TYPES: &[(&str, ScalableConsumerType)] =
    &[("QUEUE", ScalableConsumerType::Queue), ("STREAM", ScalableConsumerType::Stream)];
const KEY_SHARED_MODES: &[(&str, KeySharedMode)] = &[("AUTO_SPLIT", KeySharedMode::AutoSplit), ("STICKY", KeySharedMode::Sticky)];
const INITIAL_POSITIONS: &[(&str, InitialPosition)] =
    &[("Latest", InitialPosition::Latest), ("Earliest", InitialPosition::Earliest)];

fn read_consumer(
    v: &Value,
    path: &str,
    e: &mut Errors,
    lifecycle: Option<&mut Vec<(TimedAction, String)>>,
) -> Option<ConsumerSpec> {
    let mut o = Obj::new(v, path, e)?;
    let name = o.req_str("name", e).map(str::to_string);
    let topic = o.req_str("topic", e).map(str::to_string);
    let subscription = o.req_str("subscription", e).map(str::to_string);
    let type_path = o.child_path("subscriptionType");
    let sub_type = o.str("subscriptionType", e).map(|s| one_of(s, SUBSCRIPTION_TYPES, "subscription type", &type_path, e));
    let consumer_type_path = o.child_path("consumerType");
    let consumer_type =
        o.str("consumerType", e).map(|s| one_of(s, SCALABLE_TYPES, "scalable consumer type", &consumer_type_path, e));
    let key_shared = match o.get("keySharedPolicy") {
        Some(k) => {
            let p = o.child_path("keySharedPolicy");
            Some(read_key_shared(k, &p, e))
        }
        None => None,
    };
    let initial_position =
        enum_field(&mut o, "subscriptionInitialPosition", INITIAL_POSITIONS, "initial position", e).unwrap_or_default();
    let priority_level = o.u64_in("priorityLevel", 0, i32::MAX as u64, e).unwrap_or(0) as i32;
    let receiver_queue_size =
        o.u64_in("receiverQueueSize", 0, MAX_RECEIVER_QUEUE, e).unwrap_or(u64::from(crate::defaults::RECEIVER_QUEUE_SIZE)) as u32;
    let ack_path = o.child_path("ack");
    let ack = match o.get("ack") {
        Some(a) => read_ack(a, &ack_path, e)?,
        None => AckSpec::default(),
    };
    let ack_group_time_ms = o.u64_in("acknowledgementsGroupTimeMs", 0, MAX_LATENCY, e).unwrap_or(ACKNOWLEDGEMENTS_GROUP_TIME_MS);
    let timeout_path = o.child_path("ackTimeoutMs");
    let ack_timeout_ms = o.u64_in("ackTimeoutMs", 0, MAX_TIME, e).unwrap_or(0);
    if ack_timeout_ms > 0 && ack_timeout_ms < ACK_TIMEOUT_MIN_MS {
        e.push(
            &timeout_path,
            format!("IllegalArgumentException: Ack timeout should be greater than 1000 ms (got {ack_timeout_ms} ms)"),
        );
    }
    let nack_delay_ms = o.u64_in("negativeAckRedeliveryDelayMs", 0, MAX_TIME, e).unwrap_or(NEGATIVE_ACK_REDELIVERY_DELAY_MS);
    let dead_letter = match o.get("deadLetterPolicy") {
        Some(d) => {
            let p = o.child_path("deadLetterPolicy");
            read_dead_letter(d, &p, e)
        }
        None => None,
    };
    let enable_retry = o.bool("enableRetry", e).unwrap_or(false);
    let latency_ms = o.u64_in("latencyMs", 0, MAX_LATENCY, e);
    let mut lifecycle_actions = Vec::new();
    if lifecycle.is_some() {
        let start_at = match o.get("startAt") {
            Some(Value::String(s)) if s == "never" => None,
            Some(v) => as_u64_in(v, &o.child_path("startAt"), 0, MAX_TIME, e),
            None => Some(0),
        };
        let close_at = o.u64_in("closeAt", 0, MAX_TIME, e);
        let crash_at = o.u64_in("crashAt", 0, MAX_TIME, e);
        let restart_at = o.u64_in("restartAt", 0, MAX_TIME, e);
        // A lifecycle that cannot happen in this order is refused, not silently reordered.
        for (key, at) in [("closeAt", close_at), ("crashAt", crash_at)] {
            if let (Some(at), Some(start)) = (at, start_at) {
                if at < start {
                    e.push(&o.child_path(key), format!("{key} {at} ms is before the consumer starts (startAt {start} ms)"));
                }
            }
        }
        if let Some(restart) = restart_at {
            match close_at.max(crash_at) {
                Some(down) if restart > down => {}
                Some(down) => e.push(
                    &o.child_path("restartAt"),
                    format!("restartAt {restart} ms is not after the consumer goes down at {down} ms (crashAt or closeAt)"),
                ),
                None => e.push(
                    &o.child_path("restartAt"),
                    "restartAt needs a crashAt or closeAt before it (the consumer is running)".to_string(),
                ),
            }
        }
        if let Some(n) = &name {
            let c = || n.clone();
            for (at, action) in [
                (start_at, Action::StartConsumer { consumer: c() }),
                (close_at, Action::CloseConsumer { consumer: c() }),
                (crash_at, Action::CrashConsumer { consumer: c() }),
                (restart_at, Action::StartConsumer { consumer: c() }),
            ] {
                if let Some(at) = at {
                    lifecycle_actions.push((TimedAction { at, action }, path.to_string()));
                }
            }
        }
    }
    o.finish(e);
    let kind = match (sub_type, consumer_type) {
        (Some(_), Some(_)) => {
            e.push(&consumer_type_path, "a consumer has either subscriptionType (v4 topics) or consumerType (scalable topics)");
            return None;
        }
        (_, Some(t)) => {
            if key_shared.is_some() {
                e.push(&format!("{path}.keySharedPolicy"), "keySharedPolicy needs subscriptionType Key_Shared");
            }
            ConsumerKind::Scalable(t?)
        }
        (t, None) => {
            let subscription_type = t.flatten().unwrap_or_default();
            if key_shared.is_some() && subscription_type != SubscriptionType::KeyShared {
                e.push(&format!("{path}.keySharedPolicy"), "keySharedPolicy needs subscriptionType Key_Shared");
            }
            let key_shared = (subscription_type == SubscriptionType::KeyShared).then(|| {
                key_shared.flatten().unwrap_or(KeySharedSpec {
                    mode: KeySharedMode::AutoSplit,
                    allow_out_of_order_delivery: false,
                    ranges: Vec::new(),
                })
            });
            ConsumerKind::Subscription { subscription_type, key_shared }
        }
    };
    let spec = ConsumerSpec {
        name: non_empty(name?, &format!("{path}.name"), e)?,
        topic: topic?,
        subscription: non_empty(subscription?, &format!("{path}.subscription"), e)?,
        kind,
        initial_position,
        priority_level,
        receiver_queue_size,
        ack,
        ack_group_time_ms,
        ack_timeout_ms,
        nack_delay_ms,
        dead_letter,
        enable_retry,
        latency_ms,
    };
    check_ack_fits(&spec, &ack_path, e);
    if let Some(timeline) = lifecycle {
        timeline.extend(lifecycle_actions);
    }
    Some(spec)
}

/// The client-side rules an ack behaviour must obey for this consumer.
pub(super) fn check_ack_fits(spec: &ConsumerSpec, ack_path: &str, e: &mut Errors) {
    let ty = spec.subscription_type();
    if spec.ack.mode == AckMode::Cumulative && !ty.is_single_active() {
        e.push(
            &format!("{ack_path}.mode"),
            format!(
                "cumulative acks are refused on a {} subscription ({})",
                ty.name(),
                crate::subscription::CumulativeAckNotAllowed
            ),
        );
    }
    if spec.ack.mode == AckMode::Retry && !spec.enable_retry {
        e.push(&format!("{ack_path}.mode"), "reconsumeLater needs enableRetry: true on the consumer");
    }
    // STREAM consumers only ack cumulatively (per segment); they cannot nack or reconsume later.
    if spec.scalable_type() == Some(ScalableConsumerType::Stream) && matches!(spec.ack.mode, AckMode::Nack | AckMode::Retry) {
        e.push(
            &format!("{ack_path}.mode"),
            format!("a STREAM consumer acks cumulatively; {:?} is not available", spec.ack.mode.name()),
        );
    }
}

fn read_key_shared(v: &Value, path: &str, e: &mut Errors) -> Option<KeySharedSpec> {
    let mut o = Obj::new(v, path, e)?;
    let mode = enum_field(&mut o, "mode", KEY_SHARED_MODES, "key_shared mode", e).unwrap_or_default();
    let allow_out_of_order_delivery = o.bool("allowOutOfOrderDelivery", e).unwrap_or(false);
    let ranges_path = o.child_path("ranges");
    let mut ranges = Vec::new();
    // Ranges written, valid or not: one out of bounds has its own error, not "must not be empty".
    let mut written = 0;
    for (p, r) in bounded(o.array("ranges", e), &ranges_path, e) {
        written += 1;
        match r {
            Value::Array(pair) if pair.len() == 2 => {
                let s = as_u64_in(&pair[0], &format!("{p}[0]"), 0, u64::from(KEY_HASH_RANGE_SIZE - 1), e);
                let t = as_u64_in(&pair[1], &format!("{p}[1]"), 0, u64::from(KEY_HASH_RANGE_SIZE - 1), e);
                if let (Some(s), Some(t)) = (s, t) {
                    if s > t {
                        e.push(&p, format!("ConsumerAssignException: Fixed hash range start > end for range: [{s},{t}]"));
                    }
                    ranges.push((s as u32, t as u32));
                }
            }
            other => e.push(&p, format!("expected a range [start, end], found {}", type_name(other))),
        }
    }
    o.finish(e);
    match mode {
        KeySharedMode::Sticky if written == 0 => {
            e.push(&ranges_path, "ConsumerAssignException: Ranges for KeyShared policy must not be empty.");
        }
        KeySharedMode::AutoSplit if !ranges.is_empty() => {
            e.push(&ranges_path, "ranges are only for STICKY mode");
        }
        _ => {}
    }
    if let Some((i, j)) = first_overlap(&ranges) {
        e.push(
            &format!("{ranges_path}[{j}]"),
            format!(
                "ConsumerAssignException: Consumer's own ranges conflict: [{},{}] overlaps with [{},{}]",
                ranges[i].0, ranges[i].1, ranges[j].0, ranges[j].1
            ),
        );
    }
    Some(KeySharedSpec { mode, allow_out_of_order_delivery, ranges })
}

/// The first pair of overlapping ranges (indexes into `ranges`), if any.
fn first_overlap(ranges: &[(u32, u32)]) -> Option<(usize, usize)> {
    for j in 0..ranges.len() {
        for i in 0..j {
            if ranges[i].0.max(ranges[j].0) <= ranges[i].1.min(ranges[j].1) {
                return Some((i, j));
            }
        }
    }
    None
}

pub(super) fn read_ack(v: &Value, path: &str, e: &mut Errors) -> Option<AckSpec> {
    if let Value::String(s) = v {
        return match AckMode::parse(s) {
            Some(mode) => Some(AckSpec { mode, ..AckSpec::default() }),
            None => {
                e.push(path, format!("unknown ack mode {s:?} (expected individual, cumulative, never, nack or retry)"));
                None
            }
        };
    }
    let mut o = Obj::new(v, path, e)?;
    let mode_path = o.child_path("mode");
    let mode = match o.str("mode", e) {
        Some(s) => match AckMode::parse(s) {
            Some(m) => m,
            None => {
                e.push(&mode_path, format!("unknown ack mode {s:?} (expected individual, cumulative, never, nack or retry)"));
                AckMode::Individual
            }
        },
        None => AckMode::Individual,
    };
    let process_ms = o.u64_in("processMs", 0, MAX_LATENCY, e).unwrap_or(0);
    let nack_first = u32_field(&mut o, "nackFirst", 0, 1_000_000, e).unwrap_or(0);
    let nack_keys = o.array("nackKeys", e).into_iter().filter_map(|(p, v)| as_str(v, &p, e).map(str::to_string)).collect();
    let retry_delay_ms = o.u64_in("retryDelayMs", 0, MAX_TIME, e).unwrap_or(0);
    o.finish(e);
    Some(AckSpec { mode, process_ms, nack_first, nack_keys, retry_delay_ms })
}

fn read_dead_letter(v: &Value, path: &str, e: &mut Errors) -> Option<DeadLetterSpec> {
    let mut o = Obj::new(v, path, e)?;
    let max_path = o.child_path("maxRedeliverCount");
    let max = o.req_u64_in("maxRedeliverCount", 0, 1_000_000, e);
    let dead_letter_topic = o.str("deadLetterTopic", e).map(str::to_string);
    let retry_letter_topic = o.str("retryLetterTopic", e).map(str::to_string);
    o.finish(e);
    if max == Some(0) {
        e.push(&max_path, "IllegalArgumentException: MaxRedeliverCount must be > 0.");
        return None;
    }
    Some(DeadLetterSpec { max_redeliver_count: max? as u32, dead_letter_topic, retry_letter_topic })
}

fn read_timed_action(v: &Value, path: &str, e: &mut Errors) -> Option<TimedAction> {
    let mut o = Obj::new(v, path, e)?;
    let at = o.req_u64_in("at", 0, MAX_TIME, e);
    let name = o.req_str("action", e)?;
    let consumer = |o: &mut Obj, e: &mut Errors| o.req_str("consumer", e).map(str::to_string);
    let segment = |o: &mut Obj, e: &mut Errors| o.req_u64_in("segment", 0, u64::from(u32::MAX), e);
    let action = match name {
        "addConsumer" => {
            let p = o.child_path("consumer");
            o.required("consumer", e).and_then(|c| read_consumer(c, &p, e, None)).map(|consumer| Action::AddConsumer { consumer })
        }
        "startConsumer" => consumer(&mut o, e).map(|consumer| Action::StartConsumer { consumer }),
        "closeConsumer" => consumer(&mut o, e).map(|consumer| Action::CloseConsumer { consumer }),
        "crashConsumer" => consumer(&mut o, e).map(|consumer| Action::CrashConsumer { consumer }),
        "redeliverUnacknowledged" => consumer(&mut o, e).map(|consumer| Action::RedeliverUnacknowledged { consumer }),
        "setAck" => {
            let c = consumer(&mut o, e);
            let p = o.child_path("ack");
            let ack = o.required("ack", e).and_then(|a| read_ack(a, &p, e));
            Some(Action::SetAck { consumer: c?, ack: ack? })
        }
        "produce" => {
            let producer = o.req_str("producer", e).map(str::to_string);
            let p = o.child_path("send");
            let send = o.required("send", e).and_then(|s| read_send(s, &p, e));
            match (at, producer, send) {
                (Some(at), Some(producer), Some(mut send)) => {
                    // A send script entered at `at` starts there (explicit times are kept).
                    if send.times.is_empty() {
                        send.at = at;
                    }
                    Some(Action::Produce { producer, send })
                }
                _ => None,
            }
        }
        "splitSegment" => {
            let topic = o.req_str("topic", e).map(str::to_string);
            let s = segment(&mut o, e);
            Some(Action::SplitSegment { topic: topic?, segment: s? })
        }
        "pruneSegment" => {
            let topic = o.req_str("topic", e).map(str::to_string);
            let s = segment(&mut o, e);
            Some(Action::PruneSegment { topic: topic?, segment: s? })
        }
        "mergeSegments" => {
            let topic = o.req_str("topic", e).map(str::to_string);
            let p = o.child_path("segments");
            let ids: Vec<Option<u64>> =
                o.array("segments", e).into_iter().map(|(p, v)| as_u64_in(v, &p, 0, u64::from(u32::MAX), e)).collect();
            let segments = match ids.as_slice() {
                [Some(a), Some(b)] => Some((*a, *b)),
                [_, _] => None,
                _ => {
                    e.push(&p, "expected two segment ids [a, b]");
                    None
                }
            };
            Some(Action::MergeSegments { topic: topic?, segments: segments? })
        }
        other => {
            e.push(
                &format!("{path}.action"),
                format!("unknown action {other:?} (expected one of: {})", Action::NAMES.join(", ")),
            );
            None
        }
    };
    o.finish(e);
    Some(TimedAction { at: at?, action: action? })
}
