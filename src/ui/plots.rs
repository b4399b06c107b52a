//! The plots (plotters on a `<canvas>`): backlog per partition over time and consumed per second
//! per consumer, with reassignment instants as vertical marks, and the heartbeat-cost plot.
//!
//! Drawn at the device pixel ratio (sharp on 2× screens). Series are told apart by dash and grey
//! level and named by a label at the end of each line, in a margin of their own, so no legend
//! covers the data and no hue competes with the tag colours of the canvas.

use crate::sim::sort::StableSort;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;

use super::track::Tracker;

/// Ink levels for series (dark to light), combined with three dash styles: nine distinct styles.
const INKS: [RGBColor; 3] = [RGBColor(17, 24, 39), RGBColor(75, 85, 99), RGBColor(140, 148, 160)];
const MARK: RGBColor = RGBColor(107, 114, 128);
/// Series beyond this many are drawn faint and unlabelled.
const LABELLED: usize = 9;

/// Sizes the canvas to its CSS box times the device pixel ratio; returns that ratio.
fn fit(el: &HtmlCanvasElement) -> Option<f64> {
    let dpr = web_sys::window().map(|w| w.device_pixel_ratio()).unwrap_or(1.0).max(1.0);
    let w = el.client_width();
    let h = el.client_height();
    if w < 40 || h < 40 {
        return None;
    }
    let (pw, ph) = ((w as f64 * dpr).round() as u32, (h as f64 * dpr).round() as u32);
    if el.width() != pw || el.height() != ph {
        el.set_width(pw);
        el.set_height(ph);
    }
    Some(dpr)
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
    /// Written to `data-drawn` when done.
    drawn: String,
}

fn draw(el: &HtmlCanvasElement, spec: Spec<'_>) {
    let Some(dpr) = fit(el) else { return };
    let Some(backend) = CanvasBackend::with_canvas_object(el.clone()) else { return };
    let px = |v: f64| (v * dpr).round() as i32;
    let pxu = |v: f64| (v * dpr).round() as u32;
    let root = backend.into_drawing_area();
    let _ = root.fill(&WHITE);
    let x_max = (spec.until_ms as f64 / 1000.0).max(0.001);
    let y_top = spec.series.iter().flatten().map(|p| p.1).fold(0.0f64, f64::max);
    let y_max = if y_top <= 0.0 { 1.0 } else { y_top * 1.15 };
    let labelled = spec.names.len().min(LABELLED);
    // The end labels get a margin of their own.
    let longest = spec.names.iter().take(labelled).map(|n| n.chars().count()).max().unwrap_or(0).min(22);
    let label_w = if labelled == 0 { 8.0 } else { 10.0 + longest as f64 * 6.2 };
    let mut builder = ChartBuilder::on(&root);
    if !spec.title.is_empty() {
        builder.caption(spec.title, ("sans-serif", px(12.0)).into_font().color(&RGBColor(31, 41, 55)));
    }
    let Ok(mut chart) = builder
        .margin(px(6.0))
        .margin_right(px(label_w))
        .x_label_area_size(px(18.0))
        .y_label_area_size(px(36.0))
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
        .label_style(("sans-serif", px(10.0)).into_font().color(&RGBColor(75, 85, 99)))
        .draw();
    // Reassignment instants.
    let _ = chart.draw_series(spec.marks.iter().map(|&at| {
        let x = at as f64 / 1000.0;
        PathElement::new(vec![(x, 0.0), (x, y_max)], MARK.mix(0.35).stroke_width(pxu(1.0)))
    }));
    let mut ends: Vec<(f64, String, RGBColor)> = Vec::new();
    let _ = y_top;
    for (i, (name, pts)) in spec.names.iter().zip(spec.series).enumerate() {
        let faint = i >= LABELLED;
        let col = if faint { RGBColor(209, 213, 219) } else { INKS[(i / 3) % INKS.len()] };
        let style = col.stroke_width(pxu(if faint { 1.0 } else { 1.8 }));
        if spec.points {
            let _ = chart.draw_series(pts.iter().map(|&p| Circle::new(p, pxu(2.0), col.filled())));
        }
        if let Some(&(_, last)) = pts.last() {
            if !faint {
                ends.push((last, name.clone(), col));
            }
        }
        let _ = match i % 3 {
            0 => chart.draw_series(LineSeries::new(pts, style)).map(|_| ()),
            1 => chart.draw_series(DashedLineSeries::new(pts, pxu(6.0), pxu(3.0), style)).map(|_| ()),
            _ => chart.draw_series(DashedLineSeries::new(pts, pxu(1.5), pxu(3.0), style)).map(|_| ()),
        };
    }
    // End labels, pushed apart so they do not overlap: top-down with a minimum gap, then the
    // whole stack moved up if it ran past the bottom of the plot.
    let plot = chart.plotting_area();
    let (xr, yr) = plot.get_pixel_range();
    let (x1, y0, y1) = (xr.end, yr.start, yr.end);
    let gap = px(12.0);
    let mut placed: Vec<(i32, String, RGBColor)> =
        ends.into_iter().map(|(v, name, col)| (chart.backend_coord(&(x_max, v)).1, name, col)).collect();
    placed.stable_sort_by_key(|p| p.0);
    for i in 1..placed.len() {
        if placed[i].0 < placed[i - 1].0 + gap {
            placed[i].0 = placed[i - 1].0 + gap;
        }
    }
    if let Some(last) = placed.last().map(|p| p.0) {
        let over = last - (y1 - px(4.0));
        if over > 0 {
            for p in placed.iter_mut() {
                p.0 = (p.0 - over).max(y0);
            }
        }
    }
    for (y, name, col) in placed {
        let short: String = name.chars().take(22).collect();
        let style = ("sans-serif", px(10.0)).into_font().color(&col).pos(Pos::new(HPos::Left, VPos::Center));
        let _ = root.draw(&Text::new(short, (x1 + px(4.0), y), style));
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
            // The caption is the figure's, in the page.
            title: "",
            names,
            series,
            until_ms: t.until,
            marks: &t.rebalances,
            points: false,
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
            title: "",
            names,
            series,
            until_ms: t.until,
            marks: &t.rebalances,
            points: false,
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
            drawn: n.to_string(),
        },
    );
}
