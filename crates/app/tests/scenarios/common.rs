#![allow(dead_code)]

use mqviz_app::registry::run_rocketmq;
use mqviz_rocketmq::report::report_json;
use serde_json::Value;

pub fn preset_text(name: &str) -> String {
    mqviz_model::preset_files::text(name)
}

pub fn run_preset(name: &str) -> (mqviz_rocketmq::world::World, Value) {
    let w = run_rocketmq(&preset_text(name)).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let r = report_json(&w);
    (w, r)
}

/// The numbers `i` of the consumed messages whose body ends with `suffix` ("TopicTestA.TagB").
pub fn consumed_numbers(report: &Value, client: &str, suffix: &str) -> Vec<u32> {
    let mut out: Vec<u32> = report["consumers"][client]["consumed"]
        .as_array()
        .unwrap_or_else(|| panic!("no consumer {client}"))
        .iter()
        .filter_map(|m| m["body"].as_str())
        .filter(|b| b.ends_with(suffix))
        .map(|b| b.trim_start_matches("Hello RocketMQ ").trim_end_matches(suffix).parse().expect("numbered body"))
        .collect();
    out.sort_unstable();
    out
}

pub fn total_consumed(report: &Value, client: &str) -> usize {
    report["consumers"][client]["consumed"].as_array().map(Vec::len).unwrap_or(0)
}
