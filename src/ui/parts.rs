//! The one place where the shared UI meets the models: each broker model lists the builder of its
//! runs, its editor, its inspector tables, its extra tabs and its log categories here. Adding a
//! model means adding its `Parts` below and its `ui/<model>/` folder; the shell, canvas, tracker
//! and plots stay as they are.
//!
//! The release page carries only RocketMQ's parts in its first download; Kafka's and Pulsar's are
//! chunks fetched the first time a run of theirs is asked for. So every path that builds a run
//! (a preset, a file, a paste, a link, an embed `load`, a comparison) goes through `when_ready`
//! first, and builds with `load_value` here, never with `mqviz_app::registry::load_value` (which names
//! every model and so would pull them all back into the first download).
//!
//! The first download's size, what it is made of and what was tried.
//! Before the split the page was 1,005 KB: the shell (UI, Leptos, canvas,
//! history, links, glue) 315 KB, RocketMQ with its panels 246 KB, Kafka and Pulsar with theirs 462
//! KB (measured by stubbing their arms, so LTO dropped them). Pre-`wasm-opt` code is 2.87 MB in
//! all: ordered-map instances are 0.32 MB of it (118 key/value types, about 2.7 KB each); the data
//! section (mostly UI text, format strings and the compiled-in presets) is 0.31 MB more. To see it:
//! `scripts/wasm-size.py` reads the name section of `target/web-split/split/main.wasm` (the split
//! build keeps it until wasm-opt): code by module, the largest functions, and which functions take
//! a given function's table index (fn pointers and `fmt::Arguments`, which no call shows). What was
//! tried: the whole core at `"z"` (83 KB less, but the seek 1.35x slower; only Kafka and Pulsar
//! take it), wasm-opt passes (at most 7 KB; `-Oz --converge`, `--gufa`, `-O2 -Oz` all within 1 KB
//! of `-Oz` now), one shared `<For>` for the editors' lists (1 KB). Moving the preset texts out and
//! dropping Unicode's lowercase tables (one `to_lowercase`) saved the first view 22 KB, the lazy
//! parts 13 KB, reading links' JSON with `from_str` like all other JSON (`from_slice` was a second
//! JSON reader) 3 KB, and the link reader's chunk 6 KB (566 -> 516 KB). `mqviz_engine::vec_map` in place of
//! most of the RocketMQ model's and the canvas's ordered maps saved 41 KB more (518 -> 477 KB for
//! main_bg.wasm alone); its module doc says which maps stay B-trees and why. Then, for
//! main_bg.wasm: the SQL92 engine's chunk 13 KB (477 -> 464), the link packer's 8 KB (-> 456), the
//! seek's hot maps as `VecMap`s 14 KB (-> 442; the seek about 1.07x slower), and no float
//! formatting or parsing through `core` (`mqviz_engine::decimal`) 23 KB (-> 419).

use leptos::prelude::*;
use serde_json::Value;

use mqviz_app::registry::{self, Build};
use mqviz_engine::json_path::PathError;
use mqviz_model::BrokerKind;
use wasm_split_helpers::SplitLoaderError;

/// An extra tab of the right panel.
pub struct ModelTab {
    pub label: &'static str,
    pub testid: &'static str,
}

/// The extra tabs a model adds next to "Inspector".
pub fn tabs(kind: Option<BrokerKind>) -> &'static [ModelTab] {
    match kind {
        Some(BrokerKind::RocketMq) => &[ModelTab { label: "Filters", testid: "tab-filters" }],
        Some(BrokerKind::Kafka) => &[ModelTab { label: "Lag", testid: "tab-lag" }],
        Some(BrokerKind::Pulsar) | None => &[],
    }
}

/// The body of extra tab `index`; it should read the model only while `visible`.
pub fn tab_body(kind: Option<BrokerKind>, index: usize, visible: Signal<bool>) -> AnyView {
    with_parts(kind, |p| (p.tab)(index, visible))
}

/// The left panel's editor.
pub fn editor(kind: Option<BrokerKind>) -> AnyView {
    with_parts(kind, |p| (p.editor)())
}

/// Model tables shown in the inspector between the warnings and the assignment.
pub fn inspector_tables(kind: Option<BrokerKind>) -> AnyView {
    with_parts(kind, |p| (p.tables)())
}

/// Something the model adds to the stage under the canvas (a plot that is the point of a preset).
pub fn stage_extra(kind: Option<BrokerKind>) -> AnyView {
    with_parts(kind, |p| (p.stage)())
}

fn with_parts(kind: Option<BrokerKind>, f: impl FnOnce(Parts) -> AnyView) -> AnyView {
    kind.and_then(parts).map(f).unwrap_or_else(|| ().into_any())
}

/// What one model brings to the page: the builder of its runs and its panels. A panel is asked
/// for only once `sim.kind` names the model, which happens only after a run of it was built, so
/// its parts are in the page by then.
#[derive(Clone, Copy)]
pub struct Parts {
    pub build: Build,
    pub editor: fn() -> AnyView,
    pub tables: fn() -> AnyView,
    pub stage: fn() -> AnyView,
    /// The body of extra tab `index` (see `tabs`), given whether it is visible.
    pub tab: fn(usize, Signal<bool>) -> AnyView,
    /// Whether the page has the code a run of this scenario document needs beyond these parts
    /// (RocketMQ's SQL92 engine, fetched on demand).
    pub has_code_for: fn(&Value) -> bool,
    /// Fetches that code, then runs the callback (`Err` if it could not be fetched).
    pub fetch_code: fn(Then),
}

/// What runs once code has been fetched.
pub type Then = Box<dyn FnOnce(Result<(), String>)>;

/// For models whose parts are all their code.
fn has_all_code(_: &Value) -> bool {
    true
}

fn nothing_to_fetch(then: Then) {
    then(Ok(()))
}

// RocketMQ's parts are always in the page: the first view runs its seed preset.
fn rocketmq_parts() -> Parts {
    Parts {
        build: registry::build_rocketmq,
        editor: || view! { <super::rocketmq::Editor /> }.into_any(),
        tables: || view! { <super::rocketmq::Tables /> }.into_any(),
        stage: || view! { <super::rocketmq::StagePlot /> }.into_any(),
        tab: |i, visible| match i {
            // Mounted hidden, so fetched when first shown.
            0 => view! { {super::lazy::lazy_view!(super::rocketmq::filter_panel(), visible, when visible)} }.into_any(),
            _ => ().into_any(),
        },
        has_code_for: super::rocketmq::sql92::has_code_for,
        fetch_code: |then| super::rocketmq::sql92::when_ready(then),
    }
}

// With `--cfg mqviz_split` (the release page, see scripts/build-web.sh) each of these is the entry
// of a chunk that wasm-split cuts out of the page's wasm, fetched the first time it is called.
// Without it (the dev build, the wasm tests) they are plain functions that cannot fail.
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(kafka, fallible))]
fn kafka_parts() -> Result<Parts, SplitLoaderError> {
    Ok(Parts {
        build: registry::build_kafka,
        editor: || view! { <super::kafka::Editor /> }.into_any(),
        tables: || view! { <super::kafka::Tables /> }.into_any(),
        stage: || view! { <super::kafka::Gantt /> }.into_any(),
        tab: |i, visible| match i {
            0 => view! { <super::kafka::LagPanel visible=visible /> }.into_any(),
            _ => ().into_any(),
        },
        has_code_for: has_all_code,
        fetch_code: nothing_to_fetch,
    })
}

#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(pulsar, fallible))]
fn pulsar_parts() -> Result<Parts, SplitLoaderError> {
    Ok(Parts {
        build: registry::build_pulsar,
        editor: || view! { <super::pulsar::Editor /> }.into_any(),
        tables: || view! { <super::pulsar::Tables /> }.into_any(),
        stage: || view! { <super::pulsar::Stage /> }.into_any(),
        tab: |_, _| ().into_any(),
        has_code_for: has_all_code,
        fetch_code: nothing_to_fetch,
    })
}

/// The parts of `kind` if they are in the page.
#[cfg(not(mqviz_split))]
pub fn parts(kind: BrokerKind) -> Option<Parts> {
    Some(match kind {
        BrokerKind::RocketMq => rocketmq_parts(),
        BrokerKind::Kafka => kafka_parts().ok()?,
        BrokerKind::Pulsar => pulsar_parts().ok()?,
    })
}

#[cfg(mqviz_split)]
thread_local! {
    static FETCHED: std::cell::Cell<[Option<Parts>; 3]> = const { std::cell::Cell::new([None; 3]) };
}

/// The parts of `kind` if they are in the page.
#[cfg(mqviz_split)]
pub fn parts(kind: BrokerKind) -> Option<Parts> {
    match kind {
        BrokerKind::RocketMq => Some(rocketmq_parts()),
        _ => FETCHED.with(|f| f.get()[kind as usize]),
    }
}

/// Runs `then` once the parts of `kind` are in the page: at once if they are, else after their
/// chunk has arrived. `then` gets `Err` (and the page stays as it is) if the chunk could not be
/// fetched.
pub fn when_ready(kind: BrokerKind, then: impl FnOnce(Result<(), String>) + 'static) {
    match parts(kind) {
        Some(_) => then(Ok(())),
        None => fetch(kind, then),
    }
}

#[cfg(not(mqviz_split))]
fn fetch(kind: BrokerKind, then: impl FnOnce(Result<(), String>)) {
    // Not reached: every model is in this build, so `parts` always has them.
    then(Err(format!("the {} model is not in this build", kind.title())))
}

#[cfg(mqviz_split)]
fn fetch(kind: BrokerKind, then: impl FnOnce(Result<(), String>) + 'static) {
    let under_way = super::fetching::begin(format!("the {} model", kind.title()));
    leptos::task::spawn_local(async move {
        let fetched = match kind {
            BrokerKind::RocketMq => Ok(rocketmq_parts()),
            BrokerKind::Kafka => kafka_parts().await,
            BrokerKind::Pulsar => pulsar_parts().await,
        };
        match fetched {
            Ok(p) => {
                FETCHED.with(|f| {
                    let mut all = f.get();
                    all[kind as usize] = Some(p);
                    f.set(all);
                });
                then(Ok(()));
            }
            Err(e) => {
                then(Err(format!("the {} model could not be loaded ({e}); check the connection and try again", kind.title())))
            }
        }
        drop(under_way);
    });
}

/// `when_ready` for the model a scenario document names, and for the code beyond its parts the
/// run needs (`Parts::has_code_for`). A document that names no model runs `then` at once: loading
/// it reports the error, with its path.
pub fn when_ready_for(v: &Value, then: impl FnOnce(Result<(), String>) + 'static) {
    let Ok(kind) = registry::kind_of(v) else { return then(Ok(())) };
    let v = v.clone();
    when_ready(kind, move |r| match r.map(|()| parts(kind)) {
        Ok(Some(p)) if !(p.has_code_for)(&v) => (p.fetch_code)(Box::new(then)),
        Ok(_) => then(Ok(())),
        Err(e) => then(Err(e)),
    });
}

/// Whether a run of the model `v` names could be built now, without fetching code.
pub fn ready_for(v: &Value) -> bool {
    registry::kind_of(v).map_or(true, |k| parts(k).is_some_and(|p| (p.has_code_for)(v)))
}

/// Builds the run a scenario document (with its `edits`) describes, with the builder the page has.
pub fn load_value(v: Value) -> Result<registry::Loaded, Vec<PathError>> {
    let kind = registry::kind_of(&v).map_err(|e| vec![e])?;
    let Some(p) = parts(kind) else {
        return Err(vec![PathError {
            path: "$.broker".into(),
            message: format!("the {} model is not loaded yet", kind.title()),
        }]);
    };
    if !(p.has_code_for)(&v) {
        return Err(vec![PathError { path: "$".into(), message: "code this run needs is not loaded yet".into() }]);
    }
    registry::load_value_with(v, p.build)
}

/// The event-log categories for the filter select (`"all"` first), as the model names them.
pub fn log_kinds(kinds: &[&'static str]) -> Vec<&'static str> {
    std::iter::once("all").chain(kinds.iter().copied()).collect()
}
