//! The run report (`mqviz run --json`): per consumer what `poll()` returned and each partition's
//! FetchState history; per group its protocol, generations (assignment, revoked, added), the
//! final assignment, committed offsets and warnings with their consequences; and every record
//! that a group never received or received more than once, with the reason traced through the
//! causal log (event ids cited).

use mqviz_engine::sort::CollectSorted;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::events::{Event, MsgId, Name, Part};
use super::scenario::{GroupProtocol, SubscriptionSpec};
use super::world::{Life, World};
use crate::classic_group::{rebalance_protocol, RebalanceProtocol};
use mqviz_engine::{BitSet, EventId, Millis};
use mqviz_model::Totals;

/// Lists in the report stop after this many entries (their totals are given).
const MAX_LISTED: usize = 2_000;

fn part_names(parts: &[Part]) -> Vec<String> {
    parts.iter().map(|p| p.label.to_string()).collect()
}

/// Someone received a record: (client, event, time).
type Delivery = (Name, EventId, Millis);
/// A successful commit: (event, time, client, offset).
type CommitSeen = (EventId, Millis, Name, u64);
/// A position set other than by polling: (event, time, why, position).
type PositionSet = (EventId, Millis, String, Option<i64>);
/// A generation's time, assignment, revoked and added, per client.
type GenerationMaps = (Millis, Map<String, Value>, Map<String, Value>, Map<String, Value>);

/// What the log says, gathered in one pass.
#[derive(Default)]
struct Index {
    stored: BTreeMap<MsgId, EventId>,
    /// (group, message) -> deliveries (client, event, time).
    deliveries: BTreeMap<(usize, MsgId), Vec<Delivery>>,
    skipped: BTreeMap<(usize, MsgId), EventId>,
    truncated: BTreeMap<MsgId, EventId>,
    /// (group, partition) -> successful commits (event, time, client, offset).
    commits: BTreeMap<(usize, u32), Vec<CommitSeen>>,
    /// Client -> moments it stopped owning what it had (crash, close, lost, revoked, timeout).
    departures: BTreeMap<Name, Vec<(EventId, Millis, String)>>,
    /// (client, partition) -> positions set other than by polling (event, time, why, position).
    positions: BTreeMap<(Name, u32), Vec<PositionSet>>,
}

fn build_index(w: &World) -> Index {
    let group_of: BTreeMap<&str, usize> = w.consumers.iter().map(|c| (&*c.name, c.group)).collect_map();
    let mut ix = Index::default();
    for e in w.log.entries() {
        match &e.kind {
            Event::Appended { first_msg, count, .. } => {
                for m in *first_msg..first_msg + count {
                    ix.stored.insert(m, e.id);
                }
            }
            Event::Polled { client, msgs, .. } => {
                if let Some(&g) = group_of.get(&**client) {
                    for &m in msgs.iter() {
                        ix.deliveries.entry((g, m)).or_default().push((client.clone(), e.id, e.at));
                    }
                }
            }
            Event::Skipped { client, msgs, .. } => {
                if let Some(&g) = group_of.get(&**client) {
                    for &m in msgs.iter() {
                        ix.skipped.entry((g, m)).or_insert(e.id);
                    }
                }
            }
            Event::Truncated { lost, .. } => {
                for &m in lost.iter() {
                    ix.truncated.insert(m, e.id);
                }
            }
            Event::Committed { group, client, offsets, .. } => {
                if let Some(g) = w.find_group(group) {
                    for (p, o) in offsets {
                        ix.commits.entry((g, p.pid)).or_default().push((e.id, e.at, client.clone(), *o));
                    }
                }
            }
            Event::ConsumerCrashed { client } => {
                ix.departures.entry(client.clone()).or_default().push((e.id, e.at, "crashed".into()))
            }
            Event::ConsumerClosed { client, reason } => {
                ix.departures.entry(client.clone()).or_default().push((e.id, e.at, format!("closed ({reason})")))
            }
            Event::Revoked { client, lost, reason, partitions } => ix.departures.entry(client.clone()).or_default().push((
                e.id,
                e.at,
                format!("{} {} ({reason})", if *lost { "lost" } else { "gave up" }, part_names(partitions).join(", ")),
            )),
            Event::PollTimeoutExpired { client, .. } => ix.departures.entry(client.clone()).or_default().push((
                e.id,
                e.at,
                "exceeded max.poll.interval.ms and left the group".into(),
            )),
            Event::FetchStateChanged { client, part, why, position, .. } => {
                ix.positions.entry((client.clone(), part.pid)).or_default().push((e.id, e.at, why.clone(), *position))
            }
            _ => {}
        }
    }
    ix
}

/// The partitions a group's consumers ask for (all lives): their topics' partitions, or the
/// assigned ones.
fn group_pids(w: &World, g: usize) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for c in w.consumers.iter().filter(|c| c.group == g) {
        match &c.subscription {
            Some(SubscriptionSpec::Topics(topics)) => {
                for t in topics {
                    if let Some(i) = w.topic_index(t) {
                        out.extend(w.topics[i].pids.iter().copied());
                    }
                }
            }
            Some(SubscriptionSpec::Pattern(p)) => {
                if let Ok(pattern) = crate::pattern::TopicPattern::compile(p) {
                    for t in w.topics.iter().filter(|t| pattern.matches(&t.name)) {
                        out.extend(t.pids.iter().copied());
                    }
                }
            }
            Some(SubscriptionSpec::Assign(parts)) => {
                for r in parts {
                    let tp = crate::assignor::TopicPartition::new(r.topic.clone(), r.partition as i32);
                    out.extend(w.pid_of(&tp));
                }
            }
            None => {}
        }
    }
    out
}

fn record_json(w: &World, m: MsgId) -> Map<String, Value> {
    let mut o = Map::new();
    if let Some(msg) = w.messages.get(m as usize) {
        let p = &w.partitions[msg.pid as usize];
        o.insert("msg".into(), json!(m));
        o.insert("topic".into(), json!(&*w.topics[p.topic].name));
        o.insert("partition".into(), json!(p.partition));
        o.insert("offset".into(), json!(msg.offset));
        o.insert("key".into(), json!(w.message_key(msg)));
        o.insert("value".into(), json!(w.message_value(msg)));
    }
    o
}

fn ids(list: &[EventId]) -> Value {
    json!(list.iter().map(|e| e.0).collect::<Vec<_>>())
}

/// Why a record never reached a group.
fn unconsumed_reason(w: &World, ix: &Index, g: usize, m: MsgId) -> (String, Vec<EventId>) {
    let msg = &w.messages[m as usize];
    let part = &w.partitions[msg.pid as usize].part;
    let stored = ix.stored.get(&m).copied();
    let mut events: Vec<EventId> = stored.into_iter().collect();
    if let Some(&t) = ix.truncated.get(&m) {
        events.push(t);
        let at = w.log.get(t).map(|e| e.at).unwrap_or(0);
        return (
            format!("removed from {part} by an unclean leader election at t={at} (#{}) before the group read it", t.0),
            events,
        );
    }
    if let Some(&s) = ix.skipped.get(&(g, m)) {
        events.extend(w.log.cause_chain(s).iter().rev().map(|e| e.id).filter(|id| Some(*id) != stored));
        let (at, text) = w.log.get(s).map(|e| (e.at, e.kind.to_string())).unwrap_or_default();
        let stored_at = stored.and_then(|id| w.log.get(id)).map(|e| e.at).unwrap_or(0);
        let why = match w.log.get(s).map(|e| &e.kind) {
            Some(Event::Skipped { client, reason, .. }) => format!("{client}: {reason}"),
            _ => text,
        };
        return (
            format!("produced at t={stored_at}, before the group's position on {part} moved past it at t={at} (#{}): {why}", s.0),
            events,
        );
    }
    let owner = w.consumers.iter().find(|c| c.group == g && c.running() && c.subs.is_assigned(&w.tp_of(msg.pid)));
    match owner {
        Some(c) => {
            let tp = w.tp_of(msg.pid);
            let pos =
                c.subs.state(&tp).and_then(|s| s.position).map(|p| p.offset.to_string()).unwrap_or_else(|| "unknown".into());
            (format!("still in the log when the run ended: {}'s position on {part} is {pos}", c.name), events)
        }
        None => {
            let running = w.consumers.iter().any(|c| c.group == g && c.running());
            let why = if running {
                w.unowned_reason(msg.pid, Some(g)).unwrap_or_else(|| "no running member of the group reads it".into())
            } else {
                let last = w
                    .consumers
                    .iter()
                    .filter(|c| c.group == g)
                    .filter_map(|c| ix.departures.get(&c.name).and_then(|d| d.last()).map(|d| (c.name.clone(), d)))
                    .max_by_key(|(_, d)| d.0);
                match last {
                    Some((client, (id, at, what))) => {
                        events.push(*id);
                        format!("no consumer of the group was running at the end ({client} {what} at t={at}, #{})", id.0)
                    }
                    None => "no consumer of the group ever read it".into(),
                }
            };
            (format!("not read by the end of the run: {part}: {why}"), events)
        }
    }
}

/// Why a record reached a group more than once: the first reader had not committed past it
/// when it stopped owning the partition, and the next owner started from the committed offset.
fn duplicate_reason(w: &World, ix: &Index, g: usize, m: MsgId, deliveries: &[Delivery]) -> (String, Vec<EventId>) {
    let msg = &w.messages[m as usize];
    let part = w.partitions[msg.pid as usize].part.clone();
    let (first_client, first_id, first_at) = deliveries[0].clone();
    let (second_client, second_id, second_at) = deliveries[1].clone();
    let mut events = vec![first_id];
    let mut text = format!("polled by {first_client} at t={first_at} (#{})", first_id.0);
    let commits = ix.commits.get(&(g, msg.pid)).map(Vec::as_slice).unwrap_or(&[]);
    let last_commit = commits.iter().rfind(|c| c.2 == first_client && c.1 <= second_at);
    match last_commit {
        Some((id, at, _, offset)) if *offset <= msg.offset => {
            events.push(*id);
            let _ = write!(text, "; {first_client}'s last commit of {part} before it was read again was offset {offset} (t={at}, #{}), not past it", id.0);
        }
        Some((id, at, _, offset)) => {
            events.push(*id);
            let _ = write!(
                text,
                "; {first_client} had committed past it ({offset} at t={at}, #{}), so the position itself moved back",
                id.0
            );
        }
        None => {
            let _ = write!(text, "; {first_client} never committed {part} before it was read again");
        }
    }
    let departure =
        ix.departures.get(&first_client).and_then(|list| list.iter().find(|(_, at, _)| *at >= first_at && *at <= second_at));
    if let Some((id, at, what)) = departure {
        events.push(*id);
        let _ = write!(text, "; then {first_client} {what} at t={at} (#{})", id.0);
    }
    let start = ix
        .positions
        .get(&(second_client.clone(), msg.pid))
        .and_then(|list| list.iter().rfind(|(_, at, _, p)| *at <= second_at && p.is_some_and(|p| p <= msg.offset as i64)));
    if let Some((id, at, why, position)) = start {
        events.push(*id);
        let _ = write!(
            text,
            "; {second_client}'s position on {part} was set to {} at t={at} ({why}, #{})",
            position.unwrap_or(-1),
            id.0
        );
    }
    events.push(second_id);
    let _ = write!(text, "; read again by {second_client} at t={second_at} (#{})", second_id.0);
    (text, events)
}

fn rebalance_name(w: &World, g: usize) -> &'static str {
    let Some(c) = w.consumers.iter().find(|c| c.group == g) else { return "EAGER" };
    match c.protocol {
        GroupProtocol::Consumer => "KIP-848 (incremental, per member)",
        GroupProtocol::Classic => match rebalance_protocol(&c.config.assignors) {
            RebalanceProtocol::Eager => "EAGER",
            RebalanceProtocol::Cooperative => "COOPERATIVE",
        },
    }
}

/// Per generation (classic): who got what, what each member gave up before it and what it gained.
/// Per target epoch (KIP-848): the coordinator's target, and what left or joined each member's
/// target since the previous one.
fn generations(w: &World, g: usize) -> Vec<Value> {
    let name = &w.groups[g].name;
    let mut pending_revoked: BTreeMap<Name, BTreeSet<String>> = BTreeMap::new();
    let mut gens: BTreeMap<i32, GenerationMaps> = BTreeMap::new();
    let mut previous_target: BTreeMap<Name, BTreeSet<String>> = BTreeMap::new();
    let members: BTreeSet<&str> = w.consumers.iter().filter(|c| c.group == g).map(|c| &*c.name).collect_set();
    for e in w.log.entries() {
        match &e.kind {
            // A member that closes or unsubscribes gives its partitions up by leaving, not because a
            // rebalance revoked them: a static member that comes back gets the same generation
            // again, which must not read as if that generation had revoked them.
            Event::Revoked { reason: "close()" | "unsubscribe()", .. } => {}
            Event::Revoked { client, partitions, .. } if members.contains(&**client) => {
                pending_revoked.entry(client.clone()).or_default().extend(part_names(partitions));
            }
            Event::Assigned { client, group, generation, assigned, revoked, added, .. } if group == name => {
                let entry = gens.entry(*generation).or_insert_with(|| (e.at, Map::new(), Map::new(), Map::new()));
                let mut gone = pending_revoked.remove(client).unwrap_or_default();
                gone.extend(part_names(revoked));
                entry.1.insert(client.to_string(), json!(part_names(assigned)));
                entry.2.insert(client.to_string(), json!(gone.into_iter().collect::<Vec<_>>()));
                entry.3.insert(client.to_string(), json!(part_names(added)));
            }
            Event::TargetComputed { group, epoch, members: targets, .. } if group == name => {
                let entry = gens.entry(*epoch).or_insert_with(|| (e.at, Map::new(), Map::new(), Map::new()));
                let mut next: BTreeMap<Name, BTreeSet<String>> = BTreeMap::new();
                for (client, parts) in targets {
                    let now: BTreeSet<String> = part_names(parts).into_iter().collect_set();
                    let before = previous_target.get(client).cloned().unwrap_or_default();
                    entry.1.insert(client.to_string(), json!(now.iter().collect::<Vec<_>>()));
                    entry.2.insert(client.to_string(), json!(before.difference(&now).collect::<Vec<_>>()));
                    entry.3.insert(client.to_string(), json!(now.difference(&before).collect::<Vec<_>>()));
                    next.insert(client.clone(), now);
                }
                // Members that left the target gave up everything they had in it.
                for (client, before) in &previous_target {
                    if !next.contains_key(client) && !before.is_empty() {
                        entry.2.insert(client.to_string(), json!(before.iter().collect::<Vec<_>>()));
                    }
                }
                previous_target = next;
            }
            _ => {}
        }
    }
    gens.into_iter()
        .map(|(n, (at, assignment, revoked, added))| {
            json!({"generation": n, "at": at, "assignment": assignment, "revoked": revoked, "added": added})
        })
        .collect()
}

/// What one group's warnings read from the log, gathered in one pass with dense tables. The page
/// asks for the warnings whenever the run moves; built from the report's index (maps of every
/// record's deliveries) they took about 250 ms of wasm per ask at the end of a 1 M-record run.
struct WarningFacts<'w> {
    /// Records whose first skip (a position moved past them) was a reset for want of a committed
    /// offset.
    latest_skips: usize,
    /// Records the group received twice or more: (record, who received it first, when it was
    /// received the second time).
    repeats: Vec<(MsgId, &'w Name, Millis)>,
    /// Partition -> the group's successful commits (event, time, client, offset).
    commits: BTreeMap<u32, Vec<CommitSeen>>,
}

fn warning_facts(w: &World, g: usize) -> WarningFacts<'_> {
    let group_of: BTreeMap<&str, usize> = w.consumers.iter().map(|c| (&*c.name, c.group)).collect_map();
    let ours = |client: &Name| group_of.get(&**client) == Some(&g);
    let mut facts = WarningFacts { latest_skips: 0, repeats: Vec::new(), commits: BTreeMap::new() };
    // Per record: who received it first (None: nobody yet), and whether it repeated.
    let mut first: Vec<Option<&Name>> = vec![None; w.messages.len()];
    let mut repeated = BitSet::default();
    let mut skipped = BitSet::default();
    for e in w.log.entries() {
        match &e.kind {
            Event::Polled { client, msgs, .. } if ours(client) => {
                for &m in msgs.iter() {
                    match first[m as usize] {
                        None => first[m as usize] = Some(client),
                        Some(reader) => {
                            if repeated.insert(m) {
                                facts.repeats.push((m, reader, e.at));
                            }
                        }
                    }
                }
            }
            Event::Skipped { client, msgs, reason, .. } if ours(client) => {
                let latest = reason.contains("no committed offset");
                for &m in msgs.iter() {
                    facts.latest_skips += usize::from(skipped.insert(m) && latest);
                }
            }
            Event::Committed { group, client, offsets, .. } if w.find_group(group) == Some(g) => {
                for (p, o) in offsets {
                    facts.commits.entry(p.pid).or_default().push((e.id, e.at, client.clone(), *o));
                }
            }
            _ => {}
        }
    }
    facts
}

/// Warnings for one group, each with its consequence spelled out.
fn group_warnings(w: &World, g: usize) -> Vec<String> {
    let facts = warning_facts(w, g);
    let mut out = Vec::new();
    let grp = &w.groups[g];
    let members: Vec<&super::world::Consumer> = w.consumers.iter().filter(|c| c.group == g).collect();
    // EAGER rebalances: every member revokes everything; the pause lasts until its new assignment.
    let clients: BTreeSet<&str> = members.iter().map(|c| &*c.name).collect_set();
    let (mut eager_revocations, mut longest_pause) = (0usize, 0u64);
    let mut revoked_at: BTreeMap<&str, Millis> = BTreeMap::new();
    for e in w.log.entries() {
        match &e.kind {
            Event::Revoked { client, reason, .. } if clients.contains(&**client) && reason.starts_with("EAGER") => {
                eager_revocations += 1;
                revoked_at.insert(client, e.at);
            }
            Event::Assigned { client, .. } => {
                if let Some(at) = revoked_at.remove(&**client) {
                    longest_pause = longest_pause.max(e.at - at);
                }
            }
            _ => {}
        }
    }
    // A pause not over yet lasts until now: the warning speaks of the moment shown.
    let ongoing = !revoked_at.is_empty();
    for at in revoked_at.values() {
        longest_pause = longest_pause.max(w.now.saturating_sub(*at));
    }
    if eager_revocations > 0 {
        out.push(format!(
            "{} rebalances EAGERly (its assignors include an eager one; the default [range, cooperative-sticky] is EAGER): members revoked all their partitions {} and fetched nothing until SyncGroup gave them a new assignment (longest pause {longest_pause} ms{}).",
            grp.name,
            mqviz_engine::words::times(eager_revocations as u64),
            if ongoing { ", and a member is still waiting" } else { "" }
        ));
    }
    let latest_skips = facts.latest_skips;
    if latest_skips > 0 {
        out.push(format!(
            "{} started without committed offsets and reset by auto.offset.reset: {latest_skips} records already in the log were skipped and will never be read by this group (use earliest, or commit before producing matters).",
            grp.name
        ));
    }
    let (mut commit_gap, mut moved_back) = (0usize, 0usize);
    for (m, first_reader, again_at) in facts.repeats {
        let msg = &w.messages[m as usize];
        let covered = facts
            .commits
            .get(&msg.pid)
            .and_then(|list| list.iter().rfind(|c| c.2 == *first_reader && c.1 <= again_at))
            .is_some_and(|c| c.3 > msg.offset);
        if covered {
            moved_back += 1;
        } else {
            commit_gap += 1;
        }
    }
    if commit_gap > 0 {
        out.push(format!(
            "{commit_gap} records reached {} more than once because a consumer read them after its last commit and then stopped owning the partition (crash, poll timeout, revocation without a commit): the next owner started from the committed offset. With auto-commit the window is up to auto.commit.interval.ms of records.",
            grp.name
        ));
    }
    if moved_back > 0 {
        out.push(format!(
            "{moved_back} records reached {} again after they had been committed, because a position moved back (seek, seekToBeginning, or a reset after truncation).",
            grp.name
        ));
    }
    for c in &members {
        if c.instance_id.is_some() && c.life == Life::Crashed {
            out.push(format!(
                "static member {} ({}) is down: static members send no LeaveGroup, so its partitions stay assigned to it and unread until session.timeout.ms ({} ms) expires.",
                c.name,
                c.instance_id.as_deref().unwrap_or(""),
                c.config.session_timeout_ms
            ));
        }
        if c.life == Life::Failed {
            if let Some(Event::PollThrew { error, .. }) = w
                .log
                .entries()
                .iter()
                .rev()
                .map(|e| &e.kind)
                .find(|k| matches!(k, Event::PollThrew { client, .. } if *client == c.name))
            {
                out.push(format!(
                    "{}'s poll() threw {error}; the application closed the consumer, so it reads nothing more.",
                    c.name
                ));
            }
        }
    }
    let assigners = members.iter().filter(|c| matches!(c.subscription, Some(SubscriptionSpec::Assign(_)))).count();
    if assigners > 0 && assigners < members.len() {
        out.push(format!(
            "{} mixes assign() consumers with subscribed members: commits from assign() consumers carry no generation and are refused (UNKNOWN_MEMBER_ID) while the group has members.",
            grp.name
        ));
    }
    let failures: usize =
        w.log.entries().iter().filter(|e| matches!(&e.kind, Event::AssignorFailed { group, .. } if *group == grp.name)).count();
    if failures > 0 {
        let failed = mqviz_engine::words::times(failures as u64);
        out.push(format!("the assignor failed {failed} in {}: the rebalance could not complete.", grp.name));
    }
    out
}

pub fn warnings(w: &World) -> Vec<(String, String)> {
    let stop = w.budget_stop.iter().map(|s| ("memory budget".to_string(), s.message()));
    stop.chain((0..w.groups.len()).flat_map(|g| group_warnings(w, g).into_iter().map(move |t| (w.groups[g].name.to_string(), t))))
        .collect()
}

fn consumers_json(w: &World) -> Map<String, Value> {
    let mut consumed: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let mut states: BTreeMap<&str, BTreeMap<String, Vec<Value>>> = BTreeMap::new();
    for e in w.log.entries() {
        match &e.kind {
            Event::Polled { client, msgs, .. } => {
                let list = consumed.entry(client).or_default();
                for &m in msgs.iter() {
                    if list.len() < MAX_LISTED {
                        let mut o = record_json(w, m);
                        o.insert("at".into(), json!(e.at));
                        list.push(Value::Object(o));
                    }
                }
            }
            Event::FetchStateChanged { client, part, to, position, why, .. } => {
                states
                    .entry(client)
                    .or_default()
                    .entry(part.label.to_string())
                    .or_default()
                    .push(json!({"at": e.at, "state": to, "position": position, "why": why, "event": e.id.0}));
            }
            _ => {}
        }
    }
    let mut out = Map::new();
    for c in &w.consumers {
        let mut o = Map::new();
        o.insert("clientId".into(), json!(&*c.client_id));
        o.insert("group".into(), json!(&*w.groups[c.group].name));
        o.insert("state".into(), json!(format!("{:?}", c.life).to_ascii_lowercase()));
        o.insert("protocol".into(), json!(c.protocol.name()));
        o.insert("consumedCount".into(), json!(c.consumed));
        o.insert("consumed".into(), json!(consumed.remove(&*c.name).unwrap_or_default()));
        o.insert("fetchStates".into(), json!(states.remove(&*c.name).unwrap_or_default()));
        match c.protocol {
            GroupProtocol::Classic => {
                o.insert("memberId".into(), json!(&*c.classic.member_id));
                o.insert("generation".into(), json!(c.classic.generation));
                o.insert("memberState".into(), json!(c.classic.state.name()));
            }
            GroupProtocol::Consumer => {
                o.insert("memberId".into(), json!(&*c.modern.member_id));
                o.insert("memberEpoch".into(), json!(c.modern.epoch));
                o.insert("memberState".into(), json!(c.modern.state.name()));
            }
        }
        let assigned: Vec<String> =
            c.subs.assigned_partitions().iter().map(|tp| format!("{}-{}", tp.topic, tp.partition)).collect();
        o.insert("assigned".into(), json!(if c.running() { assigned } else { Vec::new() }));
        out.insert(c.name.to_string(), Value::Object(o));
    }
    out
}

fn groups_json(w: &World) -> Map<String, Value> {
    let mut out = Map::new();
    for (g, grp) in w.groups.iter().enumerate() {
        let mut o = Map::new();
        o.insert("protocol".into(), json!(grp.protocol.name()));
        o.insert("rebalanceProtocol".into(), json!(rebalance_name(w, g)));
        o.insert("coordinator".into(), json!(&*w.brokers[grp.coordinator].name));
        match grp.protocol {
            GroupProtocol::Classic => {
                o.insert("state".into(), json!(grp.classic.state.name()));
                o.insert("generation".into(), json!(grp.classic.generation));
                o.insert("assignor".into(), json!(grp.classic.protocol_name));
            }
            GroupProtocol::Consumer => {
                o.insert("state".into(), json!(grp.modern.state().name()));
                o.insert("groupEpoch".into(), json!(grp.modern.group_epoch));
                o.insert("targetEpoch".into(), json!(grp.modern.target.epoch));
                o.insert("assignor".into(), json!(grp.modern.assignor.map(|a| a.name())));
            }
        }
        o.insert("generations".into(), json!(generations(w, g)));
        let pids = group_pids(w, g);
        let mut assignment: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
        for &pid in &pids {
            let p = &w.partitions[pid as usize];
            let tp = w.tp_of(pid);
            let owner =
                w.consumers.iter().find(|c| c.group == g && c.running() && c.subs.is_assigned(&tp)).map(|c| c.name.to_string());
            assignment.entry(w.topics[p.topic].name.to_string()).or_default().insert(p.partition.to_string(), json!(owner));
        }
        o.insert("assignment".into(), json!(assignment));
        let committed: Map<String, Value> = grp
            .committed
            .iter()
            .map(|(pid, (off, _))| (w.partitions[*pid as usize].part.label.to_string(), json!(off)))
            .collect();
        o.insert("committed".into(), Value::Object(committed));
        o.insert("lag".into(), lag_json(w, g, &pids));
        o.insert("warnings".into(), json!(group_warnings(w, g)));
        out.insert(grp.name.to_string(), Value::Object(o));
    }
    out
}

/// A group's lag per partition, as `kafka-consumer-groups --describe` gives it (log end minus
/// committed; none before the group commits there), now and at its peak over the run, read
/// from the log: each append, truncation and commit moves it.
fn lag_json(w: &World, g: usize, pids: &BTreeSet<u32>) -> Value {
    let group = &*w.groups[g].name;
    let mut end: BTreeMap<u32, u64> = BTreeMap::new();
    // The snapshot's offsets hold from t=0 until the group commits.
    let mut committed: BTreeMap<u32, u64> = w.snapshot_committed[g].clone();
    // (peak lag, when)
    let mut peak: BTreeMap<u32, (u64, Millis)> = BTreeMap::new();
    let mut note = |pid: u32, end: &BTreeMap<u32, u64>, committed: &BTreeMap<u32, u64>, at: Millis| {
        if let Some(&c) = committed.get(&pid) {
            let lag = end.get(&pid).copied().unwrap_or(0).saturating_sub(c);
            let p = peak.entry(pid).or_insert((lag, at));
            if lag > p.0 {
                *p = (lag, at);
            }
        }
    };
    for e in w.log.entries() {
        match &e.kind {
            Event::Appended { part, base, count, .. } if pids.contains(&part.pid) => {
                end.insert(part.pid, base + u64::from(*count));
                note(part.pid, &end, &committed, e.at);
            }
            Event::Truncated { part, offset, .. } if pids.contains(&part.pid) => {
                end.insert(part.pid, *offset);
                note(part.pid, &end, &committed, e.at);
            }
            Event::Committed { group: cg, offsets, .. } if &**cg == group => {
                for (part, off) in offsets.iter().filter(|(p, _)| pids.contains(&p.pid)) {
                    committed.insert(part.pid, *off);
                    note(part.pid, &end, &committed, e.at);
                }
            }
            _ => {}
        }
    }
    let grp = &w.groups[g];
    let out: Map<String, Value> = pids
        .iter()
        .map(|&pid| {
            let p = &w.partitions[pid as usize];
            let now = grp.committed.get(&pid).map(|(c, _)| p.log_end().saturating_sub(*c));
            let (peak, at) = peak.get(&pid).map_or((None, None), |(l, t)| (Some(*l), Some(*t)));
            (p.part.label.to_string(), json!({"now": now, "peak": peak, "peakAt": at}))
        })
        .collect();
    Value::Object(out)
}

/// Records a group never received and records it received more than once, with reasons.
/// Calls `f` with every record each group reads (its partitions are ones the group asks for),
/// and the deliveries of that record to the group (none when it never reached the group).
fn for_each_group_record(w: &World, ix: &Index, mut f: impl FnMut(usize, MsgId, &[Delivery])) {
    for g in 0..w.groups.len() {
        let pids = group_pids(w, g);
        for (m, msg) in w.messages.iter().enumerate() {
            if pids.contains(&msg.pid) && !w.read_before_snapshot(g, m as MsgId) {
                let m = m as MsgId;
                f(g, m, ix.deliveries.get(&(g, m)).map(Vec::as_slice).unwrap_or(&[]));
            }
        }
    }
}

/// The counts the report's lists total, per group: records returned by `poll()` to the group
/// (counting repeats), records it never received split into lost (its position was moved past
/// them, or an unclean leader election removed them) and not consumed (still in the log, or no
/// member reads them), and records it received more than once. The outcome sentence sums them;
/// the group panel shows each group's.
pub fn totals_by_group(w: &World) -> Vec<Totals> {
    group_counts(w)
        .into_iter()
        .map(|(mut t, causes)| {
            t.lost_cause = lost_cause(causes);
            t
        })
        .collect()
}

/// Every group's `totals_by_group`, summed: the outcome sentence's counts.
pub fn totals(w: &World) -> Totals {
    let mut t = Totals { groups: w.groups.len() as u64, ..Totals::default() };
    let mut causes = LossCauses::default();
    for (g, c) in group_counts(w) {
        t.consumed += g.consumed;
        t.lost += g.lost;
        t.unconsumed += g.unconsumed;
        t.duplicated += g.duplicated;
        causes.skipped |= c.skipped;
        causes.truncated |= c.truncated;
    }
    t.lost_cause = lost_cause(causes);
    t
}

/// Which causes a group's lost records have.
#[derive(Clone, Copy, Default)]
struct LossCauses {
    /// Its position moved past them (auto.offset.reset or a seek).
    skipped: bool,
    /// An unclean leader election removed them.
    truncated: bool,
}

/// Each group's counts, as `for_each_group_record` over the report's index gives them (a test
/// holds the two equal), from dense tables instead of the index's maps: the outcome line counts
/// these whenever the run moves, and at the end of a 1 M-record run the maps took 260 ms native
/// (these tables: 5 ms).
fn group_counts(w: &World) -> Vec<(Totals, LossCauses)> {
    let group_of: BTreeMap<&str, usize> = w.consumers.iter().map(|c| (&*c.name, c.group)).collect_map();
    let mut truncated = BitSet::default();
    for e in w.log.entries() {
        if let Event::Truncated { lost, .. } = &e.kind {
            for &m in lost.iter() {
                truncated.insert(m);
            }
        }
    }
    // Per record, how often the group received it: 0, 1, or 2 for more (only that is asked).
    let mut received: Vec<u8> = Vec::new();
    let mut skipped = BitSet::default();
    (0..w.groups.len())
        .map(|g| {
            let mut asked = vec![false; w.partitions.len()];
            for pid in group_pids(w, g) {
                asked[pid as usize] = true;
            }
            // The records the group reads: of partitions it asks for, not read before a snapshot.
            let reads =
                |m: MsgId| w.messages.get(m as usize).is_some_and(|msg| asked[msg.pid as usize]) && !w.read_before_snapshot(g, m);
            received.clear();
            received.resize(w.messages.len(), 0);
            skipped.clear();
            let mut t = Totals::default();
            let mut causes = LossCauses::default();
            for e in w.log.entries() {
                match &e.kind {
                    Event::Polled { client, msgs, .. } if group_of.get(&**client) == Some(&g) => {
                        for &m in msgs.iter() {
                            if reads(m) {
                                t.consumed += 1;
                                received[m as usize] = received[m as usize].saturating_add(1).min(2);
                            }
                        }
                    }
                    Event::Skipped { client, msgs, .. } if group_of.get(&**client) == Some(&g) => {
                        for &m in msgs.iter() {
                            skipped.insert(m);
                        }
                    }
                    _ => {}
                }
            }
            for (m, &n) in received.iter().enumerate() {
                let m = m as MsgId;
                if !reads(m) {
                    continue;
                }
                match n {
                    0 if truncated.contains(m) => {
                        t.lost += 1;
                        causes.truncated = true;
                    }
                    0 if skipped.contains(m) => {
                        t.lost += 1;
                        causes.skipped = true;
                    }
                    0 => t.unconsumed += 1,
                    1 => {}
                    _ => t.duplicated += 1,
                }
            }
            (t, causes)
        })
        .collect()
}

/// Why lost records are lost, completing "N of M sent were lost: ...".
fn lost_cause(c: LossCauses) -> &'static str {
    match (c.skipped, c.truncated) {
        (true, false) => "the group's position moved past them (auto.offset.reset or a seek) before they were read",
        (false, true) => "an unclean leader election removed them from the log before the group read them",
        _ => "the group's position moved past some, and an unclean leader election removed others, before they were read",
    }
}

fn losses_and_duplicates(w: &World, ix: &Index) -> (Vec<Value>, usize, Vec<Value>, usize) {
    let mut unconsumed = Vec::new();
    let mut unconsumed_total = 0;
    let mut duplicates = Vec::new();
    let mut duplicate_total = 0;
    for_each_group_record(w, ix, |g, m, d| {
        let group = &*w.groups[g].name;
        match d.len() {
            0 => {
                unconsumed_total += 1;
                if unconsumed.len() < MAX_LISTED {
                    let (reason, events) = unconsumed_reason(w, ix, g, m);
                    let mut o = record_json(w, m);
                    o.insert("group".into(), json!(group));
                    o.insert("reason".into(), json!(reason));
                    o.insert("events".into(), ids(&events));
                    unconsumed.push(Value::Object(o));
                }
            }
            1 => {}
            _ => {
                duplicate_total += 1;
                if duplicates.len() < MAX_LISTED {
                    let (reason, events) = duplicate_reason(w, ix, g, m, d);
                    let mut o = record_json(w, m);
                    o.insert("group".into(), json!(group));
                    o.insert(
                        "deliveries".into(),
                        json!(d.iter().map(|(c, id, at)| json!({"client": &**c, "at": at, "event": id.0})).collect::<Vec<_>>()),
                    );
                    o.insert("reason".into(), json!(reason));
                    o.insert("events".into(), ids(&events));
                    duplicates.push(Value::Object(o));
                }
            }
        }
    });
    (unconsumed, unconsumed_total, duplicates, duplicate_total)
}

pub fn report_json(w: &World) -> Value {
    let ix = build_index(w);
    let (unconsumed, unconsumed_total, duplicates, duplicate_total) = losses_and_duplicates(w, &ix);
    let partitions: Map<String, Value> = w
        .partitions
        .iter()
        .map(|p| {
            let mut o = json!({"leader": &*w.brokers[p.leader].name, "leaderEpoch": p.epoch, "logEndOffset": p.log_end(), "highWatermark": p.high_watermark()});
            if p.log_start() > 0 {
                o["logStartOffset"] = json!(p.log_start());
            }
            (p.part.label.to_string(), o)
        })
        .collect();
    let in_snapshot = w.messages.iter().take_while(|m| m.producer == crate::world::snapshot::SNAPSHOT_PRODUCER).count();
    let mut report = json!({
        "broker": "kafka",
        "name": w.scenario.name,
        "until": w.scenario.until,
        "events": w.log.len(),
        "digest": format!("{:016x}", w.log.digest()),
        "produced": w.messages.len() - in_snapshot,
        "partitions": partitions,
        "consumers": consumers_json(w),
        "groups": groups_json(w),
        "unconsumedCount": unconsumed_total,
        "unconsumed": unconsumed,
        "duplicateCount": duplicate_total,
        "duplicates": duplicates,
    });
    if in_snapshot > 0 {
        report["inLogAtStart"] = json!(in_snapshot);
    }
    if let Some(stop) = &w.budget_stop {
        report["stopped"] =
            json!({"at": stop.at, "memoryBudget": stop.budget, "memoryReached": stop.reached, "reason": stop.message()});
    }
    report
}

pub fn report_text(w: &World) -> String {
    let r = report_json(w);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} (kafka) until t={}: {} records produced, {} events, digest {}",
        w.scenario.name,
        w.scenario.until,
        r["produced"],
        w.log.len(),
        r["digest"].as_str().unwrap_or("")
    );
    if let Some(n) = r.get("inLogAtStart") {
        let _ = writeln!(s, "{n} records were in the logs at t=0 (the scenario's snapshot)");
    }
    if let Some(stop) = &w.budget_stop {
        let _ = writeln!(s, "stopped early: {}", stop.message());
    }
    if let Some(groups) = r["groups"].as_object() {
        for (name, g) in groups {
            let _ = writeln!(
                s,
                "group {name}: {} protocol, {}, state {}, {} generations",
                g["protocol"].as_str().unwrap_or(""),
                g["rebalanceProtocol"].as_str().unwrap_or(""),
                g["state"].as_str().unwrap_or(""),
                g["generations"].as_array().map_or(0, Vec::len)
            );
            if let Some(a) = g["assignment"].as_object() {
                for (topic, parts) in a {
                    let owners: Vec<String> = parts
                        .as_object()
                        .map(|p| p.iter().map(|(k, v)| format!("{k}:{}", v.as_str().unwrap_or("-"))).collect())
                        .unwrap_or_default();
                    let _ = writeln!(s, "  {topic}: {}", owners.join(" "));
                }
            }
            if let Some(lag) = g["lag"].as_object().filter(|l| !l.is_empty()) {
                let parts: Vec<String> = lag
                    .iter()
                    .map(|(label, l)| match (l["now"].as_u64(), l["peak"].as_u64(), l["peakAt"].as_u64()) {
                        (Some(now), Some(peak), Some(at)) => format!("{label} {now} (peak {peak} at t={at})"),
                        _ => format!("{label} -"),
                    })
                    .collect();
                let _ = writeln!(s, "  lag (log end - committed): {}", parts.join(", "));
            }
            for wtext in g["warnings"].as_array().into_iter().flatten() {
                let _ = writeln!(s, "  warning: {}", wtext.as_str().unwrap_or(""));
            }
        }
    }
    for c in &w.consumers {
        let _ = writeln!(s, "consumer {} ({}): {:?}, {} records polled", c.name, w.groups[c.group].name, c.life, c.consumed);
    }
    let _ = writeln!(s, "unconsumed: {}, delivered more than once: {}", r["unconsumedCount"], r["duplicateCount"]);
    for u in r["unconsumed"].as_array().into_iter().flatten().take(20) {
        let _ = writeln!(
            s,
            "  unconsumed {}-{}@{}: {}",
            u["topic"].as_str().unwrap_or(""),
            u["partition"],
            u["offset"],
            u["reason"].as_str().unwrap_or("")
        );
    }
    for d in r["duplicates"].as_array().into_iter().flatten().take(20) {
        let _ = writeln!(
            s,
            "  duplicate {}-{}@{}: {}",
            d["topic"].as_str().unwrap_or(""),
            d["partition"],
            d["offset"],
            d["reason"].as_str().unwrap_or("")
        );
    }
    s
}
