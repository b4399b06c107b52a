//! Line charts on a `<canvas>` (backlog, consumption rate, heartbeat cost, Kafka lag), drawn with
//! the 2D context at the device pixel ratio, so they are sharp on 2× screens.
//!
//! Lines are told apart by dash and grey level and named by a label at the end of each, in a
//! margin of their own, so no legend covers the data and no hue competes with the tag colours of
//! the topology canvas. The axes take round values (1, 2 or 5 times a power of ten).
//!
//! Drawn by hand rather than with a charting crate: these four charts need lines, dashes, dots,
//! ticks and labels, and a charting crate cost the page's bundle more than everything here.

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::ui::canvas::palette::{INK, LINE, MUTED};
use mqviz_engine::decimal;
use mqviz_engine::sort::StableSort;

// The canvas's ink and greys, so the plots read as part of the same picture...
const PLAYHEAD: &str = INK;
const TICK_TEXT: &str = MUTED;
const FAINT: &str = LINE;
// ...and the plots' own.
const GRID: &str = "#e5e7eb";
const AXIS: &str = "#6b7280";
const TITLE: &str = "#1f2937";
const MARK: &str = "rgba(107, 114, 128, 0.35)";
const FONT: &str = "10px sans-serif";

pub struct Line {
    pub name: String,
    /// (x in seconds, y).
    pub points: Vec<(f64, f64)>,
}

pub struct Chart<'a> {
    /// Drawn above the plot; empty when the page captions the figure.
    pub title: &'a str,
    pub lines: Vec<Line>,
    /// The x axis runs from 0 to this many seconds.
    pub x_max: f64,
    /// Faint vertical marks (seconds), such as reassignment instants.
    pub marks: &'a [f64],
    pub playhead: Option<f64>,
    /// Also mark every point (sparse series such as one point per heartbeat).
    pub dots: bool,
    /// Ink levels, dark to light: line `i` takes `inks[(i / 3) % len]` and dash style `i % 3`.
    pub inks: &'a [&'a str],
    /// Lines beyond this many are drawn faint and unlabelled.
    pub labelled: usize,
    /// End labels are cut to this many characters.
    pub name_chars: usize,
    /// Room above the highest point, as a factor of it.
    pub headroom: f64,
    pub line_width: f64,
}

impl Chart<'_> {
    fn ink(&self, i: usize) -> &str {
        self.inks[(i / 3) % self.inks.len()]
    }
}

/// The plot's rectangle in CSS pixels.
struct Area {
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
}

/// Round tick values from 0 up to `max`, about `n` of them, and their step.
pub fn ticks(max: f64, n: usize) -> (Vec<f64>, f64) {
    if !(max.is_finite() && max > 0.0) || n == 0 {
        return (vec![0.0], 1.0);
    }
    let raw = max / n as f64;
    let magnitude = super::math::pow10(super::math::log10(raw).floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| *s >= raw * 0.999).unwrap_or(10.0 * magnitude);
    let count = (max / step + 1e-9).floor() as usize;
    ((0..=count).map(|k| k as f64 * step).collect(), step)
}

fn tick_label(v: f64, step: f64, unit: &str) -> String {
    if step < 1.0 {
        format!("{}{unit}", decimal::fixed(v, 1))
    } else {
        format!("{}{unit}", decimal::fixed(v, 0))
    }
}

/// End labels (y, line) kept inside [`top`, `bottom`] and at least `gap` apart (closer when too
/// many to fit): pushed down where they crowd, then pulled up from the bottom where that ran past
/// it. Only the labels that must move do, so a cluster at the top stays apart while one at the
/// bottom makes room.
pub fn spread(mut ys: Vec<(i32, usize)>, gap: i32, top: i32, bottom: i32) -> Vec<(i32, usize)> {
    ys.stable_sort();
    let gap = if ys.len() > 1 { gap.min((bottom - top).max(0) / (ys.len() as i32 - 1)) } else { gap };
    let mut floor = top;
    for p in ys.iter_mut() {
        p.0 = p.0.max(floor);
        floor = p.0 + gap;
    }
    let mut ceiling = bottom;
    for p in ys.iter_mut().rev() {
        p.0 = p.0.min(ceiling);
        ceiling = p.0 - gap;
    }
    ys
}

/// Sizes the canvas's bitmap to its CSS box times the device pixel ratio and returns a context
/// drawing in CSS pixels, with that box's size. `None` while the canvas has no layout.
fn fit(el: &HtmlCanvasElement) -> Option<(CanvasRenderingContext2d, f64, f64)> {
    let dpr = web_sys::window().map(|w| w.device_pixel_ratio()).unwrap_or(1.0).max(1.0);
    let (w, h) = (el.client_width(), el.client_height());
    if w < 40 || h < 40 {
        return None;
    }
    let (pw, ph) = ((w as f64 * dpr).round() as u32, (h as f64 * dpr).round() as u32);
    if el.width() != pw || el.height() != ph {
        el.set_width(pw);
        el.set_height(ph);
    }
    let ctx = el.get_context("2d").ok().flatten()?.dyn_into::<CanvasRenderingContext2d>().ok()?;
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    Some((ctx, w as f64, h as f64))
}

fn segment(ctx: &CanvasRenderingContext2d, (x0, y0): (f64, f64), (x1, y1): (f64, f64)) {
    ctx.begin_path();
    ctx.move_to(x0, y0);
    ctx.line_to(x1, y1);
    ctx.stroke();
}

fn set_dash(ctx: &CanvasRenderingContext2d, dash: &[f64]) {
    let array = js_sys::Array::new();
    for d in dash {
        array.push(&(*d).into());
    }
    let _ = ctx.set_line_dash(&array);
}

/// Draws `chart` on `el`; false while the canvas has no layout.
pub fn draw(el: &HtmlCanvasElement, chart: &Chart<'_>) -> bool {
    let Some((ctx, w, h)) = fit(el) else { return false };
    ctx.set_fill_style_str("#ffffff");
    ctx.fill_rect(0.0, 0.0, w, h);
    ctx.set_font(FONT);

    let labelled = chart.lines.len().min(chart.labelled);
    let longest = chart.lines.iter().take(labelled).map(|l| l.name.chars().count()).max().unwrap_or(0).min(chart.name_chars);
    let label_w = if labelled == 0 { 8.0 } else { 10.0 + longest as f64 * 6.2 };
    let title_h = if chart.title.is_empty() { 0.0 } else { 18.0 };
    let area = Area { left: 6.0 + 38.0, top: 6.0 + title_h, right: w - 6.0 - label_w, bottom: h - 6.0 - 18.0 };
    if area.right - area.left < 20.0 || area.bottom - area.top < 20.0 {
        return false;
    }
    if !chart.title.is_empty() {
        ctx.set_font("12px sans-serif");
        ctx.set_fill_style_str(TITLE);
        ctx.set_text_align("center");
        ctx.set_text_baseline("middle");
        let _ = ctx.fill_text(chart.title, w / 2.0, 6.0 + title_h / 2.0);
        ctx.set_font(FONT);
    }

    let x_max = chart.x_max.max(0.001);
    let y_top = chart.lines.iter().flat_map(|l| l.points.iter()).map(|p| p.1).filter(|v| v.is_finite()).fold(0.0, f64::max);
    let y_max = if y_top <= 0.0 { 1.0 } else { y_top * chart.headroom };
    let x_px = |x: f64| area.left + (x / x_max) * (area.right - area.left);
    let y_px = |y: f64| area.bottom - (y / y_max) * (area.bottom - area.top);

    // Horizontal grid lines and the y axis's values.
    let (y_ticks, y_step) = ticks(y_max, 4);
    ctx.set_line_width(1.0);
    ctx.set_stroke_style_str(GRID);
    ctx.set_fill_style_str(TICK_TEXT);
    ctx.set_text_align("right");
    ctx.set_text_baseline("middle");
    for &v in &y_ticks {
        let y = y_px(v).round() + 0.5;
        segment(&ctx, (area.left, y), (area.right, y));
        let _ = ctx.fill_text(&tick_label(v, y_step, ""), area.left - 5.0, y);
    }
    // The x axis's values, in seconds.
    let (x_ticks, x_step) = ticks(x_max, 6);
    ctx.set_text_align("center");
    ctx.set_text_baseline("top");
    for &v in &x_ticks {
        let _ = ctx.fill_text(&tick_label(v, x_step, "s"), x_px(v), area.bottom + 4.0);
    }
    ctx.set_stroke_style_str(AXIS);
    segment(&ctx, (area.left + 0.5, area.top), (area.left + 0.5, area.bottom));
    segment(&ctx, (area.left, area.bottom + 0.5), (area.right, area.bottom + 0.5));

    ctx.save();
    ctx.begin_path();
    ctx.rect(area.left, area.top - 1.0, area.right - area.left, area.bottom - area.top + 1.0);
    ctx.clip();
    ctx.set_stroke_style_str(MARK);
    for &at in chart.marks {
        let x = x_px(at).round() + 0.5;
        segment(&ctx, (x, area.top), (x, area.bottom));
    }
    if let Some(at) = chart.playhead {
        ctx.set_stroke_style_str(PLAYHEAD);
        ctx.set_line_width(1.5);
        segment(&ctx, (x_px(at), area.top), (x_px(at), area.bottom));
    }
    for (i, line) in chart.lines.iter().enumerate() {
        let faint = i >= chart.labelled;
        let ink = if faint { FAINT } else { chart.ink(i) };
        ctx.set_stroke_style_str(ink);
        ctx.set_fill_style_str(ink);
        ctx.set_line_width(if faint { 1.0 } else { chart.line_width });
        set_dash(
            &ctx,
            match i % 3 {
                0 => &[],
                1 => &[6.0, 3.0],
                _ => &[1.5, 3.0],
            },
        );
        ctx.begin_path();
        for (k, &(x, y)) in line.points.iter().enumerate() {
            if k == 0 {
                ctx.move_to(x_px(x), y_px(y));
            } else {
                ctx.line_to(x_px(x), y_px(y));
            }
        }
        ctx.stroke();
        if chart.dots {
            for &(x, y) in &line.points {
                ctx.begin_path();
                let _ = ctx.arc(x_px(x), y_px(y), 2.0, 0.0, std::f64::consts::TAU);
                ctx.fill();
            }
        }
    }
    set_dash(&ctx, &[]);
    ctx.restore();

    // End labels in the right margin.
    let ends: Vec<(i32, usize)> = chart
        .lines
        .iter()
        .enumerate()
        .take(labelled)
        .filter_map(|(i, l)| l.points.last().map(|p| (y_px(p.1).round() as i32, i)))
        .collect();
    ctx.set_text_align("left");
    ctx.set_text_baseline("middle");
    for (y, i) in spread(ends, 12, area.top as i32, area.bottom as i32 - 4) {
        ctx.set_fill_style_str(chart.ink(i));
        let name: String = chart.lines[i].name.chars().take(chart.name_chars).collect();
        let _ = ctx.fill_text(&name, area.right + 4.0, y as f64);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{spread, ticks};

    #[test]
    fn end_labels_are_pushed_apart_and_kept_inside_the_area() {
        let ys = |v: Vec<(i32, usize)>| v.into_iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(ys(spread(vec![(50, 0), (52, 1), (51, 2)], 11, 10, 200)), [50, 61, 72]);
        assert_eq!(ys(spread(vec![(198, 0), (195, 1)], 11, 10, 200)), [189, 200]);
        assert_eq!(ys(spread(vec![(20, 0), (20, 1), (20, 2)], 11, 10, 20)), [10, 15, 20]);
        // A cluster at the top and one at the bottom: only the bottom one moves up; the top one
        // keeps its spacing (moving the whole stack up once piled the top labels onto `top`).
        assert_eq!(ys(spread(vec![(10, 0), (10, 1), (195, 2), (200, 3)], 11, 10, 200)), [10, 21, 189, 200]);
        // Labels above the area come down into it.
        assert_eq!(ys(spread(vec![(2, 0), (5, 1)], 11, 10, 200)), [10, 21]);
    }

    #[test]
    fn ticks_are_round_values_up_to_the_maximum() {
        assert_eq!(ticks(115.0, 4), (vec![0.0, 50.0, 100.0], 50.0));
        assert_eq!(ticks(60.0, 6), (vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0], 10.0));
        assert_eq!(ticks(1.0, 4).1, 0.5);
        assert_eq!(ticks(0.0, 4), (vec![0.0], 1.0));
        assert_eq!(ticks(f64::NAN, 4), (vec![0.0], 1.0));
    }
}
