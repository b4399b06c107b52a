//! A scenario's snapshot (`docs/scenario-format.md`, "Snapshots (Pulsar)"): ledgers that already
//! hold entries, durable cursors with their ack holes, and consumers connected to them. It is
//! restored before the first event, so the run continues from where `pulsar-admin topics stats`
//! and `stats-internal` saw the topic: the active consumer and the hash ranges are the ones the
//! broker had, not the result of everyone subscribing again at t=0.

use std::sync::Arc;

use super::state::{Body, KeyTemplate, Outgoing, NO_PRODUCER};
use super::{ClientState, Dispatcher, World};
use crate::cursor::ManagedCursor;
use crate::events::{Event, MsgId, Name};
use crate::failover::FailoverMember;
use crate::subscription::SubscriptionType;
use mqviz_model::Fate;

/// Who wrote the entries that were in the ledgers at t=0, as the log names them. Their messages
/// have no producer and are not copies (`Message::is_from_snapshot`).
pub const SNAPSHOT_WRITER: &str = "(before the snapshot)";

impl World {
    /// Restores the snapshot's entries, cursors and connected consumers (at t=0, in `new`).
    pub(super) fn restore_snapshot(&mut self) {
        let scenario = self.scenario.clone();
        for (t, spec) in scenario.topics.iter().enumerate() {
            let mut key = spec.snapshot.backlog_key.as_deref().map(KeyTemplate::new);
            let mut i = 0u32;
            for (p, &count) in spec.snapshot.entries.iter().enumerate() {
                let Some(&partition) = self.topics[t].partitions.get(p) else { continue };
                for _ in 0..count {
                    let key = key.as_mut().map(|k| k.key(i, &mut self.keys));
                    let out = Outgoing {
                        key,
                        ordering_key: None,
                        body: Body { producer: NO_PRODUCER, script: 0, index: i },
                        producer: NO_PRODUCER,
                        born_at: 0,
                        copy: None,
                        deliver_at: 0,
                    };
                    self.store_entry(partition, std::iter::once(out), false);
                    i = i.wrapping_add(1);
                }
            }
        }
        for sub in &scenario.subscriptions {
            self.restore_cursors(sub);
        }
        // The canvas shows what some subscription read before the snapshot as consumed.
        for m in 0..self.messages.len() as MsgId {
            if self.messages[m as usize].is_from_snapshot() && self.read_before_snapshot_by_any(m) {
                self.fates[m as usize] = Fate::Consumed;
            }
        }
        for sub in &scenario.subscriptions {
            for name in &sub.connected {
                if let Some(c) = self.consumer_index(name) {
                    self.restore_consumer(c as u32);
                }
            }
        }
        // Each single-active subscription's pick, said once now that everyone is connected.
        for partition in 0..self.partitions.len() as u32 {
            for s in 0..self.partitions[partition as usize].subscriptions.len() as u32 {
                let sub = &self.partitions[partition as usize].subscriptions[s as usize];
                if sub.read_before_snapshot.is_some() && matches!(sub.dispatcher, Some(Dispatcher::Single(_))) {
                    self.announce_active(partition, s, None);
                }
            }
        }
    }

    /// True when message `m` was in a ledger at t=0 and some subscription had acked it then.
    fn read_before_snapshot_by_any(&self, m: MsgId) -> bool {
        let msg = &self.messages[m as usize];
        self.partitions[msg.partition as usize]
            .subscriptions
            .iter()
            .any(|s| s.read_before_snapshot.as_ref().is_some_and(|c| c.is_acked(msg.entry)))
    }

    /// True when entry `entry` of `partition` was acked by subscription `s` at t=0: it was read
    /// before the snapshot, so the run neither counts it as consumed nor owes it.
    pub fn read_before_snapshot(&self, partition: u32, s: usize, entry: i64) -> bool {
        self.partitions[partition as usize]
            .subscriptions
            .get(s)
            .and_then(|x| x.read_before_snapshot.as_ref())
            .is_some_and(|c| c.is_acked(entry))
    }

    fn restore_cursors(&mut self, snap: &crate::scenario::SubscriptionSnapshot) {
        let Some(t) = self.topic_index(&snap.topic) else { return };
        let name: Name = Name::from(snap.name.as_str());
        let group = self.group_of(t as u32, &name);
        let partitions = self.topics[t].partitions.clone();
        for (&partition, c) in partitions.iter().zip(&snap.cursors) {
            let last_entry = self.partitions[partition as usize].last_entry();
            let cursor = ManagedCursor::restore(c.mark_delete, &c.acked, last_entry);
            let sub = self.partitions[partition as usize].subscriptions.len() as u32;
            let event = self.emit(Event::CursorRestored {
                partition,
                sub,
                mark_delete: cursor.mark_delete(),
                acked_ranges: cursor.individually_acked_ranges().len() as u32,
                backlog: u32::try_from(cursor.backlog()).unwrap_or(u32::MAX),
            });
            let at_start = Box::new(cursor.clone());
            // The subscription existed before every entry the run knows of.
            let s = self.push_subscription(partition, &name, group, cursor, -1, event);
            self.partitions[partition as usize].subscriptions[s as usize].read_before_snapshot = Some(at_start);
        }
    }

    /// A consumer connected before the snapshot: subscribed on every partition at t=0 without a
    /// handshake, in the order the snapshot lists it. Its FLOW reaches the broker one latency
    /// later, and dispatch goes on from the cursor's read position.
    fn restore_consumer(&mut self, c: u32) {
        if !self.begin_incarnation(c) {
            return;
        }
        self.emit(Event::ConsumerRestored { consumer: c });
        let partitions = self.topics[self.consumers[c as usize].topic as usize].partitions.clone();
        for p in partitions {
            let a = self.open_attachment(c, p);
            self.restore_member(c, a);
        }
        self.start_client_side(c);
    }

    /// The broker's side of a restored consumer on one partition, then the client's.
    fn restore_member(&mut self, c: u32, a: u32) {
        let con = &self.consumers[c as usize];
        let spec = Arc::clone(&con.spec);
        let (name, sub_name) = (con.name.clone(), con.subscription.clone());
        let att = &con.attachments[a as usize];
        let (partition, consumer_id) = (att.partition, att.consumer_id);
        let s = self.ensure_subscription(partition, &sub_name, spec.initial_position);
        let ty = spec.subscription_type();
        self.admit_member(partition, s, (ty, super::subscribe::key_shared_policy(&spec)), consumer_id, c, a);
        let sub = &mut self.partitions[partition as usize].subscriptions[s as usize];
        // The reader checked that these consumers fit the subscription; a single-active one
        // joins without a switch (the pick is announced once everyone is in).
        let joined = match sub.dispatcher.as_mut() {
            Some(Dispatcher::Single(d)) => d
                .restore(FailoverMember { consumer_id, name: name.to_string(), priority: spec.priority_level })
                .map_err(|e| e.to_string()),
            _ => self.add_to_dispatcher(partition, s, consumer_id, &name, &spec).map(|after| after(self)),
        };
        if let Err(reason) = joined {
            self.partitions[partition as usize].subscriptions[s as usize].members.remove(&consumer_id);
            self.emit(Event::SubscribeFailed { consumer: c, partition, reason: reason.into_boxed_str() });
            return;
        }
        self.emit(Event::Subscribed { consumer: c, partition, sub: s, sub_type: ty, consumer_id });
        if ty == SubscriptionType::Shared {
            let group = self.partitions[partition as usize].subscriptions[s as usize].group;
            let what = format!("{} (Shared member)", self.partitions[partition as usize].name);
            self.record_owner(group, what, Some(name));
        }
        let att = &mut self.consumers[c as usize].attachments[a as usize];
        att.connected = true;
        att.subscription = s;
        let permits = att.receiver_queue.max(1);
        debug_assert_eq!(self.consumers[c as usize].state, ClientState::Running);
        self.send_flow(c, a, permits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_scenario;

    /// A 3-partition topic with 10, 8 and 12 entries, subscription `billing` with `subs` fields
    /// and `consumers`.
    fn scenario(consumers: &str, subs: &str) -> String {
        format!(
            r#"{{"format": "mqviz-scenario/1", "broker": "pulsar", "until": 60000,
            "topics": [{{"name": "orders", "partitions": 3, "entries": [10, 8, 12], "backlogKey": "k-{{i%5}}"}}],
            "consumers": [{consumers}],
            "subscriptions": [{{"topic": "orders", "name": "billing",
              "cursors": [{{"markDeletePosition": 5, "individuallyDeleted": [[7, 8]]}},
                          {{"markDeletePosition": 7}}, {{"markDeletePosition": -1}}]{subs}}}]}}"#
        )
    }

    const FAILOVER: &str = r#"{"name": "b", "topic": "orders", "subscription": "billing", "subscriptionType": "Failover"},
        {"name": "a", "topic": "orders", "subscription": "billing", "subscriptionType": "Failover"}"#;

    fn world(text: &str) -> World {
        World::new(parse_scenario(text).unwrap_or_else(|e| panic!("{e:?}")))
    }

    fn count(w: &World, f: impl Fn(&Event) -> bool) -> usize {
        w.log.iter().filter(|e| f(&e.kind)).count()
    }

    #[test]
    fn a_failover_snapshot_keeps_its_active_consumers_and_reads_only_what_was_not_acked() {
        let text = scenario(FAILOVER, r#", "connected": ["b", "a"], "activeConsumers": ["a", "b", "a"]"#);
        let mut w = world(&text);
        assert_eq!(w.partitions[0].subscriptions[0].cursor.backlog(), 2, "entries 6 and 9 of 0..=9");
        w.run_until(60_000);
        assert_eq!(count(&w, |e| matches!(e, Event::ActiveSwitched { .. })), 0, "no failover: the snapshot's picks hold");
        assert_eq!(count(&w, |e| matches!(e, Event::ConsumerStarted { .. })), 0, "nobody starts: both were connected");
        let received = |c: usize| w.consumers[c].received.len();
        // a holds partitions 0 and 2 (2 + 12 entries unacked), b partition 1 (0 unacked).
        assert_eq!((received(0), received(1)), (0, 14));
        let report = crate::report::report_json(&w);
        let never = &report["messages"]["neverDelivered"];
        assert_eq!(never.as_array().map(Vec::len), Some(0), "{never}");
        let consumed = w.fates.iter().filter(|f| **f == Fate::Consumed).count();
        assert_eq!(consumed, 30, "8 + 8 acked before the snapshot, 14 received since");
    }

    #[test]
    fn a_later_joiner_moves_the_active_consumer_after_the_failover_delay() {
        let consumers = format!(
            r#"{FAILOVER}, {{"name": "aa", "topic": "orders", "subscription": "billing", "subscriptionType": "Failover", "startAt": 5000}}"#
        );
        let mut w = world(&scenario(&consumers, r#", "connected": ["b", "a"]"#));
        w.run_until(4_000);
        assert_eq!(count(&w, |e| matches!(e, Event::ActiveSwitched { .. })), 0);
        w.run_until(60_000);
        assert!(count(&w, |e| matches!(e, Event::ActiveSwitched { .. })) > 0, "aa takes partition 1 from b");
    }

    #[test]
    fn a_key_shared_snapshot_keeps_the_selector_ranges_and_spreads_the_backlog_by_key() {
        let ks = r#"{"name": "c1", "topic": "orders", "subscription": "billing", "subscriptionType": "Key_Shared"},
            {"name": "c2", "topic": "orders", "subscription": "billing", "subscriptionType": "Key_Shared"}"#;
        // The ranges the consistent-hash ring gives c1 then c2.
        let probe = world(&scenario(ks, r#", "connected": ["c1", "c2"]"#));
        let Some(Dispatcher::KeyShared(d)) = &probe.partitions[0].subscriptions[0].dispatcher else { panic!("Key_Shared") };
        // Consumer ids go in attachment order: c1's first.
        let mut by_id = d.selector.ranges_by_consumer().into_values();
        let (first, second) = (by_id.next().unwrap(), by_id.next().unwrap());
        let json = |r: &Vec<(u32, u32)>| serde_json::to_string(&r.iter().map(|(a, b)| [*a, *b]).collect::<Vec<_>>()).unwrap();
        let claims =
            format!(r#", "connected": ["c1", "c2"], "keyHashRanges": {{"c1": {}, "c2": {}}}"#, json(&first), json(&second));
        let mut w = world(&scenario(ks, &claims));
        w.run_until(60_000);
        assert!(w.consumers.iter().all(|c| !c.received.is_empty()), "five keys spread over both consumers");
        assert_eq!(w.consumers.iter().map(|c| c.received.len()).sum::<usize>(), 14, "what was not acked at t=0");
        let wrong = claims.replace(r#""c1": ["#, r#""c1": [[0, 1], "#);
        let errors = parse_scenario(&scenario(ks, &wrong)).unwrap_err();
        assert!(errors.iter().any(|e| e.path == "$.subscriptions[0].keyHashRanges[\"c1\"]"), "{errors:?}");
    }

    #[test]
    fn a_snapshot_that_cannot_be_consistent_is_refused_with_its_path() {
        let refused = |consumers: &str, subs: &str, path: &str| {
            let errors = parse_scenario(&scenario(consumers, subs)).expect_err(subs);
            assert!(errors.iter().any(|e| e.path == path), "{path} in {errors:?}");
        };
        refused(
            FAILOVER,
            r#", "connected": ["b", "a"], "activeConsumers": ["b", "b", "a"]"#,
            "$.subscriptions[0].activeConsumers[0]",
        );
        refused(FAILOVER, r#", "connected": ["b", "zz"]"#, "$.subscriptions[0].connected[1]");
        refused(FAILOVER, r#", "connected": ["b", "b"]"#, "$.subscriptions[0].connected[1]");
        let mixed = FAILOVER.replacen(r#""subscriptionType": "Failover""#, r#""subscriptionType": "Shared""#, 1);
        refused(&mixed, r#", "connected": ["b", "a"]"#, "$.subscriptions[0].connected[1]");
        let late = FAILOVER.replacen(r#""Failover"}"#, r#""Failover", "startAt": 10}"#, 1);
        refused(&late, r#", "connected": ["b"]"#, "$.consumers[0].startAt");
        let past = scenario(FAILOVER, "").replace(r#""markDeletePosition": 7}"#, r#""markDeletePosition": 8}"#);
        assert!(parse_scenario(&past).unwrap_err().iter().any(|e| e.path == "$.subscriptions[0].cursors[1].markDeletePosition"));
        let holes = scenario(FAILOVER, "").replace("[[7, 8]]", "[[7, 8], [8, 9]]");
        assert!(parse_scenario(&holes)
            .unwrap_err()
            .iter()
            .any(|e| e.path == "$.subscriptions[0].cursors[0].individuallyDeleted[1]"));
        let short = scenario(FAILOVER, "").replace(r#", {"markDeletePosition": -1}"#, "");
        assert!(parse_scenario(&short).unwrap_err().iter().any(|e| e.path == "$.subscriptions[0].cursors"));
        let counts = scenario(FAILOVER, "").replace("[10, 8, 12]", "[10, 8]");
        assert!(parse_scenario(&counts).unwrap_err().iter().any(|e| e.path == "$.topics[0].entries"));
    }
}
