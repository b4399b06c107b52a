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
/// The cost of a caption placed 120 px from its target (see [`Keep::cost`]): a place worse than
/// that asks for room to be made.
const ROOMY: f64 = 20.0 * 120.0;

/// What a caption keeps off, in viewport px: its target (the highlight or the marked panel),
/// the elements its text names, and the other elements on the canvas, which it prefers not to
/// cover. `near` is where a step without a target stays close to (the canvas).
#[derive(Clone, Debug, Default, PartialEq)]
struct Keep {
    target: Option<Box2>,
    near: Option<Box2>,
    named: Vec<Box2>,
    others: Vec<Box2>,
}

impl Keep {
    /// How bad a caption at `b` is. Covering the target or a named element outweighs any
    /// distance; among places that cover neither, the nearest to the target (or, without one,
    /// to `near`) wins, and covering other elements counts a little (a whole consumer box about
    /// as much as 45 px farther).
    fn cost(&self, b: &Box2) -> f64 {
        let grown = |t: &Box2, m: f64| Box2 { x: t.x - m, y: t.y - m, w: t.w + 2.0 * m, h: t.h + 2.0 * m };
        let target = self.target.map_or(0.0, |t| grown(&t, GAP).overlap(b));
        let named: f64 = self.named.iter().map(|n| grown(n, 4.0).overlap(b)).sum();
        let others: f64 = self.others.iter().map(|o| o.overlap(b)).sum();
        let far = match (self.target, self.near) {
            (Some(t), _) => {
                let dx = (t.x - b.right()).max(b.x - t.right()).max(0.0);
                let dy = (t.y - b.bottom()).max(b.y - t.bottom()).max(0.0);
                dx.hypot(dy)
            }
            // How far it hangs out of `near`: its area outside, as px of its width.
            (None, Some(n)) => (b.w * b.h - n.overlap(b)) / b.h.max(1.0),
            (None, None) => 0.0,
        };
        1e6 * target + 1e3 * named + 0.1 * others + 20.0 * far
    }
}

/// Where a caption of `size` goes in a viewport of `view` (w, h): inside it, at the place that
/// [`Keep::cost`] finds best among the places beside the target and a grid over the whole
/// viewport (so where nothing beside the target is free, the caption docks away from it).
/// `stay` is where the caption is now: it stays there unless another place is clearly better,
/// so it does not hop while the run plays under it.
fn place(keep: &Keep, size: (f64, f64), view: (f64, f64), stay: Option<(f64, f64)>) -> (f64, f64) {
    let (cw, ch) = size;
    let (vw, vh) = view;
    let clamp_x = |x: f64| x.min(vw - cw - EDGE).max(EDGE);
    let clamp_y = |y: f64| y.min(vh - ch - EDGE).max(EDGE);
    let mut candidates: Vec<(f64, f64)> = Vec::new();
    if let Some(t) = keep.target {
        for x in [t.x, t.x + (t.w - cw) / 2.0, t.right() - cw] {
            candidates.push((x, t.bottom() + GAP));
            candidates.push((x, t.y - GAP - ch));
        }
        for y in [t.y, t.y + (t.h - ch) / 2.0, t.bottom() - ch] {
            candidates.push((t.right() + GAP, y));
            candidates.push((t.x - GAP - cw, y));
        }
    }
    // Tight beside what the text names, where the target's sides are taken.
    for n in &keep.named {
        candidates.extend([(n.x, n.bottom() + GAP), (n.x, n.y - GAP - ch), (n.right() + GAP, n.y), (n.x - GAP - cw, n.y)]);
    }
    const STEP: f64 = 20.0;
    let (nx, ny) = (((vw - cw) / STEP).max(0.0) as usize, ((vh - ch) / STEP).max(0.0) as usize);
    for i in 0..=nx {
        for j in 0..=ny {
            candidates.push((i as f64 * STEP, j as f64 * STEP));
        }
    }
    let at = |(x, y): (f64, f64)| (clamp_x(x), clamp_y(y));
    let cost = |(x, y): (f64, f64)| keep.cost(&Box2 { x, y, w: cw, h: ch });
    let best = candidates.into_iter().map(at).map(|p| (cost(p), p)).min_by(|a, b| a.0.total_cmp(&b.0));
    let Some((best_cost, best)) = best else { return (EDGE, EDGE) };
    match stay.map(at) {
        // Within 10 px of distance of the best: not worth a jump.
        Some(here) if cost(here) <= best_cost + 200.0 => here,
        _ => best,
    }
}

/// What the caption of `text` keeps off, with its target at `target`, in viewport px. Besides
/// the canvas's elements: the preset's lesson and the outcome line, which say what the tour
/// explains (as if named), and the controls (as other elements).
fn keep_for(text: &str, target: Option<Box2>) -> Keep {
    let mut keep = Keep { target, ..Keep::default() };
    let seen = |b: &Box2| b.w > 0.0 && b.h > 0.0;
    let boxes = |selector: &str| document().query_selector(selector).ok().flatten().map(|el| Box2::of(&el)).filter(seen);
    keep.named.extend(["[data-testid=lesson]", "[data-testid=outcome]"].into_iter().filter_map(boxes));
    keep.others.extend(boxes("header.topbar"));
    // The assignment table's rows of the queues or partitions the text names.
    if let Ok(rows) = document().query_selector_all("[data-testid=assignment-table] tbody tr[data-queue]") {
        for row in (0..rows.length()).filter_map(|i| rows.item(i)?.dyn_into::<web_sys::Element>().ok()) {
            let key = format!("partition:{}", row.get_attribute("data-queue").unwrap_or_default());
            if mqviz_app::tour::names(text, &key) {
                keep.named.extend(Some(Box2::of(&row)).filter(seen));
            }
        }
    }
    let canvas = document().query_selector("[data-testid=canvas-topology]").ok().flatten();
    if let Some(c) = canvas.map(|c| Box2::of(&c)) {
        keep.near = Some(c);
        for (r, named) in canvas::elements_for_caption(text) {
            let b = Box2 { x: c.x + r.x, y: c.y + r.y, w: r.w, h: r.h };
            if named {
                keep.named.push(b);
            } else {
                keep.others.push(b);
            }
        }
    }
    keep
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
        let (k, highlight, text) = step().map(|s| (Some(s.0), s.3, s.2)).unwrap_or((None, None, String::new()));
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
            // Make room: when the best place is far from a target that sits near an edge (or
            // covers what the text names), the page scrolls the target to the middle, where it
            // has room on both sides. Once per step, so a caption never chases the page.
            if new_step {
                if let Some((_, b)) = &target {
                    let keep = keep_for(&text, Some(*b));
                    let (x, y) = place(&keep, size, view, None);
                    let dy = b.y + b.h / 2.0 - view.1 / 2.0;
                    if keep.cost(&Box2 { x, y, w: size.0, h: size.1 }) > ROOMY && dy.abs() > 40.0 {
                        window().scroll_by_with_x_and_y(0.0, dy);
                        target = measure();
                    }
                }
            }
            match target {
                Some((_, b)) => {
                    let keep = keep_for(&text, Some(b));
                    // Within a step the caption stays put unless its place got clearly worse.
                    let stay = (!new_step).then(|| pos.get_untracked());
                    pos.set(place(&keep, size, view, stay));
                    placed_beside.set(Some(b));
                    // The caption's text may have grown with the step just rendered: once it has
                    // its size, place it again by that.
                    request_animation_frame(move || {
                        let now = caption_size();
                        if now != size {
                            pos.set(place(&keep, now, viewport(), Some(pos.get_untracked())));
                        }
                    });
                }
                // Nothing to point at: on the canvas where it covers least, off what the text
                // names.
                None => {
                    pos.set(place(&keep_for(&text, None), size, view, None));
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

#[cfg(test)]
mod tests {
    use super::{place, Box2, Keep, EDGE};

    const VIEW: (f64, f64) = (1280.0, 800.0);
    const SIZE: (f64, f64) = (340.0, 120.0);

    fn at((x, y): (f64, f64)) -> Box2 {
        Box2 { x, y, w: SIZE.0, h: SIZE.1 }
    }

    #[test]
    fn a_caption_sits_beside_its_target_inside_the_viewport() {
        let target = Box2 { x: 400.0, y: 300.0, w: 200.0, h: 60.0 };
        let keep = Keep { target: Some(target), ..Keep::default() };
        let p = place(&keep, SIZE, VIEW, None);
        let b = at(p);
        assert_eq!(b.overlap(&target), 0.0);
        assert!(b.x >= EDGE && b.y >= EDGE && b.right() <= VIEW.0 - EDGE && b.bottom() <= VIEW.1 - EDGE);
        let gap = (target.y - b.bottom()).max(b.y - target.bottom()).max(target.x - b.right()).max(b.x - target.right());
        assert!(gap <= 12.0, "beside, not away: {p:?}");
    }

    #[test]
    fn a_caption_keeps_off_what_its_text_names_and_docks_when_nothing_beside_is_free() {
        // The target is a broker row across the top; the consumers its text names fill the
        // band under it, and the space to its left and right: below them is free.
        let target = Box2 { x: 20.0, y: 20.0, w: 1240.0, h: 80.0 };
        let named = vec![Box2 { x: 0.0, y: 100.0, w: 1280.0, h: 300.0 }];
        let keep = Keep { target: Some(target), named: named.clone(), ..Keep::default() };
        let b = at(place(&keep, SIZE, VIEW, None));
        assert_eq!(b.overlap(&target), 0.0);
        assert_eq!(b.overlap(&named[0]), 0.0, "{b:?}");
        assert!(b.y >= 404.0 && b.y <= 412.0, "the nearest free place, just under the named band: {b:?}");
    }

    #[test]
    fn a_caption_without_a_target_sits_on_the_canvas_where_it_covers_least() {
        // The canvas fills the middle of the page; its elements fill its top half, and a row
        // of the assignment table the text names sits at its bottom left.
        let canvas = Box2 { x: 100.0, y: 100.0, w: 900.0, h: 600.0 };
        let others = vec![Box2 { x: 100.0, y: 100.0, w: 900.0, h: 300.0 }];
        let named = vec![Box2 { x: 100.0, y: 560.0, w: 400.0, h: 40.0 }];
        let keep = Keep { near: Some(canvas), named: named.clone(), others: others.clone(), ..Keep::default() };
        let b = at(place(&keep, SIZE, VIEW, None));
        assert_eq!(b.overlap(&canvas), b.w * b.h, "on the canvas: {b:?}");
        assert_eq!(b.overlap(&others[0]), 0.0, "off its elements: {b:?}");
        assert_eq!(b.overlap(&named[0]), 0.0, "off what the text names: {b:?}");
    }

    #[test]
    fn a_caption_stays_where_it_is_unless_another_place_is_clearly_better() {
        let target = Box2 { x: 400.0, y: 300.0, w: 200.0, h: 60.0 };
        let keep = Keep { target: Some(target), ..Keep::default() };
        let best = place(&keep, SIZE, VIEW, None);
        // A place as good (beside the target, on another side) is kept.
        let right = (target.right() + 10.0, target.y);
        assert_eq!(place(&keep, SIZE, VIEW, Some(right)), right);
        // A place over the target is left.
        assert_eq!(place(&keep, SIZE, VIEW, Some((target.x, target.y))), best);
    }
}
