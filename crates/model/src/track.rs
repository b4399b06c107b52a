//! Incremental reading of the model's log, once per animation frame, through the neutral `Trace`
//! facts: the plot series (backlog per partition, consumed per consumer, reassignment instants) in
//! a fixed number of time buckets, and the message dots in flight. Memory is bounded: the series
//! have `BUCKETS` points, the dots at most `MAX_DOTS`.

use std::collections::BTreeMap;

use super::{DropKind, PartitionId, Simulation, Trace};
use mqviz_engine::Millis;

/// Points per series, whatever the scenario length.
pub const BUCKETS: usize = 240;
/// Dots alive at once; the oldest go first.
pub const MAX_DOTS: usize = 6000;
/// New dots per frame (a jump to the end spawns none of the older events).
pub const MAX_SPAWN: usize = 2500;
/// Wall time of one dot's flight, ms.
pub const DOT_MS: f64 = 900.0;
/// Partitions and consumers with a plot series of their own.
const MAX_SERIES: usize = 64;
const MAX_MARKS: usize = 512;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DotKind {
    /// producer → partition
    Stored,
    /// partition → consumer
    Delivered,
    /// dropped by the broker's filter on the way out of the partition
    BrokerFiltered,
    /// delivered, then dropped by the consumer's own filter
    ClientFiltered,
}

#[derive(Clone, Copy, Debug)]
pub struct Dot {
    pub kind: DotKind,
    /// Colour key of the message's tag or key.
    pub key: u32,
    pub partition: PartitionId,
    /// Offset in the partition (for `Stored`: where the cell lands).
    pub offset: u64,
    /// Consumer index (unused for `Stored`).
    pub consumer: u32,
    /// Producer index (`Stored` only).
    pub producer: u32,
    /// Animation-clock time at which the flight starts.
    pub born: f64,
}

/// A heartbeat on its way from a consumer to a broker.
#[derive(Clone, Copy, Debug)]
pub struct Pulse {
    pub consumer: u32,
    pub broker: u32,
    /// It overwrote broker-side state (drawn as a filled diamond, not a ring).
    pub overwrite: bool,
    pub born: f64,
}

/// Pulses alive at once.
const MAX_PULSES: usize = 400;

#[derive(Default)]
pub struct Tracker {
    epoch: u64,
    processed: usize,
    pub bucket_ms: Millis,
    pub until: Millis,
    /// Last bucket written (inclusive); `None` before the first.
    cur: Option<usize>,
    /// Partitions with a series, and their labels.
    pub partitions: Vec<PartitionId>,
    pub partition_labels: Vec<String>,
    /// The model's word for a partition (`queue`, `partition`...).
    pub noun: &'static str,
    series_of: BTreeMap<PartitionId, usize>,
    /// Partitions that are internal or beyond `MAX_SERIES` (no series).
    ignored: BTreeMap<PartitionId, ()>,
    log_end: Vec<u64>,
    committed: Vec<BTreeMap<u32, u64>>,
    /// The lowest committed offset per partition (of `committed`), kept as commits come: every
    /// stored message asks for its partition's backlog.
    low_committed: Vec<u64>,
    /// The facts of one update, kept to be refilled (a seek's frame reads tens of thousands).
    facts: Vec<(usize, Trace)>,
    /// [partition][bucket] backlog = stored − committed (lowest group).
    pub backlog: Vec<Vec<u32>>,
    pub consumers: Vec<String>,
    /// [consumer][bucket] messages consumed in the bucket.
    pub consumed: Vec<Vec<u32>>,
    /// Simulated times of assignment changes.
    pub rebalances: Vec<Millis>,
    pub dots: Vec<Dot>,
    pub pulses: Vec<Pulse>,
    /// Bumped whenever the series change (the plots redraw only then).
    pub series_version: u64,
}

impl Tracker {
    /// Number of buckets with data.
    pub fn len(&self) -> usize {
        self.cur.map(|c| c + 1).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.cur.is_none()
    }

    fn bucket(&self, at: Millis) -> usize {
        ((at / self.bucket_ms.max(1)) as usize).min(BUCKETS - 1)
    }

    fn reset(&mut self, sim: &dyn Simulation, epoch: u64) {
        *self = Tracker { epoch, ..Tracker::default() };
        self.until = sim.until().max(1);
        self.noun = sim.partition_noun();
        self.bucket_ms = self.until.div_ceil(BUCKETS as u64).max(1);
        self.learn_partitions(sim);
        self.learn_consumers(sim);
        self.series_version = 1;
    }

    /// Reads partition labels from the model's view: at reset and when an unknown partition
    /// shows up in the log (rare: a new topic or queue).
    fn learn_partitions(&mut self, sim: &dyn Simulation) {
        let view = sim.view();
        let multi_topic = view.topics.iter().filter(|t| !t.internal).count() > 1;
        let multi_broker = view.brokers.len() > 1;
        for t in &view.topics {
            for p in &t.partitions {
                if self.series_of.contains_key(&p.id) || self.ignored.contains_key(&p.id) {
                    continue;
                }
                if t.internal || self.partitions.len() >= MAX_SERIES {
                    self.ignored.insert(p.id, ());
                    continue;
                }
                let mut label = if multi_topic { format!("{} {}", t.name, p.label) } else { p.label.clone() };
                if let Some(b) = p.broker.filter(|_| multi_broker).and_then(|b| view.brokers.get(b)) {
                    label = format!("{} {label}", b.name);
                }
                self.add_partition(p.id, label);
            }
        }
    }

    fn add_partition(&mut self, id: PartitionId, label: String) {
        self.series_of.insert(id, self.partitions.len());
        self.partitions.push(id);
        self.partition_labels.push(label);
        self.log_end.push(0);
        self.committed.push(BTreeMap::new());
        self.low_committed.push(0);
        let mut series = vec![0; BUCKETS];
        if let Some(c) = self.cur {
            series.truncate(c + 1);
        } else {
            series.clear();
        }
        series.resize(BUCKETS, 0);
        self.backlog.push(series);
    }

    fn learn_consumers(&mut self, sim: &dyn Simulation) {
        let view = sim.view();
        for c in view.consumers.iter().skip(self.consumers.len()).take(MAX_SERIES.saturating_sub(self.consumers.len())) {
            self.consumers.push(c.name.clone());
            self.consumed.push(vec![0; BUCKETS]);
        }
    }

    fn series(&mut self, sim: &dyn Simulation, p: PartitionId) -> Option<usize> {
        if let Some(&i) = self.series_of.get(&p) {
            return Some(i);
        }
        if self.ignored.contains_key(&p) {
            return None;
        }
        self.learn_partitions(sim);
        if !self.series_of.contains_key(&p) {
            // Not in the view (yet): never plotted.
            self.ignored.insert(p, ());
        }
        self.series_of.get(&p).copied()
    }

    fn consumer_series(&mut self, sim: &dyn Simulation, c: u32) -> Option<usize> {
        let c = c as usize;
        if c >= self.consumers.len() && c < MAX_SERIES {
            self.learn_consumers(sim);
        }
        (c < self.consumers.len()).then_some(c)
    }

    fn current_backlog(&self, q: usize) -> u32 {
        self.log_end[q].saturating_sub(self.low_committed[q]).min(u32::MAX as u64) as u32
    }

    /// Fills buckets up to `b` with the current backlog.
    fn advance_to(&mut self, b: usize) {
        let start = match self.cur {
            Some(c) if c >= b => return,
            Some(c) => c + 1,
            None => 0,
        };
        for q in 0..self.partitions.len() {
            let v = self.current_backlog(q);
            for bb in start..=b {
                self.backlog[q][bb] = v;
            }
        }
        self.cur = Some(b);
    }

    /// Reads the log entries added since the last call. `anim` = (animation clock, speed) when
    /// dots should be spawned (playing, motion allowed).
    pub fn update(&mut self, sim: &dyn Simulation, epoch: u64, anim: Option<(f64, f64)>) {
        let len = sim.log_len();
        if epoch != self.epoch || self.until == 0 || len < self.processed {
            self.reset(sim, epoch);
        }
        let from = self.processed.min(len);
        let spawn_from = len.saturating_sub(MAX_SPAWN);
        let now = sim.now();
        let mut facts = std::mem::take(&mut self.facts);
        facts.clear();
        sim.trace(from, len, &mut |i, t| facts.push((i, t)));
        let mut changed = len > from;
        for &(i, fact) in &facts {
            let at = sim.log_time(i);
            let b = self.bucket(at);
            self.advance_to(b);
            let born = anim
                .filter(|_| i >= spawn_from)
                .map(|(clock, speed)| clock - ((now.saturating_sub(at)) as f64 / speed.max(1e-6)).min(DOT_MS * 0.4));
            let mut dot = |kind, key, partition, offset, consumer: Option<u32>, producer: Option<u32>| {
                if let Some(born) = born {
                    self.dots.push(Dot {
                        kind,
                        key,
                        partition,
                        offset,
                        consumer: consumer.unwrap_or(u32::MAX),
                        producer: producer.unwrap_or(u32::MAX),
                        born,
                    });
                }
            };
            match fact {
                Trace::Stored { key, partition, offset, producer, .. } => {
                    dot(DotKind::Stored, key, partition, offset, None, producer);
                    if let Some(q) = self.series(sim, partition) {
                        self.log_end[q] = self.log_end[q].max(offset + 1);
                        self.backlog[q][b] = self.current_backlog(q);
                    }
                }
                Trace::Delivered { key, partition, consumer, .. } => {
                    dot(DotKind::Delivered, key, partition, 0, Some(consumer), None);
                    if let Some(c) = self.consumer_series(sim, consumer) {
                        self.consumed[c][b] = self.consumed[c][b].saturating_add(1);
                    }
                }
                Trace::Dropped { key, partition, consumer, kind, .. } => {
                    let k = match kind {
                        DropKind::ClientFilter => DotKind::ClientFiltered,
                        DropKind::BrokerFilter | DropKind::Other | DropKind::DeadLetter => DotKind::BrokerFiltered,
                    };
                    dot(k, key, partition, 0, consumer, None);
                }
                Trace::Committed { partition, group, offset } => {
                    if let Some(q) = self.series(sim, partition) {
                        self.committed[q].insert(group, offset);
                        self.low_committed[q] = self.committed[q].values().min().copied().unwrap_or(0);
                        self.backlog[q][b] = self.current_backlog(q);
                    }
                }
                Trace::Reassigned { .. } => {
                    if self.rebalances.last() != Some(&at) && self.rebalances.len() < MAX_MARKS {
                        self.rebalances.push(at);
                    }
                }
                Trace::Heartbeat { consumer, broker } => {
                    if let Some(born) = born {
                        self.pulses.push(Pulse { consumer, broker, overwrite: false, born });
                    }
                }
                Trace::Overwritten { broker, consumer } => {
                    if let (Some(born), Some(consumer)) = (born, consumer) {
                        self.pulses.push(Pulse { consumer, broker, overwrite: true, born });
                    }
                }
                Trace::Lifecycle { .. } => {}
            }
        }
        self.processed = len;
        self.facts = facts;
        let nb = self.bucket(now);
        if self.cur.is_none_or(|c| c < nb) {
            self.advance_to(nb);
            changed = true;
        }
        if changed {
            self.series_version += 1;
        }
        if let Some((clock, _)) = anim {
            self.dots.retain(|d| clock - d.born < DOT_MS);
            self.pulses.retain(|p| clock - p.born < DOT_MS);
        }
        if self.pulses.len() > MAX_PULSES {
            let extra = self.pulses.len() - MAX_PULSES;
            self.pulses.drain(..extra);
        }
        if self.dots.len() > MAX_DOTS {
            let extra = self.dots.len() - MAX_DOTS;
            self.dots.drain(..extra);
        }
    }
}
