//! SQL92 filtering in the simulation, bloom bitmaps, and the ConsumerFilterManager's two designs.

use mqviz_app::presets::by_file;
use mqviz_rocketmq::events::Event;
use mqviz_rocketmq::filter_manager::IndexDesign;
use mqviz_rocketmq::report::report_json;
use mqviz_rocketmq::scenario::parse_scenario;
use mqviz_rocketmq::world::World;
use serde_json::json;

fn run(text: &str) -> World {
    let mut w = World::new(parse_scenario(text).unwrap_or_else(|e| panic!("{e:?}")));
    w.run_to_end();
    w
}

fn verdicts(w: &World) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = w
        .log()
        .entries()
        .filter_map(|e| match &e.kind {
            Event::BrokerFiltered { verdict: Some(v), .. } => Some(*v),
            _ => None,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn sql92_preset_filters_by_string_properties_and_refuses_start_without_property_filter() {
    let w = run(by_file("sql92-filter.json").unwrap().text);
    let r = report_json(&w);
    let consumed = r["consumers"]["SqlConsumer"]["consumed"].as_array().unwrap();
    assert!(!consumed.is_empty());
    for m in consumed {
        assert!(m["body"].as_str().unwrap().starts_with("match"), "{m}");
    }
    assert_eq!(verdicts(&w), vec!["EVAL_ERROR", "FALSE", "NULL"]);
    // enablePropertyFilter=false: CHECK_CLIENT_CONFIG makes start() throw.
    assert_eq!(r["consumers"]["SqlConsumerOff"]["running"], false);
    assert!(r["consumers"]["SqlConsumerOff"]["startError"].as_str().unwrap().contains("enablePropertyFilter=false"));
    assert!(w.log().entries().any(|e| matches!(&e.kind, Event::StartFailed { client, .. } if &**client == "SqlConsumerOff")));
    let reasons: Vec<&str> = r["unconsumed"].as_array().unwrap().iter().map(|u| u["reason"].as_str().unwrap()).collect();
    assert!(reasons.iter().any(|x| x.contains("evaluated to NULL")));
    assert!(reasons.iter().any(|x| x.contains("evaluated to EVAL_ERROR")));
    assert!(reasons.iter().any(|x| x.contains("failed to start")));
}

#[test]
fn heartbeat_cost_preset_compares_the_two_registry_designs() {
    let w = run(by_file("filter-manager-heartbeat-cost.json").unwrap().text);
    let (a, b) = (&w.brokers[0], &w.brokers[1]);
    assert_eq!(a.filter_manager.design(), IndexDesign::TopicScan);
    assert_eq!(b.filter_manager.design(), IndexDesign::GroupIndex);
    let touched =
        |samples: &[mqviz_rocketmq::broker::FilterCostSample]| samples.iter().map(|s| s.cost.entries_touched).sum::<u64>();
    assert!(!a.filter_costs.is_empty() && !b.filter_costs.is_empty());
    assert!(
        touched(&a.filter_costs) > 2 * touched(&b.filter_costs),
        "scan {} vs index {}",
        touched(&a.filter_costs),
        touched(&b.filter_costs)
    );
    // Topics that exist only on broker-a are not registered by the group index on broker-b.
    assert!(b.filter_manager.entries().all(|d| b.topics.contains_key(&d.topic)));
    assert!(a.filter_manager.entries().count() > b.filter_manager.entries().count());
    b.filter_manager.check_index().unwrap();
}

#[test]
fn bloom_bitmaps_precheck_before_evaluation() {
    let text = json!({
        "format": "mqviz-scenario/1", "until": 60000,
        "brokers": [{"name": "broker-a", "enablePropertyFilter": true, "enableCalcFilterBitMap": true, "filterIndex": "groupIndex"}],
        "topics": [{"name": "T", "queues": 1}],
        "producers": [{"id": "p", "sends": [
            {"at": 5000, "topic": "T", "tag": "A", "properties": {"a": "10"}, "body": "yes {i}", "count": 3},
            {"at": 6000, "topic": "T", "tag": "A", "properties": {"a": "1"}, "body": "no {i}", "count": 3}]}],
        "groups": [{"name": "g", "consumers": [{"clientId": "c", "subscriptions": {"T": {"type": "SQL92", "expression": "a > 5"}}}]}]
    })
    .to_string();
    let w = run(&text);
    assert_eq!(w.brokers[0].bitmaps.len(), 6, "a bitmap per dispatched message");
    let r = report_json(&w);
    let bodies: Vec<&str> =
        r["consumers"]["c"]["consumed"].as_array().unwrap().iter().map(|m| m["body"].as_str().unwrap()).collect();
    assert_eq!(bodies, vec!["yes 0", "yes 1", "yes 2"]);
    // With only one group, non-matching messages have an empty bitmap: the pre-check drops them.
    assert_eq!(verdicts(&w), vec!["BLOOM_MISS"]);
}

#[test]
fn sql92_version_switch_changes_contains() {
    let mk = |version: &str| {
        json!({
            "format": "mqviz-scenario/1", "until": 30000,
            "brokers": [{"name": "broker-a", "enablePropertyFilter": true, "sql92Version": version}],
            "topics": [{"name": "T", "queues": 1}],
            "producers": [{"id": "p", "sends": [{"at": 5000, "topic": "T", "properties": {"a": "xyz"}, "body": "m{i}", "count": 2}]}],
            "groups": [{"name": "g", "consumers": [{"clientId": "c", "subscriptions": {"T": {"type": "SQL92", "expression": "a CONTAINS 'y'"}}}]}]
        })
        .to_string()
    };
    let consumed = |w: &World| w.consumers[0].stats.consumed;
    assert_eq!(consumed(&run(&mk("5"))), 2);
    // 4.9.x: CONTAINS is an identifier, so the expression is the bare property `a`, never TRUE.
    assert_eq!(consumed(&run(&mk("4.9"))), 0);
}
