//! Producers (publish queue list, ThreadLocalIndex) and the broker store.

use super::*;

impl World {
    /// The publish queue list of a topic: brokers in name order, `0..writeQueueNums` each.
    pub fn publish_queues(&self, topic: &str) -> Vec<(usize, u32)> {
        let mut order: Vec<usize> = (0..self.brokers.len()).collect();
        order.sort_by(|a, b| crate::sim::rocketmq::types::java_str_cmp(&self.brokers[*a].name, &self.brokers[*b].name));
        let mut out = Vec::new();
        for b in order {
            if let Some((_, write)) = self.brokers[b].topics.get(topic) {
                for q in 0..*write {
                    out.push((b, q));
                }
            }
        }
        out
    }

    pub(super) fn handle_produce(&mut self, p: usize, s: usize, i: u32) {
        let send = self.producers[p].sends[s].clone();
        let now = self.now;
        let fresh =
            self.producers[p].routes.get(&send.topic).filter(|(at, _)| now < at + ROUTE_REFRESH_INTERVAL).map(|(_, q)| q.clone());
        let queues = match fresh {
            Some(q) => q,
            None => {
                let q = Arc::new(self.publish_queues(&send.topic));
                self.producers[p].routes.insert(send.topic.clone(), (now, q.clone()));
                q
            }
        };
        if !queues.is_empty() {
            let start = match self.producers[p].start_index {
                StartIndex::Fixed(n) => n,
                StartIndex::Random => 0,
            };
            let index =
                self.producers[p].indexes.entry(send.topic.clone()).or_insert_with(|| ThreadLocalIndex::starting_at(start));
            let (broker, queue_id) = queues[index.select(queues.len())];
            let tag = self.producers[p].send_tags[s].clone();
            let key = self.tag_key(tag.as_ref());
            let id = self.messages.len() as MsgId;
            let body = Body { template: self.producers[p].send_bodies[s].clone(), i };
            let tags_code = send.tag.as_deref().map(|t| java_string_hash(t) as i64).unwrap_or(0);
            self.fates.push(Fate::Pending);
            self.messages.push(Message {
                id,
                topic: self.producers[p].send_topics[s].clone(),
                tag: self.producers[p].send_tags[s].clone(),
                key,
                tags_code,
                keys: send.keys.as_ref().map(|k| k.replace("{i}", &i.to_string())),
                properties: send.properties.clone(),
                body,
                producer: self.producers[p].id.clone(),
                born_at: self.now,
                broker,
                queue_id,
                queue_offset: 0,
                pid: u32::MAX,
                reconsume_times: 0,
                origin: None,
            });
            self.producers[p].sent += 1;
            let latency = self.producers[p].latency;
            self.schedule(latency, Action::StoreArrive { msg: id });
        }
        if i + 1 < send.count {
            let delay = match (send.times.get(i as usize), send.times.get(i as usize + 1)) {
                (Some(this), Some(next)) => next - this,
                _ => send.interval_ms,
            };
            self.schedule(delay, Action::ProduceNext { producer: p, send: s, i: i + 1 });
        }
    }

    pub(super) fn handle_store(&mut self, msg: MsgId) {
        let (broker, topic, queue_id, tags_code) = {
            let m = &self.messages[msg as usize];
            (m.broker, m.topic.clone(), m.queue_id, m.tags_code)
        };
        let offset = self.brokers[broker].append(&topic, queue_id, msg, tags_code);
        let pid = match self.brokers[broker].cq(&topic, queue_id).and_then(|cq| cq.pid) {
            Some(pid) => pid,
            None => {
                self.assign_partition_ids(broker, &topic);
                self.brokers[broker].cq(&topic, queue_id).and_then(|cq| cq.pid).unwrap_or(u32::MAX)
            }
        };
        self.messages[msg as usize].pid = pid;
        if self.brokers[broker].enable_calc_filter_bitmap {
            self.calc_bitmap(broker, msg);
        }
        self.messages[msg as usize].queue_offset = offset;
        if self.trace_messages || self.messages[msg as usize].origin.is_some() {
            let tag = self.messages[msg as usize].tag.clone();
            let bname = self.brokers[broker].name.clone();
            self.emit(Event::MessageStored { msg, broker: bname, topic: topic.clone(), queue_id, offset, tag });
        }
        self.check_held(broker, Some((&topic, queue_id, tags_code)));
    }
}
