//! Page layout, top bar, the animation loop and keyboard shortcuts.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::canvas::{draw, message_at};
use super::inspector::Inspector;
use super::models;
use super::plots::{draw_backlog, draw_consumed};
use super::state::{fmt_ms, Sim, PRESETS};
use super::track::Tracker;

fn prefers_reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-reduced-motion: reduce)").ok().flatten())
        .map(|m| m.matches())
        .unwrap_or(false)
}

fn speed_label(log: f64) -> String {
    let s = 10f64.powf(log);
    if s >= 1.0 {
        format!("{}×", (s * 10.0).round() / 10.0)
    } else {
        format!("1/{}×", (1.0 / s).round())
    }
}

type FrameCallback = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;

/// The canvases the frame loop draws.
#[derive(Clone, Copy)]
struct Canvases {
    topology: NodeRef<leptos::html::Canvas>,
    backlog: NodeRef<leptos::html::Canvas>,
    consumed: NodeRef<leptos::html::Canvas>,
}

fn perf_now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map(|p| p.now()).unwrap_or(0.0)
}

/// Sets `window[name] = value` (figures for the performance test).
fn set_global(name: &str, value: &JsValue) {
    if let Some(win) = web_sys::window() {
        let _ = js_sys::Reflect::set(&win, &JsValue::from_str(name), value);
    }
}

/// Plots redraw at most this often while playing (and always at most once per frame).
const PLOT_INTERVAL_MS: f64 = 100.0;
/// The DOM panels follow the World at most this often while playing.
const UI_INTERVAL_MS: f64 = 100.0;
/// Frame-time samples kept for `window.__mqvizFrameMs` in bench mode.
const FRAME_SAMPLES: u32 = 4000;

/// One requestAnimationFrame loop for the whole page: advances simulated time by wall time ×
/// speed while playing, reads the new log entries once, and redraws the canvas and the plots
/// at most once per frame.
fn start_loop(sim: Sim, cv: Canvases, bench: bool) {
    let reduced = prefers_reduced_motion();
    let last_ts: Rc<Cell<Option<f64>>> = Rc::new(Cell::new(None));
    let carry = Rc::new(Cell::new(0.0f64));
    let clock = Rc::new(Cell::new(0.0f64));
    let drawn_version = Rc::new(Cell::new(u64::MAX));
    let plotted = Rc::new(Cell::new((u64::MAX, 0u64, f64::MIN)));
    let first = Rc::new(Cell::new(false));
    let last_sync = Rc::new(Cell::new(f64::MIN));
    let tracker = Rc::new(RefCell::new(Tracker::default()));
    // A window resize changes canvas sizes: everything is redrawn on the next frame.
    let resized = RwSignal::new(0u32);
    let _ = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n = n.wrapping_add(1)));
    let seen_resize = Rc::new(Cell::new(0u32));
    let samples = js_sys::Array::new();
    if bench {
        set_global("__mqvizFrameMs", &samples);
    }
    let cb: FrameCallback = Rc::new(RefCell::new(None));
    let cb2 = cb.clone();
    *cb.borrow_mut() = Some(Closure::new(move |ts: f64| {
        let t0 = perf_now();
        let prev = last_ts.replace(Some(ts));
        let dt = prev.map(|p| (ts - p).clamp(0.0, 100.0)).unwrap_or(0.0);
        let playing = sim.playing.get_untracked();
        if playing {
            let adv = dt * sim.speed() + carry.get();
            let whole = adv.floor();
            carry.set(adv - whole);
            let until = sim.until();
            let done = sim
                .mutate(|m| {
                    let target = (m.now() + whole as u64).min(until);
                    m.run_until(target);
                    m.now() >= until
                })
                .unwrap_or(true);
            if done {
                sim.playing.set(false);
                sim.sync_ui();
            } else if ts - last_sync.get() >= UI_INTERVAL_MS {
                last_sync.set(ts);
                sim.sync_ui();
            }
        } else {
            carry.set(0.0);
            sim.sync_ui();
        }
        let animate = playing && !reduced;
        if animate {
            clock.set(clock.get() + dt);
        }
        let v = sim.version.get_untracked();
        let epoch = sim.epoch.get_value();
        let rz = resized.get_untracked();
        let resize_now = seen_resize.replace(rz) != rz;
        let mut t = tracker.borrow_mut();
        let mut dots = None;
        sim.model.with_value(|m| {
            let Some(m) = m else { return };
            if v != drawn_version.get() || animate || resize_now {
                t.update(&**m, epoch, animate.then(|| (clock.get(), sim.speed())));
                if let Some(el) = cv.topology.get_untracked() {
                    dots = Some(draw(&el, &**m, &t, clock.get()));
                }
            }
        });
        drawn_version.set(v);
        let (pv, pe, pts) = plotted.get();
        if resize_now || ((t.series_version != pv || epoch != pe) && (!playing || ts - pts >= PLOT_INTERVAL_MS)) {
            if let Some(el) = cv.backlog.get_untracked() {
                draw_backlog(&el, &t);
            }
            if let Some(el) = cv.consumed.get_untracked() {
                draw_consumed(&el, &t);
            }
            plotted.set((t.series_version, epoch, ts));
        }
        drop(t);
        if let Some(n) = dots {
            if !first.replace(true) {
                set_global("__mqvizFirstFrame", &JsValue::from_f64(perf_now()));
            }
            if bench {
                if let Some(el) = cv.topology.get_untracked() {
                    let _ = el.set_attribute("data-dots", &n.to_string());
                }
            }
        }
        if bench && samples.length() < FRAME_SAMPLES {
            samples.push(&JsValue::from_f64(perf_now() - t0));
        }
        if let (Some(win), Some(f)) = (web_sys::window(), cb2.borrow().as_ref()) {
            let _ = win.request_animation_frame(f.as_ref().unchecked_ref());
        }
    }));
    if let (Some(win), Some(f)) = (web_sys::window(), cb.borrow().as_ref()) {
        let _ = win.request_animation_frame(f.as_ref().unchecked_ref());
    };
}

#[component]
pub fn App() -> impl IntoView {
    let sim = Sim::new();
    provide_context(sim);
    let canvas: NodeRef<leptos::html::Canvas> = NodeRef::new();
    // 0 = Inspector, i + 1 = the model's extra tab i.
    let tab = RwSignal::new(0usize);
    let cv = Canvases { topology: canvas, backlog: NodeRef::new(), consumed: NodeRef::new() };
    // The URL fragment is a shareable link (`#preset=<file>&t=<ms>&speed=<x>`, or `#bench` for
    // the generated load scenario played at 1×); a bad one is reported with its column.
    let link = web_sys::window().and_then(|w| w.location().hash().ok()).map(|h| crate::sim::link::parse_fragment(&h));
    let bench = matches!(&link, Some(Ok(l)) if l.bench);
    match link {
        Some(Ok(l)) if l.bench => {
            sim.load_bench();
            sim.speed_log.set(0.0);
            sim.playing.set(true);
        }
        Some(Ok(l)) => {
            if let Some(i) = l.preset.and_then(|f| super::state::PRESETS.iter().position(|p| p.file == f)) {
                sim.load(i);
            }
            if let Some(speed) = l.speed {
                sim.speed_log.set(speed.log10());
            }
            if let Some(t) = l.time {
                sim.mutate(|m| {
                    let t = t.min(m.until());
                    m.run_until(t);
                });
            }
        }
        Some(Err(e)) => sim.load_error.set(Some(e.to_string())),
        None => {}
    }

    Effect::new(move |prev: Option<()>| {
        if prev.is_none() {
            start_loop(sim, cv, bench);
        }
    });

    // Clicking a message cell on the canvas shows that message's provenance.
    let on_canvas_click = move |ev: leptos::ev::MouseEvent| {
        let Some(msg) = message_at(ev.offset_x() as f64, ev.offset_y() as f64) else { return };
        let first = sim.peek(|m| m.provenance(msg).first().copied()).flatten();
        if let Some(id) = first {
            sim.selected.set(Some(id as u32));
        }
    };

    let toggle_play = move || {
        if sim.playing.get_untracked() {
            sim.playing.set(false);
            sim.sync_ui();
        } else if !sim.at_end() {
            sim.playing.set(true);
        }
    };

    let _keys = window_event_listener(leptos::ev::keydown, move |ev| {
        let in_field = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .map(|e| matches!(e.tag_name().to_ascii_lowercase().as_str(), "input" | "select" | "textarea"))
            .unwrap_or(false);
        if in_field || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
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
            "End" => {
                ev.prevent_default();
                sim.run_to_end();
            }
            "?" => sim.show_help.update(|h| *h = !*h),
            "Escape" => sim.show_help.set(false),
            _ => {}
        }
    });

    let description = move || {
        sim.preset.track();
        sim.peek(|m| m.description().to_string()).unwrap_or_default()
    };
    let title = move || {
        sim.preset.track();
        sim.peek(|m| m.name().to_string()).unwrap_or_default()
    };
    // The clock follows every frame (one text node).
    let sim_now = move || {
        sim.version.track();
        sim.peek(|m| m.now()).unwrap_or(0)
    };
    let until_ms = move || {
        sim.version.track();
        sim.until()
    };

    view! {
        <div class="app">
            <header class="topbar">
                <span class="brand">"mqviz"</span>
                <label class="field">
                    <span class="sr-only">"Scenario"</span>
                    <select
                        data-testid="preset-select"
                        title="Scenario preset"
                        on:change=move |ev| {
                            if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                                sim.load(i);
                            }
                        }
                    >
                        {PRESETS
                            .iter()
                            .enumerate()
                            .map(|(i, p)| {
                                view! {
                                    <option value=i.to_string() data-file=p.file selected=move || sim.preset.get() == i>
                                        {p.label}
                                    </option>
                                }
                            })
                            .collect_view()}
                    </select>
                </label>
                <div class="buttons">
                    {move || {
                        if sim.playing.get() {
                            view! {
                                <button data-testid="pause" class="primary" title="Pause (space)" on:click=move |_| toggle_play()>
                                    "❚❚ Pause"
                                </button>
                            }
                                .into_any()
                        } else {
                            view! {
                                <button
                                    data-testid="play"
                                    class="primary"
                                    title="Play (space)"
                                    disabled=move || sim.at_end()
                                    on:click=move |_| toggle_play()
                                >
                                    "▶ Play"
                                </button>
                            }
                                .into_any()
                        }
                    }}
                    <button
                        data-testid="step-back"
                        title="Back to the previous instant (←): restores a checkpoint and replays"
                        disabled=move || sim.now() == 0
                        on:click=move |_| sim.step_back()
                    >
                        "◂ Back"
                    </button>
                    <button
                        data-testid="step"
                        title="Run the next event (→)"
                        disabled=move || sim.at_end()
                        on:click=move |_| {
                            sim.playing.set(false);
                            sim.step();
                        }
                    >
                        "Step ▸"
                    </button>
                    <button data-testid="reset" title="Reload the scenario at t=0" on:click=move |_| sim.load(sim.preset.get_untracked())>
                        "↺ Reset"
                    </button>
                </div>
                <label class="speed field" title="Simulation speed (log scale)">
                    <span>"Speed"</span>
                    <input
                        type="range"
                        data-testid="speed"
                        min="-2"
                        max="2"
                        step="0.1"
                        prop:value=move || sim.speed_log.get().to_string()
                        on:input=move |ev| {
                            if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                                sim.speed_log.set(v.clamp(-2.0, 2.0));
                            }
                        }
                    />
                    <output class="speed-label">{move || speed_label(sim.speed_log.get())}</output>
                </label>
                <input
                    class="scrub"
                    type="range"
                    data-testid="scrub"
                    title="Scrub simulated time (backwards restores a checkpoint and replays)"
                    aria-label="Simulated time"
                    min="0"
                    max=move || until_ms().to_string()
                    step="100"
                    prop:value=move || sim_now().to_string()
                    on:input=move |ev| {
                        if let Ok(t) = event_target_value(&ev).parse::<u64>() {
                            sim.seek(t);
                        }
                    }
                />
                <span
                    class="clock"
                    data-testid="sim-time"
                    data-ms=move || sim_now().to_string()
                    data-until=move || until_ms().to_string()
                    data-at-end=move || (sim_now() >= until_ms()).to_string()
                >
                    {move || format!("t = {} / {}", fmt_ms(sim_now()), fmt_ms(until_ms()))}
                </span>
                <button class="help-btn" title="Keyboard shortcuts (?)" on:click=move |_| sim.show_help.update(|h| *h = !*h)>
                    "?"
                </button>
            </header>
            <section class="explain">
                <h1>{title}</h1>
                <p>
                    <strong>"What to watch: "</strong>
                    {description}
                </p>
                {move || sim.load_error.get().map(|e| view! { <p class="error">{e}</p> })}
            </section>
            <aside class="panel editor-panel">
                {move || models::editor(sim.kind.get())}
            </aside>
            <main class="stage">
                <canvas
                    data-testid="canvas-topology"
                    node_ref=canvas
                    on:click=on_canvas_click
                    title="Click a message cell to see its provenance"
                    aria-label="Producers, broker queues, consumers, assignment and messages in flight"
                ></canvas>
                <div class="legend">
                    <span><i class="sw stored"></i>"stored"</span>
                    <span><i class="sw committed"></i>"committed offset"</span>
                    <span><i class="sw edge"></i>"assignment"</span>
                    <span><i class="sw unowned"></i>"unowned queue"</span>
                    <span><i class="dot d-stored"></i>"sent"</span>
                    <span><i class="dot d-consumed"></i>"consumed"</span>
                    <span><i class="dot d-broker"></i>"dropped by broker tag filter"</span>
                    <span><i class="dot d-client"></i>"dropped by client tag filter"</span>
                </div>
                <div class="plots">
                    <canvas data-testid="plot-backlog" node_ref=cv.backlog aria-label="Backlog per queue over time"></canvas>
                    <canvas data-testid="plot-consumed" node_ref=cv.consumed aria-label="Consumed per second per consumer"></canvas>
                </div>
            </main>
            <aside class="panel inspector-panel">
                <div class="tabs" role="tablist">
                    <button
                        role="tab"
                        data-testid="tab-inspector"
                        class:active=move || tab.get() == 0
                        aria-selected=move || (tab.get() == 0).to_string()
                        on:click=move |_| tab.set(0)
                    >
                        "Inspector"
                    </button>
                    {move || {
                        models::tabs(sim.kind.get())
                            .iter()
                            .enumerate()
                            .map(|(i, t)| {
                                view! {
                                    <button
                                        role="tab"
                                        data-testid=t.testid
                                        class:active=move || tab.get() == i + 1
                                        aria-selected=move || (tab.get() == i + 1).to_string()
                                        on:click=move |_| tab.set(i + 1)
                                    >
                                        {t.label}
                                    </button>
                                }
                            })
                            .collect_view()
                    }}
                </div>
                <div class="tab-body" class:hidden=move || tab.get() != 0>
                    <Inspector />
                </div>
                {move || {
                    let kind = sim.kind.get();
                    (0..models::tabs(kind).len())
                        .map(|i| {
                            let visible = Signal::derive(move || tab.get() == i + 1);
                            view! {
                                <div class="tab-body" class:hidden=move || tab.get() != i + 1>
                                    {models::tab_body(kind, i, visible)}
                                </div>
                            }
                        })
                        .collect_view()
                }}
            </aside>
            <Show when=move || sim.show_help.get()>
                <div class="help" role="dialog" aria-label="Keyboard shortcuts" data-testid="shortcuts">
                    <h2>"Keyboard shortcuts"</h2>
                    <dl>
                        <dt><kbd>"Space"</kbd></dt>
                        <dd>"Play / pause"</dd>
                        <dt><kbd>"→"</kbd></dt>
                        <dd>"Run the next event"</dd>
                        <dt><kbd>"←"</kbd></dt>
                        <dd>"Back to the previous instant (checkpoint + replay)"</dd>
                        <dt><kbd>"End"</kbd></dt>
                        <dd>"Run to the end of the scenario"</dd>
                        <dt><kbd>"?"</kbd></dt>
                        <dd>"Show / hide this panel"</dd>
                    </dl>
                    <button on:click=move |_| sim.show_help.set(false)>"Close"</button>
                </div>
            </Show>
        </div>
    }
}
