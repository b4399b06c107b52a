//! Pulls: the client's request, the broker's PullMessageProcessor, long polling, the client's response.

use super::*;

impl World {
    pub(super) fn handle_pull_send(&mut self, c: usize, inc: u32, mq: MessageQueue) {
        if !self.consumer_alive(c, inc) {
            return;
        }
        let con = &self.consumers[c];
        let Some(pq) = con.pqs.get(&mq) else { return };
        if pq.dropped {
            return;
        }
        if pq.in_flight.len() > CACHED_MESSAGES_THRESHOLD {
            self.schedule(PULL_DELAY_FLOW_CONTROL, Action::PullSend { c, inc, mq });
            return;
        }
        let Some(sd) = con.subs.get(&mq.topic) else {
            self.schedule(PULL_DELAY_ON_EXCEPTION, Action::PullSend { c, inc, mq });
            return;
        };
        let commit_offset =
            if con.model == MessageModel::Clustering { con.offsets.get(&mq).copied().filter(|o| *o > 0) } else { None };
        let req = PullRequest {
            consumer: c,
            incarnation: inc,
            mq: mq.clone(),
            offset: pq.next_offset,
            sub_version: sd.sub_version,
            commit_offset,
        };
        let latency = con.latency;
        self.consumers[c].stats.pulls += 1;
        let Some(b) = self.broker_index(&mq.broker) else { return };
        self.schedule(latency, Action::PullArrive { broker: b, req });
    }

    /// `PullMessageProcessor.processRequest`. Returns `None` when the request is held.
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
        let Some((read, _)) = broker.topics.get(&mq.topic).copied() else { return error(self, "TOPIC_NOT_EXIST") };
        if mq.queue_id >= read {
            return error(self, "SYSTEM_ERROR");
        }
        let Some(info) = broker.groups.get(&*group) else { return error(self, "SUBSCRIPTION_NOT_EXIST") };
        let Some(sub) = info.subscription_table.get(&mq.topic).cloned() else { return error(self, "SUBSCRIPTION_NOT_EXIST") };
        if sub.sub_version < req.sub_version {
            return error(self, "SUBSCRIPTION_NOT_LATEST");
        }
        let writer = broker.table_writer.get(&(group.to_string(), mq.topic.clone())).cloned().unwrap_or_else(|| name("?"));
        let sql = match &sub.expression_type {
            ExpressionType::Tag => None,
            ExpressionType::Other(t) if t == "SQL92" => {
                if !broker.enable_property_filter {
                    return error(self, "SYSTEM_ERROR");
                }
                // The filter data registered by heartbeats, not the table entry, is what evaluates.
                let Some(fd) = broker.filter_manager.get(&mq.topic, &group) else { return error(self, "FILTER_DATA_NOT_EXIST") };
                if fd.client_version < req.sub_version {
                    return error(self, "FILTER_DATA_NOT_LATEST");
                }
                let Some(expr) = fd.compiled.clone() else { return error(self, "FILTER_DATA_NOT_EXIST") };
                let bloom = if broker.enable_calc_filter_bitmap {
                    fd.bloom.as_ref().map(|b| (b.bit_pos.clone(), fd.born_time))
                } else {
                    None
                };
                Some((expr, bloom))
            }
            ExpressionType::Other(_) => return error(self, "SUBSCRIPTION_PARSE_FAILED"),
        };
        let max = broker.max_offset(&mq.topic, mq.queue_id);
        let offset = req.offset;
        let (status, next, msgs) = if max == 0 {
            if offset == 0 {
                (PullStatus::NoNewMsg, 0, Vec::new())
            } else {
                (PullStatus::OffsetIllegal, 0, Vec::new())
            }
        } else if offset == max {
            (PullStatus::NoNewMsg, offset, Vec::new())
        } else if offset > max {
            (PullStatus::OffsetIllegal, max, Vec::new())
        } else {
            let cq = broker.cq(&mq.topic, mq.queue_id).expect("queue exists below max offset");
            let mut next = offset;
            let mut found = Vec::new();
            let mut skipped = Vec::new();
            let mut o = offset;
            while o < max {
                if o - offset >= MAX_SCAN_ENTRIES || found.len() >= PULL_BATCH_SIZE {
                    break;
                }
                let e = cq.entries[o as usize];
                next = o + 1;
                o += 1;
                if !sub.broker_tag_match(e.tags_code) {
                    skipped.push((e.msg, None));
                    continue;
                }
                if let Some((expr, bloom)) = &sql {
                    let m = &self.messages[e.msg as usize];
                    if let Some(miss) = self.bloom_precheck(broker, bloom.as_ref(), m) {
                        skipped.push((e.msg, Some(miss)));
                        continue;
                    }
                    let verdict = filter::evaluate(expr, m);
                    if verdict != Verdict::True {
                        skipped.push((e.msg, Some(verdict.as_str())));
                        continue;
                    }
                }
                found.push(e.msg);
            }
            if self.trace_messages {
                for &(m, verdict) in &skipped {
                    self.emit(Event::BrokerFiltered {
                        msg: m,
                        client: client.clone(),
                        expression: sub.sub_string.clone(),
                        table_owner: writer.clone(),
                        verdict,
                    });
                }
            }
            if found.is_empty() {
                (PullStatus::NoMatchedMsg, next, Vec::new())
            } else {
                (PullStatus::Found, next, found)
            }
        };
        if status == PullStatus::NoNewMsg && allow_suspend {
            // Long polling: PULL_NOT_FOUND is parked until a matching message or the timeout.
            let codes = if sub.expression_type == ExpressionType::Tag && !sub.is_all() {
                Some(sub.codes.iter().copied().collect())
            } else {
                None
            };
            self.brokers[b].held.push(HeldPull { request: req.clone(), suspended_at: self.now, codes });
            self.emit(Event::PullHeld { broker: bname, client, mq: mq.clone(), offset });
            self.commit_from_pull(b, req);
            return None;
        }
        let expression = Some(sub.sub_string.clone());
        let found = msgs.len() as u32;
        self.emit(Event::PullServed {
            broker: bname,
            client,
            mq: mq.clone(),
            offset,
            next,
            status: status.clone(),
            found,
            expression,
        });
        self.commit_from_pull(b, req);
        Some((status, next, msgs))
    }

    /// `isMatchedByConsumeQueue` for SQL92: with bitmaps on, a message stored after the filter
    /// data was born must hit the group's bloom bits. `Some("BLOOM_MISS")` when it does not.
    pub(super) fn bloom_precheck(&self, broker: &Broker, bloom: Option<&(Vec<i32>, u64)>, m: &Message) -> Option<&'static str> {
        let (bit_pos, born) = bloom?;
        let bitmap = broker.bitmaps.get(&m.id)?;
        if m.born_at < *born {
            return None;
        }
        match broker.filter_manager.bloom_filter().is_hit(bit_pos, bitmap) {
            Ok(false) => Some("BLOOM_MISS"),
            _ => None,
        }
    }

    /// `CommitLogDispatcherCalcBitMap`: OR in the bits of every group whose filter matches.
    pub(super) fn calc_bitmap(&mut self, b: usize, msg: MsgId) {
        let broker = &self.brokers[b];
        let m = &self.messages[msg as usize];
        let filters = broker.filter_manager.get_topic(&m.topic);
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

    pub(super) fn commit_from_pull(&mut self, b: usize, req: &PullRequest) {
        if let Some(o) = req.commit_offset {
            let group = self.consumers[req.consumer].group.to_string();
            self.brokers[b].offsets.insert((req.mq.topic.clone(), group, req.mq.queue_id), o);
        }
    }

    /// `PullRequestHoldService`: on a new message (`arrived`) or the periodic check.
    pub(super) fn check_held(&mut self, b: usize, arrived: Option<(&str, u32, i64)>) {
        if self.brokers[b].held.is_empty() {
            return;
        }
        let now = self.now;
        let broker = &self.brokers[b];
        // Decide first without moving anything: most arrivals wake nobody.
        let wakes = |h: &HeldPull| {
            let r = &h.request;
            match arrived {
                Some((topic, q, code)) => {
                    r.mq.queue_id == q
                        && r.mq.topic == topic
                        && h.codes.as_ref().is_none_or(|cs| cs.contains(&(code as i32)))
                        && broker.max_offset(topic, q) > r.offset
                }
                // The periodic check passes no tags code, which every filter accepts.
                None => now >= h.suspended_at + BROKER_SUSPEND_MAX || broker.max_offset(&r.mq.topic, r.mq.queue_id) > r.offset,
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
            if let Some((status, next, msgs)) = self.serve_pull(b, &req, false) {
                let latency = self.consumers[req.consumer].latency;
                self.schedule(
                    latency,
                    Action::PullResponse { c: req.consumer, inc: req.incarnation, mq: req.mq, status, next, msgs },
                );
            }
        }
    }

    pub(super) fn handle_pull_response(
        &mut self,
        c: usize,
        inc: u32,
        mq: MessageQueue,
        status: PullStatus,
        next: u64,
        msgs: Vec<MsgId>,
    ) {
        if !self.consumer_alive(c, inc) {
            return;
        }
        if self.consumers[c].pqs.get(&mq).is_none_or(|pq| pq.dropped) {
            return;
        }
        match status {
            PullStatus::Found => {
                let con = &mut self.consumers[c];
                con.stats.pulled += msgs.len() as u64;
                let own = con.subs.get(&mq.topic).cloned();
                let client = con.client_id.clone();
                let mut kept = Vec::new();
                for m in msgs {
                    let tag = self.messages[m as usize].tag.clone();
                    match &own {
                        Some(sd) if !sd.client_tag_match(tag.as_deref()) => {
                            self.consumers[c].stats.client_filtered += 1;
                            if self.trace_messages {
                                self.emit(Event::ClientFiltered {
                                    msg: m,
                                    client: client.clone(),
                                    expression: sd.sub_string.clone(),
                                });
                            }
                        }
                        _ => kept.push(m),
                    }
                }
                let pq = self.consumers[c].pqs.get_mut(&mq).expect("checked above");
                pq.next_offset = next;
                if !kept.is_empty() {
                    for &m in &kept {
                        let off = self.messages[m as usize].queue_offset;
                        pq.in_flight.insert(off, m);
                        pq.max_offset = Some(pq.max_offset.map_or(off, |x| x.max(off)));
                    }
                    if self.consumers[c].orderly {
                        self.kick_orderly(c, &mq);
                    } else {
                        let delay = self.consumers[c].spec.consume_time_ms;
                        self.schedule(delay, Action::ConsumeDone { c, inc, mq: mq.clone(), msgs: kept });
                    }
                }
                self.schedule(0, Action::PullSend { c, inc, mq });
            }
            PullStatus::NoNewMsg | PullStatus::NoMatchedMsg => {
                let con = &mut self.consumers[c];
                let pq = con.pqs.get_mut(&mq).expect("checked above");
                pq.next_offset = next;
                // correctTagsOffset: nothing in flight, so the offset may jump to nextOffset.
                if pq.in_flight.is_empty() {
                    let e = con.offsets.entry(mq.clone()).or_insert(0);
                    *e = (*e).max(next);
                }
                self.schedule(0, Action::PullSend { c, inc, mq });
            }
            PullStatus::OffsetIllegal => {
                let con = &mut self.consumers[c];
                if let Some(pq) = con.pqs.get_mut(&mq) {
                    pq.next_offset = next;
                    pq.in_flight.clear();
                }
                con.offsets.insert(mq.clone(), next);
                self.persist_one(c, &mq);
                self.schedule(0, Action::PullSend { c, inc, mq });
            }
            PullStatus::Error(_) => {
                self.schedule(PULL_DELAY_ON_EXCEPTION, Action::PullSend { c, inc, mq });
            }
        }
    }
}
