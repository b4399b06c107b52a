//! Pulls: the client's request, the broker's PullMessageProcessor, long polling, the client's response.

use super::*;
use crate::log::PullServedRef;

/// `consumeConcurrentlyMaxSpan`: a concurrent ProcessQueue whose first and last cached offsets are
/// further apart than this is not pulled (flow control).
pub const CONSUME_CONCURRENTLY_MAX_SPAN: u64 = 2000;

/// What the broker's filter decided for one scanned entry.
enum ScanVerdict {
    Found,
    /// Dropped by the consume-queue tag check (no SQL verdict) or by SQL92/bloom (with one).
    Filtered(Option<&'static str>),
}

impl World {
    /// `DefaultMQPushConsumerImpl.pullMessage`: one run of a PullRequest. A dropped ProcessQueue
    /// ends its chain here; otherwise the request is sent (or retried later) exactly once.
    pub(super) fn handle_pull_send(&mut self, r: PqRef) {
        if self.live_pq(&r).is_none() {
            return;
        }
        let now = self.now;
        // Borrowed, not cloned: the queue's names move into the request at the end.
        let (c, mq) = (r.c, &r.mq);
        let orderly_clustering = self.consumers[c].orderly && self.consumers[c].model == MessageModel::Clustering;
        let pq = self.consumers[c].pq_mut(mq, r.pq).expect("live_pq checked it");
        pq.last_pull_at = now;
        let span = match (pq.in_flight.keys().next(), pq.in_flight.keys().next_back()) {
            (Some(first), Some(last)) => last - first,
            _ => 0,
        };
        if pq.in_flight.len() > CACHED_MESSAGES_THRESHOLD || (!orderly_clustering && span > CONSUME_CONCURRENTLY_MAX_SPAN) {
            self.schedule(PULL_DELAY_FLOW_CONTROL, Action::PullSend { pq: Box::new(r) });
            return;
        }
        if orderly_clustering {
            if !pq.locked {
                // "pull message later because not locked in broker"
                self.schedule(PULL_DELAY_ON_EXCEPTION, Action::PullSend { pq: Box::new(r) });
                return;
            }
            if !pq.previously_locked {
                // The first pull after the lock re-reads the offset from the broker.
                let (offset, source) = self.compute_pull_from_where(c, mq);
                let pq = self.consumers[c].pq_mut(mq, r.pq).expect("still live");
                pq.previously_locked = true;
                pq.next_offset = offset;
                if let Some(record) = self.process_queues.get_mut(r.pq.0 as usize - 1) {
                    record.start_offset = offset;
                    record.source = source;
                }
            }
        }
        let con = &self.consumers[c];
        let Some(sd) = con.subs.get(&*mq.topic).cloned() else {
            self.schedule(PULL_DELAY_ON_EXCEPTION, Action::PullSend { pq: Box::new(r) });
            return;
        };
        let commit_offset =
            if con.model == MessageModel::Clustering { con.offsets.get(mq).copied().filter(|o| *o > 0) } else { None };
        let latency = con.latency;
        let Some(b) = self.broker_index(&mq.broker) else { return };
        let id = self.ids.pull_request();
        let sub_version = sd.sub_version;
        let pq = self.consumers[c].pq_mut(mq, r.pq).expect("still live");
        let offset = pq.next_offset;
        pq.outstanding_pull = Some(OutstandingPull { id, subscription: sd });
        let PqRef { inc, mq, pq, .. } = r;
        let req = PullRequest { id, consumer: c, incarnation: inc, pq, mq, offset, sub_version, commit_offset };
        self.consumers[c].stats.pulls += 1;
        self.schedule(latency, Action::PullArrive { broker: b, req: Box::new(req) });
    }

    pub(super) fn handle_pull_arrive(&mut self, b: usize, req: PullRequest) {
        if let Some((status, next, msgs)) = self.serve_pull(b, &req, true) {
            self.respond_to_pull(req, status, next, msgs);
        }
    }

    fn respond_to_pull(&mut self, req: PullRequest, status: PullStatus, next: u64, msgs: Vec<MsgId>) {
        let latency = self.consumers[req.consumer].latency;
        let pq = PqRef { c: req.consumer, inc: req.incarnation, mq: req.mq, pq: req.pq };
        self.schedule(latency, Action::PullResponse(Box::new(wide::PullResponse { pq, pull: req.id, status, next, msgs })));
    }

    /// `PullMessageProcessor.processRequest`. Returns `None` when the request is held.
    /// `allow_suspend` (`brokerAllowSuspend`) is true only on the request's first execution: a
    /// held request woken later neither commits its offset again nor is held a second time.
    pub(super) fn serve_pull(
        &mut self,
        b: usize,
        req: &PullRequest,
        allow_suspend: bool,
    ) -> Option<(PullStatus, u64, Vec<MsgId>)> {
        let c = req.consumer;
        let group = self.consumers[c].group.clone();
        let client = self.consumers[c].client_id.clone();
        let mq = &req.mq;
        let broker = &self.brokers[b];
        let bname = broker.name.clone();
        let error = |w: &mut World, code: &'static str| {
            w.emit(Event::PullServed {
                broker: bname.clone(),
                client: client.clone(),
                mq: mq.clone(),
                offset: req.offset,
                next: req.offset,
                status: PullStatus::Error(code),
                found: 0,
                expression: None,
            });
            Some((PullStatus::Error(code), req.offset, Vec::new()))
        };
        let Some((read, _)) = broker.topics.get(&*mq.topic).copied() else { return error(self, "TOPIC_NOT_EXIST") };
        if mq.queue_id >= read {
            return error(self, "SYSTEM_ERROR");
        }
        let Some(info) = broker.groups.get(&*group) else { return error(self, "SUBSCRIPTION_NOT_EXIST") };
        let Some(sub) = info.subscription_table.get(&*mq.topic) else { return error(self, "SUBSCRIPTION_NOT_EXIST") };
        if sub.sub_version < req.sub_version {
            return error(self, "SUBSCRIPTION_NOT_LATEST");
        }
        // The filter that actually runs: the table's tag expression, or for SQL92 the filter data
        // registered by heartbeats (which is not the table's expression when that one did not compile).
        let (sql, running_expression) = match &sub.expression_type {
            ExpressionType::Tag => (None, sub.sub_string.clone()),
            ExpressionType::Other(t) if t == "SQL92" => {
                if !broker.enable_property_filter {
                    return error(self, "SYSTEM_ERROR");
                }
                let Some(fd) = broker.filter_manager.get(&mq.topic, &group) else { return error(self, "FILTER_DATA_NOT_EXIST") };
                if fd.client_version < req.sub_version {
                    return error(self, "FILTER_DATA_NOT_LATEST");
                }
                let Some(expr) = fd.compiled.clone() else { return error(self, "FILTER_DATA_NOT_EXIST") };
                let bloom = if broker.enable_calc_filter_bitmap {
                    fd.bloom.as_ref().map(|b| BloomCheck { bit_pos: b.bit_pos.clone(), born_time: fd.born_time })
                } else {
                    None
                };
                (Some(SqlFilter { expression: expr, bloom }), Name::from(fd.expression.as_str()))
            }
            ExpressionType::Other(_) => return error(self, "SUBSCRIPTION_PARSE_FAILED"),
        };
        // One lookup of the queue serves the bounds and the scan.
        let queue = broker.cq(&mq.topic, mq.queue_id);
        let (min, max) = queue.map_or((0, 0), |cq| (cq.min_offset(), cq.max_offset()));
        let offset = req.offset;
        // What the scan skipped and let through by a hash collision, logged once the table entry
        // is no longer borrowed.
        let mut skipped = Vec::new();
        let mut collisions = Vec::new();
        let (status, next, msgs) = if max == 0 {
            if offset == 0 {
                (PullStatus::NoNewMsg, 0, Vec::new())
            } else {
                (PullStatus::OffsetIllegal, 0, Vec::new())
            }
        } else if offset < min {
            // OFFSET_TOO_SMALL (a snapshot's deleted head): PULL_OFFSET_MOVED to the min offset,
            // which the client handles as OFFSET_ILLEGAL.
            (PullStatus::OffsetIllegal, min, Vec::new())
        } else if offset == max {
            (PullStatus::NoNewMsg, offset, Vec::new())
        } else if offset > max {
            (PullStatus::OffsetIllegal, max, Vec::new())
        } else {
            let cq = queue.expect("queue exists below max offset");
            let mut next = offset;
            let mut found = Vec::new();
            // Messages of one send script share their tag's allocation: a tag found in the
            // expression once is not looked up again.
            let mut member_tag: Option<&Name> = None;
            let mut o = offset;
            while o < max {
                if o - offset >= MAX_SCAN_ENTRIES || found.len() >= PULL_BATCH_SIZE {
                    break;
                }
                // min <= o < max: held.
                let e = cq.entries[(o - min) as usize];
                next = o + 1;
                o += 1;
                match self.broker_filter_verdict(broker, sub, sql.as_ref(), e.msg, self.messages[e.msg as usize].tags_code()) {
                    ScanVerdict::Filtered(verdict) => skipped.push((e.msg, verdict)),
                    ScanVerdict::Found => {
                        if self.tag_hash_collision(sub, e.msg, &mut member_tag) {
                            collisions.push(e.msg);
                        }
                        found.push(e.msg);
                    }
                }
            }
            if found.is_empty() {
                (PullStatus::NoMatchedMsg, next, Vec::new())
            } else {
                (PullStatus::Found, next, found)
            }
        };
        let held_filter = (status == PullStatus::NoNewMsg && allow_suspend).then(|| match &sql {
            Some(f) => HeldFilter::Sql(f.clone()),
            None if !sub.is_all() => HeldFilter::Tags(sub.codes.iter().copied().collect()),
            None => HeldFilter::All,
        });
        let collision_expression = (!collisions.is_empty()).then(|| sub.sub_string.clone());
        if self.trace_messages && !skipped.is_empty() {
            // Looked up only when a filter dropped something: the key is two owned strings.
            let writer = self.brokers[b]
                .table_writer
                .get(&(group.to_string(), mq.topic.to_string()))
                .cloned()
                .unwrap_or_else(|| name("?"));
            self.emit_broker_filtered(&skipped, &client, &running_expression, &writer);
        }
        if let (true, Some(expression)) = (self.trace_messages, collision_expression) {
            for &m in &collisions {
                let tag = self.messages[m as usize].tag().clone().unwrap_or_else(|| name(""));
                self.emit(Event::TagHashCollision {
                    msg: m,
                    client: client.clone(),
                    tag,
                    expression: expression.to_string(),
                    code: self.messages[m as usize].tags_code() as i32,
                });
            }
        }
        if let Some(filter) = held_filter {
            // Long polling: PULL_NOT_FOUND is parked until a matching message or the timeout.
            self.brokers[b].held.push(HeldPull { request: req.clone(), suspended_at: self.now, filter });
            self.emit(Event::PullHeld { broker: bname, client, mq: mq.clone(), offset });
            self.commit_from_pull(b, req);
            return None;
        }
        let found = msgs.len() as u32;
        self.emit_pull_served(&PullServedRef {
            broker: &bname,
            client: &client,
            mq,
            offset,
            next,
            status: &status,
            found,
            expression: Some(&running_expression),
        });
        if allow_suspend {
            self.commit_from_pull(b, req);
        }
        Some((status, next, msgs))
    }

    /// `isMatchedByConsumeQueue` then `isMatchedByCommitLog` for one consume-queue entry.
    fn broker_filter_verdict(
        &self,
        broker: &Broker,
        sub: &SubscriptionData,
        sql: Option<&SqlFilter>,
        msg: MsgId,
        tags_code: i64,
    ) -> ScanVerdict {
        if !sub.broker_tag_match(tags_code) {
            return ScanVerdict::Filtered(None);
        }
        if let Some(f) = sql {
            let m = &self.messages[msg as usize];
            if let Some(miss) = self.bloom_precheck(broker, f.bloom.as_ref(), m) {
                return ScanVerdict::Filtered(Some(miss));
            }
            let verdict = filter::evaluate(&f.expression, m);
            if verdict != Verdict::True {
                return ScanVerdict::Filtered(Some(verdict.as_str()));
            }
        }
        ScanVerdict::Found
    }

    /// The broker's tag check passed only because the message's tag has the same `hashCode` as
    /// one of the expression's tags (the consume queue stores hash codes, not tags).
    fn tag_hash_collision<'w>(&'w self, sub: &SubscriptionData, msg: MsgId, member_tag: &mut Option<&'w Name>) -> bool {
        if sub.expression_type != ExpressionType::Tag || sub.is_all() {
            return false;
        }
        let Some(tag) = self.messages[msg as usize].tag() else { return false };
        if member_tag.is_some_and(|known| Arc::ptr_eq(known, tag)) {
            return false;
        }
        if sub.tags.contains(&**tag) {
            *member_tag = Some(tag);
            return false;
        }
        true
    }

    /// `isMatchedByConsumeQueue` for SQL92: with bitmaps on, a message stored after the filter
    /// data was born (`isMsgInLive`: store time strictly later) must hit the group's bloom bits.
    /// `Some("BLOOM_MISS")` when it does not.
    pub(super) fn bloom_precheck(&self, broker: &Broker, bloom: Option<&BloomCheck>, m: &Message) -> Option<&'static str> {
        let bloom = bloom?;
        let bitmap = broker.bitmaps.get(&m.id)?;
        if !crate::filter_manager::is_msg_in_live(bloom.born_time, m.stored_at) {
            return None;
        }
        match broker.filter_manager.bloom_filter().is_hit(&bloom.bit_pos, bitmap) {
            Ok(false) => Some("BLOOM_MISS"),
            _ => None,
        }
    }

    /// `CommitLogDispatcherCalcBitMap`: OR in the bits of every group whose filter matches.
    pub(super) fn calc_bitmap(&mut self, b: usize, msg: MsgId) {
        let broker = &self.brokers[b];
        let m = &self.messages[msg as usize];
        let filters = broker.filter_manager.get_topic(m.topic());
        if filters.is_empty() {
            return;
        }
        let bf = broker.filter_manager.bloom_filter();
        let mut bits = bf.new_bitmap();
        for fd in filters {
            if let (Some(expr), Some(data)) = (&fd.compiled, &fd.bloom) {
                if filter::evaluate(expr, m) == Verdict::True {
                    let _ = bf.hash_positions_to(&data.bit_pos, &mut bits);
                }
            }
        }
        self.brokers[b].bitmaps.insert(msg, bits);
    }

    /// The piggy-backed commit: `ConsumerOffsetManager.commitOffset` (overwrites, may go back).
    pub(super) fn commit_from_pull(&mut self, b: usize, req: &PullRequest) {
        if let Some(o) = req.commit_offset {
            let group = self.consumers[req.consumer].group.clone();
            let writer = OffsetWriter { consumer: req.consumer, incarnation: req.incarnation, pq: Some(req.pq), reset: false };
            self.commit_offset(b, &group, &req.mq, o, writer);
        }
    }

    pub(super) fn handle_hold_check(&mut self, b: usize) {
        self.check_held(b, None);
        self.schedule(HOLD_CHECK_INTERVAL, Action::HoldCheck { broker: b });
    }

    /// Whether a held request's filter lets an arriving message wake it (`notifyMessageArriving`:
    /// the consume-queue check, then the commit-log check with the message's properties).
    fn held_filter_matches(&self, broker: &Broker, filter: &HeldFilter, m: &Message) -> bool {
        match filter {
            HeldFilter::All => true,
            HeldFilter::Tags(codes) => codes.contains(&(m.tags_code() as i32)),
            HeldFilter::Sql(f) => {
                self.bloom_precheck(broker, f.bloom.as_ref(), m).is_none() && filter::evaluate(&f.expression, m) == Verdict::True
            }
        }
    }

    /// `PullRequestHoldService`: on a new message (`arrived`) or the periodic check. The periodic
    /// check passes no tags code and no properties, which every filter accepts.
    pub(super) fn check_held(&mut self, b: usize, arrived: Option<MsgId>) {
        if self.brokers[b].held.is_empty() {
            return;
        }
        let now = self.now;
        let broker = &self.brokers[b];
        // The arrived message and its queue's max offset, looked up once for every held pull.
        let arrived = arrived.map(|msg| {
            let m = &self.messages[msg as usize];
            (m, broker.max_offset(m.topic(), m.queue_id()))
        });
        // Decide first without moving anything: most arrivals wake nobody.
        let wakes = |h: &HeldPull| {
            let r = &h.request;
            let timed_out = now >= h.suspended_at + BROKER_SUSPEND_MAX;
            match arrived {
                Some((m, max)) => {
                    let same_queue = r.mq.queue_id == m.queue_id() && *r.mq.topic == **m.topic();
                    same_queue && ((max > r.offset && self.held_filter_matches(broker, &h.filter, m)) || timed_out)
                }
                None => timed_out || broker.max_offset(&r.mq.topic, r.mq.queue_id) > r.offset,
            }
        };
        if !broker.held.iter().any(wakes) {
            return;
        }
        let flags: Vec<bool> = broker.held.iter().map(wakes).collect();
        let held = std::mem::take(&mut self.brokers[b].held);
        let (wake, keep): (Vec<_>, Vec<_>) = held.into_iter().zip(flags).partition(|(_, w)| *w);
        self.brokers[b].held = keep.into_iter().map(|(h, _)| h).collect();
        let wake: Vec<HeldPull> = wake.into_iter().map(|(h, _)| h).collect();
        // The woken pulls are caused by what woke them (the stored message), not by the hold.
        let trigger = self.last_emitted.or(self.handler_cause);
        for h in wake {
            self.handler_cause = trigger;
            let req = h.request;
            // `executeRequestWhenWakeup`: brokerAllowSuspend = false (no second commit, no second hold).
            if let Some((status, next, msgs)) = self.serve_pull(b, &req, false) {
                self.respond_to_pull(req, status, next, msgs);
            }
        }
    }

    /// The pull callback. It acts only if it answers the outstanding pull of the ProcessQueue it
    /// was sent for; a response for a dropped or replaced ProcessQueue ends that chain.
    pub(super) fn handle_pull_response(
        &mut self,
        r: PqRef,
        pull: PullRequestId,
        status: PullStatus,
        next: u64,
        msgs: Vec<MsgId>,
    ) {
        if self.live_pq(&r).is_none() {
            return;
        }
        let (c, mq) = (r.c, &r.mq);
        let pq = self.consumers[c].pq_mut(mq, r.pq).expect("live_pq checked it");
        let Some(outstanding) = pq.outstanding_pull.take_if(|o| o.id == pull) else { return };
        pq.last_pull_error = match status {
            PullStatus::Error(code) => Some(code),
            _ => None,
        };
        match status {
            PullStatus::Found => {
                self.consumers[c].stats.pulled += msgs.len() as u64;
                let client = self.consumers[c].client_id.clone();
                // Re-filtered with the subscription the request was sent with.
                let sent_with = outstanding.subscription;
                // What the consumer subscribes now, named in a drop only when it differs.
                let current =
                    self.consumers[c].subs.get(&*mq.topic).map(|s| s.sub_string.clone()).filter(|s| **s != *sent_with.sub_string);
                let mut kept = msgs;
                kept.retain(|&m| {
                    if sent_with.client_tag_match(self.messages[m as usize].tag().as_deref()) {
                        return true;
                    }
                    self.consumers[c].stats.client_filtered += 1;
                    if self.trace_messages {
                        self.emit_client_filtered(m, &client, &sent_with.sub_string, current.as_ref());
                    }
                    false
                });
                let pq = self.consumers[c].pq_mut(mq, r.pq).expect("checked above");
                pq.next_offset = next;
                if !kept.is_empty() {
                    for &m in &kept {
                        let off = self.messages[m as usize].queue_offset();
                        pq.in_flight.insert(off, m);
                        pq.max_offset = Some(pq.max_offset.map_or(off, |x| x.max(off)));
                    }
                    if self.consumers[c].orderly {
                        self.kick_orderly(&r);
                    } else {
                        let delay = self.consumers[c].spec.consume_time_ms;
                        let started_at = self.now;
                        self.schedule(
                            delay,
                            Action::ConsumeDone(Box::new(wide::ConsumeDone { pq: r.clone(), msgs: kept, started_at })),
                        );
                    }
                }
                self.schedule(0, Action::PullSend { pq: Box::new(r) });
            }
            PullStatus::NoNewMsg | PullStatus::NoMatchedMsg => {
                let con = &mut self.consumers[c];
                let pq = con.pqs.get_mut(mq).expect("checked above");
                pq.next_offset = next;
                // correctTagsOffset: nothing in flight, so the offset may jump to nextOffset.
                if pq.in_flight.is_empty() {
                    match con.offsets.get_mut(mq) {
                        Some(e) => *e = (*e).max(next),
                        None => {
                            con.offsets.insert(mq.clone(), next);
                        }
                    }
                }
                self.schedule(0, Action::PullSend { pq: Box::new(r) });
            }
            PullStatus::OffsetIllegal => self.fix_illegal_offset(r, next),
            PullStatus::Error(_) => {
                self.schedule(PULL_DELAY_ON_EXCEPTION, Action::PullSend { pq: Box::new(r) });
            }
        }
    }

    /// OFFSET_ILLEGAL: the ProcessQueue is dropped, the offset set to `nextBeginOffset` and
    /// persisted, the queue removed, and a rebalance re-creates it (`pullMessage`'s callback).
    fn fix_illegal_offset(&mut self, r: PqRef, next: u64) {
        let (c, mq) = (r.c, r.mq.clone());
        self.drop_process_queue(c, &mq, super::records::DropReason::OffsetIllegal);
        self.consumers[c].offsets.insert(mq.clone(), next);
        self.persist_one_as(c, &mq, true);
        let client = self.consumers[c].client_id.clone();
        self.emit(Event::OffsetIllegal { client, mq: mq.clone(), next });
        // removeProcessQueue: the entry leaves the table whatever removeUnnecessaryMessageQueue says.
        self.remove_unnecessary_message_queue(c, &mq);
        if !self.consumers[c].pqs.get(&mq).is_some_and(|pq| pq.removal_waits_for_listener) {
            self.consumers[c].pqs.remove(&mq);
        }
        self.rebalance_immediately(c);
    }
}
