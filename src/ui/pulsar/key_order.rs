//! Per key of a Key_Shared subscription: who received it, in which succession of consumers, and
//! whether every first delivery came in publish order (what PIP-379's draining protects). Pure.

use mqviz_engine::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet};

use mqviz_pulsar::events::MsgId;
use mqviz_pulsar::subscription::SubscriptionType;
use mqviz_pulsar::world::World;

/// Keys listed per subscription (more are counted).
pub const KEYS_LISTED: usize = 32;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyOrder {
    pub key: String,
    /// First deliveries (redeliveries of the same message are not counted).
    pub received: usize,
    /// The consumers that received it, in succession (`consumer-2 → consumer-4`).
    pub by: Vec<String>,
    /// The first message delivered before an earlier one of the same key, if any.
    pub out_of_order: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionKeys {
    pub subscription: String,
    pub keys: Vec<KeyOrder>,
    pub more: usize,
}

/// Per-key delivery order of every Key_Shared subscription.
pub fn key_orders(w: &World) -> Vec<SubscriptionKeys> {
    let mut out = Vec::new();
    for (t, sub) in &w.groups {
        let members: Vec<usize> = (0..w.consumers.len())
            .filter(|&c| {
                let con = &w.consumers[c];
                con.topic == *t && con.subscription == *sub && con.spec.subscription_type() == SubscriptionType::KeyShared
            })
            .collect();
        if members.is_empty() {
            continue;
        }
        // Every receipt of the subscription, in log order.
        let mut receipts: Vec<(u32, MsgId, usize)> =
            members.iter().flat_map(|&c| w.consumers[c].received.iter().map(move |r| (r.event.0, r.msg, c))).collect();
        receipts.stable_sort();
        let mut seen: BTreeSet<MsgId> = BTreeSet::new();
        let mut by_key: BTreeMap<String, (KeyOrder, Option<(u32, i64)>)> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for (_, msg, c) in receipts {
            if !seen.insert(msg) {
                continue;
            }
            let Some(m) = w.messages.get(msg as usize) else { continue };
            let Some(key) = w.sticky_key_text(m) else { continue };
            let entry = by_key.entry(key.to_string()).or_insert_with(|| {
                order.push(key.to_string());
                (KeyOrder { key: key.to_string(), received: 0, by: Vec::new(), out_of_order: None }, None)
            });
            let (k, last) = entry;
            k.received += 1;
            let name = w.consumers[c].name.to_string();
            if k.by.last() != Some(&name) {
                k.by.push(name);
            }
            let position = (m.partition, m.entry);
            if let Some(prev) = *last {
                if prev.0 == position.0 && position.1 < prev.1 && k.out_of_order.is_none() {
                    k.out_of_order = Some(format!("{} after a later message", w.message_id(msg)));
                }
            }
            *last = Some(position);
        }
        let more = order.len().saturating_sub(KEYS_LISTED);
        let keys = order.iter().take(KEYS_LISTED).filter_map(|k| by_key.remove(k)).map(|(k, _)| k).collect();
        out.push(SubscriptionKeys { subscription: sub.to_string(), keys, more });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::pulsar::dag::tests::world_at;

    #[test]
    fn every_key_arrives_in_publish_order_and_a_moved_key_changes_hands_once() {
        let w = world_at("pulsar-key-shared-join.json", 30_000);
        let subs = key_orders(&w);
        assert_eq!(subs.len(), 1);
        let keys = &subs[0].keys;
        assert_eq!(keys.len(), 8);
        assert!(keys.iter().all(|k| k.out_of_order.is_none()), "{keys:?}");
        assert_eq!(keys.iter().map(|k| k.received).sum::<usize>(), 240);
        assert!(keys.iter().any(|k| k.by.len() == 2 && k.by[1] == "consumer-4"), "{keys:?}");
    }

    #[test]
    fn only_key_shared_subscriptions_are_listed() {
        assert!(key_orders(&world_at("pulsar-shared-dlq.json", 5_000)).is_empty());
    }
}
