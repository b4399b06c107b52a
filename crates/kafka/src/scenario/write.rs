//! Timeline actions written back as scenario JSON: the form in which the UI enters its edits
//! (`Simulation::enter_command`) and in which an edited run is exported. `parse_action` reads back
//! exactly what this writes (tested).

use serde_json::{json, Map, Value};

use super::config::write_overrides;
use super::*;

fn refs(parts: &[PartitionRef]) -> Value {
    json!(parts.iter().map(ToString::to_string).collect::<Vec<_>>())
}

fn subscription_into(o: &mut Map<String, Value>, s: &SubscriptionSpec) {
    match s {
        SubscriptionSpec::Topics(t) => o.insert("subscribe".into(), json!(t)),
        SubscriptionSpec::Pattern(p) => o.insert("subscribePattern".into(), json!(p)),
        SubscriptionSpec::Assign(ps) => o.insert("assign".into(), refs(ps)),
    };
}

fn consumer_value(c: &ConsumerSpec) -> Value {
    let mut o = Map::new();
    if c.name != c.client_id {
        o.insert("name".into(), json!(c.name));
    }
    o.insert("clientId".into(), json!(c.client_id));
    if let Some(i) = &c.instance_id {
        o.insert("groupInstanceId".into(), json!(i));
    }
    if let Some(s) = &c.subscription {
        subscription_into(&mut o, s);
    }
    write_overrides(&mut o, &c.overrides);
    o.insert("startAt".into(), c.start_at.map(Value::from).unwrap_or_else(|| json!("never")));
    if let Some(l) = c.latency_ms {
        o.insert("latencyMs".into(), json!(l));
    }
    Value::Object(o)
}

fn send_value(s: &SendSpec) -> Value {
    let mut o = Map::new();
    o.insert("topic".into(), json!(s.topic));
    if let Some(k) = &s.key {
        o.insert("key".into(), json!(k));
    }
    o.insert("value".into(), json!(s.value));
    if let Some(p) = s.partition {
        o.insert("partition".into(), json!(p));
    }
    if s.times.is_empty() {
        o.insert("count".into(), json!(s.count));
        o.insert("intervalMs".into(), json!(s.interval_ms));
    } else {
        o.insert("times".into(), json!(s.times));
    }
    Value::Object(o)
}

fn topic_value(t: &TopicSpec) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), json!(t.name));
    o.insert("partitions".into(), json!(t.partitions));
    if !t.leaders.is_empty() {
        o.insert("leaders".into(), json!(t.leaders));
    }
    Value::Object(o)
}

/// The action as a timeline entry without `at` (the history stamps the instant).
pub fn action_value(a: &Action) -> Value {
    let mut o = Map::new();
    o.insert("action".into(), json!(a.name()));
    if let Some(consumer) = a.consumer_name() {
        o.insert("consumer".into(), json!(consumer));
    }
    match a {
        Action::StartConsumer { .. }
        | Action::StopConsumer { .. }
        | Action::CrashConsumer { .. }
        | Action::Unsubscribe { .. } => {}
        Action::AddConsumer { group, consumer } => {
            o.insert("group".into(), json!(group));
            o.insert("consumer".into(), consumer_value(consumer));
        }
        Action::Subscribe { subscription, .. } => match subscription {
            SubscriptionSpec::Topics(t) => {
                o.insert("topics".into(), json!(t));
            }
            SubscriptionSpec::Pattern(p) => {
                o.insert("pattern".into(), json!(p));
            }
            SubscriptionSpec::Assign(ps) => {
                o.insert("partitions".into(), refs(ps));
            }
        },
        Action::SetAssignors { group, assignors } => {
            o.insert("group".into(), json!(group));
            o.insert("assignors".into(), json!(assignors.iter().map(|x| x.name()).collect::<Vec<_>>()));
        }
        Action::SetRemoteAssignor { group, assignor } => {
            o.insert("group".into(), json!(group));
            o.insert("assignor".into(), json!(assignor.name()));
        }
        Action::SetProtocol { group, protocol } => {
            o.insert("group".into(), json!(group));
            o.insert("protocol".into(), json!(protocol.name()));
        }
        Action::Pause { partitions, .. } | Action::Resume { partitions, .. } => {
            o.insert("partitions".into(), refs(partitions));
        }
        Action::Seek { partition, to, .. } => {
            o.insert("partition".into(), json!(partition.to_string()));
            let to = match to {
                SeekTarget::Offset(n) => json!(n),
                SeekTarget::Beginning => json!("beginning"),
                SeekTarget::End => json!("end"),
            };
            o.insert("to".into(), to);
        }
        Action::Produce { producer, send } => {
            o.insert("producer".into(), json!(producer));
            o.insert("send".into(), send_value(send));
        }
        Action::LeaderChange { partition, leader } | Action::Truncate { partition, leader, .. } => {
            o.insert("partition".into(), json!(partition.to_string()));
            if let Some(l) = leader {
                o.insert("leader".into(), json!(l));
            }
            if let Action::Truncate { offset, .. } = a {
                o.insert("offset".into(), json!(offset));
            }
        }
        Action::AddPartitions { topic, partitions } => {
            o.insert("topic".into(), json!(topic));
            o.insert("partitions".into(), json!(partitions));
        }
        Action::CreateTopic { topic } => {
            o.insert("topic".into(), topic_value(topic));
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
    use crate::fetch_state::OffsetResetStrategy;
    use crate::server_assignor::ServerAssignor;
    use crate::subscription_state::IsolationLevel;

    fn round_trip(a: Action) {
        let timed = TimedAction { at: 1234, action: a };
        let v = timed_action_value(&timed);
        let back = parse_action(&v, "$").unwrap_or_else(|e| panic!("{v}: {e:?}"));
        assert_eq!(back, timed, "{v}");
    }

    fn pr(topic: &str, partition: u32) -> PartitionRef {
        PartitionRef { topic: topic.into(), partition }
    }

    #[test]
    fn every_action_reads_back_as_written() {
        let overrides = ConfigOverrides {
            assignors: Some(vec![ClientAssignor::CooperativeSticky]),
            remote_assignor: Some(ServerAssignor::Range),
            session_timeout_ms: Some(10_000),
            heartbeat_interval_ms: Some(1_000),
            max_poll_interval_ms: Some(20_000),
            max_poll_records: Some(7),
            auto_offset_reset: Some(OffsetResetStrategy::ByDuration { millis: 90_500 }),
            enable_auto_commit: Some(false),
            auto_commit_interval_ms: Some(2_000),
            isolation_level: Some(IsolationLevel::ReadCommitted),
            poll_timeout_ms: Some(50),
            record_processing_ms: Some(3),
            manual_commit: Some(ManualCommit::Async),
            fetch_max_wait_ms: Some(100),
            max_partition_fetch_bytes: Some(4096),
            metadata_max_age_ms: Some(60_000),
        };
        let consumer = ConsumerSpec {
            name: "C".into(),
            client_id: "C".into(),
            instance_id: Some("i-1".into()),
            subscription: Some(SubscriptionSpec::Topics(vec!["T".into(), "U".into()])),
            overrides,
            start_at: Some(1234),
            latency_ms: Some(3),
        };
        round_trip(Action::StartConsumer { consumer: "C".into() });
        round_trip(Action::StopConsumer { consumer: "C".into() });
        round_trip(Action::CrashConsumer { consumer: "C".into() });
        round_trip(Action::Unsubscribe { consumer: "C".into() });
        round_trip(Action::AddConsumer { group: "g".into(), consumer: consumer.clone() });
        // A second instance with the same client.id, told apart by its name.
        round_trip(Action::AddConsumer { group: "g".into(), consumer: ConsumerSpec { name: "C#2".into(), ..consumer.clone() } });
        round_trip(Action::AddConsumer {
            group: "g".into(),
            consumer: ConsumerSpec {
                start_at: None,
                instance_id: None,
                subscription: Some(SubscriptionSpec::Assign(vec![pr("T", 0), pr("my-topic", 12)])),
                overrides: ConfigOverrides::default(),
                ..consumer.clone()
            },
        });
        round_trip(Action::AddConsumer {
            group: "g".into(),
            consumer: ConsumerSpec { subscription: Some(SubscriptionSpec::Pattern("T.*".into())), ..consumer },
        });
        round_trip(Action::Subscribe { consumer: "C".into(), subscription: SubscriptionSpec::Topics(vec!["T".into()]) });
        round_trip(Action::Subscribe { consumer: "C".into(), subscription: SubscriptionSpec::Pattern("a|b".into()) });
        round_trip(Action::Subscribe { consumer: "C".into(), subscription: SubscriptionSpec::Assign(vec![pr("T", 3)]) });
        round_trip(Action::SetAssignors {
            group: "g".into(),
            assignors: vec![ClientAssignor::Sticky, ClientAssignor::RoundRobin],
        });
        round_trip(Action::SetRemoteAssignor { group: "g".into(), assignor: ServerAssignor::Uniform });
        round_trip(Action::SetProtocol { group: "g".into(), protocol: GroupProtocol::Consumer });
        round_trip(Action::Pause { consumer: "C".into(), partitions: vec![pr("T", 1)] });
        round_trip(Action::Resume { consumer: "C".into(), partitions: vec![pr("T", 1), pr("T", 2)] });
        for to in [SeekTarget::Offset(42), SeekTarget::Beginning, SeekTarget::End] {
            round_trip(Action::Seek { consumer: "C".into(), partition: pr("T", 0), to });
        }
        let send = SendSpec {
            at: 1234,
            topic: "T".into(),
            key: Some("k{i}".into()),
            value: "v {i}".into(),
            partition: Some(2),
            count: 3,
            interval_ms: 10,
            times: Vec::new(),
        };
        round_trip(Action::Produce { producer: "p".into(), send: send.clone() });
        round_trip(Action::Produce {
            producer: "p".into(),
            send: SendSpec { times: vec![1234, 1300], count: 2, interval_ms: 0, key: None, partition: None, ..send },
        });
        round_trip(Action::LeaderChange { partition: pr("T", 0), leader: Some("b1".into()) });
        round_trip(Action::LeaderChange { partition: pr("T", 0), leader: None });
        round_trip(Action::Truncate { partition: pr("T", 1), offset: 5, leader: Some("b0".into()) });
        round_trip(Action::AddPartitions { topic: "T".into(), partitions: 8 });
        round_trip(Action::CreateTopic {
            topic: TopicSpec { leaders: vec!["b0".into(), "b1".into()], ..TopicSpec::new("N", 2) },
        });
    }
}
