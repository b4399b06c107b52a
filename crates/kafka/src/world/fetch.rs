//! The consumer's fetch path (spec §4, §5; seed 003) and the brokers' answers: metadata,
//! Fetch with long polling, ListOffsets for resets, OffsetsForLeaderEpoch for validation, and
//! `updateFetchPositions` / `collectFetch` / `sendFetches` on the client.
//!
//! Every state change goes through the algorithm layer's `SubscriptionState`, so invalid
//! transitions are ignored exactly as upstream; `note_fetch_state` logs the ones that happened.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::consumer::Completed;
use super::*;
use crate::fetch_state::{FetchPosition, FetchState, OffsetResetStrategy};
use crate::scenario::GroupProtocol;
use mqviz_engine::sort::CollectSorted;

/// A committed offset and the leader epoch of the record before it.
pub type Committed = (u64, Option<i32>);

/// What a metadata response says about the cluster.
#[derive(Clone, Debug)]
pub struct MetadataSnapshot {
    /// Partition id -> (leader broker, leader epoch).
    pub leaders: Vec<(u32, usize, i32)>,
    pub topics: Vec<(Name, u32)>,
}

#[derive(Clone, Debug)]
pub struct FetchEntry {
    pub pid: u32,
    pub offset: u64,
    /// `currentLeaderEpoch` (KIP-320): the epoch the client believes the leader has.
    pub leader_epoch: Option<i32>,
}

#[derive(Clone, Debug)]
pub struct FetchRequest {
    pub c: usize,
    pub inc: u32,
    pub broker: usize,
    pub entries: Vec<FetchEntry>,
    pub max_partition_bytes: u32,
}

#[derive(Clone, Debug)]
pub struct FetchData {
    pub records: Vec<Rec>,
    pub high_watermark: u64,
}

#[derive(Clone, Debug)]
pub struct FetchPart {
    pub pid: u32,
    pub offset: u64,
    pub result: Result<FetchData, &'static str>,
}

#[derive(Clone, Debug)]
pub struct ListOffsetsPart {
    pub pid: u32,
    pub strategy: OffsetResetStrategy,
    pub result: Result<u64, &'static str>,
}

#[derive(Clone, Debug)]
pub struct EpochRequestPart {
    pub pid: u32,
    pub current_leader_epoch: Option<i32>,
    pub position: FetchPosition,
}

#[derive(Clone, Debug)]
pub struct EpochResponsePart {
    pub pid: u32,
    pub position: FetchPosition,
    /// `(end offset, epoch)`, `-1` when undefined.
    pub result: Result<(i64, i32), &'static str>,
}

fn strategy_text(s: OffsetResetStrategy) -> String {
    match s {
        OffsetResetStrategy::ByDuration { millis } => format!("by_duration {millis} ms"),
        other => other.name().to_ascii_lowercase(),
    }
}

impl World {
    // ---- metadata -------------------------------------------------------------------------

    pub(super) fn request_metadata(&mut self, c: usize) {
        let con = &mut self.consumers[c];
        if con.meta.in_flight {
            return;
        }
        con.meta.in_flight = true;
        let (inc, latency) = (con.inc, con.latency);
        self.schedule(latency, Action::MetadataArrive { c, inc });
    }

    /// What a MetadataResponse says now.
    pub(super) fn cluster_metadata(&self) -> MetadataSnapshot {
        MetadataSnapshot {
            leaders: self.partitions.iter().map(|p| (p.part.pid, p.leader, p.epoch)).collect(),
            topics: self.topics.iter().map(|t| (t.name.clone(), t.pids.len() as u32)).collect(),
        }
    }

    pub(super) fn serve_metadata(&mut self, c: usize, inc: u32) {
        let snapshot = self.cluster_metadata();
        let latency = self.consumers[c].latency;
        self.schedule(latency, Action::MetadataResponse { c, inc, snapshot: Arc::new(snapshot) });
    }

    pub(super) fn metadata_refresh_tick(&mut self, c: usize, inc: u32, seq: u64) {
        if !self.alive(c, inc) || self.consumers[c].meta.refresh_seq != seq {
            return;
        }
        self.request_metadata(c);
        let age = self.consumers[c].config.metadata_max_age_ms;
        self.schedule(age, Action::MetadataRefresh { c, inc, seq });
    }

    pub(super) fn metadata_response(&mut self, c: usize, inc: u32, snapshot: &MetadataSnapshot) {
        if !self.alive(c, inc) {
            return;
        }
        let mut changes: Vec<String> = Vec::new();
        let first = !self.consumers[c].meta.known;
        {
            let meta = &self.consumers[c].meta;
            for (name, count) in &snapshot.topics {
                match meta.topics.get(name) {
                    None if !first => changes.push(format!("new topic {name} ({count} partitions)")),
                    Some(old) if old != count => changes.push(format!("{name} has {count} partitions (was {old})")),
                    _ => {}
                }
            }
            for (pid, leader, epoch) in &snapshot.leaders {
                match meta.leaders.get(pid) {
                    Some(old) if *old != (*leader, *epoch) => changes.push(format!(
                        "{} leader {} epoch {}",
                        self.partitions[*pid as usize].part, self.brokers[*leader].name, epoch
                    )),
                    _ => {}
                }
            }
        }
        let con = &mut self.consumers[c];
        con.meta.in_flight = false;
        con.meta.known = true;
        con.meta.topics = snapshot.topics.iter().cloned().collect_map();
        con.meta.leaders = snapshot.leaders.iter().map(|(p, l, e)| (*p, (*l, *e))).collect_map();
        if first || !changes.is_empty() {
            con.meta.version += 1;
            let text = if first {
                format!("initial ({} topics)", snapshot.topics.len())
            } else if changes.len() > 8 {
                format!("{} and {} more", changes[..8].join(", "), changes.len() - 8)
            } else {
                changes.join(", ")
            };
            let client = con.name.clone();
            self.emit(Event::MetadataUpdated { client, changes: text });
            self.refresh_pattern_subscription(c);
        }
        self.retry_missing_topics(c);
        self.wake_if_waiting(c);
    }

    /// `Metadata.handleMetadataResponse`: UNKNOWN_TOPIC_OR_PARTITION for a requested topic is
    /// retriable, so the client asks again after `retry.backoff.ms` (100 ms), doubling up to
    /// `retry.backoff.max.ms` (1 s), instead of waiting for `metadata.max.age.ms`. The requested
    /// topics are the subscription and, for a classic leader, the group's. (Java adds 20% jitter;
    /// the model has none, so runs stay reproducible without drawing from the seed.)
    fn retry_missing_topics(&mut self, c: usize) {
        const RETRY_BACKOFF_MS: Millis = 100;
        const RETRY_BACKOFF_MAX_MS: Millis = 1_000;
        let con = &self.consumers[c];
        let subscription = con.subs.subscription();
        let mut requested = subscription.iter().chain(&con.classic.watched_topics);
        let missing = con.pattern.is_none() && requested.any(|t| !con.meta.topics.contains_key(t.as_str()));
        if !missing {
            self.consumers[c].meta.missing_retries = 0;
            return;
        }
        let retries = con.meta.missing_retries.min(4);
        let delay = (RETRY_BACKOFF_MS << retries).min(RETRY_BACKOFF_MAX_MS);
        let inc = con.inc;
        self.consumers[c].meta.missing_retries += 1;
        self.schedule(delay, Action::MetadataRetry { c, inc });
    }

    /// Re-evaluates a pattern subscription against the topics the client knows.
    pub(super) fn refresh_pattern_subscription(&mut self, c: usize) {
        let con = &self.consumers[c];
        let Some(pattern) = &con.pattern else { return };
        if !con.meta.known {
            return;
        }
        let topics: Vec<String> = con.meta.topics.keys().filter(|t| pattern.matches(t)).map(|t| t.to_string()).collect();
        if let Ok(true) = self.consumers[c].subs.subscribe_from_pattern(topics) {
            match self.consumers[c].protocol {
                GroupProtocol::Classic => self.request_rejoin(c, "pattern matches other topics"),
                GroupProtocol::Consumer => self.cg_subscription_changed(c),
            }
        }
    }

    // ---- fetch ----------------------------------------------------------------------------

    /// `sendFetches`: one request per leader without a fetch in flight, for every fetchable
    /// partition that has no buffered data.
    pub(super) fn send_fetches(&mut self, c: usize) {
        if !self.consumers[c].meta.known {
            return;
        }
        let fetchable = self.consumers[c].subs.fetchable_partitions();
        let mut by_broker: BTreeMap<usize, Vec<FetchEntry>> = BTreeMap::new();
        let mut unknown_leader = false;
        for tp in fetchable {
            let Some(pid) = self.pid_of(&tp) else { continue };
            let con = &self.consumers[c];
            if con.fetch.buffered.iter().any(|b| b.pid == pid && b.pos < b.records.len()) {
                continue;
            }
            let Some(&(leader, _)) = con.meta.leaders.get(&pid) else {
                unknown_leader = true;
                continue;
            };
            if con.fetch.in_flight.get(leader).copied().unwrap_or(true) {
                continue;
            }
            let Some(state) = con.subs.state(&tp) else { continue };
            let Some(pos) = state.position else { continue };
            by_broker.entry(leader).or_default().push(FetchEntry {
                pid,
                offset: pos.offset.max(0) as u64,
                leader_epoch: pos.current_leader.epoch,
            });
        }
        if unknown_leader {
            self.request_metadata(c);
        }
        for (broker, entries) in by_broker {
            let con = &mut self.consumers[c];
            con.fetch.in_flight[broker] = true;
            let request =
                FetchRequest { c, inc: con.inc, broker, entries, max_partition_bytes: con.config.max_partition_fetch_bytes };
            let latency = con.latency;
            self.schedule(latency, Action::FetchArrive { broker, request });
        }
    }

    /// The leader's answer for one partition, or `None` when there is nothing to return yet.
    fn fetch_part(&self, broker: usize, entry: &FetchEntry, max_bytes: u32) -> FetchPart {
        let p = &self.partitions[entry.pid as usize];
        let result = if p.leader != broker {
            Err("NOT_LEADER_OR_FOLLOWER")
        } else if entry.leader_epoch.is_some_and(|e| e < p.epoch) {
            Err("FENCED_LEADER_EPOCH")
        } else if entry.leader_epoch.is_some_and(|e| e > p.epoch) {
            Err("UNKNOWN_LEADER_EPOCH")
        } else if entry.offset > p.log_end() || entry.offset < p.log_start() {
            Err("OFFSET_OUT_OF_RANGE")
        } else {
            let hw = p.high_watermark();
            let mut bytes = 0u64;
            let mut end = entry.offset;
            while let Some(r) = p.record(end).filter(|_| end < hw) {
                let size = r.bytes as u64;
                if end > entry.offset && bytes + size > max_bytes as u64 {
                    break;
                }
                bytes += size;
                end += 1;
            }
            Ok(FetchData { records: p.range(entry.offset, end).to_vec(), high_watermark: hw })
        };
        FetchPart { pid: entry.pid, offset: entry.offset, result }
    }

    /// Fetch arrives at a broker: answered at once if any partition has data or an error, else
    /// held until data arrives or `fetch.max.wait.ms` passes.
    pub(super) fn serve_fetch(&mut self, broker: usize, request: FetchRequest) {
        let parts: Vec<FetchPart> =
            request.entries.iter().map(|e| self.fetch_part(broker, e, request.max_partition_bytes)).collect();
        let ready = parts.iter().any(|p| p.result.as_ref().map_or(true, |d| !d.records.is_empty()));
        let max_wait = self.consumers[request.c].config.fetch_max_wait_ms;
        if ready || max_wait == 0 {
            self.respond_fetch(broker, &request, parts);
        } else {
            let id = self.fresh_id();
            self.held.insert(id, request);
            self.schedule(max_wait, Action::FetchWaitExpired { broker, id });
        }
    }

    fn respond_fetch(&mut self, broker: usize, request: &FetchRequest, parts: Vec<FetchPart>) {
        let latency = self.consumers[request.c].latency;
        self.schedule(latency, Action::FetchResponse { c: request.c, inc: request.inc, broker, parts });
    }

    pub(super) fn fetch_wait_expired(&mut self, broker: usize, id: u64) {
        if let Some(request) = self.held.remove(&id) {
            let parts = request.entries.iter().map(|e| self.fetch_part(broker, e, request.max_partition_bytes)).collect();
            self.respond_fetch(broker, &request, parts);
        }
    }

    /// New data (or a leader change) on `pid` completes the fetches held for it.
    pub(super) fn answer_held_fetches(&mut self, pid: u32) {
        let ids: Vec<u64> = self.held.iter().filter(|(_, r)| r.entries.iter().any(|e| e.pid == pid)).map(|(id, _)| *id).collect();
        for id in ids {
            if let Some(request) = self.held.remove(&id) {
                let broker = request.broker;
                let parts = request.entries.iter().map(|e| self.fetch_part(broker, e, request.max_partition_bytes)).collect();
                self.respond_fetch(broker, &request, parts);
            }
        }
    }

    pub(super) fn fetch_response(&mut self, c: usize, inc: u32, broker: usize, parts: Vec<FetchPart>) {
        if !self.alive(c, inc) {
            return;
        }
        if let Some(f) = self.consumers[c].fetch.in_flight.get_mut(broker) {
            *f = false;
        }
        for part in parts {
            let tp = self.tp_of(part.pid);
            let Some(state) = self.consumers[c].subs.state(&tp) else { continue };
            let current = state.position.map(|p| p.offset);
            let fetching = state.fetch_state == FetchState::Fetching && !state.paused;
            match part.result {
                Ok(data) => {
                    if !fetching || current != Some(part.offset as i64) {
                        continue;
                    }
                    if let Some((to, why)) = self.skip_gaps.get(&(part.pid, c)).cloned() {
                        // A position a seek set past the log end is now a valid fetch offset:
                        // the records appended below it meanwhile will never be read.
                        if to <= part.offset {
                            self.note_skipped(c, part.pid, to, &why);
                        }
                    }
                    let subs = &mut self.consumers[c].subs;
                    let hw = data.high_watermark as i64;
                    let _ = subs.update_high_watermark(&tp, hw);
                    let _ = subs.update_last_stable_offset(&tp, hw);
                    let _ = subs.update_log_start_offset(&tp, 0);
                    if data.records.is_empty() {
                        continue;
                    }
                    let to = part.offset + data.records.len() as u64;
                    self.consumers[c].fetch.buffered.push_back(Completed {
                        pid: part.pid,
                        tp,
                        records: data.records,
                        first_offset: part.offset,
                        pos: 0,
                    });
                    let (client, p) = (self.client(c), self.part(part.pid));
                    self.emit(Event::Fetched { client, part: p, from: part.offset, to, high_watermark: data.high_watermark });
                }
                Err(error) => {
                    let (client, p) = (self.client(c), self.part(part.pid));
                    self.emit(Event::FetchError { client, part: p, error });
                    match error {
                        "OFFSET_OUT_OF_RANGE" if current == Some(part.offset as i64) => self.out_of_range(c, &tp, part.offset),
                        _ => self.request_metadata(c),
                    }
                }
            }
        }
        self.wake_if_waiting(c);
    }

    /// A fetch position beyond the log: reset by policy, or throw with `auto.offset.reset=none`.
    fn out_of_range(&mut self, c: usize, tp: &TopicPartition, offset: u64) {
        if self.consumers[c].config.auto_offset_reset == OffsetResetStrategy::None {
            self.consumers[c].fetch.pending_error = Some(format!(
                "OffsetOutOfRangeException: Fetch position FetchPosition{{offset={offset}}} is out of range for partition {}-{}",
                tp.topic, tp.partition
            ));
            return;
        }
        let before = self.fetch_snapshot(c, tp);
        let _ = self.consumers[c].subs.request_offset_reset(tp, None);
        self.note_fetch_state(c, tp, before, "fetch offset out of range: reset by auto.offset.reset");
    }

    /// `collectFetch`: up to `max.poll.records` buffered records of partitions still fetchable
    /// at the position they were fetched for; each partition's position moves past them.
    pub(super) fn collect_fetch(&mut self, c: usize) -> u32 {
        let max = self.consumers[c].config.max_poll_records;
        let mut returned = 0u32;
        while returned < max {
            let con = &mut self.consumers[c];
            let Some(front) = con.fetch.buffered.front_mut() else { break };
            let next = front.first_offset + front.pos as u64;
            let usable = con.subs.state(&front.tp).is_some_and(|s| {
                s.is_fetchable() && s.position.is_some_and(|p| p.offset == next as i64) && front.pos < front.records.len()
            });
            if !usable {
                con.fetch.buffered.pop_front();
                continue;
            }
            let take = ((max - returned) as usize).min(front.records.len() - front.pos);
            let slice = &front.records[front.pos..front.pos + take];
            let msgs: Arc<[MsgId]> = slice.iter().map(|r| r.msg).collect();
            let last_epoch = slice[take - 1].epoch;
            front.pos += take;
            let (pid, tp, done) = (front.pid, front.tp.clone(), front.pos >= front.records.len());
            let leader = con.subs.state(&tp).and_then(|s| s.position).map(|p| p.current_leader).unwrap_or_default();
            let to = next + take as u64;
            let _ = con
                .subs
                .set_position(&tp, FetchPosition { offset: to as i64, offset_epoch: Some(last_epoch), current_leader: leader });
            if done {
                con.fetch.buffered.pop_front();
                con.subs.move_partition_to_end(&tp);
            }
            returned += take as u32;
            let (client, part) = (self.client(c), self.part(pid));
            self.emit(Event::Polled { client, part, from: next, to, msgs });
        }
        returned
    }

    // ---- positions ------------------------------------------------------------------------

    /// `updateFetchPositions`: validate positions against the current leaders, fetch committed
    /// offsets for new partitions, reset the rest by policy.
    pub(super) fn update_fetch_positions(&mut self, c: usize) {
        self.validate_positions(c);
        if self.consumers[c].subs.has_all_fetch_positions() {
            return;
        }
        if self.fetch_committed_offsets(c) {
            return;
        }
        self.reset_positions(c);
    }

    /// `validatePositionsIfNeeded`: a leader with a new epoch makes positions with an offset
    /// epoch await validation; OffsetsForLeaderEpoch goes to the leader.
    fn validate_positions(&mut self, c: usize) {
        let assigned: Vec<TopicPartition> = self.consumers[c].subs.assigned_partitions().to_vec();
        let mut requests: BTreeMap<usize, Vec<EpochRequestPart>> = BTreeMap::new();
        for tp in assigned {
            let Some(pid) = self.pid_of(&tp) else { continue };
            let leader = self.consumers[c].meta.leader(pid);
            if leader.leader.is_some() {
                let before = self.fetch_snapshot(c, &tp);
                let _ = self.consumers[c].subs.maybe_validate_position_for_current_leader(&tp, leader);
                if self.fetch_snapshot(c, &tp) != before {
                    let why = format!("leader epoch is now {}: validate the position", leader.epoch.unwrap_or(-1));
                    self.note_fetch_state(c, &tp, before, &why);
                }
            }
            let con = &self.consumers[c];
            let Some(state) = con.subs.state(&tp) else { continue };
            if state.fetch_state != FetchState::AwaitValidation || con.fetch.validating.contains(&pid) {
                continue;
            }
            let (Some(position), Some(broker)) = (state.position, leader.leader) else { continue };
            requests.entry(broker as usize).or_default().push(EpochRequestPart {
                pid,
                current_leader_epoch: leader.epoch,
                position,
            });
        }
        for (broker, parts) in requests {
            let con = &mut self.consumers[c];
            con.fetch.validating.extend(parts.iter().map(|p| p.pid));
            let (inc, latency) = (con.inc, con.latency);
            self.schedule(latency, Action::EpochsArrive { broker, c, inc, parts });
        }
    }

    pub(super) fn serve_epochs(&mut self, broker: usize, c: usize, inc: u32, parts: Vec<EpochRequestPart>) {
        let answers = parts
            .into_iter()
            .map(|r| {
                let p = &self.partitions[r.pid as usize];
                let result = if p.leader != broker {
                    Err("NOT_LEADER_OR_FOLLOWER")
                } else if r.current_leader_epoch.is_some_and(|e| e < p.epoch) {
                    Err("FENCED_LEADER_EPOCH")
                } else {
                    let (epoch, end) = p.end_offset_for(r.position.offset_epoch.unwrap_or(-1));
                    Ok((end, epoch))
                };
                EpochResponsePart { pid: r.pid, position: r.position, result }
            })
            .collect();
        let latency = self.consumers[c].latency;
        self.schedule(latency, Action::EpochsResponse { c, inc, parts: answers });
    }

    /// `maybeCompleteValidation` for each answer: a log that ends below the position was
    /// truncated; the position goes back to the divergence point, or with
    /// `auto.offset.reset=none` the next `poll()` throws `LogTruncationException`.
    pub(super) fn epochs_response(&mut self, c: usize, inc: u32, parts: Vec<EpochResponsePart>) {
        if !self.alive(c, inc) {
            return;
        }
        for part in parts {
            self.consumers[c].fetch.validating.remove(&part.pid);
            let tp = self.tp_of(part.pid);
            let (end, epoch) = match part.result {
                Ok(x) => x,
                Err(error) => {
                    let (client, p) = (self.client(c), self.part(part.pid));
                    self.emit(Event::FetchError { client, part: p, error });
                    self.request_metadata(c);
                    continue;
                }
            };
            let before = self.fetch_snapshot(c, &tp);
            let result = self.consumers[c].subs.maybe_complete_validation(&tp, part.position, end, epoch);
            let why = if end < 0 || epoch < 0 {
                "validation: the leader does not know the epoch: reset by auto.offset.reset".to_string()
            } else if end < part.position.offset {
                format!(
                    "validation: epoch {} ends at {end} on the leader, below position {}: truncation, rewind to the divergence point",
                    part.position.offset_epoch.unwrap_or(-1),
                    part.position.offset
                )
            } else {
                format!("validation: epoch {epoch} ends at {end}, position {} is safe", part.position.offset)
            };
            match result {
                Ok(Some(truncation)) => {
                    let (client, p) = (self.client(c), self.part(part.pid));
                    let position = truncation.fetch_position.offset;
                    self.emit(Event::LogTruncationDetected { client, part: p, position, divergent: truncation.divergent });
                    let divergent = match truncation.divergent {
                        Some((o, e)) => format!("the first offset known to diverge is {o} (epoch {e})"),
                        None => "the divergence point is unknown".into(),
                    };
                    self.consumers[c].fetch.pending_error = Some(format!(
                        "LogTruncationException: Truncated partitions detected with divergent offsets {{{tp}={divergent}}}",
                        tp = format_args!("{}-{}", tp.topic, tp.partition)
                    ));
                }
                Ok(None) => self.note_fetch_state(c, &tp, before, &why),
                Err(e) => self.consumers[c].fetch.pending_error = Some(e.to_string()),
            }
        }
        self.wake_if_waiting(c);
    }

    /// `initWithCommittedOffsetsIfNeeded`: asks the coordinator for the committed offsets of
    /// INITIALIZING partitions. True while an answer is awaited (resets wait for it).
    fn fetch_committed_offsets(&mut self, c: usize) -> bool {
        let initializing = self.consumers[c].subs.initializing_partitions();
        let pids: Vec<u32> = initializing
            .iter()
            .filter_map(|tp| self.pid_of(tp))
            .filter(|p| !self.consumers[c].fetch.committed_in_flight.contains(p))
            .collect();
        if !pids.is_empty() {
            let con = &mut self.consumers[c];
            con.fetch.committed_in_flight.extend(pids.iter().copied());
            let (g, inc, latency) = (con.group, con.inc, con.latency);
            self.schedule(latency, Action::OffsetFetchArrive { g, c, inc, pids });
        }
        !self.consumers[c].fetch.committed_in_flight.is_empty()
    }

    pub(super) fn serve_offset_fetch(&mut self, g: usize, c: usize, inc: u32, pids: Vec<u32>) {
        let offsets = pids.into_iter().map(|p| (p, self.groups[g].committed.get(&p).copied())).collect();
        let latency = self.consumers[c].latency;
        self.schedule(latency, Action::OffsetFetchResponse { c, inc, offsets });
    }

    /// Committed offsets found: `seekUnvalidated` (AWAIT_VALIDATION when they carry an epoch).
    /// None: `auto.offset.reset` (AWAIT_RESET), or `NoOffsetForPartitionException` with `none`.
    pub(super) fn offset_fetch_response(&mut self, c: usize, inc: u32, offsets: Vec<(u32, Option<Committed>)>) {
        if !self.alive(c, inc) {
            return;
        }
        let mut missing = Vec::new();
        for (pid, committed) in offsets {
            self.consumers[c].fetch.committed_in_flight.remove(&pid);
            let tp = self.tp_of(pid);
            if self.consumers[c].subs.state(&tp).map(|s| s.fetch_state) != Some(FetchState::Initializing) {
                continue;
            }
            let before = self.fetch_snapshot(c, &tp);
            match committed {
                Some((offset, epoch)) => {
                    let leader = self.consumers[c].meta.leader(pid);
                    let position = FetchPosition { offset: offset as i64, offset_epoch: epoch, current_leader: leader };
                    let _ = self.consumers[c].subs.seek_unvalidated(&tp, position);
                    let why = match epoch {
                        Some(e) if leader.epoch.is_some() => {
                            format!("committed offset {offset} with leader epoch {e}: validate it")
                        }
                        _ => format!("committed offset {offset}"),
                    };
                    self.note_fetch_state(c, &tp, before, &why);
                }
                None => missing.push(tp),
            }
        }
        if !missing.is_empty() {
            let strategy = self.consumers[c].config.auto_offset_reset;
            if strategy == OffsetResetStrategy::None {
                let names: Vec<String> = missing.iter().map(|tp| format!("{}-{}", tp.topic, tp.partition)).collect();
                self.consumers[c].fetch.pending_error = Some(format!(
                    "NoOffsetForPartitionException: Undefined offset with no reset policy for partitions: [{}]",
                    names.join(", ")
                ));
            } else {
                let why = format!("no committed offset: auto.offset.reset={}", strategy_text(strategy));
                for tp in missing {
                    let before = self.fetch_snapshot(c, &tp);
                    let _ = self.consumers[c].subs.request_offset_reset(&tp, None);
                    self.note_fetch_state(c, &tp, before, &why);
                }
            }
        }
        self.wake_if_waiting(c);
    }

    /// `resetPositionsIfNeeded`: ListOffsets to each leader for partitions awaiting a reset.
    fn reset_positions(&mut self, c: usize) {
        let needing = self.consumers[c].subs.partitions_needing_reset(self.now as i64);
        let mut by_broker: BTreeMap<usize, Vec<(u32, OffsetResetStrategy)>> = BTreeMap::new();
        for tp in needing {
            let Some(pid) = self.pid_of(&tp) else { continue };
            let con = &self.consumers[c];
            if con.fetch.resetting.contains(&pid) {
                continue;
            }
            let Some(&(leader, _)) = con.meta.leaders.get(&pid) else { continue };
            let strategy = con.subs.reset_strategy(&tp).ok().flatten().unwrap_or(con.config.auto_offset_reset);
            by_broker.entry(leader).or_default().push((pid, strategy));
        }
        for (broker, parts) in by_broker {
            let con = &mut self.consumers[c];
            con.fetch.resetting.extend(parts.iter().map(|p| p.0));
            let (inc, latency) = (con.inc, con.latency);
            self.schedule(latency, Action::ListOffsetsArrive { broker, c, inc, parts });
        }
    }

    pub(super) fn serve_list_offsets(&mut self, broker: usize, c: usize, inc: u32, parts: Vec<(u32, OffsetResetStrategy)>) {
        let now = self.now;
        let answers = parts
            .into_iter()
            .map(|(pid, strategy)| {
                let p = &self.partitions[pid as usize];
                let result = if p.leader != broker {
                    Err("NOT_LEADER_OR_FOLLOWER")
                } else {
                    Ok(match strategy {
                        OffsetResetStrategy::Earliest => p.log_start(),
                        OffsetResetStrategy::Latest | OffsetResetStrategy::None => p.high_watermark(),
                        OffsetResetStrategy::ByDuration { millis } => {
                            let since = now.saturating_sub(millis.max(0) as u64);
                            let first = p.records.partition_point(|r| self.messages[r.msg as usize].stored_at < since);
                            p.log_start() + first as u64
                        }
                    })
                };
                ListOffsetsPart { pid, strategy, result }
            })
            .collect();
        let latency = self.consumers[c].latency;
        self.schedule(latency, Action::ListOffsetsResponse { c, inc, parts: answers });
    }

    /// Reset results apply only if the partition still awaits the same reset; the position
    /// carries no epoch, so no validation follows.
    pub(super) fn list_offsets_response(&mut self, c: usize, inc: u32, parts: Vec<ListOffsetsPart>) {
        if !self.alive(c, inc) {
            return;
        }
        for part in parts {
            self.consumers[c].fetch.resetting.remove(&part.pid);
            let tp = self.tp_of(part.pid);
            let offset = match part.result {
                Ok(o) => o,
                Err(error) => {
                    let (client, p) = (self.client(c), self.part(part.pid));
                    self.emit(Event::FetchError { client, part: p, error });
                    self.request_metadata(c);
                    continue;
                }
            };
            let before = self.fetch_snapshot(c, &tp);
            let leader = self.consumers[c].meta.leader(part.pid);
            let position = FetchPosition { offset: offset as i64, offset_epoch: None, current_leader: leader };
            let _ = self.consumers[c].subs.maybe_seek_unvalidated(&tp, position, part.strategy);
            let why = format!("reset to {} offset {offset}", strategy_text(part.strategy));
            let moved = self.fetch_snapshot(c, &tp) != before;
            self.note_fetch_state(c, &tp, before, &why);
            if moved {
                self.note_skipped(c, part.pid, offset, &why);
            }
        }
        self.wake_if_waiting(c);
    }

    /// Records below a new position that the group never received (and will not now).
    pub(super) fn note_skipped(&mut self, c: usize, pid: u32, new_offset: u64, why: &str) {
        // A position past the log end skips records not written yet. They are reported when a
        // fetch from that position succeeds; an out-of-range fetch resets it instead.
        if new_offset > self.partitions[pid as usize].log_end() {
            self.skip_gaps.insert((pid, c), (new_offset, why.to_string()));
        } else {
            self.skip_gaps.remove(&(pid, c));
        }
        let g = self.consumers[c].group;
        let committed = self.groups[g].committed.get(&pid).map(|x| x.0);
        let p = &self.partitions[pid as usize];
        let from = self.skip_cursors.get(g).and_then(|cursors| cursors.get(&pid)).copied().unwrap_or(p.log_start());
        let to = new_offset.min(p.log_end());
        if from >= to {
            return;
        }
        if let Some(cursors) = self.skip_cursors.get_mut(g) {
            cursors.insert(pid, to);
        }
        let msgs: Arc<[MsgId]> = p.range(from, to).iter().map(|r| r.msg).filter(|m| self.delivered(g, *m) == 0).collect();
        if msgs.is_empty() {
            return;
        }
        let (client, part) = (self.client(c), self.part(pid));
        let reason = match committed {
            Some(_) => format!("{why}; the group never read them"),
            None => format!("{why}; the group had no committed offset and never read them"),
        };
        self.emit(Event::Skipped { client, part, from, to, msgs, reason });
    }
}
