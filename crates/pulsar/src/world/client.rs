//! The client side of a consumer: the receiver queue, the application working through it one
//! message at a time, FLOW permits when half the queue was consumed, and acknowledgement
//! grouping (acks go out every `acknowledgementsGroupTimeMs`, or at 1,000 pending).

use super::{Action, BatchAcker, DeliverItem, Delivery, PendingAck, ReceivedRecord, World};
use crate::cursor::DeliveryVerdict;
use crate::events::Event;
use crate::scenario::{AckMode, ScalableConsumerType};
use mqviz_engine::sort::StableSort;

/// `maxAcknowledgmentGroupSize`: a full group is sent at once.
const MAX_ACK_GROUP_SIZE: usize = 1_000;

/// What the application does with one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ack,
    AckCumulative,
    Nack,
    Reconsume,
    Nothing,
}

impl World {
    /// Entries arrive in the receiver queues.
    pub(super) fn handle_deliver(&mut self, items: Vec<DeliverItem>) {
        let mut touched = std::mem::take(&mut self.scratch.touched);
        for &it in &items {
            let Some(con) = self.consumers.get(it.consumer as usize) else { continue };
            if !con.running() {
                continue;
            }
            let Some(att) = con.attachments.get(it.attachment as usize) else { continue };
            // Stale: another v4 consumer now, or closed.
            if att.consumer_id != it.consumer_id || att.closed {
                continue;
            }
            let entry = self.partitions[it.partition as usize].entries[it.entry as usize];
            if it.epoch < att.epoch {
                // Sent before a redeliver-all: Java queues it, and `internalReceive` counts it
                // processed (its permits flow back) before it skips it for its old epoch. Without
                // the permits a small receiver queue would wait for ever (fuzz seed 131).
                self.return_permits(it.consumer, it.attachment, entry.messages);
                continue;
            }
            if att.receiver_queue == 0 && entry.messages > 1 {
                // ZeroQueueConsumerImpl cannot take a batch: it closes itself.
                let con = &self.consumers[it.consumer as usize];
                let reason =
                    format!("Unsupported Batch message with 0 size receiver queue for [{}]-[{}]", con.subscription, con.name);
                self.emit(Event::ClientError { consumer: it.consumer, reason: reason.clone().into_boxed_str() });
                self.close_consumer(it.consumer, false);
                self.consumers[it.consumer as usize].failure = Some(reason);
                continue;
            }
            let verdict = att.dead_letter.as_ref().map(|p| p.on_delivery(it.redelivery_count));
            if verdict == Some(DeliveryVerdict::DeadLetter) {
                // Past the limit: straight to the dead-letter topic, never shown to the application.
                self.dead_letter_entry(it.consumer, it.attachment, it.entry, it.redelivery_count + 1);
                continue;
            }
            let att = &mut self.consumers[it.consumer as usize].attachments[it.attachment as usize];
            if verdict == Some(DeliveryVerdict::ShowToApp { dead_letter_candidate: true }) {
                att.dead_letter_candidates.insert(it.entry);
            }
            let receipt = if entry.messages > 1 {
                att.receipts += 1;
                att.batch_left.insert(it.entry, BatchAcker { receipt: att.receipts, left: entry.messages });
                att.receipts
            } else {
                0
            };
            for k in 0..entry.messages {
                let msg = entry.first_msg + k;
                let event = self.emit(Event::Received { consumer: it.consumer, msg, redelivery_count: it.redelivery_count });
                let con = &mut self.consumers[it.consumer as usize];
                con.stats.received += 1;
                con.received.push(ReceivedRecord { msg, redelivery_count: it.redelivery_count, event });
                con.incoming.push_back(Delivery {
                    attachment: it.attachment,
                    msg,
                    entry: it.entry,
                    redelivery_count: it.redelivery_count,
                    receipt,
                });
            }
            if touched.last() != Some(&it.consumer) {
                touched.push(it.consumer);
            }
        }
        self.recycle_items(items);
        touched.stable_sort();
        touched.dedup();
        for &c in &touched {
            self.app_drain(c);
        }
        touched.clear();
        self.scratch.touched = touched;
    }

    /// The application takes messages from the receiver queue until it is busy or the queue is empty.
    pub(super) fn app_drain(&mut self, c: u32) {
        loop {
            let con = &mut self.consumers[c as usize];
            if !con.running() || con.processing.is_some() {
                return;
            }
            let Some(d) = con.incoming.pop_front() else { return };
            self.take_from_queue(c, d);
            let con = &mut self.consumers[c as usize];
            if con.ack.process_ms == 0 {
                self.finish_message(c, d);
            } else {
                con.processing = Some(d);
                let (delay, inc) = (con.ack.process_ms, con.incarnation);
                self.schedule(delay, Action::ProcessDone { consumer: c, incarnation: inc });
                return;
            }
        }
    }

    pub(super) fn handle_process_done(&mut self, c: u32, incarnation: u32) {
        if !self.consumer_alive(c, incarnation) {
            return;
        }
        if let Some(d) = self.consumers[c as usize].processing.take() {
            self.finish_message(c, d);
        }
        self.app_drain(c);
    }

    /// `receive()` returned `d`: permits flow back once half the queue was consumed, and the
    /// ack-timeout clock starts.
    fn take_from_queue(&mut self, c: u32, d: Delivery) {
        let att = &mut self.consumers[c as usize].attachments[d.attachment as usize];
        if let Some(t) = att.ack_timeout.as_mut() {
            t.add(d.entry);
        }
        self.return_permits(c, d.attachment, 1);
    }

    /// Messages taken from the receiver queue give their permits back, in one FLOW once half the
    /// queue's worth has been taken (`increaseAvailablePermits`).
    fn return_permits(&mut self, c: u32, a: u32, messages: u32) {
        let att = &mut self.consumers[c as usize].attachments[a as usize];
        if att.receiver_queue == 0 {
            return;
        }
        att.taken_since_flow += messages;
        if att.taken_since_flow >= (att.receiver_queue / 2).max(1) {
            let permits = std::mem::take(&mut att.taken_since_flow);
            self.send_flow(c, a, permits);
        }
    }

    pub(super) fn send_flow(&mut self, c: u32, a: u32, permits: u32) {
        let con = &mut self.consumers[c as usize];
        let att = &con.attachments[a as usize];
        if !att.connected || att.closed {
            return;
        }
        con.stats.flows += 1;
        let (partition, subscription, consumer_id, latency) = (att.partition, att.subscription, att.consumer_id, con.latency);
        self.schedule(latency, Action::FlowArrive { partition, subscription, consumer_id, permits });
    }

    /// What the application decides for a message it received.
    fn outcome(&mut self, c: u32, d: Delivery) -> Outcome {
        let con = &mut self.consumers[c as usize];
        if !con.ack.nack_keys.is_empty() {
            let key = self.messages[d.msg as usize].out.key.map(|k| self.keys.text(k));
            if key.is_some_and(|k| con.ack.nack_keys.iter().any(|n| n == k)) {
                return Outcome::Nack;
            }
        }
        if con.ack.nack_first > 0 {
            let seen = con.seen.entry(d.msg).or_insert(0);
            *seen += 1;
            if *seen <= con.ack.nack_first {
                return Outcome::Nack;
            }
        }
        let stream = con.spec.scalable_type() == Some(ScalableConsumerType::Stream);
        match con.ack.mode {
            // A STREAM consumer only acks cumulatively (per segment).
            AckMode::Individual if stream => Outcome::AckCumulative,
            AckMode::Individual => Outcome::Ack,
            AckMode::Cumulative => Outcome::AckCumulative,
            AckMode::Never => Outcome::Nothing,
            AckMode::Nack => Outcome::Nack,
            AckMode::Retry => Outcome::Reconsume,
        }
    }

    /// The application is done with `d`.
    fn finish_message(&mut self, c: u32, d: Delivery) {
        match self.outcome(c, d) {
            Outcome::Ack => self.ack_individual(c, d),
            Outcome::AckCumulative => self.ack_cumulative(c, d),
            Outcome::Nack => self.nack(c, d),
            Outcome::Reconsume => self.reconsume_later(c, d),
            Outcome::Nothing => {}
        }
        // A zero-queue consumer asks for the next message once it is ready for it.
        if self.consumers[c as usize].attachments[d.attachment as usize].receiver_queue == 0 {
            self.send_flow(c, d.attachment, 1);
        }
    }

    fn ack_individual(&mut self, c: u32, d: Delivery) {
        let con = &mut self.consumers[c as usize];
        con.stats.acked += 1;
        con.acked.push(d.msg);
        self.ack_message_of_entry(c, d);
    }

    /// Acks one message: its entry, once every message of the copy it came in is acked.
    pub(super) fn ack_message_of_entry(&mut self, c: u32, d: Delivery) {
        let att = &mut self.consumers[c as usize].attachments[d.attachment as usize];
        if let Some(t) = att.ack_timeout.as_mut() {
            t.remove(d.entry);
        }
        if d.receipt != 0 {
            // A batch: only the acker of the copy received last can ack the entry. A message of
            // an earlier copy (the entry came back after a nack, a timeout or a rewind) is acked
            // on that copy's acker, which the nacked or unacked message keeps from completing.
            let Some(acker) = att.batch_left.get_mut(&d.entry).filter(|a| a.receipt == d.receipt) else { return };
            acker.left = acker.left.saturating_sub(1);
            if acker.left > 0 {
                return;
            }
            att.batch_left.remove(&d.entry);
        }
        att.dead_letter_candidates.remove(&d.entry);
        self.queue_ack(c, PendingAck { attachment: d.attachment, position: d.entry, cumulative: false });
    }

    fn ack_cumulative(&mut self, c: u32, d: Delivery) {
        let con = &mut self.consumers[c as usize];
        con.stats.acked += 1;
        con.acked.push(d.msg);
        let batch_index = self.messages[d.msg as usize].batch_index;
        let att = &mut con.attachments[d.attachment as usize];
        // Inside a batch, only the entries before this one are complete.
        let complete = match (batch_index, att.batch_left.get_mut(&d.entry)) {
            (Some(_), Some(acker)) if acker.left > 1 && acker.receipt == d.receipt => {
                acker.left -= 1;
                d.entry - 1
            }
            _ => d.entry,
        };
        if complete < 0 {
            return;
        }
        att.batch_left.retain(|&e, _| e > complete);
        if let Some(t) = att.ack_timeout.as_mut() {
            t.remove_up_to(complete);
        }
        att.dead_letter_candidates.retain(|&e| e > complete);
        self.queue_ack(c, PendingAck { attachment: d.attachment, position: complete, cumulative: true });
    }

    pub(super) fn queue_ack(&mut self, c: u32, ack: PendingAck) {
        let con = &mut self.consumers[c as usize];
        con.pending_acks.push(ack);
        let group_ms = con.spec.ack_group_time_ms;
        if group_ms == 0 || con.pending_acks.len() >= MAX_ACK_GROUP_SIZE {
            self.flush_acks(c);
        } else if !con.flush_scheduled {
            con.flush_scheduled = true;
            let inc = con.incarnation;
            self.schedule(group_ms, Action::AckFlush { consumer: c, incarnation: inc });
        }
    }

    pub(super) fn handle_ack_flush(&mut self, c: u32, incarnation: u32) {
        if !self.consumer_alive(c, incarnation) {
            return;
        }
        self.consumers[c as usize].flush_scheduled = false;
        self.flush_acks(c);
    }

    /// Sends the grouped acks, one command per v4 consumer.
    pub(super) fn flush_acks(&mut self, c: u32) {
        let con = &mut self.consumers[c as usize];
        if con.pending_acks.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut con.pending_acks);
        let latency = con.latency;
        let mut per_attachment: Vec<(u32, Vec<i64>, Option<i64>)> = Vec::new();
        for ack in pending.drain(..) {
            let slot = match per_attachment.iter().position(|(a, _, _)| *a == ack.attachment) {
                Some(i) => i,
                None => {
                    per_attachment.push((ack.attachment, self.scratch.positions_pool.pop().unwrap_or_default(), None));
                    per_attachment.len() - 1
                }
            };
            let (_, individual, cumulative) = &mut per_attachment[slot];
            if ack.cumulative {
                *cumulative = Some(cumulative.map_or(ack.position, |p: i64| p.max(ack.position)));
            } else {
                individual.push(ack.position);
            }
        }
        // The emptied buffer keeps its capacity for the next group (an ack group is flushed
        // about every 100 ms per consumer: this path allocated several times per flush).
        self.consumers[c as usize].pending_acks = pending;
        for (a, individual, cumulative) in per_attachment {
            let att = &self.consumers[c as usize].attachments[a as usize];
            if !att.connected {
                self.recycle_positions(individual);
                continue;
            }
            let (partition, subscription, consumer_id) = (att.partition, att.subscription, att.consumer_id);
            self.schedule(latency, Action::AckArrive { partition, subscription, consumer_id, individual, cumulative });
        }
    }

    /// `ReachedEndOfTopic`: the segment (or topic) was terminated and everything has been read.
    pub(super) fn handle_end_of_topic(&mut self, c: u32, incarnation: u32, a: u32) {
        if !self.consumer_alive(c, incarnation) {
            return;
        }
        let con = &mut self.consumers[c as usize];
        let Some(att) = con.attachments.get_mut(a as usize) else { return };
        if att.reached_end || att.closed {
            return;
        }
        att.reached_end = true;
        let partition = att.partition;
        self.emit(Event::ReachedEndOfTopic { consumer: c, partition });
    }
}
