//! The preset scenarios as files (`static/scenarios/` at the repository's root), for the model
//! crates' own tests. The compiled-in catalogue is `mqviz_app::presets`, which a model crate
//! cannot name: the app depends on the models, not the other way round.

use mqviz_engine::sort::StableSort;
use std::path::PathBuf;

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../static/scenarios")
}

/// The text of the preset `file` (for example `"kafka-eager-join.json"`).
///
/// # Panics
/// When the file cannot be read: a test that names a preset which does not exist is wrong.
pub fn text(file: &str) -> String {
    let path = scenarios_dir().join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every preset whose `broker` is `broker`, as (file name, text), in file-name order.
pub fn of_broker(broker: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(scenarios_dir())
        .expect("static/scenarios is readable")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = name.ends_with(".json").then(|| std::fs::read_to_string(e.path()).ok()).flatten()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            (mqviz_engine::scenario::broker_name(&v) == broker).then_some((name, text))
        })
        .collect();
    out.stable_sort();
    out
}
