//! `mqviz bench`: throughput of the simulation and allocation speed. Figures are printed as
//! rates so runs on noisy machines can be compared as ratios within one run.

pub mod filters;
pub mod kafka;
pub mod kafka_sim;
pub mod pulsar;
pub mod pulsar_sim;

use std::process::ExitCode;
use std::time::Instant;

use mqviz_rocketmq::allocate::{allocate_group, Strategy};
use mqviz_rocketmq::scenario::parse_scenario;
use mqviz_rocketmq::types::MessageQueue;
use mqviz_rocketmq::world::World;

/// The throughput scenario: one 16-queue topic, 8 consumers, tag filtering on, `n` messages,
/// half of them TagA (consumed) and half TagC (filtered out), interleaved send by send.
pub fn throughput_scenario(n: u64) -> String {
    let consumers: Vec<String> = (0..8)
        .map(|i| format!(r#"{{"clientId": "c{i}", "subscriptions": {{"Bench": "TagA || TagB"}}, "consumeTimeMs": 0}}"#))
        .collect();
    let sends: Vec<String> = [("TagA", "a", n / 2), ("TagC", "c", n - n / 2)]
        .iter()
        .flat_map(|&(tag, body, count)| {
            send_chunks(count).map(move |c| {
                format!(
                    r#"{{"at": 1000, "topic": "Bench", "tag": "{tag}", "body": "{body}{{i}}", "count": {c}, "intervalMs": 0}}"#
                )
            })
        })
        .collect();
    format!(
        r#"{{"format": "mqviz-scenario/1", "name": "bench", "until": 100000000,
        "brokers": [{{"name": "broker-a"}}], "topics": [{{"name": "Bench", "queues": 16}}],
        "producers": [{{"id": "p", "sends": [{sends}]}}],
        "groups": [{{"name": "g", "consumers": [{consumers}]}}]}}"#,
        sends = sends.join(","),
        consumers = consumers.join(",")
    )
}

/// `count` messages as send counts within the per-send limit (one send when it fits).
pub fn send_chunks(count: u64) -> impl Iterator<Item = u64> {
    let per = mqviz_engine::scenario::MAX_MESSAGES_PER_SEND;
    let sends = count.div_ceil(per).max(1);
    (0..sends).map(move |k| (count - k * per).min(per))
}

/// One throughput run: what it simulated, how long it took, and what it held.
pub struct ThroughputRun {
    pub messages: u64,
    pub secs: f64,
    pub events: usize,
    /// The world's own estimate of the bytes it holds at the end (`World::memory_bytes`).
    pub model_bytes: u64,
    /// Set when the memory budget stopped the run.
    pub stopped: Option<String>,
}

/// Runs the throughput scenario under a memory budget (bytes).
pub fn run_throughput(n: u64, trace: bool, budget: u64) -> ThroughputRun {
    let s = parse_scenario(&throughput_scenario(n)).expect("bench scenario is valid");
    let start = Instant::now();
    let mut w = World::new(s);
    w.trace_messages = trace;
    w.memory_budget = budget;
    // Stop once everything is consumed: idle heartbeats and rebalances are not throughput.
    let consumed = |w: &World| w.consumers.iter().map(|c| c.stats.consumed).sum::<u64>();
    let mut t = 0;
    while consumed(&w) < n / 2 && w.next_event_time().is_some() && t < 100_000_000 {
        t += 1_000;
        w.run_until(t);
    }
    let secs = start.elapsed().as_secs_f64();
    let stopped = w.budget_stop.as_ref().map(|s| s.message());
    if stopped.is_none() {
        assert_eq!(consumed(&w), n / 2, "every TagA message is consumed exactly once");
    }
    ThroughputRun { messages: n, secs, events: w.log().len(), model_bytes: w.memory_bytes(), stopped }
}

/// Messages in the untimed run before each timed one (`--warmup N`). A wasm engine first runs
/// code unoptimised and optimises it in the background, from what that code has done so far: in
/// Node a cold run of 1 M messages spends a sixth of its time that way. Warm, the figure measures
/// the code (native does the same warm-up); `--warmup 0` measures a cold start.
const DEFAULT_WARMUP: u64 = 100_000;

fn bench_throughput(n: u64, provenance: &[bool], budget: u64, warmup: u64) {
    for &trace in provenance {
        if warmup > 0 {
            run_throughput(warmup, trace, budget);
        }
        let r = run_throughput(n, trace, budget);
        let mode = if trace { "on" } else { "off" };
        // A run the budget stopped did not simulate its messages: no rate to give.
        if let Some(why) = &r.stopped {
            println!(
                "throughput (provenance {mode}): {} messages: stopped early after {:.3} s, model holds {}: {why}",
                r.messages,
                r.secs,
                mqviz_rocketmq::world::budget::mb(r.model_bytes)
            );
            continue;
        }
        println!(
            "throughput (provenance {}): {} messages, 16 queues, 8 consumers, tag filter, {}: {:.3} s, {:.2} M msgs/s, {} log events, model holds {} ({:.0} bytes/message)",
            mode,
            r.messages,
            if warmup > 0 { format!("after a {warmup}-message warm-up") } else { "cold".to_string() },
            r.secs,
            r.messages as f64 / r.secs / 1e6,
            r.events,
            mqviz_rocketmq::world::budget::mb(r.model_bytes),
            r.model_bytes as f64 / r.messages.max(1) as f64
        );
    }
}

/// The page's `#bench=N` load scenario run to its end, as the browser runs it (provenance on,
/// the default memory budget unless `--memory-budget` says otherwise): where memory goes when
/// pulls and client-side filter drops are as many as the messages.
fn bench_load(n: u64, budget: Option<u64>) {
    let s =
        mqviz_rocketmq::scenario::parse_scenario(&mqviz_rocketmq::scenario::load_scenario(n)).expect("load scenario is valid");
    let start = Instant::now();
    let mut w = World::new(s);
    if let Some(b) = budget {
        w.memory_budget = b;
    }
    w.run_to_end();
    let secs = start.elapsed().as_secs_f64();
    let stored = w.messages.len() as u64;
    println!(
        "load (the page's #bench={n}): {stored} messages stored by t={} in {secs:.3} s, {:.2} M msgs/s, {} log events, model holds {} ({:.0} bytes/message)",
        w.now,
        stored as f64 / secs / 1e6,
        w.log().len(),
        mqviz_rocketmq::world::budget::mb(w.memory_bytes()),
        w.memory_bytes() as f64 / stored.max(1) as f64
    );
    if let Some(stop) = &w.budget_stop {
        println!("  stopped early: {}", stop.message());
    }
    // The page shows the run's digest, so a seek to the end also renders and hashes every line.
    let start = Instant::now();
    let digest = w.log().digest();
    println!("  digest {digest:016x} over {} log events: {:.3} s", w.log().len(), start.elapsed().as_secs_f64());
}

fn bench_allocate() {
    let mq_all: Vec<MessageQueue> =
        (0..10_000u32).map(|i| MessageQueue::new("T", format!("room{}@broker-{}", i % 3, i % 10), i / 10)).collect();
    let mut mq_sorted = mq_all.clone();
    mq_sorted.sort();
    let mut cids: Vec<String> = (0..1000).map(|i| format!("room{}-10.0.{}.{}@{}", i % 3, i / 256, i % 256, i)).collect();
    cids.sort();
    let strategies = [
        Strategy::Avg,
        Strategy::AvgByCircle,
        Strategy::Config { queues: mq_sorted[..100].to_vec() },
        Strategy::MachineRoom { consumer_idcs: ["room0".to_string(), "room1".to_string()].into_iter().collect() },
        Strategy::MachineRoomNearby { inner: Box::new(Strategy::Avg) },
        Strategy::ConsistentHash { virtual_nodes: 10 },
    ];
    for s in &strategies {
        let start = Instant::now();
        let rounds = 5;
        let mut total = 0usize;
        for _ in 0..rounds {
            let r = allocate_group(s, &mq_sorted, &cids).expect("valid input");
            total += r.values().map(Vec::len).sum::<usize>();
        }
        let ms = start.elapsed().as_secs_f64() * 1000.0 / rounds as f64;
        println!(
            "allocate {:<20} 1000 consumers x 10000 queues: {ms:.2} ms per group ({} queues handed out)",
            s.name(),
            total / rounds
        );
    }
}

fn bench_sql92() {
    use mqviz_engine::vec_map::VecMap;
    use mqviz_rocketmq::sql92::{compile, Sql92Version};
    let e = compile("a > 5 AND b = 'x' OR c IN ('p','q')", Sql92Version::V5).expect("valid expression");
    let sets: Vec<VecMap<String, String>> =
        [vec![("a", "6"), ("b", "x")], vec![("a", "1"), ("c", "q")], vec![("a", "9"), ("b", "y")], vec![("b", "x"), ("c", "p")]]
            .iter()
            .map(|v| v.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
            .collect();
    let n = 4_000_000u64;
    let start = Instant::now();
    let mut hits = 0u64;
    for i in 0..n {
        hits += u64::from(e.matches_broker(std::hint::black_box(&sets[(i % 4) as usize])));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "sql92 three-clause expression: {n} evaluations in {secs:.3} s = {:.1} M evaluations/s (hits {hits})",
        n as f64 / secs / 1e6
    );
}

/// The scenarios a benchmark runs for `n` messages (and its warm-up), each checked by its
/// model's parser: a size the scenario format refuses is reported with its JSON path here,
/// before anything runs, rather than found by a run that cannot start.
fn refused_sizes(which: &str, n: u64, warmup: u64) -> Vec<String> {
    let mut problems = Vec::new();
    let mut check = |bench: &str, errors: Option<Vec<mqviz_engine::json_path::PathError>>| {
        for e in errors.into_iter().flatten() {
            problems.push(format!("bench {bench}: {e}"));
        }
    };
    let all = which == "all";
    if all || which == "throughput" {
        for size in [n, warmup] {
            check("throughput", parse_scenario(&throughput_scenario(size)).err());
        }
    }
    if which == "load" {
        check("load", parse_scenario(&mqviz_rocketmq::scenario::load_scenario(n)).err());
    }
    if all || which == "kafka-sim" {
        check("kafka-sim", mqviz_kafka::scenario::parse_scenario(&kafka_sim::scenario(n)).err());
    }
    if all || which == "pulsar-sim" {
        check("pulsar-sim", mqviz_pulsar::scenario::parse_scenario(&pulsar_sim::scenario(n)).err());
    }
    problems
}

pub fn main(args: &[String]) -> ExitCode {
    let which = args.first().filter(|a| !a.starts_with("--")).map(String::as_str).unwrap_or("all");
    let option = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(String::as_str);
    // Numbers that do not parse are errors, not silently the default.
    let number = |name: &str| -> Result<Option<u64>, String> {
        match option(name) {
            None if args.iter().any(|a| a == name) => Err(format!("{name} needs a number")),
            None => Ok(None),
            Some(v) => v.parse::<u64>().map(Some).map_err(|_| format!("{name} {v:?}: expected a whole number")),
        }
    };
    let (n, budget_mb, warmup) = match (number("--messages"), number("--memory-budget"), number("--warmup")) {
        (Ok(n), Ok(b), Ok(w)) => (n.unwrap_or(1_000_000), b, w.unwrap_or(DEFAULT_WARMUP)),
        (n, b, w) => {
            for e in [n.err(), b.err(), w.err()].into_iter().flatten() {
                eprintln!("bench: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let refused = refused_sizes(which, n, warmup);
    if !refused.is_empty() {
        for e in refused {
            eprintln!("{e}");
        }
        return ExitCode::from(2);
    }
    // The benchmark measures; a budget applies only when asked for (in MB).
    let budget = budget_mb.map_or(u64::MAX, |mb| mb.saturating_mul(1_000_000));
    let provenance: &[bool] = match option("--provenance") {
        Some("on") => &[true],
        Some("off") => &[false],
        _ => &[false, true],
    };
    if cfg!(debug_assertions) {
        println!("note: this is a debug build; build with --release for meaningful figures");
    }
    match which {
        "throughput" => bench_throughput(n, provenance, budget, warmup),
        "load" => bench_load(n, budget_mb.map(|mb| mb.saturating_mul(1_000_000))),
        "allocate" => bench_allocate(),
        "sql92" => bench_sql92(),
        "filters" => crate::bench::filters::bench_filter_manager(),
        "pulsar" => crate::bench::pulsar::bench_pulsar(n as usize),
        "kafka" => crate::bench::kafka::bench_kafka(),
        "pulsar-sim" => crate::bench::pulsar_sim::bench_pulsar_sim(n as usize),
        "kafka-sim" => crate::bench::kafka_sim::bench_kafka_sim(n),
        "all" => {
            bench_throughput(n, provenance, budget, warmup);
            bench_allocate();
            bench_sql92();
            crate::bench::filters::bench_filter_manager();
            crate::bench::pulsar::bench_pulsar(n as usize);
            crate::bench::kafka::bench_kafka();
            crate::bench::pulsar_sim::bench_pulsar_sim(n as usize);
            crate::bench::kafka_sim::bench_kafka_sim(n);
        }
        other => {
            eprintln!(
                "unknown benchmark {other} (throughput, allocate, sql92, filters, pulsar, pulsar-sim, kafka, kafka-sim, all)"
            );
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An hour at 10,000 a second (36 M) is within every model's limits once split into sends;
    /// a size past the scenario's total is refused with its JSON path instead of a panic.
    #[test]
    fn benchmark_sizes_are_checked_before_running() {
        assert_eq!(refused_sizes("all", 36_000_000, DEFAULT_WARMUP), Vec::<String>::new());
        assert_eq!(send_chunks(36_000_000).collect::<Vec<_>>(), vec![16_777_216, 16_777_216, 2_445_568]);
        assert_eq!(send_chunks(0).collect::<Vec<_>>(), vec![0]);
        let refused = refused_sizes("all", 60_000_000, DEFAULT_WARMUP);
        for bench in ["throughput", "kafka-sim", "pulsar-sim"] {
            assert!(refused.iter().any(|e| e.starts_with(&format!("bench {bench}: $.producers"))), "{bench}: {refused:?}");
        }
    }
}
