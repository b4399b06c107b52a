//! The KIP-848 group coordinator (spec §3; `GroupMetadataManager.consumerGroupHeartbeat`):
//! members join and heartbeat with their subscription and owned partitions; a subscription or
//! membership change bumps the group epoch; the server assignor computes a new target from the
//! previous *target*; each member is reconciled towards it (`reconciliation::reconcile`: revoke
//! before assign, partitions still owned elsewhere stay UNRELEASED).

use mqviz_engine::sort::CollectSorted;
use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::java_order::{iteration_order, java_string_hash, TableInit};
use crate::reconciliation::{
    check_heartbeat_epoch, reconcile, MemberAssignment, MemberState, PartitionEpochs, Partitions, TargetAssignment,
};
use crate::scenario::GroupProtocol;
use crate::server_assignor::{self, ServerAssignor, ServerMember, ServerTopic, TopicsImage};

/// `ConsumerGroupState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModernState {
    Empty,
    Assigning,
    Reconciling,
    Stable,
}

impl ModernState {
    pub fn name(self) -> &'static str {
        match self {
            ModernState::Empty => "EMPTY",
            ModernState::Assigning => "ASSIGNING",
            ModernState::Reconciling => "RECONCILING",
            ModernState::Stable => "STABLE",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ModernMember {
    pub id: Name,
    pub instance: Option<Name>,
    pub c: usize,
    pub inc: u32,
    pub name: Name,
    pub topics: BTreeSet<String>,
    pub rebalance_timeout: Millis,
    pub assignor: Option<ServerAssignor>,
    pub assignment: MemberAssignment,
    pub session_token: u64,
    pub rebalance_token: u64,
}

#[derive(Clone, Debug, Default)]
pub struct ConsumerGroup {
    pub group_epoch: i32,
    pub target: TargetAssignment,
    /// In insertion order (the order `memberSpecs` is filled).
    pub members: Vec<ModernMember>,
    pub static_members: BTreeMap<Name, Name>,
    /// Partition counts of the subscribed topics when the group epoch was last bumped.
    pub subscription_metadata: BTreeMap<String, u32>,
    /// The assignor that computed the current target.
    pub assignor: Option<ServerAssignor>,
}

impl ConsumerGroup {
    pub fn member(&self, id: &str) -> Option<&ModernMember> {
        self.members.iter().find(|m| &*m.id == id)
    }

    fn member_mut(&mut self, id: &str) -> Option<&mut ModernMember> {
        self.members.iter_mut().find(|m| &*m.id == id)
    }

    pub fn state(&self) -> ModernState {
        if self.members.is_empty() {
            ModernState::Empty
        } else if self.group_epoch > self.target.epoch {
            ModernState::Assigning
        } else if self
            .members
            .iter()
            .any(|m| m.assignment.member_epoch != self.target.epoch || m.assignment.state != MemberState::Stable)
        {
            ModernState::Reconciling
        } else {
            ModernState::Stable
        }
    }

    fn partition_epochs(&self) -> PartitionEpochs {
        PartitionEpochs::from_members(self.members.iter().map(|m| &m.assignment))
    }

    /// `computePreferredServerAssignor`: the most requested, ties in `HashMap` order of names;
    /// the coordinator's first configured assignor (`uniform`) when nobody asks.
    pub(super) fn preferred_assignor(&self) -> ServerAssignor {
        let mut counts: Vec<(ServerAssignor, usize)> = Vec::new();
        for a in self.members.iter().filter_map(|m| m.assignor) {
            match counts.iter_mut().find(|(x, _)| *x == a) {
                Some((_, n)) => *n += 1,
                None => counts.push((a, 1)),
            }
        }
        let order =
            iteration_order(&counts.iter().map(|(a, _)| java_string_hash(a.name())).collect::<Vec<_>>(), TableInit::Default);
        let mut best: Option<(ServerAssignor, usize)> = None;
        for i in order {
            if best.is_none_or(|b| counts[i].1 > b.1) {
                best = Some(counts[i]);
            }
        }
        best.map(|b| b.0).unwrap_or(ServerAssignor::Uniform)
    }
}

#[derive(Clone, Debug)]
pub struct CgHeartbeatRequest {
    pub c: usize,
    pub inc: u32,
    pub member: Name,
    pub epoch: i32,
    pub instance: Option<Name>,
    pub name: Name,
    pub rebalance_timeout: Millis,
    pub topics: BTreeSet<String>,
    pub assignor: Option<ServerAssignor>,
    pub owned: Partitions,
}

#[derive(Clone, Debug)]
pub struct CgOk {
    pub member: Name,
    pub epoch: i32,
    pub interval: Millis,
    /// The partitions the member may own now (`assignedPartitions`).
    pub assignment: Vec<TopicPartition>,
}

#[derive(Clone, Debug)]
pub struct CgHeartbeatResponse {
    pub sent_epoch: i32,
    pub result: Result<CgOk, &'static str>,
}

fn to_tps(p: &Partitions) -> Vec<TopicPartition> {
    p.iter().flat_map(|(t, ps)| ps.iter().map(move |x| TopicPartition::new(t.clone(), *x))).collect()
}

impl World {
    fn parts_of(&self, p: &Partitions) -> Vec<Part> {
        to_tps(p).iter().filter_map(|tp| self.pid_of(tp)).map(|pid| self.part(pid)).collect()
    }

    fn cg_respond(&mut self, c: usize, inc: u32, sent_epoch: i32, result: Result<CgOk, &'static str>) {
        let latency = self.consumers[c].latency;
        self.schedule(latency, Action::CgHeartbeatResponse { c, inc, response: CgHeartbeatResponse { sent_epoch, result } });
    }

    fn bump_group_epoch(&mut self, g: usize, reason: &str) {
        self.groups[g].modern.group_epoch += 1;
        let (group, epoch) = (self.groups[g].name.clone(), self.groups[g].modern.group_epoch);
        self.emit(Event::GroupEpochBumped { group, epoch, reason: reason.to_string() });
    }

    /// The subscribed topics' partition counts now.
    pub(super) fn subscription_metadata(&self, g: usize) -> BTreeMap<String, u32> {
        let topics: BTreeSet<&String> = self.groups[g].modern.members.iter().flat_map(|m| m.topics.iter()).collect_set();
        topics
            .into_iter()
            .filter_map(|t| self.topic_index(t).map(|i| (t.clone(), self.topics[i].pids.len() as u32)))
            .collect_map()
    }

    pub(super) fn serve_cg_heartbeat(&mut self, g: usize, r: CgHeartbeatRequest) {
        if self.groups[g].protocol != GroupProtocol::Consumer {
            if !self.groups[g].classic.is_empty() {
                return self.cg_respond(r.c, r.inc, r.epoch, Err("GROUP_ID_NOT_FOUND"));
            }
            self.groups[g].protocol = GroupProtocol::Consumer;
        }
        if r.epoch < 0 {
            return self.cg_member_leaves(g, &r);
        }
        let mut changed_reason: Option<String> = None;
        let id: Name;
        if r.epoch == 0 {
            let existing_static = r.instance.as_ref().and_then(|i| self.groups[g].modern.static_members.get(i).cloned());
            match (existing_static, self.groups[g].modern.member(&r.member).is_some()) {
                (Some(old), _) => {
                    let old_epoch = self.groups[g].modern.member(&old).map(|m| m.assignment.member_epoch);
                    if old_epoch != Some(-2) {
                        return self.cg_respond(r.c, r.inc, r.epoch, Err("UNRELEASED_INSTANCE_ID"));
                    }
                    id = if r.member.is_empty() { self.new_uuid_member_id() } else { r.member.clone() };
                    self.replace_static_member(g, &old, &id, &r);
                }
                (None, true) => {
                    id = r.member.clone();
                    let m = self.groups[g].modern.member(&id).map(|m| m.assignment.clone());
                    if let Some(a) = m {
                        if let Err(f) = check_heartbeat_epoch(&a, r.epoch, Some(&r.owned)) {
                            let (group, client) = (self.groups[g].name.clone(), r.name.clone());
                            self.emit(Event::MemberFenced { group, client, reason: f.to_string() });
                            return self.cg_respond(r.c, r.inc, r.epoch, Err("FENCED_MEMBER_EPOCH"));
                        }
                    }
                }
                (None, false) => {
                    id = if r.member.is_empty() { self.new_uuid_member_id() } else { r.member.clone() };
                    let mg = &mut self.groups[g].modern;
                    mg.members.push(ModernMember {
                        id: id.clone(),
                        instance: r.instance.clone(),
                        c: r.c,
                        inc: r.inc,
                        name: r.name.clone(),
                        topics: BTreeSet::new(),
                        rebalance_timeout: r.rebalance_timeout,
                        assignor: None,
                        assignment: MemberAssignment::joining(),
                        session_token: 0,
                        rebalance_token: 0,
                    });
                    if let Some(inst) = &r.instance {
                        mg.static_members.insert(inst.clone(), id.clone());
                    }
                    changed_reason = Some(format!("{} joined", r.name));
                }
            }
        } else {
            id = r.member.clone();
            let Some(m) = self.groups[g].modern.member(&id) else {
                return self.cg_respond(r.c, r.inc, r.epoch, Err("UNKNOWN_MEMBER_ID"));
            };
            if let Err(f) = check_heartbeat_epoch(&m.assignment, r.epoch, Some(&r.owned)) {
                let (group, client) = (self.groups[g].name.clone(), r.name.clone());
                self.emit(Event::MemberFenced { group, client, reason: f.to_string() });
                return self.cg_respond(r.c, r.inc, r.epoch, Err("FENCED_MEMBER_EPOCH"));
            }
        }
        // 1. Update the member; a new subscription bumps the group epoch.
        let Some(m) = self.groups[g].modern.member_mut(&id) else { return };
        m.c = r.c;
        m.inc = r.inc;
        m.rebalance_timeout = r.rebalance_timeout;
        if m.assignor != r.assignor {
            m.assignor = r.assignor;
        }
        if m.topics != r.topics {
            m.topics = r.topics.clone();
            if changed_reason.is_none() {
                changed_reason = Some(format!("{} changed its subscription", r.name));
            }
        }
        let metadata = self.subscription_metadata(g);
        if metadata != self.groups[g].modern.subscription_metadata {
            if changed_reason.is_none() && !self.groups[g].modern.subscription_metadata.is_empty() {
                changed_reason = Some("the subscribed topics' metadata changed".into());
            }
            self.groups[g].modern.subscription_metadata = metadata;
        }
        if let Some(reason) = changed_reason {
            self.bump_group_epoch(g, &reason);
        }
        // 2. A new target when the group epoch moved past it.
        if self.groups[g].modern.group_epoch > self.groups[g].modern.target.epoch {
            self.compute_target(g);
        }
        // 3. Reconcile this member.
        self.cg_reconcile(g, &id, Some(&r.owned));
        // 4. Session timer.
        let token = self.fresh_id();
        if let Some(m) = self.groups[g].modern.member_mut(&id) {
            m.session_token = token;
        }
        let session = self.scenario.groups[self.consumers[r.c].group].config.session_timeout_ms;
        self.schedule(session, Action::CgSessionExpiry { g, member: id.clone(), token });
        let m = self.groups[g].modern.member(&id).map(|m| (m.assignment.member_epoch, to_tps(&m.assignment.assigned)));
        let Some((epoch, assignment)) = m else { return };
        let interval = self.scenario.groups[self.consumers[r.c].group].config.heartbeat_interval_ms;
        self.cg_respond(r.c, r.inc, r.epoch, Ok(CgOk { member: id, epoch, interval, assignment }));
    }

    pub(super) fn new_uuid_member_id(&mut self) -> Name {
        let u = crate::uuid::Uuid::new(self.rng.next_u64() as i64, self.rng.next_u64() as i64);
        Name::from(u.to_string())
    }

    /// A static member rejoins after leaving with epoch -2: the new member id takes over the old
    /// one's assignment and target (no rebalance).
    fn replace_static_member(&mut self, g: usize, old: &Name, new: &Name, r: &CgHeartbeatRequest) {
        let mg = &mut self.groups[g].modern;
        let Some(pos) = mg.members.iter().position(|m| &m.id == old) else { return };
        let mut m = mg.members.remove(pos);
        m.id = new.clone();
        m.c = r.c;
        m.inc = r.inc;
        m.name = r.name.clone();
        m.assignment.member_epoch = 0;
        m.assignment.previous_member_epoch = 0;
        mg.members.push(m);
        if let Some(target) = mg.target.members.remove(&**old) {
            mg.target.members.insert(new.to_string(), target);
        }
        if let Some(inst) = &r.instance {
            mg.static_members.insert(inst.clone(), new.clone());
        }
        let group = self.groups[g].name.clone();
        self.emit(Event::StaticMemberReplaced {
            group,
            instance: r.instance.clone().unwrap_or_else(|| Name::from("")),
            old: old.clone(),
            new: new.clone(),
            rebalance: false,
        });
    }

    /// `TargetAssignmentBuilder.build()` with the group's assignor, fed the previous target.
    fn compute_target(&mut self, g: usize) {
        let mg = &self.groups[g].modern;
        let assignor = mg.preferred_assignor();
        let image: TopicsImage = self
            .topics
            .iter()
            .map(|t| (t.name.to_string(), ServerTopic { id: t.id, partitions: t.pids.len() as i32 }))
            .collect_map();
        let members: Vec<ServerMember> = mg
            .members
            .iter()
            .map(|m| ServerMember {
                id: m.id.to_string(),
                instance_id: m.instance.as_deref().map(str::to_string),
                rack: None,
                topics: m.topics.iter().cloned().collect(),
                target: mg.target.of(&m.id).into_iter().map(|(t, ps)| (t, ps.into_iter().collect())).collect(),
            })
            .collect();
        let epoch = mg.group_epoch;
        let group = self.groups[g].name.clone();
        match server_assignor::assign(assignor, &image, &members) {
            Ok(result) => {
                let mut target = TargetAssignment { epoch, members: BTreeMap::new() };
                let mut shown = Vec::new();
                for m in &self.groups[g].modern.members {
                    let topics = result.get(&*m.id).cloned().unwrap_or_default();
                    let parts: Partitions =
                        topics.iter().map(|(t, ps)| (t.to_string(), ps.iter().copied().collect_set())).collect_map();
                    shown.push((m.name.clone(), self.parts_of(&parts)));
                    target.members.insert(m.id.to_string(), parts);
                }
                let mg = &mut self.groups[g].modern;
                mg.target = target;
                mg.assignor = Some(assignor);
                self.emit(Event::TargetComputed { group, epoch, assignor: assignor.name(), members: shown });
            }
            Err(e) => {
                self.emit(Event::AssignorFailed { group, leader: Name::from("coordinator"), error: e.to_string() });
            }
        }
    }

    /// `maybeReconcile` for one member.
    fn cg_reconcile(&mut self, g: usize, id: &Name, owned: Option<&Partitions>) {
        let mg = &self.groups[g].modern;
        let Some(m) = mg.member(id) else { return };
        let target_epoch = mg.target.epoch;
        if m.assignment.state == MemberState::Stable && m.assignment.member_epoch == target_epoch {
            return;
        }
        let epochs = mg.partition_epochs();
        let target = mg.target.of(id);
        let next = match reconcile(&m.assignment, target_epoch, &target, |t, p| epochs.epoch(t, p), owned) {
            Ok(next) => next,
            Err(f) => {
                let (group, client) = (self.groups[g].name.clone(), m.name.clone());
                self.emit(Event::MemberFenced { group, client, reason: f.to_string() });
                self.cg_fence(g, id);
                return;
            }
        };
        if next == m.assignment {
            return;
        }
        let (client, rebalance_timeout) = (m.name.clone(), m.rebalance_timeout);
        let (assigned, pending) = (self.parts_of(&next.assigned), self.parts_of(&next.pending_revocation));
        let (state, epoch) = (next.state, next.member_epoch);
        let token = self.fresh_id();
        if let Some(m) = self.groups[g].modern.member_mut(id) {
            m.assignment = next;
            m.rebalance_token = token;
        }
        let group = self.groups[g].name.clone();
        self.emit(Event::MemberReconciled { group, client, epoch, state: state.name(), assigned, pending });
        if state == MemberState::UnrevokedPartitions {
            self.schedule(rebalance_timeout, Action::CgRebalanceTimeout { g, member: id.clone(), epoch, token });
        }
    }

    /// Removes a member (leave, fencing, expiry): its partitions are free, the epoch moves on.
    fn cg_fence(&mut self, g: usize, id: &Name) {
        let mg = &mut self.groups[g].modern;
        let Some(pos) = mg.members.iter().position(|m| &m.id == id) else { return };
        let m = mg.members.remove(pos);
        if let Some(inst) = &m.instance {
            if mg.static_members.get(inst) == Some(id) {
                mg.static_members.remove(inst);
            }
        }
        mg.target.members.remove(&**id);
        self.bump_group_epoch(g, &format!("{} left the group", m.name));
        // Partitions it held may be waited for: members left UNRELEASED move on at their next
        // heartbeat (the coordinator does not push).
    }

    /// A leave heartbeat: epoch -1 removes the member; -2 (static) keeps its assignment reserved
    /// until its session expires or the same instance rejoins.
    fn cg_member_leaves(&mut self, g: usize, r: &CgHeartbeatRequest) {
        let id = match &r.instance {
            Some(inst) => self.groups[g].modern.static_members.get(inst).cloned(),
            None => self.groups[g].modern.member(&r.member).map(|m| m.id.clone()),
        };
        let Some(id) = id else { return self.cg_respond(r.c, r.inc, r.epoch, Err("UNKNOWN_MEMBER_ID")) };
        let (group, client) = (self.groups[g].name.clone(), r.name.clone());
        if r.epoch == -2 && r.instance.is_some() {
            if let Some(m) = self.groups[g].modern.member_mut(&id) {
                m.assignment.member_epoch = -2;
                m.assignment.pending_revocation.clear();
            }
            self.emit(Event::StaticMemberLeft { group, client });
        } else {
            self.emit(Event::MemberFenced { group, client, reason: "left the group (epoch -1)".into() });
            self.cg_fence(g, &id);
        }
        self.cg_respond(r.c, r.inc, r.epoch, Ok(CgOk { member: id, epoch: r.epoch, interval: 0, assignment: Vec::new() }));
    }

    pub(super) fn cg_session_expiry(&mut self, g: usize, member: Name, token: u64) {
        let Some(m) = self.groups[g].modern.member(&member) else { return };
        if m.session_token != token {
            return;
        }
        let (group, client) = (self.groups[g].name.clone(), m.name.clone());
        self.emit(Event::MemberFenced { group, client, reason: "session timeout: no heartbeat".into() });
        self.cg_fence(g, &member);
    }

    /// A member that held partitions to revoke longer than its rebalance timeout is fenced.
    pub(super) fn cg_rebalance_timeout(&mut self, g: usize, member: Name, epoch: i32, token: u64) {
        let Some(m) = self.groups[g].modern.member(&member) else { return };
        if m.rebalance_token != token
            || m.assignment.member_epoch != epoch
            || m.assignment.state != MemberState::UnrevokedPartitions
        {
            return;
        }
        let (group, client) = (self.groups[g].name.clone(), m.name.clone());
        self.emit(Event::MemberFenced { group, client, reason: "rebalance timeout: partitions not revoked in time".into() });
        self.cg_fence(g, &member);
    }
}
