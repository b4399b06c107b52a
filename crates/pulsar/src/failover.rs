//! Exclusive and Failover subscriptions: which consumer is active, and what happens when that
//! changes (spec §1.1, §1.2, §6 item 2).
//!
//! The pick (`pick_active`) is a pure function of the consumers in subscribe order. The dispatcher
//! (`SingleActiveDispatcher`) returns the consequences of a change as data: the simulation
//! schedules the failover delay, then rewinds the cursor to markDelete+1 so every unacked message
//! goes to the new active consumer.

use mqviz_engine::sort::StableSort;
use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::defaults::{ACTIVE_CONSUMER_FAILOVER_DELAY_MS, FAILOVER_RING_REPLICAS};
use super::hash::{java_string_compare, make_hash};
use super::subscription::SubscribeError;
use mqviz_engine::Millis;

/// One connected consumer of a single-active-consumer subscription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailoverMember {
    /// The simulation's unique id for this consumer instance (names may repeat).
    pub consumer_id: u64,
    pub name: String,
    /// 0 is the highest priority.
    pub priority: i32,
}

/// Which upstream rule picks the active consumer of a non-partitioned topic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailoverEra {
    /// Pulsar ≥ 3.0 (PR #19502): the hash ring over the topic name.
    #[default]
    Current,
    /// Before 3.0: the first consumer in subscribe order, no sorting, no priority.
    Pre30,
}

/// What the pick depends on besides the consumers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActivePickConfig {
    /// The partition index, or -1 for a non-partitioned topic.
    pub partition_index: i32,
    /// The full topic name (`persistent://tenant/ns/t` or `...-partition-N`), hashed onto the ring.
    pub topic_name: String,
    /// PIP-392 `activeConsumerFailoverConsistentHashing`: use the ring for partitions too.
    pub consistent_hashing_for_partitions: bool,
    pub era: FailoverEra,
}

/// Stable sort by (priority ascending, name by Java `compareTo`): the order upstream keeps the list in.
fn sorted_by_priority_then_name(members: &[FailoverMember]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.stable_sort_by(|&a, &b| {
        let (x, y) = (&members[a], &members[b]);
        x.priority.cmp(&y.priority).then_with(|| java_string_compare(&x.name, &y.name))
    });
    order
}

/// The hash ring of the Failover pick: `makeHash(name + j) -> candidate index` for `j` in
/// `0..100`, later candidates overwriting earlier ones on collisions.
pub fn failover_hash_ring(candidate_names: &[&str]) -> BTreeMap<u32, usize> {
    let mut ring = BTreeMap::new();
    for (i, name) in candidate_names.iter().enumerate() {
        for j in 0..FAILOVER_RING_REPLICAS {
            ring.insert(make_hash(format!("{name}{j}").as_bytes()), i);
        }
    }
    ring
}

/// The candidate the ring assigns to `topic_name`: the ceiling point of the topic hash, else the first point.
pub fn failover_ring_pick(candidate_names: &[&str], topic_name: &str) -> Option<usize> {
    let ring = failover_hash_ring(candidate_names);
    let t = make_hash(topic_name.as_bytes());
    ring.range(t..).next().or_else(|| ring.iter().next()).map(|(_, &i)| i)
}

/// `pickAndScheduleActiveConsumer`'s choice: an index into `members` (subscribe order), or `None`
/// when nobody is connected.
pub fn pick_active(members: &[FailoverMember], config: &ActivePickConfig) -> Option<usize> {
    if members.is_empty() {
        return None;
    }
    if config.era == FailoverEra::Pre30 && config.partition_index < 0 {
        return Some(0);
    }
    let sorted = sorted_by_priority_then_name(members);
    let top_priority = members[sorted[0]].priority;
    // Only the highest-priority level is eligible.
    let group = sorted.iter().take_while(|&&i| members[i].priority == top_priority).count();
    let use_modulo = config.partition_index >= 0 && !config.consistent_hashing_for_partitions;
    let within_group = if use_modulo {
        config.partition_index as usize % group
    } else {
        let names: Vec<&str> = sorted[..group].iter().map(|&i| members[i].name.as_str()).collect();
        failover_ring_pick(&names, &config.topic_name)?
    };
    Some(sorted[within_group])
}

/// Exclusive or Failover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SingleActiveMode {
    Exclusive,
    Failover,
}

/// A change of active consumer, to be carried out by the simulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveSwitch {
    /// Cancel the read in flight for the previous active consumer (at once).
    pub cancel_pending_read: bool,
    /// Wait this long before the rest (Failover with `activeConsumerFailoverDelayTimeMillis` > 0).
    /// When it elapses call `SingleActiveDispatcher::complete_switch`, which names the consumer
    /// active at that moment.
    pub delay_ms: Millis,
    /// Rewind the cursor to markDelete+1: every unacked message is redelivered, individually
    /// acked entries are skipped.
    pub rewind_cursor: bool,
    /// Send `ActiveConsumerChange` to every consumer (Failover only).
    pub notify_all: bool,
}

/// What a membership change asks of the simulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SingleActiveEffect {
    /// The active consumer is unchanged; tell the newcomer who is active (`ActiveConsumerChange`, isActive=false).
    TellNewcomer { consumer_id: u64, active_consumer_id: u64 },
    /// The active consumer changed; with `delay_ms` = 0 the switch happens at once.
    Switch(ActiveSwitch),
    /// A delayed switch is already pending; its completion picks up the newest active consumer.
    SwitchAlreadyPending,
}

/// The dispatcher state of a single-active-consumer subscription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SingleActiveDispatcher {
    pub mode: SingleActiveMode,
    pub pick: ActivePickConfig,
    pub failover_delay_ms: Millis,
    /// In subscribe order.
    pub members: Vec<FailoverMember>,
    pub active: Option<u64>,
    /// A delayed switch is scheduled; FLOW and redeliver requests are ignored until it completes.
    pub switch_pending: bool,
}

impl SingleActiveDispatcher {
    pub fn new(mode: SingleActiveMode, pick: ActivePickConfig) -> SingleActiveDispatcher {
        SingleActiveDispatcher {
            mode,
            pick,
            failover_delay_ms: ACTIVE_CONSUMER_FAILOVER_DELAY_MS,
            members: Vec::new(),
            active: None,
            switch_pending: false,
        }
    }

    pub fn active_member(&self) -> Option<&FailoverMember> {
        self.active.and_then(|id| self.members.iter().find(|m| m.consumer_id == id))
    }

    /// A consumer subscribes. Exclusive admits one consumer only.
    pub fn add(&mut self, member: FailoverMember) -> Result<Vec<SingleActiveEffect>, SubscribeError> {
        if self.mode == SingleActiveMode::Exclusive && !self.members.is_empty() {
            return Err(SubscribeError::ExclusiveConsumerConnected);
        }
        let newcomer = member.consumer_id;
        self.members.push(member);
        let mut effects = self.repick();
        if effects.is_empty() {
            if let Some(active) = self.active.filter(|&a| a != newcomer) {
                effects.push(SingleActiveEffect::TellNewcomer { consumer_id: newcomer, active_consumer_id: active });
            }
        }
        Ok(effects)
    }

    /// A consumer that was connected before a snapshot: it joins without a switch, and the
    /// active consumer is the pick over everyone connected so far, as if it had always been.
    pub fn restore(&mut self, member: FailoverMember) -> Result<(), SubscribeError> {
        if self.mode == SingleActiveMode::Exclusive && !self.members.is_empty() {
            return Err(SubscribeError::ExclusiveConsumerConnected);
        }
        self.members.push(member);
        self.active = pick_active(&self.members, &self.pick).map(|i| self.members[i].consumer_id);
        Ok(())
    }

    /// A consumer leaves (close or disconnect): the pick runs again over those that remain, so even
    /// removing a passive consumer can move the active role (the modulo shifts).
    pub fn remove(&mut self, consumer_id: u64) -> Vec<SingleActiveEffect> {
        let Some(at) = self.members.iter().position(|m| m.consumer_id == consumer_id) else { return Vec::new() };
        self.members.remove(at);
        if self.members.is_empty() {
            self.active = None;
            return Vec::new();
        }
        self.repick()
    }

    fn repick(&mut self) -> Vec<SingleActiveEffect> {
        let picked = pick_active(&self.members, &self.pick).map(|i| self.members[i].consumer_id);
        if picked == self.active {
            return Vec::new();
        }
        self.active = picked;
        let delayed = self.mode == SingleActiveMode::Failover && self.failover_delay_ms > 0;
        if delayed && self.switch_pending {
            return vec![SingleActiveEffect::SwitchAlreadyPending];
        }
        self.switch_pending = delayed;
        vec![SingleActiveEffect::Switch(ActiveSwitch {
            cancel_pending_read: true,
            delay_ms: if delayed { self.failover_delay_ms } else { 0 },
            rewind_cursor: true,
            notify_all: self.mode == SingleActiveMode::Failover,
        })]
    }

    /// The failover delay elapsed: rewind, notify and read for the consumer active now.
    pub fn complete_switch(&mut self) -> Option<u64> {
        self.switch_pending = false;
        self.active
    }

    /// While a delayed switch is pending the broker ignores FLOW and redeliver requests.
    pub fn ignores_flow_and_redeliver(&self) -> bool {
        self.switch_pending
    }
}

/// Orders members as upstream keeps them (exposed for views that list the Failover order).
pub fn member_order(a: &FailoverMember, b: &FailoverMember) -> Ordering {
    a.priority.cmp(&b.priority).then_with(|| java_string_compare(&a.name, &b.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: u64, name: &str, priority: i32) -> FailoverMember {
        FailoverMember { consumer_id: id, name: name.to_string(), priority }
    }

    fn partitioned(i: i32) -> ActivePickConfig {
        ActivePickConfig {
            partition_index: i,
            topic_name: String::new(),
            consistent_hashing_for_partitions: false,
            era: FailoverEra::Current,
        }
    }

    #[test]
    fn modulo_over_the_top_priority_group() {
        let ms = vec![member(1, "C1", 1), member(2, "C2", 0), member(3, "C3", 0), member(4, "C0", 2)];
        let picks: Vec<&str> = (0..4).map(|p| ms[pick_active(&ms, &partitioned(p)).unwrap()].name.as_str()).collect();
        assert_eq!(picks, vec!["C2", "C3", "C2", "C3"]);
    }

    #[test]
    fn ring_pick_for_non_partitioned_topics() {
        let ms = vec![member(1, "consumer-a", 0), member(2, "consumer-b", 0), member(3, "consumer-c", 0)];
        let cfg = ActivePickConfig { topic_name: "persistent://public/default/topic-0".into(), ..partitioned(-1) };
        assert_eq!(ms[pick_active(&ms, &cfg).unwrap()].name, "consumer-c");
        let legacy = ActivePickConfig { era: FailoverEra::Pre30, ..cfg };
        assert_eq!(pick_active(&ms, &legacy), Some(0));
    }

    #[test]
    fn switch_is_delayed_and_rewinds() {
        let mut d = SingleActiveDispatcher::new(SingleActiveMode::Failover, partitioned(0));
        let first = d.add(member(1, "B", 0)).unwrap();
        assert!(matches!(&first[..], [SingleActiveEffect::Switch(s)] if s.delay_ms == 1000 && s.rewind_cursor && s.notify_all));
        assert!(d.ignores_flow_and_redeliver());
        // "A" sorts first and takes partition 0 while the first switch is still pending.
        assert_eq!(d.add(member(2, "A", 0)).unwrap(), vec![SingleActiveEffect::SwitchAlreadyPending]);
        assert_eq!(d.complete_switch(), Some(2));
        assert!(!d.ignores_flow_and_redeliver());
        // A passive newcomer is only told who is active.
        assert_eq!(
            d.add(member(3, "Z", 0)).unwrap(),
            vec![SingleActiveEffect::TellNewcomer { consumer_id: 3, active_consumer_id: 2 }]
        );
        assert!(d.remove(9).is_empty());
    }

    #[test]
    fn exclusive_admits_one_consumer_and_switches_without_delay() {
        let mut d = SingleActiveDispatcher::new(SingleActiveMode::Exclusive, partitioned(-1));
        d.pick.topic_name = "persistent://public/default/t".into();
        let e = d.add(member(1, "only", 0)).unwrap();
        assert!(matches!(&e[..], [SingleActiveEffect::Switch(s)] if s.delay_ms == 0 && !s.notify_all));
        assert_eq!(d.add(member(2, "other", 0)), Err(SubscribeError::ExclusiveConsumerConnected));
        d.remove(1);
        assert_eq!(d.active, None);
    }

    #[test]
    fn restored_members_join_without_a_switch_and_the_pick_holds() {
        let mut d = SingleActiveDispatcher::new(SingleActiveMode::Failover, partitioned(1));
        d.restore(member(1, "B", 0)).unwrap();
        d.restore(member(2, "A", 0)).unwrap();
        assert_eq!(d.active, Some(1), "partition 1 of [A, B] is B's");
        assert!(!d.ignores_flow_and_redeliver(), "nothing is pending: the snapshot's active consumer was already active");
        // A later joiner is an ordinary join: the pick moves and the switch waits for the delay.
        let e = d.add(member(3, "AA", 0)).unwrap();
        assert!(matches!(&e[..], [SingleActiveEffect::Switch(s)] if s.delay_ms == 1000));
        let mut x = SingleActiveDispatcher::new(SingleActiveMode::Exclusive, partitioned(-1));
        x.restore(member(1, "only", 0)).unwrap();
        assert_eq!(x.restore(member(2, "other", 0)), Err(SubscribeError::ExclusiveConsumerConnected));
    }
}
