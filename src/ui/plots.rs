//! The stage's plots: backlog per partition over time and consumed per second per consumer, with
//! reassignment instants as vertical marks, and the heartbeat-cost plot (`plot` draws them).

use web_sys::HtmlCanvasElement;

use super::plot::{self, Chart, Line};
use super::track::Tracker;
use mqviz_engine::Millis;

struct Spec<'a> {
    /// What one line is, plural.
    noun: &'a str,
    names: Vec<String>,
    /// One series per name: (time s, value).
    series: Vec<Vec<(f64, f64)>>,
    until_ms: u64,
    /// Vertical marks (ms).
    marks: &'a [u64],
    /// The model's time (ms), drawn as a vertical line.
    now: Option<Millis>,
    /// Also mark every point (sparse series such as one point per heartbeat).
    points: bool,
    /// Written to `data-drawn` when done.
    drawn: String,
}

fn draw(el: &HtmlCanvasElement, spec: Spec<'_>) {
    let marks: Vec<f64> = spec.marks.iter().map(|&at| at as f64 / 1000.0).collect();
    let lines = spec.names.into_iter().zip(spec.series).map(|(name, points)| Line { name, points }).collect();
    let chart = Chart {
        lines,
        x_max: spec.until_ms as f64 / 1000.0,
        marks: &marks,
        playhead: spec.now.map(|t| t as f64 / 1000.0),
        dots: spec.points,
        noun: spec.noun,
    };
    if plot::draw(el, &chart) {
        let _ = el.set_attribute("data-drawn", &spec.drawn);
    }
}

/// Backlog (stored − committed) per partition (`noun`: the model's word for one, plural).
pub fn draw_backlog(el: &HtmlCanvasElement, t: &Tracker, now: Millis, noun: &str) {
    let n = t.len();
    let names = t.partition_labels.clone();
    let bs = t.bucket_ms as f64 / 1000.0;
    let series =
        t.backlog.iter().map(|s| s.iter().take(n).enumerate().map(|(b, v)| ((b + 1) as f64 * bs, *v as f64)).collect()).collect();
    draw(
        el,
        Spec {
            noun,
            names,
            series,
            until_ms: t.until,
            marks: &t.rebalances,
            now: Some(now),
            points: false,
            drawn: t.series_version.to_string(),
        },
    );
}

/// Messages consumed per second per consumer.
pub fn draw_consumed(el: &HtmlCanvasElement, t: &Tracker, now: Millis) {
    let n = t.len();
    let bs = (t.bucket_ms as f64 / 1000.0).max(0.001);
    let names = t.consumers.iter().map(|c| c.to_string()).collect();
    let series = t
        .consumed
        .iter()
        .map(|s| s.iter().take(n).enumerate().map(|(b, v)| ((b as f64 + 0.5) * bs, *v as f64 / bs)).collect())
        .collect();
    draw(
        el,
        Spec {
            noun: "consumers",
            names,
            series,
            until_ms: t.until,
            marks: &t.rebalances,
            now: Some(now),
            points: false,
            drawn: t.series_version.to_string(),
        },
    );
}

/// Heartbeat registration cost: one series per broker, entries touched by each
/// `ConsumerFilterManager.register` call (one per group heartbeat) over time.
pub fn draw_filter_cost(el: &HtmlCanvasElement, until_ms: u64, now: Millis, series: Vec<(String, Vec<(f64, f64)>)>) {
    let n: usize = series.iter().map(|s| s.1.len()).sum();
    let (names, series) = series.into_iter().unzip();
    draw(el, Spec { noun: "brokers", names, series, until_ms, marks: &[], now: Some(now), points: true, drawn: n.to_string() });
}
