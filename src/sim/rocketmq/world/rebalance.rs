//! Routes and rebalance: the consumer list, allocation, ProcessQueue changes, computePullFromWhere.

use super::*;

impl World {
    pub(super) fn route_of(&self, topic: &str) -> Vec<MessageQueue> {
        let mut out = Vec::new();
        for b in &self.brokers {
            if let Some((read, _)) = b.topics.get(topic) {
                for q in 0..*read {
                    out.push(MessageQueue::new(topic, &*b.name, q));
                }
            }
        }
        out
    }

    pub(super) fn refresh_routes(&mut self, c: usize) {
        let topics: Vec<String> = self.consumers[c].subs.keys().cloned().collect();
        let mut routes = BTreeMap::new();
        for t in topics {
            let r = self.route_of(&t);
            if !r.is_empty() {
                routes.insert(t, r);
            }
        }
        self.consumers[c].routes = routes;
    }

    pub(super) fn rebalance_immediately(&mut self, c: usize) {
        self.consumers[c].rebalance_gen += 1;
        let (inc, gen) = (self.consumers[c].incarnation, self.consumers[c].rebalance_gen);
        self.schedule(0, Action::RebalanceTick { c, inc, gen });
    }

    pub(super) fn run_rebalance(&mut self, c: usize) {
        let client = self.consumers[c].client_id.clone();
        self.emit(Event::RebalanceRun { client });
        let topics: Vec<String> = self.consumers[c].subs.keys().cloned().collect();
        let inc = self.consumers[c].incarnation;
        let latency = self.consumers[c].latency;
        for topic in &topics {
            let Some(route) = self.consumers[c].routes.get(topic).cloned() else { continue };
            match self.consumers[c].model {
                MessageModel::Broadcasting => {
                    let set: BTreeSet<MessageQueue> = route.into_iter().collect();
                    self.apply_allocation(c, topic, set, Vec::new());
                }
                MessageModel::Clustering => {
                    // GET_CONSUMER_LIST_BY_GROUP goes to one broker of the topic, picked at random.
                    let brokers: BTreeSet<&str> = route.iter().map(|q| q.broker.as_str()).collect();
                    let brokers: Vec<&str> = brokers.into_iter().collect();
                    let pick = if brokers.len() > 1 { self.rng.below(brokers.len() as u64) as usize } else { 0 };
                    let Some(b) = self.broker_index(brokers[pick]) else { continue };
                    self.schedule(latency, Action::ConsumerListArrive { broker: b, c, inc, topic: topic.clone() });
                }
            }
        }
        // truncateMessageQueueNotMyTopic: no offset persist.
        let con = &mut self.consumers[c];
        let stale: Vec<MessageQueue> = con.pqs.keys().filter(|mq| !con.subs.contains_key(&mq.topic)).cloned().collect();
        for mq in stale {
            if let Some(mut pq) = con.pqs.remove(&mq) {
                pq.dropped = true;
            }
        }
    }

    pub(super) fn rebalance_by_topic(&mut self, c: usize, topic: &str, cids: Option<Vec<String>>) {
        if !self.consumers[c].subs.contains_key(topic) {
            return;
        }
        let Some(route) = self.consumers[c].routes.get(topic).cloned() else { return };
        let client = self.consumers[c].client_id.clone();
        let Some(mut cid_all) = cids else {
            self.emit(Event::AllocateFailed { client, topic: name(topic), reason: "no consumer list for this group".into() });
            return;
        };
        let mut mq_all = route;
        mq_all.sort();
        cid_all.sort_by(|a, b| crate::sim::rocketmq::types::java_str_cmp(a, b));
        let mut strategy = self.consumers[c].strategy.clone();
        if let Strategy::Config { queues } = &mut strategy {
            for q in queues.iter_mut() {
                if q.topic.is_empty() {
                    q.topic = topic.to_string();
                }
            }
            queues.retain(|q| q.topic == topic);
        }
        match allocate::allocate(&strategy, &client, &mq_all, &cid_all) {
            Ok(result) => {
                let set: BTreeSet<MessageQueue> = result.into_iter().collect();
                self.apply_allocation(c, topic, set, cid_all);
            }
            Err(e) => {
                self.emit(Event::AllocateFailed { client, topic: name(topic), reason: e.to_string() });
            }
        }
    }

    /// `updateProcessQueueTableInRebalance` + `messageQueueChanged`.
    pub(super) fn apply_allocation(&mut self, c: usize, topic: &str, set: BTreeSet<MessageQueue>, cid_all: Vec<String>) {
        let owned: Vec<MessageQueue> = self.consumers[c].pqs.keys().filter(|mq| mq.topic == topic).cloned().collect();
        let mut removed = Vec::new();
        for mq in &owned {
            if !set.contains(mq) {
                // removeUnnecessaryMessageQueue: persist now, forget the offset.
                self.persist_one(c, mq);
                self.unlock_queue(c, mq);
                let con = &mut self.consumers[c];
                if let Some(mut pq) = con.pqs.remove(mq) {
                    pq.dropped = true;
                }
                con.offsets.remove(mq);
                removed.push(mq.queue_id);
            }
        }
        let mut added = Vec::new();
        let inc = self.consumers[c].incarnation;
        for mq in &set {
            if self.consumers[c].pqs.contains_key(mq) {
                continue;
            }
            if self.consumers[c].orderly && self.consumers[c].model == MessageModel::Clustering && !self.lock_queue(c, mq) {
                continue;
            }
            let next = self.compute_pull_from_where(c, mq);
            let con = &mut self.consumers[c];
            con.offsets.remove(mq);
            con.pqs.insert(mq.clone(), ProcessQueue { next_offset: next, ..ProcessQueue::default() });
            added.push(mq.queue_id);
            self.schedule(0, Action::PullSend { c, inc, mq: mq.clone() });
        }
        let changed = !added.is_empty() || !removed.is_empty();
        let queues: Vec<u32> = set.iter().map(|q| q.queue_id).collect();
        let client = self.consumers[c].client_id.clone();
        let strategy = self.consumers[c].strategy_name;
        self.emit(Event::Allocated { client: client.clone(), topic: name(topic), strategy, cid_all, queues, added, removed });
        if changed {
            // messageQueueChanged (both message models): subVersion := now, heartbeat now. This
            // is what makes "who wins the table" move with every rebalance.
            let now = self.now;
            if let Some(sd) = self.consumers[c].subs.get_mut(topic) {
                sd.sub_version = now;
                self.emit(Event::SubVersionBumped { client, topic: name(topic), sub_version: now });
            }
            self.send_heartbeat(c);
        }
    }

    pub(super) fn compute_pull_from_where(&mut self, c: usize, mq: &MessageQueue) -> u64 {
        let con = &self.consumers[c];
        let Some(b) = self.broker_index(&mq.broker) else { return 0 };
        let broker = &self.brokers[b];
        let max = broker.max_offset(&mq.topic, mq.queue_id);
        if con.model == MessageModel::Broadcasting {
            if let Some(o) = con.local_offsets.get(mq) {
                return *o;
            }
            return match con.consume_from_where {
                ConsumeFromWhere::LastOffset => max,
                ConsumeFromWhere::FirstOffset => 0,
                ConsumeFromWhere::Timestamp => 0,
            };
        }
        if let Some(o) = broker.committed(&mq.topic, &con.group, mq.queue_id) {
            return o;
        }
        // A new group on a young queue (min offset 0, entry 0 still hot): the broker answers 0
        // for every policy, so CONSUME_FROM_LAST_OFFSET re-reads the whole history.
        0
    }
}
