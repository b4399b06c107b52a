//! A corpus of broken scenarios: each gives an error naming the JSON path, and nothing panics.

use mqviz_app::registry::parse as parse_scenario;

const GOOD: &str = r#"{"format": "mqviz-scenario/1", "until": 1000, "brokers": [{"name": "b"}],
  "topics": [{"name": "T", "queues": 4}],
  "producers": [{"id": "p", "sends": [{"topic": "T", "tag": "A", "count": 3}]}],
  "groups": [{"name": "g", "consumers": [{"clientId": "c1", "subscriptions": {"T": "A"}}]}]}"#;

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
        "expected an error mentioning {path_part:?}, got {:?} for {text}",
        errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn the_good_scenario_is_accepted() {
    parse_scenario(GOOD).unwrap();
}

#[test]
fn malformed_json_reports_line_and_column() {
    expect_error("{\"format\": \"mqviz-scenario/1\",\n \"until\": }", "line 2");
    expect_error("", "line 1");
    expect_error("[1, 2", "$");
    expect_error("null", "$: expected an object");
}

#[test]
fn unknown_fields_are_errors() {
    expect_error(&with(|v| v["colour"] = "red".into()), "$.colour: unknown field");
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["subscription"] = "x".into()),
        "$.groups[0].consumers[0].subscription: unknown field",
    );
    expect_error(&with(|v| v["topics"][0]["queue"] = 3.into()), "$.topics[0].queue");
}

#[test]
fn wrong_types_are_errors() {
    expect_error(&with(|v| v["until"] = "soon".into()), "$.until: expected a number");
    expect_error(&with(|v| v["topics"][0]["queues"] = "4".into()), "$.topics[0].queues");
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["subscriptions"] = serde_json::json!(["T"])),
        "$.groups[0].consumers[0].subscriptions",
    );
    expect_error(
        &with(|v| v["groups"][0]["consumers"][0]["subscriptions"]["T"] = 5.into()),
        "$.groups[0].consumers[0].subscriptions[\"T\"]",
    );
    expect_error(&with(|v| v["groups"][0]["messageModel"] = "CLUSTER".into()), "$.groups[0].messageModel");
    expect_error(
        &with(|v| v["groups"][0]["allocation"] = serde_json::json!({"strategy": "STICKY"})),
        "$.groups[0].allocation.strategy",
    );
    expect_error(&with(|v| v["brokers"] = serde_json::json!({"name": "b"})), "$.brokers: expected an array");
}

#[test]
fn negative_and_fractional_counts_are_errors() {
    expect_error(&with(|v| v["topics"][0]["queues"] = (-1).into()), "$.topics[0].queues");
    expect_error(&with(|v| v["producers"][0]["sends"][0]["count"] = (-5).into()), "$.producers[0].sends[0].count");
    expect_error(&with(|v| v["producers"][0]["sends"][0]["count"] = 1.5.into()), "$.producers[0].sends[0].count");
    expect_error(&with(|v| v["until"] = 0.into()), "$.until");
    expect_error(
        &with(|v| v["producers"][0]["sends"][0]["times"] = serde_json::json!([5, 3])),
        "$.producers[0].sends[0].times[1]: send times must not decrease",
    );
}

#[test]
fn absurd_sizes_are_errors() {
    expect_error(&with(|v| v["topics"][0]["queues"] = 1_000_000_000u64.into()), "$.topics[0].queues");
    expect_error(&with(|v| v["producers"][0]["sends"][0]["count"] = 100_000_000_000u64.into()), "$.producers[0].sends[0].count");
    expect_error(&with(|v| v["until"] = u64::MAX.into()), "$.until");
    expect_error(&with(|v| v["network"] = serde_json::json!({"latencyMs": 1e12})), "$.network.latencyMs");
}

#[test]
fn unknown_references_are_errors() {
    expect_error(
        &with(|v| v["producers"][0]["sends"][0]["topic"] = "Nope".into()),
        "$.producers[0].sends[0].topic: unknown topic",
    );
    expect_error(
        &with(|v| v["topics"][0]["brokers"] = serde_json::json!(["nobroker"])),
        "$.topics[0].brokers[0]: unknown broker",
    );
    expect_error(
        &with(|v| v["timeline"] = serde_json::json!([{"at": 5, "action": "stopConsumer", "clientId": "ghost"}])),
        "unknown consumer \"ghost\"",
    );
    expect_error(
        &with(|v| {
            v["timeline"] = serde_json::json!([{"at": 5, "action": "produce", "producer": "p", "send": {"topic": "Nope"}}])
        }),
        "produce: unknown topic \"Nope\"",
    );
    expect_error(
        &with(|v| {
            v["timeline"] =
                serde_json::json!([{"at": 5, "action": "addConsumer", "group": "nogroup", "consumer": {"clientId": "c9"}}])
        }),
        "unknown group",
    );
    expect_error(&with(|v| v["timeline"] = serde_json::json!([{"at": 5, "action": "explode"}])), "unknown action");
    expect_error(
        &with(|v| v["groups"][0]["consumers"].as_array_mut().unwrap().push(serde_json::json!({"clientId": "c1"}))),
        "$.groups[0].consumers[1].name: duplicate consumer name \"c1\"",
    );
    expect_error(
        &with(|v| v["timeline"] = serde_json::json!([{"at": 5, "action": "stopConsumer", "consumer": "c1", "clientId": "c1"}])),
        "either \"consumer\" or \"clientId\"",
    );
}

/// What the real client allows is not refused: subscribing to a topic that does not exist (the
/// route is not found), two consumers sharing a clientId (each with its own name), and a topic
/// created mid-run by setQueueCount, which producers may then send to.
#[test]
fn real_client_freedoms_are_accepted() {
    parse_scenario(&with(|v| v["groups"][0]["consumers"][0]["subscriptions"]["Later"] = "*".into())).unwrap();
    parse_scenario(&with(|v| {
        v["groups"][0]["consumers"].as_array_mut().unwrap().push(serde_json::json!({"name": "c1-twin", "clientId": "c1"}));
        v["timeline"] = serde_json::json!([{"at": 5, "action": "stopConsumer", "consumer": "c1-twin"}]);
    }))
    .unwrap();
    parse_scenario(&with(|v| {
        v["timeline"] = serde_json::json!([
            {"at": 5, "action": "subscribe", "clientId": "c1", "topic": "Later", "expression": "*"},
            {"at": 6, "action": "setQueueCount", "topic": "Later", "queues": 2},
            {"at": 7, "action": "produce", "producer": "p", "send": {"topic": "Later"}}])
    }))
    .unwrap();
}

#[test]
fn timeline_errors_name_the_entry_path() {
    let text = with(|v| {
        v["timeline"] = serde_json::json!([
            {"at": 9, "action": "startConsumer", "clientId": "c1"},
            {"at": 5, "action": "stopConsumer", "clientId": "ghost"}])
    });
    expect_error(&text, "$.timeline[1]: stopConsumer: unknown consumer \"ghost\"");
    let text = with(|v| v["groups"][0]["consumers"][0]["stopAt"] = 5.into());
    parse_scenario(&text).unwrap();
}

#[test]
fn mutated_scenarios_never_panic() {
    // Deterministic byte mutations of the good scenario: every result is Ok or a path error.
    let base = GOOD.as_bytes().to_vec();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
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
        if let Err(errors) = parsed {
            assert!(errors.iter().all(|e| e.path.starts_with('$')));
        }
    }
}
