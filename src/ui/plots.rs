//! The two plots (plotters on a `<canvas>`): backlog per partition over time and consumed per second
//! per consumer, with rebalance instants (assignment changes) as dashed vertical lines.

use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;

use super::track::Tracker;

const PALETTE: [RGBColor; 8] = [
    RGBColor(37, 99, 235),
    RGBColor(234, 88, 12),
    RGBColor(124, 58, 237),
    RGBColor(8, 145, 178),
    RGBColor(202, 138, 4),
    RGBColor(219, 39, 119),
    RGBColor(5, 150, 105),
    RGBColor(75, 85, 99),
];
const MARK: RGBColor = RGBColor(220, 38, 38);

fn fit(el: &HtmlCanvasElement) -> Option<(u32, u32)> {
    let w = el.client_width();
    let h = el.client_height();
    if w < 40 || h < 40 {
        return None;
    }
    if el.width() != w as u32 || el.height() != h as u32 {
        el.set_width(w as u32);
        el.set_height(h as u32);
    }
    Some((w as u32, h as u32))
}

struct Spec<'a> {
    title: &'a str,
    names: Vec<String>,
    /// One series per name: (time s, value).
    series: Vec<Vec<(f64, f64)>>,
    until_ms: u64,
    /// Vertical marks (ms).
    marks: &'a [u64],
    /// Also mark every point (sparse series such as one point per heartbeat).
    points: bool,
    legend_pos: SeriesLabelPosition,
    /// Written to `data-drawn` when done.
    drawn: String,
}

fn draw(el: &HtmlCanvasElement, spec: Spec<'_>) {
    if fit(el).is_none() {
        return;
    }
    let Some(backend) = CanvasBackend::with_canvas_object(el.clone()) else { return };
    let root = backend.into_drawing_area();
    let _ = root.fill(&WHITE);
    let x_max = (spec.until_ms as f64 / 1000.0).max(0.001);
    let y_top = spec.series.iter().flatten().map(|p| p.1).fold(0.0f64, f64::max);
    let y_max = if y_top <= 0.0 { 1.0 } else { y_top * 1.15 };
    let Ok(mut chart) = ChartBuilder::on(&root)
        .caption(spec.title, ("sans-serif", 12).into_font().color(&RGBColor(55, 65, 81)))
        .margin(4)
        .margin_right(10)
        .x_label_area_size(18)
        .y_label_area_size(34)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
    else {
        return;
    };
    let _ = chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(229, 231, 235))
        .x_labels(6)
        .y_labels(4)
        .x_label_formatter(&|x| format!("{x:.0}s"))
        .y_label_formatter(&|y| if y_max < 10.0 { format!("{y:.1}") } else { format!("{y:.0}") })
        .label_style(("sans-serif", 10).into_font().color(&RGBColor(107, 114, 128)))
        .draw();
    // Rebalance instants.
    let _ = chart.draw_series(spec.marks.iter().map(|&at| {
        let x = at as f64 / 1000.0;
        PathElement::new(vec![(x, 0.0), (x, y_max)], MARK.mix(0.35).stroke_width(1))
    }));
    let legend = spec.names.len() <= 5;
    for (i, (name, pts)) in spec.names.iter().zip(spec.series).enumerate() {
        let col = PALETTE[i % PALETTE.len()];
        if spec.points {
            let _ = chart.draw_series(pts.iter().map(|&p| Circle::new(p, 2, col.filled())));
        }
        if let Ok(s) = chart.draw_series(LineSeries::new(pts, col.stroke_width(2))) {
            if legend {
                s.label(name.clone()).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], col.stroke_width(2)));
            }
        }
    }
    if legend && !spec.names.is_empty() {
        let _ = chart
            .configure_series_labels()
            .position(spec.legend_pos)
            .background_style(WHITE.mix(0.8))
            .border_style(RGBColor(229, 231, 235))
            .label_font(("sans-serif", 10))
            .draw();
    }
    let _ = root.present();
    let _ = el.set_attribute("data-drawn", &spec.drawn);
}

/// Backlog (stored − committed) per partition.
pub fn draw_backlog(el: &HtmlCanvasElement, t: &Tracker) {
    let n = t.len();
    let names = t.partition_labels.clone();
    let bs = t.bucket_ms as f64 / 1000.0;
    let series =
        t.backlog.iter().map(|s| s.iter().take(n).enumerate().map(|(b, v)| ((b + 1) as f64 * bs, *v as f64)).collect()).collect();
    draw(
        el,
        Spec {
            title: &format!("Backlog per {}, msgs (stored − committed)", t.noun),
            names,
            series,
            until_ms: t.until,
            marks: &t.rebalances,
            points: false,
            legend_pos: SeriesLabelPosition::UpperRight,
            drawn: t.series_version.to_string(),
        },
    );
}

/// Messages consumed per second per consumer.
pub fn draw_consumed(el: &HtmlCanvasElement, t: &Tracker) {
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
            title: "Consumed msg/s per consumer (red: rebalances)",
            names,
            series,
            until_ms: t.until,
            marks: &t.rebalances,
            points: false,
            legend_pos: SeriesLabelPosition::UpperRight,
            drawn: t.series_version.to_string(),
        },
    );
}

/// Heartbeat registration cost: one series per broker, entries touched by each
/// `ConsumerFilterManager.register` call (one per group heartbeat) over time.
pub fn draw_filter_cost(el: &HtmlCanvasElement, until_ms: u64, series: Vec<(String, Vec<(f64, f64)>)>) {
    let n: usize = series.iter().map(|s| s.1.len()).sum();
    let (names, series) = series.into_iter().unzip();
    draw(
        el,
        Spec {
            title: "Entries touched per heartbeat registration",
            names,
            series,
            until_ms,
            marks: &[],
            points: true,
            legend_pos: SeriesLabelPosition::MiddleRight,
            drawn: n.to_string(),
        },
    );
}
