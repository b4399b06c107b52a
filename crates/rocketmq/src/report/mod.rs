//! The run report: what each consumer consumed, each group's broker-side state and history,
//! assignment per queue, warnings that spell out consequences, and why messages were not consumed.

use mqviz_engine::sort::StableSort;
use mqviz_engine::vec_map::{VecMap, VecSet};

use serde_json::{json, Map, Value};

mod unconsumed;
mod warnings;

pub use unconsumed::{why_unconsumed, Unconsumed};
pub use warnings::group_warnings;

use super::allocate;
use super::duplicates::find_duplicates;
use super::events::MsgId;
use super::store::Message;
use super::types::{java_str_cmp, MessageModel, MessageQueue};
use super::world::ConsumptionRecord;
use super::world::{is_system_topic, World};
use mqviz_engine::BitSet;
use mqviz_engine::EventId;
use std::borrow::Cow;

fn message_json(m: &Message) -> Value {
    json!({
        "topic": &**m.topic(), "tag": m.tag().as_deref(), "queueId": m.queue_id(), "offset": m.queue_offset(), "body": m.body().text(),
    })
}

/// Per-message provenance: every log event about the message or its retry copies.
pub struct Provenance {
    by_root: VecMap<MsgId, Vec<EventId>>,
}

impl Provenance {
    pub fn build(w: &World) -> Provenance {
        let mut by_root: VecMap<MsgId, Vec<EventId>> = VecMap::new();
        for (m, e) in w.log().message_events() {
            let root = w.messages[m as usize].root();
            by_root.entry(root).or_default().push(e);
        }
        Provenance { by_root }
    }

    pub fn events(&self, root: MsgId) -> &[EventId] {
        self.by_root.get(&root).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// A consumer as reports name it: its name, with its clientId when that differs.
pub fn who(w: &World, c: usize) -> String {
    let con = &w.consumers[c];
    if con.name == con.client_id {
        con.name.to_string()
    } else {
        format!("{} (clientId {})", con.name, con.client_id)
    }
}

/// The consumers of a group as the scenario and timeline define them, in order.
pub fn group_members(w: &World) -> VecMap<String, Vec<usize>> {
    let mut out: VecMap<String, Vec<usize>> = VecMap::new();
    for (i, c) in w.consumers.iter().enumerate() {
        out.entry(c.group.to_string()).or_default().push(i);
    }
    out
}

/// Calls `f(group, scope, message)` for every message of a topic the scope subscribes to that the
/// scope did not consume, where a scope is a group (BROADCASTING: each member of it) with its
/// members; retry copies and system topics are left out (their root message is the one counted).
/// The report lists these, and `totals` counts them, so the two cannot disagree.
pub fn for_each_unconsumed(w: &World, members: &VecMap<String, Vec<usize>>, f: impl FnMut(&str, &[usize], &Message)) {
    for_each_unconsumed_given(w, members, |_, scope| Cow::Owned(w.consumed_roots(scope)), f)
}

/// [`for_each_unconsumed`], with what each scope consumed given by `consumed(group index, scope)`
/// (`totals` has each group's set already: it counts duplicates with it).
pub fn for_each_unconsumed_given<'w>(
    w: &'w World,
    members: &VecMap<String, Vec<usize>>,
    mut consumed: impl FnMut(usize, &[usize]) -> Cow<'w, BitSet>,
    mut f: impl FnMut(&str, &[usize], &Message),
) {
    for (gi, (group, ms)) in members.iter().enumerate() {
        let scopes: Vec<Vec<usize>> = if w.consumers[ms[0]].model == MessageModel::Broadcasting {
            ms.iter().map(|&c| vec![c]).collect()
        } else {
            vec![ms.clone()]
        };
        let snapshot = w.snapshot_group(group);
        for scope in scopes {
            let topics: VecSet<&str> =
                scope.iter().flat_map(|&c| w.consumers[c].spec.subscriptions.iter().map(|s| s.topic.as_str())).collect();
            let consumed = consumed(gi, &scope);
            // Whether the scope owes messages of a shape (its topic), remembered for the last few
            // shapes (a send script's tags alternate): a million string compares made the page's
            // outcome line one long task.
            let mut recent: [Option<(&std::sync::Arc<crate::store::Shape>, bool)>; 8] = [None; 8];
            let mut next = 0;
            for m in &w.messages {
                if m.origin().is_some() || consumed.contains(m.id) {
                    continue;
                }
                let known = recent.iter().flatten().find(|(shape, _)| std::sync::Arc::ptr_eq(shape, &m.shape));
                let owed = match known {
                    Some(&(_, owed)) => owed,
                    None => {
                        let owed = !is_system_topic(m.topic()) && topics.contains(&**m.topic());
                        recent[next] = Some((&m.shape, owed));
                        next = (next + 1) % recent.len();
                        owed
                    }
                };
                if owed && !snapshot.is_some_and(|g| w.read_before_snapshot_by(g, m.id)) {
                    f(group, &scope, m);
                }
            }
        }
    }
}

/// Who holds each queue of each topic the group subscribes to (running consumers only, by name;
/// several when instances share a clientId).
pub fn assignment(w: &World, members: &[usize]) -> VecMap<String, VecMap<MessageQueue, Option<String>>> {
    let mut topics = VecSet::new();
    for &c in members {
        for s in &w.consumers[c].spec.subscriptions {
            topics.insert(s.topic.clone());
        }
    }
    let mut out = VecMap::new();
    for topic in topics {
        let mut queues = VecMap::new();
        for b in &w.brokers {
            if let Some((read, _)) = b.topics.get(&topic) {
                for q in 0..*read {
                    let mq = MessageQueue::new(topic.as_str(), &*b.name, q);
                    let holders: Vec<&str> = members
                        .iter()
                        .map(|&c| &w.consumers[c])
                        .filter(|c| c.running && c.pqs.contains_key(&mq))
                        .map(|c| &*c.name)
                        .collect();
                    queues.insert(mq, (!holders.is_empty()).then(|| holders.join(", ")));
                }
            }
        }
        out.insert(topic, queues);
    }
    out
}

/// What the group's strategy would give each queue, with the broker's current member list.
pub fn allocation_by_strategy(w: &World, group: &str, topic: &str, members: &[usize]) -> VecMap<MessageQueue, String> {
    let mut out = VecMap::new();
    let Some(&first) = members.iter().find(|&&c| w.consumers[c].running) else { return out };
    let con = &w.consumers[first];
    let Some(broker) = w.brokers.iter().find(|b| b.groups.contains_key(group)) else { return out };
    let mut cids = broker.groups[group].all_client_ids();
    cids.stable_sort_by(|a, b| java_str_cmp(a, b));
    let mut mq_all: Vec<MessageQueue> = Vec::new();
    for b in &w.brokers {
        if let Some((read, _)) = b.topics.get(topic) {
            mq_all.extend((0..*read).map(|q| MessageQueue::new(topic, &*b.name, q)));
        }
    }
    mq_all.stable_sort();
    if let Ok(map) = allocate::allocate_group(&con.strategy, &mq_all, &cids) {
        for (cid, qs) in map {
            for q in qs {
                out.entry(q).or_insert(cid.clone());
            }
        }
    }
    out
}

pub fn report_json(w: &World) -> Value {
    let prov = Provenance::build(w);
    let members = group_members(w);
    // Each consumption with what the listener saw (reconsumeTimes, orderly local retries included).
    let mut runs: Vec<Vec<&ConsumptionRecord>> = vec![Vec::new(); w.consumers.len()];
    for r in &w.consumptions {
        runs[r.consumer()].push(r);
    }
    let mut consumers = Map::new();
    for (i, c) in w.consumers.iter().enumerate() {
        let consumed: Vec<Value> = runs[i]
            .iter()
            .map(|r| {
                let mut v = message_json(&w.messages[w.messages[r.msg as usize].root() as usize]);
                v["reconsumeTimes"] = json!(r.reconsume_times());
                if r.result_discarded() {
                    v["resultDiscarded"] = json!(true);
                }
                v
            })
            .collect();
        let subs: Map<String, Value> = c.spec.subscriptions.iter().map(|s| (s.topic.clone(), json!(s.expression))).collect();
        consumers.insert(
            c.name.to_string(),
            json!({
                "clientId": &*c.client_id,
                "group": &*c.group,
                "running": c.running,
                "crashed": c.crashed,
                "startError": c.start_error,
                "subscriptions": subs,
                "consumed": consumed,
                "stats": {"pulls": c.stats.pulls, "pulled": c.stats.pulled, "clientFiltered": c.stats.client_filtered,
                          "consumed": c.stats.consumed, "failed": c.stats.failed, "retried": c.stats.retried,
                          "localRetries": c.stats.local_retries, "resultsDiscarded": c.stats.discarded},
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
                        json!({"expression": &*sd.sub_string, "subVersion": sd.sub_version, "writtenBy": writer}),
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
                "members": ms.iter().map(|&c| w.consumers[c].name.to_string()).collect::<Vec<_>>(),
                "subscriptionTable": table,
                "subscriptionTableByBroker": by_broker,
                "subscriptionHistory": w.history.get(group).cloned().unwrap_or_default(),
                "assignment": assign_json,
                "warnings": group_warnings(w, group, ms),
            }),
        );
    }
    for_each_unconsumed(w, &members, |group, scope, m| {
        let u = why_unconsumed(w, &prov, m.id, group, scope);
        let mut v = message_json(m);
        v["msg"] = json!(m.id);
        v["group"] = json!(group);
        if w.consumers[scope[0]].model == MessageModel::Broadcasting {
            v["consumer"] = json!(&*w.consumers[scope[0]].name);
        }
        v["kind"] = json!(u.kind);
        v["reason"] = json!(u.reason);
        v["events"] = json!(u.events);
        unconsumed.push(v);
    });
    let duplicates: Vec<Value> = find_duplicates(w)
        .iter()
        .map(|d| {
            let m = &w.messages[d.root as usize];
            let mut causes: Vec<&str> = d.causes.iter().map(|c| c.text()).collect();
            causes.dedup();
            json!({
                "group": d.group, "msg": d.root, "topic": &**m.topic(), "queueId": m.queue_id(), "offset": m.queue_offset(), "body": m.body().text(),
                "consumers": d.consumptions.iter().map(|&i| &*w.consumers[w.consumptions[i].consumer()].name).collect::<Vec<_>>(),
                "cause": causes.join("; "),
            })
        })
        .collect();
    let mut queues = Vec::new();
    for b in &w.brokers {
        for (topic, cqs) in &b.cqs {
            for (q, cq) in cqs.iter().enumerate() {
                let committed: Map<String, Value> = b
                    .offsets
                    .iter()
                    .filter(|((t, _, qid), _)| t == topic && *qid as usize == q)
                    .map(|((_, g, _), o)| (g.to_string(), json!(o)))
                    .collect();
                let mut row = json!({"topic": topic, "broker": &*b.name, "queueId": q, "maxOffset": cq.max_offset(), "committed": committed});
                if cq.min_offset() > 0 {
                    row["minOffset"] = json!(cq.min_offset());
                }
                queues.push(row);
            }
        }
    }
    let mut report = json!({
        "scenario": w.scenario.name,
        "time": w.now,
        "events": w.log().len(),
        "digest": format!("{:016x}", w.log().digest()),
        "consumers": consumers,
        "groups": groups,
        "queues": queues,
        "unconsumed": unconsumed,
        "duplicates": duplicates,
    });
    if w.snapshot_messages > 0 {
        report["inQueuesAtStart"] = json!(w.snapshot_messages);
    }
    if let Some(stop) = &w.budget_stop {
        report["stopped"] =
            json!({"at": stop.at, "memoryBudget": stop.budget, "memoryReached": stop.reached, "reason": stop.message()});
    }
    report
}

/// A human-readable rendering of the report.
pub fn report_text(w: &World) -> String {
    let r = report_json(w);
    let mut s = String::new();
    s.push_str(&format!(
        "scenario {} at t={} ms, {} events, digest {}\n",
        w.scenario.name,
        w.now,
        w.log().len(),
        r["digest"].as_str().unwrap_or("")
    ));
    if w.snapshot_messages > 0 {
        s.push_str(&format!("{} messages were in the queues at t=0 (the scenario's snapshot)\n", w.snapshot_messages));
    }
    if let Some(stop) = &w.budget_stop {
        s.push_str(&format!("stopped early: {}\n", stop.message()));
    }
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
    let dups = r["duplicates"].as_array().cloned().unwrap_or_default();
    s.push_str(&format!("\nduplicates ({})\n", dups.len()));
    for d in &dups {
        let consumers: Vec<&str> = d["consumers"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        s.push_str(&format!(
            "  [{}] {} q{}@{} {}: consumed by {} ({})\n",
            d["group"].as_str().unwrap_or(""),
            d["topic"].as_str().unwrap_or(""),
            d["queueId"],
            d["offset"],
            d["body"].as_str().unwrap_or(""),
            consumers.join(", "),
            d["cause"].as_str().unwrap_or("")
        ));
    }
    let un = r["unconsumed"].as_array().cloned().unwrap_or_default();
    s.push_str(&format!("\nunconsumed ({})\n", un.len()));
    for u in &un {
        let scope = match u["consumer"].as_str() {
            Some(c) => format!("{}/{c}", u["group"].as_str().unwrap_or("")),
            None => u["group"].as_str().unwrap_or("").to_string(),
        };
        s.push_str(&format!(
            "  [{scope}] {} q{}@{} {}: {} (events {})\n",
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
