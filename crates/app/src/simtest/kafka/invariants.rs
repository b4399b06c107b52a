//! The Kafka model's invariants, each derived from shared/specs/kafka.md and checked against the
//! causal log (what the clients and the coordinator did), not against the report.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::generate::SETTLE;
use crate::simtest::{Property, Violation};
use mqviz_engine::Millis;
use mqviz_kafka::assignor::TopicPartition;
use mqviz_kafka::events::{Event, MsgId, Name, Part};
use mqviz_kafka::scenario::{GroupProtocol, SubscriptionSpec};
use mqviz_kafka::world::member_kip848::CgClientState;
use mqviz_kafka::world::{ClassicState, Consumer, ModernState, World};
use mqviz_model::Simulation;

/// The invariants below, as `mqviz fuzz --list` prints them.
pub const PROPERTIES: &[Property] = &[
    Property { name: "single-fetcher", asserts: "no partition is fetched or polled by two members of a group at once: the old owner gives it up (revoked, lost, crashed, closed, left) before another member reads it" },
    Property { name: "commits-monotonic", asserts: "a group's committed offset moves backwards only through an explained reset: a seek, an offset reset or validation that set a position below it, or a truncation" },
    Property { name: "fetch-state-transitions", asserts: "every FetchState change is in the spec's validTransitions (INITIALIZING -> FETCHING|AWAIT_RESET|AWAIT_VALIDATION, AWAIT_RESET -> FETCHING|AWAIT_RESET, ...)" },
    Property { name: "duplicates-explained", asserts: "a record a group polled twice was given up by its first reader, or a position was set back below it, or its partition was truncated, in between" },
    Property { name: "stable-assignment", asserts: "once churn stopped and the run settled, a stable group's members hold disjoint partitions within their subscriptions that cover every subscribed partition, as its assignor's contract says (KIP-848: exactly the coordinator's target)" },
    Property { name: "records-accounted", asserts: "once settled, every record in a partition a running member owns was polled by the group, skipped by a position move (reset or seek), removed by a truncation, or read before the run's snapshot (below the group's committed offset at t=0)" },
];

/// What the step checks remember between steps.
#[derive(Debug, Default)]
pub struct Watch {
    seen: usize,
    /// (group, partition) -> the member that last fetched or polled it and has not given it up.
    reader: BTreeMap<(usize, u32), Name>,
    /// (group, partition) -> the last committed offset, and whether a reset explains a lower one.
    committed: BTreeMap<(usize, u32), (u64, bool)>,
    /// (group, message) -> each poll of it: (client, time).
    polls: BTreeMap<(usize, MsgId), Vec<(Name, Millis)>>,
    /// Client -> times it gave up partitions (revoked, lost, crashed, closed, left the group).
    departures: BTreeMap<Name, Vec<Millis>>,
    /// (client, partition) -> times a position was set, with the position.
    positions: BTreeMap<(Name, u32), Vec<(Millis, i64)>>,
    /// Partition -> times it was truncated.
    truncations: BTreeMap<u32, Vec<Millis>>,
    /// (group, message) skipped by a position move.
    skipped: BTreeSet<(usize, MsgId)>,
    truncated: BTreeSet<MsgId>,
    /// Group -> how many partitions existed (pids below it) when its leader last ran the assignor.
    assigned_below: BTreeMap<Name, u32>,
    /// Groups whose leader has since returned as a static member and skipped the assignment.
    leader_skipped: BTreeSet<Name>,
}

fn violation(out: &mut Vec<Violation>, invariant: &'static str, at: Millis, detail: String) {
    out.push(Violation { invariant, at, detail });
}

pub(super) fn world(sim: &dyn Simulation) -> &World {
    sim.as_any().downcast_ref::<World>().expect("the Kafka target runs Kafka worlds")
}

fn consumer<'a>(w: &'a World, client: &str) -> Option<&'a Consumer> {
    w.consumers.iter().find(|c| &*c.name == client)
}

/// A member whose partitions come from its group (not `assign()`).
fn group_member(w: &World, client: &str) -> Option<usize> {
    consumer(w, client).filter(|c| !matches!(c.subscription, Some(SubscriptionSpec::Assign(_)))).map(|c| c.group)
}

fn group_of(w: &World, client: &str) -> Option<usize> {
    consumer(w, client).map(|c| c.group)
}

/// The spec's `validTransitions` (§4). The log also shows a partition's assignment as
/// UNASSIGNED -> INITIALIZING (a new `TopicPartitionState`) and its removal as -> UNASSIGNED.
fn transition_allowed(from: &str, to: &str) -> bool {
    if to == "UNASSIGNED" {
        return from != "UNASSIGNED";
    }
    match from {
        "UNASSIGNED" => to == "INITIALIZING",
        "INITIALIZING" | "FETCHING" | "AWAIT_VALIDATION" => matches!(to, "FETCHING" | "AWAIT_RESET" | "AWAIT_VALIDATION"),
        "AWAIT_RESET" => matches!(to, "FETCHING" | "AWAIT_RESET"),
        _ => false,
    }
}

impl Watch {
    fn release(&mut self, client: &str, keep: Option<&[Part]>) {
        self.reader.retain(|(_, pid), r| &**r != client || keep.is_some_and(|k| k.iter().any(|p| p.pid == *pid)));
    }

    fn depart(&mut self, client: &Name, at: Millis, keep: Option<&[Part]>) {
        self.release(client, keep);
        self.departures.entry(client.clone()).or_default().push(at);
    }
}

/// Checks after one step: reads the log entries the step added.
pub fn check_step(w: &World, watch: &mut Watch, out: &mut Vec<Violation>) {
    let entries = w.log.entries();
    for e in &entries[watch.seen.min(entries.len())..] {
        let at = e.at;
        match &e.kind {
            Event::Fetched { client, part, .. } | Event::Polled { client, part, .. } => {
                if let Some(g) = group_member(w, client) {
                    if let Some(other) = watch.reader.get(&(g, part.pid)).filter(|r| *r != client) {
                        violation(
                            out,
                            "single-fetcher",
                            at,
                            format!(
                                "{client} read {part} (#{}) while {other}, which read it before, had not given it up",
                                e.id.0
                            ),
                        );
                    }
                    watch.reader.insert((g, part.pid), client.clone());
                }
                if let Event::Polled { client, msgs, .. } = &e.kind {
                    if let Some(g) = group_of(w, client) {
                        for &m in msgs.iter() {
                            watch.polls.entry((g, m)).or_default().push((client.clone(), at));
                        }
                    }
                }
            }
            Event::Revoked { client, partitions, .. } => {
                let kept: Vec<Part> = watch
                    .reader
                    .iter()
                    .filter(|((_, pid), r)| *r == client && !partitions.iter().any(|p| p.pid == *pid))
                    .map(|((_, pid), _)| Part { pid: *pid, label: Name::from("") })
                    .collect();
                watch.depart(client, at, Some(&kept));
            }
            Event::Assigned { client, assigned, .. } | Event::Reconciled { client, assigned, .. } => {
                let gone = watch.reader.iter().any(|((_, pid), r)| r == client && !assigned.iter().any(|p| p.pid == *pid));
                if gone {
                    watch.depart(client, at, Some(assigned));
                }
            }
            Event::ConsumerCrashed { client }
            | Event::ConsumerClosed { client, .. }
            | Event::PollThrew { client, .. }
            | Event::PollTimeoutExpired { client, .. } => watch.depart(client, at, None),
            Event::FetchStateChanged { client, part, from, to, position, .. } => {
                if !transition_allowed(from, to) {
                    violation(out, "fetch-state-transitions", at, format!("{client} {part}: {from} -> {to} (#{})", e.id.0));
                }
                if let Some(p) = position {
                    watch.positions.entry((client.clone(), part.pid)).or_default().push((at, *p));
                    if let Some(g) = group_of(w, client) {
                        if let Some((offset, explained)) = watch.committed.get_mut(&(g, part.pid)) {
                            *explained |= (*p as u64) < *offset;
                        }
                    }
                }
            }
            Event::Truncated { part, lost, .. } => {
                watch.truncations.entry(part.pid).or_default().push(at);
                watch.truncated.extend(lost.iter().copied());
                for ((_, pid), (_, explained)) in watch.committed.iter_mut() {
                    *explained |= *pid == part.pid;
                }
            }
            Event::Skipped { client, msgs, .. } => {
                if let Some(g) = group_of(w, client) {
                    watch.skipped.extend(msgs.iter().map(|&m| (g, m)));
                }
            }
            Event::AssignmentComputed { group, .. } => {
                watch.assigned_below.insert(group.clone(), w.partitions.len() as u32);
                watch.leader_skipped.remove(group);
            }
            Event::StaticMemberReplaced { group, new, rebalance: false, .. } => {
                let leads = w.find_group(group).is_some_and(|g| w.groups[g].classic.leader.as_ref() == Some(new));
                if leads {
                    watch.leader_skipped.insert(group.clone());
                }
            }
            Event::Committed { group, client, offsets, .. } => {
                let Some(g) = w.find_group(group) else { continue };
                for (part, offset) in offsets {
                    let slot = watch.committed.entry((g, part.pid)).or_insert((*offset, false));
                    if *offset < slot.0 && !slot.1 {
                        violation(
                            out,
                            "commits-monotonic",
                            at,
                            format!(
                                "{client} committed {part}={offset} for {group} (#{}) below {} with no reset between",
                                e.id.0, slot.0
                            ),
                        );
                    }
                    *slot = (*offset, false);
                }
            }
            _ => {}
        }
    }
    watch.seen = entries.len();
}

/// When churn and sends stopped: the generated `until` less the settling time.
fn quiet_from(scenario: &Value) -> Millis {
    scenario["until"].as_u64().unwrap_or(0).saturating_sub(SETTLE)
}

/// Checks at the end of the run.
pub fn check_end(scenario: &Value, w: &World, watch: &Watch, out: &mut Vec<Violation>) {
    check_duplicates(w, watch, out);
    if w.budget_stop.is_some() {
        return;
    }
    let quiet = quiet_from(scenario);
    check_stable_assignment(w, watch, out);
    check_records_accounted(w, watch, quiet, out);
}

fn check_duplicates(w: &World, watch: &Watch, out: &mut Vec<Violation>) {
    for ((g, m), polls) in &watch.polls {
        let msg = &w.messages[*m as usize];
        for pair in polls.windows(2) {
            let ((first, t1), (second, t2)) = (&pair[0], &pair[1]);
            let within = |t: &Millis| *t >= *t1 && *t <= *t2;
            let departed = watch.departures.get(first).is_some_and(|d| d.iter().any(within));
            let set_back = watch
                .positions
                .get(&(second.clone(), msg.pid))
                .is_some_and(|p| p.iter().any(|(t, pos)| within(t) && *pos <= msg.offset as i64));
            let truncated = watch.truncations.get(&msg.pid).is_some_and(|t| t.iter().any(within));
            if !(departed || set_back || truncated) {
                violation(
                    out,
                    "duplicates-explained",
                    *t2,
                    format!(
                        "{} polled record {m} ({} offset {}) at t={t1} and {second} again at t={t2}, with no departure, position reset or truncation between",
                        first,
                        w.partitions[msg.pid as usize].part,
                        msg.offset
                    ),
                );
                let _ = g;
            }
        }
    }
}

/// The partitions of the topics a member is subscribed to now, as its `SubscriptionState` holds
/// them: a `subscribe` call that threw left the previous subscription in place, and a pattern is
/// as its last metadata matched it.
fn subscribed(w: &World, c: &Consumer) -> BTreeSet<u32> {
    let topics: Vec<usize> = c.subs.subscription().iter().filter_map(|t| w.topic_index(t)).collect();
    topics.iter().flat_map(|&t| w.topics[t].pids.iter().copied()).collect()
}

fn owned(w: &World, c: &Consumer) -> Vec<u32> {
    c.subs.assigned_partitions().iter().filter_map(|tp: &TopicPartition| w.pid_of(tp)).collect()
}

fn label(w: &World, pids: impl IntoIterator<Item = u32>) -> String {
    pids.into_iter().map(|p| w.partitions[p as usize].part.label.to_string()).collect::<Vec<_>>().join(", ")
}

/// A consumer-protocol member whose pattern matches no topic stays out of the group: the
/// subscription `subscribeFromPattern` computes is unchanged (empty), so no
/// `SubscriptionChangeEvent` reaches the membership manager and it never leaves UNSUBSCRIBED.
fn never_joins(c: &Consumer) -> bool {
    c.protocol == GroupProtocol::Consumer && c.modern.state == CgClientState::Unsubscribed && c.subs.subscription().is_empty()
}

/// Java's `allSubscriptionsEqual` skips an empty first subscription when it initialises the
/// reference set, so a sticky leader may treat a group where one member's pattern matches nothing
/// as uniformly subscribed and hand that member partitions. The member finds the assignment does
/// not match its subscription and rejoins, and while the `HashMap` order stays the same the group
/// can rebalance for ever. Upstream behaviour: the group is exempt from the settled-group checks.
fn sticky_may_loop(w: &World, g: usize, members: &[&Consumer]) -> bool {
    let group = &w.groups[g];
    let sticky = matches!(group.classic.protocol_name.as_deref(), Some("sticky" | "cooperative-sticky"));
    let empty = members.iter().filter(|c| c.subs.subscription().is_empty()).count();
    group.protocol == GroupProtocol::Classic && sticky && empty > 0 && empty < members.len()
}

/// Whether the group's coordinator and every running member agree the group is stable.
fn is_stable(w: &World, g: usize, members: &[&Consumer]) -> bool {
    let group = &w.groups[g];
    match group.protocol {
        GroupProtocol::Classic => {
            group.classic.state == ClassicState::Stable
                && members
                    .iter()
                    .all(|c| c.protocol == GroupProtocol::Classic && c.classic.generation == group.classic.generation)
        }
        GroupProtocol::Consumer => {
            group.modern.state() == ModernState::Stable
                && members.iter().all(|c| c.protocol == GroupProtocol::Consumer && c.modern.epoch == group.modern.group_epoch)
        }
    }
}

fn check_stable_assignment(w: &World, watch: &Watch, out: &mut Vec<Violation>) {
    for g in 0..w.groups.len() {
        let members: Vec<&Consumer> = w
            .consumers
            .iter()
            .filter(|c| c.group == g && c.running() && group_member(w, &c.name).is_some() && !never_joins(c))
            .collect();
        if members.is_empty() {
            continue;
        }
        let name = &w.groups[g].name;
        if sticky_may_loop(w, g, &members) {
            continue;
        }
        if !is_stable(w, g, &members) {
            violation(out, "stable-assignment", w.now, format!("{name} is not stable {SETTLE} ms after the churn stopped"));
            continue;
        }
        let mut holder: BTreeMap<u32, &str> = BTreeMap::new();
        let mut wanted: BTreeSet<u32> = BTreeSet::new();
        for c in &members {
            let subs = subscribed(w, c);
            let own = owned(w, c);
            let outside: Vec<u32> = own.iter().copied().filter(|p| !subs.contains(p)).collect();
            if !outside.is_empty() {
                violation(
                    out,
                    "stable-assignment",
                    w.now,
                    format!("{name}: {} holds {} outside its subscription", c.name, label(w, outside)),
                );
            }
            for p in own {
                if let Some(other) = holder.insert(p, &c.name) {
                    violation(
                        out,
                        "stable-assignment",
                        w.now,
                        format!("{name}: {} and {other} both hold {}", c.name, label(w, [p])),
                    );
                }
            }
            wanted.extend(subs);
        }
        // A static leader that returned and skipped the assignment takes its snapshot from the
        // metadata it sees then (KIP-814), so partitions created while it was away, after the
        // last assignment, look unchanged to it: nobody takes them until another rebalance.
        let unseen =
            |p: &u32| watch.leader_skipped.contains(name) && watch.assigned_below.get(name).is_some_and(|below| p >= below);
        let missing: Vec<u32> = wanted.iter().copied().filter(|p| !holder.contains_key(p) && !unseen(p)).collect();
        if !missing.is_empty() {
            violation(out, "stable-assignment", w.now, format!("{name}: nobody holds {}", label(w, missing)));
        }
        if w.groups[g].protocol == GroupProtocol::Consumer {
            for c in &members {
                let target: BTreeSet<u32> = w.groups[g]
                    .modern
                    .target
                    .members
                    .get(&*c.modern.member_id)
                    .map(|parts| {
                        parts
                            .iter()
                            .flat_map(|(topic, ps)| ps.iter().filter_map(|&p| w.pid_of(&TopicPartition::new(topic.clone(), p))))
                            .collect()
                    })
                    .unwrap_or_default();
                let own: BTreeSet<u32> = owned(w, c).into_iter().collect();
                if own != target {
                    violation(
                        out,
                        "stable-assignment",
                        w.now,
                        format!("{name}: {} holds [{}], its target is [{}]", c.name, label(w, own), label(w, target)),
                    );
                }
            }
        }
    }
}

fn check_records_accounted(w: &World, watch: &Watch, quiet: Millis, out: &mut Vec<Violation>) {
    for g in 0..w.groups.len() {
        let read: BTreeSet<u32> = w.consumers.iter().filter(|c| c.group == g && c.running()).flat_map(|c| owned(w, c)).collect();
        let mut missed = Vec::new();
        for (m, msg) in w.messages.iter().enumerate() {
            let m = m as MsgId;
            if !read.contains(&msg.pid) || msg.stored_at > quiet {
                continue;
            }
            let polled = w.deliveries[g].get(m as usize).is_some_and(|&n| n > 0);
            // A snapshot's record below the group's committed offset at t=0 was read before it.
            let before = w.read_before_snapshot(g, m);
            if !(polled || before || watch.skipped.contains(&(g, m)) || watch.truncated.contains(&m)) {
                missed.push(m);
            }
        }
        if let Some(&m) = missed.first() {
            let msg = &w.messages[m as usize];
            violation(
                out,
                "records-accounted",
                w.now,
                format!(
                    "{}: {} records never polled, skipped or truncated, e.g. {m} ({} offset {}, stored at t={})",
                    w.groups[g].name,
                    missed.len(),
                    w.partitions[msg.pid as usize].part,
                    msg.offset,
                    msg.stored_at
                ),
            );
        }
    }
}
