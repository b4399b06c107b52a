//! What the editor says about the last edit: when it takes effect, read from the World at the
//! playhead (a split's children wait for the drain poll, a Failover switch waits for the delay,
//! a STREAM close before PR #26433 keeps the session...). Pure, so the wording is tested.

use crate::ui::state::fmt_ms;
use mqviz_engine::sort::StableSort;
use mqviz_engine::Millis;
use mqviz_pulsar::scalable::{is_assignable, ClientCloseEra};
use mqviz_pulsar::scenario::ScalableConsumerType;
use mqviz_pulsar::subscription::SubscriptionType;
use mqviz_pulsar::world::{ClientState, Dispatcher, World};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    Start,
    Close,
    Crash,
}

/// An edit whose effect may come later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pending {
    Split { topic: String, segment: u64, at: Millis },
    Merge { topic: String, segments: (u64, u64), at: Millis },
    Added { consumer: String, at: Millis },
    Lifecycle { consumer: String, what: Lifecycle, at: Millis },
    Ack { consumer: String, mode: String, at: Millis },
    Produce { producer: String, count: u32, interval_ms: Millis, at: Millis },
}

/// How the children of `parents` fare with each STREAM subscription of topic `t`.
fn children_text(w: &World, t: usize, parents: &[u64], at: Millis) -> String {
    let Some(s) = w.topics[t].scalable.as_ref() else { return String::new() };
    let layout = &s.layout;
    let mut children: Vec<u64> =
        parents.iter().filter_map(|p| layout.segment(*p)).flat_map(|p| p.child_ids.iter().copied()).collect();
    children.stable_sort();
    children.dedup();
    if children.is_empty() {
        return "it is due now.".into();
    }
    let names = children.iter().map(u64::to_string).collect::<Vec<_>>().join(" and ");
    let parent_names = parents.iter().map(u64::to_string).collect::<Vec<_>>().join(" and ");
    let mut out = format!("sealed {parent_names} at {} and created {names}; producers write to them now.", fmt_ms(at));
    if s.coordinators.is_empty() {
        out.push_str(" QUEUE consumers subscribe to the new segments at once.");
        return out;
    }
    for (sub, c) in &s.coordinators {
        let withheld =
            children.iter().filter_map(|id| layout.segment(*id)).any(|seg| !is_assignable(seg, layout, c.drain_state()));
        if withheld {
            let backlog: u64 = parents
                .iter()
                .filter_map(|p| s.segment_partitions.get(p))
                .map(|&p| {
                    let part = &w.partitions[p as usize];
                    part.subscription(sub).map_or(0, |i| part.subscriptions[i].cursor.backlog())
                })
                .sum();
            let poll = c.scheduled_poll().map(|(_, at)| format!(", next drain poll at {}", fmt_ms(at))).unwrap_or_default();
            out.push_str(&format!(
                " STREAM subscription {sub} gets {names} only once {parent_names} is drained (backlog {backlog}{poll})."
            ));
        } else {
            out.push_str(&format!(" {sub} has them in its assignment: the drain poll saw {parent_names} drained."));
        }
    }
    out
}

fn added_text(w: &World, name: &str) -> String {
    let Some(c) = w.consumer_index(name) else { return format!("{name} is due now.") };
    let con = &w.consumers[c];
    if let Some(f) = &con.failure {
        return format!("{name} could not subscribe: {f}");
    }
    if con.state != ClientState::Running {
        return format!("{name} starts now.");
    }
    match (con.spec.scalable_type(), con.spec.subscription_type()) {
        (Some(ScalableConsumerType::Stream), _) => {
            let segs = con.assigned_segments.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            if segs.is_empty() {
                format!("{name} registered with the coordinator; its segments arrive with the next assignment.")
            } else {
                format!("{name} registered: the coordinator rebalanced, and it reads segments {segs}.")
            }
        }
        (Some(ScalableConsumerType::Queue), _) => format!("{name} reads every segment (QUEUE)."),
        (None, SubscriptionType::KeyShared) => {
            let (mut hashes, mut draining) = (0u64, 0usize);
            for att in con.attachments.iter().filter(|a| !a.closed) {
                let part = &w.partitions[att.partition as usize];
                if let Some(Some(Dispatcher::KeyShared(d))) = part.subscriptions.get(att.subscription as usize).map(|s| &s.dispatcher) {
                    hashes += d
                        .selector
                        .ranges_by_consumer()
                        .get(&att.consumer_id)
                        .map_or(0, |r| r.iter().map(|&(a, b)| u64::from(b - a) + 1).sum());
                    draining += d.draining.len();
                }
            }
            format!(
                "{name} owns {hashes} hashes now; a key that moved to it arrives only after its previous owner has acked what it holds ({draining} hashes draining)."
            )
        }
        (None, SubscriptionType::Failover) => format!(
            "{name} joined: a partition it takes over switches after the failover delay ({} ms), and its cursor rewinds to markDelete + 1.",
            w.scenario.config.failover_delay_ms
        ),
        (None, SubscriptionType::Shared) => format!("{name} joined the round robin; it gets messages once its FLOW permits arrive."),
        (None, SubscriptionType::Exclusive) => format!("{name} subscribed."),
    }
}

fn lifecycle_text(w: &World, name: &str, what: Lifecycle) -> String {
    let Some(c) = w.consumer_index(name) else { return String::new() };
    let con = &w.consumers[c];
    let stream = con.spec.scalable_type() == Some(ScalableConsumerType::Stream);
    let ty = con.spec.subscription_type();
    match what {
        Lifecycle::Start => format!("{name} (re)started: it subscribes now."),
        Lifecycle::Close if stream => match w.scenario.config.client_close_era {
            ClientCloseEra::Pre26433 => format!(
                "{name} closed. Before PR #26433 a clean close does not unregister: its session stays and keeps its segments, so nobody else reads them."
            ),
            ClientCloseEra::Unregisters => format!("{name} closed and unregistered: the coordinator deals its segments to the others now."),
        },
        Lifecycle::Crash if stream => format!(
            "{name} crashed: the coordinator keeps its session for the grace period ({} s) before dealing its segments to the others.",
            w.scenario.config.session_grace_ms / 1000
        ),
        Lifecycle::Close | Lifecycle::Crash if ty.is_single_active() => format!(
            "{name} {}: where it was active, the next consumer takes over after the failover delay ({} ms) and re-reads from markDelete + 1.",
            if what == Lifecycle::Close { "closed" } else { "crashed (acks it had not sent are lost)" },
            w.scenario.config.failover_delay_ms
        ),
        Lifecycle::Close => format!("{name} closed: the broker puts its unacked messages back for redelivery to the others now."),
        Lifecycle::Crash => format!(
            "{name} crashed: acks it had not sent are lost; when the connection drops the broker redelivers its unacked messages."
        ),
    }
}

fn produce_text(w: &World, producer: &str, count: u32, interval_ms: Millis, at: Millis) -> String {
    let last = at + interval_ms * Millis::from(count.saturating_sub(1));
    if w.now >= last {
        format!("{producer} has sent all {count} messages (the last at {}).", fmt_ms(last))
    } else {
        format!("{producer} sends {count} messages, one every {interval_ms} ms, from {} to {}.", fmt_ms(at), fmt_ms(last))
    }
}

/// The editor's note about `p`, now.
pub fn text(w: &World, p: &Pending) -> String {
    match p {
        Pending::Split { topic, segment, at } => match w.topic_index(topic) {
            Some(t) => format!("Split of segment {segment}: {}", children_text(w, t, &[*segment], *at)),
            None => String::new(),
        },
        Pending::Merge { topic, segments, at } => match w.topic_index(topic) {
            Some(t) => format!("Merge of {} and {}: {}", segments.0, segments.1, children_text(w, t, &[segments.0, segments.1], *at)),
            None => String::new(),
        },
        Pending::Added { consumer, .. } => added_text(w, consumer),
        Pending::Lifecycle { consumer, what, .. } => lifecycle_text(w, consumer, *what),
        Pending::Ack { consumer, mode, at } => format!(
            "{consumer} acks with {mode:?} from the next message it takes after {}; messages it already holds keep their old fate.",
            fmt_ms(*at)
        ),
        Pending::Produce { producer, count, interval_ms, at } => produce_text(w, producer, *count, *interval_ms, *at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::pulsar::dag::tests::world_at;
    use mqviz_model::Simulation;
    use mqviz_pulsar::scenario::{timed_action_value, Action, TimedAction};

    #[test]
    fn a_split_says_its_children_wait_for_the_drain_poll() {
        let mut w = world_at("pulsar-scalable-children-blocked.json", 2_000);
        let split = TimedAction { at: 2_000, action: Action::SplitSegment { topic: "four-segments".into(), segment: 1 } };
        w.enter_command(&timed_action_value(&split)).unwrap();
        w.run_until(2_000);
        let t = text(&w, &Pending::Split { topic: "four-segments".into(), segment: 1, at: 2_000 });
        assert!(t.starts_with("Split of segment 1: sealed 1 at 2.000 s and created 6 and 7"), "{t}");
        assert!(t.contains("gets 6 and 7 only once 1 is drained"), "{t}");
    }

    #[test]
    fn a_stream_close_before_26433_keeps_the_session() {
        let w = world_at("pulsar-scalable-sealed-not-redelivered.json", 3_650);
        let t = text(&w, &Pending::Lifecycle { consumer: "consumer-A".into(), what: Lifecycle::Close, at: 3_600 });
        assert!(t.contains("Before PR #26433"), "{t}");
        let w = world_at("pulsar-failover.json", 5_100);
        let t = text(&w, &Pending::Lifecycle { consumer: "consumer-a".into(), what: Lifecycle::Crash, at: 5_000 });
        assert!(t.contains("failover delay (1000 ms)"), "{t}");
    }
}
