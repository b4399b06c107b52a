//! Timeline actions written back as scenario JSON: the form in which the UI enters its edits
//! (`Simulation::enter_command`) and in which an edited run is exported. `parse_action` reads back
//! exactly what this writes (tested).

use serde_json::{json, Map, Value};

use super::*;
use crate::subscription::KeySharedMode;

fn ack_value(a: &AckSpec) -> Value {
    let mut o = Map::new();
    o.insert("mode".into(), json!(a.mode.name()));
    o.insert("processMs".into(), json!(a.process_ms));
    if a.nack_first > 0 {
        o.insert("nackFirst".into(), json!(a.nack_first));
    }
    if !a.nack_keys.is_empty() {
        o.insert("nackKeys".into(), json!(a.nack_keys));
    }
    if a.retry_delay_ms > 0 {
        o.insert("retryDelayMs".into(), json!(a.retry_delay_ms));
    }
    Value::Object(o)
}

fn initial_position_name(p: crate::cursor::InitialPosition) -> &'static str {
    match p {
        crate::cursor::InitialPosition::Latest => "Latest",
        crate::cursor::InitialPosition::Earliest => "Earliest",
    }
}

/// A consumer spec as scenario JSON (without lifecycle fields, as `addConsumer` carries it).
pub fn consumer_value(c: &ConsumerSpec) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(c.name));
    o.insert("topic".into(), json!(c.topic));
    o.insert("subscription".into(), json!(c.subscription));
    match &c.kind {
        ConsumerKind::Subscription { subscription_type, key_shared } => {
            o.insert("subscriptionType".into(), json!(subscription_type.name()));
            if let Some(ks) = key_shared {
                let mut k = Map::new();
                k.insert("mode".into(), json!(ks.mode.name()));
                k.insert("allowOutOfOrderDelivery".into(), json!(ks.allow_out_of_order_delivery));
                if ks.mode == KeySharedMode::Sticky {
                    k.insert("ranges".into(), json!(ks.ranges.iter().map(|&(s, e)| json!([s, e])).collect::<Vec<_>>()));
                }
                o.insert("keySharedPolicy".into(), Value::Object(k));
            }
        }
        ConsumerKind::Scalable(t) => {
            o.insert("consumerType".into(), json!(t.name()));
        }
    }
    o.insert("subscriptionInitialPosition".into(), json!(initial_position_name(c.initial_position)));
    o.insert("priorityLevel".into(), json!(c.priority_level));
    o.insert("receiverQueueSize".into(), json!(c.receiver_queue_size));
    o.insert("ack".into(), ack_value(&c.ack));
    o.insert("acknowledgementsGroupTimeMs".into(), json!(c.ack_group_time_ms));
    o.insert("ackTimeoutMs".into(), json!(c.ack_timeout_ms));
    o.insert("negativeAckRedeliveryDelayMs".into(), json!(c.nack_delay_ms));
    if let Some(d) = &c.dead_letter {
        let mut dl = Map::new();
        dl.insert("maxRedeliverCount".into(), json!(d.max_redeliver_count));
        if let Some(t) = &d.dead_letter_topic {
            dl.insert("deadLetterTopic".into(), json!(t));
        }
        if let Some(t) = &d.retry_letter_topic {
            dl.insert("retryLetterTopic".into(), json!(t));
        }
        o.insert("deadLetterPolicy".into(), Value::Object(dl));
    }
    o.insert("enableRetry".into(), json!(c.enable_retry));
    if let Some(l) = c.latency_ms {
        o.insert("latencyMs".into(), json!(l));
    }
    Value::Object(o)
}

fn send_value(s: &SendSpec) -> Value {
    let mut o = Map::new();
    if let Some(k) = &s.key {
        o.insert("key".into(), json!(k));
    }
    if let Some(k) = &s.ordering_key {
        o.insert("orderingKey".into(), json!(k));
    }
    o.insert("body".into(), json!(s.body));
    if s.times.is_empty() {
        o.insert("count".into(), json!(s.count));
        o.insert("intervalMs".into(), json!(s.interval_ms));
        if s.burst > 1 {
            o.insert("burst".into(), json!(s.burst));
        }
    } else {
        o.insert("times".into(), json!(s.times));
    }
    Value::Object(o)
}

/// The action as a timeline entry without `at` (the history stamps the instant).
pub fn action_value(a: &Action) -> Value {
    let mut o = Map::new();
    o.insert("action".into(), json!(a.name()));
    match a {
        Action::AddConsumer { consumer } => {
            o.insert("consumer".into(), consumer_value(consumer));
        }
        Action::StartConsumer { consumer }
        | Action::CloseConsumer { consumer }
        | Action::CrashConsumer { consumer }
        | Action::RedeliverUnacknowledged { consumer } => {
            o.insert("consumer".into(), json!(consumer));
        }
        Action::SetAck { consumer, ack } => {
            o.insert("consumer".into(), json!(consumer));
            o.insert("ack".into(), ack_value(ack));
        }
        Action::Produce { producer, send } => {
            o.insert("producer".into(), json!(producer));
            o.insert("send".into(), send_value(send));
        }
        Action::SplitSegment { topic, segment } | Action::PruneSegment { topic, segment } => {
            o.insert("topic".into(), json!(topic));
            o.insert("segment".into(), json!(segment));
        }
        Action::MergeSegments { topic, segments } => {
            o.insert("topic".into(), json!(topic));
            o.insert("segments".into(), json!([segments.0, segments.1]));
        }
    }
    Value::Object(o)
}

/// The action with its instant, as it appears in a scenario's `timeline`.
pub fn timed_action_value(a: &TimedAction) -> Value {
    let mut v = action_value(&a.action);
    if let Value::Object(o) = &mut v {
        o.insert("at".into(), json!(a.at));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::InitialPosition;
    use crate::subscription::SubscriptionType;

    fn round_trip(a: Action) {
        let timed = TimedAction { at: 1234, action: a };
        let v = timed_action_value(&timed);
        let back = parse_action(&v, "$").unwrap_or_else(|e| panic!("{v}: {e:?}"));
        assert_eq!(back, timed, "{v}");
    }

    fn consumer(kind: ConsumerKind) -> ConsumerSpec {
        ConsumerSpec {
            name: "c".into(),
            topic: "t".into(),
            subscription: "s".into(),
            kind,
            initial_position: InitialPosition::Earliest,
            priority_level: 2,
            receiver_queue_size: 7,
            ack: AckSpec {
                mode: AckMode::Individual,
                process_ms: 5,
                nack_first: 1,
                nack_keys: vec!["poison".into()],
                retry_delay_ms: 0,
            },
            ack_group_time_ms: 0,
            ack_timeout_ms: 3_000,
            nack_delay_ms: 500,
            dead_letter: Some(DeadLetterSpec {
                max_redeliver_count: 2,
                dead_letter_topic: Some("dlq".into()),
                retry_letter_topic: None,
            }),
            enable_retry: true,
            latency_ms: Some(4),
        }
    }

    #[test]
    fn every_action_reads_back_as_written() {
        let sticky =
            KeySharedSpec { mode: KeySharedMode::Sticky, allow_out_of_order_delivery: false, ranges: vec![(0, 9), (20, 30)] };
        let auto = KeySharedSpec { mode: KeySharedMode::AutoSplit, allow_out_of_order_delivery: true, ranges: Vec::new() };
        for kind in [
            ConsumerKind::Subscription { subscription_type: SubscriptionType::Shared, key_shared: None },
            ConsumerKind::Subscription { subscription_type: SubscriptionType::KeyShared, key_shared: Some(sticky) },
            ConsumerKind::Subscription { subscription_type: SubscriptionType::KeyShared, key_shared: Some(auto) },
            ConsumerKind::Scalable(ScalableConsumerType::Queue),
            ConsumerKind::Scalable(ScalableConsumerType::Stream),
        ] {
            round_trip(Action::AddConsumer { consumer: consumer(kind) });
        }
        let mut plain = consumer(ConsumerKind::Subscription { subscription_type: SubscriptionType::Failover, key_shared: None });
        plain.dead_letter = None;
        plain.latency_ms = None;
        plain.ack = AckSpec { mode: AckMode::Cumulative, ..AckSpec::default() };
        round_trip(Action::AddConsumer { consumer: plain });
        for c in ["startConsumer", "closeConsumer", "crashConsumer", "redeliverUnacknowledged"] {
            let a = match c {
                "startConsumer" => Action::StartConsumer { consumer: "c".into() },
                "closeConsumer" => Action::CloseConsumer { consumer: "c".into() },
                "crashConsumer" => Action::CrashConsumer { consumer: "c".into() },
                _ => Action::RedeliverUnacknowledged { consumer: "c".into() },
            };
            round_trip(a);
        }
        round_trip(Action::SetAck {
            consumer: "c".into(),
            ack: AckSpec { mode: AckMode::Retry, process_ms: 0, nack_first: 0, nack_keys: Vec::new(), retry_delay_ms: 900 },
        });
        let send = SendSpec {
            at: 1234,
            count: 3,
            interval_ms: 10,
            burst: 2,
            times: Vec::new(),
            key: Some("k-{i%3}".into()),
            ordering_key: Some("o".into()),
            body: "b {i}".into(),
        };
        round_trip(Action::Produce { producer: "p".into(), send: send.clone() });
        round_trip(Action::Produce {
            producer: "p".into(),
            send: SendSpec {
                times: vec![1300, 1400],
                at: 1300,
                count: 2,
                interval_ms: 0,
                burst: 1,
                key: None,
                ordering_key: None,
                ..send
            },
        });
        round_trip(Action::SplitSegment { topic: "t".into(), segment: 3 });
        round_trip(Action::PruneSegment { topic: "t".into(), segment: 0 });
        round_trip(Action::MergeSegments { topic: "t".into(), segments: (4, 5) });
    }
}
