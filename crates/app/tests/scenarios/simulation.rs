//! Simulation testing (mqviz_app::simtest): random valid scenarios from seeds, named invariants after
//! every step and at the end, determinism and checkpoint replay, shrinking on failure.
//!
//! `MQVIZ_SEED=S` runs seed S alone (or `MQVIZ_NUM` seeds from S); `MQVIZ_NUM=N` sets how many
//! (default 300 for RocketMQ, 200 for Kafka and Pulsar, whose runs are longer). A failure prints the seed and
//! the shrunk scenario JSON. `mqviz fuzz --model M` runs as many seeds as asked.

use mqviz_app::simtest::kafka::KafkaTarget;
use mqviz_app::simtest::pulsar::PulsarTarget;
use mqviz_app::simtest::rocketmq::RocketMqTarget;
use mqviz_app::simtest::{run_seed, shrink, SimTarget};

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn keeps_every_invariant<T: SimTarget>(target: &T, default_count: u64) {
    let from = env_u64("MQVIZ_SEED").unwrap_or(0);
    let count = env_u64("MQVIZ_NUM").unwrap_or(if std::env::var("MQVIZ_SEED").is_ok() { 1 } else { default_count });
    let mut failures = Vec::new();
    for seed in from..from + count {
        let outcome = run_seed(target, seed);
        if !outcome.passed() {
            failures.push(outcome);
        }
    }
    if let Some(f) = failures.first() {
        let shrunk = shrink(target, &f.scenario, f.violations[0].invariant, 200);
        let listing: Vec<String> = failures.iter().map(|f| format!("seed {}: {}", f.seed, f.violations[0])).collect();
        panic!(
            "{}: {} of {count} seeds failed:\n{}\n\nreproduce with mqviz fuzz --model {} --from {} --seeds 1\nshrunk scenario:\n{}",
            target.model(),
            failures.len(),
            listing.join("\n"),
            target.model(),
            f.seed,
            serde_json::to_string_pretty(&shrunk).unwrap()
        );
    }
}

#[test]
fn random_scenarios_keep_every_invariant() {
    keeps_every_invariant(&RocketMqTarget, 300);
}

#[test]
fn random_kafka_scenarios_keep_every_invariant() {
    keeps_every_invariant(&KafkaTarget, 200);
}

#[test]
fn random_pulsar_scenarios_keep_every_invariant() {
    keeps_every_invariant(&PulsarTarget, 200);
}

/// The generator only makes scenarios the parser accepts, and they are not trivial.
#[test]
fn generated_scenarios_are_valid_and_varied() {
    let target = RocketMqTarget;
    let mut strategies = std::collections::BTreeSet::new();
    let mut broadcasting = false;
    let mut orderly = false;
    let mut sql = false;
    for seed in 0..300 {
        let s = target.generate(seed);
        mqviz_rocketmq::scenario::parse_scenario_value(&s).unwrap_or_else(|e| panic!("seed {seed}: {e:?}\n{s}"));
        for g in s["groups"].as_array().unwrap() {
            strategies.insert(g["allocation"]["strategy"].as_str().or(g["allocation"].as_str()).unwrap().to_string());
            broadcasting |= g["messageModel"] == "BROADCASTING";
            orderly |= g["orderly"] == true;
        }
        sql |= s.to_string().contains("SQL92");
    }
    assert_eq!(strategies.len(), 6, "{strategies:?}");
    assert!(broadcasting && orderly && sql);
}

/// Every scenario in tests/regressions/ (failures the fuzzer found, shrunk) keeps every invariant.
#[test]
fn regression_scenarios_keep_every_invariant() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let scenario: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let (violations, _) = match scenario["broker"].as_str() {
            Some("kafka") => mqviz_app::simtest::run_scenario(&KafkaTarget, &scenario),
            Some("pulsar") => mqviz_app::simtest::run_scenario(&PulsarTarget, &scenario),
            _ => mqviz_app::simtest::run_scenario(&RocketMqTarget, &scenario),
        };
        assert!(violations.is_empty(), "{}: {violations:?}", path.display());
    }
}

/// The Kafka generator only makes scenarios the parser accepts, and they reach both protocols,
/// every client assignor, static members, patterns, assign-only consumers and every kind of churn.
#[test]
fn generated_kafka_scenarios_are_valid_and_varied() {
    let target = KafkaTarget;
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..300 {
        let s = target.generate(seed);
        mqviz_kafka::scenario::parse_scenario(&s.to_string()).unwrap_or_else(|e| panic!("seed {seed}: {e:?}\n{s}"));
        for g in s["groups"].as_array().unwrap() {
            seen.insert(format!("protocol {}", g["protocol"].as_str().unwrap_or("classic")));
            for a in g["assignors"].as_array().into_iter().flatten() {
                seen.insert(format!("assignor {}", a.as_str().unwrap()));
            }
            for c in g["consumers"].as_array().unwrap() {
                for key in ["groupInstanceId", "subscribePattern", "assign"] {
                    if c.get(key).is_some() {
                        seen.insert(key.to_string());
                    }
                }
            }
        }
        for t in s["timeline"].as_array().unwrap() {
            seen.insert(format!("action {}", t["action"].as_str().unwrap()));
        }
    }
    for want in [
        "protocol classic",
        "protocol consumer",
        "assignor range",
        "assignor roundrobin",
        "assignor sticky",
        "assignor cooperative-sticky",
        "groupInstanceId",
        "subscribePattern",
        "assign",
        "action stopConsumer",
        "action crashConsumer",
        "action startConsumer",
        "action addConsumer",
        "action subscribe",
        "action seek",
        "action leaderChange",
        "action truncate",
        "action addPartitions",
        "action createTopic",
        "action setProtocol",
    ] {
        assert!(seen.contains(want), "no generated scenario has {want}: {seen:?}");
    }
}

/// The Pulsar generator only makes scenarios the parser accepts, and they reach every subscription
/// type, both Key_Shared implementations, every ack mode the generator draws and every churn action.
#[test]
fn generated_pulsar_scenarios_are_valid_and_varied() {
    let target = PulsarTarget;
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..300 {
        let s = target.generate(seed);
        mqviz_pulsar::scenario::parse_scenario(&s.to_string()).unwrap_or_else(|e| panic!("seed {seed}: {e:?}\n{s}"));
        for c in s["consumers"].as_array().unwrap().iter().filter(|c| c.get("subscriptionType").is_some()) {
            seen.insert(format!("type {}", c["subscriptionType"].as_str().unwrap()));
            seen.insert(format!("ack {}", c["ack"]["mode"].as_str().unwrap()));
            for key in ["ackTimeoutMs", "deadLetterPolicy"] {
                if c.get(key).is_some() {
                    seen.insert(key.to_string());
                }
            }
        }
        for t in s["timeline"].as_array().unwrap() {
            seen.insert(format!("action {}", t["action"].as_str().unwrap()));
        }
        if s["config"]["subscriptionKeySharedUseClassicPersistentImplementation"] == true {
            seen.insert("classic Key_Shared".to_string());
        }
        if s["topics"].as_array().unwrap().iter().any(|t| t.get("partitions").is_some()) {
            seen.insert("partitioned".to_string());
        }
        for c in s["consumers"].as_array().unwrap() {
            if let Some(kind) = c["consumerType"].as_str() {
                seen.insert(format!("consumerType {kind}"));
            }
        }
    }
    for want in [
        "type Exclusive",
        "type Shared",
        "type Failover",
        "type Key_Shared",
        "ack individual",
        "ack cumulative",
        "ack nack",
        "ack never",
        "ackTimeoutMs",
        "deadLetterPolicy",
        "action closeConsumer",
        "action crashConsumer",
        "action startConsumer",
        "action addConsumer",
        "action setAck",
        "action redeliverUnacknowledged",
        "action produce",
        "classic Key_Shared",
        "partitioned",
    ] {
        assert!(seen.contains(want), "no generated scenario has {want}: {seen:?}");
    }
}
