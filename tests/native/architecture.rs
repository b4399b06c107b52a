//! Architecture invariants that grep can check (ARCHITECTURE.md, "Invariants").

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, recurse: bool, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            if recurse {
                rust_files(&p, true, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Each line of `files` that `offends(file, line)`, as `path:line: text`. With `code_only`, a
/// file is read up to its first `#[cfg(test)]`: unit tests run natively with everything and may
/// use what the page must not.
fn offending_lines(files: &[PathBuf], code_only: bool, offends: impl Fn(&Path, &str) -> bool) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        let code = if code_only { text.split("#[cfg(test)]").next().unwrap_or("") } else { &text };
        for (n, line) in code.lines().enumerate() {
            if offends(f, line) {
                out.push(format!("{}:{}: {}", f.strip_prefix(root).unwrap().display(), n + 1, line.trim()));
            }
        }
    }
    out
}

const MODELS: [&str; 3] = ["rocketmq", "kafka", "pulsar"];

/// The shared UI (everything in `src/ui/` outside `src/ui/<model>/`), the history and the links
/// read models only through `sim::model`: they name no model's core path.
#[test]
fn shared_code_names_no_broker_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/ui"), false, &mut files);
    files.push(root.join("src/sim/history.rs"));
    files.push(root.join("src/sim/link.rs"));
    files.push(root.join("src/sim/model/view.rs"));
    rust_files(&root.join("src/sim/scenario"), true, &mut files);
    let offences = offending_lines(&files, false, |_, line| MODELS.iter().any(|m| line.contains(&format!("sim::{m}"))));
    assert!(offences.is_empty(), "shared code names a model; go through sim::model instead:\n{}", offences.join("\n"));
}

/// `src/sim` is pure: no UI crates and no wall clock.
#[test]
fn the_core_is_pure() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/sim"), true, &mut files);
    let banned = ["leptos", "web_sys", "wasm_bindgen", "plotters", "std::time::Instant", "std::time::SystemTime", "Instant::now"];
    let offences =
        offending_lines(&files, false, |_, line| !line.trim_start().starts_with("//") && banned.iter().any(|b| line.contains(b)));
    assert!(offences.is_empty(), "the core must stay pure:\n{}", offences.join("\n"));
}

/// The page builds runs only after `ui::models::when_ready`, with the builders it has: the core's
/// loaders name every model, so one call from the UI would put Kafka and Pulsar back into the
/// page's first download (and build a run whose code may not have arrived).
#[test]
fn the_page_builds_runs_only_through_its_parts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/ui"), true, &mut files);
    let loaders = ["model::parse", "model::load(", "model::load_value(", "model::run(", "model::builder(", "model::build_"];
    let offences = offending_lines(&files, true, |f, line| {
        let allowed = line.contains("model::build_") && f.ends_with("ui/models.rs");
        loaders.iter().any(|l| line.contains(l)) && !allowed
    });
    assert!(offences.is_empty(), "the page builds a run around ui::models:\n{}", offences.join("\n"));
}

/// The page takes preset texts only from `ui::presets`: `PRESETS`, `by_file` and the tour list
/// carry every preset's text, so naming them would compile every text into the page's first
/// download, where the release page has only the default preset's.
#[test]
fn the_page_takes_preset_texts_only_from_ui_presets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/ui"), true, &mut files);
    let offences = offending_lines(&files, true, |f, line| {
        !f.ends_with("ui/presets.rs")
            && ["PRESETS", "by_file(", "TOURS", "for_preset(", "text_of("].iter().any(|t| line.contains(t))
    });
    assert!(offences.is_empty(), "the page names a list of preset texts:\n{}", offences.join("\n"));
}

/// The page reads a link's packed fields only with the unpacker its split point gives
/// (`ui/url.rs`): `parse_fragment` or `unpack` named anywhere else would put the inflater back
/// into the first download.
#[test]
fn the_page_unpacks_links_only_through_its_split_point() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/ui"), true, &mut files);
    let offences = offending_lines(&files, true, |f, line| {
        let split_point = f.ends_with("ui/url.rs") && line.trim() == "Ok(link::unpack)";
        line.contains("parse_fragment(") || (line.contains("unpack") && line.contains("link::") && !split_point)
    });
    assert!(offences.is_empty(), "the page reads packed links around ui/url.rs:\n{}", offences.join("\n"));
}
