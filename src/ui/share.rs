//! Your own scenario and sharing a run: open a scenario file (picker or drag and drop), paste
//! JSON, export the run (scenario plus every edit) as a file `mqviz run` reproduces, copy a
//! whole-run link, and open a side-by-side comparison. Everything is broker-neutral.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::state::{edit_name, fmt_ms, Sim};

/// Reads a dropped or picked file as text (gloo-file: its reader is dropped with the future, so
/// nothing is left behind per file), then hands it to `done`. A file that cannot be read arrives
/// as empty text, which the scenario parser or the importer then reports.
pub(super) fn read_file(file: web_sys::File, done: impl FnOnce(String, String) + 'static) {
    let file = gloo_file::File::from(file);
    let name = file.name();
    leptos::task::spawn_local(async move {
        let text = gloo_file::futures::read_as_text(&file).await.unwrap_or_default();
        done(text, name);
    });
}

/// Offers `text` as a downloaded file.
fn download(name: &str, text: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("application/json");
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else { return };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else { return };
    if let Ok(a) = document().create_element("a") {
        let a: web_sys::HtmlAnchorElement = a.unchecked_into();
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Loads a file into the app, reporting errors where the user will see them.
pub fn open_file(sim: Sim, file: web_sys::File, error: RwSignal<Option<String>>) {
    read_file(file, move |text, name| {
        sim.load_text_then(&text, name.clone(), move |r| match r {
            Ok(()) => {
                error.set(None);
                sim.link_error.set(None);
            }
            Err(e) => error.set(Some(format!("{name}: {e}"))),
        })
    });
}

/// Lets a scenario file be dropped anywhere on the page. A file that is not JSON (what an admin
/// tool printed, saved as text) goes to the import dialog instead, with any others dropped with it.
pub fn accept_drops(sim: Sim, error: RwSignal<Option<String>>) {
    let _ = window_event_listener(leptos::ev::dragover, move |ev| ev.prevent_default());
    let _ = window_event_listener(leptos::ev::drop, move |ev| {
        ev.prevent_default();
        let Some(files) = ev.data_transfer().and_then(|d| d.files()) else { return };
        let Some(first) = files.get(0) else { return };
        if first.name().ends_with(".json") {
            open_file(sim, first, error);
            return;
        }
        for i in 0..files.length() {
            if let Some(f) = files.get(i) {
                read_file(f, move |text, name| {
                    if text.trim_start().starts_with('{') {
                        sim.load_text_then(&text, name.clone(), move |r| match r {
                            Ok(()) => error.set(None),
                            Err(e) => error.set(Some(format!("{name}: {e}"))),
                        });
                    } else {
                        sim.dropped_captures.update(|d| d.push((name, text)));
                        sim.show_import.set(true);
                    }
                });
            }
        }
    });
}

#[component]
pub fn ShareBar() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let error = RwSignal::new(None::<String>);
    let pasting = RwSignal::new(false);
    let paste_text = RwSignal::new(String::new());
    let link_text = RwSignal::new(None::<String>);
    // What became of the last Copy link, and the callbacks that say it.
    let copied = RwSignal::new(None::<String>);
    type Reply = Closure<dyn FnMut(JsValue)>;
    let clipboard_replies = StoredValue::new_local(None::<(Reply, Reply)>);
    let comparing_menu = RwSignal::new(false);
    accept_drops(sim, error);
    let file_input: NodeRef<leptos::html::Input> = NodeRef::new();
    let on_file = move |_| {
        let Some(input) = file_input.get_untracked() else { return };
        if let Some(f) = input.files().and_then(|fs| fs.get(0)) {
            open_file(sim, f, error);
        }
        input.set_value("");
    };
    let load_pasted = move |_| {
        sim.load_text_then(&paste_text.get_untracked(), "pasted scenario".into(), move |r| match r {
            Ok(()) => {
                error.set(None);
                sim.link_error.set(None);
                pasting.set(false);
            }
            Err(e) => error.set(Some(e)),
        })
    };
    let export = move |_| {
        if let Some(v) = sim.export() {
            let name = sim.peek(|m| m.name().to_string()).unwrap_or_else(|| "run".into());
            // ASCII only: what is not an ASCII letter or digit becomes '-' anyway, and Unicode's
            // lowercase tables would cost the page 4 KB (gzipped) for nothing.
            let file = format!("{}-run.json", name.to_ascii_lowercase().replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
            download(&file, &serde_json::to_string_pretty(&v).unwrap_or_default());
        }
    };
    let copy_link = move |_| {
        sim.link_then(move |link| match link {
            Ok(fragment) => {
                let Some(win) = web_sys::window() else { return };
                let loc = win.location();
                let url = format!(
                    "{}{}{}{fragment}",
                    loc.origin().unwrap_or_default(),
                    loc.pathname().unwrap_or_default(),
                    loc.search().unwrap_or_default()
                );
                // Say whether the clipboard took it: a page without clipboard access still
                // shows the link, selected, to copy by hand.
                copied.set(Some("Copying…".into()));
                let said_ok =
                    Closure::<dyn FnMut(JsValue)>::new(move |_| copied.set(Some("Link copied to the clipboard".into())));
                let said_no = Closure::<dyn FnMut(JsValue)>::new(move |_| {
                    copied.set(Some("The clipboard refused: copy the link from the field".into()))
                });
                let _ = win.navigator().clipboard().write_text(&url).then2(&said_ok, &said_no);
                // Kept until the next Copy link (the promise settles long before), then dropped.
                clipboard_replies.set_value(Some((said_ok, said_no)));
                link_text.set(Some(url));
                error.set(None);
            }
            Err(e) => {
                link_text.set(None);
                error.set(Some(e));
            }
        })
    };
    let variants = move || {
        sim.edits_version.track();
        let mut v: Vec<(String, serde_json::Value)> =
            sim.scenario.with_value(|s| s.as_ref().and_then(|s| sim.peek(|m| m.variants(s)))).unwrap_or_default();
        let branches = sim.history.with_value(|h| h.as_ref().map(|h| h.branches().len()).unwrap_or(0));
        for i in 0..branches {
            v.push((format!("branch {}", i + 1), serde_json::Value::from(i as u64)));
        }
        // Any edit, compared with the run it changed.
        if let Some(s) = sim.scenario.get_value().filter(|_| sim.edit_count() > 0) {
            v.push((WITHOUT_EDITS.to_string(), s));
        }
        v
    };
    let open_variant = move |ev: leptos::ev::Event| {
        let i: usize = event_target_value(&ev).parse().unwrap_or(usize::MAX);
        let list = variants();
        let Some((label, v)) = list.get(i).cloned() else { return };
        let r = if label.starts_with("branch ") {
            sim.compare_branch(v.as_u64().unwrap_or(0) as usize)
        } else {
            sim.open_compare(v, &label)
        };
        if let Err(e) = r {
            error.set(Some(e));
        }
        comparing_menu.set(false);
    };
    view! {
        <div class="share" data-testid="share-bar">
            <button data-testid="open-file" on:click=move |_| {
                if let Some(i) = file_input.get_untracked() {
                    i.click();
                }
            }>"Open…"</button>
            <input
                type="file"
                accept=".json,application/json"
                class="sr-only"
                tabindex="-1"
                aria-label="Open a scenario file"
                data-testid="file-input"
                node_ref=file_input
                on:change=on_file
            />
            <button data-testid="paste-open" aria-expanded=move || pasting.get().to_string() on:click=move |_| pasting.update(|p| *p = !*p)>
                "Paste JSON"
            </button>
            <button
                data-testid="import-open"
                title="A snapshot from kafka-consumer-groups.sh or mqadmin output"
                aria-expanded=move || sim.show_import.get().to_string()
                on:click=move |_| sim.show_import.update(|s| *s = !*s)
            >
                "Import…"
            </button>
            <button data-testid="export" title="Save the scenario with every edit of this run" on:click=export>
                "Export run"
            </button>
            <button data-testid="copy-link" title="A link that rebuilds this exact run" on:click=copy_link>
                "Copy link"
            </button>
            <button
                data-testid="compare-open"
                aria-expanded=move || comparing_menu.get().to_string()
                on:click=move |_| {
                    if sim.comparing.get_untracked() {
                        sim.close_compare();
                        sim.bump();
                    } else {
                        comparing_menu.update(|c| *c = !*c);
                    }
                }
            >
                {move || if sim.comparing.get() { "Close comparison" } else { "Compare…" }}
            </button>
            // A design review in the page: the edits are the change, compared with the run
            // without them, the verdict above both.
            <Show when=move || { sim.edits_version.track(); sim.edit_count() > 0 && !sim.comparing.get() }>
                <button
                    data-testid="review-edits"
                    title="Compare this run with the run without your edits, with the verdict on the change"
                    on:click=move |_| {
                        let before = sim.scenario.get_value();
                        match before {
                            Some(s) => {
                                if let Err(e) = sim.open_compare(s, WITHOUT_EDITS) {
                                    error.set(Some(e));
                                }
                            }
                            None => error.set(Some("no scenario to compare with".into())),
                        }
                        comparing_menu.set(false);
                    }
                >
                    "Review your edits"
                </button>
            </Show>
            <span
                class="digest muted small"
                data-testid="digest"
                data-pending=move || sim.digest_shown.get().is_none().to_string()
                title=move || {
                    if sim.digest_shown.get().is_some() {
                        "Event-log digest: equal digests mean identical runs"
                    } else {
                        "Event-log digest: still hashing the lines logged since the last one"
                    }
                }
            >
                {move || match sim.digest_shown.get() {
                    Some(d) => format!("digest {d:016x}"),
                    None => "digest …".to_string(),
                }}
            </span>
            <Show when=move || comparing_menu.get()>
                <label class="field">
                    <span>"Compare with"</span>
                    <select data-testid="compare-select" on:change=open_variant>
                        <option value="" selected>"choose…"</option>
                        {move || {
                            variants()
                                .into_iter()
                                .enumerate()
                                .map(|(i, (label, _))| view! { <option value=i.to_string()>{label}</option> })
                                .collect_view()
                        }}
                    </select>
                </label>
            </Show>
            <Show when=move || pasting.get()>
                <div class="paste" role="group" aria-label="Paste a scenario">
                    <textarea
                        data-testid="paste-text"
                        aria-label="Scenario JSON"
                        rows="8"
                        spellcheck="false"
                        placeholder="{\"format\": \"mqviz-scenario/1\", ...}"
                        on:input=move |ev| paste_text.set(event_target_value(&ev))
                    ></textarea>
                    <button class="primary" data-testid="paste-load" on:click=load_pasted>"Load"</button>
                </div>
            </Show>
            {move || {
                link_text.get().map(|l| {
                    view! {
                        <input class="link-out" type="text" readonly data-testid="share-link" aria-label="Link to this run" prop:value=l />
                        <span class="small copied" role="status" data-testid="copy-status">{move || copied.get()}</span>
                    }
                })
            }}
            <Show when=move || sim.imported.get()>
                <p class="small note" data-testid="import-link-note">
                    "This run was imported: its topics, client ids and member ids stay in this browser, but a copied link or an exported run carries them."
                </p>
            </Show>
            {move || error.get().map(|e| view! { <p class="inline-error" role="alert" data-testid="share-error">{e}</p> })}
        </div>
    }
}

/// What this run is, beside the compared one's label.
pub fn this_label(sim: Sim) -> String {
    sim.edits_version.track();
    let other = sim.compare.with_value(|c| c.as_ref().map(|c| c.label.clone())).unwrap_or_default();
    let edits = sim.history.with_value(|h| h.as_ref().map(|h| h.commands().len()).unwrap_or(0));
    let with_edits = match edits {
        0 => String::new(),
        1 => "with your edit".to_string(),
        n => format!("with your {n} edits"),
    };
    if other == WITHOUT_EDITS {
        return with_edits;
    }
    let setting = sim.scenario.with_value(|s| s.as_ref().and_then(|s| sim.peek(|m| m.setting(s)))).unwrap_or_default();
    match (setting.is_empty(), with_edits.is_empty()) {
        (false, false) => format!("{setting}, {with_edits}"),
        (false, true) => setting,
        (true, false) => with_edits,
        (true, true) => "this run".to_string(),
    }
}

/// The label of the variant that is the scenario as loaded, without the run's edits.
pub const WITHOUT_EDITS: &str = "without your edits";

/// The edits of the run and the branches left behind, for the timeline.
pub fn edit_marks(sim: Sim) -> Vec<(u64, String)> {
    sim.edits_version.track();
    sim.history.with_value(|h| {
        h.as_ref()
            .map(|h| {
                h.commands().iter().map(|c| (c.at, format!("edit at {}: {}", fmt_ms(c.at), edit_name(&c.command)))).collect()
            })
            .unwrap_or_default()
    })
}
