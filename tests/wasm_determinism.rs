//! Wasm half of the determinism check: runs the seed presets in headless Chromium and compares
//! their event-log digests with the same golden file the native test checks.
#![cfg(target_arch = "wasm32")]

use mqviz_app::presets::{by_file, PRESETS};
use mqviz_app::registry::{run, run_rocketmq};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const GOLDEN: &str = include_str!("../crates/app/tests/golden/digests.txt");

#[wasm_bindgen_test]
fn preset_digests_match_native_golden() {
    let mut lines = String::new();
    for p in PRESETS {
        let sim = run(p.text).expect("preset parses");
        lines.push_str(&format!("{} {:016x}\n", p.file, sim.digest()));
    }
    assert_eq!(lines, GOLDEN);
}

#[wasm_bindgen_test]
fn seed_outcome_in_the_browser() {
    let w = run_rocketmq(by_file("seed-same-topic-different-tags.json").unwrap().text).unwrap();
    let a = w.consumers.iter().find(|c| &*c.client_id == "ConsumerA").unwrap();
    let b = w.consumers.iter().find(|c| &*c.client_id == "ConsumerB").unwrap();
    assert_eq!(a.stats.consumed, 0);
    assert_eq!(b.stats.consumed, 6);
}
