//! The preset scenarios, compiled in so the web app works offline and the native and wasm
//! determinism tests check the very same texts. Files live in `static/scenarios/`.

pub struct Preset {
    pub file: &'static str,
    pub label: &'static str,
    pub text: &'static str,
}

macro_rules! preset {
    ($file:literal, $label:literal) => {
        Preset { file: $file, label: $label, text: include_str!(concat!("../../static/scenarios/", $file)) }
    };
}

/// In picker order; the first is the default page.
pub const PRESETS: &[Preset] = &[
    preset!("seed-same-topic-different-tags.json", "Same topic, different tags (TagB wins)"),
    preset!("seed-same-topic-different-tags-a-wins.json", "Same topic, different tags (TagA wins)"),
    preset!("seed-different-topics-same-tag.json", "Different topics, same tag"),
    preset!("consistent-group.json", "Consistent group (control)"),
    preset!("sql92-filter.json", "SQL92 filter (properties, eval errors, enablePropertyFilter off)"),
    preset!("filter-manager-heartbeat-cost.json", "Filter manager heartbeat cost (topic scan vs group index)"),
    preset!("duplicate-client-id.json", "Duplicate clientId (two containers share IP@PID)"),
    preset!("compare-join-avg-vs-consistent-hash.json", "Compare: a consumer joins, AVG vs CONSISTENT_HASH"),
    preset!("pulsar-scalable-post-split-backlog.json", "Pulsar scalable topic: new EARLIEST stream consumer after a split"),
    preset!("pulsar-scalable-two-splits.json", "Pulsar scalable topic: two generations of sealed segments"),
    preset!("pulsar-scalable-sealed-not-redelivered.json", "Pulsar scalable topic: drained sealed segment not redelivered"),
    preset!("pulsar-scalable-children-blocked.json", "Pulsar scalable topic: children blocked until the parent drains"),
    preset!("pulsar-key-shared-join.json", "Pulsar Key_Shared: a consumer joins (PIP-379 draining hashes)"),
    preset!("pulsar-failover.json", "Pulsar Failover: priority, modulo pick, delay and rewind"),
    preset!("pulsar-shared-dlq.json", "Pulsar Shared: poison messages to the dead-letter topic"),
    preset!("kafka-eager-join.json", "Kafka: a 4th member joins an EAGER group (stop the world)"),
    preset!("kafka-cooperative-join.json", "Kafka: a 4th member joins a COOPERATIVE group (two rebalances)"),
    preset!("kafka-fetch-states.json", "Kafka: every FetchState (leader change, truncation, seeks)"),
    preset!("kafka-new-group-latest.json", "Kafka: a new group starts at latest (records skipped)"),
    preset!("kafka-crash-redelivery.json", "Kafka: a crash inside the auto-commit window (duplicates)"),
    preset!("kafka-static-membership.json", "Kafka: static membership survives a restart"),
    preset!("kafka-kip848-reconciliation.json", "Kafka: KIP-848 reconciliation (revoke before assign)"),
];

pub fn by_file(file: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.file == file)
}

/// The generated load scenario the page opens for `#bench=N` (and `mqviz bench load` measures):
/// one topic of 8 queues fed at 4 messages per simulated millisecond, one group whose consumers disagree on the tag (so both filters drop).
pub fn load_scenario(messages: u64) -> String {
    let per_send = messages / 4;
    let until = (1_000 + per_send + 5_000).max(60_000);
    let sends: Vec<String> = ["TagA", "TagB", "TagC", "TagA"]
        .iter()
        .enumerate()
        .map(|(i, tag)| {
            format!(
                r#"{{"at": {}, "topic": "Bench", "tag": "{tag}", "body": "m{{i}}", "count": {per_send}, "intervalMs": 1}}"#,
                1000 + i
            )
        })
        .collect();
    format!(
        r#"{{"format": "mqviz-scenario/1", "broker": "rocketmq", "name": "Benchmark: thousands of messages in flight",
  "description": "Generated load for the frame-time measurement: 4 messages per simulated millisecond into 8 queues; ConsumerA takes everything, ConsumerB only TagA, ConsumerC only TagB, so the broker's and the clients' tag filters both drop messages.",
  "seed": 7, "until": {until}, "network": {{"latencyMs": 1}},
  "brokers": [{{"name": "broker-a"}}],
  "topics": [{{"name": "Bench", "queues": 8}}],
  "producers": [{{"id": "Loader", "group": "benchProducers", "startIndex": 0, "sends": [{}]}}],
  "groups": [{{"name": "benchGroup", "messageModel": "CLUSTERING", "allocation": {{"strategy": "AVG"}},
    "consumers": [
      {{"clientId": "ConsumerA", "subscriptions": {{"Bench": "*"}}, "startAt": 0}},
      {{"clientId": "ConsumerB", "subscriptions": {{"Bench": "TagA"}}, "startAt": 0}},
      {{"clientId": "ConsumerC", "subscriptions": {{"Bench": "TagB"}}, "startAt": 0}}
    ]}}]}}"#,
        sends.join(", "),
        until = until,
    )
}
