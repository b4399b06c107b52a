//! The variants the comparison offers for a Kafka scenario: the same groups under another
//! rebalance protocol or assignor (EAGER range, COOPERATIVE cooperative-sticky, the KIP-848
//! consumer protocol). A variant changes every group of the scenario; one that the reader would
//! refuse (a timeline `setAssignors` that no longer fits, say) is not offered.

use serde_json::{json, Value};

use super::scenario::parse_scenario_value;

/// One way of running the scenario's groups.
struct Setting {
    label: &'static str,
    protocol: &'static str,
    assignors: Option<&'static [&'static str]>,
}

const SETTINGS: &[Setting] = &[
    Setting {
        label: "COOPERATIVE: assignors [cooperative-sticky]",
        protocol: "classic",
        assignors: Some(&["cooperative-sticky"]),
    },
    Setting { label: "EAGER: assignors [range]", protocol: "classic", assignors: Some(&["range"]) },
    Setting { label: "EAGER: assignors [sticky]", protocol: "classic", assignors: Some(&["sticky"]) },
    Setting { label: "KIP-848: protocol consumer (uniform)", protocol: "consumer", assignors: None },
];

/// Fields the consumer protocol leaves to the coordinator: a group or member that sets them
/// under `"protocol": "consumer"` is refused.
const CLASSIC_ONLY: &[&str] = &["assignors", "sessionTimeoutMs", "heartbeatIntervalMs"];

fn apply(scenario: &Value, s: &Setting) -> Value {
    let mut v = scenario.clone();
    for g in v.get_mut("groups").and_then(Value::as_array_mut).into_iter().flatten() {
        let Some(o) = g.as_object_mut() else { continue };
        o.insert("protocol".into(), Value::from(s.protocol));
        match s.assignors {
            Some(list) => {
                o.insert("assignors".into(), json!(list));
                o.remove("remoteAssignor");
            }
            None => {
                for k in CLASSIC_ONLY {
                    o.remove(*k);
                }
                o.insert("remoteAssignor".into(), Value::from("uniform"));
                for c in o.get_mut("consumers").and_then(Value::as_array_mut).into_iter().flatten() {
                    if let Some(c) = c.as_object_mut() {
                        for k in CLASSIC_ONLY {
                            c.remove(*k);
                        }
                    }
                }
            }
        }
    }
    v
}

/// How the scenario's groups rebalance, in the words of the variants' labels.
pub fn setting(scenario: &Value) -> String {
    let mut out: Vec<String> = Vec::new();
    for g in scenario.get("groups").and_then(Value::as_array).into_iter().flatten() {
        let text = match g.get("protocol").and_then(Value::as_str) {
            Some("consumer") => {
                let remote = g.get("remoteAssignor").and_then(Value::as_str).unwrap_or("uniform");
                format!("KIP-848: protocol consumer ({remote})")
            }
            _ => {
                let names: Vec<&str> = match g.get("assignors").and_then(Value::as_array) {
                    Some(list) => list.iter().filter_map(Value::as_str).collect(),
                    None => vec!["range", "cooperative-sticky"],
                };
                // The group is COOPERATIVE only when every listed assignor supports it.
                let cooperative = !names.is_empty() && names.iter().all(|n| *n == "cooperative-sticky");
                format!("{}: assignors [{}]", if cooperative { "COOPERATIVE" } else { "EAGER" }, names.join(", "))
            }
        };
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out.join("; ")
}

/// The settings this scenario does not already use, as `(label, scenario)`.
pub fn variants(scenario: &Value) -> Vec<(String, Value)> {
    let Ok(current) = parse_scenario_value(scenario) else { return Vec::new() };
    SETTINGS
        .iter()
        .map(|s| (s, apply(scenario, s)))
        .filter(|(_, v)| parse_scenario_value(v).is_ok_and(|other| other != current))
        .map(|(s, v)| (s.label.to_string(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqviz_engine::json_path::parse_json;
    use mqviz_model::preset_files;

    fn preset(file: &str) -> Value {
        parse_json(&preset_files::text(file)).unwrap()
    }

    #[test]
    fn an_eager_group_can_be_compared_with_cooperative_and_kip848() {
        let labels: Vec<String> = variants(&preset("kafka-eager-join.json")).into_iter().map(|v| v.0).collect();
        assert!(labels.iter().any(|l| l.starts_with("COOPERATIVE")), "{labels:?}");
        assert!(labels.iter().any(|l| l.starts_with("KIP-848")), "{labels:?}");
    }

    #[test]
    fn the_setting_names_the_rebalance_protocol_the_assignors_give() {
        assert_eq!(setting(&preset("kafka-eager-join.json")), "EAGER: assignors [range, cooperative-sticky]");
        for (label, v) in variants(&preset("kafka-eager-join.json")) {
            assert_eq!(setting(&v), label);
        }
    }

    #[test]
    fn a_cooperative_group_is_not_offered_its_own_setting() {
        let v = variants(&preset("kafka-cooperative-join.json"));
        let labels: Vec<&str> = v.iter().map(|v| v.0.as_str()).collect();
        assert!(!labels.contains(&"COOPERATIVE: assignors [cooperative-sticky]"), "{labels:?}");
        assert!(labels.iter().any(|l| l.starts_with("EAGER")), "{labels:?}");
    }

    #[test]
    fn every_variant_of_every_kafka_preset_is_a_valid_scenario() {
        for (file, _) in preset_files::of_broker("kafka") {
            for (label, v) in variants(&preset(&file)) {
                assert!(parse_scenario_value(&v).is_ok(), "{file} {label}");
            }
        }
    }
}
