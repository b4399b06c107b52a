//! RocketMQ behind the broker-neutral seam (`mqviz_model::Simulation`): commands arrive as timeline
//! JSON, the log is read by index, and the topology is translated into the neutral `View`.

use mqviz_engine::sort::StableSort;
use mqviz_engine::vec_map::VecMap;
use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use super::events::Event;
use super::log::Skim;
use super::report::{allocation_by_strategy, group_members, group_warnings};
use super::scenario::{parse_action, Action, TimedAction};
use super::types::{MessageModel, MessageQueue};
use super::world::{is_system_topic, World};
use mqviz_engine::json_path::PathError;
use mqviz_engine::scenario::duplicate_consumer_name;
use mqviz_engine::{EventId, Millis};
use mqviz_model::{
    BrokerKind, BrokerView, Cell, ConsumerIx, ConsumerState, ConsumerView, DropKind, Fate, GroupView, MarkKind, MessageView,
    MsgId, OffsetMark, PartitionId, PartitionView, ProducerView, Simulation, StateLine, TopicView, Totals, Trace, View,
};

impl World {
    /// Problems with a command's references in the current state (its shape was checked by the
    /// parser). Empty when it can be entered.
    pub fn check_command(&self, cmd: &TimedAction) -> Vec<PathError> {
        let err = |message: String| PathError { path: "$".into(), message };
        let has_consumer = |n: &str| self.consumers.iter().any(|c| &*c.name == n);
        let has_topic = |t: &str| self.brokers.iter().any(|b| b.topics.contains_key(t));
        let has_group = |g: &str| self.scenario.groups.iter().any(|x| x.name == g);
        let mut out = Vec::new();
        let name = cmd.action.name();
        match &cmd.action {
            // Consumers are named by their unique scenario name; subscribing to a topic that does
            // not exist is allowed (the route is not found until it appears).
            Action::StartConsumer { consumer }
            | Action::StopConsumer { consumer }
            | Action::CrashConsumer { consumer }
            | Action::Subscribe { consumer, .. }
            | Action::Unsubscribe { consumer, .. } => {
                if !has_consumer(consumer) {
                    out.push(err(format!("{name}: unknown consumer {consumer:?}")));
                }
            }
            Action::AddConsumer { group, consumer } => {
                if !has_group(group) {
                    out.push(err(format!("addConsumer: unknown group {group:?}")));
                }
                if has_consumer(&consumer.name) {
                    out.push(err(format!("addConsumer: {}", duplicate_consumer_name(&consumer.name))));
                }
            }
            // setQueueCount on an unknown topic creates it (updateTopic).
            Action::SetQueueCount { .. } => {}
            Action::Produce { producer, send } => {
                if !self.producers.iter().any(|p| &*p.id == producer) {
                    out.push(err(format!("produce: unknown producer {producer:?}")));
                }
                if !has_topic(&send.topic) {
                    out.push(err(format!("produce: unknown topic {:?}", send.topic)));
                }
            }
            Action::SetAllocation { group, .. } => {
                if !has_group(group) {
                    out.push(err(format!("setAllocation: unknown group {group:?}")));
                }
            }
        }
        out
    }

    fn partition_of(&self, broker: &str, mq: &MessageQueue) -> Option<PartitionId> {
        let b = self.brokers.iter().position(|x| &*x.name == broker)?;
        self.brokers[b].cq(&mq.topic, mq.queue_id)?.pid
    }

    fn consumer_state(&self, c: usize) -> ConsumerState {
        let con = &self.consumers[c];
        if con.running {
            ConsumerState::Running
        } else if con.start_error.is_some() {
            ConsumerState::StartFailed
        } else if con.crashed {
            ConsumerState::Crashed
        } else if con.incarnation.is_initial() {
            ConsumerState::NotStarted
        } else {
            ConsumerState::Stopped
        }
    }

    /// When the broker's entry for (group, topic) last changed, from the table history.
    fn table_changed_at(&self, broker: &str, group: &str, topic: &str) -> Option<Millis> {
        self.history.get(group)?.iter().rev().find(|h| h.broker == broker && h.topic == topic).map(|h| h.at)
    }

    fn broker_lines(&self, b: usize) -> Vec<StateLine> {
        let broker = &self.brokers[b];
        let mut lines = Vec::new();
        for (group, info) in &broker.groups {
            for (topic, sd) in &info.subscription_table {
                if is_system_topic(topic) {
                    continue;
                }
                let writer = broker.table_writer.get(&(group.clone(), topic.clone())).map(|n| n.to_string()).unwrap_or_default();
                // The entry hurts when a running member of the group wants another expression.
                let disagrees = self.consumers.iter().any(|c| {
                    c.running && *c.group == **group && c.subs.get(topic).is_some_and(|own| own.sub_string != sd.sub_string)
                });
                lines.push(StateLine {
                    text: format!("{topic} ⇐ {} ({writer}, subVersion {})", sd.sub_string, sd.sub_version),
                    changed_at: self.table_changed_at(&broker.name, group, topic),
                    alert: disagrees,
                });
            }
        }
        lines
    }

    /// The consumer's own expressions that differ from what the broker applies for its group.
    fn mismatch(&self, c: usize) -> Option<String> {
        let con = &self.consumers[c];
        if !con.running {
            return None;
        }
        let mut parts = Vec::new();
        for (topic, own) in &con.subs {
            if is_system_topic(topic) {
                continue;
            }
            let table = self.brokers.iter().find_map(|b| {
                let sd = b.groups.get(&*con.group)?.subscription_table.get(topic)?;
                let writer = b.table_writer.get(&(con.group.to_string(), topic.clone())).cloned();
                Some((sd.sub_string.clone(), writer))
            });
            match table {
                Some((applied, writer)) if applied != own.sub_string => parts.push(format!(
                    "{topic}: own {}, broker applies {applied}{}",
                    own.sub_string,
                    writer.map(|w| format!(" (from {w})")).unwrap_or_default()
                )),
                None if !self.brokers.iter().any(|b| b.groups.contains_key(&*con.group)) => {}
                None => parts.push(format!("{topic}: no entry on the broker")),
                _ => {}
            }
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    fn topic_views(&self) -> Vec<TopicView> {
        let mut names: Vec<&str> = self.brokers.iter().flat_map(|b| b.cqs.keys().map(String::as_str)).collect();
        names.stable_sort();
        names.dedup();
        let members = group_members(self);
        let mut out = Vec::new();
        for topic in names {
            let mut partitions = Vec::new();
            // Who should hold each queue, for the reason an unowned one shows.
            let mut alloc: VecMap<MessageQueue, String> = VecMap::new();
            for (group, ms) in &members {
                if ms.iter().any(|&c| self.consumers[c].running && self.consumers[c].model == MessageModel::Clustering) {
                    alloc.extend(allocation_by_strategy(self, group, topic, ms));
                }
            }
            // Until every subscriber has rebalanced once, an unowned queue is not allocated yet.
            let wanted = self.consumers.iter().any(|c| c.running && c.subs.contains_key(topic))
                && self.awaiting_first_rebalance(topic).is_none();
            for (bi, b) in self.brokers.iter().enumerate() {
                let Some(cqs) = b.cqs.get(topic) else { continue };
                for (q, cq) in cqs.iter().enumerate() {
                    let Some(id) = cq.pid else { continue };
                    let mq = MessageQueue::new(topic, &*b.name, q as u32);
                    let owners: Vec<ConsumerIx> = self
                        .consumers
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| c.running && c.pqs.contains_key(&mq))
                        .map(|(i, _)| i as ConsumerIx)
                        .collect();
                    let marks = b
                        .offsets
                        .iter()
                        .filter(|((t, _, qid), _)| *t == topic && *qid as usize == q)
                        .map(|((_, g, _), o)| OffsetMark { kind: MarkKind::Committed, offset: o, label: g.to_string() })
                        .collect();
                    let unowned_reason = (owners.is_empty() && wanted && !is_system_topic(topic)).then(|| match alloc.get(&mq) {
                        Some(cid) => format!("allocated to {cid}, which does not pull it"),
                        None => "no owner in the group".to_string(),
                    });
                    // The broker is the box the row sits in; the label names only the queue.
                    let label = format!("q{q}");
                    partitions.push(PartitionView {
                        id,
                        label,
                        broker: Some(bi),
                        log_start: cq.min_offset(),
                        log_end: cq.max_offset(),
                        marks,
                        owners,
                        badge: None,
                        unowned_reason,
                    });
                }
            }
            out.push(TopicView { name: topic.to_string(), internal: is_system_topic(topic), partitions });
        }
        out
    }

    /// The broker-neutral picture of the world now.
    pub fn view(&self) -> View {
        let brokers = (0..self.brokers.len())
            .map(|b| BrokerView { name: self.brokers[b].name.to_string(), lines: self.broker_lines(b) })
            .collect();
        let producers = self.producers.iter().map(|p| ProducerView { name: p.id.to_string(), sent: p.sent }).collect();
        let groups = self
            .scenario
            .groups
            .iter()
            .map(|g| {
                let strategy = self.consumers.iter().find(|c| *c.group == *g.name).map(|c| c.strategy_name).unwrap_or("AVG");
                let running = self.consumers.iter().filter(|c| c.running && *c.group == *g.name).count();
                GroupView {
                    name: g.name.clone(),
                    lines: vec![StateLine::plain(format!(
                        "{} · {strategy} · {running} running{}",
                        g.message_model.name(),
                        if g.orderly { " · orderly" } else { "" }
                    ))],
                }
            })
            .collect();
        let consumers = (0..self.consumers.len())
            .map(|c| {
                let con = &self.consumers[c];
                let subscription = con
                    .spec
                    .subscriptions
                    .iter()
                    .map(|s| match &s.expression_type {
                        Some(t) => format!("{}={} ({t})", s.topic, s.expression),
                        None => format!("{}={}", s.topic, s.expression),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut lines = Vec::new();
                if let Some(e) = &con.start_error {
                    lines.push(StateLine { text: e.clone(), changed_at: None, alert: true });
                }
                if con.running && con.rebalance.unbalanced {
                    lines.push(StateLine {
                        text: "not balanced: its ProcessQueues differ from its allocation (a lock refused, a removal deferred), so it rebalances again after 1 s".into(),
                        changed_at: None,
                        alert: true,
                    });
                }
                if con.name != con.client_id {
                    // Another instance may report the same clientId: the broker cannot tell them apart.
                    let shared = self.consumers.iter().filter(|o| o.running && o.client_id == con.client_id).count() > 1;
                    lines.push(StateLine { text: format!("clientId {}", con.client_id), changed_at: None, alert: shared });
                }
                ConsumerView {
                    name: con.name.to_string(),
                    group: con.group.to_string(),
                    state: self.consumer_state(c),
                    subscription,
                    mismatch: self.mismatch(c),
                    lines,
                    consumed: con.stats.consumed,
                }
            })
            .collect();
        let labels = self.tag_keys.iter().map(|t| t.to_string()).collect();
        View { labels, brokers, topics: self.topic_views(), producers, groups, consumers }
    }

    fn trace_stored(&self, msg: MsgId, offset: u64) -> Option<Trace> {
        let m = self.messages.get(msg as usize)?;
        // A message's producer name is its producer's own `Arc`: comparing addresses first
        // spares a string comparison per stored message.
        let producer =
            self.producers.iter().position(|p| Arc::ptr_eq(&p.id, m.producer()) || p.id == *m.producer()).map(|p| p as u32);
        Some(Trace::Stored { msg, key: m.key(), partition: m.pid, offset, producer })
    }

    fn trace_one(&self, kind: &Event, consumers: &VecMap<&str, ConsumerIx>) -> Option<Trace> {
        let cix = |client: &str| consumers.get(client).copied();
        let pid = |m: MsgId| self.messages.get(m as usize).map(|x| x.pid).unwrap_or(u32::MAX);
        let key = |m: MsgId| self.messages.get(m as usize).map(|x| x.key()).unwrap_or(mqviz_model::NO_KEY);
        Some(match kind {
            Event::MessageStored { msg, offset, .. } => self.trace_stored(*msg, *offset)?,
            Event::Consumed { msg, client, .. } => {
                Trace::Delivered { msg: *msg, key: key(*msg), partition: pid(*msg), consumer: cix(client)? }
            }
            Event::BrokerFiltered { msg, client, .. } => Trace::Dropped {
                msg: *msg,
                key: key(*msg),
                partition: pid(*msg),
                consumer: cix(client),
                kind: DropKind::BrokerFilter,
            },
            Event::ClientFiltered { msg, client, .. } => Trace::Dropped {
                msg: *msg,
                key: key(*msg),
                partition: pid(*msg),
                consumer: cix(client),
                kind: DropKind::ClientFilter,
            },
            Event::OffsetCommitted { broker, group, mq, offset } => {
                let g = self.scenario.groups.iter().position(|x| *x.name == **group)? as u32;
                Trace::Committed { partition: self.partition_of(broker, mq)?, group: g, offset: *offset }
            }
            Event::Allocated { client, topic, added, removed, .. }
                if !is_system_topic(topic) && (!added.is_empty() || !removed.is_empty()) =>
            {
                Trace::Reassigned { consumer: cix(client)? }
            }
            Event::ConsumerStarted { client, .. } => Trace::Lifecycle { consumer: cix(client)?, state: ConsumerState::Running },
            Event::ConsumerStopped { client, graceful } => Trace::Lifecycle {
                consumer: cix(client)?,
                state: if *graceful { ConsumerState::Stopped } else { ConsumerState::Crashed },
            },
            Event::StartFailed { client, .. } => Trace::Lifecycle { consumer: cix(client)?, state: ConsumerState::StartFailed },
            Event::HeartbeatApplied { broker, client, changes, .. } => {
                let b = self.brokers.iter().position(|x| x.name == *broker)? as u32;
                // Retry topics are overwritten by every member's bump: not a moment worth showing.
                // An overwrite with the same expression changes nothing for anyone: just a heartbeat.
                let user_topic = |c: &String| c.split(' ').next().is_some_and(|t| !is_system_topic(t));
                let changes_expression = |c: &String| {
                    c.split_once(" overwritten by ").is_some_and(|(old, new)| {
                        let expr = |s: &str| s.rsplit_once('@').map(|(e, _)| e.trim().to_string());
                        expr(old.split_once(' ').map(|x| x.1).unwrap_or(old)) != expr(new)
                    })
                };
                if changes.iter().any(|c| user_topic(c) && changes_expression(c)) {
                    Trace::Overwritten { broker: b, consumer: cix(client) }
                } else {
                    Trace::Heartbeat { consumer: cix(client)?, broker: b }
                }
            }
            _ => return None,
        })
    }
}

impl Simulation for World {
    fn kind(&self) -> BrokerKind {
        BrokerKind::RocketMq
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
        self.log().len()
    }
    fn log_time(&self, i: usize) -> Millis {
        if i < self.log().len() {
            self.log().time(i)
        } else {
            0
        }
    }
    fn log_cause(&self, i: usize) -> Option<usize> {
        (i < self.log().len()).then(|| self.log().cause(i)).flatten().map(|c| c.0 as usize)
    }
    fn log_text(&self, i: usize) -> String {
        match self.log().get(EventId(i as u32)) {
            Some(e) => e.kind.to_string(),
            None if i < self.log().log.first_kept() => format!(
                "(compacted: entries before #{} were dropped to keep the run inside its memory budget)",
                self.log().log.first_kept()
            ),
            None => String::new(),
        }
    }
    fn log_kind(&self, i: usize) -> &'static str {
        self.log_store_kind(i)
    }
    fn log_kinds(&self) -> &'static [&'static str] {
        &[
            "command",
            "lifecycle",
            "subscription",
            "heartbeat",
            "rebalance",
            "store",
            "pull",
            "filter",
            "consume",
            "retry",
            "offset",
        ]
    }
    fn log_message(&self, i: usize) -> Option<MsgId> {
        self.log_store_message(i)
    }
    fn trace(&self, from: usize, to: usize, out: &mut dyn FnMut(usize, Trace)) {
        let consumers: VecMap<&str, ConsumerIx> =
            self.consumers.iter().enumerate().rev().map(|(i, c)| (&*c.client_id, i as ConsumerIx)).collect();
        let log = self.log();
        // A skimmed entry names its client by interned id: each id is looked up once.
        let mut consumer_of_name: Vec<Option<Option<ConsumerIx>>> = Vec::new();
        let mut consumer = |id: u16| -> Option<ConsumerIx> {
            let i = id as usize;
            if consumer_of_name.len() <= i {
                consumer_of_name.resize(i + 1, None);
            }
            *consumer_of_name[i].get_or_insert_with(|| consumers.get(&**log.log.skimmed_name(id)).copied())
        };
        let message = |msg: MsgId| self.messages.get(msg as usize);
        let key_and_partition = |msg: MsgId| message(msg).map_or((mqviz_model::NO_KEY, u32::MAX), |m| (m.key(), m.pid));
        let dropped = |msg: MsgId, consumer: Option<ConsumerIx>, kind: DropKind| {
            let (key, partition) = key_and_partition(msg);
            Trace::Dropped { msg, key, partition, consumer, kind }
        };
        for i in from.max(log.log.first_kept())..to.min(log.len()) {
            // Pulls (as many as the messages) tell nothing here, and the per-message slots are
            // read as their decoded events would be (`trace_one`): none is decoded.
            let fact = match log.log.skim(i) {
                Skim::Pull => None,
                Skim::Stored(msg) => message(msg).and_then(|m| self.trace_stored(msg, m.queue_offset())),
                Skim::Consumed { msg, client } => consumer(client).map(|consumer| {
                    let (key, partition) = key_and_partition(msg);
                    Trace::Delivered { msg, key, partition, consumer }
                }),
                Skim::BrokerFiltered { msg, client } => Some(dropped(msg, consumer(client), DropKind::BrokerFilter)),
                Skim::ClientFiltered { msg, client } => Some(dropped(msg, consumer(client), DropKind::ClientFilter)),
                Skim::Other => self.trace_one(&log.kind_of(i), &consumers),
            };
            if let Some(t) = fact {
                out(i, t);
            }
        }
    }
    fn digest_within(&self, max_lines: usize) -> Option<u64> {
        self.log().digest_within(max_lines)
    }
    fn view(&self) -> View {
        World::view(self)
    }
    fn partition_noun(&self) -> &'static str {
        "queue"
    }
    fn cells(&self, partition: PartitionId, from: u64, to: u64) -> Vec<Cell> {
        let Some((b, topic, q)) = self.partitions.get(partition as usize) else { return Vec::new() };
        let Some(cq) = self.brokers[*b].cq(topic, *q) else { return Vec::new() };
        let to = to.min(cq.max_offset());
        (from..to)
            .filter_map(|o| {
                let e = cq.entry(o)?;
                let m = self.messages.get(e.msg as usize)?;
                let root = m.root();
                let note = self.skip_notes.get(&root).copied();
                Some(Cell { offset: o, msg: e.msg, label: m.tag().clone(), key: m.key(), fate: self.fates[root as usize], note })
            })
            .collect()
    }
    fn message(&self, msg: MsgId) -> Option<MessageView> {
        let m = self.messages.get(msg as usize)?;
        let mut properties: Vec<(String, String)> = m.properties().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        if let Some(t) = &m.tag() {
            properties.push(("TAGS".into(), t.to_string()));
        }
        if let Some(k) = &m.keys() {
            properties.push(("KEYS".into(), k.clone()));
        }
        Some(MessageView {
            msg,
            topic: m.topic().to_string(),
            partition: (m.pid != u32::MAX).then_some(m.pid),
            offset: (m.pid != u32::MAX).then_some(m.queue_offset()),
            label: m.tag().as_deref().map(str::to_string),
            body: m.body().text(),
            properties,
            producer: m.producer().to_string(),
            born_at: m.born_at,
            fate: self.fates.get(m.root() as usize).copied().unwrap_or(Fate::Pending),
        })
    }
    fn provenance(&self, msg: MsgId) -> Vec<usize> {
        let Some(root) = self.messages.get(msg as usize).map(|m| m.root()) else { return Vec::new() };
        let log = self.log();
        // Born before the log was compacted: its first events may be gone, and the first row
        // (the last compacted entry, whose text says so) tells the reader.
        let compacted = log.log.compacted_before().filter(|&t| self.messages[root as usize].born_at < t);
        compacted
            .map(|_| log.log.first_kept() - 1)
            .into_iter()
            .chain(
                log.message_events()
                    .filter(|(m, _)| self.messages.get(*m as usize).is_some_and(|x| x.root() == root))
                    .map(|(_, e)| e.0 as usize),
            )
            .collect()
    }
    fn totals(&self) -> Totals {
        let mut t = Totals {
            produced: self.producers.iter().map(|p| p.sent).sum(),
            lost_cause: mqviz_model::LOST_TO_A_FILTER,
            ..Totals::default()
        };
        for f in &self.fates {
            match f {
                Fate::Retrying => t.retrying += 1,
                Fate::DeadLettered => t.dead_lettered += 1,
                Fate::Skipped | Fate::Consumed | Fate::Pending => {}
            }
        }
        // What the report lists as unconsumed, per group (BROADCASTING: per member): filtered out
        // is lost; waiting for a retry or dead-lettered is counted above.
        let members = super::report::group_members(self);
        t.groups = members
            .iter()
            .map(|(_, ms)| match self.consumers[ms[0]].model {
                MessageModel::Broadcasting => ms.len() as u64,
                _ => 1,
            })
            .sum();
        // Per group: consumptions, and how many of them repeat a message already consumed. Each
        // consumer's group is looked up once, not once per consumption.
        let slot: Vec<usize> = self.consumers.iter().map(|c| members.keys().position(|g| **g == *c.group).unwrap_or(0)).collect();
        let mut by_group: Vec<mqviz_engine::BitSet> = vec![Default::default(); members.len().max(1)];
        t.consumed = self.consumptions.len() as u64;
        for r in &self.consumptions {
            let first = by_group[slot[r.consumer()]].insert(self.messages[r.msg as usize].root());
            t.duplicated += u64::from(!first);
        }
        // A CLUSTERING group's scope is the whole group: what it consumed is its set above.
        let consumed = |g: usize, scope: &[usize]| match members.values().nth(g) {
            Some(all) if all.len() == scope.len() => Cow::Borrowed(&by_group[g]),
            _ => Cow::Owned(self.consumed_roots(scope)),
        };
        super::report::for_each_unconsumed_given(self, &members, consumed, |_, _, m| match self.fates.get(m.id as usize) {
            Some(Fate::Skipped) => t.lost += 1,
            Some(Fate::Retrying | Fate::DeadLettered) => {}
            _ => t.unconsumed += 1,
        });
        t
    }
    fn variants(&self, scenario: &Value) -> Vec<(String, Value)> {
        // The same groups under each other allocation strategy.
        let current: Vec<String> = self.scenario.groups.iter().map(|g| g.allocation.name().to_string()).collect();
        ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"]
            .iter()
            .filter(|s| !current.iter().all(|c| c == *s))
            .map(|s| {
                let mut v = scenario.clone();
                if let Some(groups) = v.get_mut("groups").and_then(Value::as_array_mut) {
                    for g in groups {
                        if let Some(o) = g.as_object_mut() {
                            o.insert("allocation".into(), Value::from(*s));
                        }
                    }
                }
                (format!("allocation {s}"), v)
            })
            .collect()
    }
    fn setting(&self, _scenario: &Value) -> String {
        let mut names: Vec<&str> = Vec::new();
        for g in &self.scenario.groups {
            if !names.contains(&g.allocation.name()) {
                names.push(g.allocation.name());
            }
        }
        format!("allocation {}", names.join(" / "))
    }
    fn warnings(&self) -> Vec<(String, String)> {
        let stop = self.budget_stop.iter().map(|s| ("memory budget".to_string(), s.message()));
        stop.chain(
            group_members(self).iter().flat_map(|(g, ms)| group_warnings(self, g, ms).into_iter().map(move |w| (g.clone(), w))),
        )
        .collect()
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

#[cfg(test)]
mod tests {
    use mqviz_model::{self as model, preset_files, Fate, Simulation, Trace};

    fn run(file: &str) -> super::super::world::World {
        let mut w = super::super::world::World::new(super::super::scenario::parse_scenario(&preset_files::text(file)).unwrap());
        w.run_to_end();
        w
    }

    /// `trace` skims pulls, stored messages and per-message verdicts off their slots: it must
    /// give exactly the facts of the decoded events.
    #[test]
    fn skimmed_trace_equals_the_trace_of_every_decoded_event() {
        use super::super::scenario::parse_scenario;
        use super::super::world::World;
        use mqviz_engine::vec_map::VecMap;
        let mut seen = Vec::new();
        let scenarios = [crate::scenario::load_scenario(3000), preset_files::text("seed-same-topic-different-tags.json")];
        for text in &scenarios {
            let mut w = World::new(parse_scenario(text).expect("valid"));
            w.run_to_end();
            let consumers: VecMap<&str, u32> =
                w.consumers.iter().enumerate().rev().map(|(i, c)| (&*c.client_id, i as u32)).collect();
            let log = w.log();
            let want: Vec<(usize, Trace)> =
                (0..log.len()).filter_map(|i| w.trace_one(&log.kind_of(i), &consumers).map(|t| (i, t))).collect();
            let mut got = Vec::new();
            w.trace(0, log.len(), &mut |i, t| got.push((i, t)));
            assert_eq!(got, want);
            seen.extend(got.into_iter().map(|(_, t)| t));
        }
        assert!(seen.iter().any(|t| matches!(t, Trace::Stored { .. })) && seen.len() > 3000);
        assert!(seen.iter().any(|t| matches!(t, Trace::Delivered { .. })));
        for kind in [model::DropKind::BrokerFilter, model::DropKind::ClientFilter] {
            assert!(seen.iter().any(|t| matches!(t, Trace::Dropped { kind: k, .. } if *k == kind)), "{kind:?}");
        }
    }

    #[test]
    fn trace_and_view_name_the_same_partitions_and_consumers() {
        let sim = run("seed-same-topic-different-tags.json");
        let view = sim.view();
        let ids: Vec<u32> = view.topics.iter().flat_map(|t| t.partitions.iter().map(|p| p.id)).collect();
        let mut stored = 0;
        sim.trace(0, sim.log_len(), &mut |_, t| match t {
            Trace::Stored { partition, .. } | Trace::Delivered { partition, .. } | Trace::Dropped { partition, .. } => {
                assert!(ids.contains(&partition), "{t:?} names a partition not in the view {ids:?}");
                stored += 1;
            }
            Trace::Committed { partition, group, .. } => {
                assert!(ids.contains(&partition), "{t:?}");
                assert!((group as usize) < view.groups.len(), "{t:?}");
            }
            Trace::Reassigned { consumer } | Trace::Heartbeat { consumer, .. } => {
                assert!((consumer as usize) < view.consumers.len(), "{t:?}")
            }
            Trace::Overwritten { broker, .. } => assert!((broker as usize) < view.brokers.len()),
            Trace::Lifecycle { consumer, .. } => assert!((consumer as usize) < view.consumers.len()),
        });
        assert!(stored > 20);
        // Cells carry fates: ConsumerB consumed six TagB messages; TagB #2, 3, 6, 7 were skipped.
        let fates: Vec<Fate> = view
            .topics
            .iter()
            .filter(|t| !t.internal)
            .flat_map(|t| t.partitions.iter())
            .flat_map(|p| sim.cells(p.id, 0, p.log_end))
            .map(|c| c.fate)
            .collect();
        assert_eq!(fates.iter().filter(|f| **f == Fate::Consumed).count(), 6);
        assert!(fates.iter().filter(|f| **f == Fate::Skipped).count() >= 4);
        // The broker's table entry is shown, and ConsumerA is marked as mismatched.
        assert!(view.brokers[0].lines.iter().any(|l| l.text.starts_with("TopicTestA ⇐ TagB")), "{:?}", view.brokers[0].lines);
    }
}
