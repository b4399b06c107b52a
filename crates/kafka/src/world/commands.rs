//! Timeline and user commands: consumer lifecycle, subscriptions, assignor and protocol changes,
//! pause/resume/seek, produce scripts, leader changes, truncation, new partitions and topics.

use super::consumer::Life;
use super::*;
use crate::fetch_state::OffsetResetStrategy;
use crate::scenario::{self as sc, Action as Cmd, PartitionRef, SeekTarget};

/// One line describing a command, for the log.
fn describe(cmd: &Cmd) -> String {
    match cmd {
        Cmd::StartConsumer { consumer } => format!("startConsumer {consumer}"),
        Cmd::StopConsumer { consumer } => format!("stopConsumer {consumer}"),
        Cmd::CrashConsumer { consumer } => format!("crashConsumer {consumer}"),
        Cmd::AddConsumer { group, consumer } => format!("addConsumer {} to {group}", consumer.name),
        Cmd::Subscribe { consumer, subscription } => format!("{consumer}.{}", subscription.describe()),
        Cmd::Unsubscribe { consumer } => format!("{consumer}.unsubscribe()"),
        Cmd::SetAssignors { group, assignors } => {
            format!("setAssignors {group} [{}]", assignors.iter().map(|a| a.name()).collect::<Vec<_>>().join(", "))
        }
        Cmd::SetRemoteAssignor { group, assignor } => format!("setRemoteAssignor {group} {}", assignor.name()),
        Cmd::SetProtocol { group, protocol } => format!("setProtocol {group} {}", protocol.name()),
        Cmd::Pause { consumer, partitions } => format!("{consumer}.pause({})", refs(partitions)),
        Cmd::Resume { consumer, partitions } => format!("{consumer}.resume({})", refs(partitions)),
        Cmd::Seek { consumer, partition, to } => match to {
            SeekTarget::Offset(o) => format!("{consumer}.seek({partition}, {o})"),
            SeekTarget::Beginning => format!("{consumer}.seekToBeginning({partition})"),
            SeekTarget::End => format!("{consumer}.seekToEnd({partition})"),
        },
        Cmd::Produce { producer, send } => format!("produce {producer} -> {} x{}", send.topic, send.count),
        Cmd::LeaderChange { partition, leader } => {
            format!("leaderChange {partition}{}", leader.as_ref().map(|l| format!(" to {l}")).unwrap_or_default())
        }
        Cmd::Truncate { partition, offset, .. } => format!("truncate {partition} to {offset} (unclean leader election)"),
        Cmd::AddPartitions { topic, partitions } => format!("addPartitions {topic} to {partitions}"),
        Cmd::CreateTopic { topic } => format!("createTopic {} ({} partitions)", topic.name, topic.partitions),
    }
}

fn refs(parts: &[PartitionRef]) -> String {
    parts.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

fn tp(r: &PartitionRef) -> TopicPartition {
    TopicPartition::new(r.topic.clone(), r.partition as i32)
}

impl World {
    pub(super) fn handle_command_now(&mut self, cmd: Cmd) {
        self.emit(Event::Command { text: describe(&cmd) });
        let consumer = cmd.consumer_name().and_then(|id| self.find_consumer(id));
        match cmd {
            Cmd::StartConsumer { .. } => consumer.into_iter().for_each(|c| self.start_consumer(c)),
            Cmd::StopConsumer { .. } => consumer.into_iter().for_each(|c| self.close_consumer(c, "close()", Life::Stopped)),
            Cmd::CrashConsumer { .. } => consumer.into_iter().for_each(|c| self.crash_consumer(c)),
            Cmd::AddConsumer { group, consumer } => self.add_consumer(&group, consumer),
            Cmd::Subscribe { subscription, .. } => {
                if let Some(c) = consumer {
                    self.consumers[c].subscription = Some(subscription.clone());
                    if self.consumers[c].running() {
                        self.apply_subscription(c, &subscription);
                    }
                }
            }
            Cmd::Unsubscribe { .. } => {
                if let Some(c) = consumer {
                    self.unsubscribe(c);
                    self.consumers[c].subscription = None;
                }
            }
            Cmd::SetAssignors { group, assignors } => {
                for c in self.members_of(&group) {
                    self.consumers[c].overrides.assignors = Some(assignors.clone());
                    self.consumers[c].config.assignors = assignors.clone();
                    if self.consumers[c].running() && self.consumers[c].group_managed() {
                        self.request_rejoin(c, "partition.assignment.strategy changed");
                    }
                }
            }
            Cmd::SetRemoteAssignor { group, assignor } => {
                for c in self.members_of(&group) {
                    self.consumers[c].overrides.remote_assignor = Some(assignor);
                    self.consumers[c].config.remote_assignor = Some(assignor);
                    if self.consumers[c].running() && self.consumers[c].group_managed() {
                        self.cg_subscription_changed(c);
                    }
                }
            }
            Cmd::SetProtocol { group, protocol } => {
                let members = self.members_of(&group);
                let running: Vec<usize> = members.iter().copied().filter(|&c| self.consumers[c].running()).collect();
                for &c in &running {
                    self.close_consumer(c, "restarted for setProtocol", Life::Stopped);
                }
                for &c in &members {
                    self.consumers[c].protocol = protocol;
                }
                for c in running {
                    self.start_consumer(c);
                }
            }
            Cmd::Pause { ref partitions, .. } | Cmd::Resume { ref partitions, .. } => {
                let pause = matches!(cmd, Cmd::Pause { .. });
                if let Some(c) = consumer.filter(|&c| self.consumers[c].running()) {
                    for r in partitions {
                        let t = tp(r);
                        let subs = &mut self.consumers[c].subs;
                        let result = if pause { subs.pause(&t) } else { subs.resume(&t) };
                        if let Err(e) = result {
                            let client = self.client(c);
                            let call = if pause { "pause" } else { "resume" };
                            self.emit(Event::CallThrew { client, call, error: e.to_string() });
                        }
                    }
                    if pause {
                        let paused: Vec<u32> = partitions.iter().filter_map(|r| self.pid_of(&tp(r))).collect();
                        self.consumers[c].fetch.buffered.retain(|b| !paused.contains(&b.pid));
                    }
                    self.wake_if_waiting(c);
                }
            }
            Cmd::Seek { partition, to, .. } => {
                if let Some(c) = consumer.filter(|&c| self.consumers[c].running()) {
                    self.seek(c, &partition, to);
                }
            }
            Cmd::Produce { producer, send } => {
                if let Some(p) = self.producers.iter().position(|x| *x.id == *producer) {
                    self.producers[p].sends.push(std::sync::Arc::new(send));
                    let s = self.producers[p].sends.len() - 1;
                    if self.producers[p].sends[s].count > 0 {
                        let at = self.producers[p].sends[s].times.first().copied().unwrap_or(self.now).max(self.now);
                        self.queue.push(at, self.last_emitted, Action::ProduceNext { producer: p, send: s, i: 0 });
                    }
                }
            }
            Cmd::LeaderChange { partition, leader } => {
                if let Some(pid) = self.pid_of(&tp(&partition)) {
                    self.leader_change(pid, leader.as_deref());
                }
            }
            Cmd::Truncate { partition, offset, leader } => {
                if let Some(pid) = self.pid_of(&tp(&partition)) {
                    self.truncate(pid, offset, leader.as_deref());
                }
            }
            Cmd::AddPartitions { topic, partitions } => self.add_partitions(&topic, partitions),
            Cmd::CreateTopic { topic } => self.create_topic_now(&topic),
        }
    }

    fn members_of(&self, group: &str) -> Vec<usize> {
        let Some(g) = self.find_group(group) else { return Vec::new() };
        (0..self.consumers.len()).filter(|&c| self.consumers[c].group == g).collect()
    }

    fn add_consumer(&mut self, group: &str, spec: sc::ConsumerSpec) {
        let Some(g) = self.find_group(group) else { return };
        if self.find_consumer(&spec.name).is_some() {
            return;
        }
        let mut made = Consumer::new(&self.scenario, g, &spec);
        // A consumer added later runs the protocol the group's members run now.
        if let Some(other) = self.consumers.iter().find(|x| x.group == g) {
            made.protocol = other.protocol;
        }
        self.consumers.push(made);
        let c = self.consumers.len() - 1;
        if spec.start_at.is_some() {
            self.start_consumer(c);
        }
    }

    /// `seek(tp, offset)` (FETCHING at the offset, no epoch) or `seekToBeginning/End`
    /// (AWAIT_RESET with EARLIEST/LATEST); a partition not assigned makes the call throw.
    fn seek(&mut self, c: usize, partition: &PartitionRef, to: SeekTarget) {
        let t = tp(partition);
        let before = self.fetch_snapshot(c, &t);
        let subs = &mut self.consumers[c].subs;
        let (result, why) = match to {
            SeekTarget::Offset(o) => (subs.seek(&t, o as i64), format!("seek({o})")),
            SeekTarget::Beginning => {
                (subs.request_offset_reset(&t, Some(OffsetResetStrategy::Earliest)), "seekToBeginning".into())
            }
            SeekTarget::End => (subs.request_offset_reset(&t, Some(OffsetResetStrategy::Latest)), "seekToEnd".into()),
        };
        match result {
            Ok(()) => {
                if let Some(pid) = self.pid_of(&t) {
                    self.consumers[c].fetch.buffered.retain(|b| b.pid != pid);
                    self.note_fetch_state(c, &t, before, &why);
                    if let SeekTarget::Offset(o) = to {
                        self.note_skipped(c, pid, o, &why);
                    }
                }
                self.wake_if_waiting(c);
            }
            Err(e) => {
                let client = self.client(c);
                self.emit(Event::CallThrew { client, call: "seek", error: e.to_string() });
            }
        }
    }
}
