//! One requestAnimationFrame loop for the whole page: advances simulated time by wall time ×
//! speed while playing (paced by the story when pacing is on, and stopping at the tour's next
//! step), reads the new log entries once, redraws the canvas and the plots at most once per frame,
//! and feeds the `aria-live` region.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::announce;
use super::canvas;
use super::outcome;
use super::plot;
use super::plots::{draw_backlog, draw_consumed};
use super::state::{Sim, DIGEST_FRAME_MS, SLICE_MS};
use super::track::Tracker;

/// Plots redraw at most this often while playing (and always at most once per frame).
const PLOT_INTERVAL_MS: f64 = 100.0;
/// The DOM panels follow the model at most this often while playing.
const UI_INTERVAL_MS: f64 = 100.0;
/// The live region speaks at most this often while playing.
const ANNOUNCE_INTERVAL_MS: f64 = 1500.0;
/// How often the canvas and plots are redrawn while a seek runs.
const SEEK_DRAW_INTERVAL_MS: f64 = 250.0;
/// Frame-time samples kept for `window.__mqvizFrameMs` in bench mode.
const FRAME_SAMPLES: u32 = 4000;

type FrameCallback = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;

/// The canvases the frame loop draws.
#[derive(Clone, Copy)]
pub struct Canvases {
    pub topology: NodeRef<leptos::html::Canvas>,
    /// The second canvas of a side-by-side comparison.
    pub compare: NodeRef<leptos::html::Canvas>,
    pub backlog: NodeRef<leptos::html::Canvas>,
    pub consumed: NodeRef<leptos::html::Canvas>,
}

pub fn prefers_reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-reduced-motion: reduce)").ok().flatten())
        .map(|m| m.matches())
        .unwrap_or(false)
}

pub fn perf_now() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map(|p| p.now()).unwrap_or(0.0)
}

/// Sets `window[name] = value` (figures for the performance test).
pub fn set_global(name: &str, value: &JsValue) {
    if let Some(win) = web_sys::window() {
        let _ = js_sys::Reflect::set(&win, &JsValue::from_str(name), value);
    }
}

/// Says what changed since the last announcement, if anything did, and the outcome when its
/// counts changed (`said_outcome`: the outcome said last).
fn announce_changes(sim: Sim, said_outcome: &RefCell<Option<String>>, playing: bool) {
    let Some(view) = sim.peek(|m| m.view()) else { return };
    let said = sim.announced.with_value(|prev| prev.as_ref().map(|p| announce::changes(p, &view)));
    sim.announced.set_value(Some(view));
    let mut sentences: Vec<String> = said.unwrap_or_default();
    let small = sim.peek(|m| m.log_len()).unwrap_or(0) <= outcome::COUNT_WHILE_PLAYING_MAX_LOG;
    if !playing || small {
        let now = sim.outcome().map(|(text, _)| text);
        if now.is_some() && *said_outcome.borrow() != now {
            sentences.extend(now.iter().map(|t| t.trim_end_matches('.').to_string()));
            *said_outcome.borrow_mut() = now;
        }
    }
    if !sentences.is_empty() {
        sim.announce.set(sentences.join(". ") + ".");
    }
}

pub fn start_loop(sim: Sim, cv: Canvases, bench: bool) {
    let reduced = prefers_reduced_motion();
    let last_ts: Rc<Cell<Option<f64>>> = Rc::new(Cell::new(None));
    let carry = Rc::new(Cell::new(0.0f64));
    let clock = Rc::new(Cell::new(0.0f64));
    let drawn_version = Rc::new(Cell::new(u64::MAX));
    let busy = Rc::new(Cell::new(false));
    // What the plots last showed: (series version, epoch, model time, plot code version) and when.
    let plotted = Rc::new(Cell::new(((u64::MAX, 0u64, 0, 0u32), f64::MIN)));
    let first = Rc::new(Cell::new(false));
    let last_sync = Rc::new(Cell::new(f64::MIN));
    let last_announce = Rc::new(Cell::new(f64::MIN));
    let last_seek_draw = Rc::new(Cell::new(f64::MIN));
    let draw_owed = Rc::new(Cell::new(false));
    let announced_version = Rc::new(Cell::new(u64::MAX));
    let said_outcome = Rc::new(RefCell::new(None::<String>));
    // The canvas last drawn on: one mounted later (embed mode and the comparison are fetched
    // parts) is drawn at once, not on the next change of the model.
    let drawn_canvas: Rc<RefCell<Option<web_sys::HtmlCanvasElement>>> = Rc::new(RefCell::new(None));
    let tracker = Rc::new(RefCell::new(Tracker::default()));
    let compare_tracker = Rc::new(RefCell::new(Tracker::default()));
    let frames = Rc::new(Cell::new(0u64));
    // A window resize changes canvas sizes: everything is redrawn on the next frame.
    let resized = RwSignal::new(0u32);
    let _ = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n = n.wrapping_add(1)));
    let seen_resize = Rc::new(Cell::new(0u32));
    // The topology canvas's box when last looked at: it changes without a window resize when
    // what is around it does (a model's stage pictures arriving, a comparison opening), and a
    // canvas not redrawn then shows its old bitmap squeezed or cut.
    let seen_box = Rc::new(Cell::new((0i32, 0i32)));
    let samples = js_sys::Array::new();
    if bench {
        set_global("__mqvizFrameMs", &samples);
    }
    let cb: FrameCallback = Rc::new(RefCell::new(None));
    let cb2 = cb.clone();
    *cb.borrow_mut() = Some(Closure::new(move |ts: f64| {
        let t0 = perf_now();
        let synced_before = sim.ui_version.get_untracked();
        frames.set(frames.get().wrapping_add(1));
        let prev = last_ts.replace(Some(ts));
        let dt = prev.map(|p| mqviz_engine::decimal::clamp(ts - p, 0.0, 100.0)).unwrap_or(0.0);
        let seeking = sim.seeking.get_untracked();
        let playing = sim.playing.get_untracked() && seeking.is_none();
        if let Some(job) = seeking {
            sim.seek_slices(job, SLICE_MS, false);
        } else if playing {
            let now = sim.peek(|m| m.now()).unwrap_or(0);
            let speed = sim.speed();
            let paced = if sim.pacing.get_untracked() {
                sim.story.with_value(|s| s.as_ref().map(|s| s.paced_advance(now, speed, dt)))
            } else {
                None
            };
            // Say it when Pace plays at another speed than the one chosen (rounded, so the label
            // does not flicker from frame to frame).
            let shown = paced.filter(|_| dt > 0.0).map(|p| p / dt).and_then(|eff| {
                let off = eff < speed * 0.5 || eff > speed * 2.0;
                off.then(|| (super::math::log10(eff.max(1e-4)) * 2.0).round() / 2.0)
            });
            if sim.paced_log.get_untracked() != shown {
                sim.paced_log.set(shown);
            }
            let adv = paced.unwrap_or(dt * speed) + carry.get();
            let whole = adv.floor();
            carry.set(adv - whole);
            let until = sim.until();
            // A running tour stops at its next step.
            let stop_at = sim.tour.with_untracked(|t| {
                t.as_ref().and_then(|t| {
                    t.pinned.get(t.step.map(|s| s + 1).unwrap_or(0)).map(|p| (p.at, t.step.map(|s| s + 1).unwrap_or(0)))
                })
            });
            let mut target = now + whole as u64;
            // The story ends at `until`: playback pauses there once, and Play goes on past it.
            let mut story_end = false;
            if now < until && target >= until {
                target = until;
                story_end = true;
            }
            let mut reached = None;
            if let Some((at, k)) = stop_at {
                if target >= at {
                    target = at;
                    reached = Some(k);
                }
            }
            sim.advance(target);
            if let Some(k) = reached {
                sim.playing.set(false);
                sim.tour.update(|t| {
                    if let Some(t) = t {
                        t.step = Some(k);
                    }
                });
                sim.sync_ui();
            } else if story_end {
                sim.playing.set(false);
                sim.sync_ui();
            } else if ts - last_sync.get() >= UI_INTERVAL_MS {
                last_sync.set(ts);
                sim.sync_ui();
            }
        } else {
            carry.set(0.0);
            if sim.paced_log.get_untracked().is_some() {
                sim.paced_log.set(None);
            }
            // While the time bar's handle is held, its positions are passing states: the panels
            // catch up when it is let go (`Sim::hold_scrub`). Measured on a drag over 1 M
            // messages, panels synced here each frame cost 3.2 s of the drag's 7.5 s of work,
            // counting totals for the outcome line.
            if !sim.scrub_held() {
                sim.sync_ui();
            }
        }
        let animate = playing && !reduced;
        if animate {
            clock.set(clock.get() + dt);
        }
        let v = sim.version.get_untracked();
        let epoch = sim.epoch.get_value();
        let rz = resized.get_untracked();
        let resize_now = seen_resize.replace(rz) != rz;
        // While a seek runs, the pictures catch up a few times a second and the frames' time goes
        // to the seek (the progress bar and the clock follow every frame).
        let seek_on = sim.seeking.get_untracked().is_some();
        // A drag on the time bar: its positions are passing states, like a seek's.
        let scrubbing = sim.scrub_held();
        let hold = seek_on && !resize_now && ts - last_seek_draw.get() < SEEK_DRAW_INTERVAL_MS;
        if seek_on && !hold {
            last_seek_draw.set(ts);
        }
        let canvas_now = cv.topology.get_untracked();
        let canvas_box = canvas_now.as_ref().map_or((0, 0), |c| (c.client_width(), c.client_height()));
        let new_canvas = *drawn_canvas.borrow() != canvas_now;
        if new_canvas {
            *drawn_canvas.borrow_mut() = canvas_now;
        }
        let resized_box = seen_box.replace(canvas_box) != canvas_box;
        let resize_now = resize_now || new_canvas || resized_box;
        let mut t = tracker.borrow_mut();
        let mut dots = None;
        sim.model.with_value(|m| {
            let Some(m) = m else { return };
            if v != drawn_version.get()
                || animate
                || resize_now
                || busy.get()
                || (!hold && draw_owed.get())
                || canvas::wants_redraw()
            {
                // The tracker takes in every frame's new log entries, held or not: saved up for
                // a quarter second of seeking, they made one frame several times too long.
                t.update(&**m, epoch, animate.then(|| (clock.get(), sim.speed())));
                draw_owed.set(hold);
                if hold {
                    return;
                }
                if let Some(el) = cv.topology.get_untracked() {
                    let describe = !playing || frames.get() % 8 == 0;
                    let d = canvas::draw(&el, 0, &**m, &t, clock.get(), ts, describe);
                    busy.set(d.busy);
                    dots = Some(d.dots);
                }
            }
        });
        if sim.comparing.get_untracked() && (v != drawn_version.get() || animate || resize_now || !hold) {
            let mut ct = compare_tracker.borrow_mut();
            sim.compare.with_value(|c| {
                let Some(c) = c else { return };
                ct.update(&*c.model, epoch, animate.then(|| (clock.get(), sim.speed())));
                if hold {
                    return;
                }
                if let Some(el) = cv.compare.get_untracked() {
                    let d = canvas::draw(&el, 1, &*c.model, &ct, clock.get(), ts, !playing || frames.get() % 8 == 0);
                    let _ = el.set_attribute("data-dots", &d.dots.to_string());
                }
            });
        }
        drawn_version.set(v);
        let (shown, pts) = plotted.get();
        let now = sim.peek(|m| m.now()).unwrap_or(0);
        // The plots' code arriving (`plot::version`) counts as new data: they were blank until then.
        let wanted = (t.series_version, epoch, now, plot::version_untracked());
        if resize_now || (!hold && wanted != shown && (!playing || ts - pts >= PLOT_INTERVAL_MS)) {
            let noun = format!("{}s", sim.peek(|m| m.partition_noun()).unwrap_or("partition"));
            if let Some(el) = cv.backlog.get_untracked() {
                draw_backlog(&el, &t, now, &noun);
            }
            if let Some(el) = cv.consumed.get_untracked() {
                draw_consumed(&el, &t, now);
            }
            plotted.set((wanted, ts));
        }
        drop(t);
        // The live region: on every change while paused, at most every 1.5 s while playing.
        // A seek's or a drag's intermediate states are not announced: only where it ends.
        // Not in the frame that brought the panels up to date: the outcome is counted in the next.
        let synced_now = sim.ui_version.get_untracked() != synced_before;
        if !seek_on
            && !scrubbing
            && !synced_now
            && announced_version.get() != v
            && (!playing || ts - last_announce.get() >= ANNOUNCE_INTERVAL_MS)
        {
            announced_version.set(v);
            last_announce.set(ts);
            announce_changes(sim, &said_outcome, playing);
        }
        if let Some(n) = dots {
            // The first frame of what was asked for: not of the default run shown while a
            // link's or a preset's code or text is still on its way.
            if !first.get() && super::fetching::what().is_none() {
                first.set(true);
                set_global("__mqvizFirstFrame", &JsValue::from_f64(perf_now()));
            }
            if let Some(el) = cv.topology.get_untracked() {
                let _ = el.set_attribute("data-dots", &n.to_string());
            }
        }
        // A long seek leaves many log lines to hash before the digest can show: a slice a frame,
        // but not in the frames that bring the panels and the outcome up to date.
        let counting = synced_now || sim.outcome_pending.get_untracked();
        if sim.seeking.get_untracked().is_none() && !scrubbing && !counting && sim.digest_shown.get_untracked().is_none() {
            sim.fold_digest(DIGEST_FRAME_MS);
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
