//! The page: top bar, timeline with chapter marks, the scenario's explanation and tour, the model's
//! editor, the stage (canvas, legend, plots), the inspector tabs, the live region and the help.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use mqviz_app::presets::CATALOGUE;
use mqviz_model::BrokerKind;

use super::canvas::{self, Act};
use super::controls::{Timeline, TopBar};
use super::frame::{start_loop, Canvases};
use super::inspector::Inspector;
use super::lazy::lazy_view;
use super::legend::Legend;
use super::parts;
use super::share::ShareBar;
use super::state::{Sim, Source};
use super::tour::TourStart;

/// Whether the element a key press is aimed at handles that key itself, so a page shortcut must
/// not also act on it: Space presses a focused button (it must not also toggle play), arrows move
/// a range slider, a tab list or the canvas focus, and text fields take every key.
/// A field where Ctrl+Z undoes typing (a select or a slider does not).
fn is_text_entry(target: Option<web_sys::EventTarget>) -> bool {
    let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return false };
    match el.tag_name().to_ascii_lowercase().as_str() {
        "textarea" => true,
        "input" => matches!(el.get_attribute("type").unwrap_or_default().as_str(), "" | "text" | "search" | "number"),
        _ => false,
    }
}

fn handles_its_own_keys(target: Option<web_sys::EventTarget>, key: &str) -> bool {
    let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return false };
    let tag = el.tag_name().to_ascii_lowercase();
    let role = el.get_attribute("role").unwrap_or_default();
    let text_field = matches!(tag.as_str(), "input" | "select" | "textarea");
    let own_arrows = text_field || tag == "canvas" || role == "tab";
    match key {
        " " | "Enter" => {
            own_arrows
                || matches!(tag.as_str(), "button" | "a" | "summary")
                || role == "button"
                || el.closest("[data-event-id]").ok().flatten().is_some()
        }
        "ArrowLeft" | "ArrowRight" | "ArrowUp" | "ArrowDown" | "Home" | "End" => own_arrows,
        _ => text_field,
    }
}

/// The first sentence of a description (shown) and the rest (behind "more").
fn first_sentence(text: &str) -> (String, String) {
    match text.find(". ") {
        Some(i) if i < 260 => (text[..=i].to_string(), text[i + 2..].to_string()),
        _ => (text.to_string(), String::new()),
    }
}

/// While two runs are compared, which one a panel describes: side A, the page's own run (the
/// other side has only its canvas and its column of the comparison's lists).
#[component]
fn SideNote(what: &'static str, testid: &'static str) -> impl IntoView {
    let sim = expect_context::<Sim>();
    view! {
        <Show when=move || sim.comparing.get()>
            <p class="side-note" data-testid=testid>
                <span class="side-tag">"A"</span>
                {move || {
                    let label = super::share::this_label(sim);
                    if label.is_empty() { format!("{what} side A.") } else { format!("{what} side A ({label}).") }
                }}
            </p>
        </Show>
    }
}

/// The right panel's tabs, following the ARIA tab pattern (arrow keys move between tabs).
#[component]
fn InspectorTabs() -> impl IntoView {
    let sim = expect_context::<Sim>();
    // 0 = Inspector, i + 1 = the model's extra tab i. The run's own signal: links write the
    // open panel and open the one they name.
    let tab = sim.tab;
    let labels = move || {
        let mut v: Vec<(&'static str, &'static str)> = vec![("Inspector", "tab-inspector")];
        v.extend(parts::tabs(sim.kind.get()).iter().map(|t| (t.label, t.testid)));
        v
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let n = labels().len();
        let cur = tab.get_untracked();
        let next = match ev.key().as_str() {
            "ArrowRight" => (cur + 1) % n,
            "ArrowLeft" => (cur + n - 1) % n,
            "Home" => 0,
            "End" => n - 1,
            _ => return,
        };
        ev.prevent_default();
        tab.set(next);
        if let Some(el) = document().get_element_by_id(&format!("tab-{next}")) {
            let _ = el.unchecked_into::<web_sys::HtmlElement>().focus();
        }
    };
    view! {
        <div class="tabs" role="tablist" aria-label="Inspector panels" on:keydown=on_key>
            {move || {
                labels()
                    .into_iter()
                    .enumerate()
                    .map(|(i, (label, testid))| {
                        view! {
                            <button
                                role="tab"
                                id=format!("tab-{i}")
                                data-testid=testid
                                aria-controls=format!("tabpanel-{i}")
                                class:active=move || tab.get() == i
                                aria-selected=move || (tab.get() == i).to_string()
                                tabindex=move || if tab.get() == i { "0" } else { "-1" }
                                on:click=move |_| tab.set(i)
                            >
                                {label}
                            </button>
                        }
                    })
                    .collect_view()
            }}
        </div>
        <SideNote what="These panels describe" testid="inspector-side" />
        <div class="tab-body" role="tabpanel" id="tabpanel-0" aria-labelledby="tab-0" class:hidden=move || tab.get() != 0>
            <Inspector />
        </div>
        {move || {
            let kind = sim.kind.get();
            (0..parts::tabs(kind).len())
                .map(|i| {
                    let visible = Signal::derive(move || tab.get() == i + 1);
                    view! {
                        <div
                            class="tab-body"
                            role="tabpanel"
                            id=format!("tabpanel-{}", i + 1)
                            aria-labelledby=format!("tab-{}", i + 1)
                            class:hidden=move || tab.get() != i + 1
                        >
                            {parts::tab_body(kind, i, visible)}
                        </div>
                    }
                })
                .collect_view()
        }}
    }
}

/// The bad fields of the link the page opened, with a way to dismiss them (the address bar
/// follows the run again then).
#[component]
pub fn LinkError() -> impl IntoView {
    let sim = expect_context::<Sim>();
    move || {
        sim.link_error.get().map(|e| {
            view! {
                <p class="error link-error" role="alert" data-testid="link-error">
                    {e}
                    // A refused embed has nothing else to show: dismissing would leave an empty frame.
                    // Instead it points its reader to the presets, in the app (a new tab: the
                    // page around the frame stays).
                    <Show
                        when=move || !sim.embed_refused.get()
                        fallback=|| {
                            view! {
                                " "
                                <a href="./" target="_blank" rel="noopener" data-testid="embed-gallery">
                                    "See the presets in mqviz ↗"
                                </a>
                            }
                        }
                    >
                        <button class="dismiss" aria-label="Dismiss" on:click=move |_| sim.link_error.set(None)>"×"</button>
                    </Show>
                </p>
            }
        })
    }
}

#[component]
pub fn App() -> impl IntoView {
    let sim = Sim::new();
    provide_context(sim);
    let canvas_ref: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let cv = Canvases { topology: canvas_ref, compare: NodeRef::new(), backlog: NodeRef::new(), consumed: NodeRef::new() };
    // The URL fragment is a shareable link (see `mqviz_app::link`), or `#bench` for the generated load
    // scenario played at 1×; a bad one is reported with its column.
    let hash = || web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default();
    let first = hash();
    // A first look, without the packed fields (those are read in `follow`, maybe after a fetch):
    // the layout is picked now, even when the link's run comes later.
    let link = mqviz_app::link::parse_fragment_lenient_with(&first, None).ok().map(|(l, _)| l);
    sim.embed.set(link.as_ref().is_some_and(|l| l.embed));
    sim.embed_origins.set_value(link.as_ref().and_then(|l| l.origins.clone()));
    let bench = link.as_ref().is_some_and(|l| l.bench);
    super::url::follow(sim, &first);
    match link.and_then(|l| l.bench.then_some(l.bench_messages)) {
        Some(None) => {
            sim.load_bench(240_000);
            sim.speed_log.set(0.0);
            sim.playing.set(true);
        }
        Some(Some(n)) => sim.load_bench(n),
        None => {}
    }
    super::url::keep_in_sync(sim);

    Effect::new(move |prev: Option<()>| {
        if prev.is_none() {
            start_loop(sim, cv, bench);
        }
    });

    // The canvas: a click on a message cell shows its provenance; a "+N more" row pages.
    let canvas_focus = RwSignal::new(String::new());
    let act = move |a: Act| match a {
        Act::Open(msg) => {
            if let Some(id) = sim.peek(|m| m.provenance(msg).first().copied()).flatten() {
                sim.selected.set(Some(id as u32));
            }
        }
        Act::Paged => sim.bump(),
        Act::Focused(text) => {
            canvas_focus.set(text);
            sim.bump();
        }
        Act::Nothing => {}
    };
    let on_canvas_click = move |ev: leptos::ev::MouseEvent| act(canvas::click(0, ev.offset_x() as f64, ev.offset_y() as f64));
    // Hovering a message cell shows what it carried (tag, body, properties) as a tooltip.
    let on_canvas_move = move |ev: leptos::ev::MouseEvent| {
        let tip = sim.peek(|m| canvas::hover(0, ev.offset_x() as f64, ev.offset_y() as f64, m)).flatten();
        if let Some(el) = canvas_ref.get_untracked() {
            let _ = match tip {
                Some(t) => el.set_attribute("title", &t),
                None => el.remove_attribute("title"),
            };
        }
    };
    let on_canvas_key = move |ev: leptos::ev::KeyboardEvent| {
        let key = ev.key();
        if matches!(key.as_str(), "ArrowUp" | "ArrowDown" | "ArrowLeft" | "ArrowRight" | "Enter" | " " | "Home" | "Escape") {
            ev.prevent_default();
            ev.stop_propagation();
            let a = sim.peek(|m| canvas::key(0, &key, m)).unwrap_or(Act::Nothing);
            act(a);
        }
    };

    let toggle_play = move || sim.toggle_play();

    let _keys = window_event_listener(leptos::ev::keydown, move |ev| {
        // Undo and redo over the edit list; a text field keeps its own undo of what is typed.
        if (ev.ctrl_key() || ev.meta_key()) && !ev.alt_key() && !is_text_entry(ev.target()) {
            let key = ev.key();
            let redo = (key.eq_ignore_ascii_case("z") && ev.shift_key()) || key.eq_ignore_ascii_case("y");
            if redo || key == "z" {
                ev.prevent_default();
                if redo {
                    sim.redo();
                } else {
                    sim.undo();
                }
                return;
            }
        }
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || handles_its_own_keys(ev.target(), &ev.key()) {
            return;
        }
        match ev.key().as_str() {
            " " => {
                ev.prevent_default();
                toggle_play();
            }
            "ArrowLeft" => {
                ev.prevent_default();
                sim.step_back();
            }
            "ArrowRight" => {
                ev.prevent_default();
                sim.playing.set(false);
                sim.step();
            }
            "n" | "N" => sim.next_moment(),
            "End" => {
                ev.prevent_default();
                sim.run_to_end();
            }
            "Home" => {
                ev.prevent_default();
                sim.playing.set(false);
                sim.seek(0);
            }
            "?" => sim.show_help.update(|h| *h = !*h),
            "Escape" => {
                sim.show_help.set(false);
                sim.cancel_seek();
            }
            _ => {}
        }
    });

    let description = move || {
        sim.preset.track();
        sim.kind.track();
        sim.peek(|m| m.description().to_string()).unwrap_or_default()
    };
    let lesson = move || {
        sim.preset.track();
        match sim.source.get() {
            Source::Preset(i) => CATALOGUE.get(i).map(|p| p.lesson),
            Source::Own { .. } => None,
        }
    };
    let title = move || {
        sim.preset.track();
        sim.kind.track();
        sim.peek(|m| m.name().to_string()).unwrap_or_default()
    };

    if sim.embed.get_untracked() {
        return view! { {lazy_view!(super::embed::part(sim), canvas_ref)} }.into_any();
    }

    view! {
        <div class="app" class:comparing=move || sim.comparing.get()>
            // The first Tab stop: straight to the canvas, past the bars and the editor. Not a
            // fragment link: the fragment is the run's link.
            <nav class="skip" aria-label="Skip links">
                <a
                    class="skip-link"
                    href="#"
                    data-testid="skip-link"
                    on:click=move |ev| {
                        ev.prevent_default();
                        if let Some(c) = canvas_ref.get_untracked() {
                            let _ = c.focus();
                        }
                    }
                >
                    "Skip to the canvas"
                </a>
            </nav>
            <TopBar toggle_play=toggle_play />
            <Timeline />
            <section class="explain" aria-label="About this scenario">
                <div class="explain-head">
                    <h1>
                        {title}
                        {move || {
                            (sim.edit_count() > 0)
                                .then(|| view! { <span class="with-edits" data-testid="with-edits">" — with your edits"</span> })
                        }}
                    </h1>
                    <TourStart />
                    <ShareBar />
                </div>
                // A preset's lesson is the line shown before Play; the description (what to
                // watch) is behind it. A run of the user's own shows its description's first
                // sentence there instead.
                <details class="what" data-testid="description">
                    <summary>
                        {move || match lesson() {
                            Some(lesson) => view! { <strong>"The lesson: "</strong><span data-testid="lesson">{lesson}</span> }.into_any(),
                            None => view! { <strong>"What to watch: "</strong>{first_sentence(&description()).0} }.into_any(),
                        }}
                    </summary>
                    <p>
                        {move || match lesson() {
                            Some(_) => view! { <strong>"What to watch: "</strong>{description()} }.into_any(),
                            None => first_sentence(&description()).1.into_any(),
                        }}
                    </p>
                </details>
                {move || {
                    super::fetching::what()
                    .map(|what| view! { <p class="fetching" role="status" data-testid="fetching">{format!("Loading {what}…")}</p> })
                }}
                {move || sim.load_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                <LinkError />
            </section>
            <aside class="panel editor-panel" aria-label="Scenario editor">
                <SideNote what="Edits here change" testid="editor-side" />
                {move || parts::editor(sim.kind.get())}
            </aside>
            <main class="stage" id="stage" class:comparing=move || sim.comparing.get()>
                <super::outcome::Outcome />
                <div class="canvas-wrap">
                    <Show when=move || sim.comparing.get()>
                        <p class="side-label" data-testid="side-label-this">
                            <span class="side-tag">"A"</span>
                            {move || super::share::this_label(sim)}
                        </p>
                    </Show>
                    <canvas
                        data-testid="canvas-topology"
                        node_ref=canvas_ref
                        tabindex="0"
                        on:click=on_canvas_click
                        on:mousemove=on_canvas_move
                        on:keydown=on_canvas_key
                        aria-label="Topology: producers, brokers with their partitions, consumers, assignment and messages in flight. Arrow keys move between elements and along a partition's messages; Enter opens a message's provenance."
                        aria-describedby="canvas-focus"
                    ></canvas>
                    <Show when=move || sim.tour.with(Option::is_some)>
                        {lazy_view!(super::tour::player(), ())}
                    </Show>
                </div>
                <Show when=move || sim.comparing.get()>
                    {lazy_view!(super::compare::part(), cv.compare)}
                </Show>
                <p id="canvas-focus" class="sr-only" aria-live="polite" data-testid="canvas-focus">
                    {move || canvas_focus.get()}
                </p>
                // The model's own pictures (Kafka's Gantt, Pulsar's DAG and ring) come before the
                // legend: at 1280×800 they must start above the fold.
                {move || parts::stage_extra(sim.kind.get())}
                <Legend />
                <div class="plots">
                    <figure>
                        <figcaption>
                            {move || {
                                // Each model's measure in its own words.
                                let (measure, what) = match sim.kind.get() {
                                    Some(BrokerKind::Kafka) => ("Lag", "log end − committed"),
                                    Some(BrokerKind::Pulsar) => ("Backlog", "published − acknowledged"),
                                    _ => ("Backlog", "stored − committed"),
                                };
                                format!("{measure} per {} ({what})", sim.peek(|m| m.partition_noun()).unwrap_or("partition"))
                            }}
                        </figcaption>
                        <canvas
                            data-testid="plot-backlog"
                            node_ref=cv.backlog
                            on:click=move |ev| super::plot::seek_on_click(sim, ev)
                            aria-label="Backlog per partition over time; click to go to a time"
                        ></canvas>
                    </figure>
                    <figure>
                        <figcaption>"Consumed per second, per consumer (marks: reassignments)"</figcaption>
                        <canvas
                            data-testid="plot-consumed"
                            node_ref=cv.consumed
                            on:click=move |ev| super::plot::seek_on_click(sim, ev)
                            aria-label="Consumed per second per consumer; click to go to a time"
                        ></canvas>
                    </figure>
                </div>
            </main>
            <aside class="panel inspector-panel" aria-label="Inspector">
                <InspectorTabs />
            </aside>
            <div class="sr-only" aria-live="polite" aria-atomic="true" data-testid="live-summary">
                {move || sim.announce.get()}
            </div>
            <Show when=move || sim.show_help.get()>
                {lazy_view!(super::help::part(), sim)}
            </Show>
            <Show when=move || sim.show_import.get()>
                {lazy_view!(super::import::part(), sim)}
            </Show>
        </div>
    }
    .into_any()
}
