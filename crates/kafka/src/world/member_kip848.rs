//! The KIP-848 client (`ConsumerMembershipManager`, `HeartbeatRequestManager`): join with epoch
//! 0, heartbeat at the interval the coordinator dictates, reconcile each new assignment
//! (revocations first, committing before them with auto-commit, then the added partitions),
//! acknowledge at once, and rejoin after being fenced or after `max.poll.interval.ms`.

use mqviz_engine::sort::CollectSorted;
use std::collections::BTreeSet;

use super::consumer::CommitPurpose;
use super::coordinator_kip848::{CgHeartbeatRequest, CgHeartbeatResponse};
use super::*;
use crate::reconciliation::Partitions;

/// `MemberState` of the client's membership manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgClientState {
    Unsubscribed,
    Joining,
    Reconciling,
    Acknowledging,
    Stable,
    Fenced,
    Leaving,
    /// `max.poll.interval.ms` expired: left, rejoins on the next `poll()`.
    Stale,
}

impl CgClientState {
    pub fn name(self) -> &'static str {
        match self {
            CgClientState::Unsubscribed => "UNSUBSCRIBED",
            CgClientState::Joining => "JOINING",
            CgClientState::Reconciling => "RECONCILING",
            CgClientState::Acknowledging => "ACKNOWLEDGING",
            CgClientState::Stable => "STABLE",
            CgClientState::Fenced => "FENCED",
            CgClientState::Leaving => "LEAVING",
            CgClientState::Stale => "STALE",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ModernClient {
    pub state: CgClientState,
    pub member_id: Name,
    pub epoch: i32,
    pub hb_seq: u64,
    pub hb_in_flight: bool,
    /// Send another heartbeat as soon as the one in flight is answered.
    pub send_again: bool,
    pub interval: Millis,
    /// An assignment waiting for the commit before its revocations.
    pub pending_assignment: Option<Vec<TopicPartition>>,
    pub reconcile_commit: Option<u64>,
}

impl Default for ModernClient {
    fn default() -> Self {
        ModernClient {
            state: CgClientState::Unsubscribed,
            member_id: Name::from(""),
            epoch: 0,
            hb_seq: 0,
            hb_in_flight: false,
            send_again: false,
            interval: 5_000,
            pending_assignment: None,
            reconcile_commit: None,
        }
    }
}

pub(super) fn partitions(tps: &[TopicPartition]) -> Partitions {
    let mut out = Partitions::new();
    for tp in tps {
        out.entry(tp.topic.clone()).or_default().insert(tp.partition);
    }
    out
}

impl World {
    /// The consumer's `poll()` under `group.protocol=consumer`: join when subscribed, rejoin after
    /// a poll timeout.
    pub(super) fn cg_poll(&mut self, c: usize) {
        let m = &self.consumers[c].modern;
        match m.state {
            CgClientState::Unsubscribed | CgClientState::Stale => {
                if self.consumers[c].subs.subscription().is_empty() {
                    return;
                }
                let m = &mut self.consumers[c].modern;
                m.state = CgClientState::Joining;
                m.epoch = 0;
                self.send_cg_heartbeat(c);
                self.start_cg_heartbeat_timer(c);
            }
            _ => {}
        }
    }

    pub(super) fn cg_subscription_changed(&mut self, c: usize) {
        if self.consumers[c].modern.state == CgClientState::Unsubscribed {
            self.wake_if_waiting(c);
            return;
        }
        self.send_cg_heartbeat(c);
    }

    pub(super) fn start_cg_heartbeat_timer(&mut self, c: usize) {
        let con = &mut self.consumers[c];
        con.modern.hb_seq += 1;
        let (inc, seq, interval) = (con.inc, con.modern.hb_seq, con.modern.interval);
        self.schedule(interval, Action::CgHeartbeatTick { c, inc, seq });
    }

    fn send_cg_heartbeat(&mut self, c: usize) {
        let con = &mut self.consumers[c];
        if con.modern.hb_in_flight {
            con.modern.send_again = true;
            return;
        }
        con.modern.hb_in_flight = true;
        con.modern.send_again = false;
        let topics: BTreeSet<String> = con.subs.subscription();
        let request = CgHeartbeatRequest {
            c,
            inc: con.inc,
            member: con.modern.member_id.clone(),
            epoch: con.modern.epoch,
            instance: con.instance_id.clone(),
            name: con.name.clone(),
            rebalance_timeout: con.config.max_poll_interval_ms,
            topics,
            assignor: con.config.remote_assignor,
            owned: partitions(con.subs.assigned_partitions()),
        };
        let (g, latency) = (con.group, con.latency);
        self.schedule(latency, Action::CgHeartbeatArrive { g, request });
    }

    pub(super) fn cg_heartbeat_tick(&mut self, c: usize, inc: u32, seq: u64) {
        if !self.alive(c, inc) || self.consumers[c].modern.hb_seq != seq {
            return;
        }
        let con = &self.consumers[c];
        if matches!(con.modern.state, CgClientState::Unsubscribed | CgClientState::Stale | CgClientState::Leaving) {
            return;
        }
        if self.now.saturating_sub(con.app.last_poll) > con.config.max_poll_interval_ms {
            let (client, group) = (self.client(c), self.group_name(c));
            self.emit(Event::PollTimeoutExpired { client, group });
            self.lose_partitions(c, "max.poll.interval.ms expired: onPartitionsLost");
            self.cg_leave(c);
            self.consumers[c].modern.state = CgClientState::Stale;
            return;
        }
        self.send_cg_heartbeat(c);
        let interval = self.consumers[c].modern.interval;
        self.schedule(interval, Action::CgHeartbeatTick { c, inc, seq });
        self.arm_poll_timer(c, inc, seq, interval);
    }

    fn lose_partitions(&mut self, c: usize, why: &'static str) {
        let assigned: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
        if assigned.is_empty() {
            return;
        }
        let parts = self.parts_sorted(&assigned);
        self.change_assignment(c, &[], why);
        let client = self.client(c);
        self.emit(Event::Revoked { client, partitions: parts, lost: true, reason: why });
    }

    pub(super) fn cg_heartbeat_response(&mut self, c: usize, inc: u32, response: CgHeartbeatResponse) {
        if !self.alive(c, inc) {
            return;
        }
        self.consumers[c].modern.hb_in_flight = false;
        let (client, group) = (self.client(c), self.group_name(c));
        match response.result {
            Ok(ok) => {
                let state = self.consumers[c].modern.state;
                if matches!(state, CgClientState::Leaving | CgClientState::Stale | CgClientState::Unsubscribed) {
                    return;
                }
                let result = format!("epoch {} assignment {}", ok.epoch, ok.assignment.len());
                self.emit(Event::CgHeartbeat { client, group, epoch: response.sent_epoch, result });
                let m = &mut self.consumers[c].modern;
                m.member_id = ok.member;
                m.epoch = ok.epoch;
                if ok.interval > 0 {
                    m.interval = ok.interval;
                }
                if m.state == CgClientState::Joining || m.state == CgClientState::Acknowledging {
                    m.state = CgClientState::Stable;
                }
                let reconciling = m.reconcile_commit.is_some();
                let owned: BTreeSet<TopicPartition> = self.consumers[c].subs.assigned_partitions().iter().cloned().collect_set();
                let wanted: BTreeSet<TopicPartition> = ok.assignment.iter().cloned().collect_set();
                if !reconciling && owned != wanted {
                    self.cg_reconcile_start(c, ok.assignment);
                }
            }
            Err(error) => {
                let text = error.to_string();
                self.emit(Event::CgHeartbeat { client, group, epoch: response.sent_epoch, result: text });
                match error {
                    "FENCED_MEMBER_EPOCH" | "UNKNOWN_MEMBER_ID" => {
                        self.lose_partitions(c, "fenced by the coordinator: onPartitionsLost");
                        let m = &mut self.consumers[c].modern;
                        m.epoch = 0;
                        m.state = CgClientState::Joining;
                        m.pending_assignment = None;
                        m.reconcile_commit = None;
                        self.send_cg_heartbeat(c);
                    }
                    "UNRELEASED_INSTANCE_ID" => {
                        self.consumers[c].fetch.pending_error = Some(
                            "UnreleasedInstanceIdException: the previous instance with this group.instance.id has not left the group".into(),
                        );
                        self.wake_if_waiting(c);
                    }
                    _ => {}
                }
            }
        }
        if self.consumers[c].modern.send_again {
            self.send_cg_heartbeat(c);
        }
    }

    /// Revocations first: stop fetching them, commit (auto-commit) and wait; then apply.
    fn cg_reconcile_start(&mut self, c: usize, assignment: Vec<TopicPartition>) {
        let owned: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
        let revoked: Vec<TopicPartition> = owned.iter().filter(|tp| !assignment.contains(tp)).cloned().collect();
        self.consumers[c].modern.state = CgClientState::Reconciling;
        if !revoked.is_empty() && self.consumers[c].config.enable_auto_commit {
            let _ = self.consumers[c].subs.mark_pending_revocation(&revoked);
            if let Some(id) = self.commit_all_consumed(c, CommitPurpose::Reconcile) {
                let m = &mut self.consumers[c].modern;
                m.reconcile_commit = Some(id);
                m.pending_assignment = Some(assignment);
                return;
            }
        }
        self.cg_reconcile_finish(c, assignment);
    }

    pub(super) fn cg_reconcile_commit_done(&mut self, c: usize, id: u64) {
        if self.consumers[c].modern.reconcile_commit != Some(id) {
            return;
        }
        self.consumers[c].modern.reconcile_commit = None;
        if let Some(assignment) = self.consumers[c].modern.pending_assignment.take() {
            self.cg_reconcile_finish(c, assignment);
        }
    }

    /// `onPartitionsRevoked(revoked)`, the new assignment, `onPartitionsAssigned(added)`, then
    /// an immediate heartbeat to acknowledge.
    fn cg_reconcile_finish(&mut self, c: usize, assignment: Vec<TopicPartition>) {
        let owned: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
        let revoked: Vec<TopicPartition> = owned.iter().filter(|tp| !assignment.contains(tp)).cloned().collect();
        let added: Vec<TopicPartition> = assignment.iter().filter(|tp| !owned.contains(tp)).cloned().collect();
        let epoch = self.consumers[c].modern.epoch;
        self.change_assignment(c, &assignment, &format!("reconciled at member epoch {epoch}"));
        let (assigned_p, revoked_p, added_p) =
            (self.parts_sorted(&assignment), self.parts_sorted(&revoked), self.parts_sorted(&added));
        let (client, group) = (self.client(c), self.group_name(c));
        self.emit(Event::Reconciled { client, group, epoch, assigned: assigned_p, revoked: revoked_p, added: added_p });
        let con = &mut self.consumers[c];
        con.modern.state = CgClientState::Acknowledging;
        con.app.next_auto_commit = self.now + con.config.auto_commit_interval_ms;
        self.send_cg_heartbeat(c);
        self.wake_if_waiting(c);
    }

    /// Leave heartbeat: epoch -1, or -2 for a static member (its assignment stays reserved).
    pub(super) fn cg_leave(&mut self, c: usize) {
        let con = &mut self.consumers[c];
        if con.modern.member_id.is_empty() || matches!(con.modern.state, CgClientState::Unsubscribed | CgClientState::Stale) {
            con.modern.state = CgClientState::Unsubscribed;
            return;
        }
        let epoch = if con.instance_id.is_some() { -2 } else { -1 };
        let request = CgHeartbeatRequest {
            c,
            inc: con.inc,
            member: con.modern.member_id.clone(),
            epoch,
            instance: con.instance_id.clone(),
            name: con.name.clone(),
            rebalance_timeout: con.config.max_poll_interval_ms,
            topics: BTreeSet::new(),
            assignor: None,
            owned: Partitions::new(),
        };
        con.modern.state = CgClientState::Leaving;
        con.modern.epoch = 0;
        con.modern.hb_seq += 1;
        let (g, latency) = (con.group, con.latency);
        self.schedule(latency, Action::CgHeartbeatArrive { g, request });
    }

    /// A commit told the client it is not a member any more.
    pub(super) fn cg_commit_error(&mut self, c: usize, error: &'static str) {
        if error == "UNKNOWN_MEMBER_ID" && self.consumers[c].modern.state != CgClientState::Joining {
            self.send_cg_heartbeat(c);
        }
    }
}
