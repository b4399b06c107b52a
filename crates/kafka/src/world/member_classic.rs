//! The classic-protocol client (`AbstractCoordinator`, `ConsumerCoordinator`, spec §1.4, §2):
//! `onJoinPrepare` (auto-commit, then revoke all for EAGER or unsubscribed topics for
//! COOPERATIVE, or "lost" after a reset), JoinGroup, the leader's assignment, SyncGroup,
//! `onJoinComplete` (COOPERATIVE: revoke what moved and rejoin), the heartbeat thread and
//! `max.poll.interval.ms`.

use mqviz_engine::sort::CollectSorted;
use std::collections::{BTreeMap, BTreeSet};

use super::consumer::CommitPurpose;
use super::coordinator_classic::{JoinMeta, JoinOk, JoinRequest, SyncRequest};
use super::*;
use crate::assignor::{self, ClientAssignor, ClientMember, Cluster, TopicMetadata};
use crate::classic_group::{rebalance_protocol, RebalanceProtocol};
use crate::scenario::GroupProtocol;

/// `AbstractCoordinator.MemberState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientState {
    Unjoined,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
}

impl ClientState {
    pub fn name(self) -> &'static str {
        match self {
            ClientState::Unjoined => "UNJOINED",
            ClientState::PreparingRebalance => "PREPARING_REBALANCE",
            ClientState::CompletingRebalance => "COMPLETING_REBALANCE",
            ClientState::Stable => "STABLE",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ClassicClient {
    pub state: ClientState,
    /// -1 = `NO_GENERATION`.
    pub generation: i32,
    /// Empty = unknown.
    pub member_id: Name,
    pub protocol: Option<String>,
    pub is_leader: bool,
    pub rejoin_needed: bool,
    pub rejoin_reason: String,
    /// `needsJoinPrepare` was satisfied for the coming join.
    pub join_prepared: bool,
    pub prepare_commit_sent: bool,
    pub prepare_commit: Option<u64>,
    pub hb_seq: u64,
    /// `sticky` userData: the last assignment and its generation.
    pub sticky_previous: Vec<TopicPartition>,
    pub sticky_generation: i32,
    /// The subscription the last join was made with.
    pub joined_subscription: BTreeSet<String>,
    /// The leader's partition counts of the watched topics when it assigned, or when it returned
    /// as a static leader and skipped the assignment (KIP-814 `assignmentSnapshot =
    /// metadataSnapshot`). A topic the metadata does not know is left out, as Java's
    /// `MetadataSnapshot` leaves it out, so its creation changes the view all the same.
    pub assignment_snapshot: Option<BTreeMap<String, u32>>,
    /// The group subscription the leader watches (`updateGroupSubscription`): every member's
    /// topics at the last join it led. This model's metadata always covers every topic, so the
    /// watched topics are known at once rather than after the next metadata update.
    pub watched_topics: BTreeSet<String>,
}

impl Default for ClassicClient {
    fn default() -> Self {
        ClassicClient {
            state: ClientState::Unjoined,
            generation: -1,
            member_id: Name::from(""),
            protocol: None,
            is_leader: false,
            rejoin_needed: true,
            rejoin_reason: "initial join".into(),
            join_prepared: false,
            prepare_commit_sent: false,
            prepare_commit: None,
            hb_seq: 0,
            sticky_previous: Vec::new(),
            sticky_generation: -1,
            joined_subscription: BTreeSet::new(),
            assignment_snapshot: None,
            watched_topics: BTreeSet::new(),
        }
    }
}

impl World {
    fn rebalance_protocol_of(&self, c: usize) -> RebalanceProtocol {
        rebalance_protocol(&self.consumers[c].config.assignors)
    }

    pub(super) fn request_rejoin(&mut self, c: usize, reason: &str) {
        let cl = &mut self.consumers[c].classic;
        if !cl.rejoin_needed {
            cl.rejoin_reason = reason.to_string();
        }
        cl.rejoin_needed = true;
        self.wake_if_waiting(c);
    }

    /// Partition counts of topics, as this client's metadata knows them.
    fn metadata_counts(&self, c: usize, topics: impl IntoIterator<Item = String>) -> BTreeMap<String, u32> {
        let meta = &self.consumers[c].meta;
        topics.into_iter().filter_map(|t| meta.topics.get(t.as_str()).map(|n| (t, *n))).collect_map()
    }

    /// Partition counts of what the client watches: its subscription and, as leader, the group's.
    fn watched_counts(&self, c: usize) -> BTreeMap<String, u32> {
        let con = &self.consumers[c];
        self.metadata_counts(c, con.subs.subscription().into_iter().chain(con.classic.watched_topics.iter().cloned()))
    }

    /// `ConsumerCoordinator.poll`: decides whether to (re)join and runs `onJoinPrepare`.
    pub(super) fn classic_poll(&mut self, c: usize) {
        // A pattern is matched against fresh metadata before the first join.
        if self.consumers[c].pattern.is_some() && !self.consumers[c].meta.known {
            return;
        }
        let subscription = self.consumers[c].subs.subscription();
        let cl = &self.consumers[c].classic;
        if cl.state == ClientState::Stable && !cl.rejoin_needed {
            if cl.joined_subscription != subscription {
                self.request_rejoin(c, "the subscription changed since the last join");
            } else if let Some(snapshot) = &cl.assignment_snapshot {
                if self.watched_counts(c) != *snapshot {
                    self.request_rejoin(c, "the leader saw the partition counts change");
                }
            }
        }
        let cl = &self.consumers[c].classic;
        if !cl.rejoin_needed || matches!(cl.state, ClientState::PreparingRebalance | ClientState::CompletingRebalance) {
            return;
        }
        if !cl.join_prepared {
            if cl.prepare_commit.is_some() {
                return;
            }
            if self.consumers[c].config.enable_auto_commit && !cl.prepare_commit_sent {
                let generation = cl.generation;
                self.consumers[c].classic.prepare_commit_sent = true;
                if self.rebalance_protocol_of(c) == RebalanceProtocol::Eager && generation >= 0 {
                    let assigned: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
                    let _ = self.consumers[c].subs.mark_pending_revocation(&assigned);
                }
                if let Some(id) = self.commit_all_consumed(c, CommitPurpose::PrepareJoin) {
                    self.consumers[c].classic.prepare_commit = Some(id);
                    return;
                }
            }
            self.join_prepare_revoke(c);
            let cl = &mut self.consumers[c].classic;
            cl.join_prepared = true;
            cl.prepare_commit_sent = false;
        }
        self.send_join(c);
    }

    /// The revocation half of `onJoinPrepare`.
    fn join_prepare_revoke(&mut self, c: usize) {
        let assigned: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
        if assigned.is_empty() {
            return;
        }
        let cl = &self.consumers[c].classic;
        let lost = cl.generation < 0 || cl.member_id.is_empty();
        let subscription = self.consumers[c].subs.subscription();
        let (revoked, reason): (Vec<TopicPartition>, &'static str) = if lost {
            (assigned.clone(), "generation reset: onPartitionsLost")
        } else if self.rebalance_protocol_of(c) == RebalanceProtocol::Eager {
            (assigned.clone(), "EAGER: everything is revoked before JoinGroup")
        } else {
            let gone = assigned.iter().filter(|tp| !subscription.contains(&tp.topic)).cloned().collect();
            (gone, "COOPERATIVE: topics no longer subscribed")
        };
        if revoked.is_empty() {
            return;
        }
        let keep: Vec<TopicPartition> = assigned.iter().filter(|tp| !revoked.contains(tp)).cloned().collect();
        self.change_assignment(c, &keep, reason);
        let parts = self.parts_sorted(&revoked);
        let client = self.client(c);
        self.emit(Event::Revoked { client, partitions: parts, lost, reason });
    }

    /// `assignFromSubscribed`, logging each partition that comes or goes.
    pub(super) fn change_assignment(&mut self, c: usize, partitions: &[TopicPartition], why: &str) {
        let old: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
        let snaps: Vec<_> = old.iter().map(|tp| self.fetch_snapshot(c, tp)).collect();
        if self.consumers[c].subs.assign_from_subscribed(partitions).is_err() {
            return;
        }
        for (tp, s) in old.iter().zip(snaps) {
            if !partitions.contains(tp) {
                self.note_fetch_state(c, tp, s, why);
            }
        }
        for tp in partitions {
            if !old.contains(tp) {
                self.note_fetch_state(c, tp, None, why);
            }
        }
        let kept: BTreeSet<u32> = partitions.iter().filter_map(|tp| self.pid_of(tp)).collect_set();
        self.consumers[c].fetch.buffered.retain(|b| kept.contains(&b.pid));
    }

    pub(super) fn join_meta(&self, c: usize) -> JoinMeta {
        let con = &self.consumers[c];
        let cl = &con.classic;
        JoinMeta {
            topics: con.subs.subscription().into_iter().collect(),
            owned: con.subs.assigned_partitions().to_vec(),
            generation: cl.generation,
            sticky_previous: cl.sticky_previous.clone(),
            sticky_generation: cl.sticky_generation,
        }
    }

    fn send_join(&mut self, c: usize) {
        let meta = self.join_meta(c);
        let con = &mut self.consumers[c];
        con.classic.state = ClientState::PreparingRebalance;
        con.classic.hb_seq += 1;
        con.classic.joined_subscription = meta.topics.iter().cloned().collect();
        let request = JoinRequest {
            c,
            inc: con.inc,
            member: con.classic.member_id.clone(),
            instance: con.instance_id.clone(),
            name: con.name.clone(),
            client_id: con.client_id.clone(),
            protocols: con.config.assignors.iter().map(|a| a.name().to_string()).collect(),
            meta,
            session_timeout: con.config.session_timeout_ms,
            rebalance_timeout: con.config.max_poll_interval_ms,
        };
        let reason = con.classic.rejoin_reason.clone();
        let (g, latency) = (con.group, con.latency);
        let (client, group, member) = (con.name.clone(), self.groups[g].name.clone(), request.member.clone());
        self.emit(Event::JoinSent { client, group, member, reason });
        self.schedule(latency, Action::JoinArrive { g, request });
    }

    /// Resets generation (and member id unless only the generation was wrong): the next join
    /// treats owned partitions as lost.
    fn reset_generation(&mut self, c: usize, keep_member_id: bool, reason: &str) {
        let cl = &mut self.consumers[c].classic;
        cl.generation = -1;
        cl.state = ClientState::Unjoined;
        cl.hb_seq += 1;
        cl.is_leader = false;
        cl.assignment_snapshot = None;
        cl.watched_topics.clear();
        if !keep_member_id {
            cl.member_id = Name::from("");
        }
        self.request_rejoin(c, reason);
    }

    pub(super) fn join_response(&mut self, c: usize, inc: u32, response: coordinator_classic::JoinResponse) {
        if !self.alive(c, inc) || self.consumers[c].classic.state != ClientState::PreparingRebalance {
            return;
        }
        match response.result {
            Err(("MEMBER_ID_REQUIRED", id)) => {
                self.consumers[c].classic.member_id = id;
                self.consumers[c].classic.rejoin_reason = "rejoin with the member id the coordinator gave".into();
                self.send_join(c);
            }
            Err(("UNKNOWN_MEMBER_ID", _)) => self.reset_generation(c, false, "JoinGroup: UNKNOWN_MEMBER_ID"),
            Err((fatal @ ("FENCED_INSTANCE_ID" | "INCONSISTENT_GROUP_PROTOCOL" | "INVALID_SESSION_TIMEOUT"), _)) => {
                self.consumers[c].classic.state = ClientState::Unjoined;
                let text = match fatal {
                    "FENCED_INSTANCE_ID" => "FencedInstanceIdException: another instance with the same group.instance.id joined",
                    "INVALID_SESSION_TIMEOUT" => {
                        "InvalidSessionTimeoutException: session.timeout.ms is outside the broker's group.min/max.session.timeout.ms"
                    }
                    _ => "InconsistentGroupProtocolException: the group uses another protocol or assignors",
                };
                self.consumers[c].fetch.pending_error = Some(text.to_string());
                self.wake_if_waiting(c);
            }
            Err((other, _)) => {
                self.consumers[c].classic.state = ClientState::Unjoined;
                self.request_rejoin(c, &format!("JoinGroup: {other}"));
            }
            Ok(ok) => self.join_succeeded(c, ok),
        }
    }

    fn join_succeeded(&mut self, c: usize, ok: JoinOk) {
        let con = &mut self.consumers[c];
        con.classic.state = ClientState::CompletingRebalance;
        con.classic.generation = ok.generation;
        con.classic.member_id = ok.member.clone();
        con.classic.protocol = ok.protocol.clone();
        con.classic.is_leader = ok.leader == ok.member;
        // The heartbeat thread is enabled once the join response is in.
        con.classic.hb_seq += 1;
        let (inc, seq, interval) = (con.inc, con.classic.hb_seq, con.config.heartbeat_interval_ms);
        let is_leader = con.classic.is_leader;
        self.schedule(interval, Action::HeartbeatTick { c, inc, seq });
        // Only the leader watches the group's metadata (`onJoinComplete`).
        if is_leader {
            self.consumers[c].classic.watched_topics =
                ok.members.iter().flat_map(|m| m.meta.topics.iter().cloned()).collect_set();
            if ok.skip_assignment {
                self.consumers[c].classic.assignment_snapshot = Some(self.watched_counts(c));
            }
        } else {
            self.consumers[c].classic.assignment_snapshot = None;
            self.consumers[c].classic.watched_topics.clear();
        }
        let assignments = if is_leader && !ok.skip_assignment {
            match self.leader_assign(c, &ok) {
                Ok(a) => Some(a),
                Err(error) => {
                    let (group, leader) = (self.group_name(c), ok.member.clone());
                    self.emit(Event::AssignorFailed { group, leader, error: error.clone() });
                    self.consumers[c].fetch.pending_error = Some(error);
                    self.wake_if_waiting(c);
                    return;
                }
            }
        } else {
            None
        };
        let con = &self.consumers[c];
        let request = SyncRequest {
            c,
            inc: con.inc,
            member: ok.member.clone(),
            instance: con.instance_id.clone(),
            generation: ok.generation,
            assignments,
        };
        let (g, latency) = (con.group, con.latency);
        self.schedule(latency, Action::SyncArrive { g, request });
    }

    /// `onLeaderElected`: runs the selected assignor over the members' subscriptions.
    fn leader_assign(&mut self, c: usize, ok: &JoinOk) -> Result<Vec<(Name, Vec<TopicPartition>)>, String> {
        let protocol = ok.protocol.clone().unwrap_or_default();
        let assignor =
            ClientAssignor::from_name(&protocol).ok_or_else(|| format!("IllegalStateException: unknown assignor {protocol}"))?;
        // The group subscription, as `join_succeeded` just recorded it.
        let counts = self.metadata_counts(c, self.consumers[c].classic.watched_topics.iter().cloned());
        let cluster: Cluster = counts
            .iter()
            .map(|(t, n)| (t.clone(), TopicMetadata { partitions: *n as i32, replica_racks: Vec::new() }))
            .collect_map();
        let members: Vec<ClientMember> = ok
            .members
            .iter()
            .map(|m| {
                let (generation, owned) = match assignor {
                    ClientAssignor::Sticky => (m.meta.sticky_generation, m.meta.sticky_previous.clone()),
                    _ => (m.meta.generation, m.meta.owned.clone()),
                };
                ClientMember {
                    id: m.id.to_string(),
                    instance_id: m.instance.as_deref().map(str::to_string),
                    rack: None,
                    generation,
                    topics: m.meta.topics.clone(),
                    owned,
                }
            })
            .collect();
        let result = assignor::assign(assignor, &cluster, &members).map_err(|e| e.to_string())?;
        self.consumers[c].classic.assignment_snapshot = Some(counts);
        let text: Vec<String> = result
            .iter()
            .map(|(id, topics)| {
                let client =
                    ok.members.iter().find(|m| &*m.id == id).map(|m| self.client_of_member(c, &m.id)).unwrap_or_default();
                let parts: Vec<String> = topics.iter().flat_map(|(t, ps)| ps.iter().map(move |p| format!("{t}-{p}"))).collect();
                format!("{client}=[{}]", parts.join(", "))
            })
            .collect();
        let (group, leader) = (self.group_name(c), ok.member.clone());
        self.emit(Event::AssignmentComputed {
            group,
            generation: ok.generation,
            leader,
            assignor: assignor.name(),
            result: text.join(" "),
        });
        Ok(result
            .into_iter()
            .map(|(id, topics)| {
                let tps =
                    topics.iter().flat_map(|(t, ps)| ps.iter().map(move |p| TopicPartition::new(t.to_string(), *p))).collect();
                (Name::from(id.as_str()), tps)
            })
            .collect())
    }

    /// The consumer's name behind a member id of its group (for readable logs).
    pub(super) fn client_of_member(&self, c: usize, member: &str) -> String {
        let g = self.consumers[c].group;
        if let Some(m) = self.groups[g].classic.members.get(member) {
            return m.name.to_string();
        }
        if let Some(m) = self.groups[g].modern.member(member) {
            return m.name.to_string();
        }
        member.to_string()
    }

    /// SyncGroup answered: `onJoinComplete`.
    pub(super) fn sync_response(
        &mut self,
        c: usize,
        inc: u32,
        generation: i32,
        result: Result<Vec<TopicPartition>, &'static str>,
    ) {
        let cl = &self.consumers[c].classic;
        if !self.alive(c, inc) || cl.state != ClientState::CompletingRebalance || cl.generation != generation {
            return;
        }
        let assigned = match result {
            Ok(a) => a,
            Err("FENCED_INSTANCE_ID") => {
                self.consumers[c].fetch.pending_error =
                    Some("FencedInstanceIdException: another instance with the same group.instance.id joined".into());
                self.wake_if_waiting(c);
                return;
            }
            Err(e @ ("UNKNOWN_MEMBER_ID" | "ILLEGAL_GENERATION")) => {
                self.reset_generation(c, e == "ILLEGAL_GENERATION", &format!("SyncGroup: {e}"));
                return;
            }
            Err(e) => {
                self.consumers[c].classic.state = ClientState::Unjoined;
                self.request_rejoin(c, &format!("SyncGroup: {e}"));
                return;
            }
        };
        let con = &mut self.consumers[c];
        con.classic.state = ClientState::Stable;
        con.classic.rejoin_needed = false;
        con.classic.join_prepared = false;
        if !con.subs.assignment_matches_subscription(&assigned) {
            self.request_rejoin(c, "the assignment does not match the current subscription");
            return;
        }
        let owned: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
        let added: Vec<TopicPartition> = assigned.iter().filter(|tp| !owned.contains(tp)).cloned().collect();
        let mut revoked: Vec<TopicPartition> = Vec::new();
        if self.rebalance_protocol_of(c) == RebalanceProtocol::Cooperative {
            revoked = owned.iter().filter(|tp| !assigned.contains(tp)).cloned().collect();
            if !revoked.is_empty() {
                let parts = self.parts_sorted(&revoked);
                let client = self.client(c);
                self.emit(Event::Revoked {
                    client,
                    partitions: parts,
                    lost: false,
                    reason: "COOPERATIVE: moved to another member, rejoin to hand them over",
                });
            }
        }
        self.change_assignment(c, &assigned, &format!("assigned in generation {generation}"));
        let con = &mut self.consumers[c];
        con.classic.sticky_previous = assigned.clone();
        con.classic.sticky_generation = generation;
        con.app.next_auto_commit = self.now + con.config.auto_commit_interval_ms;
        let (assigned_p, revoked_p, added_p) =
            (self.parts_sorted(&assigned), self.parts_sorted(&revoked), self.parts_sorted(&added));
        let (client, group) = (self.client(c), self.group_name(c));
        self.emit(Event::Assigned {
            client,
            group,
            generation,
            assigned: assigned_p,
            revoked: revoked_p,
            added: added_p,
            restored: false,
        });
        if !revoked.is_empty() {
            self.request_rejoin(c, "revoked partitions must be handed over in a second rebalance");
        }
        self.wake_if_waiting(c);
    }

    /// The heartbeat thread: every `heartbeat.interval.ms` while joined; it also notices that the
    /// application stopped calling `poll()`.
    pub(super) fn heartbeat_tick(&mut self, c: usize, inc: u32, seq: u64) {
        if !self.alive(c, inc) || self.consumers[c].classic.hb_seq != seq {
            return;
        }
        let con = &self.consumers[c];
        if !matches!(con.classic.state, ClientState::CompletingRebalance | ClientState::Stable) {
            return;
        }
        if self.now.saturating_sub(con.app.last_poll) > con.config.max_poll_interval_ms {
            self.poll_timeout_expired(c);
            return;
        }
        let request = Action::HeartbeatArrive {
            g: con.group,
            c,
            inc,
            member: con.classic.member_id.clone(),
            instance: con.instance_id.clone(),
            generation: con.classic.generation,
        };
        let (latency, interval) = (con.latency, con.config.heartbeat_interval_ms);
        self.schedule(latency, request);
        self.schedule(interval, Action::HeartbeatTick { c, inc, seq });
        self.arm_poll_timer(c, inc, seq, interval);
    }

    /// Wakes the heartbeat thread when the poll timer runs out before the next heartbeat is due.
    /// Java's classic heartbeat thread re-checks `pollTimeoutExpired` every `retry.backoff.ms`
    /// (100 ms) while it waits, and KIP-848's heartbeat manager sleeps no longer than the poll
    /// timer (`maximumTimeToWait`), so the member leaves as the timer expires, not a whole
    /// heartbeat interval later. The model takes the expiry itself, within those 100 ms.
    pub(super) fn arm_poll_timer(&mut self, c: usize, inc: u32, seq: u64, interval: Millis) {
        let con = &self.consumers[c];
        let expires_in = (con.app.last_poll + con.config.max_poll_interval_ms + 1).saturating_sub(self.now);
        if expires_in < interval {
            self.schedule(expires_in, Action::PollTimerExpiry { c, inc, seq });
        }
    }

    pub(super) fn poll_timer_expiry(&mut self, c: usize, inc: u32, seq: u64) {
        if !self.alive(c, inc) {
            return;
        }
        let con = &self.consumers[c];
        if self.now.saturating_sub(con.app.last_poll) <= con.config.max_poll_interval_ms {
            return;
        }
        match con.protocol {
            GroupProtocol::Classic => self.heartbeat_tick(c, inc, seq),
            GroupProtocol::Consumer => self.cg_heartbeat_tick(c, inc, seq),
        }
    }

    /// `max.poll.interval.ms` passed since the last `poll()`: leave (dynamic members send
    /// LeaveGroup) and reset the generation; the next `poll()` rejoins with its partitions lost.
    fn poll_timeout_expired(&mut self, c: usize) {
        let (client, group) = (self.client(c), self.group_name(c));
        self.emit(Event::PollTimeoutExpired { client, group });
        self.classic_leave(c, "consumer poll timeout has expired");
        self.reset_generation(c, false, "the poll timeout expired");
    }

    pub(super) fn heartbeat_response(&mut self, c: usize, inc: u32, generation: i32, member: Name, error: Option<&'static str>) {
        if !self.alive(c, inc) {
            return;
        }
        let (client, group) = (self.client(c), self.group_name(c));
        self.emit(Event::Heartbeat { client, group, result: error.unwrap_or("OK") });
        let cl = &self.consumers[c].classic;
        let unchanged = cl.generation == generation && cl.member_id == member;
        match error {
            None => {}
            Some("REBALANCE_IN_PROGRESS") if cl.state == ClientState::Stable => {
                self.request_rejoin(c, "heartbeat: the group is rebalancing");
            }
            Some("FENCED_INSTANCE_ID") if unchanged => {
                self.consumers[c].fetch.pending_error =
                    Some("FencedInstanceIdException: another instance with the same group.instance.id joined".into());
                self.wake_if_waiting(c);
            }
            Some(e @ ("ILLEGAL_GENERATION" | "UNKNOWN_MEMBER_ID")) if unchanged => {
                self.reset_generation(c, e == "ILLEGAL_GENERATION", &format!("heartbeat: {e}"));
            }
            Some(_) => {}
        }
    }

    /// `maybeLeaveGroup`: only dynamic members that joined send LeaveGroup.
    pub(super) fn classic_leave(&mut self, c: usize, reason: &'static str) {
        let con = &self.consumers[c];
        if con.instance_id.is_none() && con.classic.state != ClientState::Unjoined && !con.classic.member_id.is_empty() {
            let action = Action::LeaveArrive { g: con.group, member: con.classic.member_id.clone(), instance: None, reason };
            let latency = con.latency;
            self.schedule(latency, action);
        }
    }

    /// An offset commit told the client its generation is gone.
    pub(super) fn classic_commit_error(&mut self, c: usize, error: &'static str) {
        match error {
            "REBALANCE_IN_PROGRESS" => self.request_rejoin(c, "offset commit: the group is rebalancing"),
            "UNKNOWN_MEMBER_ID" | "ILLEGAL_GENERATION" => {
                let cl = &self.consumers[c].classic;
                if cl.state == ClientState::Stable || cl.state == ClientState::Unjoined {
                    self.reset_generation(c, error == "ILLEGAL_GENERATION", &format!("offset commit: {error}"));
                }
            }
            _ => {}
        }
    }
}
