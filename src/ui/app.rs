//! Page layout, top bar, the animation loop and keyboard shortcuts.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::canvas::draw;
use super::editor::Editor;
use super::inspector::Inspector;
use super::state::{fmt_ms, Sim, PRESETS};

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

/// One requestAnimationFrame loop for the whole page: advances simulated time by wall time ×
/// speed while playing, and redraws the canvas at most once per frame.
fn start_loop(sim: Sim, canvas: NodeRef<leptos::html::Canvas>) {
    let reduced = prefers_reduced_motion();
    let last_ts: Rc<Cell<Option<f64>>> = Rc::new(Cell::new(None));
    let carry = Rc::new(Cell::new(0.0f64));
    let drawn_version = Rc::new(Cell::new(u64::MAX));
    let cb: FrameCallback = Rc::new(RefCell::new(None));
    let cb2 = cb.clone();
    *cb.borrow_mut() = Some(Closure::new(move |ts: f64| {
        let prev = last_ts.replace(Some(ts));
        if sim.playing.get_untracked() {
            let dt = prev.map(|p| (ts - p).clamp(0.0, 100.0)).unwrap_or(0.0);
            let adv = dt * sim.speed() + carry.get();
            let whole = adv.floor();
            carry.set(adv - whole);
            let until = sim.until();
            let done = sim
                .mutate(|w| {
                    let target = (w.now + whole as u64).min(until);
                    w.run_until(target);
                    w.now >= until
                })
                .unwrap_or(true);
            if done {
                sim.playing.set(false);
            }
        } else {
            carry.set(0.0);
        }
        let v = sim.version.get_untracked();
        let animate = sim.playing.get_untracked() && !reduced;
        if v != drawn_version.get() || animate {
            drawn_version.set(v);
            if let Some(el) = canvas.get_untracked() {
                sim.world.with_value(|w| {
                    if let Some(w) = w {
                        draw(&el, w, if animate { Some(ts) } else { None });
                    }
                });
            }
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

    Effect::new(move |prev: Option<()>| {
        if prev.is_none() {
            start_loop(sim, canvas);
        }
    });

    let toggle_play = move || {
        if sim.playing.get_untracked() {
            sim.playing.set(false);
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
        sim.peek(|w| w.scenario.description.clone()).unwrap_or_default()
    };
    let title = move || {
        sim.preset.track();
        sim.peek(|w| w.scenario.name.clone()).unwrap_or_default()
    };
    let now_ms = move || sim.read(|w| w.now).unwrap_or(0);
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
                <span
                    class="clock"
                    data-testid="sim-time"
                    data-ms=move || now_ms().to_string()
                    data-until=move || until_ms().to_string()
                    data-at-end=move || (now_ms() >= until_ms()).to_string()
                >
                    {move || format!("t = {} / {}", fmt_ms(now_ms()), fmt_ms(until_ms()))}
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
                <Editor />
            </aside>
            <main class="stage">
                <canvas data-testid="canvas-topology" node_ref=canvas aria-label="Broker queues and consumer assignment"></canvas>
                <div class="legend">
                    <span><i class="sw stored"></i>"stored"</span>
                    <span><i class="sw committed"></i>"committed offset"</span>
                    <span><i class="sw edge"></i>"assignment"</span>
                    <span><i class="sw unowned"></i>"unowned queue"</span>
                </div>
            </main>
            <aside class="panel inspector-panel">
                <Inspector />
            </aside>
            <Show when=move || sim.show_help.get()>
                <div class="help" role="dialog" aria-label="Keyboard shortcuts" data-testid="shortcuts">
                    <h2>"Keyboard shortcuts"</h2>
                    <dl>
                        <dt><kbd>"Space"</kbd></dt>
                        <dd>"Play / pause"</dd>
                        <dt><kbd>"→"</kbd></dt>
                        <dd>"Run the next event"</dd>
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
