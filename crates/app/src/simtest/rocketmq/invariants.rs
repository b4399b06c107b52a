//! The RocketMQ model's invariants, each derived from shared/specs/rocketmq.md:
//!
//! - `offsets-monotonic` (§7 step 5, §7 offsets): a committed offset moves backwards only through
//!   another writer (a former or concurrent owner's commit: the broker overwrites) or the
//!   OFFSET_ILLEGAL fix; never below a commit of the same consumer incarnation.
//! - `process-queue-identity` (§5): a running consumer's ProcessQueues belong to its current
//!   incarnation and their queues; a stopped consumer has none; a counted result comes from a
//!   ProcessQueue that was live while the listener ran, a discarded one from a dropped one.
//! - `stored-once` (§2): every stored message sits at its (queue, offset) and nowhere else.
//! - `conservation`: every produced message is consumed by each group that subscribes its topic
//!   (each member in BROADCASTING), or listed unconsumed with a reason backed by the state.
//! - `duplicates-explained` (§5 step 3, §8, §11.7): a message consumed twice is explained by a
//!   discarded result, a handover, a crash, a retry or a shared clientId.
//! - `orderly-exclusive`, `orderly-order`, `orderly-locked` (§8): in CLUSTERING no two consumers
//!   run the listener on one queue at the same time (excepted: a forced unlock, a graceful
//!   shutdown that unlocks without waiting for its listeners, and instances sharing a clientId,
//!   whose one broker lock either may release), a ProcessQueue consumes in queue-offset order,
//!   under its broker lock.
//! - `consistent-group-liveness` (§10, §11): in a group whose members subscribe alike, once churn
//!   has stopped and the run has settled, every matching message is consumed at least once.

use mqviz_engine::sort::CollectSorted;
use mqviz_engine::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::generate::SETTLE;
use crate::simtest::{Property, Violation};
use mqviz_engine::Millis;
use mqviz_model::Simulation;
use mqviz_rocketmq::allocate::Strategy;
use mqviz_rocketmq::duplicates::find_duplicates;
use mqviz_rocketmq::events::{Event, MsgId};
use mqviz_rocketmq::filter;
use mqviz_rocketmq::filterapi::{self, ExpressionType};
use mqviz_rocketmq::report::report_json;
use mqviz_rocketmq::scenario::{ConsumeResultPolicy, SubscriptionSpec};
use mqviz_rocketmq::sql92::{self, Verdict};
use mqviz_rocketmq::store::Message;
use mqviz_rocketmq::types::{MessageModel, MessageQueue};
use mqviz_rocketmq::world::{is_system_topic, World};

/// The invariants above, as `mqviz fuzz --list` prints them.
pub const PROPERTIES: &[Property] = &[
    Property { name: "offsets-monotonic", asserts: "a committed offset moves back only through another writer or the OFFSET_ILLEGAL fix, never below the same incarnation's commit" },
    Property { name: "process-queue-identity", asserts: "a running consumer's ProcessQueues are its current incarnation's; a stopped one has none; results count only from live ones" },
    Property { name: "stored-once", asserts: "every stored message sits at its (queue, offset) and nowhere else" },
    Property { name: "conservation", asserts: "every message is consumed by each subscribing group (each member in BROADCASTING) or listed unconsumed with a reason the state backs" },
    Property { name: "duplicates-explained", asserts: "a message consumed twice is explained by a discarded result, a handover, a crash, a retry or a shared clientId" },
    Property { name: "orderly-exclusive", asserts: "in CLUSTERING no two consumers run the orderly listener on one queue at once (forced unlocks, shutdowns and shared clientIds excepted)" },
    Property { name: "orderly-order", asserts: "an orderly ProcessQueue consumes in queue-offset order" },
    Property { name: "orderly-locked", asserts: "an orderly ProcessQueue consumes only under its broker lock" },
    Property { name: "consistent-group-liveness", asserts: "once churn stopped and the run settled, a group whose members subscribe alike consumed every matching message" },
];

/// What the step checks remember.
#[derive(Debug, Default)]
pub struct Watch {
    steps: u64,
}

fn violation(out: &mut Vec<Violation>, invariant: &'static str, at: Millis, detail: String) {
    out.push(Violation { invariant, at, detail });
}

pub(super) fn world(sim: &dyn Simulation) -> &World {
    sim.as_any().downcast_ref::<World>().expect("the RocketMQ target runs RocketMQ worlds")
}

/// Checks after one step.
pub fn check_step(w: &World, watch: &mut Watch, out: &mut Vec<Violation>) {
    watch.steps += 1;
    for c in &w.recent_commits {
        let Some((before, Some(previous_writer))) = c.previous else { continue };
        // One incarnation never commits below its own earlier commit: its ProcessQueues for the
        // queue start where it (or someone after it) committed, and its connection is FIFO.
        let same_writer = previous_writer.consumer == c.writer.consumer && previous_writer.incarnation == c.writer.incarnation;
        if c.offset < before && same_writer && !c.writer.reset {
            violation(
                out,
                "offsets-monotonic",
                w.now,
                format!(
                    "{} {} went back from {before} to {} by {} itself ({:?} after {:?})",
                    c.group, c.mq, c.offset, w.consumers[c.writer.consumer].name, c.writer.pq, previous_writer.pq
                ),
            );
        }
    }
    if watch.steps % 64 == 0 {
        check_process_queues(w, out);
    }
}

fn check_process_queues(w: &World, out: &mut Vec<Violation>) {
    for (c, con) in w.consumers.iter().enumerate() {
        if !con.running && !con.pqs.is_empty() {
            violation(out, "process-queue-identity", w.now, format!("{} is stopped but holds ProcessQueues", con.name));
        }
        for (mq, pq) in &con.pqs {
            let ok =
                w.process_queue_record(pq.id).is_some_and(|r| r.consumer == c && r.mq == *mq && r.incarnation == con.incarnation);
            if !ok {
                violation(
                    out,
                    "process-queue-identity",
                    w.now,
                    format!("{} holds {} for {mq}, recorded elsewhere", con.name, pq.id),
                );
            }
        }
    }
}

/// Checks at the end of the run.
pub fn check_end(scenario: &Value, w: &World, _watch: &Watch, out: &mut Vec<Violation>) {
    check_process_queues(w, out);
    check_consumed_from_live_process_queues(w, out);
    check_stored_once(w, out);
    check_conservation(w, out);
    check_duplicates(w, out);
    check_orderly(w, out);
    check_liveness(scenario, w, out);
}

/// A listener whose result counted ran on a ProcessQueue that was live from its start to its
/// end; one that ran on a dropped ProcessQueue had its result discarded (§5 step 3).
fn check_consumed_from_live_process_queues(w: &World, out: &mut Vec<Violation>) {
    for r in &w.consumptions {
        let Some(pq) = w.process_queue_record(r.pq) else {
            violation(out, "process-queue-identity", r.at, format!("consumption from unknown {}", r.pq));
            continue;
        };
        let live = pq.created_at <= r.started_at && pq.dropped.is_none_or(|(t, _)| t >= r.at);
        if !live && !r.result_discarded() {
            violation(
                out,
                "process-queue-identity",
                r.at,
                format!("{} counted m{} from {} dropped at {:?}", w.consumers[r.consumer()].name, r.msg, r.pq, pq.dropped),
            );
        }
        if live && r.result_discarded() && pq.dropped.is_none() {
            violation(out, "process-queue-identity", r.at, format!("m{} discarded from the live {}", r.msg, r.pq));
        }
    }
}

fn check_stored_once(w: &World, out: &mut Vec<Violation>) {
    for m in &w.messages {
        if !w.is_stored(m) {
            continue;
        }
        let entry = w.brokers[m.broker()].cq(m.topic(), m.queue_id()).and_then(|cq| cq.entry(m.queue_offset()));
        if entry.is_none_or(|e| e.msg != m.id) {
            violation(
                out,
                "stored-once",
                m.stored_at,
                format!("m{} is not at {}:{}@{}", m.id, m.topic(), m.queue_id(), m.queue_offset()),
            );
        }
    }
    let stored: usize = w.brokers.iter().flat_map(|b| b.cqs.values()).flat_map(|cqs| cqs.iter()).map(|cq| cq.entries.len()).sum();
    let expected = w.messages.iter().filter(|m| w.is_stored(m)).count();
    if stored != expected {
        violation(out, "stored-once", w.now, format!("{stored} consume-queue entries for {expected} stored messages"));
    }
}

fn check_conservation(w: &World, out: &mut Vec<Violation>) {
    let r = report_json(w);
    // (group, member for BROADCASTING, message) -> how often it is listed.
    let mut listed: BTreeMap<(String, Option<String>, u64), u32> = BTreeMap::new();
    for u in r["unconsumed"].as_array().into_iter().flatten() {
        let key = (
            u["group"].as_str().unwrap_or("").to_string(),
            u["consumer"].as_str().map(str::to_string),
            u["msg"].as_u64().unwrap_or(u64::MAX),
        );
        *listed.entry(key).or_insert(0) += 1;
        if u["reason"].as_str().unwrap_or("").is_empty() {
            violation(out, "conservation", w.now, format!("unconsumed without a reason: {u}"));
        }
        if let Err(e) = kind_backed_by_state(w, u) {
            violation(out, "conservation", w.now, e);
        }
    }
    if let Some((k, n)) = listed.iter().find(|(_, n)| **n > 1) {
        violation(out, "conservation", w.now, format!("{k:?} listed unconsumed {n} times"));
    }
    // Every produced message is consumed or listed, never both.
    for (group, members) in &mqviz_rocketmq::report::group_members(w) {
        let model = w.consumers[members[0]].model;
        let scopes: Vec<Vec<usize>> =
            if model == MessageModel::Broadcasting { members.iter().map(|&c| vec![c]).collect() } else { vec![members.clone()] };
        for scope in scopes {
            let topics: BTreeSet<&str> =
                scope.iter().flat_map(|&c| w.consumers[c].spec.subscriptions.iter().map(|s| s.topic.as_str())).collect_set();
            let consumed = w.consumed_roots(&scope);
            let member = (model == MessageModel::Broadcasting).then(|| w.consumers[scope[0]].name.to_string());
            for m in
                w.messages.iter().filter(|m| m.origin().is_none() && !is_system_topic(m.topic()) && topics.contains(&**m.topic()))
            {
                let is_listed = listed.contains_key(&(group.clone(), member.clone(), m.id as u64));
                // What the group read before the snapshot is owed nothing, whether or not it is
                // read again.
                let accounted =
                    if w.read_before_snapshot(group, m.id) { !is_listed } else { consumed.contains(m.id) != is_listed };
                if !accounted {
                    violation(
                        out,
                        "conservation",
                        w.now,
                        format!(
                            "m{} ({}:{}@{}) for {group}{}: consumed={} listed unconsumed={is_listed}",
                            m.id,
                            m.topic(),
                            m.queue_id(),
                            m.queue_offset(),
                            member.as_deref().map(|x| format!("/{x}")).unwrap_or_default(),
                            consumed.contains(m.id)
                        ),
                    );
                }
            }
        }
    }
}

/// The kinds whose claim can be checked against the state.
fn kind_backed_by_state(w: &World, u: &Value) -> Result<(), String> {
    let kind = u["kind"].as_str().unwrap_or("");
    let Some(root) = u["msg"].as_u64().and_then(|m| w.messages.get(m as usize)) else {
        return Err(format!("unconsumed entry for no message: {u}"));
    };
    let copies = |prefix: &str| w.messages.iter().any(|m| m.origin() == Some(root.id) && m.topic().starts_with(prefix));
    let ok = match kind {
        "send-failed" => w.send_failures.iter().any(|f| f.msg == root.id) && !w.is_stored(root),
        "in-flight-send" => !w.is_stored(root),
        "dlq" => copies("%DLQ%"),
        "retrying" => copies("%RETRY%"),
        // A queue's pulls went past a message nothing consumed or filtered.
        "passed-over" | "" => false,
        _ => w.is_stored(root),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("unconsumed kind {kind:?} not backed by the state: {u}"))
    }
}

fn check_duplicates(w: &World, out: &mut Vec<Violation>) {
    for d in find_duplicates(w) {
        if d.unexplained() {
            let m = &w.messages[d.root as usize];
            let who: Vec<String> = d
                .consumptions
                .iter()
                .map(|&i| {
                    let c = &w.consumptions[i];
                    format!("{}@{}-{}({})", w.consumers[c.consumer()].name, c.started_at, c.at, c.pq)
                })
                .collect();
            violation(
                out,
                "duplicates-explained",
                w.now,
                format!("m{} ({}:{}@{}) in {}: {}", d.root, m.topic(), m.queue_id(), m.queue_offset(), d.group, who.join(", ")),
            );
        }
    }
}

fn mq_of(w: &World, m: &Message) -> MessageQueue {
    MessageQueue::new(&**m.topic(), &*w.brokers[m.broker()].name, m.queue_id())
}

/// Whether another member of `c`'s group that ran shares its clientId. Broker locks are keyed by
/// clientId, so such twins share one lock: both may consume the queue at once, and one twin's
/// unlock (on removal or shutdown) releases the lock the other still counts on.
fn has_twin(w: &World, c: usize) -> bool {
    let con = &w.consumers[c];
    w.consumers
        .iter()
        .enumerate()
        .any(|(o, x)| o != c && x.group == con.group && x.client_id == con.client_id && !x.incarnation.is_initial())
}

fn check_orderly(w: &World, out: &mut Vec<Violation>) {
    // Per ProcessQueue: offsets strictly increase.
    let mut by_pq: BTreeMap<_, Vec<usize>> = BTreeMap::new();
    let mut by_queue: BTreeMap<(String, MessageQueue), Vec<usize>> = BTreeMap::new();
    for (i, r) in w.consumptions.iter().enumerate() {
        let con = &w.consumers[r.consumer()];
        if !con.orderly {
            continue;
        }
        by_pq.entry(r.pq).or_default().push(i);
        if con.model == MessageModel::Clustering {
            let m = &w.messages[r.msg as usize];
            by_queue.entry((con.group.to_string(), mq_of(w, m))).or_default().push(i);
            if r.lock.is_none() && !r.result_discarded() && !has_twin(w, r.consumer()) {
                violation(
                    out,
                    "orderly-locked",
                    r.at,
                    format!("{} consumed m{} on {} without holding its broker lock", con.name, r.msg, mq_of(w, m)),
                );
            }
        }
    }
    for (pq, runs) in &by_pq {
        let offsets: Vec<u64> = runs.iter().map(|&i| w.messages[w.consumptions[i].msg as usize].queue_offset()).collect();
        if offsets.windows(2).any(|p| p[0] >= p[1]) {
            violation(out, "orderly-order", w.now, format!("{pq} consumed offsets {offsets:?}"));
        }
    }
    for ((group, mq), runs) in &by_queue {
        for (k, &i) in runs.iter().enumerate() {
            for &j in &runs[k + 1..] {
                let (a, b) = (&w.consumptions[i], &w.consumptions[j]);
                // A run still going when its queue was unlocked under it may overlap the next
                // owner's: a forced removal (last locked > 20 s ago), or a graceful shutdown, which
                // unlocks every queue without waiting for running listeners
                // (awaitTerminationMillisWhenShutdown = 0).
                let forced = |r: &mqviz_rocketmq::world::ConsumptionRecord| {
                    let Some(pq) = w.process_queue_record(r.pq).filter(|_| r.result_discarded()) else { return false };
                    let forced_removal =
                        pq.forced_unlock.is_some_and(|f| f.at > f.last_lock_at + mqviz_rocketmq::world::UNLOCK_DELAY);
                    forced_removal || pq.dropped.is_some_and(|(_, why)| why == mqviz_rocketmq::world::DropReason::Shutdown)
                };
                if a.consumer() == b.consumer() || forced(a) || forced(b) {
                    continue;
                }
                let shared = has_twin(w, a.consumer()) || has_twin(w, b.consumer());
                if !shared && a.started_at < b.at && b.started_at < a.at {
                    violation(
                        out,
                        "orderly-exclusive",
                        b.started_at,
                        format!(
                            "{group} {mq}: {} ran {}-{} and {} ran {}-{}",
                            w.consumers[a.consumer()].name,
                            a.started_at,
                            a.at,
                            w.consumers[b.consumer()].name,
                            b.started_at,
                            b.at
                        ),
                    );
                }
            }
        }
    }
}

/// When churn stopped: the last timeline action or send, whichever is later.
fn churn_end(scenario: &Value, w: &World) -> Millis {
    let actions = scenario["timeline"].as_array().into_iter().flatten().filter_map(|a| a["at"].as_u64()).max().unwrap_or(0);
    let sends = w.messages.iter().map(|m| m.born_at).max().unwrap_or(0);
    let lifecycle = scenario["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["consumers"].as_array().into_iter().flatten())
        .flat_map(|c| ["startAt", "stopAt", "crashAt", "restartAt"].map(|k| c[k].as_u64().unwrap_or(0)))
        .max()
        .unwrap_or(0);
    actions.max(sends).max(lifecycle)
}

/// From when a consistent group must have consumed every matching message: from the start if
/// every member that ever ran subscribed alike and no subscription changed; a minute after the
/// last subscription change if they changed together. `None` when members that ran subscribed
/// differently (their transient losses are real and explained elsewhere).
fn quiet_from(scenario: &Value, w: &World, members: &[usize]) -> Option<Millis> {
    let ran: Vec<usize> = members.iter().copied().filter(|&c| !w.consumers[c].incarnation.is_initial()).collect();
    let subs = |c: usize| {
        let mut v: Vec<(String, String, Option<String>)> = w.consumers[c]
            .spec
            .subscriptions
            .iter()
            .map(|s| (s.topic.clone(), s.expression.clone(), s.expression_type.clone()))
            .collect();
        v.stable_sort();
        v
    };
    if !ran.windows(2).all(|p| subs(p[0]) == subs(p[1])) {
        return None;
    }
    let names: BTreeSet<&str> = members.iter().map(|&c| &*w.consumers[c].name).collect_set();
    let last_change = scenario["timeline"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| {
            matches!(a["action"].as_str(), Some("subscribe") | Some("unsubscribe"))
                && a["consumer"].as_str().or(a["clientId"].as_str()).is_some_and(|n| names.contains(n))
        })
        .filter_map(|a| a["at"].as_u64())
        .max();
    Some(last_change.map(|t| t + 60_000).unwrap_or(0))
}

/// Whether a consistent group's filters let `m` through: the broker's check with the group's
/// expression and the client's re-filter with the same one.
fn matches(m: &Message, sub: &SubscriptionSpec, broker_version: sql92::Sql92Version) -> bool {
    match sub.expression_type.as_deref() {
        None => filterapi::build_subscription_data(&sub.topic, Some(&sub.expression), 0)
            .is_ok_and(|sd| sd.broker_tag_match(m.tags_code()) && sd.client_tag_match(m.tag().as_deref())),
        Some(_) => sql92::compile(&sub.expression, broker_version).is_ok_and(|expr| filter::evaluate(&expr, m) == Verdict::True),
    }
}

fn check_liveness(scenario: &Value, w: &World, out: &mut Vec<Violation>) {
    let end = churn_end(scenario, w);
    if w.now < end + SETTLE {
        return;
    }
    for (group, members) in mqviz_rocketmq::report::group_members(w) {
        let running: Vec<usize> = members.iter().copied().filter(|&c| w.consumers[c].running).collect();
        let Some(&first) = running.first() else { continue };
        if !liveness_applies(w, &running) || still_working(w, &running) {
            continue;
        }
        let Some(quiet_from) = quiet_from(scenario, w, &members) else { continue };
        let con = &w.consumers[first];
        let consumed: Vec<_> = (0..w.consumers.len()).map(|c| w.consumed_roots(&[c])).collect();
        for sub in &con.spec.subscriptions {
            for m in w
                .messages
                .iter()
                .filter(|m| m.origin().is_none() && **m.topic() == *sub.topic && m.stored_at >= quiet_from.max(1))
            {
                let broker = &w.brokers[m.broker()];
                let read = broker.topics.get(&**m.topic()).map(|(r, _)| *r).unwrap_or(0);
                if m.queue_id() >= read || !matches(m, sub, broker.filter_manager.config().sql92_version) {
                    continue;
                }
                let consumed_by = |c: usize| consumed[c].contains(m.id);
                match con.model {
                    MessageModel::Clustering => {
                        // Below where the group's policy started a queue that is not young.
                        let before_start = w.group_policy_start(&members, &mq_of(w, m), m.queue_offset()).is_some();
                        if !before_start && !members.iter().any(|&c| consumed_by(c)) {
                            violation(out, "consistent-group-liveness", w.now, lost(w, &group, None, m));
                        }
                    }
                    MessageModel::Broadcasting => {
                        for &c in &running {
                            let mq = mq_of(w, m);
                            let from = w.policy_start(c, &mq).unwrap_or(0);
                            if m.queue_offset() < from || failed_by(w, c, m.id) || consumed_by(c) {
                                continue;
                            }
                            violation(out, "consistent-group-liveness", w.now, lost(w, &group, Some(c), m));
                        }
                    }
                }
            }
        }
    }
}

/// A member with messages in its ProcessQueues that consumed (or failed) one in the last minute is
/// slow, not stuck: the run has not settled for it yet. A member with a backlog and no activity
/// is checked (a lost completion would leave it so).
fn still_working(w: &World, running: &[usize]) -> bool {
    let window = w.now.saturating_sub(60_000);
    let busy: BTreeSet<&str> = running
        .iter()
        .map(|&c| &w.consumers[c])
        .filter(|c| c.pqs.values().any(|pq| !pq.in_flight.is_empty()))
        .map(|c| &*c.client_id)
        .collect_set();
    !busy.is_empty()
        && w.log().entries().rev().take_while(|e| e.at >= window).any(|e| match &e.kind {
            Event::Consumed { client, .. } | Event::ConsumeFailed { client, .. } => busy.contains(&**client),
            _ => false,
        })
}

fn lost(w: &World, group: &str, member: Option<usize>, m: &Message) -> String {
    format!(
        "{group}{} never consumed m{} ({}:{}@{} tag={}) stored at t={}",
        member.map(|c| format!("/{}", w.consumers[c].name)).unwrap_or_default(),
        m.id,
        m.topic(),
        m.queue_id(),
        m.queue_offset(),
        m.tag().as_deref().unwrap_or("-"),
        m.stored_at
    )
}

/// BROADCASTING failures are only logged: the member drops the message (spec §8).
fn failed_by(w: &World, c: usize, msg: MsgId) -> bool {
    let client = &w.consumers[c].client_id;
    w.log().message_events().any(|(m, e)| {
        m == msg && matches!(w.log().get(e).map(|x| x.kind), Some(Event::ConsumeFailed { client: x, .. }) if x == *client)
    })
}

/// The group can be expected to consume everything: its running members subscribe alike, have
/// distinct clientIds, started fine, do not always fail, its strategy covers every queue, and
/// every broker of a SQL92 topic can filter SQL92.
fn liveness_applies(w: &World, running: &[usize]) -> bool {
    let first = &w.consumers[running[0]];
    let same_subs = running.iter().all(|&c| {
        let mut a = w.consumers[c].spec.subscriptions.clone();
        let mut b = first.spec.subscriptions.clone();
        a.stable_sort_by(|x, y| x.topic.cmp(&y.topic));
        b.stable_sort_by(|x, y| x.topic.cmp(&y.topic));
        a == b
    });
    let ids: BTreeSet<&str> = running.iter().map(|&c| &*w.consumers[c].client_id).collect_set();
    let healthy = running.iter().all(|&c| {
        let con = &w.consumers[c];
        con.start_error.is_none() && con.spec.result != ConsumeResultPolicy::AlwaysFail
    });
    if !same_subs || ids.len() != running.len() || !healthy {
        return false;
    }
    let covers_all = match &first.strategy {
        Strategy::MachineRoom { consumer_idcs } => w.brokers.iter().all(|b| {
            let parts: Vec<&str> = b.name.split('@').collect();
            parts.len() == 2 && consumer_idcs.contains(parts[0])
        }),
        Strategy::Config { queues } => w.brokers.iter().all(|b| {
            b.topics.iter().all(|(_, (read, _))| {
                (0..*read).all(|q| queues.iter().any(|mq| *mq.broker == *b.name && mq.queue_id == q && mq.topic.is_empty()))
            })
        }),
        Strategy::ConsistentHash { virtual_nodes } => *virtual_nodes > 0,
        _ => true,
    };
    let sql_ok = first.spec.subscriptions.iter().all(|s| {
        s.expression_type.is_none()
            || w.brokers.iter().filter(|b| b.topics.contains_key(&s.topic)).all(|b| {
                b.enable_property_filter && sql92::compile(&s.expression, b.filter_manager.config().sql92_version).is_ok()
            })
    });
    let tags_ok = first.spec.subscriptions.iter().all(|s| {
        s.expression_type.is_some()
            || filterapi::build(&s.topic, Some(&s.expression), None, 0).is_ok_and(|sd| sd.expression_type == ExpressionType::Tag)
    });
    covers_all && sql_ok && tags_ok
}
