//! Kind `kafka.subscription_state`: a `SubscriptionState` built from `given`, then `steps`.
//! Output `{"results": [...]}`; a failing step gives `{"error": ...}` and ends the run.
//!
//! A position's `leaderEpoch` is the epoch of its current leader (null: no leader known). In
//! `maybeValidatePositionForCurrentLeader` the leader is known and `leaderEpoch` is its epoch.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::read::{array, field, i32_of, i64_of, opt_i32, opt_i64, opt_string, string, strings};
use crate::conformance::error_value;
use crate::subscription_state::{
    FetchPosition, FetchState, IsolationLevel, LeaderAndEpoch, OffsetResetStrategy, SubscriptionError, SubscriptionState,
    SubscriptionType, TopicPartition, TopicPartitionState,
};

/// The broker id standing for "the current leader" (the vectors only give its epoch).
const LEADER: i32 = 0;

fn leader(epoch: Option<i32>) -> LeaderAndEpoch {
    match epoch {
        Some(e) => LeaderAndEpoch { leader: Some(LEADER), epoch: Some(e) },
        None => LeaderAndEpoch::unknown(),
    }
}

fn position(v: &Value, what: &str) -> Result<FetchPosition, String> {
    Ok(FetchPosition {
        offset: i64_of(field(v, "offset")?, &format!("{what}.offset"))?,
        offset_epoch: opt_i32(v.get("offsetEpoch"), &format!("{what}.offsetEpoch"))?,
        current_leader: leader(opt_i32(v.get("leaderEpoch"), &format!("{what}.leaderEpoch"))?),
    })
}

fn position_json(p: Option<FetchPosition>) -> Value {
    match p {
        None => Value::Null,
        Some(p) => json!({"offset": p.offset, "offsetEpoch": p.offset_epoch, "leaderEpoch": p.current_leader.epoch}),
    }
}

fn strategy(v: Option<&Value>, what: &str) -> Result<Option<OffsetResetStrategy>, String> {
    opt_string(v, what)?.map(|s| OffsetResetStrategy::parse(&s).map_err(|e| format!("{what}: {e}"))).transpose()
}

fn partition_ref(v: &Value, what: &str) -> Result<TopicPartition, String> {
    let pair = array(v, what)?;
    match pair.as_slice() {
        [t, p] => Ok(TopicPartition::new(string(t, what)?, i32_of(p, what)?)),
        _ => Err(format!("{what}: expected [topic, partition]")),
    }
}

fn partition_list(v: &Value, what: &str) -> Result<Vec<TopicPartition>, String> {
    array(v, what)?.iter().enumerate().map(|(i, x)| partition_ref(x, &format!("{what}[{i}]"))).collect()
}

fn given(v: &Value) -> Result<SubscriptionState, String> {
    let reset = strategy(v.get("autoOffsetReset"), "given.autoOffsetReset")?.unwrap_or(OffsetResetStrategy::Latest);
    let type_name = string(field(v, "subscriptionType")?, "given.subscriptionType")?;
    let subscription_type =
        SubscriptionType::from_name(&type_name).ok_or_else(|| format!("given.subscriptionType: unknown {type_name}"))?;
    let subscription: BTreeSet<String> = match v.get("subscription") {
        None | Some(Value::Null) => BTreeSet::new(),
        Some(s) => strings(s, "given.subscription")?.into_iter().collect(),
    };
    let mut partitions = Vec::new();
    for (i, p) in array(field(v, "partitions")?, "given.partitions")?.iter().enumerate() {
        let what = format!("given.partitions[{i}]");
        let state_name = string(field(p, "fetchState")?, &format!("{what}.fetchState"))?;
        let state = TopicPartitionState {
            fetch_state: FetchState::from_name(&state_name).ok_or_else(|| format!("{what}.fetchState: unknown {state_name}"))?,
            position: match p.get("position") {
                None | Some(Value::Null) => None,
                Some(x) => Some(position(x, &format!("{what}.position"))?),
            },
            high_watermark: opt_i64(p.get("highWatermark"), &format!("{what}.highWatermark"))?,
            last_stable_offset: opt_i64(p.get("lastStableOffset"), &format!("{what}.lastStableOffset"))?,
            paused: p.get("paused").and_then(Value::as_bool).unwrap_or(false),
            pending_revocation: p.get("pendingRevocation").and_then(Value::as_bool).unwrap_or(false),
            reset_strategy: strategy(p.get("resetStrategy"), &format!("{what}.resetStrategy"))?,
            ..TopicPartitionState::default()
        };
        let tp = TopicPartition::new(
            string(field(p, "topic")?, &format!("{what}.topic"))?,
            i32_of(field(p, "partition")?, &format!("{what}.partition"))?,
        );
        partitions.push((tp, state));
    }
    Ok(SubscriptionState::from_parts(reset, subscription_type, subscription, partitions))
}

/// One step: `Ok(Ok(result))`, `Ok(Err(upstream exception))`, or `Err` for a malformed step.
fn step(s: &mut SubscriptionState, st: &Value, i: usize) -> Result<Result<Value, SubscriptionError>, String> {
    let what = format!("steps[{i}]");
    let op = string(field(st, "op")?, &format!("{what}.op"))?;
    let tp = || partition_ref(field(st, "partition")?, &format!("{what}.partition"));
    let offset = || i64_of(field(st, "offset")?, &format!("{what}.offset"));
    let epochs_position = || -> Result<FetchPosition, String> {
        Ok(FetchPosition {
            offset: offset()?,
            offset_epoch: opt_i32(st.get("offsetEpoch"), &format!("{what}.offsetEpoch"))?,
            current_leader: leader(opt_i32(st.get("leaderEpoch"), &format!("{what}.leaderEpoch"))?),
        })
    };
    let done = |r: Result<(), SubscriptionError>| r.map(|_| Value::Null);
    Ok(match op.as_str() {
        "subscribe" => done(s.subscribe(strings(field(st, "topics")?, &what)?).map(drop)),
        "subscribePattern" => done(s.subscribe_pattern(string(field(st, "pattern")?, &what)?)),
        "assign" => done(s.assign_from_user(&partition_list(field(st, "partitions")?, &what)?).map(drop)),
        "assignFromSubscribed" => done(s.assign_from_subscribed(&partition_list(field(st, "partitions")?, &what)?)),
        "unsubscribe" => {
            s.unsubscribe();
            Ok(Value::Null)
        }
        "seek" | "seekValidated" => done(s.seek_validated(&tp()?, FetchPosition::at(offset()?))),
        "seekUnvalidated" => done(s.seek_unvalidated(&tp()?, epochs_position()?)),
        "setPosition" => done(s.set_position(&tp()?, FetchPosition::at(offset()?))),
        "requestOffsetReset" => done(s.request_offset_reset(&tp()?, strategy(st.get("strategy"), &what)?)),
        "maybeValidatePositionForCurrentLeader" => {
            let epoch = opt_i32(st.get("leaderEpoch"), &what)?;
            s.maybe_validate_position_for_current_leader(&tp()?, LeaderAndEpoch { leader: Some(LEADER), epoch }).map(Value::from)
        }
        "maybeCompleteValidation" => {
            let request = position(field(st, "requestPosition")?, &format!("{what}.requestPosition"))?;
            let end = i64_of(field(st, "endOffset")?, &format!("{what}.endOffset"))?;
            let epoch = i32_of(field(st, "epoch")?, &format!("{what}.epoch"))?;
            s.maybe_complete_validation(&tp()?, request, end, epoch).map(|t| match t {
                None => Value::Null,
                Some(t) => json!({
                    "fetchOffset": t.fetch_position.offset,
                    "divergentOffset": t.divergent.map(|d| d.0),
                    "divergentEpoch": t.divergent.map(|d| d.1),
                }),
            })
        }
        "resetInitializingPositions" => done(s.reset_initializing_positions()),
        "maybeSeekUnvalidated" => {
            let requested =
                strategy(st.get("requestedStrategy"), &what)?.ok_or_else(|| format!("{what}.requestedStrategy: missing"))?;
            done(s.maybe_seek_unvalidated(&tp()?, epochs_position()?, requested))
        }
        "pause" => done(s.pause(&tp()?)),
        "resume" => done(s.resume(&tp()?)),
        "markPendingRevocation" => done(s.mark_pending_revocation(&[tp()?])),
        "subscription" => Ok(Value::from(s.subscription().into_iter().collect::<Vec<_>>())),
        "subscriptionType" => Ok(Value::from(s.subscription_type().name())),
        "assignedPartitions" => {
            Ok(Value::Array(s.assigned_partitions().iter().map(|tp| json!([tp.topic, tp.partition])).collect()))
        }
        "fetchState" => s.fetch_state(&tp()?).map(|f| Value::from(f.name())),
        "position" => s.position(&tp()?).map(position_json),
        "position.offset" => s.position(&tp()?).map(|p| json!(p.map(|p| p.offset))),
        "position.offsetEpoch" => s.position(&tp()?).map(|p| json!(p.and_then(|p| p.offset_epoch))),
        "position.leaderEpoch" => s.position(&tp()?).map(|p| json!(p.and_then(|p| p.current_leader.epoch))),
        "hasValidPosition" => Ok(Value::from(s.has_valid_position(&tp()?))),
        "isFetchable" => Ok(Value::from(s.is_fetchable(&tp()?))),
        "resetStrategy" => s.reset_strategy(&tp()?).map(|r| json!(r.map(OffsetResetStrategy::name))),
        "partitionLag" => {
            let isolation = match string(field(st, "isolation")?, &what)?.as_str() {
                "read_committed" => IsolationLevel::ReadCommitted,
                "read_uncommitted" => IsolationLevel::ReadUncommitted,
                other => return Err(format!("{what}.isolation: unknown {other}")),
            };
            s.partition_lag(&tp()?, isolation).map(|l| json!(l))
        }
        other => return Err(format!("{what}.op: unknown {other}")),
    })
}

pub fn run(input: &Value) -> Result<Value, String> {
    let mut s = given(field(input, "given")?)?;
    let mut results = Vec::new();
    for (i, st) in array(field(input, "steps")?, "steps")?.iter().enumerate() {
        match step(&mut s, st, i)? {
            Ok(v) => results.push(v),
            Err(e) => {
                results.push(error_value(e.to_string()));
                break;
            }
        }
    }
    Ok(json!({ "results": results }))
}
