//! Kind `pulsar.cursor`: cursor bookkeeping, ack rules, DLQ naming and flow, subscribe conflicts
//! (spec §1, §2).

use serde_json::{json, Map, Value};

use super::error_value;
use super::input::{In, Res};
use crate::cursor::{
    default_dead_letter_topic, default_retry_letter_topic, partition_dead_letter_topic, DeadLetterPolicy, InitialPosition,
    ManagedCursor,
};
use crate::subscription::{
    check_cumulative_ack, subscribe, Connecting, ExistingDispatcher, KeySharedMode, KeySharedPolicy, SubscriptionType,
};

/// A topic of `entries` entries `0..entries` in one ledger, and a new subscription's cursor on it.
fn new_cursor(i: &In<'_>) -> Res<ManagedCursor> {
    let entries = i.int_in("entries", 0, i64::MAX / 2)?;
    let name = i.opt_str("initialPosition")?.unwrap_or("Latest");
    let initial = InitialPosition::parse(name).ok_or_else(|| format!("input.initialPosition: unknown position {name:?}"))?;
    Ok(ManagedCursor::create(initial, 0, entries - 1))
}

fn cursor_state(c: &ManagedCursor) -> Value {
    json!({ "markDelete": c.mark_delete(), "individuallyAcked": c.individually_acked(), "backlog": c.backlog() })
}

fn subscription_type(name: &str, what: &str) -> Res<SubscriptionType> {
    SubscriptionType::parse(name).ok_or_else(|| format!("{what}: unknown subscription type {name:?}"))
}

fn key_shared_policy(i: &In<'_>, prefix: &str) -> Res<KeySharedPolicy> {
    let mode = match i.opt_str(&format!("{prefix}KeySharedMode"))? {
        None => KeySharedMode::default(),
        Some(m) => KeySharedMode::parse(m).ok_or_else(|| format!("input.{prefix}KeySharedMode: unknown mode {m:?}"))?,
    };
    Ok(KeySharedPolicy { mode, allow_out_of_order_delivery: i.bool_or(&format!("{prefix}AllowOutOfOrderDelivery"), false)? })
}

pub fn run(input: &Value) -> Res<Value> {
    let i = In::root(input)?;
    match i.op()? {
        "cursor_sequence" => {
            let mut c = new_cursor(&i)?;
            let mut after = Vec::new();
            for op in i.array("ops")? {
                let (kind, position) = match op.as_array().map(Vec::as_slice) {
                    Some([k, p]) => (k.as_str(), p.as_i64()),
                    _ => return Err("input.ops[]: each op is [\"ack\" | \"cumulative\", id]".into()),
                };
                let position = position.ok_or("input.ops[][1]: an entry id")?;
                let outcome = match kind {
                    Some("ack") => c.ack(position),
                    Some("cumulative") => c.ack_cumulative(position),
                    _ => return Err("input.ops[][0]: \"ack\" or \"cumulative\"".into()),
                };
                match outcome {
                    Ok(_) => after.push(cursor_state(&c)),
                    Err(e) => {
                        after.push(error_value(e.to_string()));
                        break;
                    }
                }
            }
            Ok(json!({ "after": after }))
        }
        "cursor_initial" => {
            let c = new_cursor(&i)?;
            Ok(json!({ "markDelete": c.mark_delete(), "backlog": c.backlog() }))
        }
        "cumulative_ack" => {
            let mut out = Map::new();
            for name in i.strings("subscriptionTypes")? {
                let verdict = match SubscriptionType::parse(name).map(check_cumulative_ack) {
                    Some(Ok(())) => json!("accepted"),
                    Some(Err(e)) => error_value(e.to_string()),
                    None => error_value(format!("IllegalArgumentException: unknown subscription type {name}")),
                };
                out.insert(name.to_string(), verdict);
            }
            Ok(Value::Object(out))
        }
        "dlq_names" => {
            let (topic, subscription) = (i.str("topic")?, i.str("subscription")?);
            let mut out = Map::new();
            out.insert("deadLetterTopic".into(), json!(default_dead_letter_topic(topic, subscription)));
            out.insert("retryLetterTopic".into(), json!(default_retry_letter_topic(topic, subscription)));
            if let Some(p) = i.opt_i64("partitionIndex")? {
                let p = u32::try_from(p).map_err(|_| "input.partitionIndex: not a partition index")?;
                out.insert("partitionDeadLetterTopic".into(), json!(partition_dead_letter_topic(topic, p, subscription)));
            }
            Ok(Value::Object(out))
        }
        "dlq_flow" => {
            let max = i.int_in("maxRedeliverCount", i64::from(i32::MIN), 1_000_000)?;
            let policy = u32::try_from(max).ok().and_then(|m| DeadLetterPolicy::new(m, "topic", "subscription").ok());
            Ok(match policy {
                Some(p) => json!({ "redeliveryCountsSeenByApp": p.counts_seen_when_always_nacked() }),
                None => error_value("IllegalArgumentException: MaxRedeliverCount must be > 0."),
            })
        }
        "subscribe" => {
            let existing = match i.opt_str("existingType")? {
                None => None,
                Some(t) => Some(ExistingDispatcher {
                    subscription_type: subscription_type(t, "input.existingType")?,
                    key_shared: key_shared_policy(&i, "existing")?,
                    connected_consumers: i.int_in("connectedConsumers", 0, i64::from(u32::MAX))? as u32,
                }),
            };
            let connecting = Connecting {
                subscription_type: subscription_type(i.str("newType")?, "input.newType")?,
                key_shared: key_shared_policy(&i, "new")?,
            };
            Ok(match subscribe(existing, connecting) {
                Ok(t) => json!({ "dispatcherType": t.name() }),
                Err(e) => error_value(e.to_string()),
            })
        }
        "defaults" => super::defaults("pulsar.cursor", input),
        other => Err(format!("input.op: unknown operation {other:?}")),
    }
}
