//! The lag plot (the "Lag" tab): one line per partition (per group and partition when several
//! groups read), drawn like the shared plots (`line_chart`): on a `<canvas>` at the device pixel ratio,
//! lines told apart by dash and grey level, each named at its end in a margin of its own (no
//! legend over the data), a vertical line at the playhead.

use leptos::prelude::*;
use web_sys::HtmlCanvasElement;

use super::lag::{lag_series, LagSeries};
use crate::ui::line_chart::{self, Chart, Line};
use crate::ui::state::Sim;
use mqviz_engine::Millis;
use mqviz_kafka::world::World;

/// Ink levels (all at least 4.5:1 on white, so the end labels are readable) × three dash styles.
const INKS: [&str; 4] = ["#111827", "#374151", "#4b5563", "#6b7280"];

fn draw(el: &HtmlCanvasElement, series: &[LagSeries], until: Millis, now: Millis) {
    let lines = series
        .iter()
        .map(|s| Line { name: s.name.clone(), points: s.points.iter().map(|&(at, v)| (at as f64 / 1000.0, v as f64)).collect() })
        .collect();
    let chart = Chart {
        title: "",
        lines,
        x_max: until as f64 / 1000.0,
        marks: &[],
        playhead: Some(now as f64 / 1000.0),
        dots: false,
        inks: &INKS,
        labelled: 12,
        name_chars: 24,
        headroom: 1.12,
        line_width: 1.6,
    };
    if !line_chart::draw(el, &chart) {
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
    let plot: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let resized = RwSignal::new(0u32);
    let _resize = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n = n.wrapping_add(1)));
    Effect::new(move |_| {
        sim.ui_version.track();
        resized.track();
        if !visible.get() {
            return;
        }
        let Some(el) = plot.get() else { return };
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
                node_ref=plot
                role="img"
                aria-label="Lag in records per partition over time, one line per partition, named at its end"
            ></canvas>
        </section>
    }
}
