//! The guided-tour player: a start button next to the scenario's title, and a caption of one
//! sentence placed next to what the step highlights (a canvas element, or a panel that gets an
//! outline), with previous / next / end controls. Playing on stops at the next step by itself.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::canvas;
use super::state::Sim;

/// "Take the tour", shown when the loaded preset has one.
#[component]
pub fn TourStart() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let has_tour = move || {
        sim.preset.track();
        sim.kind.track();
        sim.preset_file().and_then(super::presets::tour).map(|t| t.title)
    };
    view! {
        {move || {
            has_tour()
                .map(|title| {
                    view! {
                        <button
                            class="tour-btn"
                            data-testid="tour-start"
                            title=format!("Guided tour: {title}")
                            on:click=move |_| sim.start_tour()
                        >
                            "▶ Take the tour"
                        </button>
                    }
                })
        }}
    }
}

/// Marks the panel a step points at; clears the previous one. Returns the panel.
fn mark_panel(testid: Option<&str>) -> Option<web_sys::Element> {
    let doc = document();
    if let Ok(list) = doc.query_selector_all(".tour-target") {
        for i in 0..list.length() {
            if let Some(el) = list.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) {
                let _ = el.class_list().remove_1("tour-target");
            }
        }
    }
    let el = doc.query_selector(&format!("[data-testid=\"{}\"]", testid?)).ok().flatten()?;
    let _ = el.class_list().add_1("tour-target");
    Some(el)
}

/// A rectangle in viewport pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Box2 {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Box2 {
    fn of(el: &web_sys::Element) -> Box2 {
        let r = el.get_bounding_client_rect();
        Box2 { x: r.x(), y: r.y(), w: r.width(), h: r.height() }
    }
    fn right(&self) -> f64 {
        self.x + self.w
    }
    fn bottom(&self) -> f64 {
        self.y + self.h
    }
    fn overlap(&self, o: &Box2) -> f64 {
        let w = (self.right().min(o.right()) - self.x.max(o.x)).max(0.0);
        let h = (self.bottom().min(o.bottom()) - self.y.max(o.y)).max(0.0);
        w * h
    }
}

/// Margin kept between the caption and the viewport's edges, and between it and its target.
const EDGE: f64 = 8.0;
const GAP: f64 = 10.0;

/// Where a caption of `size` goes beside `target` in a viewport of `view` (w, h): the first of
/// below, right, left and above where it fits whole without touching the target; else the
/// place, kept inside the viewport, that covers the least of it.
fn place(target: Box2, size: (f64, f64), view: (f64, f64)) -> (f64, f64) {
    let (cw, ch) = size;
    let (vw, vh) = view;
    let clamp_x = |x: f64| x.min(vw - cw - EDGE).max(EDGE);
    let clamp_y = |y: f64| y.min(vh - ch - EDGE).max(EDGE);
    let candidates = [
        (clamp_x(target.x), target.bottom() + GAP),
        (target.right() + GAP, clamp_y(target.y)),
        (target.x - GAP - cw, clamp_y(target.y)),
        (clamp_x(target.x), target.y - GAP - ch),
    ];
    let fits = |&(x, y): &(f64, f64)| x >= EDGE && y >= EDGE && x + cw <= vw - EDGE && y + ch <= vh - EDGE;
    if let Some(&p) = candidates.iter().find(|p| fits(p)) {
        return p;
    }
    // No side has room: inside the viewport, covering as little of the target as can be.
    let inside = candidates.map(|(x, y)| (clamp_x(x), clamp_y(y)));
    let corners = [(EDGE, EDGE), (vw - cw - EDGE, EDGE), (EDGE, vh - ch - EDGE), (vw - cw - EDGE, vh - ch - EDGE)];
    let cover = |&(x, y): &(f64, f64)| Box2 { x, y, w: cw, h: ch }.overlap(&target);
    inside
        .into_iter()
        .chain(corners.map(|(x, y)| (x.max(EDGE), y.max(EDGE))))
        .min_by(|a, b| cover(a).total_cmp(&cover(b)))
        .unwrap_or((EDGE, EDGE))
}

/// The caption's size as rendered (a first guess before it is).
fn caption_size() -> (f64, f64) {
    let caption = document().query_selector("[data-testid=tour-caption]").ok().flatten();
    let size = caption.as_ref().map(|c| (c.client_width() as f64, c.client_height() as f64)).filter(|s| s.0 > 0.0);
    size.unwrap_or((340.0, 120.0))
}

fn viewport() -> (f64, f64) {
    let win = web_sys::window();
    let dim = |v: Option<Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>>| v.and_then(Result::ok).and_then(|v| v.as_f64());
    let w = dim(win.as_ref().map(|w| w.inner_width())).unwrap_or(1280.0);
    let h = dim(win.as_ref().map(|w| w.inner_height())).unwrap_or(800.0);
    (w, h)
}

/// Scrolls `el` so that `target` (its part the step is about) is on screen, if it is not.
/// True when it asked for a scroll.
fn bring_on_screen(el: &web_sys::Element, target: Box2) -> bool {
    let (_, vh) = viewport();
    if target.y >= 0.0 && target.bottom() <= vh {
        return false;
    }
    let opts = web_sys::ScrollIntoViewOptions::new();
    // A target taller than the screen starts at its top; a smaller one is centred.
    opts.set_block(if target.h > vh { web_sys::ScrollLogicalPosition::Start } else { web_sys::ScrollLogicalPosition::Center });
    el.scroll_into_view_with_scroll_into_view_options(&opts);
    true
}

/// The split point of the tour player (see `ui::lazy`): shown while a tour runs.
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(tour, fallible))]
pub fn player() -> Result<fn(()) -> AnyView, wasm_split_helpers::SplitLoaderError> {
    Ok(|()| view! { <TourCaption /> }.into_any())
}

/// The caption bubble, positioned over the canvas wrapper next to the highlighted element.
#[component]
fn TourCaption() -> impl IntoView {
    let sim = expect_context::<Sim>();
    // The player leaves with the tour, whichever way it ends (a preset chosen meanwhile too):
    // take its marks along.
    on_cleanup(|| {
        canvas::set_highlight(None);
        mark_panel(None);
    });
    // (left, top) in viewport px (the caption is fixed), and the target's box it was placed
    // beside, computed after the canvas has drawn.
    let pos = RwSignal::new((12.0f64, 12.0f64));
    let placed_beside = RwSignal::new(None::<Box2>);
    // Scrolling or resizing moves the target: the caption follows it.
    let moved = RwSignal::new(0u32);
    let _ = window_event_listener(leptos::ev::resize, move |_| moved.update(|n| *n = n.wrapping_add(1)));
    let scroll = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || moved.update(|n| *n = n.wrapping_add(1)));
    let listen = web_sys::AddEventListenerOptions::new();
    listen.set_capture(true);
    listen.set_passive(true);
    let _ = window().add_event_listener_with_callback_and_add_event_listener_options(
        "scroll",
        scroll.as_ref().unchecked_ref(),
        &listen,
    );
    let scroll = StoredValue::new_local(scroll);
    on_cleanup(move || {
        scroll.with_value(|cb| {
            let _ = window().remove_event_listener_with_callback_and_bool("scroll", cb.as_ref().unchecked_ref(), true);
        })
    });
    let step = move || {
        sim.tour.with(|t| {
            t.as_ref().and_then(|t| {
                let k = t.step?;
                let s = t.tour.steps.get(k)?;
                Some((k, t.tour.steps.len(), s.caption.clone(), s.highlight.clone(), t.tour.title.clone()))
            })
        })
    };
    Effect::new(move |shown: Option<(Option<String>, Option<usize>)>| {
        let (k, highlight) = step().map(|s| (Some(s.0), s.3)).unwrap_or((None, None));
        moved.track();
        // A highlight moves with the canvas, so the bubble follows every change of the model.
        // Without one there is nothing to follow: the effect does not re-run on every frame
        // (reading the canvas width forces a layout, which cost a seek 4% of its time).
        if highlight.is_none() && shown.as_ref().is_some_and(|s| s.0.is_none() && s.1 == k) {
            return (None, k);
        }
        if highlight.is_some() {
            sim.version.track();
        }
        let new_step = shown.as_ref().is_none_or(|s| s.1 != k || s.0 != highlight);
        let canvas_key = highlight.clone().filter(|h| !h.starts_with("panel:"));
        canvas::set_highlight(canvas_key.clone());
        let panel = mark_panel(highlight.as_deref().and_then(|h| h.strip_prefix("panel:")));
        // Place the bubble once the canvas has drawn the highlight (and turned its page).
        request_animation_frame(move || {
            let canvas_el = document().query_selector("[data-testid=canvas-topology]").ok().flatten();
            let measure = || match (&panel, &canvas_key) {
                (Some(p), _) => Some((p.clone(), Box2::of(p))),
                (None, Some(key)) => canvas_el.as_ref().and_then(|c| {
                    let r = canvas::rect_of(key)?;
                    let cb = Box2::of(c);
                    Some((c.clone(), Box2 { x: cb.x + r.x - 4.0, y: cb.y + r.y - 3.0, w: r.w + 8.0, h: r.h + 6.0 }))
                }),
                (None, None) => None,
            };
            // A new step brings its target on screen; if that scrolls, the scroll listener
            // places the caption again (a target that cannot scroll further stays where it is,
            // and the caption is placed beside it now).
            let mut target = measure();
            if new_step {
                if let Some((el, b)) = &target {
                    if bring_on_screen(el, *b) {
                        target = measure();
                    }
                }
            }
            let size = caption_size();
            let view = viewport();
            match target {
                Some((_, b)) => {
                    pos.set(place(b, size, view));
                    placed_beside.set(Some(b));
                    // The caption's text may have grown with the step just rendered: once it has
                    // its size, place it again by that.
                    request_animation_frame(move || {
                        let now = caption_size();
                        if now != size {
                            pos.set(place(b, now, viewport()));
                        }
                    });
                }
                // Nothing to point at: the top left of the canvas.
                None => {
                    let at = canvas_el.map(|c| Box2::of(&c)).map(|c| (c.x + 12.0, c.y.max(0.0) + 12.0)).unwrap_or((12.0, 12.0));
                    pos.set(at);
                    placed_beside.set(None);
                }
            }
        });
        (highlight, k)
    });
    let close = move |_| {
        canvas::set_highlight(None);
        mark_panel(None);
        sim.end_tour();
        sim.bump();
    };
    view! {
        {move || {
            step()
                .map(|(k, n, caption, _, title)| {
                    view! {
                        <div
                            class="tour-caption"
                            data-testid="tour-caption"
                            data-step=k.to_string()
                            role="region"
                            aria-label=format!("Guided tour: {title}")
                            style=move || format!("position: fixed; left: {}px; top: {}px", pos.get().0.round() as i64, pos.get().1.round() as i64)
                            data-target=move || {
                                placed_beside
                                    .get()
                                    .map(|b| format!("{},{},{},{}", b.x.round() as i64, b.y.round() as i64, b.w.round() as i64, b.h.round() as i64))
                                    .unwrap_or_default()
                            }
                        >
                            <p aria-live="polite">{caption}</p>
                            <div class="tour-controls">
                                <span class="muted small">{format!("{} / {n}", k + 1)}</span>
                                <button
                                    data-testid="tour-prev"
                                    disabled=k == 0
                                    on:click=move |_| sim.tour_step(k.saturating_sub(1))
                                >
                                    "◂ Previous"
                                </button>
                                {if k + 1 < n {
                                    view! {
                                        <button data-testid="tour-next" class="primary" on:click=move |_| sim.tour_step(k + 1)>
                                            "Next ▸"
                                        </button>
                                    }
                                        .into_any()
                                } else {
                                    view! {
                                        <button data-testid="tour-next" class="primary" on:click=close>
                                            "Finish"
                                        </button>
                                    }
                                        .into_any()
                                }}
                                <button data-testid="tour-end" aria-label="End the tour" on:click=close>
                                    "×"
                                </button>
                            </div>
                        </div>
                    }
                })
        }}
    }
}
