//! Pulsar behind the broker-neutral seam (`mqviz_model::Simulation`): commands arrive as timeline
//! JSON and are checked against the current state, the log is read by index, and partitions,
//! segments, subscriptions and consumers are translated into the neutral `View`.

use mqviz_engine::sort::StableSort;
use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::events::Event;
use super::report::warnings;
use super::scalable::{is_assignable, SegmentLayout};
use super::scenario::{ack_problems, parse_action, Action, ConsumerKind, TimedAction};
use super::subscription::KeySharedMode;
use super::world::{ClientState, Dispatcher, Partition, TopicRole, World};
use mqviz_engine::json_path::PathError;
use mqviz_engine::{EventId, Millis};
use mqviz_model::{
    BrokerKind, BrokerView, Cell, ConsumerIx, ConsumerState, ConsumerView, DropKind, Fate, GroupView, MarkKind, MessageView,
    MsgId, OffsetMark, PartitionId, PartitionView, ProducerView, Simulation, StateLine, TopicView, Totals, Trace, View, NO_KEY,
};

fn err(path: &str, message: String) -> PathError {
    PathError { path: path.to_string(), message }
}

/// How bad a fate is, for the cell of a batch entry (the worst of its messages shows).
fn severity(f: Fate) -> u8 {
    match f {
        Fate::DeadLettered => 0,
        Fate::Retrying => 1,
        Fate::Pending => 2,
        Fate::Skipped => 3,
        Fate::Consumed => 4,
    }
}

impl World {
    /// Problems with a command in the current state (its shape was checked by the parser), each
    /// with the JSON path of the offending field. Empty when it can be entered.
    pub fn check_command(&self, cmd: &TimedAction) -> Vec<PathError> {
        let mut out = Vec::new();
        let name = cmd.action.name();
        let running = |c: &str| self.consumer_index(c).map(|i| self.consumers[i].running());
        match &cmd.action {
            Action::AddConsumer { consumer } => {
                if self.consumer_index(&consumer.name).is_some() {
                    out.push(err("$.consumer.name", format!("addConsumer: duplicate consumer {:?}", consumer.name)));
                }
                match self.topic_index(&consumer.topic) {
                    None => out.push(err("$.consumer.topic", format!("addConsumer: unknown topic {:?}", consumer.topic))),
                    Some(t) => {
                        let scalable = self.topics[t].scalable.is_some();
                        let kind_fits = matches!(consumer.kind, ConsumerKind::Scalable(_)) == scalable;
                        if !kind_fits {
                            let want = if scalable { "consumerType QUEUE or STREAM" } else { "subscriptionType" };
                            out.push(err("$.consumer", format!("addConsumer: a consumer of {:?} needs {want}", consumer.topic)));
                        }
                        out.extend(self.sticky_conflicts(t, consumer));
                    }
                }
            }
            Action::StartConsumer { consumer } => match running(consumer) {
                None => out.push(err("$.consumer", format!("{name}: unknown consumer {consumer:?}"))),
                Some(true) => out.push(err("$.consumer", format!("{name}: {consumer} is already running"))),
                Some(false) => {}
            },
            Action::CloseConsumer { consumer }
            | Action::CrashConsumer { consumer }
            | Action::RedeliverUnacknowledged { consumer } => match running(consumer) {
                None => out.push(err("$.consumer", format!("{name}: unknown consumer {consumer:?}"))),
                Some(false) => out.push(err("$.consumer", format!("{name}: {consumer} is not running"))),
                Some(true) => {}
            },
            Action::SetAck { consumer, ack } => match self.consumer_index(consumer) {
                None => out.push(err("$.consumer", format!("setAck: unknown consumer {consumer:?}"))),
                Some(c) => out.extend(ack_problems(&self.consumers[c].spec, ack, "$.ack")),
            },
            Action::Produce { producer, .. } => {
                if !self.producers.iter().any(|p| *p.name == **producer) {
                    out.push(err("$.producer", format!("produce: unknown producer {producer:?}")));
                }
            }
            Action::SplitSegment { topic, .. } | Action::MergeSegments { topic, .. } | Action::PruneSegment { topic, .. } => {
                match self.topic_index(topic).and_then(|t| self.topics[t].scalable.as_ref()) {
                    None if self.topic_index(topic).is_none() => {
                        out.push(err("$.topic", format!("{name}: unknown topic {topic:?}")))
                    }
                    None => out.push(err("$.topic", format!("{name}: {topic:?} is not a scalable topic"))),
                    Some(s) => {
                        let (result, field) = match &cmd.action {
                            Action::SplitSegment { segment, .. } => (s.layout.split(*segment, 0), "$.segment"),
                            Action::MergeSegments { segments: (a, b), .. } => (s.layout.merge(*a, *b, 0), "$.segments"),
                            Action::PruneSegment { segment, .. } => (s.layout.prune(*segment), "$.segment"),
                            _ => (Ok(s.layout.clone()), "$"),
                        };
                        if let Err(e) = result {
                            out.push(err(field, format!("{name}: {e}")));
                        }
                    }
                }
            }
        }
        out
    }

    /// STICKY ranges of a new consumer that overlap ranges of consumers connected to the same subscription.
    fn sticky_conflicts(&self, t: usize, consumer: &super::scenario::ConsumerSpec) -> Vec<PathError> {
        let Some(ks) = consumer.key_shared().filter(|k| k.mode == KeySharedMode::Sticky) else { return Vec::new() };
        let mut out = Vec::new();
        for &p in &self.topics[t].partitions {
            let part = &self.partitions[p as usize];
            let Some(s) = part.subscription(&consumer.subscription) else { continue };
            let Some(Dispatcher::KeyShared(d)) = &part.subscriptions[s].dispatcher else { continue };
            for a in d.selector.assignments() {
                for (k, &(start, end)) in ks.ranges.iter().enumerate() {
                    if a.start.max(start) <= a.end.min(end) {
                        let owner = self.member_name(part, s, a.consumer).unwrap_or_else(|| a.consumer.to_string());
                        out.push(err(
                            &format!("$.consumer.keySharedPolicy.ranges[{k}]"),
                            format!(
                                "ConsumerAssignException: Range conflict with consumer {owner} (it owns [{},{}])",
                                a.start, a.end
                            ),
                        ));
                    }
                }
            }
            break;
        }
        out
    }

    fn member_name(&self, part: &Partition, s: usize, consumer_id: u64) -> Option<String> {
        part.subscriptions[s].members.get(&consumer_id).map(|m| self.consumers[m.consumer as usize].name.to_string())
    }

    /// The label of `View::groups[g]`: the subscription name, qualified by its topic when the
    /// same name is used on several topics.
    pub fn group_label(&self, g: usize) -> String {
        let (t, sub) = &self.groups[g];
        if self.groups.iter().filter(|(_, s)| s == sub).count() > 1 {
            format!("{sub} ({})", self.topics[*t as usize].written)
        } else {
            sub.to_string()
        }
    }

    /// The neutral state of consumer `c` (one wording everywhere: canvas, panels, editor).
    pub fn consumer_state(&self, c: usize) -> ConsumerState {
        match self.consumers[c].state {
            ClientState::NotStarted => ConsumerState::NotStarted,
            ClientState::Running => ConsumerState::Running,
            ClientState::Closed => ConsumerState::Stopped,
            ClientState::Crashed => ConsumerState::Crashed,
            ClientState::Failed => ConsumerState::StartFailed,
        }
    }

    /// Consumers (view indices) that read the partition now: the active one on Exclusive and
    /// Failover, every member on Shared and Key_Shared.
    fn partition_owners(&self, part: &Partition) -> Vec<ConsumerIx> {
        let mut owners = Vec::new();
        for sub in &part.subscriptions {
            match &sub.dispatcher {
                Some(Dispatcher::Single(d)) => {
                    if let Some(m) = d.active.and_then(|a| sub.members.get(&a)) {
                        owners.push(m.consumer);
                    }
                }
                Some(_) => owners.extend(sub.members.values().map(|m| m.consumer)),
                None => {}
            }
        }
        owners.stable_sort();
        owners.dedup();
        owners
    }

    /// A segment's badge (one short word: the canvas gives it the width of the bar) and, for a
    /// withheld child, the reason nobody reads it.
    fn segment_badge(&self, t: usize, part: &Partition, segment: u64) -> (Option<String>, Option<String>) {
        let Some(scalable) = self.topics[t].scalable.as_ref() else { return (None, None) };
        if part.deleted {
            return (Some("pruned".into()), None);
        }
        let Some(info) = scalable.layout.segment(segment) else { return (Some("pruned".into()), None) };
        if !info.is_active() {
            let drained = scalable.coordinators.values().any(|c| c.drain_state().drained.contains(&segment));
            return (Some(if drained { "sealed · drained" } else { "sealed" }.into()), None);
        }
        for sub in scalable.coordinators.keys() {
            if let Some(why) = self.withheld_reason(t, segment, sub) {
                return (Some("withheld".into()), Some(format!("withheld: {why} ({sub})")));
            }
        }
        (Some("active".into()), None)
    }

    /// Why active `segment` of topic `t` is held back from subscription `sub`'s STREAM consumers
    /// ("parent 0 not drained"), or `None` when the coordinator may assign it. One wording for
    /// the canvas and the UI's segment DAG.
    pub fn withheld_reason(&self, t: usize, segment: u64, sub: &str) -> Option<String> {
        let scalable = self.topics.get(t)?.scalable.as_ref()?;
        let drain = scalable.coordinators.get(sub)?.drain_state();
        let info = scalable.layout.segment(segment)?;
        if !info.is_active() || is_assignable(info, &scalable.layout, drain) {
            return None;
        }
        let parents = undrained_parents(&scalable.layout, info.parent_ids.as_slice(), &drain.drained);
        let noun = if parents.contains(',') { "parents" } else { "parent" };
        Some(format!("{noun} {parents} not drained"))
    }

    fn partition_view(&self, t: usize, p: u32) -> PartitionView {
        let part = &self.partitions[p as usize];
        let mut marks = Vec::new();
        for sub in &part.subscriptions {
            marks.push(OffsetMark {
                kind: MarkKind::Committed,
                offset: (sub.cursor.mark_delete() + 1).max(0) as u64,
                label: format!("{} markDelete", sub.name),
            });
            marks.push(OffsetMark {
                kind: MarkKind::Position,
                offset: sub.cursor.read_position().max(0) as u64,
                label: format!("{} read", sub.name),
            });
        }
        let owners = self.partition_owners(part);
        let (badge, mut unowned_reason) = match part.segment {
            Some(seg) => self.segment_badge(t, part, seg),
            None => (part.terminated.then(|| "terminated".to_string()), None),
        };
        if unowned_reason.is_none() && owners.is_empty() {
            if let Some(sub) = part.subscriptions.iter().find(|s| s.cursor.backlog() > 0) {
                unowned_reason = Some(format!("no consumer connected to {} (backlog {})", sub.name, sub.cursor.backlog()));
            }
        }
        // Short, so the canvas's label column shows it whole; the hash range is in the DAG.
        let label = match (part.segment, part.partition_index) {
            (Some(seg), _) => format!("seg {seg}"),
            (None, i) if i >= 0 => format!("p{i}"),
            (None, _) => part.name.rsplit('/').next().unwrap_or(&part.name).to_string(),
        };
        PartitionView {
            id: p,
            label,
            broker: Some(part.broker as usize),
            log_start: 0,
            log_end: part.entries.len() as u64,
            marks,
            owners,
            badge,
            unowned_reason,
        }
    }

    fn group_lines(&self, g: usize) -> Vec<StateLine> {
        let (t, sub_name) = &self.groups[g];
        let topic = &self.topics[*t as usize];
        let mut lines = Vec::new();
        let mut kind = None;
        let (mut backlog, mut holes, mut members, mut replay, mut draining) = (0u64, 0usize, 0usize, 0usize, 0usize);
        let mut cursor_line = None;
        for &p in &topic.partitions {
            let part = &self.partitions[p as usize];
            let Some(s) = part.subscription(sub_name) else { continue };
            let sub = &part.subscriptions[s];
            backlog += sub.cursor.backlog();
            holes += sub.cursor.individually_acked_ranges().len();
            members += sub.members.len();
            if sub.dispatcher.is_some() {
                kind = Some((sub.sub_type, sub.key_shared));
            }
            match &sub.dispatcher {
                Some(Dispatcher::Shared(sh)) => replay += sh.replay.len(),
                Some(Dispatcher::KeyShared(ks)) => {
                    replay += ks.replay.len();
                    draining += ks.draining.len();
                }
                _ => {}
            }
            if topic.partitions.len() == 1 {
                cursor_line = Some(format!(
                    "markDelete {} · {} ack holes · backlog {}",
                    part.position_id(sub.cursor.mark_delete()),
                    sub.cursor.individually_acked_ranges().len(),
                    sub.cursor.backlog()
                ));
            }
        }
        let head = match (kind, topic.scalable.as_ref().map(|s| s.coordinators.contains_key(sub_name))) {
            (_, Some(true)) => "STREAM".to_string(),
            (Some((super::subscription::SubscriptionType::KeyShared, ks)), _) => {
                format!("Key_Shared {}{}", ks.mode.name(), if ks.allow_out_of_order_delivery { " · out of order" } else { "" })
            }
            (Some((ty, _)), _) => ty.name().to_string(),
            (None, _) => "no consumers".to_string(),
        };
        lines.push(StateLine::plain(format!("{head} · {members} connected")));
        lines.push(StateLine::plain(cursor_line.unwrap_or_else(|| {
            format!(
                "backlog {backlog} over {} {} · {holes} ack holes",
                topic.partitions.len(),
                self.partition_noun_of(*t as usize)
            )
        })));
        if replay > 0 || draining > 0 {
            lines.push(StateLine::plain(format!("replay {replay} · draining hashes {draining}")));
        }
        if let Some(c) = topic.scalable.as_ref().and_then(|s| s.coordinators.get(sub_name)) {
            let drained: Vec<String> = c.drain_state().drained.iter().map(u64::to_string).collect();
            let poll = c.scheduled_poll().map(|(_, at)| format!("next drain poll at {at} ms")).unwrap_or("poller idle".into());
            lines.push(StateLine::plain(format!("epoch {} · drained [{}] · {poll}", c.layout().epoch, drained.join(","))));
            for gap in c.current_assignment().gaps {
                lines.push(StateLine { text: format!("{}: {gap:?}", gap.issue()), changed_at: None, alert: true });
            }
        }
        lines
    }

    fn partition_noun_of(&self, t: usize) -> &'static str {
        if self.topics[t].scalable.is_some() {
            "segments"
        } else {
            "partitions"
        }
    }

    /// Every Key_Shared consumer's hash ranges, in words, by broker consumer id (one pass per dispatcher).
    fn hash_range_texts(&self) -> BTreeMap<u64, String> {
        let mut out = BTreeMap::new();
        for part in &self.partitions {
            for sub in &part.subscriptions {
                if let Some(Dispatcher::KeyShared(ks)) = &sub.dispatcher {
                    for (id, summary) in super::world::ranges::summarize(&ks.selector.assignments()) {
                        out.insert(id, summary.text());
                    }
                }
            }
        }
        out
    }

    fn consumer_lines(&self, c: usize, hash_ranges: &BTreeMap<u64, String>) -> Vec<StateLine> {
        let con = &self.consumers[c];
        let mut lines = Vec::new();
        if let Some(f) = &con.failure {
            lines.push(StateLine { text: f.clone(), changed_at: None, alert: true });
        }
        let ack = &con.ack;
        lines.push(StateLine::plain(format!(
            "acks {}{} · queue {}{}",
            ack.mode.name(),
            if ack.process_ms > 0 { format!(" after {} ms", ack.process_ms) } else { String::new() },
            con.incoming.len(),
            if con.processing.is_some() { " · processing 1" } else { "" }
        )));
        if !con.assigned_segments.is_empty() {
            let ids: Vec<String> = con.assigned_segments.iter().map(u64::to_string).collect();
            lines.push(StateLine::plain(format!("assigned segments [{}]", ids.join(","))));
        }
        for att in con.attachments.iter().filter(|a| !a.closed && a.connected) {
            let part = &self.partitions[att.partition as usize];
            let Some(sub) = part.subscriptions.get(att.subscription as usize) else { continue };
            let (permits, unacked, blocked) = match &sub.dispatcher {
                Some(Dispatcher::Single(d)) => {
                    let permits = sub.members.get(&att.consumer_id).map_or(0, |m| m.permits);
                    let active = d.active == Some(att.consumer_id);
                    lines.push(StateLine::plain(format!(
                        "{}: {} · permits {permits}",
                        short(&part.name),
                        if active { "active" } else { "standby" }
                    )));
                    continue;
                }
                Some(Dispatcher::Shared(sh)) => match sh.consumers.get(att.consumer_id) {
                    Some(x) => (x.permits, x.unacked.unacked, x.unacked.blocked),
                    None => continue,
                },
                Some(Dispatcher::KeyShared(ks)) => match ks.consumer(att.consumer_id) {
                    Some(x) => (x.permits, x.unacked.unacked, x.unacked.blocked),
                    None => continue,
                },
                None => continue,
            };
            lines.push(StateLine {
                text: format!(
                    "{}: permits {permits} · unacked {unacked}{}{}",
                    short(&part.name),
                    if blocked { " · BLOCKED" } else { "" },
                    if att.reached_end { " · end of topic" } else { "" }
                ),
                changed_at: None,
                alert: blocked,
            });
            if let Some(ranges) = hash_ranges.get(&att.consumer_id) {
                lines.push(StateLine::plain(format!("hashes {ranges}")));
            }
        }
        lines
    }

    fn subscription_text(&self, c: usize) -> String {
        let con = &self.consumers[c];
        let topic = &self.topics[con.topic as usize].written;
        match &con.spec.kind {
            ConsumerKind::Subscription { subscription_type, key_shared } => match key_shared {
                Some(ks) => format!("{topic} · {} {}", subscription_type.name(), ks.mode.name()),
                None => format!("{topic} · {}", subscription_type.name()),
            },
            ConsumerKind::Scalable(t) => format!("{topic} · {}", t.name()),
        }
    }

    /// The broker-neutral picture of the world now.
    pub fn view(&self) -> View {
        let brokers = self
            .brokers
            .iter()
            .enumerate()
            .map(|(b, name)| {
                let served = self.partitions.iter().filter(|p| p.broker as usize == b && !p.deleted);
                let (segments, partitions) =
                    served.fold((0, 0), |(s, p), x| if x.segment.is_some() { (s + 1, p) } else { (s, p + 1) });
                let count = |n: usize, noun: &str| format!("{n} {noun}{}", if n == 1 { "" } else { "s" });
                let served = match (partitions, segments) {
                    (p, 0) => count(p, "partition"),
                    (0, s) => count(s, "segment"),
                    (p, s) => format!("{} and {}", count(p, "partition"), count(s, "segment")),
                };
                let mut lines = vec![StateLine::plain(format!("serves {served}"))];
                for (t, topic) in self.topics.iter().enumerate() {
                    if let Some(s) = topic.scalable.as_ref().filter(|_| t % self.brokers.len() == b) {
                        lines.push(StateLine::plain(format!(
                            "controller of {}: epoch {}, active {}",
                            topic.written,
                            s.layout.epoch,
                            active_list(&s.layout)
                        )));
                    }
                }
                BrokerView { name: name.to_string(), lines }
            })
            .collect();
        let topics = self
            .topics
            .iter()
            .enumerate()
            .map(|(t, topic)| TopicView {
                name: topic.name.to_string(),
                internal: topic.role != TopicRole::User,
                partitions: topic.partitions.iter().map(|&p| self.partition_view(t, p)).collect(),
            })
            .collect();
        let producers = self.producers.iter().map(|p| ProducerView { name: p.name.to_string(), sent: p.sent }).collect();
        let groups =
            (0..self.groups.len()).map(|g| GroupView { name: self.group_label(g), lines: self.group_lines(g) }).collect();
        let hash_ranges = self.hash_range_texts();
        let consumers = (0..self.consumers.len())
            .map(|c| {
                let con = &self.consumers[c];
                let group = self.groups.iter().position(|(t, s)| *t == con.topic && *s == con.subscription);
                ConsumerView {
                    name: con.name.to_string(),
                    group: group.map_or_else(|| con.subscription.to_string(), |g| self.group_label(g)),
                    state: self.consumer_state(c),
                    subscription: self.subscription_text(c),
                    mismatch: None,
                    lines: self.consumer_lines(c, &hash_ranges),
                    consumed: con.stats.received,
                }
            })
            .collect();
        let keyed = self.messages.iter().any(|m| m.sticky_key().is_some());
        let labels = if keyed { (0..KEY_COLOURS).map(key_colour_label).collect() } else { Vec::new() };
        View { labels, brokers, topics, producers, groups, consumers }
    }

    /// The colour key of a message: which of `KEY_COLOURS` equal slices of the sticky-hash space
    /// its key falls in (so colours line up with Key_Shared's hash ranges).
    fn colour_key(&self, m: MsgId) -> u32 {
        let Some(msg) = self.messages.get(m as usize) else { return NO_KEY };
        if msg.sticky_key().is_none() {
            return NO_KEY;
        }
        let part = &self.partitions[msg.partition as usize];
        part.entries.get(msg.entry as usize).map_or(NO_KEY, |e| key_colour(e.key_make_hash))
    }

    fn trace_one(&self, kind: &Event) -> Option<Trace> {
        let pid = |m: MsgId| self.messages.get(m as usize).map_or(u32::MAX, |x| x.partition);
        let key = |m: MsgId| self.colour_key(m);
        let known = |c: u32| ((c as usize) < self.consumers.len()).then_some(c);
        Some(match kind {
            Event::MessageStored { msg } => {
                let m = self.messages.get(*msg as usize)?;
                let producer = (m.out.producer != super::world::NO_PRODUCER).then_some(m.out.producer);
                Trace::Stored { msg: *msg, key: key(*msg), partition: m.partition, offset: m.entry as u64, producer }
            }
            Event::Received { consumer, msg, .. } => {
                Trace::Delivered { msg: *msg, key: key(*msg), partition: pid(*msg), consumer: known(*consumer)? }
            }
            Event::DeadLettered { consumer, msg, .. } => Trace::Dropped {
                msg: *msg,
                key: key(*msg),
                partition: pid(*msg),
                consumer: known(*consumer),
                kind: DropKind::DeadLetter,
            },
            Event::AcksApplied { partition, sub, mark_delete, moved: true, .. } => {
                let group = self.partitions.get(*partition as usize)?.subscriptions.get(*sub as usize)?.group;
                Trace::Committed { partition: *partition, group, offset: (mark_delete + 1).max(0) as u64 }
            }
            Event::Subscribed { consumer, .. }
            | Event::ConsumerRemoved { consumer, .. }
            | Event::HashRangesChanged { consumer, .. }
            | Event::AssignmentSent { consumer, .. } => Trace::Reassigned { consumer: known(*consumer)? },
            Event::ActiveSwitched { active, .. } | Event::ActiveConsumerPicked { active, .. } => {
                Trace::Reassigned { consumer: known(*active)? }
            }
            _ => return None,
        })
    }

    fn entry_fate(&self, first: MsgId, count: u32) -> Fate {
        (first..first + count)
            .map(|m| {
                let root = self.messages[m as usize].root(m);
                self.fates.get(root as usize).copied().unwrap_or(Fate::Pending)
            })
            .min_by_key(|f| severity(*f))
            .unwrap_or(Fate::Pending)
    }
}

fn short(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

fn active_list(layout: &SegmentLayout) -> String {
    let ids: Vec<String> = layout.active_segments().map(|s| s.segment_id.to_string()).collect();
    format!("[{}]", ids.join(","))
}

fn undrained_parents(layout: &SegmentLayout, parents: &[u64], drained: &std::collections::BTreeSet<u64>) -> String {
    let ids: Vec<String> =
        parents.iter().filter(|p| layout.segment(**p).is_some() && !drained.contains(p)).map(u64::to_string).collect();
    ids.join(", ")
}

/// Keys are coloured by slice of the sticky-hash space (0..65536).
pub const KEY_COLOURS: u32 = 7;

/// The colour key (`Cell::key`, `View::labels` index) of an entry whose sticky key has `make_hash`;
/// the Pulsar panels colour key hashes the same way as the canvas.
pub fn key_colour(make_hash: u32) -> u32 {
    (make_hash % 65_536) * KEY_COLOURS / 65_536
}

fn key_colour_label(k: u32) -> String {
    let lo = k * 65_536 / KEY_COLOURS;
    let hi = (k + 1) * 65_536 / KEY_COLOURS - 1;
    format!("key hash {lo}–{hi}")
}

impl Simulation for World {
    fn kind(&self) -> BrokerKind {
        BrokerKind::Pulsar
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
        self.log.at(EventId(i as u32)).unwrap_or(0)
    }
    fn log_cause(&self, i: usize) -> Option<usize> {
        self.log.cause(EventId(i as u32)).flatten().map(|c| c.0 as usize)
    }
    fn log_text(&self, i: usize) -> String {
        self.log.get(EventId(i as u32)).map(|e| self.event_text(&e.kind)).unwrap_or_default()
    }
    fn log_kind(&self, i: usize) -> &'static str {
        self.log.get(EventId(i as u32)).map_or("", |e| e.kind.kind())
    }
    fn log_kinds(&self) -> &'static [&'static str] {
        &[
            "command",
            "consumer",
            "produce",
            "dispatch",
            "receive",
            "cursor",
            "redeliver",
            "dlq",
            "failover",
            "key_shared",
            "segment",
            "coordinator",
            "upstream",
        ]
    }
    fn log_message(&self, i: usize) -> Option<MsgId> {
        self.log.get(EventId(i as u32)).and_then(|e| e.kind.message())
    }
    fn trace(&self, from: usize, to: usize, out: &mut dyn FnMut(usize, Trace)) {
        for i in from..to.min(self.log.len()) {
            if let Some(t) = self.log.get(EventId(i as u32)).and_then(|e| self.trace_one(&e.kind)) {
                // A snapshot's connected consumers and active picks are where the run starts,
                // not a rebalance.
                if i < self.restored_events as usize && matches!(t, Trace::Reassigned { .. }) {
                    continue;
                }
                out(i, t);
            }
        }
    }
    fn digest_within(&self, max_lines: usize) -> Option<u64> {
        World::digest_within(self, max_lines)
    }
    fn view(&self) -> View {
        World::view(self)
    }
    fn totals(&self) -> Totals {
        let view = self.view();
        Totals {
            produced: view.producers.iter().map(|p| p.sent).sum(),
            consumed: view.consumers.iter().map(|c| c.consumed).sum(),
            dead_lettered: self.fates.iter().filter(|f| **f == Fate::DeadLettered).count() as u64,
            retrying: self.fates.iter().filter(|f| **f == Fate::Retrying).count() as u64,
            ..super::report::totals(self)
        }
    }
    fn partition_noun(&self) -> &'static str {
        if self.topics.iter().any(|t| t.scalable.is_some()) {
            "segment"
        } else {
            "partition"
        }
    }
    fn cells(&self, partition: PartitionId, from: u64, to: u64) -> Vec<Cell> {
        let Some(part) = self.partitions.get(partition as usize) else { return Vec::new() };
        let to = to.min(part.entries.len() as u64);
        (from..to)
            .map(|o| {
                let e = part.entries[o as usize];
                let m = &self.messages[e.first_msg as usize];
                let label: Option<Arc<str>> = m.sticky_key().map(|k| self.keys.name(k));
                let key = if label.is_some() { key_colour(e.key_make_hash) } else { NO_KEY };
                Cell { offset: o, msg: e.first_msg, label, key, fate: self.entry_fate(e.first_msg, e.messages), note: None }
            })
            .collect()
    }
    fn message(&self, msg: MsgId) -> Option<MessageView> {
        let m = self.messages.get(msg as usize)?;
        let part = &self.partitions[m.partition as usize];
        let id = super::message_id::MessageId { ledger_id: part.ledger_id, entry_id: m.entry, batch_index: m.batch_index };
        let mut properties = vec![("messageId".to_string(), id.to_string())];
        if let Some(k) = self.key_text(m.out.key) {
            properties.push(("key".into(), k.to_string()));
        }
        if let Some(k) = self.key_text(m.out.ordering_key) {
            properties.push(("orderingKey".into(), k.to_string()));
        }
        if let Some(c) = &m.out.copy {
            properties.push(("REAL_TOPIC".into(), c.real_topic.to_string()));
            properties.push(("ORIGIN_MESSAGE_ID".into(), c.origin_id.to_string()));
            if c.retry {
                properties.push(("RECONSUMETIMES".into(), c.reconsume_times.to_string()));
                properties.push(("DELAY_TIME".into(), m.out.deliver_at.saturating_sub(m.out.born_at).to_string()));
            }
        }
        let producer = match self.producers.get(m.out.producer as usize) {
            Some(p) => p.name.to_string(),
            None => m.out.copy.as_ref().map_or("client".into(), |c| format!("{} (client)", c.by)),
        };
        Some(MessageView {
            msg,
            topic: part.name.to_string(),
            partition: Some(m.partition),
            offset: Some(m.entry as u64),
            label: self.sticky_key_text(m).map(str::to_string),
            body: self.body_text(msg),
            properties,
            producer,
            born_at: m.out.born_at,
            fate: self.fates.get(m.root(msg) as usize).copied().unwrap_or(Fate::Pending),
        })
    }
    fn provenance(&self, msg: MsgId) -> Vec<usize> {
        let Some(root) = self.messages.get(msg as usize).map(|m| m.root(msg)) else { return Vec::new() };
        let mut ids: Vec<usize> = self
            .msg_events
            .iter()
            .filter(|(m, _)| self.messages.get(*m as usize).is_some_and(|x| x.root(*m) == root))
            .map(|(_, e)| e.0 as usize)
            .collect();
        ids.stable_sort();
        ids.dedup();
        ids
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
