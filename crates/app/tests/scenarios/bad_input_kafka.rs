//! A corpus of broken Kafka scenarios: each gives an error naming the JSON path, and nothing
//! panics (neither reading nor running what reads cleanly).

use mqviz_app::registry::parse as parse_scenario;

const GOOD: &str = r#"{"format": "mqviz-scenario/1", "broker": "kafka", "until": 20000, "seed": 1,
  "brokers": [{"name": "b0"}, {"name": "b1"}],
  "topics": [{"name": "T", "partitions": 4, "leaders": ["b0", "b1", "b0", "b1"]}, {"name": "U", "partitions": 2}],
  "producers": [{"id": "p", "batchSize": 100, "sends": [
      {"at": 100, "topic": "T", "key": "k{i}", "value": "v{i}", "count": 30, "intervalMs": 50},
      {"at": 200, "topic": "U", "partition": 1, "count": 5, "intervalMs": 100},
      {"topic": "T", "times": [300, 300, 900]}]}],
  "groups": [
    {"name": "g", "assignors": ["cooperative-sticky"], "sessionTimeoutMs": 10000, "heartbeatIntervalMs": 1000, "consumers": [
      {"clientId": "c1", "subscribe": ["T"]},
      {"clientId": "c2", "groupInstanceId": "i2", "subscribePattern": "T|U", "maxPollRecords": 5, "recordProcessingMs": 2},
      {"clientId": "c3", "subscribe": ["T", "U"], "startAt": 3000, "crashAt": 9000, "restartAt": 12000}]},
    {"name": "h", "protocol": "consumer", "remoteAssignor": "range", "consumers": [
      {"clientId": "d1", "subscribe": ["T"], "manualCommit": "sync", "enableAutoCommit": false},
      {"clientId": "d2", "subscribe": ["T"], "autoOffsetReset": "earliest"}]},
    {"name": "solo", "consumers": [{"clientId": "s1", "assign": ["U-0", "U-1"], "autoOffsetReset": "by_duration:PT10S"}]}],
  "timeline": [
    {"at": 4000, "action": "leaderChange", "partition": "T-0", "leader": "b1"},
    {"at": 5000, "action": "truncate", "partition": "T-1", "offset": 2},
    {"at": 6000, "action": "pause", "clientId": "s1", "partitions": ["U-1"]},
    {"at": 7000, "action": "resume", "clientId": "s1", "partitions": ["U-1"]},
    {"at": 7500, "action": "seek", "clientId": "s1", "partition": "U-0", "to": "beginning"},
    {"at": 8000, "action": "addConsumer", "group": "g", "consumer": {"clientId": "c4", "subscribe": ["U"]}},
    {"at": 10000, "action": "setAssignors", "group": "g", "assignors": ["sticky"]},
    {"at": 11000, "action": "addPartitions", "topic": "U", "partitions": 3},
    {"at": 11500, "action": "createTopic", "topic": {"name": "T2", "partitions": 1}},
    {"at": 13000, "action": "setRemoteAssignor", "group": "h", "assignor": "uniform"},
    {"at": 14000, "action": "produce", "producer": "p", "send": {"topic": "T2", "value": "late {i}", "count": 3, "intervalMs": 10}},
    {"at": 15000, "action": "subscribe", "clientId": "c1", "topics": ["U"]},
    {"at": 16000, "action": "setProtocol", "group": "g", "protocol": "consumer"},
    {"at": 17000, "action": "unsubscribe", "clientId": "d2"},
    {"at": 18000, "action": "stopConsumer", "clientId": "d1"}]}"#;

fn with(patch: impl Fn(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(GOOD).unwrap();
    patch(&mut v);
    v.to_string()
}

fn expect_error(text: &str, path_part: &str) {
    let result = std::panic::catch_unwind(|| parse_scenario(text));
    let errors = match result {
        Ok(Ok(_)) => panic!("accepted: {text}"),
        Ok(Err(e)) => e,
        Err(_) => panic!("panicked on: {text}"),
    };
    assert!(
        errors.iter().any(|e| e.to_string().contains(path_part)),
        "expected an error mentioning {path_part:?}, got {:?}",
        errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn the_good_scenario_is_accepted_and_runs() {
    let mut sim = parse_scenario(GOOD).unwrap();
    sim.run_until(sim.until());
    assert!(sim.log_len() > 100);
    let r = sim.report();
    assert!(r["groups"]["h"]["protocol"] == "consumer");
}

#[test]
fn unknown_assignors_and_values_name_their_path() {
    expect_error(
        &with(|v| v["groups"][0]["assignors"] = serde_json::json!(["range", "fastest"])),
        "$.groups[0].assignors[1]: unknown assignor",
    );
    expect_error(&with(|v| v["groups"][0]["assignors"] = serde_json::json!([])), "$.groups[0].assignors: at least one assignor");
    expect_error(
        &with(|v| v["groups"][1]["remoteAssignor"] = "sticky".into()),
        "$.groups[1].remoteAssignor: unknown server assignor",
    );
    expect_error(&with(|v| v["groups"][0]["protocol"] = "eager".into()), "$.groups[0].protocol: expected classic or consumer");
    expect_error(&with(|v| v["groups"][0]["autoOffsetReset"] = "by_duration".into()), "$.groups[0].autoOffsetReset");
    expect_error(&with(|v| v["groups"][0]["autoOffsetReset"] = "by_duration:-PT1S".into()), "$.groups[0].autoOffsetReset");
    expect_error(&with(|v| v["groups"][0]["isolationLevel"] = "dirty".into()), "$.groups[0].isolationLevel");
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["manualCommit"] = "maybe".into()),
        "$.groups[0].consumers[0].manualCommit",
    );
    expect_error(&with(|v| v["producers"][0]["partitioner"] = "hash".into()), "$.producers[0].partitioner");
    expect_error(
        &with(|v| v["groups"][0]["consumers"][1]["subscribePattern"] = "(".into()),
        "$.groups[0].consumers[1].subscribePattern: invalid pattern",
    );
    expect_error(
        &with(|v| v["timeline"] = serde_json::json!([{"at": 1, "action": "setAssignors", "group": "g", "assignors": ["nope"]}])),
        "$.timeline[0].assignors[0]: unknown assignor",
    );
}

#[test]
fn partitions_beyond_the_topic_are_errors() {
    expect_error(
        &with(|v| v["groups"][2]["consumers"][0]["assign"] = serde_json::json!(["U-5"])),
        "$.groups[2].consumers[0].assign[0]: partition U-5 is beyond the topic",
    );
    // The count and the last partition, not "0..N" (which reads as if partition N existed).
    let text = &with(|v| v["groups"][2]["consumers"][0]["assign"] = serde_json::json!(["U-5"]));
    let errors = parse_scenario(text).map(|_| ()).unwrap_err();
    assert!(errors.iter().any(|e| e.message.contains("partitions, 0 to ")), "{errors:?}");
    expect_error(
        &with(|v| v["producers"][0]["sends"][1]["partition"] = 7.into()),
        "$.producers[0].sends[1].partition: partition 7 is beyond the topic",
    );
    expect_error(
        &with(|v| {
            v["timeline"] = serde_json::json!([{"at": 1, "action": "seek", "clientId": "s1", "partition": "T-9", "to": 0}])
        }),
        "$.timeline[0].partition: partition T-9 is beyond the topic",
    );
    expect_error(
        &with(|v| v["timeline"] = serde_json::json!([{"at": 1, "action": "truncate", "partition": "T-4", "offset": 0}])),
        "$.timeline[0].partition",
    );
    expect_error(
        &with(|v| v["groups"][2]["consumers"][0]["assign"] = serde_json::json!(["U"])),
        "expected \"<topic>-<partition>\"",
    );
    expect_error(
        &with(|v| v["timeline"] = serde_json::json!([{"at": 1, "action": "addPartitions", "topic": "T", "partitions": 2}])),
        "$.timeline[0].partitions: T already has 4 partitions",
    );
}

#[test]
fn subscribe_and_assign_are_mutually_exclusive() {
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["assign"] = serde_json::json!(["T-0"])),
        "$.groups[0].consumers[0]: subscribe, subscribePattern and assign are mutually exclusive",
    );
    expect_error(
        &with(|v| v["groups"][0]["consumers"][1]["subscribe"] = serde_json::json!(["T"])),
        "$.groups[0].consumers[1]: subscribe, subscribePattern and assign are mutually exclusive",
    );
}

#[test]
fn heartbeat_interval_must_be_below_the_session_timeout() {
    expect_error(
        &with(|v| v["groups"][0]["heartbeatIntervalMs"] = 10_000.into()),
        "$.groups[0].heartbeatIntervalMs: heartbeat interval (10000 ms) must be below the session timeout (10000 ms)",
    );
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["sessionTimeoutMs"] = 900.into()),
        "$.groups[0].consumers[0].heartbeatIntervalMs: heartbeat interval (1000 ms) must be below the session timeout (900 ms)",
    );
    expect_error(
        &with(|v| v["groups"][1]["consumers"][0]["heartbeatIntervalMs"] = 1000.into()),
        "$.groups[1].consumers[0].heartbeatIntervalMs: heartbeatIntervalMs is a classic-protocol setting",
    );
    expect_error(
        &with(|v| v["groups"][1]["consumers"][0]["assignors"] = serde_json::json!(["range"])),
        "$.groups[1].consumers[0].assignors: assignors is a classic-protocol setting",
    );
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["remoteAssignor"] = "range".into()),
        "$.groups[0].consumers[0].remoteAssignor",
    );
}

#[test]
fn absurd_sizes_are_errors() {
    expect_error(&with(|v| v["topics"][0]["partitions"] = 1_000_000_000u64.into()), "$.topics[0].partitions");
    expect_error(&with(|v| v["topics"][0]["partitions"] = 0.into()), "$.topics[0].partitions");
    expect_error(&with(|v| v["producers"][0]["sends"][0]["count"] = 100_000_000_000u64.into()), "$.producers[0].sends[0].count");
    expect_error(
        &with(|v| v["groups"][0]["consumers"][1]["maxPollRecords"] = 0.into()),
        "$.groups[0].consumers[1].maxPollRecords",
    );
    expect_error(&with(|v| v["producers"][0]["batchSize"] = u64::MAX.into()), "$.producers[0].batchSize");
    expect_error(&with(|v| v["until"] = u64::MAX.into()), "$.until");
    expect_error(&with(|v| v["topics"][0]["name"] = "bad name!".into()), "$.topics[0].name");
    let many: Vec<serde_json::Value> = (0..25_000).map(|i| serde_json::json!({"name": format!("b{i}")})).collect();
    expect_error(&with(|v| v["brokers"] = serde_json::json!(many)), "$.brokers: too many entries");
}

#[test]
fn unknown_references_are_errors() {
    expect_error(
        &with(|v| v["producers"][0]["sends"][0]["topic"] = "Nope".into()),
        "$.producers[0].sends[0].topic: unknown topic",
    );
    expect_error(&with(|v| v["topics"][0]["leaders"][1] = "b9".into()), "$.topics[0].leaders[1]: unknown broker");
    expect_error(
        &with(|v| v["topics"][0]["leaders"] = serde_json::json!(["b0"])),
        "$.topics[0].leaders: 1 leaders for 4 partitions",
    );
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["subscribe"] = serde_json::json!(["Nope"])),
        "$.groups[0].consumers[0].subscribe[0]: unknown topic",
    );
    expect_error(
        &with(|v| v["timeline"] = serde_json::json!([{"at": 5, "action": "stopConsumer", "clientId": "ghost"}])),
        "$.timeline[0]: stopConsumer: unknown consumer \"ghost\"",
    );
    expect_error(
        &with(|v| v["timeline"] = serde_json::json!([{"at": 5, "action": "leaderChange", "partition": "T-0", "leader": "b7"}])),
        "$.timeline[0].leader: unknown broker",
    );
    expect_error(
        &with(|v| {
            v["timeline"] = serde_json::json!([{"at": 5, "action": "setRemoteAssignor", "group": "g", "assignor": "range"}])
        }),
        "group \"g\" uses protocol",
    );
    expect_error(
        &with(|v| {
            v["timeline"] = serde_json::json!([{"at": 5, "action": "addConsumer", "group": "zz", "consumer": {"clientId": "c9"}}])
        }),
        "addConsumer: unknown group",
    );
    expect_error(
        &with(|v| v["timeline"] = serde_json::json!([{"at": 5, "action": "explode"}])),
        "$.timeline[0].action: unknown action",
    );
    // Instances may share a clientId (a label in Kafka) when their names differ.
    let shared = with(|v| {
        v["groups"][0]["consumers"][2]["clientId"] = "c1".into();
        v["groups"][0]["consumers"][2]["name"] = "c1#2".into();
    });
    parse_scenario(&shared).unwrap_or_else(|e| panic!("{e:?}"));
    expect_error(
        &with(|v| v["groups"][0]["consumers"][2]["clientId"] = "c1".into()),
        "$.groups[0].consumers[2].name: duplicate consumer name \"c1\" (consumers may share a clientId, but each needs its own \"name\")",
    );
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["groupInstanceId"] = "i2".into()),
        "$.groups[0].consumers[1].groupInstanceId: duplicate group.instance.id",
    );
    expect_error(&with(|v| v["broker"] = "nats".into()), "$.broker: unknown broker model");
}

#[test]
fn wrong_types_are_errors() {
    expect_error(&with(|v| v["topics"][0]["partitions"] = "4".into()), "$.topics[0].partitions: expected a number");
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["subscribe"] = "T".into()),
        "$.groups[0].consumers[0].subscribe: expected an array",
    );
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["subscribe"] = serde_json::json!([1])),
        "$.groups[0].consumers[0].subscribe[0]: expected a string",
    );
    expect_error(
        &with(|v| v["groups"][0]["enableAutoCommit"] = "yes".into()),
        "$.groups[0].enableAutoCommit: expected a boolean",
    );
    expect_error(&with(|v| v["groups"][0]["colour"] = "red".into()), "$.groups[0].colour: unknown field");
    expect_error(&with(|v| v["producers"][0]["sends"][0]["key"] = 5.into()), "$.producers[0].sends[0].key: expected a string");
    expect_error(
        &with(|v| {
            v["timeline"] = serde_json::json!([{"at": 1, "action": "seek", "clientId": "s1", "partition": "U-0", "to": true}])
        }),
        "$.timeline[0].to: expected an offset",
    );
    expect_error(&with(|v| v["groups"] = serde_json::json!({"name": "g"})), "$.groups: expected an array");
}

#[test]
fn commands_entered_during_a_run_are_checked_against_the_state() {
    let mut sim = parse_scenario(GOOD).unwrap();
    sim.run_until(2000);
    let bad = [
        (serde_json::json!({"at": 0, "action": "seek", "clientId": "c1", "partition": "T-7", "to": 1}), "beyond the topic"),
        (serde_json::json!({"at": 0, "action": "startConsumer", "clientId": "ghost"}), "unknown consumer"),
        (serde_json::json!({"at": 0, "action": "setRemoteAssignor", "group": "g", "assignor": "range"}), "runs protocol classic"),
        (
            serde_json::json!({"at": 0, "action": "addConsumer", "group": "g", "consumer": {"clientId": "c1"}}),
            "addConsumer: duplicate consumer name",
        ),
        (
            serde_json::json!({"at": 0, "action": "addConsumer", "group": "g", "consumer": {"clientId": "c8", "heartbeatIntervalMs": 20000}}),
            "must be below the session timeout",
        ),
        (
            serde_json::json!({"at": 0, "action": "produce", "producer": "p", "send": {"topic": "U", "partition": 5}}),
            "beyond the topic",
        ),
    ];
    let before = sim.log_len();
    for (cmd, needle) in bad {
        let errors = sim.enter_command(&cmd).expect_err(needle);
        assert!(errors.iter().any(|e| e.message.contains(needle)), "{needle}: {errors:?}");
    }
    assert_eq!(sim.log_len(), before, "a refused command changes nothing");
    sim.enter_command(&serde_json::json!({"at": 0, "action": "crashConsumer", "clientId": "c1"})).unwrap();
    sim.run_until(3000);
    assert!((before..sim.log_len()).any(|i| sim.log_text(i).contains("consumer-crashed c1")));
}

#[test]
fn mutated_scenarios_never_panic() {
    let base = GOOD.as_bytes().to_vec();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut ran = 0;
    for _ in 0..3000 {
        let mut b = base.clone();
        for _ in 0..(1 + next() % 4) {
            let i = (next() as usize) % b.len();
            match next() % 3 {
                0 => b[i] = b"{}[]\",:0123456789-.eE tfn"[(next() % 25) as usize],
                1 => {
                    b.remove(i);
                }
                _ => b.insert(i, b"{[\"-9"[(next() % 5) as usize]),
            }
        }
        let text = String::from_utf8_lossy(&b).to_string();
        let r = std::panic::catch_unwind(|| parse_scenario(&text));
        let Ok(parsed) = r else { panic!("panicked on {text}") };
        match parsed {
            Err(errors) => assert!(errors.iter().all(|e| e.path.starts_with('$'))),
            Ok(mut sim) => {
                // Small enough mutants are run too: the world must not panic either.
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                let records: u64 =
                    v["producers"][0]["sends"].as_array().into_iter().flatten().map(|s| s["count"].as_u64().unwrap_or(1)).sum();
                if records <= 2_000 && ran < 150 {
                    ran += 1;
                    let until = sim.until().min(20_000);
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run_until(until)));
                    assert!(result.is_ok(), "the world panicked running {text}");
                }
            }
        }
    }
    assert!(ran > 20, "only {ran} mutants ran");
}

#[test]
fn absurd_clusters_are_errors() {
    let topics: Vec<serde_json::Value> =
        (0..20).map(|i| serde_json::json!({"name": format!("t{i}"), "partitions": 100_000})).collect();
    expect_error(&with(|v| v["topics"] = serde_json::json!(topics)), "partitions in all is more than the 1000000");
    let brokers: Vec<serde_json::Value> = (0..1_500).map(|i| serde_json::json!({"name": format!("b{i}")})).collect();
    expect_error(&with(|v| v["brokers"] = serde_json::json!(brokers)), "$.brokers: 1500 brokers");
}
