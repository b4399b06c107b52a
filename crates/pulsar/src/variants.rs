//! The variants the comparison offers for a Pulsar scenario: the same consumers under another
//! subscription type (Exclusive, Failover, Shared, Key_Shared), including consumers added by the
//! timeline. Consumers of scalable topics (which take a `consumerType` instead) keep theirs. A
//! variant the reader would refuse (a cumulative ack on Shared, say) is not offered.

use serde_json::Value;

use super::scenario::parse_scenario_value;

const TYPES: &[&str] = &["Exclusive", "Failover", "Shared", "Key_Shared"];

fn set_type(consumer: &mut Value, ty: &str) {
    let Some(o) = consumer.as_object_mut() else { return };
    if o.contains_key("consumerType") {
        return;
    }
    o.insert("subscriptionType".into(), Value::from(ty));
    if ty != "Key_Shared" {
        o.remove("keySharedPolicy");
    }
}

fn apply(scenario: &Value, ty: &str) -> Value {
    let mut v = scenario.clone();
    for c in v.get_mut("consumers").and_then(Value::as_array_mut).into_iter().flatten() {
        set_type(c, ty);
    }
    for a in v.get_mut("timeline").and_then(Value::as_array_mut).into_iter().flatten() {
        if a.get("action").and_then(Value::as_str) == Some("addConsumer") {
            if let Some(c) = a.get_mut("consumer") {
                set_type(c, ty);
            }
        }
    }
    v
}

/// The subscription types of the scenario's consumers, in the words of the variants' labels.
pub fn setting(scenario: &Value) -> String {
    let mut types: Vec<&str> = Vec::new();
    let added = scenario.get("timeline").and_then(Value::as_array).into_iter().flatten().filter_map(|a| a.get("consumer"));
    for c in scenario.get("consumers").and_then(Value::as_array).into_iter().flatten().chain(added) {
        let Some(o) = c.as_object() else { continue };
        let ty = match o.get("consumerType").and_then(Value::as_str) {
            Some(t) => t,
            None => o.get("subscriptionType").and_then(Value::as_str).unwrap_or("Exclusive"),
        };
        if !types.contains(&ty) {
            types.push(ty);
        }
    }
    if types.is_empty() {
        return String::new();
    }
    format!("subscription type {}", types.join(" / "))
}

/// The subscription types this scenario does not already use everywhere, as `(label, scenario)`.
pub fn variants(scenario: &Value) -> Vec<(String, Value)> {
    let Ok(current) = parse_scenario_value(scenario) else { return Vec::new() };
    TYPES
        .iter()
        .map(|ty| (ty, apply(scenario, ty)))
        .filter(|(_, v)| parse_scenario_value(v).is_ok_and(|other| other != current))
        .map(|(ty, v)| (format!("subscription type {ty}"), v))
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
    fn key_shared_can_be_compared_with_shared() {
        let v = variants(&preset("pulsar-key-shared-join.json"));
        let labels: Vec<&str> = v.iter().map(|v| v.0.as_str()).collect();
        assert!(labels.contains(&"subscription type Shared"), "{labels:?}");
        assert!(!labels.contains(&"subscription type Key_Shared"), "{labels:?}");
        let shared = &v.iter().find(|v| v.0 == "subscription type Shared").unwrap().1;
        assert!(!shared.to_string().contains("keySharedPolicy"));
    }

    #[test]
    fn the_setting_names_the_subscription_type() {
        assert_eq!(setting(&preset("pulsar-key-shared-join.json")), "subscription type Key_Shared");
        for (label, v) in variants(&preset("pulsar-key-shared-join.json")) {
            assert_eq!(setting(&v), label);
        }
    }

    #[test]
    fn every_variant_of_every_pulsar_preset_is_a_valid_scenario() {
        for (file, _) in preset_files::of_broker("pulsar") {
            for (label, v) in variants(&preset(&file)) {
                assert!(parse_scenario_value(&v).is_ok(), "{file} {label}");
            }
        }
    }
}
