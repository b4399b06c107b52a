//! The broker side of FLOW, acks and redelivery requests: permits reach the dispatcher, acks
//! move the cursor (markDelete plus individually acked ranges) and release pending messages
//! (which may unblock a consumer or a draining hash), redelivery puts messages back in the
//! replay set (Shared, Key_Shared) or rewinds the cursor (Exclusive, Failover).

use mqviz_engine::sort::CollectSorted;
use std::collections::BTreeSet;

use super::{Dispatcher, World};
use crate::cursor::AckOutcome;
use crate::events::{Event, RedeliveryReason};
use crate::shared_subscription::Released;

impl World {
    pub(super) fn handle_flow(&mut self, partition: u32, s: u32, consumer_id: u64, permits: u32) {
        let part = &mut self.partitions[partition as usize];
        let Some(sub) = part.subscriptions.get_mut(s as usize) else { return };
        let Some(member) = sub.members.get_mut(&consumer_id) else { return };
        let consumer = member.consumer;
        match sub.dispatcher.as_mut() {
            Some(Dispatcher::Single(_)) => member.permits = member.permits.saturating_add(permits),
            Some(Dispatcher::Shared(sh)) => sh.flow(consumer_id, permits),
            Some(Dispatcher::KeyShared(ks)) => ks.add_permits(consumer_id, permits),
            None => return,
        }
        self.emit(Event::Flow { consumer, partition, permits });
        self.request_read(partition, s, 0);
    }

    /// Grouped acks of one consumer reach the broker.
    pub(super) fn handle_acks(
        &mut self,
        partition: u32,
        s: u32,
        consumer_id: u64,
        individual: Vec<i64>,
        cumulative: Option<i64>,
    ) {
        let part = &mut self.partitions[partition as usize];
        let Some(sub) = part.subscriptions.get_mut(s as usize) else { return };
        // Acks of a consumer the broker already removed are dropped with its connection.
        let Some(member) = sub.members.get(&consumer_id) else { return };
        let consumer = member.consumer;
        let before = sub.cursor.mark_delete();
        let mut newly_acked = std::mem::take(&mut self.scratch.newly_acked);
        let mut unblocked = Released::default();
        let mut read_after: Option<u64> = None;
        let mut hash_unblocked = false;
        for &p in &individual {
            if let Ok(AckOutcome::Acked { .. }) = sub.cursor.ack(p) {
                newly_acked.push(p);
            }
            sub.redelivery.forget(p);
            match sub.dispatcher.as_mut() {
                Some(Dispatcher::Shared(sh)) => {
                    let r = sh.ack(consumer_id, p);
                    unblocked.consumer_unblocked |= r.consumer_unblocked;
                    unblocked.subscription_unblocked |= r.subscription_unblocked;
                }
                Some(Dispatcher::KeyShared(ks)) => {
                    let r = ks.ack(consumer_id, p);
                    unblocked.consumer_unblocked |= r.consumer_unblocked;
                    if let Some(ms) = r.read_after_ms {
                        hash_unblocked = true;
                        read_after = Some(read_after.map_or(ms, |x| x.min(ms)));
                    }
                }
                _ => {}
            }
        }
        if let Some(p) = cumulative {
            let from = sub.cursor.mark_delete() + 1;
            let covered: Vec<i64> = (from..=p.min(sub.cursor.last_entry())).filter(|&q| !sub.cursor.is_acked(q)).collect();
            if let Ok(AckOutcome::Acked { .. }) = sub.cursor.ack_cumulative(p) {
                newly_acked.extend(covered);
            }
        }
        let mark_delete = sub.cursor.mark_delete();
        let moved = mark_delete != before;
        let mut joiner_released = false;
        if moved {
            sub.redelivery.forget_up_to(mark_delete);
            if let Some(Dispatcher::KeyShared(ks)) = sub.dispatcher.as_mut() {
                joiner_released = ks.on_mark_delete(mark_delete);
            }
        }
        // The log keeps backlogs as u32 (a run holds far fewer messages), keeping entries small.
        let backlog = u32::try_from(sub.cursor.backlog()).unwrap_or(u32::MAX);
        let event = self.emit(Event::AcksApplied {
            consumer,
            partition,
            sub: s,
            acked: newly_acked.len() as u32,
            cumulative: cumulative.is_some(),
            moved,
            mark_delete,
            backlog,
        });
        for &p in &newly_acked {
            self.index_entry(partition, p, event);
        }
        newly_acked.clear();
        self.scratch.newly_acked = newly_acked;
        self.recycle_positions(individual);
        if unblocked.consumer_unblocked {
            self.emit(Event::ConsumerUnblocked { consumer, partition, unacked: 0 });
        }
        if hash_unblocked {
            self.emit(Event::HashUnblocked { partition, sub: s, consumer });
        }
        if unblocked.consumer_unblocked || unblocked.subscription_unblocked || joiner_released {
            self.request_read(partition, s, 0);
        }
        if let Some(ms) = read_after {
            self.request_read(partition, s, ms);
        }
        self.check_end_of_topic(partition, s);
    }

    /// A consumer asks for redelivery: `None` means everything it has not acked.
    pub(super) fn handle_redeliver(
        &mut self,
        partition: u32,
        s: u32,
        consumer_id: u64,
        positions: Option<Vec<i64>>,
        epoch: u32,
        reason: RedeliveryReason,
    ) {
        let part = &mut self.partitions[partition as usize];
        let Some(sub) = part.subscriptions.get_mut(s as usize) else { return };
        let Some(member) = sub.members.get_mut(&consumer_id) else { return };
        member.epoch = member.epoch.max(epoch);
        let consumer = member.consumer;
        let returned: Vec<i64> = match sub.dispatcher.as_mut() {
            Some(Dispatcher::Single(d)) => {
                // Only the active consumer's request rewinds, and not while a switch is pending.
                if d.active == Some(consumer_id) && !d.ignores_flow_and_redeliver() {
                    self.rewind(partition, s, Some(consumer));
                }
                return;
            }
            Some(Dispatcher::Shared(sh)) => {
                let pending: BTreeSet<i64> = sh.pending_positions(consumer_id).into_iter().collect_set();
                let ps: Vec<i64> = positions.unwrap_or_else(|| pending.iter().copied().collect());
                let ps: Vec<i64> = ps.into_iter().filter(|p| pending.contains(p)).collect();
                sh.redeliver(consumer_id, &ps);
                ps
            }
            Some(Dispatcher::KeyShared(ks)) => {
                let Some(c) = ks.consumer(consumer_id) else { return };
                let ps: Vec<i64> = positions.unwrap_or_else(|| c.pending_positions());
                let ps: Vec<i64> = ps.into_iter().filter(|&p| c.pending_hash(p).is_some()).collect();
                // Any draining hash this released is picked up by the read below.
                ks.redeliver(consumer_id, &ps);
                ps
            }
            None => return,
        };
        for &p in &returned {
            sub.redelivery.increment(p);
        }
        let event = self.emit(Event::ReturnedToReplay { partition, sub: s, consumer, entries: returned.len() as u32, reason });
        for p in returned {
            self.index_entry(partition, p, event);
        }
        self.request_read(partition, s, 0);
    }

    /// Rewinds a single-active subscription's cursor to markDelete+1: every unacked entry will
    /// be read again (individually acked ones are skipped).
    pub(super) fn rewind(&mut self, partition: u32, s: u32, for_consumer: Option<u32>) -> Vec<i64> {
        let part = &mut self.partitions[partition as usize];
        let sub = &mut part.subscriptions[s as usize];
        let read_before = sub.cursor.read_end();
        let mark_delete = sub.cursor.mark_delete();
        sub.cursor.rewind();
        let again: Vec<i64> = (mark_delete + 1..read_before).filter(|&p| !sub.cursor.is_acked(p)).collect();
        if let Some(consumer) = for_consumer {
            let event = self.emit(Event::Rewound {
                partition,
                sub: s,
                consumer,
                rewound_to: mark_delete + 1,
                redelivered: again.len() as u32,
            });
            for &p in &again {
                self.index_entry(partition, p, event);
            }
            self.request_read(partition, s, 0);
        }
        again
    }
}
