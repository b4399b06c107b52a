use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::filterapi::build;
use mqviz_engine::SplitMix64;

const H24: u64 = FILTER_DATA_CLEAN_TIME_SPAN_MS;

fn sql(topic: &str, expr: &str, version: u64) -> SubscriptionData {
    build(topic, Some(expr), Some("SQL92"), version).unwrap()
}

fn tag(topic: &str, expr: &str, version: u64) -> SubscriptionData {
    build(topic, Some(expr), None, version).unwrap()
}

fn typed(topic: &str, expr: &str, t: &str, version: u64) -> SubscriptionData {
    build(topic, Some(expr), Some(t), version).unwrap()
}

fn all(_: &str) -> bool {
    true
}

fn scan() -> ConsumerFilterManager {
    ConsumerFilterManager::with_design(IndexDesign::TopicScan)
}

fn gidx() -> ConsumerFilterManager {
    ConsumerFilterManager::with_design(IndexDesign::GroupIndex)
}

fn gidx_bitmap() -> ConsumerFilterManager {
    let c = FilterManagerConfig { enable_calc_filter_bitmap: true, ..FilterManagerConfig::with_design(IndexDesign::GroupIndex) };
    ConsumerFilterManager::new(c).unwrap()
}

fn designs() -> [ConsumerFilterManager; 3] {
    [scan(), gidx(), gidx_bitmap()]
}

fn one(m: &mut ConsumerFilterManager, s: SubscriptionData, now: u64) -> RegisterOutcome {
    let (o, _) = m.register_topic(&s.topic, "G", &s.sub_string, &s.expression_type, s.sub_version, now, &all);
    m.check_index().unwrap();
    o
}

#[test]
fn new_entry_compiles_and_stores() {
    for mut m in designs() {
        let c = m.register("G", &[sql("T", "a > 5", 10)], 1000, &all);
        assert_eq!((c.registered, c.compiled, c.subscriptions), (1, 1, 1));
        let d = m.get("T", "G").unwrap();
        assert_eq!((d.born_time, d.dead_time, d.client_version), (1000, 0, 10));
        assert!(!d.is_dead());
        assert_eq!(d.compiled.as_ref().unwrap().source(), "a > 5");
        assert_eq!(d.expression_type, ExpressionType::Other("SQL92".into()));
        let want_bloom = m.design() == IndexDesign::TopicScan || m.config().enable_calc_filter_bitmap;
        assert_eq!(d.bloom, want_bloom.then(|| m.bloom_filter().generate("G#T")), "{:?}", m.config());
        assert_eq!(c.bloom_generated, u64::from(want_bloom));
        m.check_index().unwrap();
    }
}

#[test]
fn new_entry_that_does_not_compile_is_not_stored() {
    for mut m in designs() {
        assert_eq!(one(&mut m, sql("T", "a >", 1), 1000), RegisterOutcome::CompileError);
        assert!(m.get("T", "G").is_none());
        assert!(m.get_topic("T").is_empty());
        // Only the SQL92 filter exists: any other non-TAG type has no compiler.
        assert_eq!(one(&mut m, typed("U", "a > 5", "FOO", 1), 1000), RegisterOutcome::CompileError);
        assert_eq!(m.entry_count(), 0);
        // TopicScan creates the topic maps before compiling (upstream putIfAbsent); clean drops them.
        let maps = if m.design() == IndexDesign::TopicScan { 2 } else { 0 };
        assert_eq!(m.by_topic().len(), maps);
        m.clean(1000);
        assert!(m.by_topic().is_empty());
    }
}

#[test]
fn tag_subscriptions_and_empty_expressions_are_skipped() {
    for mut m in designs() {
        assert_eq!(one(&mut m, tag("T", "TagA || TagB", 1), 1000), RegisterOutcome::SkippedTag);
        assert_eq!(one(&mut m, tag("T", "*", 1), 1000), RegisterOutcome::SkippedTag);
        let mut empty = sql("T", "a > 5", 1);
        empty.sub_string = "".into();
        assert_eq!(one(&mut m, empty, 1000), RegisterOutcome::SkippedEmpty);
        assert_eq!(m.entry_count(), 0);
        assert!(m.by_topic().is_empty(), "nothing created before the type/empty checks");
        assert!(!RegisterOutcome::SkippedTag.upstream_result());
    }
}

#[test]
fn older_or_equal_version_is_ignored_but_equal_re_alives_a_dead_entry() {
    for mut m in designs() {
        assert_eq!(one(&mut m, sql("T", "a > 5", 10), 1000), RegisterOutcome::Registered);
        // Older, changed: ignored (upstream only logs "maybe info changed").
        assert_eq!(one(&mut m, sql("T", "b = 1", 9), 2000), RegisterOutcome::Ignored);
        // Equal, changed, alive: ignored.
        assert_eq!(one(&mut m, sql("T", "b = 1", 10), 2000), RegisterOutcome::Ignored);
        assert_eq!(m.get("T", "G").unwrap().expression, "a > 5");
        m.unregister("G", 3000);
        assert!(m.get("T", "G").unwrap().is_dead());
        // Older on a dead entry: still ignored, still dead.
        assert_eq!(one(&mut m, sql("T", "a > 5", 9), 4000), RegisterOutcome::Ignored);
        assert_eq!(m.get("T", "G").unwrap().dead_time, 3000);
        // Equal on a dead entry (even with a changed expression): re-alived, nothing else changes.
        assert_eq!(one(&mut m, sql("T", "b = 1", 10), 5000), RegisterOutcome::ReAlived);
        let d = m.get("T", "G").unwrap();
        assert_eq!((d.dead_time, d.born_time, d.expression.as_str()), (0, 1000, "a > 5"));
        assert!(!d.is_dead());
    }
}

#[test]
fn newer_changed_is_recompiled_and_replaced() {
    for mut m in designs() {
        one(&mut m, sql("T", "a > 5", 10), 1000);
        m.unregister("G", 2000);
        assert_eq!(one(&mut m, sql("T", "b = 'x'", 11), 5000), RegisterOutcome::Replaced);
        let d = m.get("T", "G").unwrap();
        assert_eq!((d.born_time, d.dead_time, d.client_version), (5000, 0, 11), "a new entry");
        assert_eq!(d.compiled.as_ref().unwrap().source(), "b = 'x'");
        assert!(RegisterOutcome::Replaced.upstream_result());
    }
}

#[test]
fn newer_changed_that_does_not_compile_removes_the_old_entry() {
    for mut m in designs() {
        one(&mut m, sql("T", "a > 5", 10), 1000);
        assert_eq!(one(&mut m, sql("T", "a >", 11), 2000), RegisterOutcome::RemovedOnCompileError);
        assert!(m.get("T", "G").is_none());
        assert!(m.group_index().is_empty());
        // The next heartbeat with the same broken expression is a new, failing registration.
        assert_eq!(one(&mut m, sql("T", "a >", 11), 3000), RegisterOutcome::CompileError);
    }
}

#[test]
fn newer_unchanged_bumps_the_version_and_re_alives() {
    for mut m in designs() {
        one(&mut m, sql("T", "a > 5", 10), 1000);
        m.unregister("G", 2000);
        assert_eq!(one(&mut m, sql("T", "a > 5", 12), 3000), RegisterOutcome::Bumped);
        let d = m.get("T", "G").unwrap();
        assert_eq!((d.client_version, d.born_time, d.dead_time), (12, 1000, 0), "same entry, born time kept");
        assert!(!d.is_dead());
    }
}

#[test]
fn changed_bloom_data_counts_as_a_change() {
    // A TopicScan file (bloom data everywhere) loaded by a GroupIndex broker with bitmaps off:
    // the next newer heartbeat sees old bloom != none and rebuilds the entry.
    let mut s = scan();
    s.register("G", &[sql("T", "a > 5", 10)], 1000, &all);
    let mut g =
        ConsumerFilterManager::from_json_with(&s.to_json(), FilterManagerConfig::with_design(IndexDesign::GroupIndex)).unwrap();
    assert!(g.get("T", "G").unwrap().bloom.is_some());
    assert_eq!(one(&mut g, sql("T", "a > 5", 11), 2000), RegisterOutcome::Replaced);
    assert_eq!(g.get("T", "G").unwrap().bloom, None);
    assert_eq!(g.get("T", "G").unwrap().born_time, 2000);
}

#[test]
fn topics_that_left_the_sub_list_are_marked_dead() {
    for mut m in designs() {
        m.register("G", &[sql("T1", "a > 5", 1), sql("T2", "a > 5", 1)], 1000, &all);
        m.register("H", &[sql("T2", "a > 5", 1)], 1000, &all);
        let c = m.register("G", &[sql("T1", "a > 5", 1)], 2000, &all);
        assert_eq!((c.marked_dead, c.ignored), (1, 1));
        assert_eq!(m.get("T2", "G").unwrap().dead_time, 2000);
        assert!(!m.get("T1", "G").unwrap().is_dead());
        assert!(!m.get("T2", "H").unwrap().is_dead(), "other groups are untouched");
        // Already dead: the death time is kept.
        let c = m.register("G", &[sql("T1", "a > 5", 1)], 3000, &all);
        assert_eq!(c.marked_dead, 0);
        assert_eq!(m.get("T2", "G").unwrap().dead_time, 2000);
        // An empty heartbeat kills everything of the group.
        m.register("G", &[], 4000, &all);
        assert!(m.get("T1", "G").unwrap().is_dead());
        m.check_index().unwrap();
    }
}

#[test]
fn a_topic_switched_to_tag_keeps_its_sql_entry_alive() {
    // Upstream's liveness check compares topics of the whole subList, TAG subscriptions included.
    for mut m in designs() {
        m.register("G", &[sql("T", "a > 5", 1)], 1000, &all);
        let c = m.register("G", &[tag("T", "TagA", 2)], 2000, &all);
        assert_eq!((c.skipped_tag, c.marked_dead), (1, 0));
        let d = m.get("T", "G").unwrap();
        assert!(!d.is_dead());
        assert_eq!(d.expression, "a > 5");
    }
}

#[test]
fn unregister_marks_every_entry_dead_and_get_still_returns_them() {
    for mut m in designs() {
        m.register("G", &[sql("T1", "a > 5", 1), sql("T2", "b = 1", 1)], 1000, &all);
        m.register("G", &[sql("T1", "a > 5", 1)], 1500, &all);
        m.register("H", &[sql("T1", "a > 5", 1)], 1000, &all);
        let c = m.unregister("G", 2000);
        assert_eq!(c.marked_dead, 1);
        let (t1, t2) = (m.get("T1", "G").unwrap(), m.get("T2", "G").unwrap());
        assert!(t1.is_dead() && t2.is_dead());
        assert_eq!((t1.dead_time, t2.dead_time), (2000, 1500));
        assert!(!m.get("T1", "H").unwrap().is_dead());
        assert_eq!(m.get_by_group("G").len(), 2);
        assert_eq!(m.get_topic("T1").len(), 2);
        match m.design() {
            IndexDesign::TopicScan => assert_eq!(c.topics_scanned, 2),
            IndexDesign::GroupIndex => assert_eq!(c.topics_scanned, 2),
        }
        assert_eq!(m.unregister("nobody", 2000).marked_dead, 0);
    }
}

#[test]
fn clean_removes_entries_dead_for_24_hours() {
    for mut m in designs() {
        m.register("G", &[sql("T1", "a > 5", 1), sql("T2", "b = 1", 1)], 1000, &all);
        m.register("H", &[sql("T1", "a > 5", 1)], 1000, &all);
        m.register("G", &[sql("T1", "a > 5", 1)], 2000, &all); // T2/G dead at 2000
        assert_eq!(m.clean(2000 + H24 - 1), 0);
        assert!(m.get("T2", "G").is_some());
        assert_eq!(m.how_many_alive(), 2);
        assert_eq!(m.clean(2000 + H24), 1, "howLongAfterDeath >= span");
        assert!(m.get("T2", "G").is_none());
        assert!(!m.by_topic().contains_key("T2"), "empty topic maps go too");
        assert_eq!(m.clean(100 * H24), 0, "alive entries are never cleaned");
        m.check_index().unwrap();
        if m.design() == IndexDesign::GroupIndex {
            assert_eq!(m.group_index()["G"].keys().collect::<Vec<_>>(), ["T1"]);
        }
        m.unregister("G", 5 * H24);
        m.unregister("H", 5 * H24);
        assert_eq!(m.clean(6 * H24), 2);
        assert!(m.by_topic().is_empty() && m.group_index().is_empty());
    }
}

impl ConsumerFilterManager {
    fn how_many_alive(&self) -> usize {
        self.entries().filter(|d| !d.is_dead()).count()
    }
}

#[test]
fn an_entry_born_at_time_zero_is_dead() {
    // isDead = deadTime >= bornTime: 0 >= 0. Upstream never sees time 0 (epoch millis).
    let mut m = scan();
    m.register("G", &[sql("T", "a > 5", 1)], 0, &all);
    let d = m.get("T", "G").unwrap();
    assert!(d.is_dead());
    assert_eq!(one(&mut m, sql("T", "a > 5", 1), 10), RegisterOutcome::ReAlived);
    assert!(m.get("T", "G").unwrap().is_dead(), "re-aliving sets deadTime = 0, still >= bornTime");
    assert_eq!(m.clean(H24), 1, "and it is cleaned 24 h after time 0");
    let d = ConsumerFilterData { born_time: 5, ..m.clone_entry_for_test() };
    assert!(!d.is_dead() && d.how_long_after_death(100).is_none());
    assert!(d.is_msg_in_live(6) && !d.is_msg_in_live(5));
}

impl ConsumerFilterManager {
    fn clone_entry_for_test(&self) -> ConsumerFilterData {
        ConsumerFilterData {
            group: "G".into(),
            topic: "T".into(),
            expression: "a > 5".into(),
            expression_type: ExpressionType::Other("SQL92".into()),
            compiled: None,
            bloom: None,
            client_version: 1,
            born_time: 0,
            dead_time: 0,
        }
    }
}

#[test]
fn group_index_checks_topic_existence_and_bloom_only_with_bitmaps() {
    let exists = |t: &str| t != "Gone";
    let subs = [sql("T", "a > 5", 1), sql("Gone", "a > 5", 1)];
    let mut s = scan();
    let c = s.register("G", &subs, 1000, &exists);
    assert_eq!((c.registered, c.skipped_missing_topic, c.topic_checks, c.bloom_generated), (2, 0, 0, 2));
    assert!(s.get("Gone", "G").is_some(), "TopicScan registers topics the broker does not have");
    for mut g in [gidx(), gidx_bitmap()] {
        let c = g.register("G", &subs, 1000, &exists);
        assert_eq!((c.registered, c.skipped_missing_topic, c.topic_checks), (1, 1, 2));
        assert!(g.get("Gone", "G").is_none());
        assert!(!g.by_topic().contains_key("Gone"));
        assert_eq!(c.bloom_generated, u64::from(g.config().enable_calc_filter_bitmap));
        assert_eq!(g.get("T", "G").unwrap().bloom.is_some(), g.config().enable_calc_filter_bitmap);
    }
}

#[test]
fn heartbeat_cost_scan_visits_everything_group_index_only_its_own() {
    let mut s = scan();
    let mut g = gidx();
    for gi in 0..10 {
        let subs: Vec<_> = (0..20).map(|t| sql(&format!("T{}", (gi * 7 + t) % 50), "a > 5", 1)).collect();
        s.register(&format!("G{gi}"), &subs, 1000, &all);
        g.register(&format!("G{gi}"), &subs, 1000, &all);
    }
    assert_eq!(s.entry_count(), 200);
    let subs: Vec<_> = (0..3).map(|t| sql(&format!("T{t}"), "a > 5", 1)).collect();
    let cs = s.register("G0", &subs, 2000, &all);
    let cg = g.register("G0", &subs, 2000, &all);
    let topics = s.by_topic().len() as u64;
    assert_eq!((cs.topics_scanned, cs.entries_touched), (topics, 3 + 200));
    assert_eq!((cg.topics_scanned, cg.entries_touched), (20, 3 + 20));
    assert_eq!(cs.marked_dead, 17);
    assert_eq!((cs.marked_dead, cs.ignored), (cg.marked_dead, cg.ignored));
    assert_eq!(
        cs.to_string(),
        format!("subs=3 touched=203 topicsScanned={topics} bloom=3 ignored=3 markedDead=17"),
        "stable one-line rendering"
    );
    assert_eq!(cg.to_string(), "subs=3 touched=23 topicsScanned=20 topicChecks=3 ignored=3 markedDead=17");
    let sg: Vec<_> = s.get_by_group("G0").into_iter().cloned().collect();
    let gg: Vec<_> = g.get_by_group("G0").into_iter().map(|d| ConsumerFilterData { bloom: None, ..d.clone() }).collect();
    let sg: Vec<_> = sg.into_iter().map(|d| ConsumerFilterData { bloom: None, ..d }).collect();
    assert_eq!(sg, gg);
    let mut total = RegisterCost::default();
    total += cs;
    total += cg;
    assert_eq!(total.marked_dead, 34);
}

// ---- persistence ----

fn populated(design: IndexDesign, bitmap: bool) -> ConsumerFilterManager {
    let c = FilterManagerConfig { enable_calc_filter_bitmap: bitmap, ..FilterManagerConfig::with_design(design) };
    let mut m = ConsumerFilterManager::new(c).unwrap();
    m.register("G", &[sql("T1", "a > 5 AND region = 'eu'", 3), sql("%RETRY%G", "b = 1", 3)], 1000, &all);
    m.register("H", &[sql("T1", "c IN ('p')", 4)], 1200, &all);
    m.register("G", &[sql("T1", "a > 5 AND region = 'eu'", 3)], 2000, &all);
    m
}

#[test]
fn json_round_trip_restores_state_and_rebuilds_the_group_index() {
    for (design, bitmap) in [(IndexDesign::TopicScan, false), (IndexDesign::GroupIndex, false), (IndexDesign::GroupIndex, true)] {
        let m = populated(design, bitmap);
        let text = m.to_json();
        let r = ConsumerFilterManager::from_json(&text).unwrap();
        assert_eq!(r.config(), m.config());
        assert_eq!(r.by_topic(), m.by_topic());
        assert_eq!(r.group_index(), m.group_index());
        r.check_index().unwrap();
        assert_eq!(r.to_json(), text, "byte-identical re-encoding");
        if design == IndexDesign::GroupIndex {
            assert_eq!(r.group_index()["G"].len(), 2);
        }
        // Identical behaviour afterwards.
        let (mut a, mut b) = (m.clone(), r);
        for (i, subs) in [vec![sql("T1", "a > 6", 5)], vec![], vec![sql("T2", "x = 'y'", 1)]].iter().enumerate() {
            let now = 3000 + i as u64 * 1000;
            assert_eq!(a.register("G", subs, now, &all), b.register("G", subs, now, &all));
            assert_eq!(a.by_topic(), b.by_topic());
            assert_eq!(a.group_index(), b.group_index());
        }
    }
}

#[test]
fn json_has_the_upstream_shape() {
    let m = populated(IndexDesign::TopicScan, false);
    let v: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
    let e = &v["filterDataByTopic"]["T1"]["groupFilterData"]["G"];
    assert_eq!(v["filterDataByTopic"]["T1"]["topic"], "T1");
    assert_eq!(e["consumerGroup"], "G");
    assert_eq!(e["expressionType"], "SQL92");
    assert_eq!(e["bornTime"], 1000);
    assert_eq!(e["clientVersion"], 3);
    assert_eq!(e["bloomFilterData"]["bitNum"], 112);
    assert_eq!(e["bloomFilterData"]["bitPos"].as_array().unwrap().len(), 3);
    assert_eq!(v["filterDataByTopic"]["%RETRY%G"]["groupFilterData"]["G"]["deadTime"], 2000);
    // A file without `config` loads with broker defaults, and into any design.
    let bare = serde_json::json!({"filterDataByTopic": v["filterDataByTopic"].clone()}).to_string();
    let r = ConsumerFilterManager::from_json(&bare).unwrap();
    assert_eq!(r.config(), &FilterManagerConfig::default());
    let g = ConsumerFilterManager::from_json_with(&bare, FilterManagerConfig::with_design(IndexDesign::GroupIndex)).unwrap();
    assert_eq!(g.by_topic(), m.by_topic());
    assert_eq!(g.group_index()["G"].keys().collect::<Vec<_>>(), ["%RETRY%G", "T1"]);
    g.check_index().unwrap();
}

#[test]
fn restore_keeps_entries_whose_expression_no_longer_compiles() {
    let text = r#"{"filterDataByTopic": {"T": {"topic": "T", "groupFilterData": {"G": {"consumerGroup": "G",
        "topic": "T", "expression": "a >", "expressionType": "SQL92", "bornTime": 5, "deadTime": 0,
        "clientVersion": 1, "bloomFilterData": null}}}}, "config": {"sql92Version": "4.9", "indexDesign": "groupIndex"}}"#;
    let m = ConsumerFilterManager::from_json(text).unwrap();
    let d = m.get("T", "G").unwrap();
    assert!(d.compiled.is_none());
    assert_eq!(m.group_index()["G"].len(), 1);
}

#[test]
fn bad_json_is_an_error_with_a_path() {
    let cases = [
        ("{", "invalid JSON"),
        ("[]", "$: expected an object"),
        (r#"{"filterDataByTopic": {}, "extra": 1}"#, "$.extra: unknown field"),
        (r#"{"filterDataByTopic": {"T": {"topic": "U"}}}"#, "$.filterDataByTopic.T.topic: \"U\" does not match"),
        (
            r#"{"filterDataByTopic": {"T": {"groupFilterData": {"G": {"consumerGroup": "G"}}}}}"#,
            "$.filterDataByTopic.T.groupFilterData.G.topic: required",
        ),
        (
            r#"{"filterDataByTopic": {"T": {"groupFilterData": {"G": {"consumerGroup": "G", "topic": "T", "expression": "a > 1",
              "expressionType": "SQL92", "bornTime": -1, "clientVersion": 1}}}}}"#,
            "bornTime: expected a whole number",
        ),
        (
            r#"{"filterDataByTopic": {"T": {"groupFilterData": {"G": {"consumerGroup": "G", "topic": "T", "expression": "a > 1",
              "expressionType": "SQL92", "bornTime": 1, "clientVersion": 1, "bloomFilterData": {"bitPos": [1, "x"], "bitNum": 112}}}}}}"#,
            "bloomFilterData.bitPos[1]: expected a 32-bit integer",
        ),
        (r#"{"config": {"indexDesign": "hash"}}"#, "$.config.indexDesign: unknown design"),
        (r#"{"config": {"maxErrorRateOfBloomFilter": 100}}"#, "$.config.maxErrorRateOfBloomFilter: 100 is out of range"),
        (r#"{"filterDataByTopic": {"a b": 3}}"#, "$.filterDataByTopic[\"a b\"]: expected an object"),
    ];
    for (text, want) in cases {
        let err = ConsumerFilterManager::from_json(text).err().unwrap_or_else(|| panic!("{text} should fail"));
        assert!(err.contains(want), "{text}: {err}");
    }
    assert!(ConsumerFilterManager::from_json("{}").unwrap().by_topic().is_empty());
}

#[test]
fn decode_declares_every_live_entry_dead_and_drops_everything_on_a_bloom_change() {
    let m = populated(IndexDesign::TopicScan, false);
    let text = m.to_json();
    let (r, changed) = ConsumerFilterManager::decode(&text, FilterManagerConfig::default(), 100_000).unwrap();
    assert!(!changed);
    assert_eq!(r.get("T1", "G").unwrap().dead_time, 70_000, "now - 30 s");
    assert_eq!(r.get("%RETRY%G", "G").unwrap().dead_time, 2000, "already dead: kept");
    let (r, _) = ConsumerFilterManager::decode(&text, FilterManagerConfig::default(), 10_000).unwrap();
    assert_eq!(r.get("T1", "H").unwrap().dead_time, 1200, "never before its born time");
    assert!(r.entries().all(ConsumerFilterData::is_dead));
    // The broker's bloom filter is now sized differently: nothing is loaded.
    let bigger = FilterManagerConfig { expect_consumer_num_use_filter: 64, ..FilterManagerConfig::default() };
    let (r, changed) = ConsumerFilterManager::decode(&text, bigger, 100_000).unwrap();
    assert!(changed && r.entry_count() == 0);
    // Entries without bloom data (GroupIndex, bitmaps off): TopicScan rejects, GroupIndex accepts.
    let text = populated(IndexDesign::GroupIndex, false).to_json();
    assert!(ConsumerFilterManager::decode(&text, FilterManagerConfig::default(), 100_000).unwrap().1);
    let (r, changed) =
        ConsumerFilterManager::decode(&text, FilterManagerConfig::with_design(IndexDesign::GroupIndex), 100_000).unwrap();
    assert!(!changed);
    assert_eq!(r.entry_count(), 3);
    r.check_index().unwrap();
    // The next heartbeats re-alive (equal version) what is still subscribed.
    let mut r = r;
    r.register("G", &[sql("T1", "a > 5 AND region = 'eu'", 3)], 200_000, &all);
    assert!(!r.get("T1", "G").unwrap().is_dead());
    let mut enc = r.clone();
    let _ = enc.encode(200_000 + H24 + 100_000);
    assert_eq!(enc.entry_count(), 1, "encode cleans first");
}

// ---- both designs over random heartbeat sequences ----

type View = BTreeMap<(String, String), (String, String, u64, u64, u64, bool, Option<String>)>;

fn view(m: &ConsumerFilterManager, keep: &dyn Fn(&str) -> bool) -> View {
    m.entries()
        .filter(|d| keep(&d.topic))
        .map(|d| {
            (
                (d.topic.clone(), d.group.clone()),
                (
                    d.expression.clone(),
                    d.expression_type.name().to_string(),
                    d.client_version,
                    d.born_time,
                    d.dead_time,
                    d.is_dead(),
                    d.compiled.as_ref().map(|c| c.source().to_string()),
                ),
            )
        })
        .collect()
}

fn outcomes(c: &RegisterCost) -> [u64; 11] {
    [
        c.registered,
        c.compile_errors,
        c.ignored,
        c.re_alived,
        c.bumped,
        c.replaced,
        c.removed,
        c.marked_dead,
        c.skipped_tag,
        c.compiled,
        c.subscriptions,
    ]
}

#[test]
fn both_designs_agree_over_random_heartbeat_sequences() {
    const TOPICS: usize = 10;
    const EXPRS: [&str; 7] = ["a > 5", "b = 'x'", "a > 5 AND region = 'eu'", "a >", "0.0 = a", "c IN ('p', 'q')", "x IS NULL"];
    let existing: BTreeSet<String> = (0..7).map(|i| format!("T{i}")).collect();
    let exists = |t: &str| existing.contains(t);
    let mut totals = RegisterCost::default();
    for seed in 0..120u64 {
        let mut rng = SplitMix64::new(seed);
        let mut s = scan();
        let mut g = gidx();
        let mut gb = gidx_bitmap();
        let mut now = 1u64;
        for step in 0..250 {
            let group = format!("G{}", rng.index(4));
            match rng.index(10) {
                0 => {
                    let cs = s.unregister(&group, now);
                    let cg = g.unregister(&group, now);
                    let cb = gb.unregister(&group, now);
                    assert_eq!(cs.marked_dead, cb.marked_dead);
                    assert!(cg.marked_dead <= cs.marked_dead);
                }
                1 => {
                    let rs = s.clean(now);
                    let rb = gb.clean(now);
                    g.clean(now);
                    assert_eq!(rs, rb);
                }
                2 => now += H24 / 2 + rng.below(H24),
                _ => {
                    let mut topics: Vec<usize> = (0..TOPICS).collect();
                    let n = rng.index(5);
                    let mut subs = Vec::new();
                    for _ in 0..n {
                        let t = topics.remove(rng.index(topics.len()));
                        let topic = format!("T{t}");
                        let expr = EXPRS[rng.index(EXPRS.len())];
                        let version = rng.below(5);
                        subs.push(match rng.index(10) {
                            0 => tag(&topic, "TagA", version),
                            1 => typed(&topic, expr, "FOO", version),
                            _ => sql(&topic, expr, version),
                        });
                    }
                    let cs = s.register(&group, &subs, now, &exists);
                    let cg = g.register(&group, &subs, now, &exists);
                    let cb = gb.register(&group, &subs, now, &all);
                    // All topics existing and bitmaps on: the same decisions, only the cost differs.
                    assert_eq!(outcomes(&cs), outcomes(&cb), "seed {seed} step {step}");
                    assert_eq!(cs.skipped_missing_topic + cg.skipped_missing_topic, cg.skipped_missing_topic);
                    assert_eq!(cs.topics_scanned, s.by_topic().len() as u64);
                    assert!(cb.topics_scanned <= cs.topics_scanned);
                    totals += cs;
                }
            }
            now += rng.below(40_000);
            // Same filtering-relevant state, except that GroupIndex has no entries for missing topics.
            assert_eq!(view(&s, &exists), view(&g, &all), "seed {seed} step {step}");
            assert!(g.entries().all(|d| exists(&d.topic) && d.bloom.is_none()));
            // All topics existing and bitmaps on: identical entries (bloom data included).
            assert_eq!(s.entries().collect::<Vec<_>>(), gb.entries().collect::<Vec<_>>(), "seed {seed} step {step}");
            s.check_index().unwrap();
            g.check_index().unwrap();
            gb.check_index().unwrap();
            for m in [&s, &g, &gb] {
                for (topic, group) in [("T1", group.as_str()), ("T9", "G0")] {
                    let by_group: Vec<_> = m.get_by_group(group).into_iter().filter(|d| d.topic == topic).collect();
                    assert_eq!(by_group.first().copied(), m.get(topic, group));
                }
            }
            // Restoring mid-run changes nothing.
            if step % 50 == 49 {
                for m in [&mut s, &mut g, &mut gb] {
                    let r = ConsumerFilterManager::from_json(&m.to_json()).unwrap();
                    assert_eq!(r.by_topic(), m.by_topic());
                    assert_eq!(r.group_index(), m.group_index());
                    assert_eq!(r.config(), m.config());
                    *m = r;
                }
            }
        }
    }
    // The sequences exercised every rule.
    for (name, v) in [
        ("registered", totals.registered),
        ("compile_errors", totals.compile_errors),
        ("ignored", totals.ignored),
        ("re_alived", totals.re_alived),
        ("bumped", totals.bumped),
        ("replaced", totals.replaced),
        ("removed", totals.removed),
        ("marked_dead", totals.marked_dead),
        ("skipped_tag", totals.skipped_tag),
    ] {
        assert!(v > 20, "{name} exercised only {v} times");
    }
}

#[test]
fn check_index_detects_a_group_index_out_of_sync() {
    let mut m = populated(IndexDesign::GroupIndex, false);
    m.check_index().unwrap();
    m.by_group.get_mut("G").unwrap().get_mut("T1").unwrap().dead_time = 42;
    let err = m.check_index().unwrap_err();
    assert!(err.contains("group index differs"), "{err}");
    m.rebuild_group_index();
    m.check_index().unwrap();
    let mut s = populated(IndexDesign::TopicScan, false);
    s.by_group = m.by_group.clone();
    assert!(s.check_index().is_err(), "TopicScan keeps no group index");
}
