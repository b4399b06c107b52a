//! Timeline commands: consumers come and go, ack behaviour changes, producers get new send
//! scripts, segments split, merge and are pruned.

use super::{Action, World};
use crate::events::{Event, RedeliveryReason};
use crate::scenario::{self, ConsumerKind};

/// A one-line description of a command for the log.
fn command_text(cmd: &scenario::Action) -> String {
    use scenario::Action::*;
    match cmd {
        AddConsumer { consumer } => {
            let how = match &consumer.kind {
                ConsumerKind::Subscription { subscription_type, .. } => subscription_type.name(),
                ConsumerKind::Scalable(t) => t.name(),
            };
            format!("addConsumer {} ({how} on {} / {})", consumer.name, consumer.topic, consumer.subscription)
        }
        StartConsumer { consumer } => format!("startConsumer {consumer}"),
        CloseConsumer { consumer } => format!("closeConsumer {consumer}"),
        CrashConsumer { consumer } => format!("crashConsumer {consumer}"),
        SetAck { consumer, ack } => format!("setAck {consumer} {} (process {} ms)", ack.mode.name(), ack.process_ms),
        RedeliverUnacknowledged { consumer } => format!("redeliverUnacknowledged {consumer}"),
        Produce { producer, send } => format!("produce {producer}: {} messages", send.count),
        SplitSegment { topic, segment } => format!("splitSegment {segment} of {topic}"),
        MergeSegments { topic, segments } => format!("mergeSegments {} and {} of {topic}", segments.0, segments.1),
        PruneSegment { topic, segment } => format!("pruneSegment {segment} of {topic}"),
    }
}

impl World {
    pub(super) fn handle_command_now(&mut self, cmd: scenario::Action) {
        self.emit(Event::Command { text: command_text(&cmd).into_boxed_str() });
        use scenario::Action::*;
        match cmd {
            AddConsumer { consumer } => {
                let c = self.create_consumer(consumer);
                self.start_consumer(c);
            }
            StartConsumer { consumer } => {
                if let Some(c) = self.consumer_index(&consumer) {
                    self.start_consumer(c as u32);
                }
            }
            CloseConsumer { consumer } => {
                if let Some(c) = self.consumer_index(&consumer) {
                    self.close_consumer(c as u32, false);
                }
            }
            CrashConsumer { consumer } => {
                if let Some(c) = self.consumer_index(&consumer) {
                    self.close_consumer(c as u32, true);
                }
            }
            SetAck { consumer, ack } => {
                if let Some(c) = self.consumer_index(&consumer) {
                    self.consumers[c].ack = ack;
                }
            }
            RedeliverUnacknowledged { consumer } => {
                if let Some(c) = self.consumer_index(&consumer) {
                    self.redeliver_all(c as u32, RedeliveryReason::Explicit);
                }
            }
            Produce { producer, send } => {
                if let Some(p) = self.producers.iter().position(|x| *x.name == *producer) {
                    let first = send.time_of(0);
                    let count = send.count;
                    self.producers[p].scripts.push(super::Script::new(send));
                    if count > 0 {
                        let s = self.producers[p].scripts.len() as u32 - 1;
                        let delay = first.saturating_sub(self.now);
                        self.schedule(delay, Action::ProduceTick { producer: p as u32, send: s, i: 0 });
                    }
                }
            }
            SplitSegment { topic, segment } => {
                if let Some(t) = self.topic_index(&topic) {
                    self.split_segment(t as u32, segment);
                }
            }
            MergeSegments { topic, segments } => {
                if let Some(t) = self.topic_index(&topic) {
                    self.merge_segments(t as u32, segments.0, segments.1);
                }
            }
            PruneSegment { topic, segment } => {
                if let Some(t) = self.topic_index(&topic) {
                    self.prune_segments(t as u32, &[segment]);
                }
            }
        }
    }
}
