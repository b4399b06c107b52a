//! `mqviz bench kafka-sim`: records per second through the Kafka simulation, a 16-partition
//! topic read by a group of 8 members, from the produce requests to the last `poll()`.

use std::time::Instant;

use mqviz_kafka::scenario::parse_scenario;
use mqviz_kafka::world::World;

/// The throughput scenario: 8 members join, then `n` keyed records arrive in one burst.
pub fn scenario(n: u64) -> String {
    let consumers: Vec<String> = (0..8).map(|i| format!(r#"{{"clientId": "c{i}", "subscribe": ["bench"]}}"#)).collect();
    format!(
        r#"{{"format": "mqviz-scenario/1", "broker": "kafka", "name": "kafka-sim bench", "until": 100000000,
        "brokers": [{{"name": "b0"}}, {{"name": "b1"}}, {{"name": "b2"}}],
        "topics": [{{"name": "bench", "partitions": 16}}],
        "producers": [{{"id": "p", "sends": [{sends}]}}],
        "groups": [{{"name": "g", "consumers": [{consumers}]}}]}}"#,
        consumers = consumers.join(","),
        sends = super::send_chunks(n)
            .map(|c| format!(
                r#"{{"at": 8000, "topic": "bench", "key": "k{{i}}", "value": "v{{i}}", "count": {c}, "intervalMs": 0}}"#
            ))
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// Runs the scenario until every record was polled; returns (seconds, log events).
pub fn run(n: u64, provenance: bool) -> (f64, usize) {
    let s = parse_scenario(&scenario(n)).expect("bench scenario is valid");
    let start = Instant::now();
    let mut w = World::new(s);
    w.trace_messages = provenance;
    let consumed = |w: &World| w.consumers.iter().map(|c| c.consumed).sum::<u64>();
    let mut t = 0;
    while consumed(&w) < n && w.next_event_time().is_some() && t < 100_000_000 {
        t += 1_000;
        w.run_until(t);
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(consumed(&w), n, "every record is polled once");
    (secs, w.log.len())
}

pub fn bench_kafka_sim(n: u64) {
    // Warm-up at full size, not measured: the allocator's (and wasm's linear) memory grows once,
    // and the wasm engine reaches its optimizing tier.
    run(n, false);
    for provenance in [false, true] {
        let (secs, events) = run(n, provenance);
        println!(
            "kafka-sim (provenance {}): {n} records, 16 partitions, 8 members: {secs:.3} s, {:.2} M records/s (target >= 2), {events} log events",
            if provenance { "on" } else { "off" },
            n as f64 / secs / 1e6
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bench_scenario_polls_every_record() {
        let (_, events) = super::run(20_000, true);
        assert!(events > 100);
    }
}
