//! Timeline actions written back as scenario JSON: the form in which the UI enters its edits
//! (`Simulation::enter_command`) and in which an edited run is exported. `parse_action` reads back
//! exactly what this writes (tested).

use serde_json::{json, Map, Value};

use super::*;

fn subscription_value(s: &SubscriptionSpec) -> Value {
    match &s.expression_type {
        Some(t) => json!({"type": t, "expression": s.expression}),
        None => json!(s.expression),
    }
}

fn allocation_value(a: &AllocationSpec) -> Value {
    match a {
        AllocationSpec::Avg | AllocationSpec::AvgByCircle => json!(a.name()),
        AllocationSpec::ConsistentHash { virtual_nodes } => json!({"strategy": a.name(), "virtualNodeCnt": virtual_nodes}),
        AllocationSpec::Config { queues } => json!({"strategy": a.name(), "queues": queues}),
        AllocationSpec::MachineRoom { consumer_idcs } => json!({"strategy": a.name(), "consumeridcs": consumer_idcs}),
        AllocationSpec::MachineRoomNearby { inner } => json!({"strategy": a.name(), "inner": allocation_value(inner)}),
    }
}

fn consumer_value(c: &ConsumerSpec) -> Value {
    let mut subs = Map::new();
    for s in &c.subscriptions {
        subs.insert(s.topic.clone(), subscription_value(s));
    }
    let mut o = Map::new();
    if c.name != c.client_id {
        o.insert("name".into(), json!(c.name));
    }
    o.insert("clientId".into(), json!(c.client_id));
    o.insert("subscriptions".into(), Value::Object(subs));
    o.insert("startAt".into(), c.start_at.map(Value::from).unwrap_or_else(|| json!("never")));
    if let Some(l) = c.latency_ms {
        o.insert("latencyMs".into(), json!(l));
    }
    o.insert("consumeTimeMs".into(), json!(c.consume_time_ms));
    o.insert(
        "consumeResult".into(),
        match c.result {
            ConsumeResultPolicy::Success => json!("CONSUME_SUCCESS"),
            ConsumeResultPolicy::AlwaysFail => json!("RECONSUME_LATER"),
            ConsumeResultPolicy::FailTimes(n) => json!({"failTimes": n}),
        },
    );
    if c.on_start_failure == StartFailurePolicy::Ignore {
        o.insert("onStartFailure".into(), json!("ignore"));
    }
    Value::Object(o)
}

fn send_value(s: &SendSpec) -> Value {
    let mut o = Map::new();
    o.insert("topic".into(), json!(s.topic));
    if let Some(t) = &s.tag {
        o.insert("tag".into(), json!(t));
    }
    if let Some(k) = &s.keys {
        o.insert("keys".into(), json!(k));
    }
    if !s.properties.is_empty() {
        o.insert("properties".into(), Value::Object(s.properties.iter().map(|(k, v)| (k.clone(), json!(v))).collect()));
    }
    o.insert("body".into(), json!(s.body));
    if s.times.is_empty() {
        o.insert("count".into(), json!(s.count));
        o.insert("intervalMs".into(), json!(s.interval_ms));
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
        Action::StartConsumer { consumer } | Action::StopConsumer { consumer } | Action::CrashConsumer { consumer } => {
            o.insert("consumer".into(), json!(consumer));
        }
        Action::AddConsumer { group, consumer } => {
            o.insert("group".into(), json!(group));
            o.insert("consumer".into(), consumer_value(consumer));
        }
        Action::Subscribe { consumer, subscription } => {
            o.insert("consumer".into(), json!(consumer));
            o.insert("topic".into(), json!(subscription.topic));
            o.insert("expression".into(), json!(subscription.expression));
            if let Some(t) = &subscription.expression_type {
                o.insert("type".into(), json!(t));
            }
        }
        Action::Unsubscribe { consumer, topic } => {
            o.insert("consumer".into(), json!(consumer));
            o.insert("topic".into(), json!(topic));
        }
        Action::SetQueueCount { topic, queues } => {
            o.insert("topic".into(), json!(topic));
            o.insert("queues".into(), json!(queues));
        }
        Action::SetAllocation { group, allocation } => {
            o.insert("group".into(), json!(group));
            o.insert("allocation".into(), allocation_value(allocation));
        }
        Action::Produce { producer, send } => {
            o.insert("producer".into(), json!(producer));
            o.insert("send".into(), send_value(send));
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

    fn round_trip(a: Action) {
        let timed = TimedAction { at: 1234, action: a };
        let v = timed_action_value(&timed);
        let back = parse_action(&v, "$").unwrap_or_else(|e| panic!("{v}: {e:?}"));
        assert_eq!(back, timed, "{v}");
    }

    #[test]
    fn every_action_reads_back_as_written() {
        let consumer = ConsumerSpec {
            name: "C-1".into(),
            client_id: "C".into(),
            // JSON objects read back in key order, as every scenario's subscriptions are.
            subscriptions: vec![
                SubscriptionSpec { topic: "S".into(), expression: "a > 5".into(), expression_type: Some("SQL92".into()) },
                SubscriptionSpec { topic: "T".into(), expression: "TagA || TagB".into(), expression_type: None },
            ],
            start_at: Some(1234),
            latency_ms: Some(3),
            consume_time_ms: 7,
            result: ConsumeResultPolicy::FailTimes(2),
            on_start_failure: StartFailurePolicy::Ignore,
        };
        round_trip(Action::StartConsumer { consumer: "C".into() });
        round_trip(Action::StopConsumer { consumer: "C".into() });
        round_trip(Action::CrashConsumer { consumer: "C".into() });
        round_trip(Action::AddConsumer { group: "g".into(), consumer: consumer.clone() });
        round_trip(Action::AddConsumer { group: "g".into(), consumer: ConsumerSpec { start_at: None, ..consumer } });
        round_trip(Action::Subscribe {
            consumer: "C".into(),
            subscription: SubscriptionSpec {
                topic: "S".into(),
                expression: "b = 'x'".into(),
                expression_type: Some("SQL92".into()),
            },
        });
        round_trip(Action::Unsubscribe { consumer: "C".into(), topic: "T".into() });
        round_trip(Action::SetQueueCount { topic: "T".into(), queues: 8 });
        for allocation in [
            AllocationSpec::Avg,
            AllocationSpec::AvgByCircle,
            AllocationSpec::ConsistentHash { virtual_nodes: 3 },
            AllocationSpec::Config { queues: vec!["broker-a:0".into()] },
            AllocationSpec::MachineRoom { consumer_idcs: vec!["room1".into()] },
            AllocationSpec::MachineRoomNearby { inner: Box::new(AllocationSpec::AvgByCircle) },
        ] {
            round_trip(Action::SetAllocation { group: "g".into(), allocation });
        }
        let mut properties = mqviz_engine::vec_map::VecMap::new();
        properties.insert("a".to_string(), "5".to_string());
        let send = SendSpec {
            at: 1234,
            topic: "T".into(),
            tag: Some("TagA".into()),
            keys: Some("k{i}".into()),
            properties,
            body: "b {i}".into(),
            count: 3,
            interval_ms: 10,
            times: Vec::new(),
        };
        round_trip(Action::Produce { producer: "p".into(), send: send.clone() });
        round_trip(Action::Produce {
            producer: "p".into(),
            send: SendSpec { times: vec![1234, 1300], count: 2, interval_ms: 0, tag: None, keys: None, ..send },
        });
    }
}
