//! The URL follows the page: the fragment is a whole-run link (`sim::link`). Opening the page or
//! changing the fragment (a pasted link, the back button, an in-page link) loads what it names;
//! choosing a preset, editing and moving the playhead write it back with `replaceState`, so a
//! reload or a copied address bar gives the same run.

use std::cell::RefCell;

use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::state::Sim;
use crate::sim::link::{self, parse_fragment_with, Link, Unpack};
use wasm_split_helpers::SplitLoaderError;

thread_local! {
    /// The fragment this page wrote last: a `hashchange` to it is our own echo.
    static WRITTEN: RefCell<String> = const { RefCell::new(String::new()) };
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
        Ok(l) if l.bench => {}
        Ok(l) => {
            if let Err(e) = sim.open_link(&l) {
                sim.load_error.set(Some(format!("link: {e}")));
            }
        }
        Err(e) => sim.load_error.set(Some(e)),
    });
}

/// The split point of the link reader (see `ui::lazy`): the inflater that reads a link's packed
/// scenario and edits, fetched the first time a link that has them is opened.
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(links, fallible))]
fn unpacker() -> Result<Unpack, SplitLoaderError> {
    Ok(link::unpack)
}

/// Parses a fragment, with its packed fields once the code to read them is in the page.
fn read(fragment: String, then: impl FnOnce(Result<Link, String>) + 'static) {
    if !link::has_packed(&fragment) {
        return then(parse_fragment_with(&fragment, None).map_err(|e| e.to_string()));
    }
    let parse = move |unpack: Unpack| parse_fragment_with(&fragment, Some(unpack)).map_err(|e| e.to_string());
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
        if sim.playing.get() || sim.embed.get_untracked() || super::fetching::what().is_some() {
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
