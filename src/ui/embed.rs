//! Embed mode (`#embed&preset=...`): the canvas and minimal controls, fitting a 640×400 iframe in
//! a docs page, and a `postMessage` API for the page around it.
//!
//! Inbound (from the embedding page): `{"type": "load", "scenario": {...}}` (at most 1 MB of
//! JSON), `{"type": "play"}`, `{"type": "pause"}`, `{"type": "seek", "t": ms}`,
//! `{"type": "speed", "value": x}` (0.01..=100). Outbound (to `window.parent`): `{"type": "ready"}`
//! once, `{"type": "state", "t", "digest", "playing"}` after every command (after a long `seek`,
//! once the seek has arrived) and twice a second while playing, and `{"type": "error", "message"}`. A message of an unexpected shape is answered with
//! an error and never executed. With `origin=a,b` in the link, only messages from those origins
//! are carried out (others are ignored unanswered) and replies are posted to them alone. A `load` of a model whose code the page has not fetched yet waits
//! for it, and the messages after it wait their turn; so do messages that come before the first
//! run (a preset fetched after the first download) is in, and `ready` is said once it is.

use std::cell::RefCell;

use leptos::prelude::*;
use serde_json::{json, Value};

use super::parts;
use super::state::{fmt_ms, Sim};

/// The most JSON a `load` message may carry.
const MAX_LOAD: usize = 1 << 20;

thread_local! {
    /// The origins the embedding page allowed in the link (`None`: any), set when embed mode
    /// starts: replies go only there.
    static ALLOWED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

fn post(v: &Value) {
    let Some(win) = web_sys::window() else { return };
    let Ok(Some(parent)) = win.parent() else { return };
    // The app itself is not embedded: nobody to tell.
    if parent == win {
        return;
    }
    if let Ok(msg) = js_sys::JSON::parse(&v.to_string()) {
        // To the allowed origins only: the browser drops a message whose target origin is not
        // the parent's.
        match ALLOWED.with(|a| a.borrow().clone()) {
            Some(origins) => {
                for o in &origins {
                    let _ = parent.post_message(&msg, o);
                }
            }
            None => {
                let _ = parent.post_message(&msg, "*");
            }
        }
    }
}

/// Whether a message from `origin` may drive this embed.
fn allowed(origin: &str) -> bool {
    ALLOWED.with(|a| a.borrow().as_ref().is_none_or(|list| list.iter().any(|o| o == origin)))
}

fn state(sim: Sim) -> Value {
    json!({"type": "state", "t": sim.peek(|m| m.now()).unwrap_or(0), "digest": sim.digest(), "playing": sim.playing.get_untracked()})
}

fn error(message: impl Into<String>) {
    post(&json!({"type": "error", "message": message.into()}));
}

/// Tells the embedding page that its link could not be shown (see `url::follow`).
pub fn report_error(message: &str) {
    error(message);
}

/// Carries out one inbound message; `Err` says why it was refused.
fn handle(sim: Sim, msg: &Value) -> Result<(), String> {
    let obj = msg.as_object().ok_or("expected an object with a \"type\"")?;
    let kind = obj.get("type").and_then(Value::as_str).ok_or("expected a string \"type\"")?;
    let only = |keys: &[&str]| -> Result<(), String> {
        match obj.keys().find(|k| !keys.contains(&k.as_str())) {
            Some(k) => Err(format!("{kind}: unexpected field {k:?}")),
            None => Ok(()),
        }
    };
    match kind {
        "load" => {
            only(&["type", "scenario"])?;
            let scenario = obj.get("scenario").filter(|s| s.is_object()).ok_or("load: expected \"scenario\": an object")?;
            if scenario.to_string().len() > MAX_LOAD {
                return Err(format!("load: the scenario is larger than {MAX_LOAD} bytes"));
            }
            sim.load_value(scenario.clone(), "embedded scenario").map_err(|e| format!("load: {e}"))?;
            // The page sent what to show: a link refused before no longer stands.
            if sim.embed_refused.get_untracked() {
                sim.embed_refused.set(false);
                sim.link_error.set(None);
            }
            Ok(())
        }
        "play" => {
            only(&["type"])?;
            sim.playing.set(true);
            Ok(())
        }
        "pause" => {
            only(&["type"])?;
            sim.playing.set(false);
            sim.sync_ui();
            Ok(())
        }
        "seek" => {
            only(&["type", "t"])?;
            let t = obj
                .get("t")
                .and_then(Value::as_u64)
                .filter(|t| *t <= 10_000_000_000)
                .ok_or("seek: expected \"t\": milliseconds")?;
            sim.seek(t);
            Ok(())
        }
        "speed" => {
            only(&["type", "value"])?;
            let v = obj
                .get("value")
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite() && (0.01..=100.0).contains(v))
                .ok_or("speed: expected \"value\" from 0.01 to 100")?;
            sim.speed_log.set(super::math::log10(v));
            Ok(())
        }
        other => Err(format!("unknown message type {other:?} (expected load, play, pause, seek or speed)")),
    }
}

thread_local! {
    /// Messages that arrived while a `load` waited for its model's code to be fetched: carried
    /// out in order once it has arrived, so a `load` then `seek` seeks the loaded run.
    static QUEUED: RefCell<Option<Vec<Value>>> = const { RefCell::new(None) };
    /// A `seek` still going on in slices, whose `state` is posted once it has arrived.
    static SEEK_UNANSWERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn receive(sim: Sim, msg: Value) {
    if let Some(msg) = QUEUED.with(|q| match q.borrow_mut().as_mut() {
        Some(queue) => {
            queue.push(msg);
            None
        }
        None => Some(msg),
    }) {
        let needs_fetch =
            msg.get("type").and_then(Value::as_str) == Some("load") && msg.get("scenario").is_some_and(|s| !parts::ready_for(s));
        if !needs_fetch {
            let outcome = handle(sim, &msg);
            // A long seek goes on in slices over the next frames: its `state` is posted when it
            // has arrived (see `serve`), so that the `t` answered is the one asked for, and the
            // messages after it wait their turn as they do behind a `load`.
            if outcome.is_ok() && sim.seeking.get_untracked().is_some() {
                SEEK_UNANSWERED.with(|s| s.set(true));
                QUEUED.with(|q| *q.borrow_mut() = Some(Vec::new()));
                return;
            }
            return reply(outcome, sim);
        }
        QUEUED.with(|q| *q.borrow_mut() = Some(Vec::new()));
        let scenario = msg.get("scenario").cloned().unwrap_or_default();
        parts::when_ready_for(&scenario, move |fetched| {
            reply(fetched.and_then(|()| handle(sim, &msg)), sim);
            for queued in QUEUED.with(|q| q.borrow_mut().take()).unwrap_or_default() {
                receive(sim, queued);
            }
        });
    }
}

fn reply(outcome: Result<(), String>, sim: Sim) {
    match outcome {
        Ok(()) => post(&state(sim)),
        Err(e) => error(e),
    }
}

/// The split point of embed mode (see `ui::lazy`): starts answering the embedding page, and gives
/// the view.
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(embed, fallible))]
pub fn part(sim: Sim) -> Result<fn(NodeRef<leptos::html::Canvas>) -> AnyView, wasm_split_helpers::SplitLoaderError> {
    serve(sim);
    Ok(|canvas| view! { <EmbedView canvas=canvas /> }.into_any())
}

/// Listens for the embedding page's messages and reports the state back.
fn serve(sim: Sim) {
    ALLOWED.with(|a| *a.borrow_mut() = sim.embed_origins.get_value());
    let _ = window_event_listener(leptos::ev::message, move |ev: web_sys::MessageEvent| {
        // A page the link does not allow is not answered at all.
        if !allowed(&ev.origin()) {
            return;
        }
        let data = ev.data();
        let text = js_sys::JSON::stringify(&data).ok().and_then(|s| s.as_string()).unwrap_or_default();
        if text.len() > MAX_LOAD + 1024 {
            error("message too large");
            return;
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(msg) => receive(sim, msg),
            Err(e) => error(e.to_string()),
        }
    });
    // While playing, say where we are twice a second. The interval is cancelled when it is
    // dropped, which is when embed mode's owner is.
    let tick = gloo_timers::callback::Interval::new(500, move || {
        if sim.playing.get_untracked() {
            post(&state(sim));
        }
    });
    StoredValue::new_local(tick);
    // A seek that went on in slices has arrived (or was stopped where it got to): answer it now,
    // then carry out what came after it.
    Effect::new(move |_| {
        if sim.seeking.get().is_some() || !SEEK_UNANSWERED.with(|s| s.replace(false)) {
            return;
        }
        post(&state(sim));
        for queued in QUEUED.with(|q| q.borrow_mut().take()).unwrap_or_default() {
            receive(sim, queued);
        }
    });
    // The first run may still be on its way (a preset's text, a model's code): say `ready` once it
    // is in, and hold the messages that come before.
    QUEUED.with(|q| *q.borrow_mut() = Some(Vec::new()));
    Effect::new(move |ready: Option<bool>| {
        if ready == Some(true) || super::fetching::what().is_some() {
            return ready == Some(true);
        }
        post(&json!({"type": "ready"}));
        post(&state(sim));
        for queued in QUEUED.with(|q| q.borrow_mut().take()).unwrap_or_default() {
            receive(sim, queued);
        }
        true
    });
}

/// The embedded page: canvas, play/pause, time, and a way out to the full app.
#[component]
fn EmbedView(canvas: NodeRef<leptos::html::Canvas>) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let toggle_play = move || sim.toggle_play();
    let now = move || {
        sim.version.track();
        sim.peek(|m| m.now()).unwrap_or(0)
    };
    let full = move || {
        sim.ui_version.track();
        sim.link().map(|l| l.replace("#embed&", "#").replace("#embed", "#")).unwrap_or_else(|_| "#".into())
    };
    // A refused link shows its error alone: no controls, outcome or diagram of another run. The
    // canvas stays in the page (the render loop owns it), hidden.
    let shown = move || !sim.embed_refused.get();
    view! {
        <div class="embed" data-testid="embed">
            <div class="embed-bar" class:hidden=move || !shown()>
                {move || {
                    if sim.playing.get() {
                        view! { <button data-testid="pause" class="primary" on:click=move |_| toggle_play()>"❚❚"</button> }.into_any()
                    } else {
                        view! { <button data-testid="play" class="primary" aria-label="Play" on:click=move |_| toggle_play()>"▶"</button> }.into_any()
                    }
                }}
                <button
                    data-testid="step"
                    aria-label="Step: run the next event"
                    title="Run the next event"
                    on:click=move |_| {
                        sim.playing.set(false);
                        sim.step();
                    }
                >
                    "▸|"
                </button>
                {move || {
                    // The run shown changes when the preset asked for arrives after the page.
                    sim.kind.track();
                    sim.preset.track();
                    sim.source.track();
                    let name = sim.peek(|m| m.name().to_string()).unwrap_or_default();
                    // The whole name on hover, where two lines cut it.
                    let whole = name.clone();
                    view! { <span class="embed-title" data-testid="embed-title" title=whole>{name}</span> }
                }}
                <span
                    class="clock"
                    data-testid="sim-time"
                    data-ms=move || now().to_string()
                    data-run=move || sim.run_id()
                    data-ready=move || sim.ready()
                >{move || fmt_ms(now())}</span>
                <a class="small" href=full target="_blank" rel="noopener">"open in mqviz ↗"</a>
            </div>
            <div class="embed-time" class:hidden=move || !shown()>
                <super::controls::Scrub />
                <super::controls::ChapterMarks />
            </div>
            <Show when=shown>
                <super::outcome::Outcome />
            </Show>
            <div class="canvas-wrap" class:hidden=move || !shown()>
                <canvas data-testid="canvas-topology" node_ref=canvas aria-label="Topology and messages in flight"></canvas>
            </div>
            {move || {
                super::fetching::what()
                    .map(|what| view! { <p class="fetching" role="status" data-testid="fetching">{format!("Loading {what}…")}</p> })
            }}
            {move || sim.load_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            <super::app::LinkError />
        </div>
    }
}
