//! Kind `pulsar.failover`: which consumer is active (spec §1.2). `failover_sequence` drives the
//! real `SingleActiveDispatcher`, so membership changes re-run the pick as upstream does.

use serde_json::{json, Value};

use super::input::{In, Res};
use crate::failover::{pick_active, ActivePickConfig, FailoverEra, FailoverMember, SingleActiveDispatcher, SingleActiveMode};

pub fn run(input: &Value) -> Res<Value> {
    let i = In::root(input)?;
    match i.op()? {
        "failover_pick" => {
            let config = pick_config(&i)?;
            let members = i
                .array("consumersInSubscribeOrder")?
                .iter()
                .enumerate()
                .map(|(n, c)| member(c, n as u64))
                .collect::<Res<Vec<_>>>()?;
            let active = pick_active(&members, &config).map(|m| members[m].name.clone());
            Ok(json!({ "active": active }))
        }
        "failover_sequence" => {
            let mut dispatcher = SingleActiveDispatcher::new(SingleActiveMode::Failover, pick_config(&i)?);
            let mut after = Vec::new();
            for (n, step) in i.array("steps")?.iter().enumerate() {
                let s = In::item(step, "input.steps[]")?;
                let consumer = s.object("consumer", "input.steps[].consumer")?;
                match s.op()? {
                    "add" => {
                        // Failover admits any number of consumers; the add cannot be refused.
                        let _ = dispatcher.add(member(consumer.value, n as u64)?);
                    }
                    "remove" => {
                        let name = consumer.str("name")?;
                        if let Some(id) = dispatcher.members.iter().find(|m| m.name == name).map(|m| m.consumer_id) {
                            dispatcher.remove(id);
                        }
                    }
                    other => return Err(format!("input.steps[].op: unknown step {other:?}")),
                }
                after.push(dispatcher.active_member().map(|m| m.name.clone()));
            }
            Ok(json!({ "activeAfterEachStep": after }))
        }
        "defaults" => super::defaults("pulsar.failover", input),
        other => Err(format!("input.op: unknown operation {other:?}")),
    }
}

fn member(v: &Value, consumer_id: u64) -> Res<FailoverMember> {
    let c = In::item(v, "input.consumer")?;
    let priority = c.opt_i64("priority")?.unwrap_or(0);
    let priority = i32::try_from(priority).map_err(|_| "input.consumer.priority: not a Java int".to_string())?;
    Ok(FailoverMember { consumer_id, name: c.str("name")?.to_string(), priority })
}

fn pick_config(i: &In<'_>) -> Res<ActivePickConfig> {
    let partition_index = i.int_in("partitionIndex", i64::from(i32::MIN), i64::from(i32::MAX))? as i32;
    let era = match i.opt_str("era")? {
        None | Some("current") => FailoverEra::Current,
        Some("pre-3.0") => FailoverEra::Pre30,
        Some(other) => return Err(format!("input.era: unknown era {other:?}")),
    };
    let consistent = i.bool_or("activeConsumerFailoverConsistentHashing", false)?;
    let needs_ring = (partition_index < 0 && era == FailoverEra::Current) || consistent;
    let topic_name = match i.opt_str("topicName")? {
        Some(t) => t.to_string(),
        None if needs_ring => return Err("input.topicName: the hash-ring pick needs the full topic name".into()),
        None => String::new(),
    };
    Ok(ActivePickConfig { partition_index, topic_name, consistent_hashing_for_partitions: consistent, era })
}
