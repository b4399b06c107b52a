//! `mqviz bench filters`: the cost of one consumer heartbeat in the broker's
//! `ConsumerFilterManager` (apache/rocketmq issue #10713), TopicScan (upstream before PR #10714)
//! against GroupIndex (after), measured in one run so the ratio is comparable across machines.
//! Wall clock lives here, never in `sim/`.

use std::collections::HashSet;
use std::time::Instant;

use mqviz_rocketmq::filter_manager::{ConsumerFilterManager, IndexDesign, RegisterCost};
use mqviz_rocketmq::filterapi::{build, ExpressionType, SubscriptionData};

/// SQL92 groups that heartbeat.
const GROUPS: usize = 100;
/// Topics each heartbeating group subscribes in the "narrow" layout.
const TOPICS_PER_GROUP: usize = 5;
/// Filter entries per topic from other SQL92 groups in the "narrow" layout.
const OTHER_ENTRIES_PER_TOPIC: usize = 2;
/// Distinct other groups in the "narrow" layout.
const OTHER_GROUPS: usize = 1000;

/// How the registry is populated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// 100 groups × 5 topics heartbeat; every topic also carries filter data of 2 other SQL92
    /// groups (1,000 of them, not heartbeating during the measurement): many topics × groups.
    Narrow,
    /// Only the 100 groups: topic i belongs to group i % 100, so each group subscribes topics/100.
    Uniform,
}

struct Setup {
    /// The broker's topics (upstream `TopicConfigManager` is a hash map: point lookups only).
    topics: HashSet<String>,
    /// Each heartbeating group's subList.
    heartbeats: Vec<(String, Vec<SubscriptionData>)>,
    /// Other groups' filter data: (topic, group, expression).
    other: Vec<(String, String, String)>,
}

fn topic_name(i: usize) -> String {
    format!("Topic{i:06}")
}

fn setup(layout: Layout, n_topics: usize) -> Setup {
    let topics: HashSet<String> = (0..n_topics).map(topic_name).collect();
    let sub = |t: usize, g: usize| {
        build(&topic_name(t), Some(&format!("a > {} AND region = 'eu'", g % 10)), Some("SQL92"), 1)
            .expect("SQL92 subscriptions build")
    };
    let mut heartbeats = Vec::new();
    let mut other = Vec::new();
    match layout {
        Layout::Narrow => {
            for g in 0..GROUPS {
                // A handful of topics spread over the whole topic range.
                let subs = (0..TOPICS_PER_GROUP).map(|j| sub((g * 7919 + j * 104_729) % n_topics, g)).collect();
                heartbeats.push((format!("GID_SQL_{g:03}"), subs));
            }
            for t in 0..n_topics {
                for k in 0..OTHER_ENTRIES_PER_TOPIC {
                    let g = (t * 31 + k * 17) % OTHER_GROUPS;
                    other.push((topic_name(t), format!("GID_OTHER_{g:04}"), format!("b = 'v{}'", (t + k) % 7)));
                }
            }
        }
        Layout::Uniform => {
            for g in 0..GROUPS {
                let subs = (g..n_topics).step_by(GROUPS).map(|t| sub(t, g)).collect();
                heartbeats.push((format!("GID_SQL_{g:03}"), subs));
            }
        }
    }
    Setup { topics, heartbeats, other }
}

fn populate(design: IndexDesign, s: &Setup) -> ConsumerFilterManager {
    let mut m = ConsumerFilterManager::with_design(design);
    let exists = |t: &str| s.topics.contains(t);
    let sql = ExpressionType::Other("SQL92".to_string());
    for (topic, group, expr) in &s.other {
        m.register_topic(topic, group, expr, &sql, 1, 1000, &exists);
    }
    for (group, subs) in &s.heartbeats {
        m.register(group, subs, 1000, &exists);
    }
    m
}

struct Measured {
    micros_per_heartbeat: f64,
    touched_per_heartbeat: f64,
    entries: usize,
    topic_maps: usize,
    live: usize,
}

/// Steady-state heartbeats (same subList, same versions), cycling through the groups, for at
/// least `min_secs` and at least one full round.
fn measure(design: IndexDesign, s: &Setup, min_secs: f64) -> Measured {
    let mut m = populate(design, s);
    let exists = |t: &str| s.topics.contains(t);
    let mut now = 2000u64;
    let mut total = RegisterCost::default();
    let mut beats = 0u64;
    let start = Instant::now();
    loop {
        for (group, subs) in &s.heartbeats {
            now += 30_000 / GROUPS as u64;
            total += m.register(group, std::hint::black_box(subs), now, &exists);
            beats += 1;
        }
        if start.elapsed().as_secs_f64() >= min_secs {
            break;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(total.marked_dead + total.registered + total.replaced + total.removed, 0, "steady state");
    Measured {
        micros_per_heartbeat: secs * 1e6 / beats as f64,
        touched_per_heartbeat: total.entries_touched as f64 / beats as f64,
        entries: m.entry_count(),
        topic_maps: m.by_topic().len(),
        live: m.entries().filter(|d| !d.is_dead()).count(),
    }
}

fn table(layout: Layout, sizes: &[usize]) -> Vec<(usize, f64)> {
    println!(
        "{:>8} {:>9} {:>10} {:>16} {:>16} {:>8} {:>14} {:>14}",
        "topics", "entries", "topicMaps", "topicScan us/hb", "groupIndex us/hb", "ratio", "touched scan", "touched index"
    );
    let mut ratios = Vec::new();
    for &n in sizes {
        let s = setup(layout, n);
        let scan = measure(IndexDesign::TopicScan, &s, 0.4);
        let index = measure(IndexDesign::GroupIndex, &s, 0.4);
        assert_eq!((scan.entries, scan.live), (index.entries, index.live), "both designs hold the same filter data");
        let ratio = scan.micros_per_heartbeat / index.micros_per_heartbeat;
        println!(
            "{:>8} {:>9} {:>10} {:>16.2} {:>16.3} {:>7.0}x {:>14.0} {:>14.0}",
            n,
            scan.entries,
            scan.topic_maps,
            scan.micros_per_heartbeat,
            index.micros_per_heartbeat,
            ratio,
            scan.touched_per_heartbeat,
            index.touched_per_heartbeat
        );
        ratios.push((n, ratio));
    }
    ratios
}

/// Heartbeat registration, TopicScan vs GroupIndex, at 1,000 / 10,000 / 100,000 topics with 100
/// heartbeating SQL92 groups, in two registry layouts (see `Layout`).
pub fn bench_filter_manager() {
    let sizes = [1_000, 10_000, 100_000];
    println!(
        "filter manager heartbeat, narrow layout: {GROUPS} SQL92 groups x {TOPICS_PER_GROUP} topics heartbeat; every topic \
         also holds filter data of {OTHER_ENTRIES_PER_TOPIC} of {OTHER_GROUPS} other SQL92 groups"
    );
    let narrow = table(Layout::Narrow, &sizes);
    println!("filter manager heartbeat, uniform layout: only {GROUPS} SQL92 groups, each subscribing topics/{GROUPS} topics");
    let uniform = table(Layout::Uniform, &sizes);
    for (name, r) in [("narrow", &narrow), ("uniform", &uniform)] {
        if let Some((_, ratio)) = r.iter().find(|(n, _)| *n == 10_000) {
            println!("filter manager, {name} layout, 10,000 topics x {GROUPS} SQL92 groups: group index {ratio:.0}x faster per heartbeat");
        }
    }
}
