//! Native half of the cross-platform determinism check: the event-log digests of the seed presets
//! must equal `tests/golden/digests.txt`, which the wasm test (tests/wasm_determinism.rs, headless
//! Chromium) checks too. Regenerate with `UPDATE_GOLDEN=1 cargo test --test native determinism_golden`.

use mqviz_app::presets::PRESETS;
use mqviz_app::registry::run;

#[test]
fn preset_digests_match_golden() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let mut lines = String::new();
    for p in PRESETS {
        let sim = run(p.text).unwrap();
        lines.push_str(&format!("{} {:016x}\n", p.file, sim.digest()));
    }
    let golden_path = format!("{dir}/tests/golden/digests.txt");
    if std::env::var("UPDATE_GOLDEN").is_ok() {
        std::fs::write(&golden_path, &lines).unwrap();
    }
    let golden = std::fs::read_to_string(&golden_path).unwrap();
    assert_eq!(lines, golden, "event logs changed; if intended, regenerate with UPDATE_GOLDEN=1");
}
