//! Client-side redelivery: negative acks wait out their delay (timer every delay/3), ack
//! timeouts tick every second, and both ask the broker for redelivery: of those messages on
//! Shared and Key_Shared, of everything unacked (a cursor rewind) on Exclusive and Failover.
//! A delivery at the dead-letter limit that is nacked or times out again is published to the
//! dead-letter topic and acked; `reconsumeLater` publishes a delayed copy to the retry topic.

use super::{Action, CopyOf, Delivery, Outgoing, PendingAck, TopicRole, World, NO_PRODUCER};
use crate::defaults::{ACK_TIMEOUT_TICK_MS, MAX_RECONSUME_TIMES_DEFAULT_FOR_RETRY};
use crate::events::{Event, RedeliveryReason};
use crate::subscription::{redelivery_scope, RedeliveryScope};

impl World {
    /// `negativeAcknowledge`: the entry waits in the tracker for its delay.
    pub(super) fn nack(&mut self, c: u32, d: Delivery) {
        let now = self.now;
        let con = &mut self.consumers[c as usize];
        con.stats.nacked += 1;
        let att = &mut con.attachments[d.attachment as usize];
        if let Some(t) = att.ack_timeout.as_mut() {
            t.remove(d.entry);
        }
        // The whole entry comes back later (a new copy, with an acker of its own); this copy's
        // acker keeps the nacked message, so acking the others cannot ack the entry.
        let timer = att.nacks.nack(d.entry, d.redelivery_count, now);
        self.emit(Event::Nacked { consumer: c, msg: d.msg });
        if let Some(at) = timer {
            let con = &mut self.consumers[c as usize];
            con.attachments[d.attachment as usize].nack_timer = true;
            let inc = con.incarnation;
            self.schedule(at - now, Action::NackTimer { consumer: c, incarnation: inc, attachment: d.attachment });
        }
    }

    pub(super) fn handle_nack_timer(&mut self, c: u32, incarnation: u32, a: u32) {
        if !self.consumer_alive(c, incarnation) {
            return;
        }
        let now = self.now;
        let att = &mut self.consumers[c as usize].attachments[a as usize];
        let (due, next) = att.nacks.on_timer(now);
        att.nack_timer = next.is_some();
        if let Some(at) = next {
            self.schedule(at - now, Action::NackTimer { consumer: c, incarnation, attachment: a });
        }
        if !due.is_empty() {
            self.redeliver_positions(c, a, due, RedeliveryReason::NegativeAck);
        }
    }

    pub(super) fn handle_ack_timeout_tick(&mut self, c: u32, incarnation: u32) {
        if !self.consumer_alive(c, incarnation) {
            return;
        }
        let n = self.consumers[c as usize].attachments.len();
        for a in 0..n {
            let att = &mut self.consumers[c as usize].attachments[a];
            if att.closed {
                continue;
            }
            let Some(t) = att.ack_timeout.as_mut() else { continue };
            let expired = t.on_tick();
            if expired.is_empty() {
                continue;
            }
            let partition = att.partition;
            self.consumers[c as usize].stats.ack_timeouts += expired.len() as u64;
            self.emit(Event::AckTimedOut { consumer: c, partition, entries: expired.len() as u32 });
            self.redeliver_positions(c, a as u32, expired, RedeliveryReason::AckTimeout);
        }
        self.schedule(ACK_TIMEOUT_TICK_MS, Action::AckTimeoutTick { consumer: c, incarnation });
    }

    /// Asks for these entries again: dead-letter candidates go to the DLQ instead; on Exclusive
    /// and Failover the client asks for everything unacked.
    fn redeliver_positions(&mut self, c: u32, a: u32, positions: Vec<i64>, reason: RedeliveryReason) {
        let scope = redelivery_scope(self.consumers[c as usize].spec.subscription_type());
        if scope == RedeliveryScope::AllUnacked {
            self.redeliver_all(c, reason);
            return;
        }
        let mut again = Vec::with_capacity(positions.len());
        for p in positions {
            let att = &self.consumers[c as usize].attachments[a as usize];
            // A candidate's last delivery had redeliveryCount >= maxRedeliverCount
            // (`DeadLetterPolicy::on_nack_or_timeout` says: publish to the DLQ and ack).
            let to_dlq = att.dead_letter.is_some() && att.dead_letter_candidates.contains(&p);
            if to_dlq {
                let deliveries = self.consumers[c as usize].attachments[a as usize]
                    .dead_letter
                    .as_ref()
                    .map_or(0, |d| d.max_redeliver_count + 1);
                self.dead_letter_entry(c, a, p, deliveries);
            } else {
                again.push(p);
            }
        }
        if again.is_empty() {
            return;
        }
        let con = &self.consumers[c as usize];
        let att = &con.attachments[a as usize];
        if !att.connected || att.closed {
            return;
        }
        let (partition, subscription, consumer_id, epoch, latency) =
            (att.partition, att.subscription, att.consumer_id, att.epoch, con.latency);
        self.emit(Event::RedeliveryRequested {
            consumer: c,
            partition: Some(partition),
            messages: Some(again.len() as u32),
            reason,
        });
        self.schedule(
            latency,
            Action::RedeliverArrive { partition, subscription, consumer_id, positions: Some(again), epoch, reason },
        );
    }

    /// `redeliverUnacknowledgedMessages()`: the receiver queue is cleared (its permits flow back),
    /// the epoch moves on so deliveries already on the wire are dropped, and the broker is asked
    /// for everything unacked.
    pub(super) fn redeliver_all(&mut self, c: u32, reason: RedeliveryReason) {
        if !self.consumers[c as usize].running() {
            return;
        }
        let con = &mut self.consumers[c as usize];
        let mut cleared: Vec<u32> = vec![0; con.attachments.len()];
        for d in con.incoming.drain(..) {
            cleared[d.attachment as usize] += 1;
        }
        let latency = con.latency;
        self.emit(Event::RedeliveryRequested { consumer: c, partition: None, messages: None, reason });
        for (a, &returned) in cleared.iter().enumerate() {
            let att = &mut self.consumers[c as usize].attachments[a];
            if !att.connected || att.closed {
                continue;
            }
            att.epoch += 1;
            att.batch_left.clear();
            let (partition, subscription, consumer_id, epoch) = (att.partition, att.subscription, att.consumer_id, att.epoch);
            self.schedule(
                latency,
                Action::RedeliverArrive { partition, subscription, consumer_id, positions: None, epoch, reason },
            );
            if returned > 0 {
                self.send_flow(c, a as u32, returned);
            }
        }
    }

    /// Publishes every message of the entry to the dead-letter topic and acks the original.
    pub(super) fn dead_letter_entry(&mut self, c: u32, a: u32, entry: i64, deliveries: u32) {
        let partition = self.consumers[c as usize].attachments[a as usize].partition;
        let dlq_name = self.dead_letter_topic_of(c, a);
        let dlq = self.internal_topic(&dlq_name, TopicRole::DeadLetter);
        let e = self.partitions[partition as usize].entries[entry as usize];
        let (real_topic, ledger) =
            (self.partitions[partition as usize].name.clone(), self.partitions[partition as usize].ledger_id);
        let consumer = self.consumers[c as usize].name.clone();
        let mut copies = Vec::new();
        for msg in e.first_msg..e.first_msg + e.messages {
            let m = &self.messages[msg as usize];
            let origin_id = crate::message_id::MessageId { ledger_id: ledger, entry_id: entry, batch_index: m.batch_index };
            copies.push(Outgoing {
                copy: Some(Box::new(CopyOf {
                    origin: m.root(msg),
                    retry: false,
                    reconsume_times: 0,
                    real_topic: real_topic.clone(),
                    origin_id,
                    by: consumer.clone(),
                })),
                producer: NO_PRODUCER,
                born_at: self.now,
                deliver_at: 0,
                ..m.out.clone()
            });
            self.emit(Event::DeadLettered { consumer: c, msg, dead_letter_partition: dlq, deliveries });
        }
        let con = &mut self.consumers[c as usize];
        con.stats.dead_lettered += u64::from(e.messages);
        let latency = con.latency;
        let att = &mut con.attachments[a as usize];
        att.dead_letter_candidates.remove(&entry);
        att.batch_left.remove(&entry);
        if let Some(t) = att.ack_timeout.as_mut() {
            t.remove(entry);
        }
        // The DLQ producer sends a batch of one entry per message; then the original is acked.
        for m in copies {
            self.schedule(
                latency,
                Action::PublishArrive { producer: NO_PRODUCER, partition: dlq, batched: false, messages: vec![m] },
            );
        }
        self.queue_ack(c, PendingAck { attachment: a, position: entry, cumulative: false });
    }

    /// `reconsumeLater`: a copy with RECONSUMETIMES+1 goes to the retry topic, delayed; the
    /// original is acked. Past `maxRedeliverCount` reconsumes the copy goes to the DLQ instead.
    pub(super) fn reconsume_later(&mut self, c: u32, d: Delivery) {
        let con = &self.consumers[c as usize];
        let Some(retry) = con.retry_partition else { return self.ack_message_of_entry(c, d) };
        let m = &self.messages[d.msg as usize];
        let times = m.out.copy.as_ref().filter(|x| x.retry).map_or(0, |x| x.reconsume_times) + 1;
        let max = con.spec.dead_letter.as_ref().map_or(MAX_RECONSUME_TIMES_DEFAULT_FOR_RETRY, |p| p.max_redeliver_count);
        let partition = con.attachments[d.attachment as usize].partition;
        if times > max {
            self.dead_letter_entry(c, d.attachment, d.entry, times);
            return;
        }
        let delay = con.ack.retry_delay_ms;
        let (consumer, latency) = (con.name.clone(), con.latency);
        let part = &self.partitions[partition as usize];
        let origin_id = crate::message_id::MessageId { ledger_id: part.ledger_id, entry_id: d.entry, batch_index: m.batch_index };
        let copy = Outgoing {
            copy: Some(Box::new(CopyOf {
                origin: m.root(d.msg),
                retry: true,
                reconsume_times: times,
                real_topic: part.name.clone(),
                origin_id,
                by: consumer.clone(),
            })),
            producer: NO_PRODUCER,
            born_at: self.now,
            deliver_at: self.now + delay,
            ..m.out.clone()
        };
        self.consumers[c as usize].stats.reconsumed += 1;
        self.emit(Event::Reconsumed { consumer: c, msg: d.msg, retry_partition: retry, reconsume_times: times, delay_ms: delay });
        self.schedule(
            latency,
            Action::PublishArrive { producer: NO_PRODUCER, partition: retry, batched: false, messages: vec![copy] },
        );
        self.ack_message_of_entry(c, d);
    }
}
