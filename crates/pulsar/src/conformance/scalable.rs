//! Kind `pulsar.scalable`: segment DAG operations, coordinator assignment, drain-poll backoff and
//! segment routing (spec §4). Layouts are written `initial(n).split(id).merge(a,b)`.

use serde_json::{json, Map, Value};

use super::error_value;
use super::input::{In, Res};
use crate::hash::{segment_hash, SegmentHashEra};
use crate::scalable::{
    compute_assignment, Assignment, AssignmentEra, Backoff, ControlledConsumerType, CoordinatorConfig, DrainState, LayoutError,
    ScalableTopicName, SegmentLayout, SubscriptionCoordinator,
};
use mqviz_engine::SplitMix64;

/// Layout timestamps are not part of any vector; every operation happens at time 0.
const NOW: i64 = 0;

fn layout_json(l: &SegmentLayout) -> Value {
    let segments: Vec<Value> = l
        .all_segments()
        .map(|s| {
            json!({
                "id": s.segment_id,
                "range": [s.hash_range.start, s.hash_range.end],
                "state": s.state.name(),
                "parents": s.parent_ids,
                "children": s.child_ids,
            })
        })
        .collect();
    json!({ "epoch": l.epoch, "nextSegmentId": l.next_segment_id, "segments": segments })
}

/// `input.layout`: an expression string, or a list of operations.
fn layout(i: &In<'_>, key: &str) -> Res<Result<SegmentLayout, LayoutError>> {
    match i.get(key) {
        Some(Value::String(expr)) => Ok(SegmentLayout::parse(expr, NOW)),
        Some(Value::Array(ops)) => {
            let ops: Vec<&str> =
                ops.iter().map(|o| o.as_str().ok_or(format!("input.{key}: entries must be strings"))).collect::<Res<_>>()?;
            Ok(SegmentLayout::from_ops(ops, NOW))
        }
        _ => Err(format!("input.{key}: missing or not a layout expression")),
    }
}

fn ids(i: &In<'_>, key: &str) -> Res<Vec<u64>> {
    match i.opt_array(key)? {
        None => Ok(Vec::new()),
        Some(list) => list.iter().map(|v| v.as_u64().ok_or(format!("input.{key}: entries must be segment ids"))).collect(),
    }
}

fn to_id(v: i64) -> Res<u64> {
    u64::try_from(v).map_err(|_| format!("segment id {v} is negative"))
}

fn era(i: &In<'_>) -> Res<AssignmentEra> {
    match i.opt_str("era")? {
        None => Ok(AssignmentEra::default()),
        Some(name) => AssignmentEra::parse(name).ok_or_else(|| format!("input.era: unknown era {name:?}")),
    }
}

fn assignment_json(a: &Assignment) -> Value {
    let mut out = Map::new();
    for (consumer, segments) in &a.by_consumer {
        out.insert(consumer.clone(), json!(segments.iter().map(|s| s.segment_id).collect::<Vec<_>>()));
    }
    Value::Object(out)
}

pub fn run(input: &Value) -> Res<Value> {
    let i = In::root(input)?;
    let op = i.op()?;
    let result: Result<Value, LayoutError> = match op {
        "initial_layout" => SegmentLayout::initial(i.i64("numInitialSegments")?, NOW).map(|l| layout_json(&l)),
        "split" => {
            let id = to_id(i.i64("split")?)?;
            layout(&i, "layout")?.and_then(|l| l.split(id, NOW)).map(|l| layout_json(&l))
        }
        "merge" => {
            let pair = i.ints("merge")?;
            let [a, b] = pair[..] else { return Err("input.merge: two segment ids".into()) };
            let (a, b) = (to_id(a)?, to_id(b)?);
            layout(&i, "layout")?.and_then(|l| l.merge(a, b, NOW)).map(|l| layout_json(&l))
        }
        "prune" => {
            let id = to_id(i.i64("prune")?)?;
            layout(&i, "layout")?.and_then(|l| l.prune(id)).map(|l| layout_json(&l))
        }
        "layout_ops" => layout(&i, "ops")?.map(|l| layout_json(&l)),
        "find_active_segment" => layout(&i, "layout")?.and_then(|l| {
            let found: Result<Vec<u64>, LayoutError> = i
                .ints("hashes")
                .map_err(LayoutError::BadExpression)?
                .into_iter()
                .map(|h| u32::try_from(h).map_err(|_| LayoutError::NoActiveSegmentCovers(0)))
                .map(|h| h.and_then(|h| l.find_active_segment(h).map(|s| s.segment_id)))
                .collect();
            found.map(|ids| json!({ "segmentIds": ids }))
        }),
        "segment_topic_name" => {
            let parent = match ScalableTopicName::parse(i.str("parent")?) {
                Ok(p) => p,
                Err(e) => return Ok(error_value(e.to_string())),
            };
            layout(&i, "layout")?.map(|l| {
                json!({ "names": l.all_segments().map(|s| parent.segment_topic(s.hash_range, s.segment_id)).collect::<Vec<_>>() })
            })
        }
        "compute_assignment" => return compute(&i),
        "coordinator_steps" => return coordinator_steps(&i),
        "drain_poll_delays" => {
            let initial = i.int_in("initialDelayMs", 1, i64::MAX)? as u64;
            let max = i.int_in("maxDelayMs", 1, i64::MAX)? as u64;
            let calls = i.int_in("calls", 0, 10_000)? as usize;
            let delays: Vec<Value> = Backoff::bounds_sequence(initial, max, calls)
                .iter()
                .enumerate()
                .map(|(n, b)| json!({ "call": n + 1, "nominalMs": b.nominal_ms, "minMs": b.min_ms, "maxMs": b.max_ms }))
                .collect();
            Ok(json!({ "delays": delays }))
        }
        "route_key" => {
            let name = i.str("hashEra")?;
            let hash_era = SegmentHashEra::parse(name).ok_or_else(|| format!("input.hashEra: unknown era {name:?}"))?;
            let keys = i.strings("keys")?;
            layout(&i, "layout")?.and_then(|l| {
                let mut out = Map::new();
                for key in keys {
                    let h = segment_hash(key.as_bytes(), hash_era);
                    let segment = l.find_active_segment(u32::from(h))?.segment_id;
                    out.insert(key.to_string(), json!({ "segmentHash": h, "segment": segment }));
                }
                Ok(json!({ "byKey": out }))
            })
        }
        "defaults" => return super::defaults("pulsar.scalable", input),
        other => return Err(format!("input.op: unknown operation {other:?}")),
    };
    Ok(result.unwrap_or_else(|e| error_value(e.to_string())))
}

fn compute(i: &In<'_>) -> Res<Value> {
    let l = match layout(i, "layout")? {
        Ok(l) => l,
        Err(e) => return Ok(error_value(e.to_string())),
    };
    let consumers: Vec<String> = i.strings("consumers")?.into_iter().map(str::to_string).collect();
    let drain = DrainState {
        checker_installed: i.bool_or("drainCheckerInstalled", false)?,
        drained: ids(i, "drained")?.into_iter().collect(),
    };
    let a = compute_assignment(&l, &consumers, &drain, era(i)?, None);
    Ok(json!({ "assignment": assignment_json(&a) }))
}

/// Drives a real coordinator: the consumers come back as restored sessions (so registering
/// cannot install a checker by itself), `drained` is what earlier polls saw.
fn coordinator_steps(i: &In<'_>) -> Res<Value> {
    let l = match layout(i, "layout")? {
        Ok(l) => l,
        Err(e) => return Ok(error_value(e.to_string())),
    };
    let config = CoordinatorConfig { era: era(i)?, ..CoordinatorConfig::default() };
    let mut c = SubscriptionCoordinator::new(l, None, config, i.bool_or("drainCheckerInstalled", false)?, SplitMix64::new(0));
    let consumers: Vec<String> = i.strings("consumers")?.into_iter().map(str::to_string).collect();
    c.restore(&consumers, 0);
    c.mark_segments_drained(&ids(i, "drained")?, 0);
    let mut results = Vec::new();
    for step in i.array("steps")? {
        let s = In::item(step, "input.steps[]")?;
        let result = match s.op()? {
            "computeAssignment" => assignment_json(&c.current_assignment()),
            "installDrainChecker" => {
                c.install_drain_checker(0);
                c.mark_segments_drained(&ids(&s, "drained")?, 0);
                Value::Null
            }
            "markSegmentsDrained" | "markDrained" => {
                c.mark_segments_drained(&ids(&s, "drained")?, 0);
                Value::Null
            }
            "registerConsumer" | "register" => {
                let kind = match s.opt_str("type")?.unwrap_or("STREAM") {
                    "STREAM" => ControlledConsumerType::Stream,
                    "CHECKPOINT" => ControlledConsumerType::Checkpoint,
                    other => return Err(format!("input.steps[].type: unknown consumer type {other:?}")),
                };
                c.register(s.str("consumer")?, kind, 0);
                Value::Null
            }
            "unregisterConsumer" | "unregister" => {
                c.unregister(s.str("consumer")?);
                Value::Null
            }
            "onLayoutChange" | "layoutChange" => match layout(&s, "layout")? {
                Ok(l) => {
                    c.on_layout_change(l, 0);
                    Value::Null
                }
                Err(e) => {
                    results.push(error_value(e.to_string()));
                    break;
                }
            },
            other => return Err(format!("input.steps[].op: unknown step {other:?}")),
        };
        results.push(result);
    }
    Ok(json!({ "results": results }))
}
