//! A generated RocketMQ scenario of any size: what the page opens for `#bench=N`, what
//! `mqviz bench load` measures, and what tests use for a large run.

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
