//! Consumption: concurrent batches, orderly queues, send-back, retry and DLQ.

use super::*;

impl World {
    pub(super) fn record_consumed(&mut self, c: usize, m: MsgId) {
        let root = self.messages[m as usize].root();
        let reconsume_times = self.messages[m as usize].reconsume_times;
        let con = &mut self.consumers[c];
        con.stats.consumed += 1;
        con.consumed.push(root);
        let client = con.client_id.clone();
        self.emit(Event::Consumed { msg: m, client, reconsume_times });
    }

    pub(super) fn handle_consume_done(&mut self, c: usize, inc: u32, mq: MessageQueue, msgs: Vec<MsgId>) {
        if !self.consumer_alive(c, inc) || self.consumers[c].pqs.get(&mq).is_none_or(|pq| pq.dropped) {
            // ConsumeRequest.run skips processConsumeResult on a dropped queue: redelivered later.
            let client = self.consumers[c].client_id.clone();
            self.emit(Event::ResultsDiscarded { client, mq, count: msgs.len() as u32 });
            return;
        }
        for &m in &msgs {
            let times = self.messages[m as usize].reconsume_times;
            if !self.consumers[c].fails(times) {
                self.record_consumed(c, m);
                continue;
            }
            let client = self.consumers[c].client_id.clone();
            self.consumers[c].stats.failed += 1;
            self.emit(Event::ConsumeFailed { msg: m, client, reconsume_times: times });
            if self.consumers[c].model == MessageModel::Clustering {
                self.consumers[c].stats.retried += 1;
                let group = self.consumers[c].group.clone();
                let broker = self.messages[m as usize].broker;
                let latency = self.consumers[c].latency;
                self.schedule(latency, Action::SendBackArrive { broker, msg: m, group });
            }
        }
        let con = &mut self.consumers[c];
        let pq = con.pqs.get_mut(&mq).expect("checked above");
        for &m in &msgs {
            let off = self.messages[m as usize].queue_offset;
            pq.in_flight.remove(&off);
        }
        if let Some(o) = pq.committed_offset() {
            let e = con.offsets.entry(mq).or_insert(0);
            *e = (*e).max(o);
        }
    }

    pub(super) fn kick_orderly(&mut self, c: usize, mq: &MessageQueue) {
        let inc = self.consumers[c].incarnation;
        let delay = self.consumers[c].spec.consume_time_ms;
        let Some(pq) = self.consumers[c].pqs.get_mut(mq) else { return };
        if pq.consuming {
            return;
        }
        let Some((_, &m)) = pq.in_flight.iter().next() else { return };
        pq.consuming = true;
        self.schedule(delay, Action::OrderlyConsumeDone { c, inc, mq: mq.clone(), msg: m });
    }

    pub(super) fn handle_orderly_done(&mut self, c: usize, inc: u32, mq: MessageQueue, m: MsgId) {
        if !self.consumer_alive(c, inc) || self.consumers[c].pqs.get(&mq).is_none_or(|pq| pq.dropped) {
            return;
        }
        let local = self.consumers[c].pqs[&mq].local_reconsume.get(&m).copied().unwrap_or(0);
        let times = self.messages[m as usize].reconsume_times + local;
        let fails = self.consumers[c].fails(times);
        if fails {
            let client = self.consumers[c].client_id.clone();
            self.consumers[c].stats.failed += 1;
            self.emit(Event::ConsumeFailed { msg: m, client, reconsume_times: times });
            let delay = self.consumers[c].spec.consume_time_ms + SUSPEND_ORDERLY;
            let pq = self.consumers[c].pqs.get_mut(&mq).expect("checked above");
            *pq.local_reconsume.entry(m).or_insert(0) += 1;
            // SUSPEND_CURRENT_QUEUE_A_MOMENT: the same message again after 1 s; the queue waits.
            self.schedule(delay, Action::OrderlyConsumeDone { c, inc, mq, msg: m });
            return;
        }
        self.record_consumed(c, m);
        let off = self.messages[m as usize].queue_offset;
        let con = &mut self.consumers[c];
        let pq = con.pqs.get_mut(&mq).expect("checked above");
        pq.in_flight.remove(&off);
        pq.local_reconsume.remove(&m);
        pq.consuming = false;
        if let Some(o) = pq.committed_offset() {
            let e = con.offsets.entry(mq.clone()).or_insert(0);
            *e = (*e).max(o);
        }
        self.kick_orderly(c, &mq);
    }

    pub(super) fn handle_send_back(&mut self, b: usize, m: MsgId, group: Name) {
        let orig = self.messages[m as usize].clone();
        let now = self.now;
        let id = self.messages.len() as MsgId;
        if orig.reconsume_times >= MAX_RECONSUME_TIMES {
            let dlq = crate::sim::rocketmq::types::dlq_topic(&group);
            self.brokers[b].ensure_topic(&dlq, 1);
            self.assign_partition_ids(b, &dlq);
            self.emit(Event::MovedToDlq { msg: m, group });
            self.fates.push(Fate::Pending);
            self.messages.push(Message {
                id,
                topic: name(&dlq),
                broker: b,
                queue_id: 0,
                queue_offset: 0,
                pid: u32::MAX,
                born_at: now,
                origin: Some(orig.root()),
                ..orig
            });
            self.handle_store(id);
            return;
        }
        let level = (3 + orig.reconsume_times as usize).min(DELAY_LEVELS_MS.len());
        let delay = DELAY_LEVELS_MS[level - 1];
        let rt = retry_topic(&group);
        self.brokers[b].ensure_topic(&rt, 1);
        self.assign_partition_ids(b, &rt);
        let reconsume_times = orig.reconsume_times + 1;
        self.emit(Event::SentBack { msg: m, group, delay_ms: delay, reconsume_times });
        let mut copy = Message {
            id,
            topic: name(&rt),
            broker: b,
            queue_id: 0,
            queue_offset: 0,
            pid: u32::MAX,
            born_at: now,
            origin: Some(orig.root()),
            reconsume_times,
            ..orig.clone()
        };
        copy.properties.insert("RETRY_TOPIC".into(), orig.topic.to_string());
        self.fates.push(Fate::Pending);
        self.messages.push(copy);
        self.schedule(delay, Action::RetryDeliver { msg: id });
    }
}
