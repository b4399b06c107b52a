//! Kafka behind the broker-neutral seam (`mqviz_model::Simulation`): commands arrive as timeline
//! JSON and are checked against the current state; partitions become logs with their high
//! watermark, the groups' committed offsets and each consumer's position; groups and consumers
//! show their protocol state (generation or epochs, member ids, FetchStates).

use mqviz_engine::sort::CollectSorted;
use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::events::Event;
use super::report::warnings;
use super::scenario::{check_consumer_config, parse_action, Action, GroupProtocol, PartitionRef, SubscriptionSpec, TimedAction};
use super::world::coordinator_kip848::ModernState;
use super::world::member_classic::ClientState;
use super::world::{Life, World};
use crate::classic_group::{rebalance_protocol, RebalanceProtocol};
use crate::fetch_state::FetchState;
use mqviz_engine::json_path::PathError;
use mqviz_engine::scenario::duplicate_consumer_name;
use mqviz_engine::{EventId, Millis};
use mqviz_model::{
    BrokerKind, BrokerView, Cell, ConsumerIx, ConsumerState, ConsumerView, DropKind, Fate, GroupView, MarkKind, MessageView,
    MsgId, OffsetMark, PartitionId, PartitionView, ProducerView, Simulation, StateLine, TopicView, Totals, Trace, View,
};

impl World {
    fn partition_count(&self, topic: &str) -> Option<u32> {
        self.topic_index(topic).map(|t| self.topics[t].pids.len() as u32)
    }

    fn check_partition(&self, r: &PartitionRef, name: &str, out: &mut Vec<PathError>) {
        match self.partition_count(&r.topic) {
            None => out.push(err(format!("{name}: unknown topic {:?}", r.topic))),
            Some(n) if r.partition >= n => {
                out.push(err(format!("{name}: {}", crate::scenario::beyond_the_topic(r, &r.topic, n))))
            }
            _ => {}
        }
    }

    fn check_subscription(&self, sub: &SubscriptionSpec, name: &str, out: &mut Vec<PathError>) {
        match sub {
            SubscriptionSpec::Topics(topics) => {
                for t in topics {
                    if self.topic_index(t).is_none() {
                        out.push(err(format!("{name}: unknown topic {t:?}")));
                    }
                }
            }
            SubscriptionSpec::Pattern(_) => {}
            SubscriptionSpec::Assign(parts) => parts.iter().for_each(|r| self.check_partition(r, name, out)),
        }
    }

    /// Problems with a command's references in the current state (its shape was checked by the
    /// parser). Empty when it can be entered.
    pub fn check_command(&self, cmd: &TimedAction) -> Vec<PathError> {
        let mut out = Vec::new();
        let name = cmd.action.name();
        if let Some(client) = cmd.action.consumer_name() {
            if self.find_consumer(client).is_none() {
                out.push(err(format!("{name}: unknown consumer {client:?}")));
            }
        }
        let group_protocol =
            |g: &str| self.consumers.iter().find(|c| self.groups[c.group].name.as_ref() == g).map(|c| c.protocol);
        match &cmd.action {
            Action::AddConsumer { group, consumer } => match self.find_group(group) {
                None => out.push(err(format!("addConsumer: unknown group {group:?}"))),
                Some(g) => {
                    if self.find_consumer(&consumer.name).is_some() {
                        out.push(err(format!("addConsumer: {}", duplicate_consumer_name(&consumer.name))));
                    }
                    if let Some(sub) = &consumer.subscription {
                        self.check_subscription(sub, name, &mut out);
                    }
                    let mut spec = self.scenario.groups[g].clone();
                    spec.protocol = group_protocol(group).unwrap_or(spec.protocol);
                    out.extend(check_consumer_config(&spec, consumer, "$.consumer"));
                }
            },
            Action::Subscribe { subscription, .. } => self.check_subscription(subscription, name, &mut out),
            Action::SetAssignors { group, .. } | Action::SetRemoteAssignor { group, .. } | Action::SetProtocol { group, .. } => {
                match self.find_group(group) {
                    None => out.push(err(format!("{name}: unknown group {group:?}"))),
                    Some(g) => {
                        let protocol = group_protocol(group).unwrap_or(self.scenario.groups[g].protocol);
                        let wrong = match &cmd.action {
                            Action::SetAssignors { .. } => protocol != GroupProtocol::Classic,
                            Action::SetRemoteAssignor { .. } => protocol != GroupProtocol::Consumer,
                            _ => false,
                        };
                        if wrong {
                            out.push(err(format!("{name}: group {group:?} runs protocol {}", protocol.name())));
                        }
                    }
                }
            }
            Action::Pause { partitions, .. } | Action::Resume { partitions, .. } => {
                partitions.iter().for_each(|r| self.check_partition(r, name, &mut out))
            }
            Action::Seek { partition, .. } => self.check_partition(partition, name, &mut out),
            Action::Produce { producer, send } => {
                if !self.producers.iter().any(|p| &*p.id == producer) {
                    out.push(err(format!("produce: unknown producer {producer:?}")));
                }
                match (self.partition_count(&send.topic), send.partition) {
                    (None, _) => out.push(err(format!("produce: unknown topic {:?}", send.topic))),
                    (Some(n), Some(p)) if p >= n => {
                        out.push(err(format!("produce: {}", crate::scenario::beyond_the_topic(p, &send.topic, n))))
                    }
                    _ => {}
                }
            }
            Action::LeaderChange { partition, leader } | Action::Truncate { partition, leader, .. } => {
                self.check_partition(partition, name, &mut out);
                if let Some(l) = leader {
                    if !self.brokers.iter().any(|b| &*b.name == l) {
                        out.push(err(format!("{name}: unknown broker {l:?}")));
                    }
                }
            }
            Action::AddPartitions { topic, partitions } => match self.partition_count(topic) {
                None => out.push(err(format!("addPartitions: unknown topic {topic:?}"))),
                Some(n) if *partitions <= n => {
                    out.push(err(format!("addPartitions: {topic} already has {n} partitions; partition counts only grow")))
                }
                _ => {}
            },
            Action::CreateTopic { topic } => {
                if self.topic_index(&topic.name).is_some() {
                    out.push(err(format!("createTopic: topic {:?} already exists", topic.name)));
                }
                if !topic.leaders.is_empty() && topic.leaders.len() != topic.partitions as usize {
                    out.push(err(format!("createTopic: {} leaders for {} partitions", topic.leaders.len(), topic.partitions)));
                }
                for l in &topic.leaders {
                    if !self.brokers.iter().any(|b| &*b.name == l) {
                        out.push(err(format!("createTopic: unknown broker {l:?}")));
                    }
                }
            }
            Action::StartConsumer { .. }
            | Action::StopConsumer { .. }
            | Action::CrashConsumer { .. }
            | Action::Unsubscribe { .. } => {}
        }
        out
    }

    fn consumer_state(&self, c: usize) -> ConsumerState {
        match self.consumers[c].life {
            Life::NotStarted => ConsumerState::NotStarted,
            Life::Running => ConsumerState::Running,
            Life::Stopped | Life::Failed => ConsumerState::Stopped,
            Life::Crashed => ConsumerState::Crashed,
        }
    }

    /// Who should own an unowned partition, or why nobody does (among one group's consumers,
    /// or all of them).
    pub fn unowned_reason(&self, pid: u32, group: Option<usize>) -> Option<String> {
        let tp = self.tp_of(pid);
        let wanting: Vec<usize> = (0..self.consumers.len())
            .filter(|&c| group.is_none_or(|g| self.consumers[c].group == g))
            .filter(|&c| self.consumers[c].running() && self.consumers[c].subs.subscription().contains(&tp.topic))
            .collect();
        if wanting.is_empty() {
            return None;
        }
        for &c in &wanting {
            let g = &self.groups[self.consumers[c].group];
            match self.consumers[c].protocol {
                GroupProtocol::Classic => {
                    let state = g.classic.state;
                    if matches!(
                        state,
                        crate::world::ClassicState::PreparingRebalance | crate::world::ClassicState::CompletingRebalance
                    ) {
                        return Some(format!("{} is rebalancing ({}): nobody fetches it until SyncGroup", g.name, state.name()));
                    }
                    if g.classic.members.values().any(|m| m.assignment.contains(&tp)) {
                        let owner = g.classic.members.values().find(|m| m.assignment.contains(&tp)).map(|m| m.name.clone());
                        return Some(format!(
                            "assigned to {} in generation {}, not fetched yet",
                            owner.unwrap_or_default(),
                            g.classic.generation
                        ));
                    }
                    if rebalance_protocol(&self.consumers[c].config.assignors) == RebalanceProtocol::Cooperative {
                        return Some("COOPERATIVE: revoked this round, assigned in the next rebalance".into());
                    }
                }
                GroupProtocol::Consumer => {
                    let mg = &g.modern;
                    let target =
                        mg.target.members.iter().find(|(_, p)| p.get(&tp.topic).is_some_and(|s| s.contains(&tp.partition)));
                    if let Some((member, _)) = target {
                        let holder = mg.members.iter().find(|m| {
                            &*m.id != member
                                && (m.assignment.assigned.get(&tp.topic).is_some_and(|s| s.contains(&tp.partition))
                                    || m.assignment.pending_revocation.get(&tp.topic).is_some_and(|s| s.contains(&tp.partition)))
                        });
                        let new_owner = mg.member(member).map(|m| m.name.to_string()).unwrap_or_else(|| member.clone());
                        return Some(match holder {
                            Some(h) => format!("UNRELEASED: target of {new_owner}, waiting for {} to revoke it", h.name),
                            None => format!("target of {new_owner}, not reconciled yet"),
                        });
                    }
                }
            }
        }
        Some("no member of the group owns it".into())
    }

    fn topic_views(&self) -> Vec<TopicView> {
        let owners_of = |tp: &crate::assignor::TopicPartition| -> Vec<usize> {
            (0..self.consumers.len()).filter(|&c| self.consumers[c].running() && self.consumers[c].subs.is_assigned(tp)).collect()
        };
        self.topics
            .iter()
            .map(|t| {
                let partitions = t
                    .pids
                    .iter()
                    .map(|&pid| {
                        let p = &self.partitions[pid as usize];
                        let tp = self.tp_of(pid);
                        let owners = owners_of(&tp);
                        let mut marks =
                            vec![OffsetMark { kind: MarkKind::HighWatermark, offset: p.high_watermark(), label: "HW".into() }];
                        for g in &self.groups {
                            if let Some((o, _)) = g.committed.get(&pid) {
                                marks.push(OffsetMark { kind: MarkKind::Committed, offset: *o, label: g.name.to_string() });
                            }
                        }
                        let mut badge = None;
                        for &c in &owners {
                            if let Some(s) = self.consumers[c].subs.state(&tp) {
                                if let Some(pos) = s.position {
                                    marks.push(OffsetMark {
                                        kind: MarkKind::Position,
                                        offset: pos.offset.max(0) as u64,
                                        label: self.consumers[c].name.to_string(),
                                    });
                                }
                                badge.get_or_insert_with(|| {
                                    let mut b = s.fetch_state.name().to_string();
                                    if s.paused {
                                        b.push_str(" · paused");
                                    }
                                    if s.pending_revocation {
                                        b.push_str(" · revoking");
                                    }
                                    b
                                });
                            }
                        }
                        let unowned_reason = if owners.is_empty() { self.unowned_reason(pid, None) } else { None };
                        PartitionView {
                            id: pid,
                            label: format!("p{}", p.partition),
                            broker: Some(p.leader),
                            log_start: p.log_start(),
                            log_end: p.log_end(),
                            marks,
                            owners: owners.into_iter().map(|c| c as ConsumerIx).collect(),
                            badge,
                            unowned_reason,
                        }
                    })
                    .collect();
                TopicView { name: t.name.to_string(), internal: false, partitions }
            })
            .collect()
    }

    fn group_lines(&self, g: usize) -> Vec<StateLine> {
        let grp = &self.groups[g];
        let mut lines = Vec::new();
        let members: Vec<usize> = (0..self.consumers.len()).filter(|&c| self.consumers[c].group == g).collect();
        match grp.protocol {
            GroupProtocol::Classic => {
                let cg = &grp.classic;
                let rebalance = members
                    .first()
                    .map(|&c| match rebalance_protocol(&self.consumers[c].config.assignors) {
                        RebalanceProtocol::Eager => "EAGER",
                        RebalanceProtocol::Cooperative => "COOPERATIVE",
                    })
                    .unwrap_or("EAGER");
                let changed = cg.changed_at;
                lines.push(StateLine {
                    text: format!(
                        "classic · {} · generation {} · {} · {rebalance}",
                        cg.state.name(),
                        cg.generation,
                        cg.protocol_name.as_deref().unwrap_or("-")
                    ),
                    changed_at: changed,
                    alert: matches!(
                        cg.state,
                        crate::world::ClassicState::PreparingRebalance | crate::world::ClassicState::CompletingRebalance
                    ),
                });
                if let Some(leader) = &cg.leader {
                    let client = cg.members.get(leader).map(|m| m.name.to_string()).unwrap_or_default();
                    lines.push(StateLine::plain(format!("leader {client} ({leader}) · {} members", cg.members.len())));
                }
            }
            GroupProtocol::Consumer => {
                let mg = &grp.modern;
                let state = mg.state();
                lines.push(StateLine {
                    text: format!(
                        "consumer · {} · group epoch {} · target epoch {} · {}",
                        state.name(),
                        mg.group_epoch,
                        mg.target.epoch,
                        mg.assignor.map(|a| a.name()).unwrap_or("uniform")
                    ),
                    changed_at: None,
                    alert: matches!(state, ModernState::Assigning | ModernState::Reconciling),
                });
                for m in &mg.members {
                    let pending = m.assignment.pending_revocation.values().map(|s| s.len()).sum::<usize>();
                    lines.push(StateLine {
                        text: format!(
                            "{} epoch {} {}{}",
                            m.name,
                            m.assignment.member_epoch,
                            m.assignment.state.name(),
                            if pending > 0 { format!(" ({pending} to revoke)") } else { String::new() }
                        ),
                        changed_at: None,
                        alert: m.assignment.state != crate::reconciliation::MemberState::Stable,
                    });
                }
            }
        }
        lines
    }

    fn consumer_lines(&self, c: usize) -> Vec<StateLine> {
        let con = &self.consumers[c];
        let mut lines = Vec::new();
        if let Some(e) = &con.failure {
            lines.push(StateLine { text: e.clone(), changed_at: None, alert: true });
        }
        if con.name != con.client_id {
            // Kafka treats client.id as a label: instances sharing it are still separate members.
            lines.push(StateLine { text: format!("client.id {}", con.client_id), changed_at: None, alert: false });
        }
        if con.running() && con.group_managed() {
            match con.protocol {
                GroupProtocol::Classic => {
                    let cl = &con.classic;
                    let member = if cl.member_id.is_empty() { "(no member id)".to_string() } else { cl.member_id.to_string() };
                    lines.push(StateLine {
                        text: format!(
                            "{} · generation {} · {member}{}",
                            cl.state.name(),
                            cl.generation,
                            if cl.is_leader { " · leader" } else { "" }
                        ),
                        changed_at: None,
                        alert: cl.state != ClientState::Stable,
                    });
                }
                GroupProtocol::Consumer => {
                    let m = &con.modern;
                    lines.push(StateLine {
                        text: format!("{} · member epoch {} · {}", m.state.name(), m.epoch, m.member_id),
                        changed_at: None,
                        alert: m.state != crate::world::member_kip848::CgClientState::Stable,
                    });
                }
            }
        }
        if con.running() {
            for tp in con.subs.assigned_partitions() {
                let Some(s) = con.subs.state(tp) else { continue };
                let pos = s.position.map(|p| format!(" @{}", p.offset)).unwrap_or_default();
                let lag = con
                    .subs
                    .partition_lag(tp, con.config.isolation_level)
                    .ok()
                    .flatten()
                    .map(|l| format!(" lag {l}"))
                    .unwrap_or_default();
                lines.push(StateLine {
                    text: format!(
                        "{}-{} {}{pos}{lag}{}",
                        tp.topic,
                        tp.partition,
                        s.fetch_state.name(),
                        if s.paused { " paused" } else { "" }
                    ),
                    changed_at: None,
                    alert: s.fetch_state != FetchState::Fetching,
                });
            }
        }
        lines
    }

    /// The broker-neutral picture of the world now.
    pub fn view(&self) -> View {
        let brokers = (0..self.brokers.len())
            .map(|b| {
                let leads = self.partitions.iter().filter(|p| p.leader == b).count();
                let mut lines = vec![StateLine::plain(format!("leads {leads} partitions"))];
                let coordinated: Vec<&str> = self.groups.iter().filter(|g| g.coordinator == b).map(|g| &*g.name).collect();
                if !coordinated.is_empty() {
                    lines.push(StateLine::plain(format!("coordinator of {}", coordinated.join(", "))));
                }
                BrokerView { name: self.brokers[b].name.to_string(), lines }
            })
            .collect();
        let producers = self.producers.iter().map(|p| ProducerView { name: p.id.to_string(), sent: p.sent }).collect();
        let groups = (0..self.groups.len())
            .map(|g| GroupView { name: self.groups[g].name.to_string(), lines: self.group_lines(g) })
            .collect();
        let consumers = (0..self.consumers.len())
            .map(|c| {
                let con = &self.consumers[c];
                ConsumerView {
                    name: con.name.to_string(),
                    group: self.groups[con.group].name.to_string(),
                    state: self.consumer_state(c),
                    subscription: con.subscription.as_ref().map(|s| s.describe()).unwrap_or_default(),
                    mismatch: None,
                    lines: self.consumer_lines(c),
                    consumed: con.consumed,
                }
            })
            .collect();
        View {
            labels: self.key_labels.iter().map(|k| k.to_string()).collect(),
            brokers,
            topics: self.topic_views(),
            producers,
            groups,
            consumers,
        }
    }

    fn trace_one(&self, kind: &Event, consumers: &BTreeMap<&str, ConsumerIx>, out: &mut dyn FnMut(Trace)) {
        let cix = |client: &str| consumers.get(client).copied();
        let key = |m: MsgId| self.messages.get(m as usize).map_or(mqviz_model::NO_KEY, |x| x.key_colour);
        match kind {
            Event::Appended { producer, part, base, count, first_msg, .. } => {
                let p = self.producers.iter().position(|x| x.id == *producer).map(|p| p as u32);
                for k in 0..*count {
                    let msg = first_msg + k;
                    out(Trace::Stored { msg, key: key(msg), partition: part.pid, offset: base + k as u64, producer: p });
                }
            }
            Event::Polled { client, part, msgs, .. } => {
                if let Some(consumer) = cix(client) {
                    for &msg in msgs.iter() {
                        out(Trace::Delivered { msg, key: key(msg), partition: part.pid, consumer });
                    }
                }
            }
            Event::Skipped { client, part, msgs, .. } => {
                for &msg in msgs.iter() {
                    out(Trace::Dropped { msg, key: key(msg), partition: part.pid, consumer: cix(client), kind: DropKind::Other });
                }
            }
            Event::Truncated { part, lost, .. } => {
                for &msg in lost.iter() {
                    out(Trace::Dropped { msg, key: key(msg), partition: part.pid, consumer: None, kind: DropKind::Other });
                }
            }
            Event::Committed { group, offsets, .. } => {
                if let Some(g) = self.groups.iter().position(|x| x.name == *group) {
                    for (p, o) in offsets {
                        out(Trace::Committed { partition: p.pid, group: g as u32, offset: *o });
                    }
                }
            }
            // A snapshot's owners at t=0 are where the run starts, not a rebalance.
            Event::Assigned { restored: true, .. } => {}
            Event::Assigned { client, .. } | Event::Reconciled { client, .. } | Event::Revoked { client, .. } => {
                if let Some(consumer) = cix(client) {
                    out(Trace::Reassigned { consumer });
                }
            }
            Event::Heartbeat { client, group, .. } | Event::CgHeartbeat { client, group, .. } => {
                if let (Some(consumer), Some(g)) = (cix(client), self.groups.iter().find(|x| x.name == *group)) {
                    out(Trace::Heartbeat { consumer, broker: g.coordinator as u32 });
                }
            }
            Event::ConsumerStarted { client, .. } => {
                if let Some(consumer) = cix(client) {
                    out(Trace::Lifecycle { consumer, state: ConsumerState::Running });
                }
            }
            Event::ConsumerClosed { client, .. } => {
                if let Some(consumer) = cix(client) {
                    out(Trace::Lifecycle { consumer, state: ConsumerState::Stopped });
                }
            }
            Event::ConsumerCrashed { client } => {
                if let Some(consumer) = cix(client) {
                    out(Trace::Lifecycle { consumer, state: ConsumerState::Crashed });
                }
            }
            _ => {}
        }
    }

    fn key_label(&self, m: &crate::world::Message) -> Option<Arc<str>> {
        if let Some(k) = self.key_labels.get(m.key_colour as usize) {
            return Some(k.clone());
        }
        self.message_key(m).map(Arc::from)
    }
}

fn err(message: String) -> PathError {
    PathError { path: "$".into(), message }
}

impl Simulation for World {
    fn kind(&self) -> BrokerKind {
        BrokerKind::Kafka
    }
    fn name(&self) -> &str {
        &self.scenario.name
    }
    fn description(&self) -> &str {
        &self.scenario.description
    }
    fn seed(&self) -> u64 {
        self.scenario.seed
    }
    fn now(&self) -> Millis {
        self.now
    }
    fn until(&self) -> Millis {
        self.scenario.until
    }
    fn next_event_time(&self) -> Option<Millis> {
        World::next_event_time(self)
    }
    fn events_run(&self) -> u64 {
        World::events_run(self)
    }
    fn step_until(&mut self, limit: Millis) -> bool {
        World::step_until(self, limit)
    }
    fn run_until(&mut self, t: Millis) {
        World::run_until(self, t)
    }
    fn enter_command(&mut self, command: &Value) -> Result<(), Vec<PathError>> {
        let cmd = parse_action(command, "$")?;
        let problems = self.check_command(&cmd);
        if !problems.is_empty() {
            return Err(problems);
        }
        self.handle_command(cmd);
        Ok(())
    }
    fn memory_bytes(&self) -> u64 {
        World::memory_bytes(self)
    }
    fn log_len(&self) -> usize {
        self.log.len()
    }
    fn log_time(&self, i: usize) -> Millis {
        self.log.get(EventId(i as u32)).map(|e| e.at).unwrap_or(0)
    }
    fn log_cause(&self, i: usize) -> Option<usize> {
        self.log.get(EventId(i as u32)).and_then(|e| e.cause).map(|c| c.0 as usize)
    }
    fn log_text(&self, i: usize) -> String {
        self.log.get(EventId(i as u32)).map(|e| e.kind.to_string()).unwrap_or_default()
    }
    fn log_kind(&self, i: usize) -> &'static str {
        self.log.get(EventId(i as u32)).map(|e| e.kind.kind()).unwrap_or("")
    }
    fn log_kinds(&self) -> &'static [&'static str] {
        &[
            "command",
            "lifecycle",
            "metadata",
            "partition",
            "produce",
            "heartbeat",
            "rebalance",
            "fetch",
            "fetch-state",
            "consume",
            "commit",
        ]
    }
    fn log_message(&self, i: usize) -> Option<MsgId> {
        self.log.get(EventId(i as u32)).and_then(|e| e.kind.message())
    }
    fn trace(&self, from: usize, to: usize, out: &mut dyn FnMut(usize, Trace)) {
        let consumers: BTreeMap<&str, ConsumerIx> =
            self.consumers.iter().enumerate().map(|(i, c)| (&*c.name, i as ConsumerIx)).collect_map();
        let entries = self.log.entries();
        let to = to.min(entries.len());
        for (i, e) in entries.iter().enumerate().take(to).skip(from) {
            self.trace_one(&e.kind, &consumers, &mut |t| out(i, t));
        }
    }
    fn digest_within(&self, max_lines: usize) -> Option<u64> {
        self.log.digest_within(max_lines)
    }
    fn view(&self) -> View {
        World::view(self)
    }
    fn partition_noun(&self) -> &'static str {
        "partition"
    }
    fn totals(&self) -> Totals {
        Totals { produced: self.producers.iter().map(|p| p.sent).sum(), ..super::report::totals(self) }
    }
    fn cells(&self, partition: PartitionId, from: u64, to: u64) -> Vec<Cell> {
        let Some(p) = self.partitions.get(partition as usize) else { return Vec::new() };
        let to = to.min(p.log_end());
        (from..to)
            .filter_map(|o| {
                let r = p.record(o)?;
                let m = self.messages.get(r.msg as usize)?;
                let delivered = self.max_deliveries(r.msg);
                Some(Cell {
                    offset: o,
                    msg: r.msg,
                    label: self.key_label(m),
                    key: m.key_colour,
                    fate: self.fates.get(r.msg as usize).copied().unwrap_or(Fate::Pending),
                    note: (delivered > 1).then_some("delivered more than once to a group"),
                })
            })
            .collect()
    }
    fn message(&self, msg: MsgId) -> Option<MessageView> {
        let m = self.messages.get(msg as usize)?;
        let p = &self.partitions[m.pid as usize];
        let still_there = p.record(m.offset).is_some_and(|r| r.msg == msg);
        let key = self.message_key(m);
        let mut properties = vec![
            ("partition choice".to_string(), self.message_choice(m).to_string()),
            ("leader epoch".to_string(), m.epoch.to_string()),
            ("deliveries (most by one group)".to_string(), self.max_deliveries(msg).to_string()),
        ];
        if let Some(k) = &key {
            properties.insert(0, ("key".to_string(), k.clone()));
        }
        if !still_there {
            properties.push(("truncated".to_string(), "removed by an unclean leader election".to_string()));
        }
        Some(MessageView {
            msg,
            topic: self.topics[p.topic].name.to_string(),
            partition: Some(m.pid),
            offset: Some(m.offset),
            label: key,
            body: self.message_value(m),
            properties,
            producer: self.producers.get(m.producer as usize).map(|x| x.id.to_string()).unwrap_or_default(),
            born_at: m.born_at,
            fate: self.fates.get(msg as usize).copied().unwrap_or(Fate::Pending),
        })
    }
    fn provenance(&self, msg: MsgId) -> Vec<usize> {
        self.msg_events.iter().filter(|(m, _)| *m == msg).map(|(_, e)| e.0 as usize).collect()
    }
    fn variants(&self, scenario: &Value) -> Vec<(String, Value)> {
        super::variants::variants(scenario)
    }
    fn setting(&self, scenario: &Value) -> String {
        super::variants::setting(scenario)
    }
    fn warnings(&self) -> Vec<(String, String)> {
        warnings(self)
    }
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    fn report(&self) -> Value {
        super::report::report_json(self)
    }
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    fn report_text(&self) -> String {
        super::report::report_text(self)
    }
    fn clone_box(&self) -> Box<dyn Simulation> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
