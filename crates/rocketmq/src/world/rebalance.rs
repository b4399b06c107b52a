//! Routes and rebalance: the RebalanceService loop, the consumer list, allocation, ProcessQueue
//! changes (`updateProcessQueueTableInRebalance`), queue removal and computePullFromWhere.

use super::records::{DropReason, ForcedUnlock, StartOffsetSource};
use super::*;
use mqviz_engine::sort::StableSort;

/// PullRequests of new ProcessQueues are dispatched this long after the rebalance (5.x
/// `dispatchPullRequest(pullRequestList, 500)`).
pub const PULL_DISPATCH_DELAY: Millis = 500;

/// What `removeUnnecessaryMessageQueue` managed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Removal {
    /// Removed now: the ProcessQueue leaves the table.
    Done,
    /// Orderly: the listener returns within the 500 ms `tryLock`; the removal completes then.
    WhenListenerReturns,
    /// Orderly: the listener holds the consume lock for longer; the queue stays (retried later).
    Refused,
}

impl World {
    pub(super) fn route_of(&self, topic: &str) -> Vec<MessageQueue> {
        let mut out = Vec::new();
        let topic_name: Arc<str> = Arc::from(topic);
        for b in &self.brokers {
            if let Some((read, _)) = b.topics.get(topic) {
                for q in 0..*read {
                    out.push(MessageQueue::new(topic_name.clone(), b.name.clone(), q));
                }
            }
        }
        out
    }

    pub(super) fn refresh_routes(&mut self, c: usize) {
        let topics: Vec<String> = self.consumers[c].subs.keys().cloned().collect();
        let mut routes = mqviz_engine::vec_map::VecMap::new();
        for t in topics {
            let r = self.route_of(&t);
            if !r.is_empty() {
                routes.insert(t, r);
            }
        }
        self.consumers[c].routes = routes;
    }

    /// Schedules the RebalanceService's next run at `at`, unless one is already due earlier.
    pub(super) fn schedule_rebalance_at(&mut self, c: usize, at: Millis) {
        let service = &mut self.consumers[c].rebalance;
        if service.generation > 0 && service.next_run_at <= at && service.next_run_at >= self.now {
            return;
        }
        service.generation += 1;
        service.next_run_at = at;
        let generation = service.generation;
        let inc = self.consumers[c].incarnation;
        let delay = at.saturating_sub(self.now);
        self.schedule(delay, Action::ConsumerTimer { c: c as u32, inc, timer: ConsumerTimer::Rebalance { generation } });
    }

    /// `RebalanceService.wakeup()`: the next run happens now, but never sooner than `minInterval`
    /// after the previous one (5.x).
    pub(super) fn rebalance_immediately(&mut self, c: usize) {
        let at = self.now.max(self.consumers[c].rebalance.last_run_at + REBALANCE_MIN_INTERVAL);
        self.schedule_rebalance_at(c, at);
    }

    /// `rebalanceLater(delay)`: a wake-up after `delay`.
    pub(super) fn rebalance_later(&mut self, c: usize, delay: Millis) {
        let inc = self.consumers[c].incarnation;
        self.schedule(delay, Action::RebalanceWakeUp { c, inc });
    }

    pub(super) fn handle_rebalance_wake_up(&mut self, c: usize, inc: Incarnation) {
        if self.consumer_alive(c, inc) {
            self.rebalance_immediately(c);
        }
    }

    /// A topic of the current run came out unbalanced: the next run is `minInterval` after this one.
    fn note_unbalanced(&mut self, c: usize) {
        self.consumers[c].rebalance.unbalanced = true;
        let at = self.now.max(self.consumers[c].rebalance.last_run_at + REBALANCE_MIN_INTERVAL);
        self.schedule_rebalance_at(c, at);
    }

    /// A running consumer subscribing `topic` that has not run a rebalance since it started, and
    /// when its first run is due: until then a queue without an owner is expected, not a fault.
    pub fn awaiting_first_rebalance(&self, topic: &str) -> Option<(&str, Millis)> {
        self.consumers
            .iter()
            .find(|c| c.running && c.rebalance.runs == 0 && c.subs.contains_key(topic))
            .map(|c| (&*c.name, c.rebalance.next_run_at))
    }

    /// `doRebalance`: every subscribed topic (the retry topic included), then
    /// `truncateMessageQueueNotMyTopic`. A balanced run waits 20 s for the next one.
    pub(super) fn run_rebalance(&mut self, c: usize) {
        let client = self.consumers[c].client_id.clone();
        self.emit(Event::RebalanceRun { client: client.clone() });
        let now = self.now;
        {
            let service = &mut self.consumers[c].rebalance;
            service.last_run_at = now;
            service.runs = service.runs.saturating_add(1);
            service.unbalanced = false;
            // The wait after this run; an unbalanced topic shortens it to minInterval.
            service.next_run_at = Millis::MAX;
        }
        self.schedule_rebalance_at(c, now + REBALANCE_INTERVAL);
        let topics: Vec<String> = self.consumers[c].subs.keys().cloned().collect();
        let inc = self.consumers[c].incarnation;
        let latency = self.consumers[c].latency;
        for topic in &topics {
            let Some(route) = self.consumers[c].routes.get(topic).cloned() else {
                // "doRebalance, {group}, but the topic[{topic}] not exist": messageQueueChanged
                // with empty sets still bumps subVersion and heartbeats (the retry topic excepted
                // in CLUSTERING).
                let clustering = self.consumers[c].model == MessageModel::Clustering;
                if !(clustering && is_retry_topic(topic)) {
                    self.emit(Event::RouteNotFound { client: client.clone(), topic: name(topic) });
                    self.message_queue_changed(c, topic);
                }
                continue;
            };
            match self.consumers[c].model {
                MessageModel::Broadcasting => {
                    let set: VecSet<MessageQueue> = route.into_iter().collect();
                    self.apply_allocation(c, topic, set, Vec::new());
                }
                MessageModel::Clustering => {
                    // GET_CONSUMER_LIST_BY_GROUP goes to one broker of the topic, picked at random.
                    let brokers: VecSet<&str> = route.iter().map(|q| &*q.broker).collect();
                    let brokers: Vec<&str> = brokers.into_iter().collect();
                    let pick = if brokers.len() > 1 { self.rng.below(brokers.len() as u64) as usize } else { 0 };
                    let Some(b) = self.broker_index(brokers[pick]) else { continue };
                    self.schedule(
                        latency,
                        Action::ConsumerListArrive(Box::new(wide::ConsumerListArrive {
                            broker: b,
                            c,
                            inc,
                            topic: topic.clone(),
                        })),
                    );
                }
            }
        }
        // truncateMessageQueueNotMyTopic: no offset persist.
        let con = &self.consumers[c];
        let stale: Vec<MessageQueue> = con.pqs.keys().filter(|mq| !con.subs.contains_key(&*mq.topic)).cloned().collect();
        for mq in stale {
            self.remove_process_queue(c, &mq, DropReason::NotSubscribed);
        }
    }

    pub(super) fn handle_consumer_list_request(&mut self, b: usize, c: usize, inc: Incarnation, topic: String) {
        let group = self.consumers[c].group.clone();
        let cids = self.brokers[b].groups.get(&*group).map(|g| g.all_client_ids()).filter(|ids| !ids.is_empty());
        let latency = self.consumers[c].latency;
        self.schedule(latency, Action::ConsumerListReply(Box::new(wide::ConsumerListReply { c, inc, topic, cids })));
    }

    pub(super) fn handle_consumer_list_reply(&mut self, c: usize, inc: Incarnation, topic: String, cids: Option<Vec<String>>) {
        if self.consumer_alive(c, inc) {
            self.rebalance_by_topic(c, &topic, cids);
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
        cid_all.stable_sort_by(|a, b| crate::types::java_str_cmp(a, b));
        match self.allocate_by_strategy(c, topic, route, &cid_all) {
            Ok(result) => {
                let set: VecSet<MessageQueue> = result.into_iter().collect();
                self.apply_allocation(c, topic, set, cid_all);
            }
            Err(e) => {
                // An allocation exception makes the run "not balanced".
                self.emit(Event::AllocateFailed { client, topic: name(topic), reason: e.to_string() });
                self.note_unbalanced(c);
            }
        }
    }

    /// What consumer `c`'s strategy gives it of `topic`'s queues (`route`), with the group's
    /// sorted client ids.
    pub(super) fn allocate_by_strategy(
        &self,
        c: usize,
        topic: &str,
        mut mq_all: Vec<MessageQueue>,
        cid_all: &[String],
    ) -> Result<Vec<MessageQueue>, allocate::AllocateError> {
        mq_all.stable_sort();
        let mut strategy = self.consumers[c].strategy.clone();
        if let Strategy::Config { queues } = &mut strategy {
            for q in queues.iter_mut() {
                if q.topic.is_empty() {
                    q.topic = topic.into();
                }
            }
            queues.retain(|q| &*q.topic == topic);
        }
        allocate::allocate(&strategy, &self.consumers[c].client_id, &mq_all, cid_all)
    }

    /// `updateProcessQueueTableInRebalance` + `messageQueueChanged`, then the "balanced" check:
    /// the allocation equals the working (not dropped) ProcessQueues of the topic.
    pub(super) fn apply_allocation(&mut self, c: usize, topic: &str, set: VecSet<MessageQueue>, cid_all: Vec<String>) {
        let now = self.now;
        // 1. Drop what is no longer ours, or whose pull chain has been silent for 120 s.
        let owned: Vec<MessageQueue> = self.consumers[c].pqs.keys().filter(|mq| &*mq.topic == topic).cloned().collect();
        let mut to_remove = Vec::new();
        for mq in &owned {
            let pq = &self.consumers[c].pqs[mq];
            if !set.contains(mq) {
                to_remove.push((mq.clone(), DropReason::Rebalance));
            } else if pq.pull_expired(now) {
                let client = self.consumers[c].client_id.clone();
                self.emit(Event::PullExpired { client, mq: mq.clone() });
                to_remove.push((mq.clone(), DropReason::PullExpired));
            }
        }
        let mut removed = Vec::new();
        for (mq, why) in &to_remove {
            self.drop_process_queue(c, mq, *why);
            match self.remove_unnecessary_message_queue(c, mq) {
                Removal::Done => {
                    self.consumers[c].pqs.remove(mq);
                    removed.push(mq.queue_id);
                }
                // Removed as far as the allocation goes; the entry leaves when the listener returns.
                Removal::WhenListenerReturns => removed.push(mq.queue_id),
                Removal::Refused => {}
            }
        }
        // 2. Add what is new (orderly CLUSTERING: only once the broker lock is ours).
        let needs_lock = self.consumers[c].orderly && self.consumers[c].model == MessageModel::Clustering;
        let mut added = Vec::new();
        let mut all_locked = true;
        for mq in &set {
            if self.consumers[c].pqs.contains_key(mq) {
                continue;
            }
            if needs_lock && !self.lock_queue(c, mq) {
                all_locked = false;
                continue;
            }
            self.add_process_queue(c, mq, PULL_DISPATCH_DELAY);
            added.push(mq.queue_id);
        }
        if !all_locked {
            self.rebalance_later(c, REBALANCE_LATER_ON_LOCK_FAILURE);
        }
        let changed = !added.is_empty() || !removed.is_empty();
        let queues: Vec<u32> = set.iter().map(|q| q.queue_id).collect();
        let client = self.consumers[c].client_id.clone();
        let strategy = self.consumers[c].strategy_name;
        self.emit(Event::Allocated { client, topic: name(topic), strategy, cid_all, queues, added, removed });
        if changed {
            self.message_queue_changed(c, topic);
        }
        let working: VecSet<&MessageQueue> =
            self.consumers[c].pqs.iter().filter(|(mq, pq)| &*mq.topic == topic && !pq.dropped).map(|(mq, _)| mq).collect();
        if working != set.iter().collect() {
            self.note_unbalanced(c);
        }
    }

    /// A new ProcessQueue for `mq` (removeDirtyOffset, then computePullFromWhere), whose first
    /// pull is dispatched after `dispatch_delay`.
    pub(super) fn add_process_queue(&mut self, c: usize, mq: &MessageQueue, dispatch_delay: Millis) {
        self.consumers[c].offsets.remove(mq);
        let (next, source) = self.compute_pull_from_where(c, mq);
        let pq = self.create_process_queue(c, mq, next, source);
        let inc = self.consumers[c].incarnation;
        self.schedule(dispatch_delay, Action::PullSend { pq: Box::new(PqRef { c, inc, mq: mq.clone(), pq }) });
    }

    /// `messageQueueChanged` (both message models): subVersion := now, heartbeat now. This is
    /// what makes "who wins the table" move with every rebalance.
    fn message_queue_changed(&mut self, c: usize, topic: &str) {
        let now = self.sub_version_now();
        let client = self.consumers[c].client_id.clone();
        if let Some(sd) = self.consumers[c].subs.get_mut(topic) {
            Arc::make_mut(sd).sub_version = now;
            self.emit(Event::SubVersionBumped { client, topic: name(topic), sub_version: now });
        }
        self.send_heartbeat(c);
    }

    /// `RebalancePushImpl.removeUnnecessaryMessageQueue` on an already dropped ProcessQueue:
    /// persist the offset now and forget it. Orderly CLUSTERING also needs the ProcessQueue's
    /// consume lock (`tryRemoveOrderMessageQueue`): if the listener holds it and does not return
    /// within 500 ms, the queue stays (broker lock included) and removal is retried by the next
    /// rebalance; forced once the queue was last locked more than 20 s ago.
    pub(super) fn remove_unnecessary_message_queue(&mut self, c: usize, mq: &MessageQueue) -> Removal {
        let orderly_clustering = self.consumers[c].orderly && self.consumers[c].model == MessageModel::Clustering;
        self.persist_one(c, mq);
        if !orderly_clustering {
            self.consumers[c].offsets.remove(mq);
            return Removal::Done;
        }
        let now = self.now;
        let Some(pq) = self.consumers[c].pqs.get(mq) else { return Removal::Done };
        let forced = pq.dropped && now > pq.last_lock_at + UNLOCK_DELAY;
        let listener_returns = match pq.orderly_task {
            OrderlyTask::Listening { until, .. } => Some(until),
            _ => None,
        };
        match listener_returns {
            Some(until) if !forced && until > now + CONSUME_LOCK_WAIT => {
                let pq = self.consumers[c].pqs.get_mut(mq).expect("checked above");
                pq.try_unlock_times += 1;
                let attempts = pq.try_unlock_times;
                let client = self.consumers[c].client_id.clone();
                self.emit(Event::RemovalDeferred { client, mq: mq.clone(), listener_until: until, attempts });
                Removal::Refused
            }
            Some(_) if !forced => {
                // tryLock(500 ms) gets the lock when the listener returns: the removal completes then.
                self.consumers[c].pqs.get_mut(mq).expect("checked above").removal_waits_for_listener = true;
                Removal::WhenListenerReturns
            }
            _ => {
                if listener_returns.is_some() {
                    // Forced (UNLOCK_DELAY): the queue is unlocked while its listener still runs.
                    let last_lock_at = pq.last_lock_at;
                    let id = pq.id;
                    if let Some(r) = self.process_queues.get_mut(id.0 as usize - 1) {
                        r.forced_unlock = Some(ForcedUnlock { at: now, last_lock_at });
                    }
                }
                self.finish_orderly_removal(c, mq);
                Removal::Done
            }
        }
    }

    /// The consume lock is ours: persist again, forget the offset, unlock at the broker (one-way).
    pub(super) fn finish_orderly_removal(&mut self, c: usize, mq: &MessageQueue) {
        self.persist_one(c, mq);
        self.consumers[c].offsets.remove(mq);
        if let Some(pq) = self.consumers[c].pqs.get_mut(mq) {
            pq.locked = false;
        }
        self.unlock_queue_later(c, mq);
    }

    /// `computePullFromWhereWithException`: where a new ProcessQueue starts, and whether that
    /// came from a stored offset.
    pub(super) fn compute_pull_from_where(&mut self, c: usize, mq: &MessageQueue) -> (u64, StartOffsetSource) {
        self.flush_oneway(c, mq);
        let con = &self.consumers[c];
        let Some(b) = self.broker_index(&mq.broker) else { return (0, StartOffsetSource::Policy) };
        let broker = &self.brokers[b];
        let max = broker.max_offset(&mq.topic, mq.queue_id);
        if con.model == MessageModel::Broadcasting {
            // LocalFileOffsetStore: the broker's young-queue answer does not apply here.
            if let Some(o) = con.local_offsets.get(mq) {
                return (*o, StartOffsetSource::Stored);
            }
            let start = match con.consume_from_where {
                ConsumeFromWhere::LastOffset => max,
                ConsumeFromWhere::FirstOffset => 0,
                ConsumeFromWhere::Timestamp if is_retry_topic(&mq.topic) => max,
                ConsumeFromWhere::Timestamp => {
                    let ts = con
                        .consume_timestamp
                        .unwrap_or_else(|| con.started_at.saturating_sub(DEFAULT_CONSUME_TIMESTAMP_BEFORE_START));
                    self.search_offset(b, mq, ts)
                }
            };
            return (start, StartOffsetSource::Policy);
        }
        if let Some(o) = broker.committed(&mq.topic, &con.group, mq.queue_id) {
            return (o, StartOffsetSource::Stored);
        }
        // A new group on a young queue (min offset 0, entry 0 still hot): the broker answers 0
        // for every policy, so CONSUME_FROM_LAST_OFFSET re-reads the whole history.
        let min = broker.cq(&mq.topic, mq.queue_id).map_or(0, |cq| cq.min_offset());
        if min == 0 {
            return (0, StartOffsetSource::Policy);
        }
        // A snapshot's queue that lost its first entries is not young: QUERY_NOT_FOUND, and the
        // client's policy decides (FIRST_OFFSET asks for 0, which the pull moves to the min).
        let start = match con.consume_from_where {
            ConsumeFromWhere::LastOffset => max,
            ConsumeFromWhere::FirstOffset => 0,
            ConsumeFromWhere::Timestamp => {
                let ts = con
                    .consume_timestamp
                    .unwrap_or_else(|| con.started_at.saturating_sub(DEFAULT_CONSUME_TIMESTAMP_BEFORE_START));
                self.search_offset(b, mq, ts)
            }
        };
        (start, StartOffsetSource::Policy)
    }

    /// `searchOffset(mq, timestamp)` (`getOffsetInQueueByTime`, lower boundary): the first offset
    /// whose store time is at or after `timestamp`; `maxOffset` when every message is older.
    fn search_offset(&self, b: usize, mq: &MessageQueue, timestamp: Millis) -> u64 {
        let Some(cq) = self.brokers[b].cq(&mq.topic, mq.queue_id) else { return 0 };
        cq.first_offset_where_not(|m| self.messages[m as usize].stored_at < timestamp)
    }
}
