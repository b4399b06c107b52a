//! Kind `pulsar.key_shared`: the three selectors, the draining tracker and sticky keys (spec §1.4).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::error_value;
use super::input::{as_u32, ranges, In, Res};
use crate::defaults::KEY_SHARED_CONSISTENT_HASHING_REPLICA_POINTS;
use crate::hash::{consistent_sticky_hash, sticky_key_hash_in_range, KEY_HASH_RANGE_SIZE};
use crate::key_shared::consistent_ring::{point_hash, point_key};
use crate::key_shared::{
    sticky_key, ConsistentHashRing, DrainingHashesTracker, EntryKeys, RangeSplitSelector, StickyKeySelector, StickyRangeSelector,
    UnblockNotice,
};

/// Consumer instances by name. Each add is a new instance (upstream consumers are objects, and two
/// may share a name); a remove takes the earliest live instance of that name.
#[derive(Default)]
struct Instances {
    names: Vec<String>,
    live: Vec<bool>,
}

impl Instances {
    fn add(&mut self, name: &str) -> u64 {
        self.names.push(name.to_string());
        self.live.push(true);
        (self.names.len() - 1) as u64
    }

    /// The earliest live instance named `name`, marked gone.
    fn take(&mut self, name: &str) -> Option<u64> {
        let i = (0..self.names.len()).find(|&i| self.live[i] && self.names[i] == name)?;
        self.live[i] = false;
        Some(i as u64)
    }

    /// The instance a tracker op names: the same name is the same consumer.
    fn by_name(&mut self, name: &str) -> u64 {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i as u64,
            None => self.add(name),
        }
    }

    fn label(&self, id: u64) -> String {
        self.names.get(id as usize).cloned().unwrap_or_default()
    }

    fn name(&self, id: u64) -> Value {
        self.names.get(id as usize).map(|n| Value::String(n.clone())).unwrap_or(Value::Null)
    }
}

fn replica_points(i: &In<'_>) -> Res<u32> {
    Ok(i.opt_i64("replicaPoints")?.map(|v| v.clamp(0, 100_000) as u32).unwrap_or(KEY_SHARED_CONSISTENT_HASHING_REPLICA_POINTS))
}

/// A ring with one consumer per name in add order (repeated names get the next name index).
fn ring(i: &In<'_>, key: &str) -> Res<ConsistentHashRing> {
    let mut r = ConsistentHashRing::new(replica_points(i)?);
    for (n, name) in i.strings(key)?.into_iter().enumerate() {
        r.add(n as u64, name);
    }
    Ok(r)
}

/// Ring consumers are keyed by add position; their names label the output.
fn ring_labels(i: &In<'_>, key: &str) -> Res<Vec<String>> {
    Ok(i.strings(key)?.into_iter().map(str::to_string).collect())
}

fn ranges_json(by: &BTreeMap<u64, Vec<(u32, u32)>>, label: impl Fn(u64) -> String) -> Value {
    let mut out = Map::new();
    for (&c, list) in by {
        let entry = out.entry(label(c)).or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = entry {
            items.extend(list.iter().map(|&(s, e)| json!([s, e])));
        }
    }
    Value::Object(out)
}

fn range_size(i: &In<'_>) -> Res<u32> {
    Ok(match i.opt_i64("rangeSize")? {
        Some(v) => u32::try_from(v).map_err(|_| "input.rangeSize: not a non-negative int")?,
        None => KEY_HASH_RANGE_SIZE,
    })
}

/// The sticky hash a range selector of `size` slots gives a key: `makeHash % size`, 0 → 1.
fn range_hash(key: &str, size: u32) -> u32 {
    sticky_key_hash_in_range(key.as_bytes(), 0, size.max(1) - 1)
}

/// A STICKY consumer's id and its `KeySharedMeta` ranges (`None`: no metadata at all).
type StickyConsumer = (u64, Option<Vec<(u32, u32)>>);

fn sticky_consumer(v: &Value, names: &mut Instances) -> Res<StickyConsumer> {
    let c = In::item(v, "input.consumer")?;
    let id = names.add(c.str("id")?);
    let r = match c.get("ranges") {
        None => None,
        Some(r) => Some(ranges(r, "input.consumer.ranges")?),
    };
    Ok((id, r))
}

pub fn run(input: &Value) -> Res<Value> {
    let i = In::root(input)?;
    match i.op()? {
        "consistent_ring_ranges" => {
            let labels = ring_labels(&i, "consumersInAddOrder")?;
            let r = ring(&i, "consumersInAddOrder")?;
            let by = StickyKeySelector::ConsistentHashing(r).ranges_by_consumer();
            Ok(json!({ "rangesByConsumer": ranges_json(&by, |c| labels[c as usize].clone()) }))
        }
        "consistent_ring_points" => {
            let points = replica_points(&i)?;
            let mut r = ConsistentHashRing::new(0);
            let mut out = Map::new();
            for (n, name) in i.strings("consumers")?.into_iter().enumerate() {
                r.add(n as u64, name);
                let index = r.name_index(n as u64).unwrap_or(0);
                out.insert(name.to_string(), json!((0..points).map(|p| point_hash(name, index, p)).collect::<Vec<_>>()));
            }
            Ok(json!({ "pointsByConsumer": out }))
        }
        "consistent_ring_stats" => {
            let labels = ring_labels(&i, "consumersInAddOrder")?;
            let r = ring(&i, "consumersInAddOrder")?;
            let (mut count, mut covered) = (Map::new(), Map::new());
            for a in r.assignments() {
                let label = labels[a.consumer as usize].clone();
                let n = count.get(&label).and_then(Value::as_u64).unwrap_or(0);
                count.insert(label.clone(), json!(n + 1));
                let s = covered.get(&label).and_then(Value::as_u64).unwrap_or(0);
                covered.insert(label, json!(s + u64::from(a.end - a.start + 1)));
            }
            Ok(json!({ "rangeCount": count, "coveredSlots": covered }))
        }
        "consistent_name_index" => {
            let mut r = ConsistentHashRing::new(replica_points(&i)?);
            let (mut index, mut hex, mut first) = (Map::new(), Map::new(), Map::new());
            for (n, c) in i.array("consumers")?.iter().enumerate() {
                let c = In::item(c, "input.consumers[]")?;
                let (id, name) = (c.str("id")?, c.str("name")?);
                r.add(n as u64, name);
                let k = r.name_index(n as u64).unwrap_or(0);
                index.insert(id.to_string(), json!(k));
                hex.insert(id.to_string(), json!(point_key(name, k, 0).bytes().map(|b| format!("{b:02x}")).collect::<String>()));
                first.insert(id.to_string(), json!(point_hash(name, k, 0)));
            }
            Ok(json!({ "nameIndex": index, "firstPointKeyHex": hex, "firstPoint": first }))
        }
        "consistent_select" => {
            let labels = ring_labels(&i, "consumersInAddOrder")?;
            let mut r = ring(&i, "consumersInAddOrder")?;
            for gone in i.opt_array("thenRemoved")?.map(Vec::as_slice).unwrap_or_default() {
                let gone = gone.as_str().ok_or("input.thenRemoved: entries must be strings")?;
                // The earliest instance of that name still on the ring.
                if let Some(pos) = (0..labels.len()).find(|&p| labels[p] == gone && r.contains(p as u64)) {
                    r.remove(pos as u64);
                }
            }
            let mut out = Map::new();
            for key in i.strings("keys")? {
                let c = r.select(consistent_sticky_hash(key.as_bytes()));
                out.insert(key.to_string(), c.map(|c| json!(labels[c as usize])).unwrap_or(Value::Null));
            }
            Ok(json!({ "consumerByKey": out }))
        }
        "autosplit_ranges" | "autosplit_select" => autosplit(&i),
        "autosplit_ranges_sequence" => autosplit_sequence(&i),
        "sticky_steps" => sticky_steps(&i),
        "sticky_ranges" | "sticky_add_consumer" => sticky_add(&i),
        "draining_tracker" => draining(&i),
        "sticky_key_bytes" => {
            let mut out = Vec::new();
            for c in i.array("cases")? {
                let c = In::item(c, "input.cases[]")?;
                let keys = EntryKeys {
                    ordering_key: c.opt_str("orderingKey")?.map(str::as_bytes),
                    partition_key: c.opt_str("partitionKey")?,
                    partition_key_b64_encoded: c.bool_or("partitionKeyB64Encoded", false)?,
                };
                out.push(match sticky_key(keys) {
                    Ok(bytes) => json!(String::from_utf8_lossy(&bytes)),
                    Err(e) => error_value(e.to_string()),
                });
            }
            Ok(json!({ "stickyKeyUtf8": out }))
        }
        "defaults" => super::defaults("pulsar.key_shared", input),
        other => Err(format!("input.op: unknown operation {other:?}")),
    }
}

fn autosplit(i: &In<'_>) -> Res<Value> {
    let size = range_size(i)?;
    let mut s = match RangeSplitSelector::new(size) {
        Ok(s) => s,
        Err(e) => return Ok(error_value(e.to_string())),
    };
    let mut names = Instances::default();
    for name in i.strings("consumersInAddOrder")? {
        if let Err(e) = s.add(names.add(name)) {
            return Ok(error_value(e.to_string()));
        }
    }
    if i.op()? == "autosplit_ranges" {
        let by = StickyKeySelector::RangeSplit(s).ranges_by_consumer();
        return Ok(json!({ "rangesByConsumer": ranges_json(&by, |c| names.label(c)) }));
    }
    let mut out = Map::new();
    for key in i.strings("keys")? {
        out.insert(key.to_string(), s.select(range_hash(key, size)).map(|c| names.name(c)).unwrap_or(Value::Null));
    }
    Ok(json!({ "consumerByKey": out }))
}

fn autosplit_sequence(i: &In<'_>) -> Res<Value> {
    let mut s = match RangeSplitSelector::new(range_size(i)?) {
        Ok(s) => s,
        Err(e) => return Ok(error_value(e.to_string())),
    };
    let mut names = Instances::default();
    let mut after = Vec::new();
    for step in i.array("steps")? {
        let st = In::item(step, "input.steps[]")?;
        let name = st.str("consumer")?;
        let outcome = match st.op()? {
            "add" => s.add(names.add(name)).map_err(|e| e.to_string()),
            "remove" => {
                if let Some(id) = names.take(name) {
                    s.remove(id);
                }
                Ok(())
            }
            other => return Err(format!("input.steps[].op: unknown step {other:?}")),
        };
        if let Err(e) = outcome {
            after.push(error_value(e));
            break;
        }
        after.push(json!(s.assignments().iter().map(|a| json!([a.start, a.end, names.name(a.consumer)])).collect::<Vec<_>>()));
    }
    Ok(json!({ "rangesAfterEachStep": after }))
}

fn sticky_selector(i: &In<'_>) -> Res<Result<StickyRangeSelector, Value>> {
    Ok(StickyRangeSelector::new(range_size(i)?).map_err(|e| error_value(e.to_string())))
}

fn sticky_steps(i: &In<'_>) -> Res<Value> {
    let mut s = match sticky_selector(i)? {
        Ok(s) => s,
        Err(e) => return Ok(e),
    };
    let mut names = Instances::default();
    let mut results = Vec::new();
    for step in i.array("steps")? {
        let st = In::item(step, "input.steps[]")?;
        match st.op()? {
            "add" => {
                let (id, r) = sticky_consumer(st.get("consumer").ok_or("input.steps[].consumer: missing")?, &mut names)?;
                if let Err(e) = s.add(id, r.as_deref()) {
                    results.push(error_value(e.to_string()));
                    break;
                }
                results.push(Value::Null);
            }
            "remove" => {
                if let Some(id) = names.take(st.str("consumer")?) {
                    s.remove(id);
                }
                results.push(Value::Null);
            }
            "select" => {
                let h = as_u32(st.get("hash").ok_or("input.steps[].hash: missing")?, "input.steps[].hash")?;
                results.push(s.select(h).map(|c| names.name(c)).unwrap_or(Value::Null));
            }
            other => return Err(format!("input.steps[].op: unknown step {other:?}")),
        }
    }
    Ok(json!({ "results": results }))
}

/// `sticky_ranges` adds `consumers`; `sticky_add_consumer` adds `existing` then `new`. Either gives
/// the ranges by consumer, or the first rejection.
fn sticky_add(i: &In<'_>) -> Res<Value> {
    let mut s = match sticky_selector(i)? {
        Ok(s) => s,
        Err(e) => return Ok(e),
    };
    let mut names = Instances::default();
    let mut all: Vec<&Value> = Vec::new();
    if i.op()? == "sticky_ranges" {
        all.extend(i.array("consumers")?);
    } else {
        all.extend(i.array("existing")?);
        all.push(i.get("new").ok_or("input.new: missing")?);
    }
    for c in all {
        let (id, r) = sticky_consumer(c, &mut names)?;
        if let Err(e) = s.add(id, r.as_deref()) {
            return Ok(error_value(e.to_string()));
        }
    }
    let by = StickyKeySelector::Sticky(s).ranges_by_consumer();
    Ok(json!({ "rangesByConsumer": ranges_json(&by, |c| names.label(c)) }))
}

/// Records what the tracker passed to its unblocking callback (-1 for a batch, as upstream).
fn note(notice: Option<UnblockNotice>, unblocked: &mut Vec<i64>) {
    match notice {
        Some(UnblockNotice::Hash(h)) => unblocked.push(i64::from(h)),
        Some(UnblockNotice::Batch) => unblocked.push(-1),
        None => {}
    }
}

fn draining(i: &In<'_>) -> Res<Value> {
    let mut t = DrainingHashesTracker::new();
    let mut names = Instances::default();
    let mut unblocked: Vec<i64> = Vec::new();
    let mut results = Vec::new();
    for op in i.array("ops")? {
        let args = op.as_array().ok_or("input.ops[]: each op is a list")?;
        let name = args.first().and_then(Value::as_str).ok_or("input.ops[][0]: the operation name")?;
        let consumer = |n: usize, names: &mut Instances| -> Res<u64> {
            args.get(n)
                .and_then(Value::as_str)
                .map(|c| names.by_name(c))
                .ok_or_else(|| format!("input.ops[][{n}]: a consumer name"))
        };
        let hash = |n: usize| -> Res<u32> { as_u32(args.get(n).unwrap_or(&Value::Null), "input.ops[]: hash") };
        let outcome: Result<Value, String> = match name {
            "addEntry" => t.add_entry(consumer(1, &mut names)?, hash(2)?).map(|()| Value::Null).map_err(|e| e.to_string()),
            "shouldBlock" => Ok(json!(t.should_block(consumer(1, &mut names)?, hash(2)?))),
            "reduceRefCount" => {
                let closing = args.get(3).and_then(Value::as_bool).unwrap_or(false);
                match t.reduce_ref_count(consumer(1, &mut names)?, hash(2)?, closing) {
                    Ok(n) => {
                        note(n, &mut unblocked);
                        Ok(Value::Null)
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
            "getEntry" => Ok(t
                .entry(hash(1)?)
                .map(|e| json!({ "consumer": names.name(e.consumer), "refCount": e.ref_count }))
                .unwrap_or(Value::Null)),
            "unblockedHashes" => Ok(json!(unblocked)),
            "startBatch" => {
                t.start_batch();
                Ok(Value::Null)
            }
            "endBatch" => {
                note(t.end_batch(), &mut unblocked);
                Ok(Value::Null)
            }
            other => return Err(format!("input.ops[][0]: unknown operation {other:?}")),
        };
        match outcome {
            Ok(v) => results.push(v),
            Err(e) => {
                results.push(error_value(e));
                break;
            }
        }
    }
    Ok(json!({ "results": results }))
}
