//! Warnings for one group, each with its consequence spelled out.

use mqviz_engine::sort::StableSort;
use mqviz_engine::vec_map::{VecMap, VecSet};

use super::{allocation_by_strategy, assignment, who};
use crate::allocate;
use crate::filterapi::ExpressionType;
use crate::types::{is_retry_topic, java_str_cmp, MessageModel, MessageQueue};
use crate::world::World;

pub(super) fn subs_text(w: &World, c: usize) -> VecSet<String> {
    w.consumers[c].spec.subscriptions.iter().map(|s| format!("{}={}", s.topic, s.expression)).collect()
}

/// Warnings for one group, each with its consequence spelled out.
pub fn group_warnings(w: &World, group: &str, members: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    let running: Vec<usize> = members.iter().copied().filter(|&c| w.consumers[c].running).collect();
    // Members that have not started yet have subscribed nothing so far: a warning speaks of what
    // has happened, so a consumer that joins later is not in it before it starts.
    let started: Vec<usize> = members.iter().copied().filter(|&c| w.consumers[c].incarnation.0 > 0).collect();
    let considered: Vec<usize> = if running.len() >= 2 { running.clone() } else { started };
    let sets: Vec<VecSet<String>> = considered.iter().map(|&c| subs_text(w, c)).collect();
    if sets.windows(2).any(|p| p[0] != p[1]) {
        let listing: Vec<String> = considered
            .iter()
            .zip(&sets)
            .map(|(&c, s)| format!("{} {{{}}}", who(w, c), s.iter().cloned().collect::<Vec<_>>().join(", ")))
            .collect();
        let mut text = format!("Different subscription in the same group {group}: {}.", listing.join("; "));
        // Same topic, different expressions: one table entry per topic, so one expression wins.
        let mut by_topic: VecMap<&str, VecSet<&str>> = VecMap::new();
        let mut topic_users: VecMap<&str, VecSet<usize>> = VecMap::new();
        for &c in &considered {
            for s in &w.consumers[c].spec.subscriptions {
                by_topic.entry(&s.topic).or_default().insert(&s.expression);
                topic_users.entry(&s.topic).or_default().insert(c);
            }
        }
        for (topic, exprs) in &by_topic {
            if exprs.len() > 1 {
                let table = w.brokers.iter().find_map(|b| b.groups.get(group).and_then(|g| g.subscription_table.get(*topic)));
                let writer = w.brokers.iter().find_map(|b| b.table_writer.get(&(group.to_string(), topic.to_string())));
                match (table, writer) {
                    (Some(t), Some(wr)) => text.push_str(&format!(
                        " Consequence: the broker keeps one expression per topic, so {topic} is filtered with {} for every member; members with another expression drop what the broker sends them and their queues' offsets move past it, so those messages are lost for the group.",
                        describe_running_filter(w, group, topic, &t.sub_string, t.sub_version, wr)
                    )),
                    _ => text.push_str(&format!(" Consequence: the broker keeps one expression per topic, so only one of {exprs:?} is applied to {topic} for the whole group; messages other members want are silently lost.")),
                }
            }
        }
        for (topic, users) in &topic_users {
            let non: Vec<String> = considered.iter().filter(|c| !users.contains(c)).map(|&c| who(w, c)).collect();
            if !non.is_empty() && w.consumers[considered[0]].model == MessageModel::Clustering {
                text.push_str(&format!(
                    " Consequence: {} {} not subscribe {topic} but still {} when its queues are allocated, so those queues are never pulled and their messages pile up; the broker's table also flips between topics with each heartbeat, and pulls fail with SUBSCRIPTION_NOT_EXIST meanwhile.",
                    non.join(", "),
                    if non.len() == 1 { "does" } else { "do" },
                    if non.len() == 1 { "counts as a member" } else { "count as members" }
                ));
            }
        }
        out.push(text);
    }
    for &c in members {
        let con = &w.consumers[c];
        if let Some(e) = &con.start_error {
            if con.ignores_start_failure() && con.running {
                out.push(format!(
                    "{} failed to start: {e}. The application ignored the exception, so {} keeps heartbeating, rebalancing and holding its share of the queues, but its pulls fail (SYSTEM_ERROR without enablePropertyFilter, FILTER_DATA_NOT_EXIST for an expression that does not compile): messages on its queues are not consumed by this group.",
                    who(w, c),
                    con.name
                ));
            } else {
                out.push(format!(
                    "{} failed to start: {e}. The application shut it down; its queues go to the other members.",
                    who(w, c)
                ));
            }
        }
    }
    out.extend(duplicate_client_id_warnings(w, group, members));
    out.extend(missing_topic_warnings(w, members));
    out.extend(uncompilable_table_warnings(w, group));
    for (topic, queues) in assignment(w, members) {
        if is_retry_topic(&topic) {
            continue;
        }
        let alloc = allocation_by_strategy(w, group, &topic, members);
        let orphans: Vec<String> = queues
            .iter()
            .filter(|(_, h)| h.is_none())
            .map(|(mq, _)| match alloc.get(mq) {
                Some(cid) => format!("{} (allocated to {cid}, which does not pull it)", mq.short()),
                None => mq.short(),
            })
            .collect();
        // Before a member's first rebalance its share is not allocated yet: no fault.
        if !orphans.is_empty() && !running.is_empty() && w.awaiting_first_rebalance(&topic).is_none() {
            out.push(format!(
                "Queues of {topic} with no owner in {group}: {}. Messages there are not consumed by this group.",
                orphans.join(", ")
            ));
        }
    }
    out
}

/// How the group's filter for `topic` runs: the table's expression, or for SQL92 the filter data
/// the broker registered, which differs when the table's expression does not compile.
pub(crate) fn describe_running_filter(w: &World, group: &str, topic: &str, table: &str, version: u64, writer: &str) -> String {
    let sql = w.brokers.iter().find_map(|b| {
        let entry = b.groups.get(group)?.subscription_table.get(topic)?;
        matches!(entry.expression_type, ExpressionType::Other(_)).then_some(b)
    });
    let Some(b) = sql else { return format!("{table:?} (from {writer}'s heartbeat, subVersion {version})") };
    if crate::sql92::compile(table, b.filter_manager.config().sql92_version).is_ok() {
        return format!("{table:?} (from {writer}'s heartbeat, subVersion {version})");
    }
    match b.filter_manager.get(topic, group).filter(|fd| fd.compiled.is_some()) {
        Some(fd) => format!(
            "the registered filter data {:?} (the table holds {table:?} from {writer}'s heartbeat, which does not compile, so it was never registered)",
            fd.expression
        ),
        None => format!(
            "nothing: the table holds {table:?} from {writer}'s heartbeat, which does not compile, and no filter data is registered, so pulls fail with FILTER_DATA_NOT_EXIST"
        ),
    }
}

/// Members that share a clientId compute the same allocation block; the block of the list's
/// second copy of that id has no owner (spec §6, the duplicate-cid allocation vectors).
fn duplicate_client_id_warnings(w: &World, group: &str, members: &[usize]) -> Vec<String> {
    let mut by_cid: VecMap<&str, Vec<usize>> = VecMap::new();
    for &c in members.iter().filter(|&&c| w.consumers[c].running) {
        by_cid.entry(&w.consumers[c].client_id).or_default().push(c);
    }
    let mut out = Vec::new();
    for (cid, cs) in by_cid.iter().filter(|(_, cs)| cs.len() > 1) {
        let names: Vec<String> = cs.iter().map(|&c| w.consumers[c].name.to_string()).collect();
        let model = w.consumers[cs[0]].model;
        if model == MessageModel::Broadcasting {
            continue;
        }
        let mut text = format!(
            "{} share clientId {cid} (containers with the same IP@PID, or a fixed instanceName). The broker lists {cid} once per connection, so the sorted consumer list holds it {} times; every copy finds its index at the first one and takes the same queues",
            names.join(" and "),
            cs.len()
        );
        for (topic, owned, orphaned) in shared_and_orphaned(w, group, cid, cs) {
            text.push_str(&format!(
                "; on {topic} both consume {} (every message twice) while {} {} to the list's other copies of {cid} and nobody pulls them (their messages pile up)",
                owned.join(", "),
                if orphaned.is_empty() { "no queue".to_string() } else { orphaned.join(", ") },
                if orphaned.len() > 1 { "belong" } else { "belongs" }
            ));
        }
        text.push('.');
        out.push(text);
    }
    out
}

/// For each subscribed topic: the queues the shared clientId takes, and those nobody takes.
fn shared_and_orphaned(w: &World, group: &str, cid: &str, cs: &[usize]) -> Vec<(String, Vec<String>, Vec<String>)> {
    let Some(broker) = w.brokers.iter().find(|b| b.groups.contains_key(group)) else { return Vec::new() };
    let mut cids = broker.groups[group].all_client_ids();
    cids.stable_sort_by(|a, b| java_str_cmp(a, b));
    let strategy = &w.consumers[cs[0]].strategy;
    let mut out = Vec::new();
    let topics: VecSet<&str> =
        cs.iter().flat_map(|&c| w.consumers[c].spec.subscriptions.iter().map(|s| s.topic.as_str())).collect();
    for topic in topics {
        let mut mq_all: Vec<MessageQueue> = w
            .brokers
            .iter()
            .flat_map(|b| {
                let read = b.topics.get(topic).map(|(r, _)| *r).unwrap_or(0);
                (0..read).map(move |q| MessageQueue::new(topic, &*b.name, q))
            })
            .collect();
        mq_all.stable_sort();
        let mut taken = VecSet::new();
        let mut mine = Vec::new();
        let distinct: VecSet<&String> = cids.iter().collect();
        for other in distinct {
            if let Ok(qs) = allocate::allocate(strategy, other, &mq_all, &cids) {
                if other == cid {
                    mine = qs.iter().map(MessageQueue::short).collect();
                }
                taken.extend(qs);
            }
        }
        let orphaned = mq_all.iter().filter(|q| !taken.contains(*q)).map(MessageQueue::short).collect();
        out.push((topic.to_string(), mine, orphaned));
    }
    out
}

/// A subscribed topic that does not exist: the route is not found (spec §5).
fn missing_topic_warnings(w: &World, members: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    for &c in members.iter().filter(|&&c| w.consumers[c].running) {
        for s in &w.consumers[c].spec.subscriptions {
            if !w.brokers.iter().any(|b| b.topics.contains_key(&s.topic)) {
                out.push(format!(
                    "{} subscribes {}, which does not exist: its route is not found, so every rebalance logs \"the topic[{}] not exist\", bumps the subVersion and heartbeats, and nothing is pulled until the topic is created.",
                    who(w, c),
                    s.topic,
                    s.topic
                ));
            }
        }
    }
    out
}

/// A SQL92 table entry that does not compile: what runs instead (spec §9, register removes or
/// keeps the filter data).
fn uncompilable_table_warnings(w: &World, group: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in &w.brokers {
        let Some(info) = b.groups.get(group) else { continue };
        for (topic, sd) in &info.subscription_table {
            if !matches!(sd.expression_type, ExpressionType::Other(_)) || is_retry_topic(topic) {
                continue;
            }
            let Err(e) = crate::sql92::compile(&sd.sub_string, b.filter_manager.config().sql92_version) else {
                continue;
            };
            let writer = b.table_writer.get(&(group.to_string(), topic.clone())).map(|n| n.to_string()).unwrap_or_default();
            out.push(format!(
                "{}'s subscription table for {topic} holds the SQL92 expression {:?} from {writer}, which does not compile ({e}). Pulls are filtered by {}.",
                b.name,
                sd.sub_string,
                describe_running_filter(w, group, topic, &sd.sub_string, sd.sub_version, &writer)
            ));
        }
    }
    out
}
