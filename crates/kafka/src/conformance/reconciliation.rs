//! Kind `kafka.reconciliation`: one `CurrentAssignmentBuilder.build()`. The current partition
//! epoch is given per topic (every partition of a topic has the same owner epoch).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::read::{field, i32_of, object, string, topic_sets, topic_sets_json};
use crate::conformance::error_value;
use crate::reconciliation::{reconcile, MemberAssignment, MemberState};

fn member(v: &Value) -> Result<MemberAssignment, String> {
    let state = string(field(v, "state")?, "member.state")?;
    Ok(MemberAssignment {
        state: MemberState::from_name(&state).ok_or_else(|| format!("member.state: unknown {state}"))?,
        member_epoch: i32_of(field(v, "epoch")?, "member.epoch")?,
        previous_member_epoch: i32_of(field(v, "previousEpoch")?, "member.previousEpoch")?,
        assigned: topic_sets(field(v, "assigned")?, "member.assigned")?,
        pending_revocation: topic_sets(field(v, "pendingRevocation")?, "member.pendingRevocation")?,
    })
}

pub fn run(input: &Value) -> Result<Value, String> {
    let current = member(field(input, "member")?)?;
    let target_epoch = i32_of(field(input, "targetEpoch")?, "targetEpoch")?;
    let target = topic_sets(field(input, "target")?, "target")?;
    let epochs: BTreeMap<String, i32> = match input.get("currentPartitionEpoch") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(v) => object(v, "currentPartitionEpoch")?
            .iter()
            .map(|(t, e)| Ok((t.clone(), i32_of(e, &format!("currentPartitionEpoch.{t}"))?)))
            .collect::<Result<_, String>>()?,
    };
    let owned = match input.get("ownedInHeartbeat") {
        None | Some(Value::Null) => None,
        Some(v) => Some(topic_sets(v, "ownedInHeartbeat")?),
    };
    let next = reconcile(&current, target_epoch, &target, |t, _| epochs.get(t).copied().unwrap_or(-1), owned.as_ref());
    Ok(match next {
        Ok(m) => json!({
            "state": m.state.name(),
            "epoch": m.member_epoch,
            "previousEpoch": m.previous_member_epoch,
            "assigned": topic_sets_json(&m.assigned),
            "pendingRevocation": topic_sets_json(&m.pending_revocation),
        }),
        Err(e) => error_value(e.to_string()),
    })
}
