//! Offset commits (spec §5): the client sends `allConsumed()` (every valid position, with the
//! epoch of the record before it); the coordinator checks the sender's generation (classic) or
//! member epoch (KIP-848) and refuses stale ones. Committed offsets are what the next owner of a
//! partition starts from.

use super::consumer::CommitPurpose;
use super::member_classic::ClientState;
use super::*;
use crate::events::CommitKind;
use crate::scenario::GroupProtocol;
use mqviz_engine::sort::StableSort;

#[derive(Clone, Debug)]
pub struct CommitRequest {
    pub c: usize,
    pub inc: u32,
    pub id: u64,
    pub member: Name,
    pub instance: Option<Name>,
    /// Generation (classic) or member epoch (KIP-848); -1 from a consumer without a group.
    pub generation: i32,
    pub offsets: Vec<(u32, u64, Option<i32>)>,
    pub kind: CommitKind,
}

impl World {
    /// Commits the consumer's positions. Returns the request id, or `None` when nothing was sent
    /// (no positions, or the client knows it is not in an active generation).
    pub(super) fn commit_all_consumed(&mut self, c: usize, purpose: CommitPurpose) -> Option<u64> {
        let consumed = self.consumers[c].subs.all_consumed();
        let offsets: Vec<(u32, u64, Option<i32>)> =
            consumed.iter().filter_map(|(tp, offset, epoch)| Some((self.pid_of(tp)?, (*offset).max(0) as u64, *epoch))).collect();
        if offsets.is_empty() {
            return None;
        }
        let con = &self.consumers[c];
        let (member, generation, local_error) = if !con.group_managed() {
            (Name::from(""), -1, None)
        } else {
            match con.protocol {
                GroupProtocol::Classic => {
                    // `generationIfStable()`: only a STABLE member commits with its generation.
                    let cl = &con.classic;
                    if cl.state == ClientState::Stable && cl.generation >= 0 {
                        (cl.member_id.clone(), cl.generation, None)
                    } else if cl.state != ClientState::Unjoined {
                        (cl.member_id.clone(), cl.generation, Some("RebalanceInProgressException (the consumer is rebalancing)"))
                    } else {
                        (cl.member_id.clone(), cl.generation, Some("CommitFailedException (not part of an active group)"))
                    }
                }
                GroupProtocol::Consumer => {
                    let m = &con.modern;
                    if m.epoch > 0 {
                        (m.member_id.clone(), m.epoch, None)
                    } else {
                        (m.member_id.clone(), m.epoch, Some("CommitFailedException (no member epoch)"))
                    }
                }
            }
        };
        if let Some(error) = local_error {
            let (group, client) = (self.group_name(c), self.client(c));
            self.emit(Event::CommitFailed { group, client, kind: purpose.kind(), error });
            return None;
        }
        let id = self.fresh_id();
        let con = &mut self.consumers[c];
        con.app.commits.insert(id, purpose);
        let request = CommitRequest {
            c,
            inc: con.inc,
            id,
            member,
            instance: con.instance_id.clone(),
            generation,
            offsets,
            kind: purpose.kind(),
        };
        let (g, latency) = (con.group, con.latency);
        self.schedule(latency, Action::CommitArrive { g, request });
        Some(id)
    }

    /// `validateOffsetCommit` of the group's current type, then the offsets are stored.
    pub(super) fn serve_commit(&mut self, g: usize, r: CommitRequest) {
        let error = self.validate_commit(g, &r);
        let (group, client) = (self.groups[g].name.clone(), self.consumers[r.c].name.clone());
        match error {
            None => {
                let mut shown = Vec::with_capacity(r.offsets.len());
                for (pid, offset, epoch) in &r.offsets {
                    self.groups[g].committed.insert(*pid, (*offset, *epoch));
                    shown.push((self.part(*pid), *offset));
                }
                shown.stable_sort_by_key(|(p, _)| p.pid);
                self.emit(Event::Committed { group, client, kind: r.kind, offsets: shown, generation: r.generation });
            }
            Some(error) => {
                self.emit(Event::CommitFailed { group, client, kind: r.kind, error });
            }
        }
        let latency = self.consumers[r.c].latency;
        self.schedule(latency, Action::CommitResponse { c: r.c, inc: r.inc, id: r.id, error });
    }

    fn validate_commit(&self, g: usize, r: &CommitRequest) -> Option<&'static str> {
        let group = &self.groups[g];
        match group.protocol {
            GroupProtocol::Classic => {
                let cg = &group.classic;
                if r.generation < 0 && cg.state == ClassicState::Empty {
                    return None;
                }
                if r.generation >= 0 || !r.member.is_empty() || r.instance.is_some() {
                    if let Some(e) = cg.validate_member(&r.member, r.instance.as_deref()) {
                        return Some(e);
                    }
                    if r.generation != cg.generation {
                        return Some("ILLEGAL_GENERATION");
                    }
                } else if cg.state != ClassicState::Empty {
                    return Some("UNKNOWN_MEMBER_ID");
                }
                (cg.state == ClassicState::CompletingRebalance).then_some("REBALANCE_IN_PROGRESS")
            }
            GroupProtocol::Consumer => {
                let mg = &group.modern;
                if r.generation < 0 && mg.members.is_empty() {
                    return None;
                }
                match mg.member(&r.member) {
                    None => Some("UNKNOWN_MEMBER_ID"),
                    Some(m) if m.assignment.member_epoch != r.generation => Some("STALE_MEMBER_EPOCH"),
                    Some(_) => None,
                }
            }
        }
    }

    /// The commit's answer: errors that mean the generation moved on reset it; then whatever
    /// waited for the commit continues.
    pub(super) fn commit_response(&mut self, c: usize, inc: u32, id: u64, error: Option<&'static str>) {
        if !self.alive(c, inc) {
            return;
        }
        let Some(purpose) = self.consumers[c].app.commits.remove(&id) else { return };
        if let Some(e) = error {
            if self.consumers[c].group_managed() {
                match self.consumers[c].protocol {
                    GroupProtocol::Classic => self.classic_commit_error(c, e),
                    GroupProtocol::Consumer => self.cg_commit_error(c, e),
                }
            }
        }
        match purpose {
            CommitPurpose::PrepareJoin => {
                // `onJoinPrepare` picks the answer up in the application's next `poll()`.
                self.consumers[c].classic.prepare_commit = None;
                self.wake_if_waiting(c);
            }
            CommitPurpose::Reconcile => self.cg_reconcile_commit_done(c, id),
            CommitPurpose::AppSync => {
                if self.consumers[c].app.awaiting_commit == Some(id) {
                    self.consumers[c].app.awaiting_commit = None;
                    self.wake_now(c);
                }
            }
            CommitPurpose::Auto | CommitPurpose::AppAsync | CommitPurpose::Close => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_scenario;

    fn world(protocol: &str) -> World {
        let text = format!(
            r#"{{"format": "mqviz-scenario/1", "broker": "kafka", "until": 30000,
            "brokers": [{{"name": "b0"}}], "topics": [{{"name": "t", "partitions": 2}}],
            "groups": [{{"name": "g", "protocol": "{protocol}", "consumers": [
                {{"clientId": "a", "subscribe": ["t"]}}, {{"clientId": "b", "subscribe": ["t"], "startAt": 12000}}]}}]}}"#
        );
        let mut w = World::new(parse_scenario(&text).unwrap());
        w.run_until(10_000);
        w
    }

    fn commit_from(w: &mut World, generation: i32) -> Option<&'static str> {
        let con = &w.consumers[0];
        let member = match con.protocol {
            GroupProtocol::Classic => con.classic.member_id.clone(),
            GroupProtocol::Consumer => con.modern.member_id.clone(),
        };
        let request = CommitRequest {
            c: 0,
            inc: con.inc,
            id: 0,
            member,
            instance: None,
            generation,
            offsets: vec![(0, 1, Some(0))],
            kind: CommitKind::Sync,
        };
        w.validate_commit(0, &request)
    }

    #[test]
    fn a_commit_from_a_past_generation_is_refused() {
        let mut w = world("classic");
        let generation = w.consumers[0].classic.generation;
        assert_eq!(commit_from(&mut w, generation), None);
        w.run_until(25_000);
        assert_eq!(w.groups[0].classic.generation, generation + 1, "b joined");
        assert_eq!(commit_from(&mut w, generation), Some("ILLEGAL_GENERATION"));
        assert_eq!(commit_from(&mut w, -1), Some("ILLEGAL_GENERATION"), "a member id with no generation");
    }

    #[test]
    fn a_commit_with_a_stale_member_epoch_is_refused() {
        let mut w = world("consumer");
        let epoch = w.consumers[0].modern.epoch;
        assert_eq!(commit_from(&mut w, epoch), None);
        w.run_until(25_000);
        assert!(w.consumers[0].modern.epoch > epoch, "b's arrival moved a to a new epoch");
        assert_eq!(commit_from(&mut w, epoch), Some("STALE_MEMBER_EPOCH"));
    }
}
