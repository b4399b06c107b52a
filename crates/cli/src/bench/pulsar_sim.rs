//! `mqviz bench pulsar-sim`: the whole Pulsar simulation, timed here (never in `sim/`). A
//! producer publishes 1,000,000 keyed messages (100,000 keys, 10 per ms) to a Key_Shared
//! subscription with 100 consumers; midway one consumer joins and one leaves, so hashes move and
//! PIP-379 draining holds them until their previous owners ack. Every message goes through the
//! broker's ledger and cursor, the dispatcher, the network, a client's receiver queue, its
//! application and grouped acks. Target: at least 2 M messages/s natively, wasm within 2x.

use std::time::Instant;

use mqviz_pulsar::scenario::parse_scenario;
use mqviz_pulsar::world::World;

/// The throughput the issue asks of the native build.
const TARGET_MSGS_PER_S: f64 = 2.0e6;
const CONSUMERS: u32 = 100;

/// The benchmark scenario for `messages` messages.
pub fn scenario(messages: u64) -> String {
    let mid = 1_000 + messages / 20;
    let consumer =
        |i: u32| format!(r#"{{"name": "c{i}", "topic": "orders", "subscription": "bench", "subscriptionType": "Key_Shared"}}"#);
    let consumers: Vec<String> = (0..CONSUMERS).map(consumer).collect();
    format!(
        r#"{{"format": "mqviz-scenario/1", "broker": "pulsar", "name": "pulsar-sim bench", "seed": 1, "until": {until},
        "topics": [{{"name": "orders"}}],
        "producers": [{{"name": "p", "topic": "orders", "batching": false,
            "sends": [{sends}]}}],
        "consumers": [{consumers}],
        "timeline": [{{"at": {mid}, "action": "addConsumer", "consumer": {joiner}}},
                     {{"at": {mid}, "action": "closeConsumer", "consumer": "c0"}}]}}"#,
        until = mid * 2 + 60_000,
        consumers = consumers.join(","),
        joiner = consumer(CONSUMERS),
        // 10 messages a millisecond; a script longer than one send goes on where the last ended.
        sends = super::send_chunks(messages)
            .scan(1_000, |at, c| {
                let send = format!(
                    r#"{{"at": {at}, "count": {c}, "burst": 10, "intervalMs": 1, "key": "key-{{i%100000}}", "body": "m{{i}}"}}"#
                );
                *at += c / 10;
                Some(send)
            })
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// CPU seconds this thread has used, where the platform tells (Linux `/proc`); the machine may be
/// shared, and CPU time is what the code itself costs.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which is in parentheses): utime and stime are 14th and 15th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// One run: (wall seconds, CPU seconds if known, messages received by applications, log events, backlog left).
pub fn run(messages: u64, trace: bool) -> (f64, Option<f64>, u64, usize, u64) {
    let s = parse_scenario(&scenario(messages)).expect("the bench scenario is valid");
    let until = s.until;
    let sends_end = 1_000 + messages / 10;
    let start = Instant::now();
    let cpu_start = thread_cpu_seconds();
    let mut w = World::new(s);
    w.trace_messages = trace;
    let mut t = 0;
    let backlog = |w: &World| w.partitions[0].subscriptions.first().map_or(u64::MAX, |s| s.cursor.backlog());
    // Stop once everything is acked: idle timers are not throughput.
    while t < until {
        t += 1_000;
        w.run_until(t);
        if t > sends_end && backlog(&w) == 0 {
            break;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_start.and_then(|a| thread_cpu_seconds().map(|b| b - a));
    let received = w.consumers.iter().map(|c| c.stats.received).sum();
    (secs, cpu, received, w.log.len(), backlog(&w))
}

pub fn bench_pulsar_sim(messages: usize) {
    let messages = messages as u64;
    println!(
        "pulsar-sim: {messages} keyed messages (100k keys), Key_Shared with {CONSUMERS} consumers, one joins and one leaves midway, full simulation (best of 3):"
    );
    for trace in [false, true] {
        let (mut best, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
        let mut last = (0, 0, 0);
        for _ in 0..3 {
            let (secs, cpu, received, events, backlog) = run(messages, trace);
            best = best.min(secs);
            if let Some(c) = cpu {
                best_cpu = best_cpu.min(c);
            }
            last = (received, events, backlog);
        }
        let rate = messages as f64 / best;
        let cpu = if best_cpu.is_finite() {
            let cpu_rate = messages as f64 / best_cpu;
            format!(", CPU {best_cpu:.2} s = {:.2} M msgs/s per CPU second", cpu_rate / 1e6)
        } else {
            String::new()
        };
        println!(
            "  provenance {:<3}: wall {best:.3} s = {:.2} M msgs/s ({:.2}x the 2 M msgs/s target){cpu}; {} deliveries, {} log events, backlog left {}",
            if trace { "on" } else { "off" },
            rate / 1e6,
            rate / TARGET_MSGS_PER_S,
            last.0,
            last.1,
            last.2
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bench_scenario_drains_completely() {
        let (_, _, received, _, backlog) = super::run(20_000, true);
        assert_eq!(backlog, 0);
        assert!(received >= 20_000);
    }
}
