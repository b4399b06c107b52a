//! Kind `pulsar.routing`: the Java client's message routers (spec §3).

use serde_json::{json, Value};

use super::input::{In, Res};
use crate::hash::HashingScheme;
use crate::routing::{default_partition_switch_ms, partition_topic_name, PartitionRouter};

pub fn run(input: &Value) -> Res<Value> {
    let i = In::root(input)?;
    match i.op()? {
        "choose_partition" => {
            let mut router = match router(&i) {
                Ok(r) => r,
                Err(Refused(e)) => return Ok(super::error_value(e)),
                Err(Malformed(e)) => return Err(e),
            };
            let key = i.opt_str("key")?;
            let now = i.opt_i64("clockMillis")?.unwrap_or(0);
            Ok(json!({ "partition": router.choose_partition(key, now) }))
        }
        "choose_partition_sequence" => {
            let mut router = match router(&i) {
                Ok(r) => r,
                Err(Refused(e)) => return Ok(super::error_value(e)),
                Err(Malformed(e)) => return Err(e),
            };
            let clocks = match i.opt_array("clockMillisPerCall")? {
                Some(list) => list
                    .iter()
                    .map(|v| v.as_i64().ok_or_else(|| "input.clockMillisPerCall: entries must be integers".to_string()))
                    .collect::<Res<Vec<i64>>>()?,
                None => vec![0; i.int_in("messages", 0, 1_000_000)? as usize],
            };
            let keys: Vec<Option<&str>> = match i.opt_array("keys")? {
                Some(list) => list.iter().map(Value::as_str).collect(),
                None => vec![None; clocks.len()],
            };
            if keys.len() != clocks.len() {
                return Err("input.keys: one entry per call".into());
            }
            let partitions: Vec<u32> = clocks.iter().zip(keys).map(|(&now, key)| router.choose_partition(key, now)).collect();
            Ok(json!({ "partitions": partitions }))
        }
        "partition_names" => {
            let topic = i.str("topic")?;
            let n = i.int_in("numPartitions", 0, 100_000)? as u32;
            Ok(json!({ "partitions": (0..n).map(|p| partition_topic_name(topic, p)).collect::<Vec<_>>() }))
        }
        "defaults" => super::defaults("pulsar.routing", input),
        other => Err(format!("input.op: unknown operation {other:?}")),
    }
}

enum BuildError {
    /// The input cannot be read.
    Malformed(String),
    /// Upstream would refuse this configuration.
    Refused(String),
}
use BuildError::{Malformed, Refused};

impl From<String> for BuildError {
    fn from(e: String) -> Self {
        Malformed(e)
    }
}

fn router(i: &In<'_>) -> Result<PartitionRouter, BuildError> {
    let partitions = i.int_in("numPartitions", i64::from(i32::MIN), i64::from(i32::MAX))?;
    let partitions = u32::try_from(partitions).unwrap_or(0);
    let scheme = match i.opt_str("hashingScheme")? {
        None => HashingScheme::default(),
        Some(name) => HashingScheme::parse(name).ok_or_else(|| format!("input.hashingScheme: unknown scheme {name:?}"))?,
    };
    let built = match i.opt_str("mode")?.unwrap_or("RoundRobinPartition") {
        "RoundRobinPartition" => {
            let start = i.opt_i64("startPtnIdx")?.unwrap_or(0);
            let window = if i.bool_or("batchingEnabled", true)? {
                let ms = i.opt_i64("partitionSwitchMs")?.map(|v| v.max(1) as u64).unwrap_or_else(default_partition_switch_ms);
                Some(ms)
            } else {
                None
            };
            PartitionRouter::round_robin(partitions, scheme, start, window)
        }
        "SinglePartition" => {
            let fixed = i.i64("fixedPartition")?;
            PartitionRouter::single_partition(partitions, scheme, fixed)
        }
        other => return Err(Malformed(format!("input.mode: unsupported mode {other:?}"))),
    };
    built.map_err(|e| Refused(e.to_string()))
}
