//! Consumption: concurrent batches, orderly queues, send-back, retry and DLQ.
//!
//! A listener that started runs to its end unless the process dies: a completion for a dropped
//! ProcessQueue still consumed its messages (the business logic ran), but its result is discarded
//! (`ConsumeRequest.run` skips `processConsumeResult`), so the new owner consumes them again.

use super::*;

impl World {
    /// A concurrently consumed batch returns (`ConsumeMessageConcurrentlyService.ConsumeRequest`).
    pub(super) fn handle_consume_done(&mut self, r: PqRef, msgs: Vec<MsgId>, started_at: Millis) {
        if self.consumers[r.c].crashed_in(r.inc) {
            return;
        }
        if self.live_pq(&r).is_none() {
            self.discard_results(&r, &msgs, started_at, None);
            return;
        }
        for &m in &msgs {
            let times = u32::from(self.messages[m as usize].reconsume_times());
            if !self.consumers[r.c].fails(times) {
                self.record_consumed(&r, m, started_at, times, false, None);
                continue;
            }
            let client = self.consumers[r.c].client_id.clone();
            self.consumers[r.c].stats.failed += 1;
            self.emit(Event::ConsumeFailed { msg: m, client, reconsume_times: times });
            if self.consumers[r.c].model == MessageModel::Clustering {
                self.consumers[r.c].stats.retried += 1;
                let group = self.consumers[r.c].group.clone();
                let broker = self.messages[m as usize].broker();
                let latency = self.consumers[r.c].latency;
                self.schedule(latency, Action::SendBackArrive(Box::new(wide::SendBackArrive { broker, msg: m, group })));
            }
        }
        let con = &mut self.consumers[r.c];
        let pq = con.pq_mut(&r.mq, r.pq).expect("live_pq checked it");
        for &m in &msgs {
            let off = self.messages[m as usize].queue_offset();
            pq.in_flight.remove(&off);
        }
        if let Some(o) = pq.committed_offset() {
            let e = con.offsets.entry(r.mq).or_insert(0);
            *e = (*e).max(o);
        }
    }

    /// The listener ran for a ProcessQueue that was dropped meanwhile: what succeeded counts as
    /// consumed, nothing is acknowledged, sent back or committed.
    fn discard_results(&mut self, r: &PqRef, msgs: &[MsgId], started_at: Millis, lock: Option<LockGrantId>) {
        for &m in msgs {
            let times = u32::from(self.messages[m as usize].reconsume_times()) + self.local_reconsume_of(r, m);
            if self.consumers[r.c].fails(times) {
                let client = self.consumers[r.c].client_id.clone();
                self.consumers[r.c].stats.failed += 1;
                self.emit(Event::ConsumeFailed { msg: m, client, reconsume_times: times });
            } else {
                self.record_consumed(r, m, started_at, times, true, lock);
            }
        }
        let client = self.consumers[r.c].client_id.clone();
        self.emit(Event::ResultsDiscarded { client, mq: r.mq.clone(), count: msgs.len() as u32 });
    }

    fn local_reconsume_of(&self, r: &PqRef, m: MsgId) -> u32 {
        self.consumers[r.c].pq(&r.mq, r.pq).and_then(|pq| pq.local_reconsume.get(&m).copied()).unwrap_or(0)
    }

    /// New messages in an orderly ProcessQueue: a consume task starts unless one already runs or
    /// waits (`putMessage` returns `dispatchToConsume` only when the queue is not consuming).
    pub(super) fn kick_orderly(&mut self, r: &PqRef) {
        let Some(pq) = self.consumers[r.c].pq(&r.mq, r.pq) else { return };
        if pq.orderly_task == OrderlyTask::Idle && !pq.in_flight.is_empty() {
            self.run_orderly_task(r);
        }
    }

    /// One turn of `ConsumeMessageOrderlyService.ConsumeRequest.run`'s loop: stop on a dropped
    /// queue; without a usable lock, re-lock later; else run the listener on the first message.
    fn run_orderly_task(&mut self, r: &PqRef) {
        let now = self.now;
        let clustering = self.consumers[r.c].model == MessageModel::Clustering;
        let delay = self.consumers[r.c].spec.consume_time_ms;
        let Some(pq) = self.consumers[r.c].pq_mut(&r.mq, r.pq) else { return };
        if pq.dropped {
            pq.orderly_task = OrderlyTask::Idle;
            return;
        }
        if clustering && !pq.lock_usable(now) {
            // tryLockLaterAndReconsume(10 ms)
            pq.orderly_task = OrderlyTask::Waiting;
            self.schedule(ORDERLY_RELOCK_DELAY, Action::OrderlyRelock { pq: Box::new(r.clone()) });
            return;
        }
        let Some((_, &m)) = pq.in_flight.iter().next() else {
            pq.orderly_task = OrderlyTask::Idle;
            return;
        };
        pq.orderly_task = OrderlyTask::Listening { msg: m, started_at: now, until: now + delay };
        self.schedule(delay, Action::OrderlyConsumeDone { pq: Box::new(r.clone()), msg: m });
    }

    /// A scheduled orderly task starts (`submitConsumeRequestLater`).
    pub(super) fn handle_orderly_resume(&mut self, r: PqRef) {
        if self.live_pq(&r).is_some() {
            self.run_orderly_task(&r);
        } else if let Some(pq) = self.consumers[r.c].pq_mut(&r.mq, r.pq) {
            pq.orderly_task = OrderlyTask::Idle;
        }
    }

    /// `tryLockLaterAndReconsume`: `lockOneMQ`, then resume in 10 ms, or in 3 s if refused.
    pub(super) fn handle_orderly_relock(&mut self, r: PqRef) {
        if self.live_pq(&r).is_none() {
            if let Some(pq) = self.consumers[r.c].pq_mut(&r.mq, r.pq) {
                pq.orderly_task = OrderlyTask::Idle;
            }
            return;
        }
        let delay = if self.lock_queue(r.c, &r.mq) { ORDERLY_RELOCK_DELAY } else { ORDERLY_RELOCK_RETRY };
        self.schedule(delay, Action::OrderlyResume { pq: Box::new(r) });
    }

    /// The orderly listener returns. SUCCESS commits and the loop goes on at once;
    /// SUSPEND_CURRENT_QUEUE_A_MOMENT keeps the message and retries it locally after 1 s. A
    /// dropped queue's result is discarded, and a removal waiting for this listener completes.
    pub(super) fn handle_orderly_done(&mut self, r: PqRef, m: MsgId) {
        if self.consumers[r.c].crashed_in(r.inc) {
            return;
        }
        let (started_at, lock) = match self.consumers[r.c].pq(&r.mq, r.pq).map(|pq| pq.orderly_task) {
            Some(OrderlyTask::Listening { started_at, .. }) => (started_at, self.held_lock_grant(&r)),
            _ => (self.now.saturating_sub(self.consumers[r.c].spec.consume_time_ms), None),
        };
        if self.live_pq(&r).is_none() {
            self.discard_results(&r, &[m], started_at, lock);
            let waits = self.consumers[r.c].pq(&r.mq, r.pq).is_some_and(|pq| pq.removal_waits_for_listener);
            if let Some(pq) = self.consumers[r.c].pq_mut(&r.mq, r.pq) {
                pq.orderly_task = OrderlyTask::Idle;
            }
            if waits {
                self.finish_orderly_removal(r.c, &r.mq);
                self.consumers[r.c].pqs.remove(&r.mq);
            }
            return;
        }
        let local = self.local_reconsume_of(&r, m);
        let times = u32::from(self.messages[m as usize].reconsume_times()) + local;
        if self.consumers[r.c].fails(times) {
            let client = self.consumers[r.c].client_id.clone();
            let con = &mut self.consumers[r.c];
            con.stats.failed += 1;
            con.stats.local_retries += 1;
            let pq = con.pq_mut(&r.mq, r.pq).expect("live");
            *pq.local_reconsume.entry(m).or_insert(0) += 1;
            pq.orderly_task = OrderlyTask::Waiting;
            self.emit(Event::ConsumeFailed { msg: m, client, reconsume_times: times });
            // SUSPEND_CURRENT_QUEUE_A_MOMENT: the same message again after 1 s; the queue waits.
            self.schedule(SUSPEND_ORDERLY, Action::OrderlyResume { pq: Box::new(r) });
            return;
        }
        self.record_consumed(&r, m, started_at, times, false, lock);
        let off = self.messages[m as usize].queue_offset();
        let con = &mut self.consumers[r.c];
        let pq = con.pq_mut(&r.mq, r.pq).expect("live");
        pq.in_flight.remove(&off);
        pq.local_reconsume.remove(&m);
        pq.orderly_task = OrderlyTask::Idle;
        if let Some(o) = pq.committed_offset() {
            let e = con.offsets.entry(r.mq.clone()).or_insert(0);
            *e = (*e).max(o);
        }
        self.run_orderly_task(&r);
    }

    /// The broker lock grant this consumer holds for the queue, if any.
    fn held_lock_grant(&self, r: &PqRef) -> Option<LockGrantId> {
        let b = self.broker_index(&r.mq.broker)?;
        let key = (self.consumers[r.c].group.to_string(), r.mq.clone());
        let lock = self.brokers[b].locks.get(&key)?;
        (lock.client_id == self.consumers[r.c].client_id).then_some(lock.grant)
    }

    pub(super) fn handle_send_back(&mut self, b: usize, m: MsgId, group: Name) {
        let orig = self.messages[m as usize].clone();
        let id = self.messages.len() as MsgId;
        if u32::from(orig.reconsume_times()) >= MAX_RECONSUME_TIMES {
            let dlq = crate::types::dlq_topic(&group);
            self.brokers[b].ensure_topic(&dlq, 1);
            self.assign_partition_ids(b, &dlq);
            self.emit(Event::MovedToDlq { msg: m, group });
            self.fates.push(Fate::Pending);
            let shape = Arc::new(Shape { topic: name(&dlq), ..(*orig.shape).clone() });
            self.messages.push(orig.copy(id, shape, b, orig.reconsume_times()));
            self.handle_store(id);
            return;
        }
        let level = (3 + orig.reconsume_times() as usize).min(DELAY_LEVELS_MS.len());
        let delay = DELAY_LEVELS_MS[level - 1];
        let rt = retry_topic(&group);
        self.brokers[b].ensure_topic(&rt, 1);
        self.assign_partition_ids(b, &rt);
        let reconsume_times = orig.reconsume_times() + 1;
        self.emit(Event::SentBack { msg: m, group, delay_ms: delay, reconsume_times: reconsume_times.into() });
        // The copy keeps the original's properties and born time; RETRY_TOPIC is set only when
        // absent, so it names the original topic on every retry (`consumerSendMsgBack`).
        let mut shape = Shape { topic: name(&rt), ..(*orig.shape).clone() };
        shape.properties.entry("RETRY_TOPIC".into()).or_insert_with(|| orig.topic().to_string());
        let copy = orig.copy(id, Arc::new(shape), b, reconsume_times);
        self.fates.push(Fate::Pending);
        self.messages.push(copy);
        self.schedule(delay, Action::RetryDeliver { msg: id });
    }
}
