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

/// The shared UI (everything in `src/ui/` outside `src/ui/<model>/`) and the parts of mqviz-app
/// that serve every model read models only through the seam (`mqviz_model`): they name no model's
/// crate. (The seam and the engine cannot name one at all: see `the_crate_graph_keeps_models_apart`.)
#[test]
fn shared_code_names_no_broker_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/ui"), false, &mut files);
    for f in ["history.rs", "link.rs", "moves.rs", "story.rs", "tour.rs"] {
        files.push(root.join("crates/app/src").join(f));
    }
    let offences = offending_lines(&files, true, |_, line| MODELS.iter().any(|m| line.contains(&format!("mqviz_{m}"))));
    assert!(offences.is_empty(), "shared code names a model; go through mqviz_model instead:\n{}", offences.join("\n"));
}

/// The mqviz crates each package of the core depends on, from its Cargo.toml.
fn mqviz_dependencies(krate: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("crates").join(krate).join("Cargo.toml")).unwrap();
    let mut out = Vec::new();
    let mut in_deps = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]");
        } else if in_deps && line.starts_with("mqviz-") {
            out.push(line.split([' ', '=']).next().unwrap().to_string());
        }
    }
    out
}

/// The graph of the core's crates: the engine names nothing of mqviz, the seam only the engine,
/// and each model only the engine and the seam, so no model can reach into another and the
/// engine cannot know any model. Only mqviz-app (and the CLI above it) names every model.
#[test]
fn the_crate_graph_keeps_models_apart() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates: Vec<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    assert_eq!(crates, ["app", "cli", "engine", "kafka", "model", "pulsar", "rocketmq"]);
    assert_eq!(mqviz_dependencies("engine"), Vec::<String>::new());
    assert_eq!(mqviz_dependencies("model"), ["mqviz-engine"]);
    for m in MODELS {
        assert_eq!(mqviz_dependencies(m), ["mqviz-engine", "mqviz-model"], "crates/{m}");
    }
    assert!(!mqviz_dependencies("app").contains(&"mqviz-cli".to_string()));
}

/// Every module is a file in its own crate's `src/`: no `#[path]` stitches folders together.
#[test]
fn modules_live_where_their_crate_is() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("crates"), true, &mut files);
    rust_files(&root.join("src"), true, &mut files);
    let offences = offending_lines(&files, false, |_, line| line.trim_start().starts_with("#[path"));
    assert!(offences.is_empty(), "#[path] found:\n{}", offences.join("\n"));
}

/// The core (every crate but the CLI, whose benchmarks read the clock) is pure: no UI crates and
/// no wall clock.
#[test]
fn the_core_is_pure() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for krate in ["engine", "model", "rocketmq", "kafka", "pulsar", "app"] {
        rust_files(&root.join("crates").join(krate), true, &mut files);
    }
    let banned = ["leptos", "web_sys", "wasm_bindgen", "plotters", "std::time::Instant", "std::time::SystemTime", "Instant::now"];
    let offences =
        offending_lines(&files, false, |_, line| !line.trim_start().starts_with("//") && banned.iter().any(|b| line.contains(b)));
    assert!(offences.is_empty(), "the core must stay pure:\n{}", offences.join("\n"));
}

/// The page builds runs only after `ui::parts::when_ready`, with the builders it has: the core's
/// loaders name every model, so one call from the UI would put Kafka and Pulsar back into the
/// page's first download (and build a run whose code may not have arrived).
#[test]
fn the_page_builds_runs_only_through_its_parts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/ui"), true, &mut files);
    let loaders = [
        "registry::parse",
        "registry::load(",
        "registry::load_value(",
        "registry::run(",
        "registry::builder(",
        "registry::build_",
    ];
    let offences = offending_lines(&files, true, |f, line| {
        let allowed = line.contains("registry::build_") && f.ends_with("ui/parts.rs");
        loaders.iter().any(|l| line.contains(l)) && !allowed
    });
    assert!(offences.is_empty(), "the page builds a run around ui::parts:\n{}", offences.join("\n"));
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

/// `{x:.2}`, `{:.1}`, `{:8.3}`: a float formatted by core (a precision in a format spec).
fn formats_a_float(line: &str) -> bool {
    line.match_indices('{').any(|(i, _)| {
        let spec = line[i + 1..].split('}').next().unwrap_or("");
        match spec.split_once(':') {
            Some((name, fmt)) => {
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && fmt.split_once('.').is_some_and(|(width, digits)| {
                        width.chars().all(|c| c.is_ascii_digit())
                            && !digits.is_empty()
                            && digits.chars().all(|c| c.is_ascii_digit())
                    })
            }
            None => false,
        }
    })
}

/// Code the page runs formats no float with `{:.N}` and sorts only through
/// `mqviz_engine::sort` (ARCHITECTURE.md, "Invariants"): core's float formatting and each
/// instantiation of the standard sorts would come back into the download the page keeps small,
/// and one sort keeps equal elements in one order on every machine. `decimal.rs` and `sort.rs`
/// are where the rule is kept; tests may use anything.
#[test]
fn page_code_formats_floats_with_decimal_and_sorts_with_stable_sort() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/ui"), true, &mut files);
    for krate in ["engine", "model", "app", "rocketmq", "kafka", "pulsar"] {
        rust_files(&root.join("crates").join(krate).join("src"), true, &mut files);
    }
    files.retain(|f| {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        !(name == "tests.rs"
            || name.ends_with("_tests.rs")
            || f.ends_with("engine/src/sort.rs")
            || f.ends_with("engine/src/decimal.rs"))
    });
    let sorts = [".sort_by(", ".sort_by_key(", ".sort_unstable", ".sort()", ".sort_by_cached_key("];
    let offences = offending_lines(&files, true, |_, line| {
        let code = line.trim_start();
        !code.starts_with("//") && (sorts.iter().any(|s| code.contains(s)) || formats_a_float(code))
    });
    assert!(
        offences.is_empty(),
        "format floats with mqviz_engine::decimal and sort with mqviz_engine::sort::StableSort:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_float_format_check_knows_a_precision_from_a_name() {
    assert!(formats_a_float(r#"format!("{x:.2}")"#));
    assert!(formats_a_float(r#"format!("{:.1} s", t)"#));
    assert!(formats_a_float(r#"format!("{:8.3}", t)"#));
    assert!(!formats_a_float(r#"format!("{x} {:?} {name:>4}", y)"#));
    assert!(!formats_a_float(r#"json!({"a": 1.5})"#));
}
