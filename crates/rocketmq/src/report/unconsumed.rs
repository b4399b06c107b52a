//! Why a message was not consumed: by the group (CLUSTERING) or by one member (BROADCASTING).
//! Every reason comes from the message's provenance or from the state that holds it back, so no
//! produced message is silently absent from a report.

use mqviz_engine::sort::StableSort;
use mqviz_engine::vec_map::VecSet;

use super::warnings::describe_running_filter;
use super::{allocation_by_strategy, who, Provenance};
use crate::consumer::{Consumer, OrderlyTask};
use crate::events::{Event, MsgId};
use crate::types::{ConsumeFromWhere, MessageModel, MessageQueue};
use crate::world::{World, MAX_RECONSUME_TIMES};

/// One unconsumed message: a short kind (for tests and tools), the reason, the events behind it.
pub struct Unconsumed {
    pub kind: &'static str,
    pub reason: String,
    pub events: Vec<u32>,
}

/// Why `root` was not consumed by `members` (the whole group, or the one BROADCASTING member).
pub fn why_unconsumed(w: &World, prov: &Provenance, root: MsgId, group: &str, members: &[usize]) -> Unconsumed {
    let mut events = Vec::new();
    let found = from_provenance(w, prov, root, group, members, &mut events);
    if let Some(stored) =
        prov.events(root).iter().find(|e| matches!(w.log().get(**e).map(|x| x.kind), Some(Event::MessageStored { .. })))
    {
        events.push(stored.0);
    }
    let (kind, reason) = found.unwrap_or_else(|| compacted(w, root).unwrap_or_else(|| from_state(w, root, group, members)));
    events.stable_sort();
    events.dedup();
    Unconsumed { kind, reason, events }
}

/// The events that would explain it were compacted: its consumer's pulls went past it, but the
/// filter entries that said why are no longer in the log.
fn compacted(w: &World, root: MsgId) -> Option<(&'static str, String)> {
    let before = w.log().log.compacted_before()?;
    let m = &w.messages[root as usize];
    if !w.is_stored(m) || m.stored_at >= before {
        return None;
    }
    let passed = w.consumers.iter().any(|c| {
        c.pqs.iter().any(|(mq, pq)| {
            *mq.topic == **m.topic()
                && mq.queue_id == m.queue_id()
                && *mq.broker == *w.brokers[m.broker()].name
                && m.queue_offset() < pq.next_offset
        })
    });
    if !passed
        && w.brokers[m.broker()]
            .offsets
            .iter()
            .all(|((t, _, q), o)| t != &**m.topic() || q != m.queue_id() || o <= m.queue_offset())
    {
        return None;
    }
    Some(("compacted", format!(
        "compacted: stored at t={} and passed over by the group's pulls, but the log entries that say why (before t={before}) were compacted to keep the run inside its memory budget",
        m.stored_at
    )))
}

/// The latest event that explains the loss: a filter, the DLQ, a pending retry, a failed send.
fn from_provenance(
    w: &World,
    prov: &Provenance,
    root: MsgId,
    group: &str,
    members: &[usize],
    ids: &mut Vec<u32>,
) -> Option<(&'static str, String)> {
    let member_ids: VecSet<&str> = members.iter().map(|&c| &*w.consumers[c].client_id).collect();
    let m = &w.messages[root as usize];
    let tag = m.tag().as_deref().unwrap_or("-");
    let events = prov.events(root);
    for &e in events.iter().rev() {
        let Some(entry) = w.log().get(e) else { continue };
        match &entry.kind {
            Event::ClientFiltered { client, expression, current, .. } if member_ids.contains(&**client) => {
                ids.push(e.0);
                let collision = events.iter().find(
                    |x| matches!(w.log().get(**x).map(|y| y.kind), Some(Event::TagHashCollision { client: c, .. }) if c == *client),
                );
                let broker_part = match collision.and_then(|x| w.log().get(*x)) {
                    Some(c) => {
                        ids.push(c.id.0);
                        match &c.kind {
                            Event::TagHashCollision { expression: table, code, .. } => format!(
                                "the broker let tag {tag} through only because its hashCode ({code}) equals that of a tag in the group's filter {table:?} (the consume queue stores hash codes)"
                            ),
                            _ => unreachable!("matched above"),
                        }
                    }
                    None => format!("the broker's filter for the group let tag {tag} through"),
                };
                let own = match current {
                    Some(now) => format!(
                        "dropped it with {expression:?}, the subscription its pull was sent with (it had switched to {now:?} since; the callback re-filters with the SubscriptionData captured when the pull was sent)"
                    ),
                    None => format!("dropped it with its own expression {expression:?}"),
                };
                let kind = if collision.is_some() { "tag-hash-collision" } else { "client-filtered" };
                return Some((kind, format!(
                    "{client} pulled it ({broker_part}) and {own}; {client}'s offset for queue {} moved past it, and no other member pulls that queue range again",
                    m.queue_id()
                )));
            }
            Event::BrokerFiltered { client, expression, table_owner, verdict: Some(v), .. } if member_ids.contains(&**client) => {
                ids.push(e.0);
                let q = m.queue_id();
                let reason = if *v == "BLOOM_MISS" {
                    format!("skipped by the broker while {client} pulled queue {q}: the consume-queue bloom bitmap says the group's SQL92 filter {expression:?} does not match; the offset moved past it")
                } else {
                    let table = w.brokers.iter().find_map(|b| b.groups.get(group)?.subscription_table.get(&**m.topic()).cloned());
                    let which = match table {
                        Some(t) if *t.sub_string != **expression => {
                            describe_running_filter(w, group, m.topic(), &t.sub_string, t.sub_version, table_owner)
                        }
                        _ => format!("{expression:?} (from {table_owner}'s heartbeat)"),
                    };
                    format!("skipped by the broker while {client} pulled queue {q}: the group's SQL92 filter, {which}, evaluated to {v} on this message's String properties, and only TRUE matches; the offset moved past it")
                };
                return Some(("broker-filtered", reason));
            }
            Event::BrokerFiltered { client, expression, table_owner, .. } if member_ids.contains(&**client) => {
                ids.push(e.0);
                return Some(("broker-filtered", format!(
                    "skipped by the broker while {client} pulled queue {}: the group's subscription table held {expression:?} (written by {table_owner}'s heartbeat), which does not match tag {tag}; the offset moved past it",
                    m.queue_id()
                )));
            }
            Event::MovedToDlq { group: g, .. } if **g == *group => {
                ids.push(e.0);
                return Some(("dlq", format!("moved to %DLQ%{group} after {} failed attempts", MAX_RECONSUME_TIMES + 1)));
            }
            Event::SentBack { group: g, delay_ms, .. } if **g == *group => {
                ids.push(e.0);
                return Some((
                    "retrying",
                    format!("consumption failed; waiting in %RETRY%{group} (next delivery {delay_ms} ms after it was sent back)"),
                ));
            }
            Event::ConsumeFailed { client, reconsume_times, .. }
                if member_ids.contains(&**client)
                    && members.iter().all(|&c| w.consumers[c].model == MessageModel::Broadcasting) =>
            {
                ids.push(e.0);
                return Some(("broadcast-failure-dropped", format!(
                    "{client}'s listener failed on it (reconsumeTimes {reconsume_times}); in BROADCASTING a failure is only logged: the message is not sent back and the offset moves on"
                )));
            }
            Event::SendFailed { attempts, reason, .. } => {
                ids.push(e.0);
                return Some(("send-failed", format!(
                    "never stored: the synchronous send failed after {attempts} attempts ({reason}); the producer's route still listed queues the broker no longer has"
                )));
            }
            _ => {}
        }
    }
    None
}

/// What holds the message back now: its queue's owner, or why the queue has none.
fn from_state(w: &World, root: MsgId, group: &str, members: &[usize]) -> (&'static str, String) {
    let m = &w.messages[root as usize];
    if !w.is_stored(m) {
        return ("in-flight-send", "not stored yet: the send is still on its way to the broker".to_string());
    }
    let mq = MessageQueue::new(&**m.topic(), &*w.brokers[m.broker()].name, m.queue_id());
    if members.len() == 1 && w.consumers[members[0]].model == MessageModel::Broadcasting {
        if let Some(r) = broadcast_member_reason(w, members[0], &mq, m.queue_offset()) {
            return r;
        }
    }
    // A queue that is not young (a snapshot's, whose first entries were deleted) starts where the
    // group's policy says when the group has no offset for it: what lies below was never due.
    if let Some((c, first)) = w.group_policy_start(members, &mq, m.queue_offset()) {
        let con = &w.consumers[c];
        let policy = match con.consume_from_where {
            ConsumeFromWhere::LastOffset => "CONSUME_FROM_LAST_OFFSET starts at the queue's max offset",
            ConsumeFromWhere::FirstOffset => "CONSUME_FROM_FIRST_OFFSET starts at its min offset",
            ConsumeFromWhere::Timestamp => {
                "CONSUME_FROM_TIMESTAMP starts at the first message stored at or after consumeTimestamp"
            }
        };
        return ("before-group-start", format!(
            "in the queue before {} started queue {} at offset {first}: {group} had no committed offset there, and the queue is not young (its min offset is {}), so {policy}",
            who(w, c),
            mq.short(),
            w.brokers[m.broker()].cq(m.topic(), m.queue_id()).map_or(0, |cq| cq.min_offset())
        ));
    }
    let holder = members.iter().map(|&c| (c, &w.consumers[c])).find(|(_, c)| c.running && c.pqs.contains_key(&mq));
    if let Some((c, con)) = holder {
        return held_by(w, c, con, &mq, m.queue_offset());
    }
    let read = w.brokers[m.broker()].topics.get(&**m.topic()).map(|(r, _)| *r).unwrap_or(0);
    if m.queue_id() >= read {
        return (
            "beyond-route",
            format!(
                "its queue {} is beyond the topic's {} since setQueueCount: no route lists it, so no consumer will pull it",
                mq.short(),
                mqviz_engine::words::count(u64::from(read), "read queue", "read queues")
            ),
        );
    }
    let alloc = allocation_by_strategy(w, group, m.topic(), members);
    if let Some(cid) = alloc.get(&mq) {
        return (
            "owner-does-not-subscribe",
            format!("its queue {} is allocated to {cid}, which does not subscribe {} and never pulls it", mq.short(), m.topic()),
        );
    }
    if let Some(b) = w.brokers.iter().find(|b| b.groups.contains_key(group)) {
        let cids = b.groups[group].all_client_ids();
        let distinct: VecSet<&String> = cids.iter().collect();
        if distinct.len() < cids.len() {
            return ("duplicate-client-id", format!(
                "its queue {} belongs to no one: the group's consumer list holds a clientId more than once (instances sharing it), every copy takes the block of its first position, and the blocks of the other positions are never taken",
                mq.short()
            ));
        }
    }
    if let Some((c, e)) = members.iter().find_map(|&c| w.consumers[c].start_error.as_ref().map(|e| (c, e))) {
        return ("start-failed", format!("its queue {} has no owner: {} failed to start ({e})", mq.short(), who(w, c)));
    }
    if !members.iter().any(|&c| w.consumers[c].running) {
        return ("no-running-member", format!("its queue {} has no owner: no member of {group} is running", mq.short()));
    }
    ("no-owner", format!("its queue {} has no owner in the group yet (the next rebalance assigns it)", mq.short()))
}

/// The queue is held by `con`: the message waits in its ProcessQueue, behind a failing orderly
/// message, behind a removal that waits, or simply has not been pulled yet.
fn held_by(w: &World, c: usize, con: &Consumer, mq: &MessageQueue, offset: u64) -> (&'static str, String) {
    let h = who(w, c);
    let pq = &con.pqs[mq];
    let q = mq.queue_id;
    if pq.dropped {
        return ("removal-pending", format!(
            "queue {q} is still held by {h}, whose ProcessQueue was dropped while its listener ran: the queue stays (broker lock included) until a later rebalance removes it"
        ));
    }
    if con.orderly {
        if let Some((&head_offset, &head)) = pq.in_flight.iter().next() {
            let attempts = pq.local_reconsume.get(&head).copied().unwrap_or(0);
            if attempts > 0 && head_offset < offset {
                return ("blocked-behind-failing", format!(
                    "queue {q} is consumed orderly by {h} and blocked behind m{head} (offset {head_offset}), which keeps failing: it has been re-consumed locally {}, every 1 s, and orderly consumption never skips it (maxReconsumeTimes -1 = Integer.MAX_VALUE)",
                    mqviz_engine::words::times(u64::from(attempts))
                ));
            }
        }
        if !pq.lock_usable(w.now) && con.model == MessageModel::Clustering {
            return ("not-locked", format!(
                "queue {q} is held by {h} but its broker lock is not held (or expired): nothing is pulled or consumed until the lock is renewed"
            ));
        }
    }
    if let Some(&msg) = pq.in_flight.get(&offset) {
        let attempts = pq.local_reconsume.get(&msg).copied().unwrap_or(0);
        if con.orderly && attempts > 0 {
            return ("failing-locally", format!(
                "in {h}'s ProcessQueue for queue {q}: the orderly listener keeps failing on it (re-consumed locally {}, every 1 s; with maxReconsumeTimes -1 = Integer.MAX_VALUE it is never sent back)",
                mqviz_engine::words::times(u64::from(attempts))
            ));
        }
        let state = match pq.orderly_task {
            OrderlyTask::Listening { msg: running, .. } if running == msg => "its listener is running",
            _ => "waiting to be consumed",
        };
        return ("in-process-queue", format!("pulled by {h} and in its ProcessQueue for queue {q}: {state}"));
    }
    if offset < pq.next_offset {
        // Nothing in the provenance explains why the queue's pull moved past it: a model bug.
        return (
            "passed-over",
            format!(
                "queue {q} is held by {h}, whose pulls are past it (next pull offset {}), yet nothing consumed or filtered it",
                pq.next_offset
            ),
        );
    }
    if let Some(code) = pq.last_pull_error {
        return (
            "pull-failing",
            format!(
                "not pulled: {h}'s pulls of queue {q} fail with {code} and are retried every 3 s{}",
                match code {
                    "SYSTEM_ERROR" => " (e.g. the broker cannot filter SQL92: enablePropertyFilter=false)",
                    "SUBSCRIPTION_NOT_EXIST" => " (the group's subscription table on the broker lacks the topic)",
                    "FILTER_DATA_NOT_EXIST" => " (no SQL92 filter data is registered for the group)",
                    _ => "",
                }
            ),
        );
    }
    ("not-pulled-yet", format!("not pulled yet: queue {q} is held by {h} (next pull offset {})", pq.next_offset))
}

/// BROADCASTING: the member never ran, or started its queue after the message (local offset store).
fn broadcast_member_reason(w: &World, c: usize, mq: &MessageQueue, offset: u64) -> Option<(&'static str, String)> {
    let con = &w.consumers[c];
    let h = who(w, c);
    if con.incarnation.is_initial() {
        return Some((
            "member-never-started",
            format!("{h} never started, and in BROADCASTING every member consumes for itself"),
        ));
    }
    if let Some(first) = w.policy_start(c, mq) {
        if offset < first {
            let policy = match con.consume_from_where {
                ConsumeFromWhere::LastOffset => "CONSUME_FROM_LAST_OFFSET starts at the queue's max offset",
                ConsumeFromWhere::FirstOffset => "CONSUME_FROM_FIRST_OFFSET starts at 0",
                ConsumeFromWhere::Timestamp => {
                    "CONSUME_FROM_TIMESTAMP starts at the first message stored at or after consumeTimestamp"
                }
            };
            return Some(("before-member-start", format!(
                "stored before {h} started queue {} at offset {first} with no offset for it in its local offset file (BROADCASTING: the broker's young-queue rule does not apply, and {policy})",
                mq.queue_id
            )));
        }
    }
    if !con.running {
        return Some(("member-not-running", format!("{h} is not running, and in BROADCASTING every member consumes for itself")));
    }
    None
}
