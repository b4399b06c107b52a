//! The page's line charts (backlog, consumption rate, heartbeat cost, Kafka lag), drawn by plotters
//! on a `<canvas>` through plotters-canvas: axes, ticks, tick labels, the legend and the series are
//! plotters'; this module only chooses what to draw.
//!
//! Lines are told apart without hue (the canvas keeps hues for tags and keys, `canvas::palette`):
//! the few largest (by peak) get a style each, solid, dashed or dotted in ink or grey, and a row in
//! the legend; the rest are thin light-grey lines summarised by one legend row ("+7 more
//! partitions"). The legend sits in a margin of its own, right of the plot, so it never covers the
//! data, and lists the named lines in the order their ends stand, top to bottom.
//!
//! The chart is drawn in device pixels (every size here is scaled by the device pixel ratio), so it
//! is sharp on 2x screens. After drawing, the canvas carries where its time axis lies
//! (`data-x0`, `data-x1` in CSS pixels, `data-until` in ms), and a click on it seeks there
//! ([`seek_on_click`]).
//!
//! The release page fetches this code (and plotters: 30 KB gzipped) in a chunk of its own
//! (`--cfg mqviz_split`) when a plot first has a point to draw: at t = 0 a plot says it has
//! nothing yet, so the first view does without it. Until the chunk has arrived, [`draw`] draws
//! nothing more, and the plots redraw when [`version`] changes.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;

use mqviz_engine::decimal;
use mqviz_engine::sort::StableSort;
use mqviz_engine::Millis;

pub struct Line {
    pub name: String,
    /// (x in seconds, y).
    pub points: Vec<(f64, f64)>,
}

pub struct Chart<'a> {
    pub lines: Vec<Line>,
    /// The x axis runs from 0 to this many seconds.
    pub x_max: f64,
    /// Faint vertical marks (seconds), such as reassignment instants.
    pub marks: &'a [f64],
    /// The model's time (seconds), drawn as a vertical line.
    pub playhead: Option<f64>,
    /// Also mark every point (sparse series such as one point per heartbeat).
    pub dots: bool,
    /// What one line is, plural ("partitions", "consumers"), for the summary row.
    pub noun: &'a str,
}

/// Which lines get a style and a legend row of their own, and in which order the legend lists them.
#[derive(Debug, PartialEq)]
pub struct Ranking {
    /// Indices of the named lines, in legend order (highest end first).
    pub named: Vec<usize>,
    /// Indices of the lines drawn light grey and summarised by one row.
    pub rest: Vec<usize>,
}

/// Line styles for the named lines, told apart by dash and ink: (ink, dash, gap) in CSS pixels,
/// `dash == 0` for solid.
const STYLES: [(&str, u32, u32); 6] =
    [("#111827", 0, 0), ("#111827", 7, 4), ("#111827", 2, 3), ("#6b7280", 0, 0), ("#6b7280", 7, 4), ("#6b7280", 2, 3)];

/// The lines with the largest peaks are named (all of them when they fit the styles); the legend
/// lists them by their last value, highest first, as their ends stand in the plot.
pub fn rank(lines: &[Line], rows: usize) -> Ranking {
    let peak = |l: &Line| l.points.iter().map(|p| p.1).filter(|v| v.is_finite()).fold(0.0, f64::max);
    let last = |l: &Line| l.points.last().map(|p| p.1).filter(|v| v.is_finite()).unwrap_or(0.0);
    let fits = STYLES.len().min(rows.max(1));
    let keep = if lines.len() <= fits { lines.len() } else { fits.saturating_sub(1) };
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.stable_sort_by(|&a, &b| peak(&lines[b]).total_cmp(&peak(&lines[a])));
    let rest = order.split_off(keep);
    order.stable_sort_by(|&a, &b| last(&lines[b]).total_cmp(&last(&lines[a])));
    let mut rest = rest;
    rest.stable_sort();
    Ranking { named: order, rest }
}

/// Round numbers for the axes: "12", "0.5", and seconds as "30s".
fn tick_label(v: f64, span: f64, unit: &str) -> String {
    let decimals = if span < 5.0 { 1 } else { 0 };
    format!("{}{unit}", decimal::fixed(v, decimals))
}

thread_local! {
    /// Bumped when the plots' code arrives, so every plot redraws. Reference-counted rather than
    /// owned by a component, so no view's cleanup can dispose of it.
    static VERSION: ArcRwSignal<u32> = ArcRwSignal::new(0);
}

/// Changes when the plots' code has arrived: an effect that draws a plot tracks it.
pub fn version() -> u32 {
    VERSION.with(|v| v.get())
}

/// As [`version`], for the frame loop (not a reactive context).
pub fn version_untracked() -> u32 {
    VERSION.with(|v| v.get_untracked())
}

/// Draws `chart` on `el`, and records where its time axis lies; false while the canvas has no
/// layout or the plots' code is on its way.
pub fn draw(el: &HtmlCanvasElement, chart: &Chart<'_>) -> bool {
    if chart.playhead.is_some_and(|t| t <= 0.0) || chart.lines.iter().all(|l| l.points.is_empty()) {
        // At t = 0 a line is at most one point: no axes over nothing, and no need yet for the
        // plots' code, so the first view does not fetch it.
        let why = if chart.playhead.is_some_and(|t| t <= 0.0) { "The lines start with the run." } else { "Nothing to plot yet." };
        draw_nothing_yet(el, why);
        return false;
    }
    let Some(paint) = painter() else {
        if fetch_failed() {
            draw_nothing_yet(el, "The plots could not be loaded: check the connection.");
        }
        return false;
    };
    let Some(drawn) = paint(el, chart) else { return false };
    let _ = el.set_attribute("data-x0", &decimal::fixed(drawn.x0, 1));
    let _ = el.set_attribute("data-x1", &decimal::fixed(drawn.x1, 1));
    let _ = el.set_attribute("data-legend", &drawn.legend.join("|"));
    let _ = el.set_attribute("data-until", &decimal::fixed(chart.x_max * 1000.0, 0));
    true
}

/// A blank plot that says why it is blank, with the 2D context alone.
fn draw_nothing_yet(el: &HtmlCanvasElement, why: &str) {
    let (w, h) = (el.client_width() as f64, el.client_height() as f64);
    let Some(ctx) = super::bitmap::begin(el, w, h, "#ffffff") else { return };
    ctx.set_font("12px sans-serif");
    ctx.set_fill_style_str(super::canvas::palette::MUTED);
    ctx.set_text_align("center");
    ctx.set_text_baseline("middle");
    let _ = ctx.fill_text(why, w / 2.0, h / 2.0);
    for name in ["data-x0", "data-x1", "data-until", "data-legend", "data-drawn"] {
        let _ = el.remove_attribute(name);
    }
}

/// The time a click at `offset_x` (CSS pixels from the canvas's left edge) points at on a plot
/// whose axis runs from `x0` to `x1` pixels over `until` ms; `None` outside the axis.
pub fn time_at(offset_x: f64, x0: f64, x1: f64, until: f64) -> Option<Millis> {
    // Also refuses an axis of no width and NaN anywhere (every comparison with NaN is false).
    if !(x1 - x0 > 0.0 && offset_x >= x0 - 2.0 && offset_x <= x1 + 2.0) {
        return None;
    }
    let f = decimal::clamp((offset_x - x0) / (x1 - x0), 0.0, 1.0);
    Some((f * until).round() as Millis)
}

/// A click on a plot: seeks to the time under the pointer.
pub fn seek_on_click(sim: super::state::Sim, ev: web_sys::MouseEvent) {
    let Some(el) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
    let num = |name: &str| el.get_attribute(name).and_then(|s| decimal::parse(&s));
    let (Some(x0), Some(x1), Some(until)) = (num("data-x0"), num("data-x1"), num("data-until")) else { return };
    if let Some(t) = time_at(ev.offset_x() as f64, x0, x1, until) {
        sim.seek(t);
    }
}

/// What a drawn chart shows where: its time axis's ends (CSS pixels) and its legend's rows.
pub struct Drawn {
    x0: f64,
    x1: f64,
    legend: Vec<String>,
}

/// Draws a chart.
type Paint = fn(&HtmlCanvasElement, &Chart<'_>) -> Option<Drawn>;

#[cfg(not(mqviz_split))]
fn painter() -> Option<Paint> {
    Some(paint::draw)
}

#[cfg(not(mqviz_split))]
fn fetch_failed() -> bool {
    false
}

#[cfg(mqviz_split)]
thread_local! {
    static FETCHED: std::cell::Cell<Option<Paint>> = const { std::cell::Cell::new(None) };
    static ASKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static FAILED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the last fetch of the plots' code failed (the next draw asks again).
#[cfg(mqviz_split)]
fn fetch_failed() -> bool {
    FAILED.with(|f| f.get())
}

/// The split point: the chunk holds plotters and everything only the painter reaches.
#[cfg(mqviz_split)]
#[wasm_split_helpers::wasm_split(plots, fallible)]
fn fetched() -> Result<Paint, wasm_split_helpers::SplitLoaderError> {
    Ok(paint::draw)
}

#[cfg(mqviz_split)]
fn painter() -> Option<Paint> {
    if let Some(p) = FETCHED.with(|f| f.get()) {
        return Some(p);
    }
    if !ASKED.with(|a| a.replace(true)) {
        leptos::task::spawn_local(async {
            match fetched().await {
                Ok(p) => {
                    FETCHED.with(|f| f.set(Some(p)));
                    FAILED.with(|f| f.set(false));
                    VERSION.with(|v| v.update(|n| *n += 1));
                }
                // The next draw says so and asks again (not at once: no loop of failed fetches).
                Err(_) => {
                    FAILED.with(|f| f.set(true));
                    ASKED.with(|a| a.set(false));
                }
            }
        });
    }
    None
}

mod paint {
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    use plotters_canvas::CanvasBackend;
    use web_sys::HtmlCanvasElement;

    use super::{rank, tick_label, Chart, Drawn, STYLES};

    const GRID: RGBColor = RGBColor(0xe5, 0xe7, 0xeb);
    const AXIS: RGBColor = RGBColor(0x6b, 0x72, 0x80);
    const TEXT: RGBColor = RGBColor(0x4b, 0x55, 0x63);
    const INK: RGBColor = RGBColor(0x11, 0x18, 0x27);
    /// The summarised lines.
    const REST: RGBColor = RGBColor(0xd1, 0xd5, 0xdb);
    const MARK: RGBAColor = RGBAColor(0x6b, 0x72, 0x80, 0.35);

    fn rgb(hex: &str) -> RGBColor {
        let c = |i: usize| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
        RGBColor(c(1), c(3), c(5))
    }

    /// Sizes the canvas's bitmap to its CSS box times the device pixel ratio; gives the ratio.
    /// `None` while the canvas has no layout.
    fn fit(el: &HtmlCanvasElement) -> Option<f64> {
        let (w, h) = (el.client_width(), el.client_height());
        if w < 40 || h < 40 {
            return None;
        }
        Some(crate::ui::bitmap::fit(el, w as f64, h as f64))
    }

    pub fn draw(el: &HtmlCanvasElement, chart: &Chart<'_>) -> Option<Drawn> {
        let dpr = fit(el)?;
        let px = |v: f64| (v * dpr).round() as i32;
        let root = CanvasBackend::with_canvas_object(el.clone())?.into_drawing_area();
        root.fill(&WHITE).ok()?;
        let font = ("sans-serif", 11.0 * dpr).into_font();
        let (w, h) = root.dim_in_pixel();

        let row_h = px(14.0).max(1);
        let rows = ((h as i32 - px(30.0)) / row_h).max(1) as usize;
        let ranking = rank(&chart.lines, rows);
        let summary = (!ranking.rest.is_empty()).then(|| format!("+{} more {}", ranking.rest.len(), chart.noun));
        let names: Vec<&str> = ranking.named.iter().map(|&i| chart.lines[i].name.as_str()).chain(summary.as_deref()).collect();
        // The legend's margin: as wide as its longest row, at most a third of the canvas.
        let longest = names
            .iter()
            .filter_map(|n| root.estimate_text_size(n, &TextStyle::from(font.clone())).ok())
            .map(|s| s.0 as i32)
            .max()
            .unwrap_or(0);
        let legend_w = if names.is_empty() { px(8.0) } else { (px(30.0) + longest).min(w as i32 / 3) };

        let x_max = chart.x_max.max(0.001);
        let y_top = chart.lines.iter().flat_map(|l| l.points.iter()).map(|p| p.1).filter(|v| v.is_finite()).fold(0.0, f64::max);
        let y_max = if y_top <= 0.0 { 1.0 } else { y_top * 1.12 };
        let (plot_side, legend_side) = root.split_horizontally(w as i32 - legend_w);
        let mut plot = ChartBuilder::on(&plot_side)
            .margin_top(px(8.0))
            .margin_right(px(6.0))
            .margin_left(px(4.0))
            .x_label_area_size(px(20.0))
            .y_label_area_size(px(42.0))
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .ok()?;
        let x_label = |v: &f64| tick_label(*v, x_max, "s");
        let y_label = |v: &f64| tick_label(*v, y_max, "");
        plot.configure_mesh()
            .disable_x_mesh()
            .bold_line_style(GRID.stroke_width(px(1.0).max(1) as u32))
            .light_line_style(TRANSPARENT)
            .axis_style(AXIS.stroke_width(px(1.0).max(1) as u32))
            .set_all_tick_mark_size(px(3.0))
            // About one value per 50 CSS pixels of axis, so "100s" and "120s" never touch.
            .x_labels(((w as f64 - legend_w as f64) / dpr / 50.0).clamp(2.0, 8.0) as usize)
            .y_labels(5)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .label_style(font.clone().color(&TEXT))
            .draw()
            .ok()?;

        let mark = MARK.stroke_width(px(1.0).max(1) as u32);
        plot.draw_series(chart.marks.iter().map(|&x| PathElement::new(vec![(x, 0.0), (x, y_max)], mark))).ok()?;
        let thin = REST.stroke_width(px(1.0).max(1) as u32);
        // Under the named lines, and unlabelled: their one legend row comes last, below.
        for &i in &ranking.rest {
            plot.draw_series(LineSeries::new(chart.lines[i].points.iter().copied(), thin)).ok()?;
        }
        for (k, &i) in ranking.named.iter().enumerate() {
            let (ink, dash, gap) = STYLES[k];
            let style = rgb(ink).stroke_width(px(2.0) as u32);
            let points = chart.lines[i].points.iter().copied();
            if dash == 0 {
                plot.draw_series(LineSeries::new(points, style)).ok()?;
            } else {
                plot.draw_series(DashedLineSeries::new(points, px(dash as f64), px(gap as f64), style)).ok()?;
            }
            if chart.dots {
                let dot = rgb(ink).filled();
                plot.draw_series(chart.lines[i].points.iter().map(|&p| Circle::new(p, px(2.0), dot))).ok()?;
            }
        }
        if let Some(at) = chart.playhead {
            let head = INK.stroke_width(px(1.5) as u32);
            plot.draw_series(std::iter::once(PathElement::new(vec![(at, 0.0), (at, y_max)], head))).ok()?;
        }

        let (xs, _) = plot.plotting_area().get_pixel_range();
        // The legend, in its own margin: a stretch of each named line's style and its name, then
        // the summary row. Drawn here rather than by `configure_series_labels`, whose box sits
        // inside the plot (over the data); placed in the margin by coordinate, plotters 0.3.7 drew
        // its text 30 px left of the place asked for, over the plot's edge, and no line samples.
        let text = font.color(&INK).pos(Pos::new(HPos::Left, VPos::Center));
        let styles = ranking.named.iter().enumerate().map(|(k, _)| {
            let (ink, dash, gap) = STYLES[k];
            (rgb(ink).stroke_width(px(2.0) as u32), px(dash as f64), px(gap as f64))
        });
        let rest = std::iter::once((thin, 0, 0)).take(summary.is_some() as usize);
        for (row, ((style, dash, gap), name)) in styles.chain(rest).zip(&names).enumerate() {
            let y = px(10.0) + row as i32 * row_h + row_h / 2;
            legend_side.draw(&legend_sample((px(2.0), y), px(18.0), dash, gap, style)).ok()?;
            legend_side.draw(&Text::new(name.to_string(), (px(24.0), y), text.clone())).ok()?;
        }
        root.present().ok()?;
        let legend = names.iter().map(|n| n.to_string()).collect();
        Some(Drawn { x0: xs.start as f64 / dpr, x1: xs.end as f64 / dpr, legend })
    }

    /// A short stretch of the line's style, for its legend row.
    fn legend_sample(
        (x, y): (i32, i32),
        len: i32,
        dash: i32,
        gap: i32,
        style: ShapeStyle,
    ) -> DynElement<'static, CanvasBackend, (i32, i32)> {
        let ends = vec![(x, y), (x + len, y)];
        if dash == 0 {
            PathElement::new(ends, style).into_dyn()
        } else {
            plotters::element::DashedPathElement::new(ends, dash, gap, style).into_dyn()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{rank, time_at, Line, Ranking};

    fn line(peak: f64, last: f64) -> Line {
        Line { name: String::new(), points: vec![(0.0, 0.0), (1.0, peak), (2.0, last)] }
    }

    #[test]
    fn the_largest_lines_are_named_in_the_order_their_ends_stand() {
        let lines: Vec<Line> = [(5.0, 1.0), (9.0, 0.0), (3.0, 3.0), (1.0, 1.0)].iter().map(|&(p, l)| line(p, l)).collect();
        // All four fit the styles: all named, highest end first (ties keep their order).
        assert_eq!(rank(&lines, 10), Ranking { named: vec![2, 0, 3, 1], rest: vec![] });
        // Three legend rows: the two largest peaks named, the rest summarised by the third row.
        assert_eq!(rank(&lines, 3), Ranking { named: vec![0, 1], rest: vec![2, 3] });
    }

    #[test]
    fn twelve_lines_name_five_and_summarise_seven() {
        let lines: Vec<Line> = (0..12).map(|i| line(i as f64, 0.0)).collect();
        let r = rank(&lines, 20);
        assert_eq!(r.named.len(), 5);
        assert!(r.named.iter().all(|&i| i >= 7), "{r:?}");
        assert_eq!(r.rest, (0..7).collect::<Vec<_>>());
    }

    #[test]
    fn a_click_maps_to_the_time_under_it() {
        assert_eq!(time_at(50.0, 50.0, 250.0, 60_000.0), Some(0));
        assert_eq!(time_at(150.0, 50.0, 250.0, 60_000.0), Some(30_000));
        assert_eq!(time_at(251.0, 50.0, 250.0, 60_000.0), Some(60_000));
        assert_eq!(time_at(10.0, 50.0, 250.0, 60_000.0), None);
        assert_eq!(time_at(100.0, 50.0, 50.0, 60_000.0), None);
    }
}
