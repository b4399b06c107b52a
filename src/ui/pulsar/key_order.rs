//! Per key of a Key_Shared subscription: who received it, in which succession of consumers, and
//! whether every first delivery came in publish order (what PIP-379's draining protects). Pure.

use mqviz_engine::BitSet;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

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

/// The Key_Shared consumers of subscription `sub` on topic `t`, by index.
fn key_shared_members(w: &World, t: u32, sub: &str) -> Vec<usize> {
    (0..w.consumers.len())
        .filter(|&c| {
            let con = &w.consumers[c];
            con.topic == t && &*con.subscription == sub && con.spec.subscription_type() == SubscriptionType::KeyShared
        })
        .collect()
}

/// Per-key delivery order of every Key_Shared subscription.
///
/// A key is looked up by its id once per id, not by its text once per receipt: over a 1 M-message
/// run with 100,000 keys, string maps made this memo a one-second task in the page at every
/// sync of a seek. Only the first `KEYS_LISTED` keys are followed; the rest are counted.
pub fn key_orders(w: &World) -> Vec<SubscriptionKeys> {
    /// A key past the listed ones: counted, not followed.
    const UNLISTED: u32 = u32::MAX - 1;
    const UNSEEN: u32 = u32::MAX;
    let mut out = Vec::new();
    for (t, sub) in &w.groups {
        let members = key_shared_members(w, *t, sub);
        if members.is_empty() {
            continue;
        }
        // Every receipt of the subscription, in log order: each consumer's are in log order
        // already (its `Received` events), so they are merged, not sorted (sorting a million was
        // 90 ms of wasm).
        let mut next: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::new();
        let mut at = vec![0usize; members.len()];
        for (i, &c) in members.iter().enumerate() {
            if let Some(r) = w.consumers[c].received.first() {
                next.push(Reverse((r.event.0, i)));
            }
        }
        let receipts = std::iter::from_fn(|| {
            let Reverse((_, i)) = next.pop()?;
            let c = members[i];
            let r = w.consumers[c].received[at[i]];
            at[i] += 1;
            if let Some(n) = w.consumers[c].received.get(at[i]) {
                next.push(Reverse((n.event.0, i)));
            }
            Some((r.event.0, r.msg, c))
        });
        let mut seen = BitSet::with_capacity(w.messages.len());
        // Key id -> its key's place in `listed`, UNLISTED, or UNSEEN; key text -> the same (two
        // ids may share a text: keys are compared by text).
        let mut by_id: Vec<u32> = vec![UNSEEN; w.keys.len()];
        let mut by_text: BTreeMap<&str, u32> = BTreeMap::new();
        let mut listed: Vec<(KeyOrder, Option<(u32, i64)>)> = Vec::new();
        for (_, msg, c) in receipts {
            if !seen.insert(msg) {
                continue;
            }
            let Some(m) = w.messages.get(msg as usize) else { continue };
            let Some(id) = m.sticky_key() else { continue };
            let mut slot = by_id[id.index()];
            if slot == UNSEEN {
                let key = w.keys.text(id);
                slot = *by_text.entry(key).or_insert_with(|| {
                    if listed.len() < KEYS_LISTED {
                        listed.push((KeyOrder { key: key.to_string(), received: 0, by: Vec::new(), out_of_order: None }, None));
                        (listed.len() - 1) as u32
                    } else {
                        UNLISTED
                    }
                });
                by_id[id.index()] = slot;
            }
            if slot == UNLISTED {
                continue;
            }
            let (k, last) = &mut listed[slot as usize];
            k.received += 1;
            let name = &w.consumers[c].name;
            if k.by.last().map(String::as_str) != Some(&**name) {
                k.by.push(name.to_string());
            }
            let position = (m.partition, m.entry);
            if let Some(prev) = *last {
                if prev.0 == position.0 && position.1 < prev.1 && k.out_of_order.is_none() {
                    k.out_of_order = Some(format!("{} after a later message", w.message_id(msg)));
                }
            }
            *last = Some(position);
        }
        let more = by_text.len() - listed.len();
        out.push(SubscriptionKeys { subscription: sub.to_string(), keys: listed.into_iter().map(|(k, _)| k).collect(), more });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::pulsar::dag::tests::world_at;
    use mqviz_engine::sort::StableSort;
    use mqviz_pulsar::events::MsgId;

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

    /// The first version, with a map by key text per receipt: the one above must say the same.
    fn key_orders_by_text(w: &World) -> Vec<SubscriptionKeys> {
        let mut out = Vec::new();
        for (t, sub) in &w.groups {
            let members = key_shared_members(w, *t, sub);
            if members.is_empty() {
                continue;
            }
            // Every receipt of the subscription, in log order.
            let mut receipts: Vec<(u32, MsgId, usize)> =
                members.iter().flat_map(|&c| w.consumers[c].received.iter().map(move |r| (r.event.0, r.msg, c))).collect();
            receipts.stable_sort();
            let mut seen: std::collections::BTreeSet<MsgId> = std::collections::BTreeSet::new();
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

    #[test]
    fn following_keys_by_id_says_what_following_them_by_text_said() {
        let mut compared = 0;
        for p in mqviz_app::presets::PRESETS.iter().filter(|p| p.text.contains("\"pulsar\"")) {
            for t in [5_000, 12_000, 20_000, 30_000, 60_000] {
                let w = world_at(p.file, t);
                assert_eq!(key_orders(&w), key_orders_by_text(&w), "{} at {t}", p.file);
                compared += key_orders(&w).len();
            }
        }
        assert!(compared > 0);
        // Past the listed keys (the presets have at most 8), and generated runs of every shape.
        let many = r#"{"format": "mqviz-scenario/1", "broker": "pulsar", "name": "many keys", "seed": 1, "until": 20000,
            "topics": [{"name": "orders"}],
            "producers": [{"name": "p", "topic": "orders", "batching": false,
                "sends": [{"at": 1000, "count": 3000, "burst": 10, "intervalMs": 1, "key": "key-{i%200}", "body": "m{i}"}]}],
            "consumers": [{"name": "c0", "topic": "orders", "subscription": "s", "subscriptionType": "Key_Shared"},
                          {"name": "c1", "topic": "orders", "subscription": "s", "subscriptionType": "Key_Shared"}],
            "timeline": [{"at": 1100, "action": "addConsumer", "consumer": {"name": "c2", "topic": "orders", "subscription": "s", "subscriptionType": "Key_Shared"}}]}"#;
        let mut texts: Vec<String> = vec![many.to_string()];
        texts
            .extend((0..60).map(|seed| {
                mqviz_app::simtest::SimTarget::generate(&mqviz_app::simtest::pulsar::PulsarTarget, seed).to_string()
            }));
        let runs = texts.len();
        let mut parsed = 0;
        for text in texts {
            let Ok(scenario) = mqviz_pulsar::scenario::parse_scenario(&text) else { continue };
            parsed += 1;
            let until = scenario.until;
            let mut w = World::new(scenario);
            for k in 1..=3 {
                w.run_until(until * k / 3);
                assert_eq!(key_orders(&w), key_orders_by_text(&w), "{text}");
            }
        }
        assert_eq!(parsed, runs, "every generated scenario parses");
        let w = {
            let mut w = World::new(mqviz_pulsar::scenario::parse_scenario(many).unwrap());
            w.run_until(20_000);
            w
        };
        let keys = &key_orders(&w)[0];
        assert_eq!((keys.keys.len(), keys.more), (KEYS_LISTED, 200 - KEYS_LISTED));
    }
}
