//! A scenario's snapshot (`docs/scenario-format.md`, "Snapshots (RocketMQ)"): queues that already
//! hold messages, committed offsets on the brokers, and a group whose members were running with
//! their ProcessQueues. It is restored before the first event, so the run continues from where
//! `mqadmin` saw the group instead of every member starting and rebalancing at t=0.

use super::*;
use mqviz_engine::sort::StableSort;

/// Who wrote the messages that were in the queues at t=0, as the log and the canvas name it.
pub const SNAPSHOT_WRITER: &str = "(before the snapshot)";

impl World {
    /// Restores the snapshot's queues, committed offsets and running members (at t=0, in `new`).
    pub(super) fn restore_snapshot(&mut self) {
        self.restore_queues();
        self.restore_committed();
        // The canvas shows what some group read before the snapshot as consumed.
        for m in 0..self.snapshot_messages {
            let groups = self.snapshot_committed.len();
            if (0..groups).any(|g| self.read_before_snapshot_by(g, m)) {
                self.fates[m as usize] = Fate::Consumed;
            }
        }
        for g in 0..self.scenario.groups.len() {
            self.restore_members(g);
        }
        self.snapshot_members_restored = self.scenario.groups.iter().any(|g| !g.snapshot.members.is_empty());
    }

    /// The subVersion a subscription made now gets: the time, but in a run restored from a
    /// snapshot at least 1. The snapshot's members subscribed before t=0 (their subVersions are
    /// 0 here), so an expression entered at t=0 is newer and wins the broker's table, as it would.
    pub(super) fn sub_version_now(&self) -> u64 {
        if self.snapshot_members_restored {
            self.now.max(1)
        } else {
            self.now
        }
    }

    /// True when message `m` was in its queue at t=0 below the offset `group` had committed then:
    /// the group read it before the snapshot, so the run owes it nothing.
    pub fn read_before_snapshot(&self, group: &str, m: MsgId) -> bool {
        self.snapshot_group(group).is_some_and(|g| self.read_before_snapshot_by(g, m))
    }

    /// The index of `group` among the groups with committed offsets in the snapshot: looked up
    /// once by callers that ask `read_before_snapshot_by` about every message.
    pub fn snapshot_group(&self, group: &str) -> Option<usize> {
        self.snapshot_committed.keys().position(|g| g == group)
    }

    /// Whether `m` is in its consume queue: stored during the run, or there since before t=0.
    pub fn is_stored(&self, m: &Message) -> bool {
        m.stored_at > 0 || m.id < self.snapshot_messages
    }

    pub fn read_before_snapshot_by(&self, g: usize, m: MsgId) -> bool {
        if m >= self.snapshot_messages {
            return false;
        }
        let msg = &self.messages[m as usize];
        let Some((_, committed)) = self.snapshot_committed.iter().nth(g) else { return false };
        committed.get(&msg.pid).is_some_and(|c| msg.queue_offset() < *c)
    }

    /// Each queue with `brokerOffsets` holds messages from its min to its max offset; the ones
    /// below the min were deleted before t=0.
    fn restore_queues(&mut self) {
        let scenario = self.scenario.clone();
        for t in &scenario.topics {
            let tag = t.backlog_tag.as_deref().map(name);
            let key = self.tag_key(tag.as_ref());
            let shape = Arc::new(Shape {
                topic: name(&t.name),
                tags_code: tag.as_deref().map_or(0, |t| java_string_hash(t) as i64),
                tag,
                key,
                keys: None,
                properties: Default::default(),
                body: name(SNAPSHOT_WRITER),
                producer: name(SNAPSHOT_WRITER),
            });
            for broker in t.broker_offsets.keys() {
                let Some(b) = self.broker_index(broker) else { continue };
                for q in 0..t.queues {
                    let mq = MessageQueue::new(t.name.as_str(), broker.as_str(), q);
                    let (min, max) = scenario.snapshot_range(&mq);
                    let Some(cq) = self.brokers[b].cqs.get_mut(&t.name).and_then(|cqs| cqs.get_mut(q as usize)) else {
                        continue;
                    };
                    cq.base = min;
                    let pid = cq.pid.unwrap_or(u32::MAX);
                    let first_msg = self.messages.len() as MsgId;
                    // The parser bounds a snapshot's messages by the scenario's message limit.
                    let count = (max - min) as u32;
                    cq.entries.reserve(count as usize);
                    self.messages.reserve(count as usize);
                    for k in 0..count {
                        let msg = first_msg + k;
                        cq.entries.push(crate::store::CqEntry { msg });
                        let mut m = Message::new(msg, shape.clone(), k, 0, b, q);
                        m.set_queue_offset(min + u64::from(k));
                        m.pid = pid;
                        self.messages.push(m);
                    }
                    self.fates.resize(self.messages.len(), Fate::Pending);
                    let (broker, topic) = (self.brokers[b].name.clone(), name(&t.name));
                    self.emit(Event::SnapshotQueue { broker, topic, queue_id: q, min, max, first_msg });
                }
            }
        }
        self.snapshot_messages = self.messages.len() as MsgId;
    }

    /// The brokers hold each group's committed offsets from t=0, written by nobody in this run.
    fn restore_committed(&mut self) {
        let scenario = self.scenario.clone();
        for g in &scenario.groups {
            let mut by_pid = VecMap::new();
            for (mq, offset) in &g.snapshot.committed {
                let Some(b) = self.broker_index(&mq.broker) else { continue };
                self.brokers[b].offsets.restore(&mq.topic, &g.name, mq.queue_id, *offset);
                if let Some(pid) = self.brokers[b].cq(&mq.topic, mq.queue_id).and_then(|cq| cq.pid) {
                    by_pid.insert(pid, *offset);
                }
            }
            self.snapshot_committed.insert(g.name.clone(), by_pid);
        }
    }

    /// The snapshot's members were running at t=0: each broker knows their channels and the
    /// subscription table their heartbeats wrote, and each member holds a ProcessQueue per
    /// assigned queue, pulling from the committed offset. Their RebalanceService has run (the
    /// next run is 20 s away), so nothing moves until something changes.
    fn restore_members(&mut self, g: usize) {
        let spec = self.scenario.groups[g].clone();
        let members: Vec<(usize, &Vec<MessageQueue>)> =
            spec.snapshot.members.iter().filter_map(|(n, queues)| Some((self.find_consumer(n)?, queues))).collect();
        if members.is_empty() {
            return;
        }
        for &(c, _) in &members {
            self.begin_incarnation(c);
        }
        // Registered in scenario order: with every subVersion at 0, the first member's
        // subscription holds a topic's table entry, as the first heartbeat's would.
        for &(c, _) in &members {
            let subs: Vec<Arc<SubscriptionData>> = self.consumers[c].subs.values().cloned().collect();
            for b in 0..self.brokers.len() {
                self.register_heartbeat(b, c, &subs, false);
            }
        }
        // The first heartbeat created the group's retry topic, which the members then routed.
        for &(c, _) in &members {
            self.refresh_routes(c);
        }
        for &(c, assigned) in &members {
            let topics: Vec<String> = self.consumers[c].subs.keys().cloned().collect();
            for topic in topics {
                let covered = spec.snapshot.members.values().flatten().any(|mq| *mq.topic == *topic);
                let Some(b) = self.consumers[c].routes.get(&topic).and_then(|r| self.broker_index(&r.first()?.broker)) else {
                    continue;
                };
                let mut cid_all = self.brokers[b].groups.get(&*spec.name).map(|i| i.all_client_ids()).unwrap_or_default();
                cid_all.stable_sort_by(|a, b| crate::types::java_str_cmp(a, b));
                let set: VecSet<MessageQueue> = if covered {
                    assigned.iter().filter(|mq| *mq.topic == *topic).cloned().collect()
                } else {
                    // The snapshot says nothing of this topic (the retry topic, say): the members
                    // hold what their strategy gave them.
                    let route = self.consumers[c].routes[&topic].clone();
                    self.allocate_by_strategy(c, &topic, route, &cid_all).unwrap_or_default().into_iter().collect()
                };
                self.restore_allocation(c, &topic, set, cid_all);
            }
            let con = &mut self.consumers[c];
            con.rebalance.runs = 1;
            self.schedule_rebalance_at(c, REBALANCE_INTERVAL);
            self.arm_client_timers(c);
        }
    }

    /// The ProcessQueues of a snapshot member's queues, their pull chains running from t=0 (and,
    /// orderly, the broker's locks held). Logged as an allocation that added nothing: the member
    /// already held them, which is no rebalance.
    fn restore_allocation(&mut self, c: usize, topic: &str, set: VecSet<MessageQueue>, cid_all: Vec<String>) {
        let needs_lock = self.consumers[c].orderly && self.consumers[c].model == MessageModel::Clustering;
        for mq in &set {
            if needs_lock {
                self.lock_queue(c, mq);
            }
            self.add_process_queue(c, mq, 0);
        }
        let queues: Vec<u32> = set.iter().map(|q| q.queue_id).collect();
        let client = self.consumers[c].client_id.clone();
        let strategy = self.consumers[c].strategy_name;
        self.emit(Event::Allocated {
            client,
            topic: name(topic),
            strategy,
            cid_all,
            queues,
            added: Vec::new(),
            removed: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_scenario;
    use serde_json::{json, Value};

    /// Two brokers with four queues of `T` each holding offsets 0..100; group `G` committed 90
    /// everywhere, `c1` holding broker-a's queues and `c2` broker-b's (what AVG gives them).
    fn snapshot(extra_consumers: Value, timeline: Value) -> Value {
        let queues = |b: &str| (0..4).map(|q| format!("T:{b}:{q}")).collect::<Vec<_>>();
        let committed: serde_json::Map<String, Value> =
            queues("broker-a").into_iter().chain(queues("broker-b")).map(|q| (q, json!(90))).collect();
        let mut consumers = vec![
            json!({"clientId": "c1", "subscriptions": {"T": "*"}, "assigned": queues("broker-a")}),
            json!({"clientId": "c2", "subscriptions": {"T": "*"}, "assigned": queues("broker-b")}),
        ];
        consumers.extend(extra_consumers.as_array().cloned().unwrap_or_default());
        json!({
            "format": "mqviz-scenario/1", "broker": "rocketmq", "until": 60_000,
            "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
            "topics": [{"name": "T", "queues": 4, "brokerOffsets": {"broker-a": [100, 100, 100, 100], "broker-b": [100, 100, 100, 100]}}],
            "groups": [{"name": "G", "committed": committed, "consumers": consumers}],
            "timeline": timeline,
        })
    }

    fn run(v: &Value) -> World {
        let mut w = World::new(parse_scenario(&v.to_string()).unwrap_or_else(|e| panic!("{e:?}")));
        w.run_to_end();
        w
    }

    fn count(w: &World, pred: impl Fn(&Event) -> bool) -> usize {
        w.log().entries().filter(|e| pred(&e.kind)).count()
    }

    #[test]
    fn a_running_group_continues_from_its_committed_offsets_without_a_rebalance() {
        let w = run(&snapshot(json!([]), json!([])));
        assert_eq!(w.snapshot_messages, 80, "only what the group has yet to read is held: 10 per queue");
        // Each member reads its own queues' lag once, from the committed offset.
        let consumed: Vec<(usize, u64)> =
            w.consumptions.iter().map(|r| (r.consumer(), w.messages[r.msg as usize].queue_offset())).collect();
        assert_eq!(consumed.len(), 80);
        assert!(consumed.iter().all(|&(_, o)| (90..100).contains(&o)), "{consumed:?}");
        assert_eq!(consumed.iter().filter(|(c, _)| *c == 0).count(), 40);
        // Nobody was notified, nothing was added or removed, and the periodic runs keep it so.
        assert_eq!(count(&w, |e| matches!(e, Event::NotifyReceived { .. })), 0);
        assert_eq!(
            count(&w, |e| matches!(e, Event::Allocated { added, removed, .. } if !added.is_empty() || !removed.is_empty())),
            0
        );
        assert!(count(&w, |e| matches!(e, Event::RebalanceRun { .. })) >= 4, "RebalanceService runs at 20 s and 40 s");
        for b in &w.brokers {
            for q in 0..4 {
                assert_eq!(b.committed("T", "G", q), Some(100), "{} q{q}", b.name);
                assert_eq!(b.cq("T", q).unwrap().min_offset(), 90);
            }
        }
        let r = crate::report::report_json(&w);
        assert_eq!(r["inQueuesAtStart"], json!(80));
        assert_eq!(r["unconsumed"], json!([]));
    }

    #[test]
    fn a_member_that_starts_later_rebalances_the_snapshot_group() {
        let w = run(&snapshot(json!([{"clientId": "c3", "subscriptions": {"T": "*"}, "startAt": 5000}]), json!([])));
        let moved = count(
            &w,
            |e| matches!(e, Event::Allocated { added, removed, topic, .. } if &**topic == "T" && (!added.is_empty() || !removed.is_empty())),
        );
        assert!(moved >= 2, "c3 takes queues from the snapshot's owners");
        let first_notify = w.log().entries().find(|e| matches!(e.kind, Event::NotifyReceived { .. })).map(|e| e.at);
        assert!(first_notify.is_some_and(|t| t >= 5000), "{first_notify:?}");
    }

    #[test]
    fn what_another_group_read_before_the_snapshot_is_not_owed_and_a_deleted_head_moves_the_offset() {
        let mut v = snapshot(json!([]), json!([]));
        // G2 had read to 95 on broker-a's q0 only; the queue's min offset is 92, so G (at 90)
        // pulls below it and is moved to 92 (OFFSET_TOO_SMALL).
        v["topics"][0]["minOffsets"] = json!({"broker-a": [92, 90, 90, 90]});
        v["groups"].as_array_mut().unwrap().push(json!({"name": "G2", "committed": {"T:broker-a:0": 95},
            "consumers": [{"clientId": "d1", "subscriptions": {"T": "*"}, "assigned": ["T:broker-a:0"]}]}));
        let w = run(&v);
        assert_eq!(count(&w, |e| matches!(e, Event::OffsetIllegal { next: 92, .. })), 1);
        let d1 = w.find_consumer("d1").unwrap();
        let read: Vec<u64> =
            w.consumptions.iter().filter(|r| r.consumer() == d1).map(|r| w.messages[r.msg as usize].queue_offset()).collect();
        let q0: Vec<u64> = read.iter().copied().filter(|o| *o < 100).collect();
        assert_eq!(q0, (95..100).collect::<Vec<_>>(), "G2 reads from its own committed offset");
        let first = w.messages.iter().find(|m| &**m.topic() == "T" && m.broker() == 0 && m.queue_id() == 0).unwrap();
        assert_eq!(first.queue_offset(), 92);
        assert!(w.read_before_snapshot("G2", first.id) && !w.read_before_snapshot("G", first.id));
        let r = crate::report::report_json(&w);
        // G2 owes broker-a's other queues (it never held them), but not q0's 92..95.
        let unconsumed = r["unconsumed"].as_array().unwrap();
        let on_a_q0 = |u: &&Value| {
            let m = &w.messages[u["msg"].as_u64().unwrap() as usize];
            u["group"] == "G2" && m.broker() == 0 && m.queue_id() == 0
        };
        assert_eq!(unconsumed.iter().filter(on_a_q0).count(), 0, "d1 read 95..100: {unconsumed:#?}");
        // Broker-b's queues, which no G2 member holds, are owed, with a true reason.
        let owed: Vec<&Value> = unconsumed.iter().filter(|u| u["group"] == "G2").collect();
        assert!(!owed.is_empty() && owed.iter().all(|u| u["kind"] != "in-flight-send"), "{owed:#?}");
    }

    #[test]
    fn a_subscription_entered_at_t_0_is_newer_than_the_snapshots() {
        let w = run(&snapshot(
            json!([]),
            json!([{"at": 0, "action": "subscribe", "consumer": "c2", "topic": "T", "expression": "TagB"}]),
        ));
        for b in &w.brokers {
            let entry = &b.groups["G"].subscription_table["T"];
            assert_eq!((&*entry.sub_string, entry.sub_version), ("TagB", 1), "{}", b.name);
        }
    }

    #[test]
    fn an_orderly_snapshot_member_holds_its_broker_locks() {
        let mut v = snapshot(json!([]), json!([]));
        v["groups"][0]["orderly"] = json!(true);
        let w = World::new(parse_scenario(&v.to_string()).unwrap());
        let locks =
            w.brokers[0].locks.iter().filter(|((g, mq), l)| g == "G" && &*mq.topic == "T" && &*l.client_id == "c1").count();
        assert_eq!(locks, 4);
    }

    #[test]
    fn a_snapshot_that_cannot_be_consistent_is_refused_with_its_path() {
        let mut v = snapshot(json!([]), json!([]));
        v["groups"][0]["committed"]["T:broker-a:0"] = json!(101);
        v["groups"][0]["consumers"][1]["assigned"][0] = json!("T:broker-a:1");
        v["groups"][0]["consumers"][1]["startAt"] = json!(5);
        v["groups"][0]["consumers"][0]["assigned"][2] = json!("U:broker-a:1");
        v["topics"][0]["brokerOffsets"]["broker-c"] = json!([1, 1, 1, 1]);
        let errors = parse_scenario(&v.to_string()).unwrap_err();
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        for expected in [
            "$.groups[0].committed[\"T:broker-a:0\"]: committed offset 101 is past the queue's max offset 100",
            "$.groups[0].consumers[1].assigned[0]: T:broker-a:1 is held by both \"c1\" and \"c2\"",
            "$.groups[0].consumers[1].assigned: a snapshot member runs from t=0",
            "$.groups[0].consumers[0].assigned[2]: no queue broker-a:1 of topic \"U\"",
            "$.topics[0].brokerOffsets[\"broker-c\"]: \"broker-c\" does not host \"T\"",
        ] {
            assert!(text.iter().any(|t| t.starts_with(expected)), "{expected}\nin {text:#?}");
        }
    }
}
