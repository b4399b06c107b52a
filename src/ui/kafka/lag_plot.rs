//! The lag plot (the "Lag" tab): one line per partition (per group and partition when several
//! groups read), drawn like the shared plots (`ui::plot`): the largest few named in a legend of its
//! own margin, the rest summarised, a vertical line at the playhead, a click to go to a time.

use leptos::prelude::*;
use web_sys::HtmlCanvasElement;

use super::lag::{lag_series, LagSeries};
use crate::ui::plot::{self, Chart, Line};
use crate::ui::state::Sim;
use mqviz_engine::Millis;
use mqviz_kafka::world::World;

fn draw(el: &HtmlCanvasElement, series: &[LagSeries], until: Millis, now: Millis) {
    let lines = series
        .iter()
        .map(|s| Line { name: s.name.clone(), points: s.points.iter().map(|&(at, v)| (at as f64 / 1000.0, v as f64)).collect() })
        .collect();
    let chart = Chart {
        lines,
        x_max: until as f64 / 1000.0,
        marks: &[],
        playhead: Some(now as f64 / 1000.0),
        dots: false,
        noun: "partitions",
    };
    if !plot::draw(el, &chart) {
        return;
    }
    let points: usize = series.iter().map(|s| s.points.len()).sum();
    let _ = el.set_attribute("data-drawn", &format!("{}:{points}", series.len()));
    let peak = series.iter().flat_map(|s| s.points.iter()).map(|p| p.1).max().unwrap_or(0);
    let _ = el.set_attribute("data-peak", &peak.to_string());
}

/// The "Lag" tab: the plot, redrawn when the world changes while the tab is shown.
#[component]
pub fn LagPanel(#[prop(into)] visible: Signal<bool>) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let canvas: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let resized = RwSignal::new(0u32);
    let _resize = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n = n.wrapping_add(1)));
    Effect::new(move |_| {
        sim.ui_version.track();
        resized.track();
        plot::version();
        if !visible.get() {
            return;
        }
        let Some(el) = canvas.get() else { return };
        request_animation_frame(move || {
            let data = sim.peek_as::<World, _>(|w| (lag_series(w), w.scenario.until.max(w.now), w.now));
            if let Some((series, until, now)) = data {
                draw(&el, &series, until, now);
            }
        });
    });
    view! {
        <section class="kafka-lag">
            <h2>"Lag per partition"</h2>
            <p class="hint">
                "Lag = high watermark − the group's position (the next offset its owner will read). It grows while nobody fetches a partition (a stop-the-world rebalance, a crash) and falls as the owner catches up; a jump up means the position went back: a reset, a seek, or a new owner starting from the committed offset."
            </p>
            <canvas
                class="kafka-lag-plot"
                data-testid="kafka-lag-plot"
                node_ref=canvas
                role="img"
                on:click=move |ev| plot::seek_on_click(sim, ev)
                aria-label="Lag in records per partition over time, one line per partition; the largest are named in the legend; click to go to a time"
            ></canvas>
        </section>
    }
}
