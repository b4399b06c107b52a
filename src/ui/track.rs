//! Incremental reading of the core's event log, once per animation frame: which messages were
//! consumed (for the queue cells), the plot series (backlog per queue, consumed per consumer,
//! rebalance instants) in a fixed number of time buckets, and the message dots in flight.
//! Memory is bounded: the series have `BUCKETS` points, the dots at most `MAX_DOTS`.

use std::collections::BTreeMap;

use crate::sim::engine::Millis;
use crate::sim::rocketmq::events::{Event, MsgId, Name};
use crate::sim::rocketmq::world::{is_system_topic, World};

/// Points per series, whatever the scenario length.
pub const BUCKETS: usize = 240;
/// Dots alive at once; the oldest go first.
pub const MAX_DOTS: usize = 6000;
/// New dots per frame (a jump to the end spawns none of the older events).
pub const MAX_SPAWN: usize = 2500;
/// Wall time of one dot's flight, ms.
pub const DOT_MS: f64 = 900.0;
const MAX_MARKS: usize = 512;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DotKind {
    /// producer → queue
    Stored,
    /// queue → consumer
    Consumed,
    /// dropped by the broker's tag-hash filter on the way out of the queue
    BrokerFiltered,
    /// delivered, then dropped by the consumer's own tag filter
    ClientFiltered,
}

#[derive(Clone, Copy, Debug)]
pub struct Dot {
    pub kind: DotKind,
    pub msg: MsgId,
    /// Consumer index (unused for `Stored`).
    pub consumer: u16,
    /// Animation-clock time at which the flight starts.
    pub born: f64,
}

/// A queue's identity in the series.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct QueueKey {
    pub broker: Name,
    pub topic: Name,
    pub queue_id: u32,
}

#[derive(Default)]
pub struct Tracker {
    epoch: u64,
    processed: usize,
    /// Indexed by root message id.
    pub consumed_root: Vec<bool>,
    pub bucket_ms: Millis,
    pub until: Millis,
    /// Last bucket written (inclusive); `None` before the first.
    cur: Option<usize>,
    pub queues: Vec<QueueKey>,
    max_off: Vec<u64>,
    committed: Vec<BTreeMap<Name, u64>>,
    /// [queue][bucket] backlog = stored − committed (lowest group).
    pub backlog: Vec<Vec<u32>>,
    pub consumers: Vec<Name>,
    /// [consumer][bucket] messages consumed in the bucket.
    pub consumed: Vec<Vec<u32>>,
    /// Simulated times of rebalances that changed an assignment.
    pub rebalances: Vec<Millis>,
    pub dots: Vec<Dot>,
    /// Bumped whenever the series change (the plots redraw only then).
    pub series_version: u64,
}

impl Tracker {
    /// Number of buckets with data.
    pub fn len(&self) -> usize {
        self.cur.map(|c| c + 1).unwrap_or(0)
    }

    fn bucket(&self, at: Millis) -> usize {
        ((at / self.bucket_ms.max(1)) as usize).min(BUCKETS - 1)
    }

    fn reset(&mut self, w: &World, epoch: u64) {
        *self = Tracker { epoch, ..Tracker::default() };
        self.until = w.scenario.until.max(1);
        self.bucket_ms = self.until.div_ceil(BUCKETS as u64).max(1);
        for b in &w.brokers {
            for (topic, cqs) in &b.cqs {
                if is_system_topic(topic) {
                    continue;
                }
                for q in 0..cqs.len() {
                    self.queue_index(&b.name, topic, q as u32);
                }
            }
        }
        for c in &w.consumers {
            self.consumer_index(&c.client_id);
        }
        self.series_version = 1;
    }

    fn queue_index(&mut self, broker: &Name, topic: &str, queue_id: u32) -> Option<usize> {
        if is_system_topic(topic) {
            return None;
        }
        if let Some(i) = self.queues.iter().position(|k| k.broker == *broker && &*k.topic == topic && k.queue_id == queue_id) {
            return Some(i);
        }
        if self.queues.len() >= 64 {
            return None;
        }
        self.queues.push(QueueKey { broker: broker.clone(), topic: Name::from(topic), queue_id });
        self.max_off.push(0);
        self.committed.push(BTreeMap::new());
        let mut series = vec![0; BUCKETS];
        if let Some(c) = self.cur {
            series.truncate(c + 1);
        } else {
            series.clear();
        }
        series.resize(BUCKETS, 0);
        self.backlog.push(series);
        Some(self.queues.len() - 1)
    }

    fn consumer_index(&mut self, client: &Name) -> Option<usize> {
        if let Some(i) = self.consumers.iter().position(|c| c == client) {
            return Some(i);
        }
        if self.consumers.len() >= 64 {
            return None;
        }
        self.consumers.push(client.clone());
        self.consumed.push(vec![0; BUCKETS]);
        Some(self.consumers.len() - 1)
    }

    fn current_backlog(&self, q: usize) -> u32 {
        let low = self.committed[q].values().min().copied().unwrap_or(0);
        self.max_off[q].saturating_sub(low).min(u32::MAX as u64) as u32
    }

    /// Fills buckets up to `b` with the current backlog.
    fn advance_to(&mut self, b: usize) {
        let start = match self.cur {
            Some(c) if c >= b => return,
            Some(c) => c + 1,
            None => 0,
        };
        for q in 0..self.queues.len() {
            let v = self.current_backlog(q);
            for bb in start..=b {
                self.backlog[q][bb] = v;
            }
        }
        self.cur = Some(b);
    }

    /// Reads the log entries added since the last call. `anim` = (animation clock, speed) when
    /// dots should be spawned (playing, motion allowed).
    pub fn update(&mut self, w: &World, epoch: u64, anim: Option<(f64, f64)>) {
        if epoch != self.epoch || self.until == 0 || w.log.len() < self.processed {
            self.reset(w, epoch);
        }
        let entries = w.log.entries();
        let new = &entries[self.processed.min(entries.len())..];
        if self.consumed_root.len() < w.messages.len() {
            self.consumed_root.resize(w.messages.len(), false);
        }
        let spawn_from = new.len().saturating_sub(MAX_SPAWN);
        let root = |m: MsgId| w.messages.get(m as usize).map(|x| x.root()).unwrap_or(m);
        let mut changed = !new.is_empty();
        for (i, e) in new.iter().enumerate() {
            let b = self.bucket(e.at);
            self.advance_to(b);
            let born =
                anim.map(|(clock, speed)| clock - ((w.now.saturating_sub(e.at)) as f64 / speed.max(1e-6)).min(DOT_MS * 0.4));
            let dot = |kind: DotKind, msg: MsgId, consumer: Option<usize>, dots: &mut Vec<Dot>| {
                if let Some(born) = born {
                    if i >= spawn_from {
                        dots.push(Dot { kind, msg, consumer: consumer.unwrap_or(0).min(u16::MAX as usize) as u16, born });
                    }
                }
            };
            match &e.kind {
                Event::MessageStored { msg, broker, topic, queue_id, offset, .. } => {
                    if let Some(q) = self.queue_index(broker, topic, *queue_id) {
                        self.max_off[q] = self.max_off[q].max(offset + 1);
                        self.backlog[q][b] = self.current_backlog(q);
                        dot(DotKind::Stored, *msg, None, &mut self.dots);
                    }
                }
                Event::OffsetCommitted { broker, group, mq, offset } => {
                    if let Some(q) = self.queue_index(broker, &mq.topic, mq.queue_id) {
                        self.committed[q].insert(group.clone(), *offset);
                        self.backlog[q][b] = self.current_backlog(q);
                    }
                }
                Event::Consumed { msg, client, .. } => {
                    let r = root(*msg) as usize;
                    if let Some(f) = self.consumed_root.get_mut(r) {
                        *f = true;
                    }
                    let c = self.consumer_index(client);
                    if let Some(c) = c {
                        self.consumed[c][b] = self.consumed[c][b].saturating_add(1);
                    }
                    dot(DotKind::Consumed, *msg, c, &mut self.dots);
                }
                Event::BrokerFiltered { msg, client, .. } => {
                    let c = self.consumer_index(client);
                    dot(DotKind::BrokerFiltered, *msg, c, &mut self.dots);
                }
                Event::ClientFiltered { msg, client, .. } => {
                    let c = self.consumer_index(client);
                    dot(DotKind::ClientFiltered, *msg, c, &mut self.dots);
                }
                Event::Allocated { topic, added, removed, .. }
                    if !is_system_topic(topic)
                        && (!added.is_empty() || !removed.is_empty())
                        && self.rebalances.last() != Some(&e.at)
                        && self.rebalances.len() < MAX_MARKS =>
                {
                    self.rebalances.push(e.at);
                }
                _ => {}
            }
        }
        self.processed = entries.len();
        let nb = self.bucket(w.now);
        if self.cur.is_none_or(|c| c < nb) {
            self.advance_to(nb);
            changed = true;
        }
        if changed {
            self.series_version += 1;
        }
        if let Some((clock, _)) = anim {
            self.dots.retain(|d| clock - d.born < DOT_MS);
        }
        if self.dots.len() > MAX_DOTS {
            let extra = self.dots.len() - MAX_DOTS;
            self.dots.drain(..extra);
        }
    }
}
