//! A scenario's snapshot (`docs/scenario-format.md`, "Snapshots"): logs that already hold
//! records, committed offsets, and a Stable classic generation whose members keep their
//! partitions. It is restored before the first event, so the run continues from where an admin
//! tool saw the cluster instead of rebalancing from nothing at t=0.

use mqviz_engine::sort::CollectSorted;
use std::collections::{BTreeMap, BTreeSet};

use super::coordinator_classic::ClassicMember;
use super::member_classic::ClientState;
use super::*;
use crate::classic_group::select_protocol;
use crate::events::Choice;

/// `Message::producer` of a record that was in the log before t=0.
pub const SNAPSHOT_PRODUCER: u32 = u32::MAX;
/// Who wrote those records, as the log names them.
pub const SNAPSHOT_WRITER: &str = "(before the snapshot)";

impl World {
    /// Restores the snapshot's logs, committed offsets and Stable groups (at t=0, in `new`).
    pub(super) fn restore_snapshot(&mut self) {
        self.restore_logs();
        for g in 0..self.groups.len() {
            self.restore_committed(g);
        }
        // The canvas shows what some group read before the snapshot as consumed.
        let snapshot = self.messages.iter().take_while(|m| m.producer == SNAPSHOT_PRODUCER).count();
        for m in 0..snapshot as MsgId {
            if (0..self.groups.len()).any(|g| self.read_before_snapshot(g, m)) {
                self.fates[m as usize] = Fate::Consumed;
            }
        }
        for g in 0..self.groups.len() {
            self.restore_members(g);
        }
    }

    /// A snapshot member takes its partitions (they fetch their committed offsets first), and the
    /// log says it owned them, which is no rebalance (`restored`).
    fn own_restored(&mut self, c: usize, assigned: &[TopicPartition], generation: i32, what: &str) {
        self.change_assignment(c, assigned, &format!("owned in the snapshot's {what} {generation}"));
        let (client, group) = (self.client(c), self.group_name(c));
        let parts = self.parts_sorted(assigned);
        self.emit(Event::Assigned {
            client,
            group,
            generation,
            assigned: parts.clone(),
            revoked: Vec::new(),
            added: parts,
            restored: true,
        });
    }

    /// True when the record was in the log at t=0 below the offset the group had committed then:
    /// the group read it before the snapshot, so the run owes it nothing.
    pub fn read_before_snapshot(&self, g: usize, m: MsgId) -> bool {
        let Some(msg) = self.messages.get(m as usize).filter(|x| x.producer == SNAPSHOT_PRODUCER) else { return false };
        self.snapshot_committed.get(g).and_then(|c| c.get(&msg.pid)).is_some_and(|c| msg.offset < *c)
    }

    fn restore_logs(&mut self) {
        let logs = self.scenario.snapshot_logs();
        for (t, parts) in logs.iter().enumerate() {
            for (p, &(start, end)) in parts.iter().enumerate() {
                if end == 0 {
                    continue;
                }
                let pid = self.topics[t].pids[p];
                let first_msg = self.messages.len() as MsgId;
                let log = &mut self.partitions[pid as usize];
                log.base = start;
                log.epochs = vec![(0, start)];
                let count = end - start;
                log.records.reserve(count as usize);
                self.messages.reserve(count as usize);
                for k in 0..count {
                    let msg = first_msg + k as MsgId;
                    log.records.push(Rec { msg, epoch: 0, bytes: produce::RECORD_OVERHEAD_BYTES });
                    self.messages.push(Message {
                        producer: SNAPSHOT_PRODUCER,
                        send: 0,
                        index: k as u32,
                        pid,
                        offset: start + k,
                        epoch: 0,
                        born_at: 0,
                        stored_at: 0,
                        key_colour: mqviz_model::NO_KEY,
                    });
                }
                let part = log.part.clone();
                // The parser bounds a snapshot's records by the scenario's message limit.
                let count = count as u32;
                self.emit(Event::Appended {
                    producer: Name::from(SNAPSHOT_WRITER),
                    part,
                    base: start,
                    count,
                    first_msg,
                    epoch: 0,
                    choice: Choice::Explicit,
                });
            }
        }
        self.fates.resize(self.messages.len(), Fate::Pending);
        let total = self.messages.len();
        self.deliveries.iter_mut().for_each(|d| d.resize(total, 0));
    }

    fn restore_committed(&mut self, g: usize) {
        let committed: Vec<(u32, u64)> = self.scenario.groups[g]
            .snapshot
            .committed
            .iter()
            .filter_map(|(r, off)| {
                let tp = TopicPartition::new(r.topic.clone(), r.partition as i32);
                Some((self.pid_of(&tp)?, *off))
            })
            .collect();
        for (pid, off) in committed {
            self.groups[g].committed.insert(pid, (off, None));
            self.snapshot_committed[g].insert(pid, off);
            // Skip reports start where the group had read to.
            let start = self.partitions[pid as usize].log_start();
            self.skip_cursors[g].insert(pid, off.max(start));
        }
    }

    /// The snapshot's members are running, Stable in its generation, and own their partitions;
    /// the coordinator knows them and times their sessions from t=0.
    fn restore_members(&mut self, g: usize) {
        let spec = self.scenario.groups[g].clone();
        let members: Vec<(usize, &crate::scenario::MemberSnapshot)> =
            spec.snapshot.members.iter().filter_map(|(name, m)| Some((self.find_consumer(name)?, m))).collect();
        if members.is_empty() {
            return;
        }
        if spec.protocol == crate::scenario::GroupProtocol::Consumer {
            return self.restore_modern_members(g, &members, spec.snapshot.generation.unwrap_or(1));
        }
        let generation = spec.snapshot.generation.unwrap_or(1);
        let mut ids: Vec<Name> = Vec::new();
        let cluster = self.cluster_metadata();
        for &(c, m) in &members {
            self.start_consumer(c);
            // A running member already holds the cluster's metadata (its leader compares
            // partition counts with what it assigned from).
            let inc = self.consumers[c].inc;
            self.metadata_response(c, inc, &cluster);
            let id = match &m.member_id {
                Some(id) => Name::from(id.as_str()),
                None => {
                    let prefix = self.consumers[c].client_id.to_string();
                    self.new_member_id(&prefix)
                }
            };
            ids.push(id);
        }
        let mut table = crate::classic_group::MemberTable::default();
        ids.iter().for_each(|id| {
            table.add(id);
        });
        // The vote runs in the coordinator's member order; the parser refuses members with no
        // assignor in common.
        let lists: Vec<Vec<String>> = table
            .ordered()
            .into_iter()
            .filter_map(|id| ids.iter().position(|x| &**x == id))
            .map(|i| self.consumers[members[i].0].config.assignors.iter().map(|a| a.name().to_string()).collect())
            .collect();
        let protocol = select_protocol(&lists).ok();
        let leader_name = spec.snapshot.leader.clone();
        let leader = match leader_name {
            Some(name) => {
                members.iter().zip(&ids).find(|((c, _), _)| *self.consumers[*c].name == *name).map(|(_, id)| id.clone())
            }
            None => table.first().map(Name::from),
        };
        let group_topics: BTreeSet<String> =
            members.iter().flat_map(|(c, _)| self.consumers[*c].subs.subscription()).collect_set();
        let counts: BTreeMap<String, u32> = group_topics
            .iter()
            .filter_map(|t| Some((t.clone(), self.topics[self.topic_index(t)?].pids.len() as u32)))
            .collect_map();
        for (&(c, m), id) in members.iter().zip(&ids) {
            let assigned: Vec<TopicPartition> =
                m.assigned.iter().map(|r| TopicPartition::new(r.topic.clone(), r.partition as i32)).collect();
            let is_leader = leader.as_ref() == Some(id);
            let now = self.now;
            let con = &mut self.consumers[c];
            let cl = &mut con.classic;
            cl.state = ClientState::Stable;
            cl.generation = generation;
            cl.member_id = id.clone();
            cl.protocol = protocol.clone();
            cl.is_leader = is_leader;
            cl.rejoin_needed = false;
            cl.joined_subscription = con.subs.subscription();
            cl.sticky_previous = assigned.clone();
            cl.sticky_generation = generation;
            if is_leader {
                cl.watched_topics = group_topics.clone();
                cl.assignment_snapshot = Some(counts.clone());
            }
            cl.hb_seq += 1;
            let (inc, seq, interval) = (con.inc, cl.hb_seq, con.config.heartbeat_interval_ms);
            con.app.next_auto_commit = now + con.config.auto_commit_interval_ms;
            self.schedule(interval, Action::HeartbeatTick { c, inc, seq });
            self.own_restored(c, &assigned, generation, "generation");
        }
        let mut known = BTreeMap::new();
        let mut statics = BTreeMap::new();
        for (&(c, _), id) in members.iter().zip(&ids) {
            let meta = self.join_meta(c);
            let con = &self.consumers[c];
            if let Some(inst) = &con.instance_id {
                statics.insert(inst.clone(), id.clone());
            }
            let member = ClassicMember {
                id: id.clone(),
                instance: con.instance_id.clone(),
                c,
                inc: con.inc,
                name: con.name.clone(),
                session_timeout: con.config.session_timeout_ms,
                rebalance_timeout: con.config.max_poll_interval_ms,
                protocols: con.config.assignors.iter().map(|a| a.name().to_string()).collect(),
                assignment: meta.owned.clone(),
                meta,
                awaiting_join: false,
                awaiting_sync: false,
                is_new: false,
                hb_token: 0,
            };
            known.insert(id.clone(), member);
        }
        let grp = &mut self.groups[g].classic;
        grp.generation = generation;
        grp.protocol_name = protocol;
        grp.leader = leader;
        grp.members = known;
        grp.table = table;
        grp.static_members = statics;
        let reason = format!("restored from the snapshot: generation {generation}, {} members", ids.len());
        self.transition(g, ClassicState::Stable, &reason);
        for (&(c, _), id) in members.iter().zip(&ids) {
            let timeout = self.consumers[c].config.session_timeout_ms;
            self.reschedule_heartbeat(g, id, timeout);
        }
    }
}

impl World {
    /// A consumer-protocol (KIP-848) group: the group epoch, the target and every member's epoch
    /// are the snapshot's `generation`, each member Stable with its partitions, so its first
    /// heartbeat finds nothing to reconcile.
    fn restore_modern_members(&mut self, g: usize, members: &[(usize, &crate::scenario::MemberSnapshot)], epoch: i32) {
        use super::coordinator_kip848::ModernMember;
        use super::member_kip848::{partitions, CgClientState};
        use crate::reconciliation::{MemberAssignment, MemberState, Partitions, TargetAssignment};
        let cluster = self.cluster_metadata();
        let mut restored: Vec<ModernMember> = Vec::new();
        let mut target: BTreeMap<String, Partitions> = BTreeMap::new();
        let mut reconciling = 0;
        for &(c, m) in members {
            self.start_consumer(c);
            let inc = self.consumers[c].inc;
            self.metadata_response(c, inc, &cluster);
            let id = match &m.member_id {
                Some(id) => Name::from(id.as_str()),
                None => self.new_uuid_member_id(),
            };
            let assigned: Vec<TopicPartition> =
                m.assigned.iter().map(|r| TopicPartition::new(r.topic.clone(), r.partition as i32)).collect();
            // A member below the group epoch is still reconciling toward its target: its first
            // heartbeat continues that (revoke, then take what the others have released).
            let member_epoch = m.member_epoch.unwrap_or(epoch).min(epoch);
            let target_of: Vec<TopicPartition> = match &m.target {
                Some(t) => t.iter().map(|r| TopicPartition::new(r.topic.clone(), r.partition as i32)).collect(),
                None => assigned.clone(),
            };
            let state = if member_epoch == epoch && partitions(&target_of) != partitions(&assigned) {
                MemberState::UnreleasedPartitions
            } else {
                MemberState::Stable
            };
            if member_epoch < epoch || state != MemberState::Stable {
                reconciling += 1;
            }
            let con = &mut self.consumers[c];
            con.modern.state = CgClientState::Stable;
            con.modern.member_id = id.clone();
            con.modern.epoch = member_epoch;
            con.modern.interval = con.config.heartbeat_interval_ms;
            con.app.next_auto_commit = self.now + con.config.auto_commit_interval_ms;
            self.start_cg_heartbeat_timer(c);
            self.own_restored(c, &assigned, member_epoch, "member epoch");
            let con = &self.consumers[c];
            target.insert(id.to_string(), partitions(&target_of));
            restored.push(ModernMember {
                id,
                instance: con.instance_id.clone(),
                c,
                inc: con.inc,
                name: con.name.clone(),
                topics: con.subs.subscription(),
                rebalance_timeout: con.config.max_poll_interval_ms,
                assignor: con.config.remote_assignor,
                assignment: MemberAssignment {
                    state,
                    member_epoch,
                    previous_member_epoch: member_epoch - 1,
                    assigned: partitions(&assigned),
                    pending_revocation: Partitions::new(),
                },
                session_token: 0,
                rebalance_token: 0,
            });
        }
        let mg = &mut self.groups[g].modern;
        mg.static_members = restored.iter().filter_map(|m| Some((m.instance.clone()?, m.id.clone()))).collect_map();
        mg.members = restored;
        mg.group_epoch = epoch;
        mg.target = TargetAssignment { epoch, members: target };
        mg.assignor = Some(mg.preferred_assignor());
        self.groups[g].modern.subscription_metadata = self.subscription_metadata(g);
        let session = self.scenario.groups[g].config.session_timeout_ms;
        let ids: Vec<Name> = self.groups[g].modern.members.iter().map(|m| m.id.clone()).collect();
        for id in ids {
            let token = self.fresh_id();
            if let Some(m) = self.groups[g].modern.members.iter_mut().find(|m| m.id == id) {
                m.session_token = token;
            }
            self.schedule(session, Action::CgSessionExpiry { g, member: id, token });
        }
        let group = self.groups[g].name.clone();
        let reason = match reconciling {
            0 => format!("restored from the snapshot: epoch {epoch}, {} members, each at the target", members.len()),
            n => format!(
                "restored from the snapshot: epoch {epoch}, {} members, {n} still reconciling toward the target",
                members.len()
            ),
        };
        self.emit(Event::GroupEpochBumped { group, epoch, reason });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_scenario;

    fn scenario(groups: &str) -> String {
        format!(
            r#"{{"format": "mqviz-scenario/1", "broker": "kafka", "until": 120000,
            "brokers": [{{"name": "b0"}}],
            "topics": [{{"name": "t", "partitions": 4, "logEndOffsets": [100, 100, 100, 100]}}],
            "groups": [{groups}]}}"#
        )
    }

    const STABLE: &str = r#"{"name": "g", "generation": 7, "committed": {"t-0": 90, "t-1": 100, "t-2": 95, "t-3": 100},
        "consumers": [{"clientId": "a", "subscribe": ["t"], "memberId": "a-1", "assigned": ["t-0", "t-1"]},
                      {"clientId": "b", "subscribe": ["t"], "assigned": ["t-2", "t-3"]}]}"#;

    fn world(text: &str) -> World {
        World::new(parse_scenario(text).unwrap_or_else(|e| panic!("{e:?}")))
    }

    fn joins(w: &World) -> usize {
        w.log.entries().iter().filter(|e| matches!(e.kind, Event::JoinSent { .. })).count()
    }

    #[test]
    fn a_stable_snapshot_continues_without_a_rebalance() {
        let mut w = world(&scenario(STABLE));
        w.run_until(60_000);
        let grp = &w.groups[0].classic;
        assert_eq!((grp.state, grp.generation), (ClassicState::Stable, 7));
        assert_eq!(joins(&w), 0, "nobody rejoins: the members keep their partitions");
        assert_eq!(&*w.consumers[0].classic.member_id, "a-1");
        assert!(w.consumers[1].classic.member_id.starts_with("b-"), "a fresh clientId-UUID");
        assert_eq!((w.consumers[0].consumed, w.consumers[1].consumed), (10, 5), "each reads its lag from the committed offset");
        let report = crate::report::report_json(&w);
        let group = &report["groups"]["g"];
        assert_eq!(group["assignment"]["t"]["0"], "a");
        assert_eq!(group["assignment"]["t"]["2"], "b");
        assert_eq!(group["lag"]["t-0"]["peak"], 10, "the lag the snapshot gave");
        assert_eq!(group["lag"]["t-0"]["now"], 0, "read and auto-committed");
        assert_eq!(report["unconsumed"].as_array().map(Vec::len), Some(0), "what the group read before t=0 is not owed");
    }

    #[test]
    fn a_member_that_joins_later_rebalances_the_snapshot_generation() {
        let group = STABLE.replace(
            r#""assigned": ["t-2", "t-3"]}]"#,
            r#""assigned": ["t-2", "t-3"]}, {"clientId": "c", "subscribe": ["t"], "startAt": 5000}]"#,
        );
        let mut w = world(&scenario(&group));
        w.run_until(30_000);
        assert_eq!(w.groups[0].classic.generation, 8, "one rebalance, from generation 7");
        let owned: Vec<usize> = w.consumers.iter().map(|c| c.subs.assigned_partitions().len()).collect();
        assert_eq!(owned.iter().sum::<usize>(), 4);
        assert!(owned.iter().all(|n| *n >= 1), "range gives each of three members a partition: {owned:?}");
    }

    #[test]
    fn a_consumer_protocol_snapshot_continues_at_its_epoch() {
        let group = STABLE.replace(r#""name": "g","#, r#""name": "g", "protocol": "consumer","#);
        let mut w = world(&scenario(&group));
        w.run_until(60_000);
        let mg = &w.groups[0].modern;
        assert_eq!((mg.state(), mg.group_epoch, mg.target.epoch), (ModernState::Stable, 7, 7));
        let bumps = w.log.entries().iter().filter(|e| matches!(e.kind, Event::GroupEpochBumped { .. })).count();
        assert_eq!(bumps, 1, "only the restore's: no member joined or changed");
        assert_eq!((w.consumers[0].modern.epoch, w.consumers[1].modern.epoch), (7, 7));
        assert_eq!((w.consumers[0].consumed, w.consumers[1].consumed), (10, 5));
        let owned = |c: usize| w.consumers[c].subs.assigned_partitions().len();
        assert_eq!((owned(0), owned(1)), (2, 2), "each keeps its partitions");
    }

    /// Captured mid-reconciliation (KIP-1099 `--members --verbose`: CURRENT-EPOCH below
    /// TARGET-EPOCH): b still holds t-2 at epoch 6 and a waits for it at epoch 7. b's first
    /// heartbeat revokes t-2, a takes it, and no epoch is bumped on the way.
    #[test]
    fn a_member_captured_mid_reconciliation_finishes_it() {
        let group = r#"{"name": "g", "protocol": "consumer", "generation": 7,
            "committed": {"t-0": 90, "t-1": 100, "t-2": 95, "t-3": 100},
            "consumers": [
              {"clientId": "a", "subscribe": ["t"], "assigned": ["t-0", "t-1"], "target": ["t-0", "t-1", "t-2"]},
              {"clientId": "b", "subscribe": ["t"], "assigned": ["t-2", "t-3"], "memberEpoch": 6, "target": ["t-3"]}]}"#;
        let mut w = world(&scenario(group));
        assert_eq!(w.groups[0].modern.state(), ModernState::Reconciling);
        w.run_until(30_000);
        let mg = &w.groups[0].modern;
        assert_eq!((mg.state(), mg.group_epoch), (ModernState::Stable, 7));
        let owned = |c: usize| w.consumers[c].subs.assigned_partitions().len();
        assert_eq!((owned(0), owned(1)), (3, 1), "t-2 moved from b to a");
        assert_eq!((w.consumers[0].modern.epoch, w.consumers[1].modern.epoch), (7, 7));
        let refused = |g: &str, path: &str| {
            let errors = parse_scenario(&scenario(g)).expect_err(g);
            assert!(errors.iter().any(|e| e.path == path), "{path} in {errors:?}");
        };
        refused(&group.replace(r#""memberEpoch": 6"#, r#""memberEpoch": 8"#), "$.groups[0].consumers[1].memberEpoch");
        refused(&group.replace(r#""target": ["t-3"]"#, r#""target": ["t-2", "t-3"]"#), "$.groups[0].consumers[1].target[0]");
        refused(&group.replace(r#""protocol": "consumer", "#, ""), "$.groups[0].consumers[0].target");
    }

    #[test]
    fn records_below_the_log_start_are_gone() {
        let text = r#"{"format": "mqviz-scenario/1", "broker": "kafka", "until": 20000, "brokers": [{"name": "b0"}],
            "topics": [{"name": "t", "partitions": 1, "logEndOffsets": [100], "logStartOffsets": [60]}],
            "groups": [{"name": "g", "autoOffsetReset": "earliest", "committed": {"t-0": 40},
                        "consumers": [{"clientId": "a", "subscribe": ["t"]}]}]}"#;
        let mut w = world(text);
        assert_eq!((w.partitions[0].log_start(), w.partitions[0].log_end()), (60, 100));
        w.run_until(20_000);
        assert_eq!(w.consumers[0].consumed, 40, "offset 40 is out of range: earliest resets to the log start, 60");
    }

    #[test]
    fn a_snapshot_that_cannot_be_consistent_is_refused_with_its_path() {
        let refused = |group: &str, path: &str| {
            let errors = parse_scenario(&scenario(group)).expect_err(group);
            assert!(errors.iter().any(|e| e.path == path), "{path} in {errors:?}");
        };
        refused(
            r#"{"name": "g", "consumers": [{"clientId": "a", "subscribe": ["t"], "assigned": ["t-0"]},
                {"clientId": "b", "subscribe": ["t"], "assigned": ["t-0"]}]}"#,
            "$.groups[0].consumers[1].assigned[0]",
        );
        refused(r#"{"name": "g", "committed": {"t-1": 101}, "consumers": []}"#, "$.groups[0].committed[\"t-1\"]");
        refused(r#"{"name": "g", "committed": {"t-9": 1}, "consumers": []}"#, "$.groups[0].committed[\"t-9\"]");
        refused(
            r#"{"name": "g", "consumers": [{"clientId": "a", "subscribe": ["u"], "assigned": ["t-0"]}]}"#,
            "$.groups[0].consumers[0].assigned[0]",
        );
        refused(
            r#"{"name": "g", "leader": "z", "consumers": [{"clientId": "a", "subscribe": ["t"], "assigned": []}]}"#,
            "$.groups[0].leader",
        );
        refused(r#"{"name": "g", "generation": 3, "consumers": []}"#, "$.groups[0].generation");
        refused(
            r#"{"name": "g", "consumers": [{"clientId": "a", "subscribe": ["t"], "memberId": "m"}]}"#,
            "$.groups[0].consumers[0].memberId",
        );
        refused(
            r#"{"name": "g", "consumers": [{"clientId": "a", "subscribe": ["t"], "assigned": [], "startAt": 5}]}"#,
            "$.groups[0].consumers[0].assigned",
        );
        let topic = |offsets: &str| {
            let text = format!(
                r#"{{"format": "mqviz-scenario/1", "broker": "kafka", "until": 1, "brokers": [{{"name": "b0"}}],
                "topics": [{{"name": "t", "partitions": 2, {offsets}}}]}}"#
            );
            parse_scenario(&text).unwrap_err().into_iter().map(|e| e.path).collect::<Vec<_>>()
        };
        assert_eq!(topic(r#""logEndOffsets": [5]"#), ["$.topics[0].logEndOffsets"]);
        assert_eq!(topic(r#""logEndOffsets": [5, 5], "logStartOffsets": [1, 9]"#), ["$.topics[0].logStartOffsets[1]"]);
    }
}
