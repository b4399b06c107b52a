//! Producers (publish queue list, ThreadLocalIndex, synchronous retries) and the broker store.

use super::*;
use mqviz_engine::sort::StableSort;

impl World {
    /// The publish queue list of a topic: brokers in name order, `0..writeQueueNums` each.
    pub fn publish_queues(&self, topic: &str) -> Vec<(usize, u32)> {
        let mut order: Vec<usize> = (0..self.brokers.len()).collect();
        order.stable_sort_by(|a, b| crate::types::java_str_cmp(&self.brokers[*a].name, &self.brokers[*b].name));
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

    /// A fresh ThreadLocalIndex, as a new TopicPublishInfo gets: `startIndex` when the scenario
    /// pins it, else a value drawn from the seeded RNG (upstream: `Random.nextInt()`).
    fn new_thread_local_index(&mut self, p: usize) -> ThreadLocalIndex {
        match self.producers[p].start_index {
            StartIndex::Fixed(n) => ThreadLocalIndex::starting_at(n),
            StartIndex::Random => ThreadLocalIndex::with_stored(self.rng.next_i32()),
        }
    }

    /// Brings the producer's TopicPublishInfo for `topic` up to date: fetched again when older
    /// than the 30 s poll. A route that changed is a new TopicPublishInfo, with a new
    /// ThreadLocalIndex (spec §1).
    fn refresh_producer_route(&mut self, p: usize, topic: &str) {
        let now = self.now;
        if route_is_fresh(&self.producers[p], topic, now) {
            return;
        }
        let old = self.producers[p].routes.get(topic).map(|(_, queues)| queues.clone());
        let fresh = self.publish_queues(topic);
        let queues = match old {
            Some(old) if *old == fresh => old,
            Some(_) => {
                let index = self.new_thread_local_index(p);
                self.producers[p].indexes.insert(topic.to_string(), index);
                Arc::new(fresh)
            }
            None => Arc::new(fresh),
        };
        self.producers[p].routes.insert(topic.to_string(), (now, queues));
    }

    /// The queue the producer's next send to `topic` goes to (`selectOneMessageQueue`), or `None`
    /// without a route. A retry passes the broker that refused it, to be avoided.
    fn pick_send_queue(&mut self, p: usize, topic: &str, avoid: Option<usize>) -> Option<(usize, u32)> {
        self.refresh_producer_route(p, topic);
        let ProducerState { routes, indexes, start_index, .. } = &mut self.producers[p];
        select_queue(routes, indexes, *start_index, topic, avoid)
    }

    /// The shape every message of send script `s` shares, made at its first message (the tag's
    /// colour key is given in order of first use).
    fn send_shape(&mut self, p: usize, s: usize) -> Arc<Shape> {
        if let Some(Some(shape)) = self.producers[p].shapes.get(s) {
            return shape.clone();
        }
        let tag = self.producers[p].send_tags[s].clone();
        let key = self.tag_key(tag.as_ref());
        let producer = &self.producers[p];
        let send = &producer.sends[s];
        let shape = Arc::new(Shape {
            topic: producer.send_topics[s].clone(),
            tags_code: tag.as_deref().map(|t| java_string_hash(t) as i64).unwrap_or(0),
            tag,
            key,
            keys: send.keys.as_deref().map(name),
            properties: send.properties.clone(),
            body: producer.send_bodies[s].clone(),
            producer: producer.id.clone(),
        });
        let shapes = &mut self.producers[p].shapes;
        if shapes.len() <= s {
            shapes.resize(s + 1, None);
        }
        shapes[s] = Some(shape.clone());
        shape
    }

    pub(super) fn handle_produce(&mut self, p: usize, s: usize, i: u32) {
        // The route is fresh for all but one send in 30 s: only then is the topic copied.
        let producer = &self.producers[p];
        if !route_is_fresh(producer, &producer.sends[s].topic, self.now) {
            let topic = producer.sends[s].topic.clone();
            self.refresh_producer_route(p, &topic);
        }
        let ProducerState { routes, indexes, start_index, sends, .. } = &mut self.producers[p];
        if let Some((broker, queue_id)) = select_queue(routes, indexes, *start_index, &sends[s].topic, None) {
            let shape = self.send_shape(p, s);
            let id = self.messages.len() as MsgId;
            self.fates.push(Fate::Pending);
            self.messages.push(Message::new(id, shape, i, self.now, broker, queue_id));
            self.producers[p].sent += 1;
            let latency = self.producers[p].latency;
            self.schedule(latency, Action::StoreArrive { msg: id, attempt: 1, count: 1 });
        }
        let send = &self.producers[p].sends[s];
        if i + 1 < send.count {
            let delay = match (send.times.get(i as usize), send.times.get(i as usize + 1)) {
                (Some(this), Some(next)) => next - this,
                _ => send.interval_ms,
            };
            self.schedule(delay, Action::ProduceNext { producer: p as u32, send: s as u32, i: i + 1 });
        }
    }

    /// `SendMessageProcessor`: `msgCheck` refuses a queue id at or beyond
    /// `max(writeQueueNums, readQueueNums)` (a producer whose route predates a shrink); otherwise
    /// the message is stored.
    pub(super) fn handle_store_arrive(&mut self, msg: MsgId, attempt: u32) {
        let m = &self.messages[msg as usize];
        let (b, queue_id) = (m.broker(), m.queue_id());
        let refusal = match self.brokers[b].topics.get(&**m.topic()) {
            None => Some(format!("topic[{}] not exist", m.topic())),
            Some((read, write)) if queue_id >= (*read).max(*write) => {
                Some(format!("request queueId[{queue_id}] is illegal: {} has {read} read and {write} write queues", m.topic()))
            }
            Some(_) => None,
        };
        match refusal {
            None => self.handle_store(msg),
            Some(reason) => {
                let topic = self.messages[msg as usize].topic().clone();
                let bname = self.brokers[b].name.clone();
                self.emit(Event::SendRefused { msg, broker: bname, topic, queue_id, attempt, reason: reason.clone() });
                let latency = self.producer_of(msg).map(|p| self.producers[p].latency).unwrap_or(self.scenario.latency_ms);
                self.schedule(latency, Action::SendRefused(Box::new(wide::SendRefused { msg, attempt, reason })));
            }
        }
    }

    fn producer_of(&self, msg: MsgId) -> Option<usize> {
        let producer = self.messages[msg as usize].producer();
        self.producers.iter().position(|p| p.id == *producer)
    }

    /// A synchronous send retries a refused attempt (SYSTEM_ERROR) on another queue, avoiding the
    /// broker that refused it, up to `1 + retryTimesWhenSendFailed` attempts; then it throws and
    /// the message is never stored.
    pub(super) fn handle_send_refused(&mut self, msg: MsgId, attempt: u32, reason: String) {
        let Some(p) = self.producer_of(msg).filter(|_| attempt < SYNC_SEND_ATTEMPTS) else {
            self.send_failures.push(SendFailure { msg, at: self.now, attempts: attempt, reason: reason.clone() });
            self.emit(Event::SendFailed { msg, attempts: attempt, reason });
            return;
        };
        let topic = self.messages[msg as usize].topic().clone();
        let last_broker = self.messages[msg as usize].broker();
        let Some((broker, queue_id)) = self.pick_send_queue(p, &topic, Some(last_broker)) else {
            self.send_failures.push(SendFailure { msg, at: self.now, attempts: attempt, reason: reason.clone() });
            self.emit(Event::SendFailed { msg, attempts: attempt, reason });
            return;
        };
        let m = &mut self.messages[msg as usize];
        m.set_broker(broker);
        m.set_queue_id(queue_id);
        let latency = self.producers[p].latency;
        self.schedule(latency, Action::StoreArrive { msg, attempt: attempt + 1, count: 1 });
    }

    pub(super) fn handle_store(&mut self, msg: MsgId) {
        let m = &self.messages[msg as usize];
        let (broker, queue_id) = (m.broker(), m.queue_id());
        let (offset, pid) = self.brokers[broker].append(m.topic(), queue_id, msg);
        let pid = pid.unwrap_or_else(|| self.assign_queue_pid(broker, msg));
        self.messages[msg as usize].pid = pid;
        self.messages[msg as usize].stored_at = self.now;
        if self.brokers[broker].enable_calc_filter_bitmap {
            self.calc_bitmap(broker, msg);
        }
        self.messages[msg as usize].set_queue_offset(offset);
        if pid == u32::MAX {
            self.messages[msg as usize].pid = self.assign_queue_pid(broker, msg);
        }
        if self.trace_messages || self.messages[msg as usize].origin().is_some() {
            self.emit_stored(msg);
        }
        self.check_held(broker, Some(msg));
    }

    /// Gives the topic's queues their partition ids (a queue created by this store has none yet);
    /// the id of `msg`'s queue, or `u32::MAX` if it still has none.
    fn assign_queue_pid(&mut self, broker: usize, msg: MsgId) -> u32 {
        let topic = self.messages[msg as usize].topic().clone();
        let queue_id = self.messages[msg as usize].queue_id();
        self.assign_partition_ids(broker, &topic);
        self.brokers[broker].cq(&topic, queue_id).and_then(|cq| cq.pid).unwrap_or(u32::MAX)
    }
}

/// Whether the producer's cached route for `topic` is younger than the 30 s poll.
fn route_is_fresh(producer: &ProducerState, topic: &str, now: Millis) -> bool {
    producer.routes.get(topic).is_some_and(|(at, _)| now < at + ROUTE_REFRESH_INTERVAL)
}

/// `selectOneMessageQueue` over a producer's cached route for `topic` (its ThreadLocalIndex is
/// made on first use), avoiding broker `avoid` when another is listed.
fn select_queue(
    routes: &VecMap<String, (Millis, PublishQueues)>,
    indexes: &mut VecMap<String, ThreadLocalIndex>,
    start_index: StartIndex,
    topic: &str,
    avoid: Option<usize>,
) -> Option<(usize, u32)> {
    let queues = &routes.get(topic)?.1;
    if queues.is_empty() {
        return None;
    }
    let index = match indexes.get_mut(topic) {
        Some(index) => index,
        None => {
            let start = match start_index {
                StartIndex::Fixed(n) => n,
                StartIndex::Random => 0,
            };
            indexes.entry(topic.to_string()).or_insert(ThreadLocalIndex::starting_at(start))
        }
    };
    let pos = match avoid {
        None => index.select(queues.len()),
        Some(b) => index.select_avoiding(queues.len(), |pos| queues[pos].0 == b),
    };
    Some(queues[pos])
}
