//! The run report: what each consumer consumed, each group's broker-side state and history,
//! assignment per queue, warnings that spell out consequences, and why messages were not consumed.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::allocate;
use super::events::{Event, MsgId};
use super::store::Message;
use super::types::{is_retry_topic, java_str_cmp, MessageModel, MessageQueue};
use super::world::{is_system_topic, World};
use crate::sim::engine::EventId;

fn message_json(m: &Message) -> Value {
    json!({
        "topic": &*m.topic, "tag": m.tag.as_deref(), "queueId": m.queue_id, "offset": m.queue_offset, "body": m.body.text(),
    })
}

/// Per-message provenance: every log event about the message or its retry copies.
pub struct Provenance {
    by_root: BTreeMap<MsgId, Vec<EventId>>,
}

impl Provenance {
    pub fn build(w: &World) -> Provenance {
        let mut by_root: BTreeMap<MsgId, Vec<EventId>> = BTreeMap::new();
        for &(m, e) in &w.msg_events {
            let root = w.messages[m as usize].root();
            by_root.entry(root).or_default().push(e);
        }
        Provenance { by_root }
    }

    pub fn events(&self, root: MsgId) -> &[EventId] {
        self.by_root.get(&root).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// The consumers of a group as the scenario and timeline define them, in order.
pub fn group_members(w: &World) -> BTreeMap<String, Vec<usize>> {
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, c) in w.consumers.iter().enumerate() {
        out.entry(c.group.to_string()).or_default().push(i);
    }
    out
}

/// Who holds each queue of each topic the group subscribes to (running consumers only).
pub fn assignment(w: &World, members: &[usize]) -> BTreeMap<String, BTreeMap<MessageQueue, Option<String>>> {
    let mut topics = BTreeSet::new();
    for &c in members {
        for s in &w.consumers[c].spec.subscriptions {
            topics.insert(s.topic.clone());
        }
    }
    let mut out = BTreeMap::new();
    for topic in topics {
        let mut queues = BTreeMap::new();
        for b in &w.brokers {
            if let Some((read, _)) = b.topics.get(&topic) {
                for q in 0..*read {
                    let mq = MessageQueue::new(&topic, &*b.name, q);
                    let holder = members
                        .iter()
                        .map(|&c| &w.consumers[c])
                        .find(|c| c.running && c.pqs.contains_key(&mq))
                        .map(|c| c.client_id.to_string());
                    queues.insert(mq, holder);
                }
            }
        }
        out.insert(topic, queues);
    }
    out
}

/// What the group's strategy would give each queue, with the broker's current member list.
pub fn allocation_by_strategy(w: &World, group: &str, topic: &str, members: &[usize]) -> BTreeMap<MessageQueue, String> {
    let mut out = BTreeMap::new();
    let Some(&first) = members.iter().find(|&&c| w.consumers[c].running) else { return out };
    let con = &w.consumers[first];
    let Some(broker) = w.brokers.iter().find(|b| b.groups.contains_key(group)) else { return out };
    let mut cids = broker.groups[group].all_client_ids();
    cids.sort_by(|a, b| java_str_cmp(a, b));
    let mut mq_all: Vec<MessageQueue> = Vec::new();
    for b in &w.brokers {
        if let Some((read, _)) = b.topics.get(topic) {
            mq_all.extend((0..*read).map(|q| MessageQueue::new(topic, &*b.name, q)));
        }
    }
    mq_all.sort();
    if let Ok(map) = allocate::allocate_group(&con.strategy, &mq_all, &cids) {
        for (cid, qs) in map {
            for q in qs {
                out.entry(q).or_insert(cid.clone());
            }
        }
    }
    out
}

fn subs_text(w: &World, c: usize) -> BTreeSet<String> {
    w.consumers[c].spec.subscriptions.iter().map(|s| format!("{}={}", s.topic, s.expression)).collect()
}

/// Warnings for one group, each with its consequence spelled out.
pub fn group_warnings(w: &World, group: &str, members: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    let running: Vec<usize> = members.iter().copied().filter(|&c| w.consumers[c].running).collect();
    let considered: Vec<usize> = if running.len() >= 2 { running.clone() } else { members.to_vec() };
    let sets: Vec<BTreeSet<String>> = considered.iter().map(|&c| subs_text(w, c)).collect();
    if sets.windows(2).any(|p| p[0] != p[1]) {
        let listing: Vec<String> = considered
            .iter()
            .zip(&sets)
            .map(|(&c, s)| format!("{} {{{}}}", w.consumers[c].client_id, s.iter().cloned().collect::<Vec<_>>().join(", ")))
            .collect();
        let mut text = format!("Different subscription in the same group {group}: {}.", listing.join("; "));
        // Same topic, different expressions: one table entry per topic, so one expression wins.
        let mut by_topic: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut topic_users: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
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
                        " Consequence: the broker keeps one expression per topic, so {topic} is filtered with {:?} (from {wr}'s heartbeat, subVersion {}) for every member; members with another expression drop what the broker sends them and their queues' offsets move past it, so those messages are lost for the group.",
                        t.sub_string, t.sub_version
                    )),
                    _ => text.push_str(&format!(" Consequence: the broker keeps one expression per topic, so only one of {exprs:?} is applied to {topic} for the whole group; messages other members want are silently lost.")),
                }
            }
        }
        for (topic, users) in &topic_users {
            let non: Vec<String> =
                considered.iter().filter(|c| !users.contains(c)).map(|&c| w.consumers[c].client_id.to_string()).collect();
            if !non.is_empty() && w.consumers[considered[0]].model == MessageModel::Clustering {
                text.push_str(&format!(
                    " Consequence: {} do(es) not subscribe {topic} but still count(s) as member(s) when its queues are allocated, so those queues are never pulled and their messages pile up; the broker's table also flips between topics with each heartbeat, and pulls fail with SUBSCRIPTION_NOT_EXIST meanwhile.",
                    non.join(", ")
                ));
            }
        }
        out.push(text);
    }
    for &c in members {
        if let Some(e) = &w.consumers[c].start_error {
            out.push(format!("{} failed to start: {e}. Its queues are not consumed by this group.", w.consumers[c].client_id));
        }
    }
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
        if !orphans.is_empty() && !running.is_empty() {
            out.push(format!(
                "Queues of {topic} with no owner in {group}: {}. Messages there are not consumed by this group.",
                orphans.join(", ")
            ));
        }
    }
    out
}

/// Why a message was not consumed by a group, from its provenance. Returns (reason, events).
fn unconsumed_reason(
    w: &World,
    prov: &Provenance,
    root: MsgId,
    group: &str,
    members: &[usize],
    holder: Option<&str>,
) -> (String, Vec<u32>) {
    let member_names: BTreeSet<&str> = members.iter().map(|&c| &*w.consumers[c].client_id).collect();
    let events = prov.events(root);
    let mut ids = Vec::new();
    let mut reason = None;
    let m = &w.messages[root as usize];
    for &e in events.iter().rev() {
        let Some(entry) = w.log.get(e) else { continue };
        match &entry.kind {
            Event::ClientFiltered { client, expression, .. } if member_names.contains(&**client) => {
                ids.push(e.0);
                reason = Some(format!(
                    "{client} pulled it (the broker's filter for the group let tag {} through) and dropped it with its own expression {expression:?}; {client}'s offset for queue {} moved past it, and no other member pulls that queue range again",
                    m.tag.as_deref().unwrap_or("-"),
                    m.queue_id
                ));
                break;
            }
            Event::BrokerFiltered { client, expression, table_owner, verdict: Some(v), .. }
                if member_names.contains(&**client) =>
            {
                ids.push(e.0);
                reason = Some(if *v == "BLOOM_MISS" {
                    format!("skipped by the broker while {client} pulled queue {}: the consume-queue bloom bitmap says the group's SQL92 filter {expression:?} does not match; the offset moved past it", m.queue_id)
                } else {
                    format!(
                        "skipped by the broker while {client} pulled queue {}: the group's SQL92 filter {expression:?} (from {table_owner}'s heartbeat) evaluated to {v} on this message's String properties, and only TRUE matches; the offset moved past it",
                        m.queue_id
                    )
                });
                break;
            }
            Event::BrokerFiltered { client, expression, table_owner, .. } if member_names.contains(&**client) => {
                ids.push(e.0);
                reason = Some(format!(
                    "skipped by the broker while {client} pulled queue {}: the group's subscription table held {expression:?} (written by {table_owner}'s heartbeat), which does not match tag {}; the offset moved past it",
                    m.queue_id,
                    m.tag.as_deref().unwrap_or("-")
                ));
                break;
            }
            Event::MovedToDlq { .. } => {
                ids.push(e.0);
                reason = Some(format!("moved to %DLQ%{group} after {} failed attempts", super::world::MAX_RECONSUME_TIMES + 1));
                break;
            }
            Event::SentBack { delay_ms, .. } => {
                ids.push(e.0);
                reason = Some(format!(
                    "consumption failed; waiting in %RETRY%{group} (next delivery {delay_ms} ms after it was sent back)"
                ));
                break;
            }
            _ => {}
        }
    }
    if let Some(stored) = events.iter().find(|e| matches!(w.log.get(**e).map(|x| &x.kind), Some(Event::MessageStored { .. }))) {
        ids.push(stored.0);
    }
    let reason = reason.unwrap_or_else(|| match holder {
        None => {
            let alloc = allocation_by_strategy(w, group, &m.topic, members);
            let mq = MessageQueue::new(&*m.topic, &*w.brokers[m.broker].name, m.queue_id);
            match alloc.get(&mq) {
                Some(cid) => format!(
                    "its queue {} is allocated to {cid}, which does not subscribe {} and never pulls it",
                    mq.short(),
                    m.topic
                ),
                None => match members.iter().find_map(|&c| w.consumers[c].start_error.as_ref().map(|e| (c, e))) {
                    Some((c, e)) => {
                        format!("its queue {} has no owner: {} failed to start ({e})", mq.short(), w.consumers[c].client_id)
                    }
                    None => format!("its queue {} has no owner in the group", mq.short()),
                },
            }
        }
        Some(h) => format!("not pulled yet: queue {} is held by {h}", m.queue_id),
    });
    ids.sort_unstable();
    (reason, ids)
}

pub fn report_json(w: &World) -> Value {
    let prov = Provenance::build(w);
    let members = group_members(w);
    let mut consumers = Map::new();
    for c in &w.consumers {
        let consumed: Vec<Value> = c.consumed.iter().map(|&m| message_json(&w.messages[m as usize])).collect();
        let subs: Map<String, Value> = c.spec.subscriptions.iter().map(|s| (s.topic.clone(), json!(s.expression))).collect();
        consumers.insert(
            c.client_id.to_string(),
            json!({
                "group": &*c.group,
                "running": c.running,
                "crashed": c.crashed,
                "startError": c.start_error,
                "subscriptions": subs,
                "consumed": consumed,
                "stats": {"pulls": c.stats.pulls, "pulled": c.stats.pulled, "clientFiltered": c.stats.client_filtered,
                          "consumed": c.stats.consumed, "failed": c.stats.failed, "retried": c.stats.retried},
            }),
        );
    }
    let mut groups = Map::new();
    let mut unconsumed = Vec::new();
    for (group, ms) in &members {
        let mut table = Map::new();
        let mut by_broker = Map::new();
        for b in &w.brokers {
            if let Some(info) = b.groups.get(group) {
                let mut t = Map::new();
                for (topic, sd) in &info.subscription_table {
                    let writer = b.table_writer.get(&(group.clone(), topic.clone())).map(|n| n.to_string());
                    t.insert(
                        topic.clone(),
                        json!({"expression": sd.sub_string, "subVersion": sd.sub_version, "writtenBy": writer}),
                    );
                }
                if table.is_empty() {
                    table = t.clone();
                }
                by_broker.insert(b.name.to_string(), Value::Object(t));
            }
        }
        let assign = assignment(w, ms);
        let mut assign_json = Map::new();
        for (topic, qs) in &assign {
            let m: Map<String, Value> = qs.iter().map(|(mq, h)| (mq.short(), json!(h))).collect();
            assign_json.insert(topic.clone(), Value::Object(m));
        }
        let model = w.consumers[ms[0]].model;
        groups.insert(
            group.clone(),
            json!({
                "messageModel": model.name(),
                "strategy": w.consumers[ms[0]].strategy_name,
                "members": ms.iter().map(|&c| w.consumers[c].client_id.to_string()).collect::<Vec<_>>(),
                "subscriptionTable": table,
                "subscriptionTableByBroker": by_broker,
                "subscriptionHistory": w.history.get(group).cloned().unwrap_or_default(),
                "assignment": assign_json,
                "warnings": group_warnings(w, group, ms),
            }),
        );
        // Messages of subscribed topics that no member consumed.
        let topics: BTreeSet<&str> =
            ms.iter().flat_map(|&c| w.consumers[c].spec.subscriptions.iter().map(|s| s.topic.as_str())).collect();
        let consumed: BTreeSet<MsgId> = ms.iter().flat_map(|&c| w.consumers[c].consumed.iter().copied()).collect();
        for m in &w.messages {
            if m.origin.is_some() || is_system_topic(&m.topic) || !topics.contains(&*m.topic) || consumed.contains(&m.id) {
                continue;
            }
            if model == MessageModel::Broadcasting {
                continue;
            }
            let mq = MessageQueue::new(&*m.topic, &*w.brokers[m.broker].name, m.queue_id);
            let holder = assign.get(&*m.topic).and_then(|q| q.get(&mq)).cloned().flatten();
            let (reason, events) = unconsumed_reason(w, &prov, m.id, group, ms, holder.as_deref());
            let mut v = message_json(m);
            v["group"] = json!(group);
            v["reason"] = json!(reason);
            v["events"] = json!(events);
            unconsumed.push(v);
        }
    }
    let mut queues = Vec::new();
    for b in &w.brokers {
        for (topic, cqs) in &b.cqs {
            for (q, cq) in cqs.iter().enumerate() {
                let committed: Map<String, Value> = b
                    .offsets
                    .iter()
                    .filter(|((t, _, qid), _)| t == topic && *qid as usize == q)
                    .map(|((_, g, _), o)| (g.clone(), json!(o)))
                    .collect();
                queues.push(json!({"topic": topic, "broker": &*b.name, "queueId": q, "maxOffset": cq.max_offset(), "committed": committed}));
            }
        }
    }
    json!({
        "scenario": w.scenario.name,
        "time": w.now,
        "events": w.log.len(),
        "digest": format!("{:016x}", w.log.digest()),
        "consumers": consumers,
        "groups": groups,
        "queues": queues,
        "unconsumed": unconsumed,
    })
}

/// A human-readable rendering of the report.
pub fn report_text(w: &World) -> String {
    let r = report_json(w);
    let mut s = String::new();
    s.push_str(&format!(
        "scenario {} at t={} ms, {} events, digest {}\n",
        w.scenario.name,
        w.now,
        w.log.len(),
        r["digest"].as_str().unwrap_or("")
    ));
    s.push_str("\nconsumers\n");
    for (cid, c) in r["consumers"].as_object().into_iter().flatten() {
        let consumed = c["consumed"].as_array().map(Vec::len).unwrap_or(0);
        s.push_str(&format!(
            "  {cid} (group {}, {}): consumed {consumed}\n",
            c["group"].as_str().unwrap_or(""),
            if c["running"] == true { "running" } else { "stopped" }
        ));
        for m in c["consumed"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "    {} {} q{}@{} {}\n",
                m["topic"].as_str().unwrap_or(""),
                m["tag"].as_str().unwrap_or("-"),
                m["queueId"],
                m["offset"],
                m["body"].as_str().unwrap_or("")
            ));
        }
    }
    for (g, gv) in r["groups"].as_object().into_iter().flatten() {
        s.push_str(&format!(
            "\ngroup {g} ({}, {})\n  broker subscription table:\n",
            gv["messageModel"].as_str().unwrap_or(""),
            gv["strategy"].as_str().unwrap_or("")
        ));
        for (t, e) in gv["subscriptionTable"].as_object().into_iter().flatten() {
            s.push_str(&format!(
                "    {t} = {} (subVersion {}, written by {})\n",
                e["expression"],
                e["subVersion"],
                e["writtenBy"].as_str().unwrap_or("?")
            ));
        }
        s.push_str("  table history:\n");
        for h in gv["subscriptionHistory"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "    t={} {} {} {} by {}: {} -> {}\n",
                h["at"],
                h["broker"].as_str().unwrap_or(""),
                h["topic"].as_str().unwrap_or(""),
                h["change"].as_str().unwrap_or(""),
                h["byClient"].as_str().unwrap_or(""),
                h["oldExpression"],
                h["newExpression"]
            ));
        }
        s.push_str("  assignment:\n");
        for (t, qs) in gv["assignment"].as_object().into_iter().flatten() {
            let parts: Vec<String> =
                qs.as_object().into_iter().flatten().map(|(q, o)| format!("{q}={}", o.as_str().unwrap_or("(none)"))).collect();
            s.push_str(&format!("    {t}: {}\n", parts.join(" ")));
        }
        for warn in gv["warnings"].as_array().into_iter().flatten() {
            s.push_str(&format!("  WARNING: {}\n", warn.as_str().unwrap_or("")));
        }
    }
    s.push_str("\nqueues\n");
    for q in r["queues"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "  {}:{}:{} max={} committed={}\n",
            q["topic"].as_str().unwrap_or(""),
            q["broker"].as_str().unwrap_or(""),
            q["queueId"],
            q["maxOffset"],
            q["committed"]
        ));
    }
    let un = r["unconsumed"].as_array().cloned().unwrap_or_default();
    s.push_str(&format!("\nunconsumed ({})\n", un.len()));
    for u in &un {
        s.push_str(&format!(
            "  [{}] {} q{}@{} {}: {} (events {})\n",
            u["group"].as_str().unwrap_or(""),
            u["topic"].as_str().unwrap_or(""),
            u["queueId"],
            u["offset"],
            u["body"].as_str().unwrap_or(""),
            u["reason"].as_str().unwrap_or(""),
            u["events"]
        ));
    }
    s
}
