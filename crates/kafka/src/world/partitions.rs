//! Partition logs on their leaders: records with the leader epoch they were written in, the high
//! watermark, and the leader-epoch cache (`LeaderEpochFileCache`) that answers
//! OffsetsForLeaderEpoch. Leader changes and unclean elections (log truncation) happen here.
//!
//! Every partition has one in-sync replica set that follows its leader instantly, so the high
//! watermark is the log end offset and the last stable offset equals it (no transactions).

use std::sync::Arc;

use super::*;
use crate::scenario::TopicSpec;

/// One record in a partition log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rec {
    pub msg: MsgId,
    /// `partitionLeaderEpoch` of its batch.
    pub epoch: i32,
    /// Key, value and record overhead: what `max.partition.fetch.bytes` and `batch.size` count.
    pub bytes: u32,
}

#[derive(Clone, Debug)]
pub struct PartitionLog {
    pub topic: usize,
    pub partition: u32,
    pub part: Part,
    pub leader: usize,
    pub epoch: i32,
    /// The log start offset: 0, or where a snapshot's log begins (records below it were
    /// deleted before t=0; a fetch there is out of range).
    pub base: u64,
    /// The record at offset `base + i` is `records[i]` (no retention during a run).
    pub records: Vec<Rec>,
    /// `(epoch, start offset)`, ascending: the leader-epoch cache.
    pub epochs: Vec<(i32, u64)>,
}

impl PartitionLog {
    pub fn log_end(&self) -> u64 {
        self.base + self.records.len() as u64
    }

    pub fn log_start(&self) -> u64 {
        self.base
    }

    /// The record at `offset`, if the log holds it.
    pub fn record(&self, offset: u64) -> Option<&Rec> {
        self.records.get(usize::try_from(offset.checked_sub(self.base)?).ok()?)
    }

    /// The records at offsets `from..to` (clamped to the log).
    pub fn range(&self, from: u64, to: u64) -> &[Rec] {
        let index = |o: u64| (o.clamp(self.base, self.log_end()) - self.base) as usize;
        &self.records[index(from)..index(to).max(index(from))]
    }

    pub fn high_watermark(&self) -> u64 {
        self.log_end()
    }

    /// `LeaderEpochFileCache.endOffsetFor(requestedEpoch, logEndOffset)`: `(epoch, end offset)`,
    /// `(-1, -1)` when undefined.
    pub fn end_offset_for(&self, requested: i32) -> (i32, i64) {
        if requested < 0 {
            return (-1, -1);
        }
        if self.epochs.last().is_some_and(|(e, _)| *e == requested) {
            return (requested, self.log_end() as i64);
        }
        let Some(higher) = self.epochs.iter().find(|(e, _)| *e > requested) else { return (-1, -1) };
        match self.epochs.iter().rev().find(|(e, _)| *e <= requested) {
            Some((floor, _)) => (*floor, higher.1 as i64),
            None => (requested, higher.1 as i64),
        }
    }

    /// `assign(epoch, startOffset)` when a replica becomes leader.
    fn start_epoch(&mut self, epoch: i32) {
        let start = self.log_end();
        self.epochs.push((epoch, start));
        self.epoch = epoch;
    }
}

impl World {
    /// Adds a topic with its partitions (ids given in creation order).
    pub(super) fn create_topic(&mut self, spec: &TopicSpec, id: Uuid) {
        let t = self.topics.len();
        self.topics.push(Topic { name: Name::from(spec.name.as_str()), id, pids: Vec::new() });
        self.grow_topic(t, spec.partitions, &spec.leaders);
    }

    /// Partitions `old..count` of topic `t`, led by `leaders[p]` (or round-robin over brokers).
    fn grow_topic(&mut self, t: usize, count: u32, leaders: &[String]) {
        let from = self.topics[t].pids.len() as u32;
        for p in from..count {
            let leader = leaders
                .get(p as usize)
                .and_then(|name| self.brokers.iter().position(|b| *b.name == **name))
                .unwrap_or(p as usize % self.brokers.len().max(1));
            let pid = self.partitions.len() as u32;
            let label = Name::from(format!("{}-{p}", self.topics[t].name));
            self.partitions.push(PartitionLog {
                topic: t,
                partition: p,
                part: Part { pid, label },
                leader,
                epoch: 0,
                base: 0,
                records: Vec::new(),
                epochs: vec![(0, 0)],
            });
            self.topics[t].pids.push(pid);
        }
    }

    pub(super) fn add_partitions(&mut self, topic: &str, count: u32) {
        let Some(t) = self.topic_index(topic) else { return };
        let from = self.topics[t].pids.len() as u32;
        if count <= from {
            return;
        }
        self.grow_topic(t, count, &[]);
        let name = self.topics[t].name.clone();
        self.emit(Event::PartitionsAdded { topic: name, from, to: count });
    }

    pub(super) fn create_topic_now(&mut self, spec: &TopicSpec) {
        if self.topic_index(&spec.name).is_some() {
            return;
        }
        let id = Uuid::new(self.rng.next_u64() as i64, self.rng.next_u64() as i64);
        self.create_topic(spec, id);
        self.emit(Event::TopicCreated { topic: Name::from(spec.name.as_str()), partitions: spec.partitions });
    }

    fn broker_by_name(&self, name: Option<&str>) -> Option<usize> {
        name.and_then(|n| self.brokers.iter().position(|b| &*b.name == n))
    }

    /// A clean election: another in-sync replica leads from the log end with the next epoch.
    pub(super) fn leader_change(&mut self, pid: u32, leader: Option<&str>) {
        let next = self.broker_by_name(leader).unwrap_or_else(|| {
            let current = self.partitions[pid as usize].leader;
            (current + 1) % self.brokers.len().max(1)
        });
        let p = &mut self.partitions[pid as usize];
        p.leader = next;
        let epoch = p.epoch + 1;
        p.start_epoch(epoch);
        let (part, leader) = (p.part.clone(), self.brokers[next].name.clone());
        self.emit(Event::LeaderChanged { part, leader, epoch });
        self.answer_held_fetches(pid);
    }

    /// An unclean election: a replica that had only `offset` records becomes leader; everything
    /// at and above `offset` is gone, and the epoch cache forgets epochs that started there.
    pub(super) fn truncate(&mut self, pid: u32, offset: u64, leader: Option<&str>) {
        let next = self.broker_by_name(leader).unwrap_or_else(|| {
            let current = self.partitions[pid as usize].leader;
            (current + 1) % self.brokers.len().max(1)
        });
        let p = &mut self.partitions[pid as usize];
        // A replica holds at least what was deleted below the log start.
        let cut = offset.clamp(p.base, p.log_end());
        let lost: Arc<[MsgId]> = p.range(cut, p.log_end()).iter().map(|r| r.msg).collect();
        p.records.truncate((cut - p.base) as usize);
        p.epochs.retain(|(_, start)| *start < cut);
        p.leader = next;
        let epoch = p.epoch + 1;
        p.start_epoch(epoch);
        let (part, leader) = (p.part.clone(), self.brokers[next].name.clone());
        self.emit(Event::Truncated { part, offset: cut, epoch, leader, lost });
        self.answer_held_fetches(pid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(epochs: Vec<(i32, u64)>, len: usize) -> PartitionLog {
        PartitionLog {
            topic: 0,
            partition: 0,
            part: Part { pid: 0, label: Name::from("t-0") },
            leader: 0,
            epoch: epochs.last().map(|e| e.0).unwrap_or(0),
            base: 0,
            records: vec![Rec { msg: 0, epoch: 0, bytes: 10 }; len],
            epochs,
        }
    }

    #[test]
    fn end_offset_for_epoch_follows_the_cache() {
        let l = log(vec![(0, 0), (2, 10), (5, 20)], 30);
        assert_eq!(l.end_offset_for(5), (5, 30), "the latest epoch ends at the log end");
        assert_eq!(l.end_offset_for(2), (2, 20));
        assert_eq!(l.end_offset_for(3), (2, 20), "an epoch never seen answers with the one below");
        assert_eq!(l.end_offset_for(6), (-1, -1));
        assert_eq!(l.end_offset_for(-1), (-1, -1));
        let truncated = log(vec![(4, 7)], 9);
        assert_eq!(truncated.end_offset_for(1), (1, 7), "older than every cached epoch");
    }
}
