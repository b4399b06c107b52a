//! The URL follows the page: the fragment is a whole-run link (`mqviz_app::link`). Opening the page or
//! changing the fragment (a pasted link, the back button, an in-page link) loads what it names;
//! choosing a preset, editing and moving the playhead write it back with `replaceState`, so a
//! reload or a copied address bar gives the same run.

use std::cell::RefCell;

use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::state::Sim;
use mqviz_app::link::{self, parse_fragment_lenient_with, Link, LinkError, Pack, Unpack};
use wasm_split_helpers::SplitLoaderError;

thread_local! {
    /// The fragment this page wrote last: a `hashchange` to it is our own echo.
    static WRITTEN: RefCell<String> = const { RefCell::new(String::new()) };
    /// The link packer once it is in the page. An `Arc` signal, owned by no component: the
    /// address bar and the embed's full-page link are written again when it arrives.
    static PACKER: ArcRwSignal<Option<Pack>> = ArcRwSignal::new(built_in_packer());
    /// Whether a background fetch of the packer is under way.
    static PACKER_ASKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(not(mqviz_split))]
fn built_in_packer() -> Option<Pack> {
    Some(link::pack)
}

// The release page fetches the packer (the deflater) with the first link that carries edits or
// a scenario: a page that is only watched never writes one.
#[cfg(mqviz_split)]
fn built_in_packer() -> Option<Pack> {
    None
}

#[cfg(mqviz_split)]
#[wasm_split_helpers::wasm_split(packer, fallible)]
fn fetched_packer() -> Result<Pack, SplitLoaderError> {
    Ok(link::pack)
}

/// The packer if it is in the page (tracked).
pub fn packer() -> Option<Pack> {
    PACKER.with(|p| p.get())
}

pub fn packer_untracked() -> Option<Pack> {
    PACKER.with(|p| p.get_untracked())
}

/// Fetches the packer in the background, once; a failure is retried by the next ask.
pub fn prefetch_packer() {
    if PACKER_ASKED.with(|a| a.replace(true)) {
        return;
    }
    when_packer(|_| PACKER_ASKED.with(|a| a.set(false)));
}

/// Runs `then` with the packer once it is in the page, fetching it if need be.
pub fn when_packer(then: impl FnOnce(Result<Pack, String>) + 'static) {
    match packer_untracked() {
        Some(p) => then(Ok(p)),
        None => fetch_packer(then),
    }
}

#[cfg(not(mqviz_split))]
fn fetch_packer(then: impl FnOnce(Result<Pack, String>)) {
    // Not reached: without the split the packer is built in.
    then(Err("the link writer is not in this build".into()))
}

#[cfg(mqviz_split)]
fn fetch_packer(then: impl FnOnce(Result<Pack, String>) + 'static) {
    leptos::task::spawn_local(async move {
        let fetched = fetched_packer().await;
        if let Ok(p) = fetched {
            PACKER.with(|s| s.set(Some(p)));
        }
        then(fetched.map_err(|e| format!("the link writer could not be loaded ({e}); check the connection and try again")));
    });
}

/// Loads what `fragment` names (nothing for an empty one); errors show with their column.
pub fn follow(sim: Sim, fragment: &str) {
    let fragment = fragment.trim_start_matches('#');
    if fragment.is_empty() || WRITTEN.with(|w| *w.borrow() == fragment) {
        return;
    }
    // A link read after a fetch opens only if nothing was asked for meanwhile.
    let ticket = sim.ask();
    // Columns count the `#` the user sees in the address bar.
    read(format!("#{fragment}"), move |read| match read {
        _ if !sim.still_asked(ticket) => {}
        Ok((l, _)) if l.bench => {}
        Ok((l, faults)) if l.embed && !faults.is_empty() && l.preset.is_none() && l.scenario.is_none() => {
            // Opened without its bad fields, the embed would show the default preset: a diagram
            // its page never asked for. It shows why instead, and tells the page around it.
            sim.embed_refused.set(true);
            let text = embed_faults_text(&faults);
            super::embed::report_error(&text);
            sim.link_error.set(Some(text));
        }
        Ok((l, faults)) => {
            let text = if l.embed { embed_faults_text } else { faults_text };
            sim.link_error.set((!faults.is_empty()).then(|| text(&faults)));
            if let Err(e) = sim.open_link(&l) {
                sim.load_error.set(Some(format!("link: {e}")));
            }
        }
        Err(e) => {
            sim.link_error.set(Some(format!("This link could not be opened: {e}. The address bar keeps it as it was, to mend.")));
        }
    });
}

/// The split point of the link reader (see `ui::lazy`): the inflater that reads a link's packed
/// scenario and edits, fetched the first time a link that has them is opened.
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(links, fallible))]
fn unpacker() -> Result<Unpack, SplitLoaderError> {
    Ok(link::unpack)
}

/// Parses a fragment, with its packed fields once the code to read them is in the page: the
/// link without its bad fields, and a fault for each.
fn read(fragment: String, then: impl FnOnce(Result<(Link, Vec<LinkError>), String>) + 'static) {
    if !link::has_packed(&fragment) {
        return then(parse_fragment_lenient_with(&fragment, None).map_err(|e| e.to_string()));
    }
    let parse = move |unpack: Unpack| parse_fragment_lenient_with(&fragment, Some(unpack)).map_err(|e| e.to_string());
    let failed = |e: SplitLoaderError| format!("the link could not be read ({e}); check the connection and reload");
    #[cfg(not(mqviz_split))]
    then(unpacker().map_err(failed).and_then(parse));
    #[cfg(mqviz_split)]
    {
        let under_way = super::fetching::begin("the link".into());
        leptos::task::spawn_local(async move {
            then(unpacker().await.map_err(failed).and_then(parse));
            drop(under_way);
        });
    }
}

/// What a link's bad fields were, as the page says it.
fn faults_text(faults: &[LinkError]) -> String {
    let each: Vec<String> = faults.iter().map(|f| format!("column {}: {}", f.column, f.message)).collect();
    let n = faults.len();
    format!(
        "This link has {} that could not be used, and opened without {}: {}. The address bar keeps the link as it was, to mend.",
        if n == 1 { "a field".to_string() } else { format!("{n} fields") },
        if n == 1 { "it" } else { "them" },
        each.join("; ")
    )
}

/// The same for an embed, whose viewer has no address bar: the page that embeds it mends it.
fn embed_faults_text(faults: &[LinkError]) -> String {
    let each: Vec<String> = faults.iter().map(|f| format!("column {}: {}", f.column, f.message)).collect();
    format!(
        "This embedded diagram's link could not be used ({}). The page that embeds it needs to mend the address of its frame.",
        each.join("; ")
    )
}

fn write(fragment: &str) {
    let Some(win) = web_sys::window() else { return };
    let loc = win.location();
    let base = format!("{}{}", loc.pathname().unwrap_or_default(), loc.search().unwrap_or_default());
    WRITTEN.with(|w| *w.borrow_mut() = fragment.trim_start_matches('#').to_string());
    if let Ok(h) = win.history() {
        let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&format!("{base}{fragment}")));
    }
}

/// Writes the run's link into the address bar whenever the run changes while paused (and after
/// a preset choice), and follows `hashchange`.
pub fn keep_in_sync(sim: Sim) {
    Effect::new(move |_| {
        sim.ui_version.track();
        sim.edits_version.track();
        sim.tab.track();
        // A link with a bad field stays in the address bar until the viewer opens something else.
        if sim.playing.get()
            || sim.embed.get_untracked()
            || super::fetching::what().is_some()
            || sim.link_error.with(Option::is_some)
        {
            return;
        }
        if let Ok(fragment) = sim.link() {
            write(&fragment);
        }
    });
    let _ = window_event_listener(leptos::ev::hashchange, move |_| {
        let hash = web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default();
        follow(sim, &hash);
    });
}
