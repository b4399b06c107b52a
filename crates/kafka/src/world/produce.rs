//! Producers: send scripts, the partitioner (`KafkaProducer.partition`, spec §6) and appends to
//! the partition leader. Records sent at one instant to one partition travel as one produce
//! request and are appended as one batch, in send order.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::events::Choice;
use crate::partitioner::{PartitionChoice, Partitioner, PartitionerKind, TopicView};
use crate::scenario::{PartitionerSpec, ProducerSpec, SendSpec};

/// Bytes a record adds to a batch besides its key and value (attributes, deltas, lengths,
/// headers count): what the uniform sticky partitioner counts towards `batch.size`.
pub const RECORD_OVERHEAD_BYTES: u32 = 8;

#[derive(Clone, Debug)]
pub struct ProducerState {
    pub id: Name,
    /// The send scripts: the scenario's, then any added by `produce` commands.
    pub sends: Vec<Arc<SendSpec>>,
    pub partitioner: Partitioner,
    pub latency: Option<Millis>,
    pub sent: u64,
}

impl ProducerState {
    pub fn new(spec: &ProducerSpec) -> ProducerState {
        let kind = match spec.partitioner {
            PartitionerSpec::BuiltIn => PartitionerKind::BuiltIn { ignore_keys: spec.ignore_keys, batch_size: spec.batch_size },
            PartitionerSpec::RoundRobin => PartitionerKind::RoundRobin,
        };
        ProducerState {
            id: Name::from(spec.id.as_str()),
            sends: spec.sends.iter().cloned().map(Arc::new).collect(),
            partitioner: Partitioner::new(kind),
            latency: spec.latency_ms,
            sent: 0,
        }
    }
}

/// A record on its way to the leader.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub send: u32,
    pub index: u32,
    pub key_colour: u32,
    pub bytes: u32,
    pub born_at: Millis,
    pub choice: Choice,
}

/// A stored record. Key and value are rendered from the send script on demand.
#[derive(Clone, Copy, Debug)]
pub struct Message {
    pub producer: u32,
    pub send: u32,
    pub index: u32,
    pub pid: u32,
    pub offset: u64,
    pub epoch: i32,
    pub born_at: Millis,
    pub stored_at: Millis,
    pub key_colour: u32,
}

/// `{i}` replaced by the record's index.
pub fn render(template: &str, i: u32) -> String {
    if template.contains("{i}") {
        template.replace("{i}", &i.to_string())
    } else {
        template.to_string()
    }
}

impl World {
    fn producer_latency(&self, p: usize) -> Millis {
        self.producers[p].latency.unwrap_or(self.scenario.latency_ms)
    }

    /// Sends record `i` of a script and, with an interval or explicit times, schedules the next
    /// one; a script with no interval sends all its records at once.
    pub(super) fn produce_next(&mut self, producer: usize, send: usize, i: u32) {
        let spec = self.producers[producer].sends[send].clone();
        let end = if !spec.times.is_empty() {
            let mut j = i as usize + 1;
            while j < spec.times.len() && spec.times[j] == spec.times[i as usize] {
                j += 1;
            }
            j as u32
        } else if spec.interval_ms == 0 {
            spec.count
        } else {
            i + 1
        };
        let mut batches: BTreeMap<u32, Vec<Pending>> = BTreeMap::new();
        if let Some(plan) = self.plan_script(producer, &spec) {
            let mut key = String::new();
            for k in i..end.min(spec.count) {
                if let Some((pid, pending)) = self.prepare_record(producer, send, &spec, &plan, k, &mut key) {
                    batches.entry(pid).or_default().push(pending);
                }
            }
        }
        let latency = self.producer_latency(producer);
        for (pid, records) in batches {
            self.schedule(latency, Action::ProduceArrive { producer, pid, records });
        }
        if end < spec.count {
            let next_at = if spec.times.is_empty() { self.now + spec.interval_ms } else { spec.times[end as usize] };
            self.queue.push(next_at, self.handler_cause, Action::ProduceNext { producer, send, i: end });
        }
    }

    /// What stays the same for every record of a script at this instant.
    fn plan_script(&mut self, producer: usize, spec: &SendSpec) -> Option<ScriptPlan> {
        let Some(t) = self.topic_index(&spec.topic) else {
            let (id, topic) = (self.producers[producer].id.clone(), Name::from(spec.topic.as_str()));
            self.emit(Event::ProduceFailed { producer: id, topic, reason: "unknown topic".into() });
            return None;
        };
        let count = self.topics[t].pids.len() as i32;
        let split = |template: &str| match template.split_once("{i}") {
            Some((a, b)) => (a.to_string(), Some(b.to_string())),
            None => (template.to_string(), None),
        };
        Some(ScriptPlan {
            topic: t,
            view: TopicView { num_partitions: count, available: (0..count).collect() },
            key: spec.key.as_deref().map(split),
            value: split(&spec.value),
        })
    }

    /// `KafkaProducer.partition` for one record; `None` (logged) when it cannot be sent.
    fn prepare_record(
        &mut self,
        producer: usize,
        send: usize,
        spec: &SendSpec,
        plan: &ScriptPlan,
        i: u32,
        key: &mut String,
    ) -> Option<(u32, Pending)> {
        let count = plan.view.num_partitions;
        key.clear();
        let key_bytes: Option<&[u8]> = match &plan.key {
            Some((prefix, suffix)) => {
                key.push_str(prefix);
                if let Some(suffix) = suffix {
                    push_decimal(key, i);
                    if suffix.contains("{i}") {
                        key.push_str(&suffix.replace("{i}", &i.to_string()));
                    } else {
                        key.push_str(suffix);
                    }
                }
                Some(key.as_bytes())
            }
            None => None,
        };
        let value_len = match &plan.value {
            (prefix, Some(suffix)) => prefix.len() + decimal_len(i) + rendered_len(suffix, i),
            (prefix, None) => prefix.len(),
        };
        let bytes = RECORD_OVERHEAD_BYTES + key_bytes.map_or(0, <[u8]>::len) as u32 + value_len as u32;
        let explicit = spec.partition.map(|p| p as i32);
        if let Some(p) = explicit {
            if p >= count {
                let (id, topic) = (self.producers[producer].id.clone(), Name::from(spec.topic.as_str()));
                let reason = format!("Invalid partition given with record: {p} is not in the range [0...{count})");
                self.emit(Event::ProduceFailed { producer: id, topic, reason });
                return None;
            }
        }
        let chosen = self.producers[producer].partitioner.choose(&spec.topic, key_bytes, explicit, &plan.view, &mut self.rng)?;
        let choice = match chosen {
            PartitionChoice::Explicit(_) => Choice::Explicit,
            PartitionChoice::Keyed(_) => Choice::Keyed,
            PartitionChoice::Sticky(_) => Choice::Sticky,
            PartitionChoice::RoundRobin(_) => Choice::RoundRobin,
        };
        if choice == Choice::Sticky {
            self.producers[producer].partitioner.record_appended(&spec.topic, bytes, true, &plan.view, &mut self.rng);
        }
        let key_colour = if plan.key.is_some() { self.key_colour(Some(key.as_str())) } else { mqviz_model::NO_KEY };
        let pid = self.topics[plan.topic].pids[chosen.partition() as usize];
        self.producers[producer].sent += 1;
        Some((pid, Pending { send: send as u32, index: i, key_colour, bytes, born_at: self.now, choice }))
    }

    /// The leader appends a produce request as one batch in its current epoch.
    pub(super) fn append(&mut self, producer: usize, pid: u32, records: Vec<Pending>) {
        let Some(first) = records.first().copied() else { return };
        let first_msg = self.messages.len() as MsgId;
        let p = &mut self.partitions[pid as usize];
        let base = p.log_end();
        let epoch = p.epoch;
        for (k, r) in records.iter().enumerate() {
            let msg = first_msg + k as MsgId;
            p.records.push(Rec { msg, epoch, bytes: r.bytes });
            self.messages.push(Message {
                producer: producer as u32,
                send: r.send,
                index: r.index,
                pid,
                offset: base + k as u64,
                epoch,
                born_at: r.born_at,
                stored_at: self.now,
                key_colour: r.key_colour,
            });
        }
        self.fates.resize(self.messages.len(), Fate::Pending);
        let total = self.messages.len();
        self.deliveries.iter_mut().for_each(|d| d.resize(total, 0));
        let part = self.partitions[pid as usize].part.clone();
        let id = self.producers[producer].id.clone();
        self.emit(Event::Appended {
            producer: id,
            part,
            base,
            count: records.len() as u32,
            first_msg,
            epoch,
            choice: first.choice,
        });
        self.answer_held_fetches(pid);
    }

    /// The record key of a message, as the producer serialized it.
    pub fn message_key(&self, m: &Message) -> Option<String> {
        let spec = self.producers.get(m.producer as usize)?.sends.get(m.send as usize)?;
        spec.key.as_deref().map(|k| render(k, m.index))
    }

    pub fn message_value(&self, m: &Message) -> String {
        match self.producers.get(m.producer as usize).and_then(|p| p.sends.get(m.send as usize)) {
            Some(spec) => render(&spec.value, m.index),
            None => String::new(),
        }
    }

    pub fn message_choice(&self, m: &Message) -> &'static str {
        let Some(spec) = self.producers.get(m.producer as usize).and_then(|p| p.sends.get(m.send as usize)) else { return "" };
        if spec.partition.is_some() {
            "explicit"
        } else if spec.key.is_some() {
            "keyed"
        } else {
            "sticky"
        }
    }
}

/// The length of `template` with every `{i}` replaced by `i`.
fn rendered_len(template: &str, i: u32) -> usize {
    if template.is_empty() {
        return 0;
    }
    let n = template.matches("{i}").count();
    template.len() + n * decimal_len(i) - n * 3
}

/// A send script's per-instant constants: topic, partitioner view, key and value templates split
/// at their first `{i}`.
struct ScriptPlan {
    topic: usize,
    view: TopicView,
    key: Option<(String, Option<String>)>,
    value: (String, Option<String>),
}

/// Appends `i` in decimal (the hot path of keyed sends; `write!` costs several times more).
fn push_decimal(s: &mut String, mut i: u32) {
    let mut digits = [0u8; 10];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (i % 10) as u8;
        n += 1;
        i /= 10;
        if i == 0 {
            break;
        }
    }
    for &d in digits[..n].iter().rev() {
        s.push(d as char);
    }
}

fn decimal_len(mut i: u32) -> usize {
    let mut n = 1;
    while i >= 10 {
        i /= 10;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_rendering_matches_display() {
        for i in [0u32, 7, 10, 99, 100, 12_345, u32::MAX] {
            let mut s = String::from("k");
            push_decimal(&mut s, i);
            assert_eq!(s, format!("k{i}"));
            assert_eq!(decimal_len(i), i.to_string().len());
        }
        assert_eq!(rendered_len("-{i}-{i}", 42), "-42-42".len());
        assert_eq!(render("v{i}", 3), "v3");
    }
}
