//! `model::track` over a real run (the generated RocketMQ load), so it runs in mqviz-sim.

use crate::registry::parse;
use mqviz_model::track::{DotKind, Tracker};

#[test]
fn the_bench_scenario_spawns_dots_and_series() {
    let mut sim = parse(&mqviz_rocketmq::scenario::load_scenario(240_000)).unwrap();
    let mut t = Tracker::default();
    let mut clock = 0.0;
    for step in 1..=50u64 {
        sim.run_until(1000 + step * 16);
        clock += 16.0;
        t.update(&*sim, 1, Some((clock, 1.0)));
    }
    let stored = t.dots.iter().filter(|d| d.kind == DotKind::Stored).count();
    let delivered = t.dots.iter().filter(|d| d.kind == DotKind::Delivered).count();
    assert!(stored > 100, "stored dots {stored}, delivered {delivered}, partitions {:?}", t.partitions);
    assert!(delivered > 100, "delivered dots {delivered}");
    assert!(t.backlog.iter().any(|s| s.iter().any(|&v| v > 0)), "some backlog: {:?}", t.partitions);
}
