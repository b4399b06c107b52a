//! The classic group coordinator (spec §2; `GroupMetadataManager.classicGroup*`, `ClassicGroup`
//! at the spec's commit): JoinGroup with MEMBER_ID_REQUIRED, static members, the initial
//! rebalance delay, join completion (dynamic members that did not rejoin are removed),
//! protocol vote, SyncGroup, heartbeats, LeaveGroup and session expiry.
//!
//! `members` is a Java `HashMap` upstream; its iteration order (the `MemberTable`) decides the
//! protocol vote's ties, the next leader and the order of the leader's member list.

use mqviz_engine::sort::CollectSorted;
use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::classic_group::{select_protocol, MemberTable};

/// `group.min.session.timeout.ms` / `group.max.session.timeout.ms`.
pub const MIN_SESSION_TIMEOUT: Millis = 6_000;
pub const MAX_SESSION_TIMEOUT: Millis = 1_800_000;
/// `group.classic.new.member.join.timeout.ms`.
pub const NEW_MEMBER_JOIN_TIMEOUT: Millis = 300_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassicState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
}

impl ClassicState {
    pub fn name(self) -> &'static str {
        match self {
            ClassicState::Empty => "EMPTY",
            ClassicState::PreparingRebalance => "PREPARING_REBALANCE",
            ClassicState::CompletingRebalance => "COMPLETING_REBALANCE",
            ClassicState::Stable => "STABLE",
        }
    }
}

/// A member's JoinGroup protocol metadata (`ConsumerProtocolSubscription`), the same for each
/// of its assignors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinMeta {
    pub topics: Vec<String>,
    /// `ownedPartitions` (empty for EAGER members, which revoke before joining).
    pub owned: Vec<TopicPartition>,
    /// `generationId` of the subscription (-1 after a reset).
    pub generation: i32,
    /// `sticky` userData: the previous assignment and its generation.
    pub sticky_previous: Vec<TopicPartition>,
    pub sticky_generation: i32,
}

#[derive(Clone, Debug)]
pub struct JoinRequest {
    pub c: usize,
    pub inc: u32,
    pub member: Name,
    pub instance: Option<Name>,
    /// The consumer's scenario name, for the log.
    pub name: Name,
    /// `client.id`, sent in the request header: the member id's prefix.
    pub client_id: Name,
    pub protocols: Vec<String>,
    pub meta: JoinMeta,
    pub session_timeout: Millis,
    pub rebalance_timeout: Millis,
}

/// A member of the current generation as the leader's JoinGroup response lists it.
#[derive(Clone, Debug)]
pub struct JoinedMember {
    pub id: Name,
    pub instance: Option<Name>,
    pub meta: JoinMeta,
}

#[derive(Clone, Debug)]
pub struct JoinOk {
    pub member: Name,
    pub generation: i32,
    pub protocol: Option<String>,
    pub leader: Name,
    /// Filled for the leader only.
    pub members: Vec<JoinedMember>,
    /// A static leader replaced in a stable group keeps the current assignment (KIP-345).
    pub skip_assignment: bool,
}

#[derive(Clone, Debug)]
pub struct JoinResponse {
    pub result: Result<JoinOk, (&'static str, Name)>,
}

#[derive(Clone, Debug)]
pub struct SyncRequest {
    pub c: usize,
    pub inc: u32,
    pub member: Name,
    pub instance: Option<Name>,
    pub generation: i32,
    /// The leader's assignment (`None` from followers).
    pub assignments: Option<Vec<(Name, Vec<TopicPartition>)>>,
}

#[derive(Clone, Debug)]
pub struct ClassicMember {
    pub id: Name,
    pub instance: Option<Name>,
    pub c: usize,
    pub inc: u32,
    pub name: Name,
    pub session_timeout: Millis,
    pub rebalance_timeout: Millis,
    pub protocols: Vec<String>,
    pub meta: JoinMeta,
    pub awaiting_join: bool,
    pub awaiting_sync: bool,
    pub is_new: bool,
    pub hb_token: u64,
    pub assignment: Vec<TopicPartition>,
}

#[derive(Clone, Debug)]
pub struct ClassicGroup {
    pub state: ClassicState,
    pub previous_state: ClassicState,
    pub generation: i32,
    pub protocol_name: Option<String>,
    pub leader: Option<Name>,
    pub members: BTreeMap<Name, ClassicMember>,
    /// Java `HashMap` iteration order of the member ids.
    pub table: MemberTable,
    /// Pending members (MEMBER_ID_REQUIRED sent) and their expiry tokens.
    pub pending: BTreeMap<Name, u64>,
    pub static_members: BTreeMap<Name, Name>,
    pub new_member_added: bool,
    /// Token of the current join timer (initial delay or rebalance timeout).
    pub join_round: u64,
    pub sync_round: u64,
    pub pending_sync: BTreeSet<Name>,
    /// When the state last changed.
    pub changed_at: Option<Millis>,
}

impl Default for ClassicGroup {
    fn default() -> Self {
        ClassicGroup {
            state: ClassicState::Empty,
            previous_state: ClassicState::Empty,
            generation: 0,
            protocol_name: None,
            leader: None,
            members: BTreeMap::new(),
            table: MemberTable::default(),
            pending: BTreeMap::new(),
            static_members: BTreeMap::new(),
            new_member_added: false,
            join_round: 0,
            sync_round: 0,
            pending_sync: BTreeSet::new(),
            changed_at: None,
        }
    }
}

impl ClassicGroup {
    /// Members in `HashMap` iteration order.
    pub fn ordered(&self) -> Vec<&ClassicMember> {
        self.table.ordered().into_iter().filter_map(|id| self.members.get(id)).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.pending.is_empty()
    }

    /// `validateMember`: the member exists and its instance id maps to it.
    pub fn validate_member(&self, member: &str, instance: Option<&str>) -> Option<&'static str> {
        if let Some(inst) = instance {
            match self.static_members.get(inst) {
                None => return Some("UNKNOWN_MEMBER_ID"),
                Some(id) if &**id != member => return Some("FENCED_INSTANCE_ID"),
                _ => {}
            }
        }
        if !self.members.contains_key(member) {
            return Some("UNKNOWN_MEMBER_ID");
        }
        None
    }

    fn has_all_members_joined(&self) -> bool {
        self.members.values().all(|m| m.awaiting_join) && self.pending.is_empty()
    }

    fn can_rebalance(&self) -> bool {
        matches!(self.state, ClassicState::Stable | ClassicState::CompletingRebalance | ClassicState::Empty)
    }

    /// `supportsProtocols`: an empty group takes anything; otherwise one of the member's
    /// protocols must be supported by every member.
    fn supports(&self, protocols: &[String]) -> bool {
        if self.state == ClassicState::Empty {
            return !protocols.is_empty();
        }
        protocols.iter().any(|p| self.members.values().all(|m| m.protocols.contains(p)))
    }

    fn select_protocol(&self) -> Option<String> {
        let lists: Vec<Vec<String>> = self.ordered().iter().map(|m| m.protocols.clone()).collect();
        select_protocol(&lists).ok()
    }

    fn remove(&mut self, id: &str) {
        if let Some(m) = self.members.remove(id) {
            if let Some(inst) = &m.instance {
                self.static_members.remove(inst);
            }
            self.table.remove(id);
        }
        if self.leader.as_deref() == Some(id) {
            self.leader = self.table.first().map(Name::from);
        }
        self.pending.remove(id);
        self.pending_sync.remove(id);
    }
}

impl World {
    fn cg_mut(&mut self, g: usize) -> &mut ClassicGroup {
        &mut self.groups[g].classic
    }

    pub(super) fn transition(&mut self, g: usize, to: ClassicState, reason: &str) {
        let now = self.now;
        let grp = self.cg_mut(g);
        let from = grp.state;
        grp.previous_state = from;
        grp.state = to;
        grp.changed_at = Some(now);
        let group = self.groups[g].name.clone();
        self.emit(Event::GroupStateChanged { group, from: from.name(), to: to.name(), reason: reason.to_string() });
    }

    fn send_join_response(&mut self, c: usize, inc: u32, result: Result<JoinOk, (&'static str, Name)>) {
        let latency = self.consumers[c].latency;
        self.schedule(latency, Action::JoinResponse { c, inc, response: JoinResponse { result } });
    }

    /// Completes a parked JoinGroup.
    fn complete_join_future(&mut self, g: usize, id: &str, result: Result<JoinOk, (&'static str, Name)>) {
        let Some(m) = self.groups[g].classic.members.get_mut(id) else { return };
        if !m.awaiting_join {
            return;
        }
        m.awaiting_join = false;
        let (c, inc) = (m.c, m.inc);
        self.send_join_response(c, inc, result);
    }

    fn complete_sync_future(&mut self, g: usize, id: &str, generation: i32, result: Result<Vec<TopicPartition>, &'static str>) {
        let Some(m) = self.groups[g].classic.members.get_mut(id) else { return };
        if !m.awaiting_sync {
            return;
        }
        m.awaiting_sync = false;
        let (c, inc, latency) = (m.c, m.inc, self.consumers[m.c].latency);
        self.schedule(latency, Action::SyncResponse { c, inc, generation, result });
    }

    /// (Re)starts a member's session timer.
    pub(super) fn reschedule_heartbeat(&mut self, g: usize, id: &str, timeout: Millis) {
        let token = self.fresh_id();
        let Some(m) = self.groups[g].classic.members.get_mut(id) else { return };
        m.hb_token = token;
        let member = m.id.clone();
        self.schedule(timeout, Action::SessionExpiry { g, member, token });
    }

    fn join_ok(&self, g: usize, id: &Name, with_members: bool, skip_assignment: bool) -> JoinOk {
        let grp = &self.groups[g].classic;
        let members = if with_members {
            grp.ordered()
                .into_iter()
                .map(|m| JoinedMember { id: m.id.clone(), instance: m.instance.clone(), meta: m.meta.clone() })
                .collect()
        } else {
            Vec::new()
        };
        JoinOk {
            member: id.clone(),
            generation: grp.generation,
            protocol: grp.protocol_name.clone(),
            leader: grp.leader.clone().unwrap_or_else(|| Name::from("")),
            members,
            skip_assignment,
        }
    }

    pub(super) fn new_member_id(&mut self, prefix: &str) -> Name {
        let (a, b) = (self.rng.next_u64(), self.rng.next_u64());
        // java.util.UUID.randomUUID(): version 4, IETF variant.
        let a = (a & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
        let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
        Name::from(format!(
            "{prefix}-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        ))
    }

    pub(super) fn serve_join(&mut self, g: usize, r: JoinRequest) {
        if self.groups[g].protocol != crate::scenario::GroupProtocol::Classic {
            if !self.groups[g].modern.members.is_empty() {
                let (group, client) = (self.groups[g].name.clone(), r.name.clone());
                self.emit(Event::JoinRejected { group, client, error: "INCONSISTENT_GROUP_PROTOCOL" });
                self.send_join_response(r.c, r.inc, Err(("INCONSISTENT_GROUP_PROTOCOL", r.member.clone())));
                return;
            }
            self.groups[g].protocol = crate::scenario::GroupProtocol::Classic;
        }
        if !(MIN_SESSION_TIMEOUT..=MAX_SESSION_TIMEOUT).contains(&r.session_timeout) {
            let (group, client) = (self.groups[g].name.clone(), r.name.clone());
            self.emit(Event::JoinRejected { group, client, error: "INVALID_SESSION_TIMEOUT" });
            self.send_join_response(r.c, r.inc, Err(("INVALID_SESSION_TIMEOUT", r.member.clone())));
            return;
        }
        if !self.groups[g].classic.supports(&r.protocols) {
            let (group, client) = (self.groups[g].name.clone(), r.name.clone());
            self.emit(Event::JoinRejected { group, client, error: "INCONSISTENT_GROUP_PROTOCOL" });
            self.send_join_response(r.c, r.inc, Err(("INCONSISTENT_GROUP_PROTOCOL", r.member.clone())));
            return;
        }
        if r.member.is_empty() {
            let prefix = r.instance.as_deref().unwrap_or(&r.client_id).to_string();
            let new_id = self.new_member_id(&prefix);
            match r.instance.clone() {
                Some(inst) => match self.groups[g].classic.static_members.get(&inst).cloned() {
                    Some(old) => self.update_static_member(g, r, old, new_id),
                    None => self.add_member_then_rebalance(g, r, new_id),
                },
                None => {
                    // JoinGroup v4+: the member id must be known; park it as pending.
                    let token = self.fresh_id();
                    self.groups[g].classic.pending.insert(new_id.clone(), token);
                    let (group, client) = (self.groups[g].name.clone(), r.name.clone());
                    self.emit(Event::MemberIdRequired { group, client, member: new_id.clone() });
                    self.schedule(r.session_timeout, Action::SessionExpiry { g, member: new_id.clone(), token });
                    self.send_join_response(r.c, r.inc, Err(("MEMBER_ID_REQUIRED", new_id)));
                }
            }
            return;
        }
        if self.groups[g].classic.pending.contains_key(&r.member) {
            let id = r.member.clone();
            self.add_member_then_rebalance(g, r, id);
            return;
        }
        if let Some(error) = self.groups[g].classic.validate_member(&r.member, r.instance.as_deref()) {
            self.send_join_response(r.c, r.inc, Err((error, r.member.clone())));
            return;
        }
        let id = r.member.clone();
        let state = self.groups[g].classic.state;
        let matches = {
            let m = &self.groups[g].classic.members[&id];
            m.protocols == r.protocols && m.meta == r.meta
        };
        match state {
            ClassicState::PreparingRebalance => {
                self.update_member_then_rebalance(g, &id, r, "member joining during PREPARING_REBALANCE")
            }
            ClassicState::CompletingRebalance => {
                if matches {
                    let is_leader = self.groups[g].classic.leader.as_ref() == Some(&id);
                    let ok = self.join_ok(g, &id, is_leader, false);
                    self.send_join_response(r.c, r.inc, Ok(ok));
                } else {
                    self.update_member_then_rebalance(g, &id, r, "member metadata changed during COMPLETING_REBALANCE")
                }
            }
            ClassicState::Stable => {
                let is_leader = self.groups[g].classic.leader.as_ref() == Some(&id);
                if is_leader {
                    self.update_member_then_rebalance(g, &id, r, "the leader rejoined during STABLE")
                } else if !matches {
                    self.update_member_then_rebalance(g, &id, r, "member metadata changed during STABLE")
                } else {
                    let ok = self.join_ok(g, &id, false, false);
                    self.send_join_response(r.c, r.inc, Ok(ok));
                }
            }
            ClassicState::Empty => self.send_join_response(r.c, r.inc, Err(("UNKNOWN_MEMBER_ID", id))),
        }
    }

    fn add_member_then_rebalance(&mut self, g: usize, r: JoinRequest, id: Name) {
        let grp = &mut self.groups[g].classic;
        if grp.state == ClassicState::PreparingRebalance && grp.previous_state == ClassicState::Empty {
            grp.new_member_added = true;
        }
        let member = ClassicMember {
            id: id.clone(),
            instance: r.instance.clone(),
            c: r.c,
            inc: r.inc,
            name: r.name.clone(),
            session_timeout: r.session_timeout,
            rebalance_timeout: r.rebalance_timeout,
            protocols: r.protocols,
            meta: r.meta,
            awaiting_join: true,
            awaiting_sync: false,
            is_new: true,
            hb_token: 0,
            assignment: Vec::new(),
        };
        if let Some(inst) = &member.instance {
            grp.static_members.insert(inst.clone(), id.clone());
        }
        if grp.leader.is_none() {
            grp.leader = Some(id.clone());
        }
        grp.table.add(&id);
        grp.members.insert(id.clone(), member);
        grp.pending.remove(&id);
        self.reschedule_heartbeat(g, &id, NEW_MEMBER_JOIN_TIMEOUT);
        let reason = format!("adding new member {id}");
        self.maybe_prepare_rebalance_or_complete(g, &reason);
    }

    fn update_member_then_rebalance(&mut self, g: usize, id: &Name, r: JoinRequest, reason: &str) {
        if let Some(m) = self.groups[g].classic.members.get_mut(id) {
            m.protocols = r.protocols;
            m.meta = r.meta;
            m.rebalance_timeout = r.rebalance_timeout;
            m.session_timeout = r.session_timeout;
            m.c = r.c;
            m.inc = r.inc;
            m.awaiting_join = true;
        }
        let reason = format!("{reason}: {id}");
        self.maybe_prepare_rebalance_or_complete(g, &reason);
    }

    /// A known `group.instance.id` rejoins with an unknown member id: the old member id is
    /// fenced and replaced; in a STABLE group whose protocol would not change, no rebalance.
    fn update_static_member(&mut self, g: usize, r: JoinRequest, old: Name, new: Name) {
        // Fence whatever the old member id still waits for.
        self.complete_join_future(g, &old, Err(("FENCED_INSTANCE_ID", old.clone())));
        let generation = self.groups[g].classic.generation;
        self.complete_sync_future(g, &old, generation, Err("FENCED_INSTANCE_ID"));
        let grp = &mut self.groups[g].classic;
        let Some(mut member) = grp.members.remove(&old) else { return };
        grp.table.remove(&old);
        member.id = new.clone();
        member.protocols = r.protocols;
        member.meta = r.meta;
        member.rebalance_timeout = r.rebalance_timeout;
        member.session_timeout = r.session_timeout;
        member.c = r.c;
        member.inc = r.inc;
        member.awaiting_join = true;
        member.awaiting_sync = false;
        let inst = member.instance.clone().unwrap_or_else(|| Name::from(""));
        grp.table.add(&new);
        grp.members.insert(new.clone(), member);
        grp.static_members.insert(inst.clone(), new.clone());
        if grp.leader.as_ref() == Some(&old) {
            grp.leader = Some(new.clone());
        }
        if grp.pending_sync.remove(&old) {
            grp.pending_sync.insert(new.clone());
        }
        let timeout = grp.members[&new].session_timeout;
        self.reschedule_heartbeat(g, &new, timeout);
        let state = self.groups[g].classic.state;
        let group = self.groups[g].name.clone();
        match state {
            ClassicState::Stable => {
                let grp = &self.groups[g].classic;
                let unchanged = grp.select_protocol() == grp.protocol_name;
                self.emit(Event::StaticMemberReplaced { group, instance: inst, old, new: new.clone(), rebalance: !unchanged });
                if unchanged {
                    let is_leader = self.groups[g].classic.leader.as_ref() == Some(&new);
                    let ok = self.join_ok(g, &new, is_leader, is_leader);
                    self.complete_join_future(g, &new, Ok(ok));
                } else {
                    self.maybe_prepare_rebalance_or_complete(g, "a static member rejoined with another protocol");
                }
            }
            ClassicState::CompletingRebalance => {
                self.emit(Event::StaticMemberReplaced { group, instance: inst, old, new, rebalance: true });
                self.prepare_rebalance(g, "a static member rejoined during COMPLETING_REBALANCE");
            }
            _ => {
                self.emit(Event::StaticMemberReplaced { group, instance: inst, old, new, rebalance: false });
                self.maybe_complete_join_phase(g);
            }
        }
    }

    fn maybe_prepare_rebalance_or_complete(&mut self, g: usize, reason: &str) {
        if self.groups[g].classic.can_rebalance() {
            self.prepare_rebalance(g, reason);
        } else {
            self.maybe_complete_join_phase(g);
        }
    }

    fn maybe_complete_join_phase(&mut self, g: usize) {
        let grp = &self.groups[g].classic;
        if grp.state != ClassicState::PreparingRebalance
            || grp.previous_state == ClassicState::Empty
            || !grp.has_all_members_joined()
        {
            return;
        }
        self.complete_join(g);
    }

    fn rebalance_timeout(&self, g: usize) -> Millis {
        self.groups[g].classic.members.values().map(|m| m.rebalance_timeout).max().unwrap_or(0)
    }

    fn prepare_rebalance(&mut self, g: usize, reason: &str) {
        if self.groups[g].classic.state == ClassicState::CompletingRebalance {
            // Members waiting for SyncGroup are told to rejoin.
            let generation = self.groups[g].classic.generation;
            let ids: Vec<Name> = self.groups[g].classic.members.keys().cloned().collect();
            for id in ids {
                self.complete_sync_future(g, &id, generation, Err("REBALANCE_IN_PROGRESS"));
                if let Some(m) = self.groups[g].classic.members.get_mut(&id) {
                    m.assignment.clear();
                }
            }
        }
        self.groups[g].classic.sync_round += 1;
        let initial = self.groups[g].classic.state == ClassicState::Empty;
        self.groups[g].classic.join_round += 1;
        let round = self.groups[g].classic.join_round;
        self.transition(g, ClassicState::PreparingRebalance, reason);
        if initial {
            let delay = self.groups[g].initial_rebalance_delay;
            let remaining = self.rebalance_timeout(g).saturating_sub(delay);
            self.schedule(delay, Action::InitialJoinDelay { g, round, delay, remaining });
        } else if self.groups[g].classic.has_all_members_joined() {
            self.complete_join(g);
        } else {
            let timeout = self.rebalance_timeout(g);
            self.schedule(timeout, Action::JoinTimeout { g, round });
        }
    }

    /// `tryCompleteInitialRebalanceElseSchedule`: each new member extends the wait by the delay,
    /// up to the rebalance timeout.
    pub(super) fn initial_join_delay(&mut self, g: usize, round: u64, delay: Millis, remaining: Millis) {
        if self.groups[g].classic.join_round != round || self.groups[g].classic.state != ClassicState::PreparingRebalance {
            return;
        }
        let grp = &mut self.groups[g].classic;
        if grp.new_member_added && remaining != 0 {
            grp.new_member_added = false;
            let initial = self.groups[g].initial_rebalance_delay;
            let new_delay = initial.min(remaining);
            let new_remaining = remaining.saturating_sub(delay);
            self.schedule(new_delay, Action::InitialJoinDelay { g, round, delay: new_delay, remaining: new_remaining });
        } else {
            self.complete_join(g);
        }
    }

    pub(super) fn join_timeout(&mut self, g: usize, round: u64) {
        if self.groups[g].classic.join_round == round && self.groups[g].classic.state == ClassicState::PreparingRebalance {
            self.complete_join(g);
        }
    }

    /// `completeClassicGroupJoin`.
    fn complete_join(&mut self, g: usize) {
        self.groups[g].classic.join_round += 1;
        let gone: Vec<Name> = self.groups[g]
            .classic
            .members
            .values()
            .filter(|m| !m.awaiting_join && m.instance.is_none())
            .map(|m| m.id.clone())
            .collect();
        for id in gone {
            self.groups[g].classic.remove(&id);
            let group = self.groups[g].name.clone();
            self.emit(Event::MemberRemoved { group, member: id, reason: "did not rejoin before the rebalance completed".into() });
        }
        // maybeElectNewJoinedLeader
        let grp = &mut self.groups[g].classic;
        if let Some(leader) = grp.leader.clone() {
            let leader_joined = grp.members.get(&leader).is_some_and(|m| m.awaiting_join);
            if !leader_joined {
                let next = grp.table.ordered().into_iter().find(|id| grp.members.get(*id).is_some_and(|m| m.awaiting_join));
                match next {
                    Some(id) => grp.leader = Some(Name::from(id)),
                    None if !grp.members.is_empty() => {
                        let round = grp.join_round;
                        let timeout = self.rebalance_timeout(g);
                        self.schedule(timeout, Action::JoinTimeout { g, round });
                        return;
                    }
                    None => {}
                }
            }
        }
        let grp = &mut self.groups[g].classic;
        grp.generation += 1;
        grp.pending_sync.clear();
        if grp.members.is_empty() {
            grp.protocol_name = None;
            let generation = grp.generation;
            self.transition(g, ClassicState::Empty, &format!("generation {generation} has no members"));
            return;
        }
        let protocol = grp.select_protocol();
        grp.protocol_name = protocol.clone();
        let generation = grp.generation;
        let leader = grp.leader.clone().unwrap_or_else(|| Name::from(""));
        let count = grp.members.len();
        self.transition(g, ClassicState::CompletingRebalance, &format!("generation {generation}"));
        let group = self.groups[g].name.clone();
        self.emit(Event::JoinCompleted {
            group,
            generation,
            protocol: protocol.unwrap_or_default(),
            leader: leader.clone(),
            members: count,
        });
        let ids: Vec<Name> = self.groups[g].classic.ordered().iter().map(|m| m.id.clone()).collect();
        for id in &ids {
            let ok = self.join_ok(g, id, *id == leader, false);
            self.complete_join_future(g, id, Ok(ok));
            let timeout = self.groups[g].classic.members[id].session_timeout;
            self.reschedule_heartbeat(g, id, timeout);
            let grp = &mut self.groups[g].classic;
            if let Some(m) = grp.members.get_mut(id) {
                m.is_new = false;
            }
            grp.pending_sync.insert(id.clone());
        }
        self.groups[g].classic.sync_round += 1;
        let round = self.groups[g].classic.sync_round;
        let timeout = self.rebalance_timeout(g);
        self.schedule(timeout, Action::SyncTimeout { g, generation, round });
    }

    pub(super) fn serve_sync(&mut self, g: usize, r: SyncRequest) {
        let grp = &self.groups[g].classic;
        let error = if grp.members.is_empty() {
            Some("UNKNOWN_MEMBER_ID")
        } else if let Some(e) = grp.validate_member(&r.member, r.instance.as_deref()) {
            Some(e)
        } else if r.generation != grp.generation {
            Some("ILLEGAL_GENERATION")
        } else if grp.state == ClassicState::PreparingRebalance {
            Some("REBALANCE_IN_PROGRESS")
        } else {
            None
        };
        let generation = grp.generation;
        if let Some(e) = error {
            let latency = self.consumers[r.c].latency;
            self.schedule(latency, Action::SyncResponse { c: r.c, inc: r.inc, generation: r.generation, result: Err(e) });
            return;
        }
        match grp.state {
            ClassicState::CompletingRebalance => {
                let grp = &mut self.groups[g].classic;
                if let Some(m) = grp.members.get_mut(&r.member) {
                    m.awaiting_sync = true;
                    m.c = r.c;
                    m.inc = r.inc;
                }
                grp.pending_sync.remove(&r.member);
                if grp.leader.as_ref() == Some(&r.member) {
                    if let Some(assignments) = r.assignments {
                        let given: BTreeMap<Name, Vec<TopicPartition>> = assignments.into_iter().collect_map();
                        for m in grp.members.values_mut() {
                            m.assignment = given.get(&m.id).cloned().unwrap_or_default();
                        }
                    }
                    self.transition(g, ClassicState::Stable, &format!("the leader's assignment for generation {generation}"));
                    let ids: Vec<Name> = self.groups[g].classic.members.keys().cloned().collect();
                    for id in ids {
                        let a = self.groups[g].classic.members[&id].assignment.clone();
                        self.complete_sync_future(g, &id, generation, Ok(a));
                    }
                }
            }
            ClassicState::Stable => {
                let grp = &mut self.groups[g].classic;
                grp.pending_sync.remove(&r.member);
                let a = grp.members.get(&r.member).map(|m| m.assignment.clone()).unwrap_or_default();
                let latency = self.consumers[r.c].latency;
                self.schedule(latency, Action::SyncResponse { c: r.c, inc: r.inc, generation, result: Ok(a) });
            }
            _ => {}
        }
    }

    /// `expirePendingSync`: members that never sent SyncGroup are removed.
    pub(super) fn sync_timeout(&mut self, g: usize, generation: i32, round: u64) {
        let grp = &self.groups[g].classic;
        if grp.sync_round != round || grp.generation != generation || grp.pending_sync.is_empty() {
            return;
        }
        if !matches!(grp.state, ClassicState::CompletingRebalance | ClassicState::Stable) {
            return;
        }
        let missing: Vec<Name> = grp.pending_sync.iter().cloned().collect();
        for id in &missing {
            self.groups[g].classic.remove(id);
            let group = self.groups[g].name.clone();
            self.emit(Event::MemberRemoved {
                group,
                member: id.clone(),
                reason: "no SyncGroup before the rebalance timeout".into(),
            });
        }
        self.prepare_rebalance(g, "members removed on pending sync expiration");
    }

    pub(super) fn serve_heartbeat(
        &mut self,
        g: usize,
        c: usize,
        inc: u32,
        member: Name,
        instance: Option<Name>,
        generation: i32,
    ) {
        let grp = &self.groups[g].classic;
        let error = if self.groups[g].protocol != crate::scenario::GroupProtocol::Classic {
            Some("UNKNOWN_MEMBER_ID")
        } else if let Some(e) = grp.validate_member(&member, instance.as_deref()) {
            Some(e)
        } else if generation != grp.generation {
            Some("ILLEGAL_GENERATION")
        } else {
            match grp.state {
                ClassicState::Empty => Some("UNKNOWN_MEMBER_ID"),
                ClassicState::PreparingRebalance => Some("REBALANCE_IN_PROGRESS"),
                ClassicState::CompletingRebalance | ClassicState::Stable => None,
            }
        };
        if matches!(error, None | Some("REBALANCE_IN_PROGRESS")) {
            let timeout = self.groups[g].classic.members.get(&member).map(|m| m.session_timeout).unwrap_or(0);
            self.reschedule_heartbeat(g, &member, timeout);
        }
        let latency = self.consumers[c].latency;
        self.schedule(latency, Action::HeartbeatResponse { c, inc, generation, member, error });
    }

    /// LeaveGroup from a dynamic member (static members never send it on close).
    pub(super) fn serve_leave(&mut self, g: usize, member: Name, instance: Option<Name>, reason: &'static str) {
        if self.groups[g].classic.validate_member(&member, instance.as_deref()).is_some() {
            self.groups[g].classic.pending.remove(&member);
            return;
        }
        self.remove_member_and_update(g, &member, &format!("LeaveGroup: {reason}"));
    }

    /// The session timer fired: pending members and members without a satisfied heartbeat go.
    pub(super) fn session_expiry(&mut self, g: usize, member: Name, token: u64) {
        let grp = &self.groups[g].classic;
        if grp.pending.get(&member) == Some(&token) {
            self.groups[g].classic.pending.remove(&member);
            let group = self.groups[g].name.clone();
            self.emit(Event::MemberRemoved { group, member, reason: "pending member expired".into() });
            let grp = &self.groups[g].classic;
            if grp.state == ClassicState::PreparingRebalance && grp.has_all_members_joined() {
                self.complete_join(g);
            }
            return;
        }
        let Some(m) = grp.members.get(&member) else { return };
        if m.hb_token != token {
            return;
        }
        let satisfied = !m.is_new && (m.awaiting_join || m.awaiting_sync);
        if satisfied {
            return;
        }
        let why = if m.is_new { "new member join timeout" } else { "session timeout: no heartbeat" };
        self.remove_member_and_update(g, &member, why);
    }

    /// `removeMemberAndUpdateClassicGroup`.
    fn remove_member_and_update(&mut self, g: usize, id: &Name, reason: &str) {
        self.complete_join_future(g, id, Err(("UNKNOWN_MEMBER_ID", Name::from(""))));
        self.groups[g].classic.remove(id);
        let group = self.groups[g].name.clone();
        self.emit(Event::MemberRemoved { group, member: id.clone(), reason: reason.to_string() });
        let state = self.groups[g].classic.state;
        match state {
            ClassicState::Stable | ClassicState::CompletingRebalance => {
                self.maybe_prepare_rebalance_or_complete(g, &format!("removing member {id}: {reason}"))
            }
            ClassicState::PreparingRebalance if self.groups[g].classic.has_all_members_joined() => self.complete_join(g),
            _ => {}
        }
    }
}
