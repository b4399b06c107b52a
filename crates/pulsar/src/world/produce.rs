//! Producers: send scripts, routing (partition routers, the scalable `SegmentRouter`), batch
//! containers, and the broker storing entries in a partition's ledger. A publish that reaches a
//! terminated segment is rejected (`TopicTerminated`) and re-routed with the current layout.

use super::{Action, Entry, KeyId, Message, Outgoing, World, NO_PRODUCER};
use crate::events::Event;
use crate::hash::make_hash;
use crate::key_shared::NONE_KEY;
use crate::scenario::BatcherKind;
use mqviz_model::Fate;

impl World {
    /// Sends every message of script `send` due now, then schedules the next due time.
    pub(super) fn handle_produce_tick(&mut self, producer: u32, send: u32, first: u32) {
        let Some(spec) = self.producers[producer as usize].scripts.get(send as usize).map(|s| s.spec.clone()) else { return };
        // Unbatched messages of one instant travel together, one entry each.
        let mut unbatched: Vec<(u32, Vec<Outgoing>)> = Vec::new();
        let mut i = first;
        while i < spec.count && spec.time_of(i) <= self.now {
            let script = &mut self.producers[producer as usize].scripts[send as usize];
            let key = script.key.as_mut().map(|k| k.key(i, &mut self.keys));
            let ordering_key = script.ordering_key.as_mut().map(|k| k.key(i, &mut self.keys));
            let out = Outgoing {
                key,
                ordering_key,
                body: super::Body { producer, script: send, index: i },
                producer,
                born_at: self.now,
                copy: None,
                deliver_at: 0,
            };
            let partition = self.route(producer, out.key);
            self.producers[producer as usize].sent += 1;
            if self.producers[producer as usize].spec.batching.enabled {
                self.add_to_batch(producer, partition, out);
            } else {
                match unbatched.iter_mut().find(|(p, _)| *p == partition) {
                    Some((_, list)) => list.push(out),
                    None => unbatched.push((partition, vec![out])),
                }
            }
            i += 1;
        }
        let latency = self.producers[producer as usize].latency;
        for (partition, messages) in unbatched {
            self.schedule(latency, Action::PublishArrive { producer, partition, batched: false, messages });
        }
        if i < spec.count {
            let delay = spec.time_of(i).saturating_sub(self.now);
            self.schedule(delay, Action::ProduceTick { producer, send, i });
        }
    }

    /// The partition (or segment) a message goes to under the producer's router.
    fn route(&mut self, producer: u32, key: Option<KeyId>) -> u32 {
        let now = self.now as i64;
        let key = key.map(|k| self.keys.text(k));
        let p = &mut self.producers[producer as usize];
        let topic = &self.topics[p.topic as usize];
        if let (Some(router), Some(scalable)) = (p.segment_router.as_mut(), topic.scalable.as_ref()) {
            let segment = router
                .route(&scalable.layout, key.map(str::as_bytes))
                .unwrap_or_else(|_| scalable.layout.active_segments().next().map_or(0, |s| s.segment_id));
            return scalable.segment_partitions.get(&segment).copied().unwrap_or(topic.partitions[0]);
        }
        match p.router.as_mut() {
            Some(router) => {
                let index = router.choose_partition(key, now) as usize;
                topic.partitions.get(index).copied().unwrap_or(topic.partitions[0])
            }
            None => topic.partitions[0],
        }
    }

    fn add_to_batch(&mut self, producer: u32, partition: u32, out: Outgoing) {
        let spec = self.producers[producer as usize].spec.clone();
        let container = self.producers[producer as usize].containers.entry(partition).or_default();
        let group_key = match spec.batching.batcher {
            BatcherKind::Default => None,
            // Grouped by the key's text: two templates may intern the same text under two ids.
            BatcherKind::KeyBased => out.ordering_key.or(out.key).map(|k| self.keys.name(k)),
        };
        match container.groups.iter_mut().find(|(k, _)| *k == group_key) {
            Some((_, list)) => list.push(out),
            None => container.groups.push((group_key, vec![out])),
        }
        container.messages += 1;
        let (messages, generation) = (container.messages, container.generation);
        if messages >= spec.batching.max_messages {
            self.flush_batch(producer, partition);
        } else if messages == 1 {
            self.schedule(spec.batching.max_publish_delay_ms, Action::FlushBatch { producer, partition, generation });
        }
    }

    pub(super) fn handle_flush_batch(&mut self, producer: u32, partition: u32, generation: u64) {
        let current = self.producers[producer as usize].containers.get(&partition).map(|c| c.generation);
        if current == Some(generation) {
            self.flush_batch(producer, partition);
        }
    }

    /// Sends the container's batches: one entry per key group (a single message goes unbatched).
    fn flush_batch(&mut self, producer: u32, partition: u32) {
        let p = &mut self.producers[producer as usize];
        let latency = p.latency;
        let Some(container) = p.containers.get_mut(&partition) else { return };
        let groups = std::mem::take(&mut container.groups);
        container.messages = 0;
        container.generation += 1;
        for (_, messages) in groups {
            let batched = messages.len() > 1;
            self.schedule(latency, Action::PublishArrive { producer, partition, batched, messages });
        }
    }

    /// The broker receives a publish: a terminated segment refuses it and the producer re-routes
    /// with the current layout; otherwise the entries are appended to the ledger.
    pub(super) fn handle_publish(&mut self, producer: u32, partition: u32, batched: bool, messages: Vec<Outgoing>) {
        if self.partitions[partition as usize].terminated {
            self.reroute_rejected(producer, partition, messages);
            return;
        }
        if batched {
            self.store_entry(partition, messages.into_iter(), true);
        } else {
            for m in messages {
                self.store_entry(partition, std::iter::once(m), false);
            }
        }
    }

    fn reroute_rejected(&mut self, producer: u32, partition: u32, messages: Vec<Outgoing>) {
        self.emit(Event::PublishRejected { producer, partition, messages: messages.len() as u32 });
        if producer == NO_PRODUCER || self.producers[producer as usize].segment_router.is_none() {
            return;
        }
        // TopicTerminated comes back, the producer reloads the layout and sends again.
        let latency = self.producers[producer as usize].latency;
        let mut regrouped: Vec<(u32, Vec<Outgoing>)> = Vec::new();
        for m in messages {
            let target = self.route(producer, m.key);
            match regrouped.iter_mut().find(|(p, _)| *p == target) {
                Some((_, list)) => list.push(m),
                None => regrouped.push((target, vec![m])),
            }
        }
        for (target, list) in regrouped {
            for m in list {
                self.schedule(
                    2 * latency,
                    Action::PublishArrive { producer, partition: target, batched: false, messages: vec![m] },
                );
            }
        }
    }

    /// Appends one entry (a batch when `batched`) and wakes the partition's subscriptions.
    pub(super) fn store_entry(&mut self, partition: u32, messages: impl ExactSizeIterator<Item = Outgoing>, batched: bool) {
        let mut messages = messages.peekable();
        let Some(first) = messages.peek() else { return };
        let key_make_hash = match first.ordering_key.or(first.key) {
            Some(k) => self.keys.make_hash(k),
            None => make_hash(NONE_KEY),
        };
        let delayed = first.deliver_at > 0;
        let part = &mut self.partitions[partition as usize];
        let entry = part.entries.len() as i64;
        let first_msg = self.messages.len() as u32;
        let count = messages.len() as u32;
        part.entries.push(Entry { first_msg, messages: count, key_make_hash, delayed });
        for (b, out) in messages.enumerate() {
            let msg = self.messages.len() as u32;
            let batch_index = batched.then_some(b as u32);
            if let Some(c) = &out.copy {
                self.copy_of.insert(msg, c.origin);
            }
            self.messages.push(Message { partition, entry, batch_index, out });
            self.fates.push(Fate::Pending);
            self.emit(Event::MessageStored { msg });
        }
        let subs = self.partitions[partition as usize].subscriptions.len();
        for s in 0..subs {
            let sub = &mut self.partitions[partition as usize].subscriptions[s];
            sub.cursor.on_entry_added(entry);
            if !sub.members.is_empty() {
                self.request_read(partition, s as u32, 0);
            }
        }
    }
}
