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

/// Marks the panel a step points at (and scrolls it into view); clears the previous one.
fn mark_panel(testid: Option<&str>) {
    let doc = document();
    if let Ok(list) = doc.query_selector_all(".tour-target") {
        for i in 0..list.length() {
            if let Some(el) = list.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) {
                let _ = el.class_list().remove_1("tour-target");
            }
        }
    }
    let Some(id) = testid else { return };
    if let Ok(Some(el)) = doc.query_selector(&format!("[data-testid=\"{id}\"]")) {
        let _ = el.class_list().add_1("tour-target");
        el.scroll_into_view();
    }
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
    // (left, top) in px within the canvas wrapper, computed after the canvas has drawn.
    let pos = RwSignal::new((12.0f64, 12.0f64));
    let step = move || {
        sim.tour.with(|t| {
            t.as_ref().and_then(|t| {
                let k = t.step?;
                let s = t.tour.steps.get(k)?;
                Some((k, t.tour.steps.len(), s.caption.clone(), s.highlight.clone(), t.tour.title.clone()))
            })
        })
    };
    Effect::new(move |shown: Option<Option<String>>| {
        let highlight = step().and_then(|s| s.3);
        // A highlight moves with the canvas, so the bubble follows every change of the model.
        // Without one there is nothing to follow: the effect does not re-run on every frame
        // (reading the canvas width forces a layout, which cost a seek 4% of its time).
        if highlight.is_none() && shown.as_ref().is_some_and(Option::is_none) {
            return None;
        }
        if highlight.is_some() {
            sim.version.track();
        }
        let canvas_key = highlight.clone().filter(|h| !h.starts_with("panel:"));
        canvas::set_highlight(canvas_key.clone());
        mark_panel(highlight.as_deref().and_then(|h| h.strip_prefix("panel:")));
        // Place the bubble once the canvas has drawn the highlight.
        request_animation_frame(move || {
            let r = canvas_key.as_deref().and_then(canvas::rect_of);
            let width = document()
                .query_selector("[data-testid=canvas-topology]")
                .ok()
                .flatten()
                .map(|c| c.client_width() as f64)
                .unwrap_or(800.0);
            // Keep the bubble (at most 340 px wide) inside the canvas.
            let left = |x: f64| x.min(width - 350.0).max(8.0);
            pos.set(match r {
                // Below the element, or above it when it sits low on the canvas.
                Some(r) if r.y > 220.0 => (left(r.x), (r.y - 100.0).max(8.0)),
                Some(r) => (left(r.x), r.bottom() + 10.0),
                None => (12.0, 12.0),
            });
        });
        highlight
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
                            style=move || format!("left: {:.0}px; top: {:.0}px", pos.get().0, pos.get().1)
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
