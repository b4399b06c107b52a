//! The run report: per consumer what it received and acked; per subscription the cursor of each
//! partition or segment (markDelete, ack holes, backlog) and who owned which partition, key range
//! or segment over time; every message that was redelivered, dead-lettered or never delivered,
//! with the reason traced through the causal log (event ids); upstream gaps and era notes; and
//! warnings that spell out their consequence.

use mqviz_engine::sort::StableSort;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::events::{Event, MsgId};
use super::message_id::MessageId;
use super::scalable::is_assignable;
use super::scenario::AckMode;
use super::subscription::{KeySharedMode, SubscriptionType};
use super::world::{hold_reason_text, ClientState, Dispatcher, TopicRole, World};
use mqviz_engine::{BitSet, EventId};
use mqviz_model::{Fate, Totals};

fn message_id(w: &World, m: MsgId) -> MessageId {
    let msg = &w.messages[m as usize];
    MessageId { ledger_id: w.partitions[msg.partition as usize].ledger_id, entry_id: msg.entry, batch_index: msg.batch_index }
}

/// Provenance events of every original message (copies count for their original).
fn provenance(w: &World) -> BTreeMap<MsgId, Vec<EventId>> {
    let mut by_root: BTreeMap<MsgId, Vec<EventId>> = BTreeMap::new();
    for &(m, e) in &w.msg_events {
        let root = w.messages.get(m as usize).map_or(m, |x| x.root(m));
        by_root.entry(root).or_default().push(e);
    }
    for events in by_root.values_mut() {
        events.stable_sort();
        events.dedup();
    }
    by_root
}

fn received_json(w: &World, r: &super::world::ReceivedRecord) -> Value {
    let m = &w.messages[r.msg as usize];
    json!({
        "msg": r.msg,
        "id": message_id(w, r.msg).to_string(),
        "key": w.key_text(m.out.key),
        "topic": &*w.partitions[m.partition as usize].name,
        "redeliveryCount": r.redelivery_count,
        "at": w.received_at(r),
        "event": r.event.0,
    })
}

fn consumers_json(w: &World) -> Map<String, Value> {
    let mut out = Map::new();
    for c in &w.consumers {
        let kind = match c.spec.scalable_type() {
            Some(t) => t.name().to_string(),
            None => c.spec.subscription_type().name().to_string(),
        };
        out.insert(
            c.name.to_string(),
            json!({
                "topic": &*w.topics[c.topic as usize].name,
                "subscription": &*c.subscription,
                "type": kind,
                "state": state_name(c.state),
                "failure": c.failure,
                "ack": c.ack.mode.name(),
                "received": c.received.iter().map(|r| received_json(w, r)).collect::<Vec<_>>(),
                "acked": c.acked.iter().map(|&m| message_id(w, m).to_string()).collect::<Vec<_>>(),
                "assignedSegments": c.assigned_segments,
                "stats": {
                    "received": c.stats.received, "acked": c.stats.acked, "nacked": c.stats.nacked,
                    "ackTimeouts": c.stats.ack_timeouts, "deadLettered": c.stats.dead_lettered,
                    "reconsumed": c.stats.reconsumed, "flows": c.stats.flows,
                },
            }),
        );
    }
    out
}

fn state_name(s: ClientState) -> &'static str {
    match s {
        ClientState::NotStarted => "not started",
        ClientState::Running => "running",
        ClientState::Closed => "closed",
        ClientState::Crashed => "crashed",
        ClientState::Failed => "failed",
    }
}

fn subscriptions_json(w: &World) -> Vec<Value> {
    let mut out = Vec::new();
    for (g, (t, sub_name)) in w.groups.iter().enumerate() {
        let topic = &w.topics[*t as usize];
        let mut partitions = Vec::new();
        let mut key_ranges = Vec::new();
        let mut sub_type = None;
        for &p in &topic.partitions {
            let part = &w.partitions[p as usize];
            let Some(s) = part.subscription(sub_name) else { continue };
            let sub = &part.subscriptions[s];
            if sub.dispatcher.is_some() || sub_type.is_none() {
                sub_type = Some(sub.sub_type);
            }
            let holes: Vec<Value> = sub
                .cursor
                .individually_acked_ranges()
                .iter()
                .map(|&(a, b)| json!([part.position_id(a).to_string(), part.position_id(b).to_string()]))
                .collect();
            partitions.push(json!({
                "name": &*part.name,
                "segment": part.segment,
                "markDelete": part.position_id(sub.cursor.mark_delete()).to_string(),
                "readPosition": part.position_id(sub.cursor.read_position()).to_string(),
                "ackHoles": holes,
                "backlog": sub.cursor.backlog(),
                "lastEntry": part.position_id(part.last_entry()).to_string(),
                "terminated": part.terminated,
            }));
            if let Some(Dispatcher::KeyShared(ks)) = &sub.dispatcher {
                for (id, ranges) in ks.selector.ranges_by_consumer() {
                    let name = w.member_consumer_name(p, s as u32, id).map(|n| n.to_string());
                    key_ranges.push(json!({"partition": &*part.name, "consumer": name, "ranges": ranges}));
                }
            }
        }
        let owners: Vec<Value> = w
            .owners
            .iter()
            .filter(|o| o.group as usize == g)
            .map(|o| json!({"at": o.at, "event": o.event.0, "what": o.what, "owner": o.owner.as_deref()}))
            .collect();
        let scalable = topic.scalable.as_ref().and_then(|s| s.coordinators.get(sub_name)).map(|c| {
            let a = c.current_assignment();
            let assignment: Map<String, Value> =
                a.by_consumer.iter().map(|(n, segs)| (n.clone(), json!(segs.iter().map(|s| s.segment_id).collect::<Vec<_>>()))).collect();
            json!({
                "consumerType": "STREAM",
                "layoutEpoch": c.layout().epoch,
                "drainCheckerInstalled": c.drain_state().checker_installed,
                "drained": c.drain_state().drained,
                "assignment": assignment,
                "sessions": c.sessions().iter().map(|(n, s)| json!({"consumer": n, "connected": s.connected, "graceDeadline": s.grace_deadline})).collect::<Vec<_>>(),
                "nextDrainPoll": c.scheduled_poll().map(|(_, at)| at),
                "gaps": a.gaps.iter().map(|g| json!({"issue": g.issue(), "gap": format!("{g:?}")})).collect::<Vec<_>>(),
            })
        });
        // On a scalable topic the consumer type says more than the per-segment dispatcher's.
        let kind = match topic.scalable.as_ref() {
            Some(s) if s.coordinators.contains_key(sub_name) => Some("STREAM (Exclusive per segment)"),
            Some(_) => Some("QUEUE (Shared per segment)"),
            None => sub_type.map(|t| t.name()),
        };
        out.push(json!({
            "topic": &*topic.name,
            "subscription": &**sub_name,
            "type": kind,
            "partitions": partitions,
            "owners": owners,
            "keyRanges": key_ranges,
            "scalable": scalable,
            "warnings": group_warnings(w, g),
        }));
    }
    out
}

fn topics_json(w: &World) -> Vec<Value> {
    w.topics
        .iter()
        .map(|t| {
            let layout = t.scalable.as_ref().map(|s| {
                s.layout
                    .all_segments()
                    .map(|seg| {
                        json!({
                            "segment": seg.segment_id, "range": seg.hash_range.hex(), "state": seg.state.name(),
                            "parents": seg.parent_ids, "children": seg.child_ids,
                            "createdAtEpoch": seg.created_at_epoch, "sealedAtEpoch": seg.sealed_at_epoch,
                        })
                    })
                    .collect::<Vec<_>>()
            });
            json!({
                "name": &*t.name,
                "role": match t.role { TopicRole::User => "topic", TopicRole::DeadLetter => "dead letter", TopicRole::Retry => "retry" },
                "partitions": t.partitions.iter().map(|&p| {
                    let part = &w.partitions[p as usize];
                    let messages: u32 = part.entries.iter().map(|e| e.messages).sum();
                    json!({"name": &*part.name, "ledger": part.ledger_id, "entries": part.entries.len(),
                           "messages": messages, "terminated": part.terminated, "deleted": part.deleted, "segment": part.segment})
                }).collect::<Vec<_>>(),
                "layout": layout,
            })
        })
        .collect()
}

/// One line of a message's story: what happened and the event that says so.
fn story_step(w: &World, e: EventId) -> Option<(String, u32)> {
    let entry = w.log.get(e)?;
    let name = |c: u32| w.consumers.get(c as usize).map_or("?", |x| &x.name);
    let text = match &entry.kind {
        Event::Nacked { consumer, .. } => format!("negatively acked by {}", name(*consumer)),
        Event::ReturnedToReplay { consumer, reason, .. } => {
            format!("back in the replay set from {} ({})", name(*consumer), reason.name())
        }
        Event::ConsumerRemoved { consumer, .. } => {
            format!("{} left with it unacked; it went back for redelivery", name(*consumer))
        }
        Event::Rewound { consumer, .. } => {
            format!("cursor rewound for {} (redeliver-all on Exclusive/Failover)", name(*consumer))
        }
        Event::ActiveSwitched { active, .. } => format!("failover to {}: cursor rewound to markDelete+1", name(*active)),
        Event::DeadLettered { consumer, dead_letter_partition, deliveries, .. } => format!(
            "{} sent it to {} after {deliveries} deliveries",
            name(*consumer),
            w.partitions[*dead_letter_partition as usize].name
        ),
        Event::Reconsumed { consumer, retry_partition, reconsume_times, .. } => format!(
            "{} reconsumed it later via {} (RECONSUMETIMES {reconsume_times})",
            name(*consumer),
            w.partitions[*retry_partition as usize].name
        ),
        _ => return None,
    };
    Some((text, e.0))
}

fn messages_json(w: &World, prov: &BTreeMap<MsgId, Vec<EventId>>) -> Value {
    let deliveries = received(w).deliveries;
    let mut redelivered = Vec::new();
    let mut dead_lettered = Vec::new();
    for (&m, events) in prov {
        let steps: Vec<(String, u32)> = events.iter().filter_map(|&e| story_step(w, e)).collect();
        let n = deliveries.get(m as usize).copied().unwrap_or(0);
        let base = |w: &World| {
            let msg = &w.messages[m as usize];
            json!({"msg": m, "id": message_id(w, m).to_string(), "key": w.key_text(msg.out.key),
                   "topic": &*w.partitions[msg.partition as usize].name, "deliveries": n})
        };
        if let Some((text, e)) =
            steps.iter().find(|(_, e)| matches!(w.log.get(EventId(*e)).map(|x| x.kind), Some(Event::DeadLettered { .. })))
        {
            let mut v = base(w);
            v["reason"] = json!(text);
            v["event"] = json!(e);
            v["story"] = json!(steps.iter().map(|(t, e)| json!({"what": t, "event": e})).collect::<Vec<_>>());
            dead_lettered.push(v);
        } else if n > 1 || !steps.is_empty() {
            let mut v = base(w);
            v["story"] = json!(steps.iter().map(|(t, e)| json!({"what": t, "event": e})).collect::<Vec<_>>());
            redelivered.push(v);
        }
    }
    json!({"redelivered": redelivered, "deadLettered": dead_lettered, "neverDelivered": never_delivered(w, prov)})
}

/// Calls `f(topic, partition, subscription, entry, message)` for every message of a
/// subscription's topic that none of its consumers received and that was not dead-lettered.
/// The report lists these as never delivered, and `totals` counts them.
fn for_each_never_delivered(w: &World, received: &Received, mut f: impl FnMut(u32, u32, usize, usize, MsgId)) {
    for (g, (t, sub_name)) in w.groups.iter().enumerate() {
        let received = &received.by_group[g];
        for &p in &w.topics[*t as usize].partitions {
            let part = &w.partitions[p as usize];
            let Some(s) = part.subscription(sub_name) else { continue };
            for (entry, e) in part.entries.iter().enumerate() {
                if w.read_before_snapshot(p, s, entry as i64) {
                    continue;
                }
                for m in e.first_msg..e.first_msg + e.messages {
                    if !received.contains(m) && w.fates.get(m as usize) != Some(&Fate::DeadLettered) {
                        f(*t, p, s, entry, m);
                    }
                }
            }
        }
    }
}

/// What the applications received, by root message (a retry or dead-letter copy counts for its
/// original), gathered in one pass for the report and the outcome line. As maps these were
/// most of `totals`' 440 ms native at the end of a 1 M-message Key_Shared run; looking each
/// record's message up for its root was most of what was left (`copy_of` answers it).
struct Received {
    /// Deliveries per message id, over every consumer.
    deliveries: Vec<u32>,
    /// What each `w.groups` entry (a subscription) received.
    by_group: Vec<BitSet>,
}

fn received(w: &World) -> Received {
    let root = |m: MsgId| if w.copy_of.is_empty() { m } else { w.copy_of.get(&m).copied().unwrap_or(m) };
    let mut out = Received {
        deliveries: vec![0; w.messages.len()],
        by_group: vec![BitSet::with_capacity(w.messages.len()); w.groups.len()],
    };
    for c in &w.consumers {
        let groups: Vec<usize> =
            (0..w.groups.len()).filter(|&g| w.groups[g].0 == c.topic && w.groups[g].1 == c.subscription).collect();
        for r in &c.received {
            let m = root(r.msg);
            out.deliveries[m as usize] += 1;
            for &g in &groups {
                out.by_group[g].insert(m);
            }
        }
    }
    out
}

/// The counts the report's lists give, as the page's outcome sentence says them: messages
/// delivered more than once (and not dead-lettered), and messages a subscription never received.
pub fn totals(w: &World) -> Totals {
    let received = received(w);
    let duplicated =
        received.deliveries.iter().enumerate().filter(|&(m, &n)| n > 1 && w.fates.get(m) != Some(&Fate::DeadLettered)).count();
    let mut unconsumed = 0;
    for_each_never_delivered(w, &received, |_, _, _, _, _| unconsumed += 1);
    // Not-consumed counts are per subscription (by name: a partitioned topic's partitions share one).
    let mut names: Vec<&str> = w.partitions.iter().flat_map(|p| p.subscriptions.iter().map(|s| &*s.name)).collect();
    names.stable_sort();
    names.dedup();
    Totals { duplicated: duplicated as u64, unconsumed, groups: names.len() as u64, ..Totals::default() }
}

/// Messages of a subscription's topic that none of its consumers received, with why.
fn never_delivered(w: &World, prov: &BTreeMap<MsgId, Vec<EventId>>) -> Vec<Value> {
    let mut out = Vec::new();
    for_each_never_delivered(w, &received(w), |t, p, s, entry, m| {
        let part = &w.partitions[p as usize];
        let (reason, mut events) = undelivered_reason(w, t, p, s, entry as i64);
        if let Some(stored) = prov.get(&m).and_then(|v| v.first()) {
            events.push(stored.0);
        }
        events.stable_sort();
        events.dedup();
        out.push(json!({
            "msg": m, "id": message_id(w, m).to_string(), "key": w.key_text(w.messages[m as usize].out.key),
            "topic": &*part.name, "subscription": &*part.subscriptions[s].name, "reason": reason, "events": events,
        }));
    });
    out
}

/// Why an entry of partition `p` has not reached any consumer of subscription `s`.
fn undelivered_reason(w: &World, t: u32, p: u32, s: usize, entry: i64) -> (String, Vec<u32>) {
    let part = &w.partitions[p as usize];
    let sub = &part.subscriptions[s];
    if entry <= sub.initial_mark_delete {
        return (
            format!(
                "published before subscription {} existed on {}; its cursor was created at Latest (markDelete {})",
                sub.name,
                part.name,
                part.position_id(sub.initial_mark_delete)
            ),
            vec![sub.created_event.0],
        );
    }
    if sub.cursor.is_acked(entry) {
        return ("acked without reaching the application (a cumulative ack covered it)".into(), Vec::new());
    }
    if let (Some(seg), Some(scalable)) = (part.segment, w.topics[t as usize].scalable.as_ref()) {
        if let (Some(c), Some(info)) = (scalable.coordinators.get(&sub.name), scalable.layout.segment(seg)) {
            if !is_assignable(info, &scalable.layout, c.drain_state()) {
                let g = sub.group;
                let poll = last_event(w, |k| matches!(k, Event::DrainPolled { group, .. } if *group == g));
                return (
                    format!(
                        "segment {seg} is withheld from STREAM subscription {}: its {} {:?} {} not drained yet (parent-drain ordering, PR #25642); the consumer must ack the parent's backlog before the next drain poll releases the child",
                        sub.name,
                        if info.parent_ids.len() == 1 { "parent" } else { "parents" },
                        info.parent_ids,
                        if info.parent_ids.len() == 1 { "is" } else { "are" }
                    ),
                    poll.into_iter().collect(),
                );
            }
            let owner = c
                .current_assignment()
                .by_consumer
                .iter()
                .find(|(_, segs)| segs.iter().any(|x| x.segment_id == seg))
                .map(|(n, _)| n.clone());
            if let Some(owner) = owner {
                let closed = w.consumers.iter().any(|x| *x.name == *owner && x.state == ClientState::Closed);
                if closed {
                    return (
                        format!("segment {seg} is assigned to {owner}, which closed before PR #26433: its session stays registered, so the segment stays assigned to a consumer that reads nothing"),
                        Vec::new(),
                    );
                }
            }
        }
    }
    if sub.members.is_empty() {
        return (
            format!("no consumer is connected to {} on {} (backlog {})", sub.name, part.name, sub.cursor.backlog()),
            Vec::new(),
        );
    }
    if let Some(reason) = sub.held.get(&entry) {
        let held = last_event(
            w,
            |k| matches!(k, Event::Held { msg, sub: held_sub, .. } if w.messages[*msg as usize].partition == p && w.messages[*msg as usize].entry == entry && *held_sub as usize == s),
        );
        return (format!("held by the Key_Shared dispatcher: {}", hold_reason_text(*reason)), held.into_iter().collect());
    }
    if sub.delayed.contains(&entry) {
        return (format!("delayed delivery until {} ms", part.entries[entry as usize].deliver_at(&w.messages)), Vec::new());
    }
    if let Some(Dispatcher::KeyShared(ks)) = &sub.dispatcher {
        let (start, end) = ks.selector.key_hash_range();
        let hash = super::hash::fold_sticky_hash(part.entries[entry as usize].key_make_hash, start, end);
        if ks.selector.select(hash).is_none() {
            return (
                format!("no connected consumer owns its key's hash {hash} (a STICKY gap): it stays in the backlog"),
                Vec::new(),
            );
        }
    }
    (
        format!(
            "not dispatched yet: the read position of {} is {} and its consumers have no permits left or no time passed",
            sub.name,
            part.position_id(sub.cursor.read_position())
        ),
        Vec::new(),
    )
}

/// The last event `pred` accepts, among those the log keeps whole (every kind but stored and
/// received, which no caller looks for).
fn last_event(w: &World, pred: impl Fn(&Event) -> bool) -> Option<u32> {
    w.log.rare().rev().find(|(_, _, kind)| pred(kind)).map(|(id, _, _)| id.0)
}

/// Warnings of one subscription (`View::groups[g]`), each spelling out its consequence.
pub fn group_warnings(w: &World, g: usize) -> Vec<String> {
    let (t, sub_name) = &w.groups[g];
    let topic = &w.topics[*t as usize];
    let mut out = Vec::new();
    let members: Vec<&super::world::Consumer> =
        w.consumers.iter().filter(|c| c.topic == *t && c.subscription == *sub_name).collect();
    for c in &members {
        if let Some(f) = &c.failure {
            out.push(format!("{} could not subscribe: {f}. Consequence: it receives nothing from {sub_name}.", c.name));
        }
        if c.running() && c.ack.mode == AckMode::Never {
            let scalable = if topic.scalable.is_some() {
                " On a scalable topic the sealed parent segments it reads never drain, so their children stay withheld from STREAM consumers forever (the #25642 liveness note: ack as you go)."
            } else {
                ""
            };
            out.push(format!(
                "{} never acks. Consequence: markDelete of {sub_name} does not move past its first message and the backlog only grows.{scalable}",
                c.name
            ));
        }
        let single_active = c.spec.subscription_type().is_single_active() && c.spec.scalable_type().is_none();
        if c.spec.dead_letter.is_some() && single_active {
            out.push(format!(
                "{} has a dead-letter policy on a {} subscription. Consequence: it never triggers: the single-active dispatcher keeps no redelivery count (always 0), and a nack rewinds the whole cursor instead.",
                c.name,
                c.spec.subscription_type().name()
            ));
        }
    }
    if let Some(c) = topic.scalable.as_ref().and_then(|s| s.coordinators.get(sub_name)) {
        let a = c.current_assignment();
        let several = a.by_consumer.len() > 1;
        // Every gap the segment DAG marks is listed: a marked gap beside "No warnings." would
        // contradict it. A drained segment's slot only costs anything with others to share with.
        for gap in &a.gaps {
            let text = match gap {
                super::scalable::UpstreamGap::SealedChildBeforeParentDrained { segment, undrained_parent } => format!(
                    "{}: sealed segment {segment} is assigned while its parent {undrained_parent} is undrained. Consequence: parent and child are read at the same time, so per-key order holds only one level deep.",
                    gap.issue()
                ),
                super::scalable::UpstreamGap::DrainedSegmentAssigned { segment, consumer } if several => format!(
                    "{}: drained sealed segment {segment} still takes a round-robin slot ({consumer}). Consequence: live segments are spread unevenly.",
                    gap.issue()
                ),
                super::scalable::UpstreamGap::DrainedSegmentAssigned { segment, consumer } => format!(
                    "{}: drained sealed segment {segment} still takes a round-robin slot ({consumer}). Consequence: none while {consumer} has every slot; with a second consumer, live segments would be spread unevenly.",
                    gap.issue()
                ),
                super::scalable::UpstreamGap::ConsumerHasOnlyDrainedSegments { consumer } => format!(
                    "{}: {consumer} is assigned only drained sealed segments. Consequence: it reads nothing while others carry the load.",
                    gap.issue()
                ),
            };
            out.push(text);
        }
        for (name, session) in c.sessions() {
            let closed = w.consumers.iter().any(|x| *x.name == **name && x.state == ClientState::Closed);
            if closed && session.connected {
                out.push(format!(
                    "{name} closed, but before PR #26433 a clean close does not unregister. Consequence: segments {:?} stay assigned to it and nobody reads them.",
                    a.segment_ids_of(name)
                ));
            }
        }
    }
    for &p in &topic.partitions {
        let part = &w.partitions[p as usize];
        let Some(s) = part.subscription(sub_name) else { continue };
        let sub = &part.subscriptions[s];
        if let Some(Dispatcher::KeyShared(ks)) = &sub.dispatcher {
            if sub.key_shared.mode == KeySharedMode::Sticky && !sub.members.is_empty() {
                let gaps = uncovered(&ks.selector.assignments().iter().map(|a| (a.start, a.end)).collect::<Vec<_>>());
                if !gaps.is_empty() {
                    out.push(format!(
                        "{}: hashes {} have no consumer (STICKY). Consequence: messages whose keys hash there stay in the backlog.",
                        part.name,
                        super::world::ranges_text(&gaps)
                    ));
                }
            }
            for c in ks.consumers().filter(|c| c.unacked.blocked) {
                out.push(format!(
                    "{} consumer {} reached maxUnackedMessagesPerConsumer. Consequence: nothing more is dispatched to it until it acks down to half the limit.",
                    part.name, c.name
                ));
            }
        }
        if sub.sub_type == SubscriptionType::Shared {
            if let Some(Dispatcher::Shared(sh)) = &sub.dispatcher {
                for c in sh.consumers.consumers().iter().filter(|c| c.unacked.blocked) {
                    let name = w.member_consumer_name(p, s as u32, c.consumer_id).map(|n| n.to_string()).unwrap_or_default();
                    out.push(format!(
                        "{} consumer {name} reached maxUnackedMessagesPerConsumer. Consequence: nothing more is dispatched to it until it acks down to half the limit.",
                        part.name
                    ));
                }
                if sh.subscription_unacked.blocked {
                    out.push(format!(
                        "{}: the subscription reached maxUnackedMessagesPerSubscription. Consequence: dispatch stops for every consumer until half are acked.",
                        part.name
                    ));
                }
            }
        }
    }
    out
}

/// The parts of `[0, 65535]` the ranges leave uncovered.
fn uncovered(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut sorted = ranges.to_vec();
    sorted.stable_sort();
    let mut gaps = Vec::new();
    let mut next = 0u32;
    for (s, e) in sorted {
        if s > next {
            gaps.push((next, s - 1));
        }
        next = next.max(e.saturating_add(1));
    }
    if next <= 65_535 {
        gaps.push((next, 65_535));
    }
    gaps
}

/// Every warning, with the subscription it belongs to.
pub fn warnings(w: &World) -> Vec<(String, String)> {
    let stop = w.budget_stop.iter().map(|s| ("memory budget".to_string(), s.message()));
    stop.chain((0..w.groups.len()).flat_map(|g| group_warnings(w, g).into_iter().map(move |t| (w.group_label(g), t)))).collect()
}

pub fn report_json(w: &World) -> Value {
    let prov = provenance(w);
    let gaps: Vec<Value> = w
        .log
        .rare()
        .filter_map(|(id, at, kind)| match kind {
            Event::UpstreamGap { gap } => Some(json!({"issue": gap.issue, "text": gap.text, "event": id.0, "at": at})),
            _ => None,
        })
        .collect();
    let eras: Vec<Value> = w
        .log
        .rare()
        .filter_map(|(id, at, kind)| match kind {
            Event::EraNote { text } => Some(json!({"text": text, "event": id.0, "at": at})),
            _ => None,
        })
        .collect();
    let mut report = json!({
        "scenario": w.scenario.name,
        "broker": "pulsar",
        "time": w.now,
        "events": w.log.len(),
        "digest": format!("{:016x}", w.log_digest()),
        "consumers": consumers_json(w),
        "subscriptions": subscriptions_json(w),
        "topics": topics_json(w),
        "messages": messages_json(w, &prov),
        "upstreamGaps": gaps,
        "eraNotes": eras,
    });
    if let Some(stop) = &w.budget_stop {
        report["stopped"] =
            json!({"at": stop.at, "memoryBudget": stop.budget, "memoryReached": stop.reached, "reason": stop.message()});
    }
    report
}

/// A human-readable rendering of the report.
pub fn report_text(w: &World) -> String {
    let r = report_json(w);
    let mut s = format!(
        "scenario {} at t={} ms, {} events, digest {}\n",
        w.scenario.name,
        w.now,
        w.log.len(),
        r["digest"].as_str().unwrap_or("")
    );
    if let Some(stop) = &w.budget_stop {
        s.push_str(&format!("stopped early: {}\n", stop.message()));
    }
    s.push_str("\nconsumers\n");
    for (name, c) in r["consumers"].as_object().into_iter().flatten() {
        s.push_str(&format!(
            "  {name} ({} on {} / {}, {}): received {}, acked {}, nacked {}, dead-lettered {}\n",
            c["type"].as_str().unwrap_or(""),
            c["topic"].as_str().unwrap_or(""),
            c["subscription"].as_str().unwrap_or(""),
            c["state"].as_str().unwrap_or(""),
            c["stats"]["received"],
            c["stats"]["acked"],
            c["stats"]["nacked"],
            c["stats"]["deadLettered"],
        ));
        let ids: Vec<String> = c["received"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                format!("{}{}", m["id"].as_str().unwrap_or(""), m["key"].as_str().map(|k| format!("({k})")).unwrap_or_default())
            })
            .collect();
        if !ids.is_empty() {
            s.push_str(&format!("    received {}\n", ids.join(" ")));
        }
        if let Some(f) = c["failure"].as_str() {
            s.push_str(&format!("    failed: {f}\n"));
        }
    }
    for sub in r["subscriptions"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "\nsubscription {} on {} ({})\n",
            sub["subscription"].as_str().unwrap_or(""),
            sub["topic"].as_str().unwrap_or(""),
            sub["type"].as_str().unwrap_or("-")
        ));
        for p in sub["partitions"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "  {}: markDelete {} read {} backlog {} ack holes {}\n",
                p["name"].as_str().unwrap_or(""),
                p["markDelete"].as_str().unwrap_or(""),
                p["readPosition"].as_str().unwrap_or(""),
                p["backlog"],
                p["ackHoles"]
            ));
        }
        if let Some(sc) = sub["scalable"].as_object() {
            s.push_str(&format!("  STREAM assignment {} drained {}\n", sc["assignment"], sc["drained"]));
        }
        for o in sub["owners"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "  t={} #{} {} -> {}\n",
                o["at"],
                o["event"],
                o["what"].as_str().unwrap_or(""),
                o["owner"].as_str().unwrap_or("(none)")
            ));
        }
        for warn in sub["warnings"].as_array().into_iter().flatten() {
            s.push_str(&format!("  WARNING: {}\n", warn.as_str().unwrap_or("")));
        }
    }
    let messages = &r["messages"];
    for (title, key) in [("redelivered", "redelivered"), ("dead-lettered", "deadLettered"), ("never delivered", "neverDelivered")]
    {
        let list = messages[key].as_array().cloned().unwrap_or_default();
        s.push_str(&format!("\n{title} ({})\n", list.len()));
        for m in &list {
            let story: Vec<String> = m["story"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|x| format!("{} (#{})", x["what"].as_str().unwrap_or(""), x["event"]))
                .collect();
            let why = m["reason"].as_str().map(str::to_string).unwrap_or_else(|| story.join("; "));
            s.push_str(&format!(
                "  m{} {} {}: {why}{}\n",
                m["msg"],
                m["id"].as_str().unwrap_or(""),
                m["topic"].as_str().unwrap_or(""),
                match m["events"].as_array() {
                    Some(e) if !e.is_empty() => format!(" (events {})", m["events"]),
                    _ => String::new(),
                }
            ));
        }
    }
    for g in r["upstreamGaps"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "\nUPSTREAM GAP {} (#{}): {}\n",
            g["issue"].as_str().unwrap_or(""),
            g["event"],
            g["text"].as_str().unwrap_or("")
        ));
    }
    for e in r["eraNotes"].as_array().into_iter().flatten() {
        s.push_str(&format!("\nERA (#{}): {}\n", e["event"], e["text"].as_str().unwrap_or("")));
    }
    s
}
