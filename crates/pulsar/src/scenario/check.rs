//! Cross-references of a Pulsar scenario: names are unique, everything referenced exists, consumer
//! kinds fit their topics, STICKY ranges of one subscription do not overlap, and the timeline's
//! segment operations are valid when replayed on each scalable topic's layout in time order.

use std::collections::{BTreeMap, BTreeSet};

use super::parse::check_ack_fits;
use super::*;
use crate::scalable::{LayoutError, SegmentLayout};
use mqviz_engine::json_path::Errors;
use mqviz_engine::scenario::MAX_MESSAGES_TOTAL;
use mqviz_engine::sort::StableSort;

pub(super) fn check_references(s: &Scenario, paths: &[String], e: &mut Errors) {
    let mut brokers = BTreeSet::new();
    for (i, b) in s.brokers.iter().enumerate() {
        if !brokers.insert(b.as_str()) {
            e.push(&format!("$.brokers[{i}].name"), format!("duplicate broker {b:?}"));
        }
    }
    // Names must be unique as written (references use them) and in full.
    let mut names = BTreeSet::new();
    for (i, t) in s.topics.iter().enumerate() {
        let full = t.full_name();
        // A topic written in full is one name, not a duplicate of itself.
        let fresh = names.insert(full.clone());
        if !fresh || (t.name != full && !names.insert(t.name.clone())) {
            e.push(&format!("$.topics[{i}].name"), format!("duplicate topic {:?}", t.name));
        }
    }
    let topic = |name: &str| s.topics.iter().find(|t| t.is_named(name));
    let mut producers = BTreeSet::new();
    let mut total: u64 = 0;
    for (i, p) in s.producers.iter().enumerate() {
        if !producers.insert(p.name.as_str()) {
            e.push(&format!("$.producers[{i}].name"), format!("duplicate producer {:?}", p.name));
        }
        if topic(&p.topic).is_none() {
            e.push(&format!("$.producers[{i}].topic"), format!("unknown topic {:?}", p.topic));
        }
        total += p.sends.iter().map(|x| u64::from(x.count)).sum::<u64>();
    }
    // Every consumer spec with the path it came from, scenario consumers first.
    let mut specs: Vec<(&ConsumerSpec, String)> =
        s.consumers.iter().enumerate().map(|(i, c)| (c, format!("$.consumers[{i}]"))).collect();
    for (a, p) in s.timeline.iter().zip(paths) {
        match &a.action {
            Action::AddConsumer { consumer } => specs.push((consumer, format!("{p}.consumer"))),
            Action::Produce { send, .. } => total += u64::from(send.count),
            _ => {}
        }
    }
    if total > MAX_MESSAGES_TOTAL {
        e.push("$.producers", format!("{total} messages in total is more than the {MAX_MESSAGES_TOTAL} the simulator accepts"));
    }
    let mut consumers: BTreeMap<&str, &ConsumerSpec> = BTreeMap::new();
    for (c, p) in &specs {
        if consumers.insert(c.name.as_str(), c).is_some() {
            e.push(&format!("{p}.name"), format!("duplicate consumer {:?}", c.name));
        }
        match topic(&c.topic) {
            None => e.push(&format!("{p}.topic"), format!("unknown topic {:?}", c.topic)),
            Some(t) => check_consumer_fits_topic(c, t, p, e),
        }
    }
    for (a, p) in s.timeline.iter().zip(paths) {
        let known = |name: &str| consumers.contains_key(name);
        match &a.action {
            Action::StartConsumer { consumer }
            | Action::CloseConsumer { consumer }
            | Action::CrashConsumer { consumer }
            | Action::RedeliverUnacknowledged { consumer } => {
                if !known(consumer) {
                    e.push(&format!("{p}.consumer"), format!("{}: unknown consumer {consumer:?}", a.action.name()));
                }
            }
            Action::SetAck { consumer, ack } => match consumers.get(consumer.as_str()) {
                None => e.push(&format!("{p}.consumer"), format!("setAck: unknown consumer {consumer:?}")),
                Some(c) => {
                    let changed = ConsumerSpec { ack: ack.clone(), ..(*c).clone() };
                    check_ack_fits(&changed, &format!("{p}.ack"), e);
                }
            },
            Action::Produce { producer, .. } => {
                if !producers.contains(producer.as_str()) {
                    e.push(&format!("{p}.producer"), format!("produce: unknown producer {producer:?}"));
                }
            }
            Action::AddConsumer { .. }
            | Action::SplitSegment { .. }
            | Action::MergeSegments { .. }
            | Action::PruneSegment { .. } => {}
        }
    }
    check_segment_operations(s, paths, e);
    if total + s.snapshot_entries() > MAX_MESSAGES_TOTAL {
        e.push(
            "$.topics",
            format!(
                "{} snapshot entries and {total} messages to send are more than the {MAX_MESSAGES_TOTAL} the simulator accepts",
                s.snapshot_entries()
            ),
        );
    }
    check_snapshot(s, e);
}

/// A snapshot that cannot be consistent is refused: cursors past the ledger's end, a consumer
/// connected twice or to a subscription it does not name, consumers of one subscription that
/// disagree on its type, and an active consumer or hash ranges the broker would not give the
/// consumers connected in this order.
fn check_snapshot(s: &Scenario, e: &mut Errors) {
    let mut seen: BTreeSet<(String, &str)> = BTreeSet::new();
    let mut connected_anywhere: BTreeSet<&str> = BTreeSet::new();
    for (i, sub) in s.subscriptions.iter().enumerate() {
        let path = format!("$.subscriptions[{i}]");
        let Some(t) = s.topics.iter().find(|t| t.is_named(&sub.topic)) else {
            e.push(&format!("{path}.topic"), format!("unknown topic {:?}", sub.topic));
            continue;
        };
        if !seen.insert((t.full_name(), sub.name.as_str())) {
            e.push(&format!("{path}.name"), format!("subscription {:?} of {:?} is described twice", sub.name, sub.topic));
        }
        let partitions: Vec<String> = match t.kind {
            TopicKind::NonPartitioned => vec![t.full_name()],
            TopicKind::Partitioned { partitions } => {
                (0..partitions).map(|p| crate::routing::partition_topic_name(&t.full_name(), p)).collect()
            }
            TopicKind::Scalable { .. } => {
                e.push(&format!("{path}.topic"), "a scalable topic's subscriptions cannot start from a snapshot");
                continue;
            }
        };
        if sub.cursors.len() != partitions.len() {
            e.push(
                &format!("{path}.cursors"),
                format!("{} cursors for {} partitions: give one per partition", sub.cursors.len(), partitions.len()),
            );
        }
        for (p, c) in sub.cursors.iter().enumerate() {
            let entries = t.snapshot.entries.get(p).copied().unwrap_or(0) as i64;
            let cp = format!("{path}.cursors[{p}]");
            if c.mark_delete >= entries {
                e.push(
                    &format!("{cp}.markDeletePosition"),
                    format!("entry {} is past the ledger's last entry ({})", c.mark_delete, entries - 1),
                );
            }
            if let Some((j, (_, last))) = c.acked.iter().enumerate().find(|(_, (_, b))| *b >= entries) {
                e.push(
                    &format!("{cp}.individuallyDeleted[{j}]"),
                    format!("entry {last} is past the ledger's last entry ({})", entries - 1),
                );
            }
        }
        // The connected consumers, in connection order.
        let mut members: Vec<&ConsumerSpec> = Vec::new();
        for (j, name) in sub.connected.iter().enumerate() {
            let cp = format!("{path}.connected[{j}]");
            let Some(c) = s.consumers.iter().find(|c| &c.name == name) else {
                e.push(&cp, format!("unknown consumer {name:?} (a connected consumer is one of $.consumers)"));
                continue;
            };
            if !connected_anywhere.insert(name) {
                e.push(&cp, format!("consumer {name:?} is connected twice"));
                continue;
            }
            if !t.is_named(&c.topic) || c.subscription != sub.name {
                e.push(
                    &cp,
                    format!("consumer {name:?} subscribes {} / {}, not {} / {}", c.topic, c.subscription, sub.topic, sub.name),
                );
                continue;
            }
            if let Some(first) = members.first() {
                let (a, b) = (first.subscription_type(), c.subscription_type());
                let modes = (first.key_shared().map(|k| k.mode), c.key_shared().map(|k| k.mode));
                if a != b || modes.0 != modes.1 {
                    e.push(
                        &cp,
                        format!(
                            "consumer {name:?} connects as {}, but {} holds the subscription as {}",
                            b.name(),
                            first.name,
                            a.name()
                        ),
                    );
                    continue;
                }
                if a == crate::subscription::SubscriptionType::Exclusive {
                    e.push(&cp, format!("an Exclusive subscription has one consumer: {} holds it", first.name));
                    continue;
                }
            }
            members.push(c);
        }
        check_active_consumers(s, sub, &members, &partitions, &path, e);
        check_key_hash_ranges(s, sub, &members, &path, e);
    }
}

/// `activeConsumers` must be what `pickAndScheduleActiveConsumer` gives the connected consumers.
fn check_active_consumers(
    s: &Scenario,
    sub: &SubscriptionSnapshot,
    members: &[&ConsumerSpec],
    partitions: &[String],
    path: &str,
    e: &mut Errors,
) {
    use crate::failover::{pick_active, ActivePickConfig, FailoverMember};
    use crate::subscription::SubscriptionType;
    if sub.active_consumers.is_empty() {
        return;
    }
    let ap = format!("{path}.activeConsumers");
    let single = members.first().map(|c| c.subscription_type());
    if !matches!(single, Some(SubscriptionType::Exclusive | SubscriptionType::Failover)) {
        e.push(&ap, "only the connected consumers of an Exclusive or Failover subscription have an active consumer");
        return;
    }
    if sub.active_consumers.len() != partitions.len() {
        e.push(
            &ap,
            format!(
                "{} active consumers for {} partitions: give one per partition",
                sub.active_consumers.len(),
                partitions.len()
            ),
        );
        return;
    }
    let failover: Vec<FailoverMember> = members
        .iter()
        .enumerate()
        .map(|(i, c)| FailoverMember { consumer_id: i as u64, name: c.name.clone(), priority: c.priority_level })
        .collect();
    let partitioned = partitions.len() > 1
        || s.topics.iter().any(|t| t.is_named(&sub.topic) && matches!(t.kind, TopicKind::Partitioned { .. }));
    for (p, (claimed, partition)) in sub.active_consumers.iter().zip(partitions).enumerate() {
        let config = ActivePickConfig {
            partition_index: if partitioned { p as i32 } else { -1 },
            topic_name: partition.clone(),
            consistent_hashing_for_partitions: s.config.failover_consistent_hashing,
            era: s.config.failover_era,
        };
        let picked = pick_active(&failover, &config).map(|i| members[i].name.clone());
        if *claimed != picked {
            let said = |x: &Option<String>| x.clone().unwrap_or_else(|| "nobody".into());
            e.push(
                &format!("{ap}[{p}]"),
                format!(
                    "the broker makes {} active on {partition} with these consumers connected ({}); the snapshot says {}",
                    said(&picked),
                    members.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
                    said(claimed)
                ),
            );
        }
    }
}

/// `keyHashRanges` must be what the Key_Shared selector gives the connected consumers, joined in order.
fn check_key_hash_ranges(s: &Scenario, sub: &SubscriptionSnapshot, members: &[&ConsumerSpec], path: &str, e: &mut Errors) {
    use crate::key_shared::StickyKeySelector;
    if sub.key_hash_ranges.is_empty() {
        return;
    }
    let kp = format!("{path}.keyHashRanges");
    let Some(policy) = members.first().and_then(|c| c.key_shared()) else {
        e.push(&kp, "only the connected consumers of a Key_Shared subscription have hash ranges");
        return;
    };
    let mut selector =
        StickyKeySelector::for_mode(policy.mode, s.config.key_shared_consistent_hashing, s.config.key_shared_replica_points);
    for (i, c) in members.iter().enumerate() {
        let ranges = c.key_shared().map(|k| k.ranges.as_slice()).filter(|r| !r.is_empty());
        if let Err(err) = selector.add(i as u64, &c.name, ranges) {
            e.push(&format!("{path}.connected[{i}]"), format!("{} cannot join: {err}", c.name));
            return;
        }
    }
    let given = selector.ranges_by_consumer();
    for (name, claimed) in &sub.key_hash_ranges {
        let rp = format!("{kp}[{name:?}]");
        let Some(i) = members.iter().position(|c| &c.name == name) else {
            e.push(&rp, format!("{name:?} is not a connected consumer of this subscription"));
            continue;
        };
        let mut claimed = claimed.clone();
        claimed.stable_sort();
        let got = given.get(&(i as u64)).cloned().unwrap_or_default();
        if claimed != got {
            let text = |r: &[(u32, u32)]| r.iter().map(|(a, b)| format!("[{a}, {b}]")).collect::<Vec<_>>().join(", ");
            let shown: String = if got.len() > 6 { format!("{} ranges from {}", got.len(), text(&got[..3])) } else { text(&got) };
            e.push(
                &rp,
                format!(
                    "the broker gives {name} {shown} with these consumers joined in this order; the snapshot says {}",
                    text(&claimed)
                ),
            );
        }
    }
}

fn check_consumer_fits_topic(c: &ConsumerSpec, t: &TopicSpec, p: &str, e: &mut Errors) {
    let scalable = matches!(t.kind, TopicKind::Scalable { .. });
    match (&c.kind, scalable) {
        (ConsumerKind::Subscription { .. }, true) => e.push(
            &format!("{p}.consumerType"),
            format!("{:?} is a scalable topic: its consumers need consumerType QUEUE or STREAM", t.name),
        ),
        (ConsumerKind::Scalable(_), false) => {
            e.push(&format!("{p}.consumerType"), format!("{:?} is not a scalable topic: use subscriptionType", t.name))
        }
        _ => {}
    }
}

/// Replays the split, merge and prune actions of each scalable topic on its layout, in time order.
fn check_segment_operations(s: &Scenario, paths: &[String], e: &mut Errors) {
    let mut layouts: BTreeMap<String, SegmentLayout> = BTreeMap::new();
    for (a, p) in s.timeline.iter().zip(paths) {
        let (topic_ref, field) = match &a.action {
            Action::SplitSegment { topic, .. } | Action::PruneSegment { topic, .. } => (topic, "segment"),
            Action::MergeSegments { topic, .. } => (topic, "segments"),
            _ => continue,
        };
        let Some(t) = s.topics.iter().find(|t| t.is_named(topic_ref)) else {
            e.push(&format!("{p}.topic"), format!("{}: unknown topic {topic_ref:?}", a.action.name()));
            continue;
        };
        let TopicKind::Scalable { initial_segments } = t.kind else {
            e.push(&format!("{p}.topic"), format!("{}: {topic_ref:?} is not a scalable topic", a.action.name()));
            continue;
        };
        let layout = layouts
            .entry(t.full_name())
            .or_insert_with(|| SegmentLayout::initial(i64::from(initial_segments), 0).expect("initial segment count is bounded"));
        let next: Result<SegmentLayout, LayoutError> = match &a.action {
            Action::SplitSegment { segment, .. } => layout.split(*segment, 0),
            Action::MergeSegments { segments: (x, y), .. } => layout.merge(*x, *y, 0),
            Action::PruneSegment { segment, .. } => layout.prune(*segment),
            _ => continue,
        };
        match next {
            Ok(l) => *layout = l,
            Err(err) => e.push(&format!("{p}.{field}"), format!("{}: {err}", a.action.name())),
        }
    }
}
