//! Kind `pulsar.shared_dispatch`: `getNextConsumer` sequences (spec §1.3). Consumer ids may be any
//! JSON value; each pick consumes one permit.

use serde_json::{json, Value};

use super::input::{as_u32, In, Res};
use crate::shared_dispatch::{SharedConsumer, SharedConsumerList};

/// Consumers by the order they were first seen; the index is the internal id.
struct Ids(Vec<Value>);

impl Ids {
    fn intern(&mut self, id: &Value) -> u64 {
        match self.0.iter().position(|v| v == id) {
            Some(i) => i as u64,
            None => {
                self.0.push(id.clone());
                (self.0.len() - 1) as u64
            }
        }
    }

    fn find(&self, id: &Value) -> Option<u64> {
        self.0.iter().position(|v| v == id).map(|i| i as u64)
    }
}

fn consumer(v: &Value, ids: &mut Ids) -> Res<SharedConsumer> {
    let c = In::item(v, "input.consumer")?;
    let id = c.get("id").ok_or("input.consumer.id: missing")?;
    let priority = i32::try_from(c.opt_i64("priority")?.unwrap_or(0)).map_err(|_| "input.consumer.priority: not a Java int")?;
    let permits = as_u32(c.get("permits").unwrap_or(&json!(0)), "input.consumer.permits")?;
    let mut sc = SharedConsumer::new(ids.intern(id), priority, permits);
    sc.blocked = c.bool_or("blocked", false)?;
    Ok(sc)
}

pub fn run(input: &Value) -> Res<Value> {
    let i = In::root(input)?;
    match i.op()? {
        "shared_next_consumer_sequence" => {
            let mut ids = Ids(Vec::new());
            let mut list = SharedConsumerList::new();
            for c in i.array("consumersInAddOrder")? {
                list.add(consumer(c, &mut ids)?);
            }
            let mut selected = Vec::new();
            for op in i.array("ops")? {
                let o = In::item(op, "input.ops[]")?;
                match o.op()? {
                    "next" => {
                        for _ in 0..o.int_in("times", 0, 1_000_000)? {
                            let picked = list.next_consumer_id();
                            if let Some(c) = picked.and_then(|id| list.get_mut(id)) {
                                c.permits -= 1;
                            }
                            selected.push(picked.map(|id| ids.0[id as usize].clone()).unwrap_or(Value::Null));
                        }
                    }
                    "add" => list.add(consumer(o.get("consumer").ok_or("input.ops[].consumer: missing")?, &mut ids)?),
                    "remove" => {
                        let id = o.get("consumer").map(|c| c.get("id").unwrap_or(c)).ok_or("input.ops[].consumer: missing")?;
                        if let Some(internal) = ids.find(id) {
                            list.remove(internal);
                        }
                    }
                    other => return Err(format!("input.ops[].op: unknown operation {other:?}")),
                }
            }
            Ok(json!({ "selected": selected }))
        }
        "defaults" => super::defaults("pulsar.shared_dispatch", input),
        other => Err(format!("input.op: unknown operation {other:?}")),
    }
}
