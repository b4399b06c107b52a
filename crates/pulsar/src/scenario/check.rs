//! Cross-references of a Pulsar scenario: names are unique, everything referenced exists, consumer
//! kinds fit their topics, STICKY ranges of one subscription do not overlap, and the timeline's
//! segment operations are valid when replayed on each scalable topic's layout in time order.

use std::collections::{BTreeMap, BTreeSet};

use super::parse::check_ack_fits;
use super::*;
use crate::scalable::{LayoutError, SegmentLayout};
use mqviz_engine::json_path::Errors;
use mqviz_engine::scenario::MAX_MESSAGES_TOTAL;

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
