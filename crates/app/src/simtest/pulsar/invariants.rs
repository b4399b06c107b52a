//! The Pulsar model's invariants, each derived from shared/specs/pulsar.md and checked against the
//! broker's state after every step and the causal log, not against the report.

use std::collections::BTreeMap;

use crate::simtest::{Property, Violation};
use mqviz_engine::Millis;
use mqviz_model::Simulation;
use mqviz_pulsar::events::Event;
use mqviz_pulsar::key_shared::HoldReason;
use mqviz_pulsar::scenario::{ConsumerKind, ScalableConsumerType};
use mqviz_pulsar::subscription::SubscriptionType;
use mqviz_pulsar::world::{hold_reason_text, Dispatcher, World};

/// The invariants below, as `mqviz fuzz --list` prints them.
pub const PROPERTIES: &[Property] = &[
    Property { name: "key-shared-order", asserts: "in a Key_Shared subscription that keeps order (no allowOutOfOrderDelivery, the PIP-379 implementation), entries of one sticky-key hash are never pending on two consumers at once: a consumer gets a hash only after the one before acked what it had of it" },
    Property { name: "mark-delete-monotonic", asserts: "a cursor's markDelete position never moves backwards" },
    Property { name: "single-active-dispatch", asserts: "an Exclusive or Failover subscription dispatches each read to one consumer only" },
    Property { name: "stream-parent-drained", asserts: "a STREAM consumer receives from a child segment only once every parent segment is drained for its subscription (unless the run reproduced apache/pulsar#26274, logged as an upstream gap)" },
    Property { name: "no-silent-stall", asserts: "once settled, no message stored before the churn stopped is undelivered to a subscription for no reason but \"not dispatched yet\" while one of its consumers has permits and nothing was dispatched for 10 s, nor held for a recent joiner when no consumer is restricted any more" },
];

/// What the step checks remember between steps.
#[derive(Debug, Default)]
pub struct Watch {
    seen: usize,
    /// (partition, subscription) -> the last markDelete position seen.
    mark_delete: BTreeMap<(u32, u32), i64>,
    /// (partition, subscription) -> when it last dispatched.
    last_dispatch: BTreeMap<(u32, u32), Millis>,
    /// apache/pulsar#26274 was reproduced: a sealed child may be read before its parent drained.
    sealed_child_gap: bool,
}

/// How long a subscription with undelivered messages and a consumer with permits may go without
/// dispatching before it counts as stalled: longer than any nack delay, ack timeout or failover
/// delay the generator draws.
const STALL: Millis = 10_000;

fn violation(out: &mut Vec<Violation>, invariant: &'static str, at: Millis, detail: String) {
    out.push(Violation { invariant, at, detail });
}

pub(super) fn world(sim: &dyn Simulation) -> &World {
    sim.as_any().downcast_ref::<World>().expect("the Pulsar target runs Pulsar worlds")
}

/// Checks at the end of the run.
pub fn check_end(scenario: &serde_json::Value, w: &World, watch: &Watch, out: &mut Vec<Violation>) {
    if w.budget_stop.is_some() {
        return;
    }
    let quiet = scenario["until"].as_u64().unwrap_or(0).saturating_sub(super::generate::SETTLE);
    let report = mqviz_pulsar::report::report_json(w);
    let never = report["messages"]["neverDelivered"].as_array().cloned().unwrap_or_default();
    let joined_recently = hold_reason_text(HoldReason::RecentlyJoined);
    for m in never {
        let reason = m["reason"].as_str().unwrap_or_default();
        if reason.ends_with(joined_recently) {
            // Held for a recent joiner: true only while some consumer is still restricted.
            let part =
                m["msg"].as_u64().and_then(|id| w.messages.get(id as usize)).map(|msg| &w.partitions[msg.partition as usize]);
            let sub =
                part.and_then(|p| p.subscription(m["subscription"].as_str().unwrap_or_default()).map(|si| &p.subscriptions[si]));
            if let Some(Dispatcher::KeyShared(ks)) = sub.and_then(|s| s.dispatcher.as_ref()) {
                if ks.recently_joined().is_empty() {
                    violation(
                        out,
                        "no-silent-stall",
                        w.now,
                        format!("message {} is held for a recent joiner, but none is restricted", m["id"]),
                    );
                    return;
                }
            }
            continue;
        }
        if !reason.starts_with("not dispatched yet") {
            continue;
        }
        let Some(msg) = m["msg"].as_u64().and_then(|id| w.messages.get(id as usize)) else { continue };
        if msg.out.born_at > quiet {
            continue;
        }
        let part = &w.partitions[msg.partition as usize];
        let sub_name = m["subscription"].as_str().unwrap_or_default();
        let Some(si) = part.subscription(sub_name) else { continue };
        let sub = &part.subscriptions[si];
        let idle_since = watch.last_dispatch.get(&(msg.partition, si as u32)).copied().unwrap_or(0);
        if w.now.saturating_sub(idle_since) > STALL && sub.members.values().any(|member| member.permits > 0) {
            violation(
                out,
                "no-silent-stall",
                w.now,
                format!(
                    "{}/{sub_name}: message {} was never delivered, nothing was dispatched since t={idle_since} though a consumer has permits: {reason}",
                    part.name, m["id"]
                ),
            );
            return;
        }
    }
}

fn sub_label(w: &World, partition: u32, sub: u32) -> String {
    let p = &w.partitions[partition as usize];
    let name = p.subscriptions.get(sub as usize).map(|s| s.name.to_string()).unwrap_or_default();
    format!("{}/{name}", p.name)
}

/// Checks after one step: the log entries it added, then the dispatchers' state.
pub fn check_step(w: &World, watch: &mut Watch, out: &mut Vec<Violation>) {
    for e in w.log.iter_from(watch.seen as u32) {
        match e.kind {
            Event::CursorCreated { partition, sub, mark_delete, .. }
            | Event::CursorRestored { partition, sub, mark_delete, .. } => {
                watch.mark_delete.insert((partition, sub), mark_delete);
            }
            Event::AcksApplied { partition, sub, mark_delete, .. } => {
                let last = watch.mark_delete.entry((partition, sub)).or_insert(mark_delete);
                if mark_delete < *last {
                    violation(
                        out,
                        "mark-delete-monotonic",
                        e.at,
                        format!(
                            "{}: markDelete went from {last} back to {mark_delete} (#{})",
                            sub_label(w, partition, sub),
                            e.id.0
                        ),
                    );
                }
                *last = (*last).max(mark_delete);
            }
            Event::Dispatched { partition, sub, .. } => {
                watch.last_dispatch.insert((partition, sub), e.at);
            }
            Event::UpstreamGap { ref gap } => watch.sealed_child_gap |= gap.issue == "apache/pulsar#26274",
            Event::Received { consumer, msg, .. } if !watch.sealed_child_gap => {
                check_parents_drained(w, consumer, msg, e.at, out);
            }
            _ => {}
        }
        match e.kind {
            Event::Dispatched { partition, sub, consumers, .. } if consumers > 1 => {
                let single = w.partitions[partition as usize]
                    .subscriptions
                    .get(sub as usize)
                    .is_some_and(|s| matches!(s.sub_type, SubscriptionType::Exclusive | SubscriptionType::Failover));
                if single {
                    violation(
                        out,
                        "single-active-dispatch",
                        e.at,
                        format!("{}: one read went to {consumers} consumers (#{})", sub_label(w, partition, sub), e.id.0),
                    );
                }
            }
            _ => {}
        }
    }
    watch.seen = w.log.len();
    check_key_order(w, out);
}

/// A STREAM consumer's message from a child segment: every parent's cursor for its subscription
/// must have nothing left (a sealed segment takes no more messages, so drained stays drained).
fn check_parents_drained(w: &World, consumer: u32, msg: u32, at: Millis, out: &mut Vec<Violation>) {
    let c = &w.consumers[consumer as usize];
    if !matches!(c.spec.kind, ConsumerKind::Scalable(ScalableConsumerType::Stream)) {
        return;
    }
    let part = &w.partitions[w.messages[msg as usize].partition as usize];
    let (Some(segment), Some(scalable)) = (part.segment, w.topics[part.topic as usize].scalable.as_ref()) else { return };
    let Some(info) = scalable.layout.segment(segment) else { return };
    for parent in &info.parent_ids {
        let Some(&pp) = scalable.segment_partitions.get(parent) else { continue };
        let parent_part = &w.partitions[pp as usize];
        let Some(s) = parent_part.subscription(&c.subscription) else { continue };
        let backlog = parent_part.subscriptions[s].cursor.backlog();
        if backlog > 0 {
            violation(
                out,
                "stream-parent-drained",
                at,
                format!(
                    "{} received from segment {segment} while its parent segment {parent} still had {backlog} for {}",
                    c.name, c.subscription
                ),
            );
        }
    }
}

fn check_key_order(w: &World, out: &mut Vec<Violation>) {
    for (pi, p) in w.partitions.iter().enumerate() {
        for (si, s) in p.subscriptions.iter().enumerate() {
            let Some(Dispatcher::KeyShared(d)) = &s.dispatcher else { continue };
            // The classic implementation (PIP-282 "recently joined consumers") promises less: a
            // consumer that joined late is given replayed entries below its join mark whoever
            // holds later entries of their keys, so a nack or a redelivery reorders a key across
            // consumers. That is the upstream behaviour PIP-379 replaced (fuzz seeds 45, 224).
            if d.config.allow_out_of_order_delivery || d.config.classic {
                continue;
            }
            let mut holder: BTreeMap<u32, (&str, i64)> = BTreeMap::new();
            for c in d.consumers() {
                for position in c.pending_positions() {
                    let Some(hash) = c.pending_hash(position) else { continue };
                    match holder.get(&hash) {
                        Some((other, at)) if *other != c.name.as_str() => {
                            violation(
                                out,
                                "key-shared-order",
                                w.now,
                                format!(
                                    "{}: hash {hash} is pending on {other} (entry {at}) and on {} (entry {position})",
                                    sub_label(w, pi as u32, si as u32),
                                    c.name
                                ),
                            );
                            return;
                        }
                        _ => {
                            holder.insert(hash, (c.name.as_str(), position));
                        }
                    }
                }
            }
        }
    }
}
