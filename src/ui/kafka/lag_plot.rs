//! The lag plot (the "Lag" tab): one line per partition (per group and partition when several
//! groups read), drawn like the shared plots: plotters on a `<canvas>` at the device pixel ratio,
//! lines told apart by dash and grey level, each named at its end in a margin of its own (no
//! legend over the data), a vertical line at the playhead.

use crate::sim::sort::StableSort;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;

use super::lag::{lag_series, LagSeries};
use crate::sim::engine::Millis;
use crate::sim::kafka::world::World;
use crate::ui::state::Sim;

/// Ink levels (all at least 4.5:1 on white, so the end labels are readable) × three dash styles.
const INKS: [RGBColor; 4] = [RGBColor(17, 24, 39), RGBColor(55, 65, 81), RGBColor(75, 85, 99), RGBColor(107, 114, 128)];
/// Series beyond this many are drawn faint and unlabelled.
const LABELLED: usize = 12;

/// Sizes the canvas to its CSS box times the device pixel ratio; returns that ratio.
fn fit(el: &HtmlCanvasElement) -> Option<f64> {
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
    Some(dpr)
}

/// End labels pushed apart top-down by `gap`, then the stack moved up if it ran past `bottom`.
pub fn spread(mut ys: Vec<(i32, usize)>, gap: i32, top: i32, bottom: i32) -> Vec<(i32, usize)> {
    ys.stable_sort();
    // Too many to fit at `gap`: closer together rather than piled up at the top.
    let gap = if ys.len() > 1 { gap.min((bottom - top).max(0) / (ys.len() as i32 - 1)) } else { gap };
    for i in 1..ys.len() {
        if ys[i].0 < ys[i - 1].0 + gap {
            ys[i].0 = ys[i - 1].0 + gap;
        }
    }
    if let Some(last) = ys.last().map(|p| p.0) {
        let over = last - bottom;
        if over > 0 {
            for p in ys.iter_mut() {
                p.0 = (p.0 - over).max(top);
            }
        }
    }
    ys
}

fn draw(el: &HtmlCanvasElement, series: &[LagSeries], until: Millis, now: Millis) {
    let Some(dpr) = fit(el) else { return };
    let Some(backend) = CanvasBackend::with_canvas_object(el.clone()) else { return };
    let px = |v: f64| (v * dpr).round() as i32;
    let pxu = |v: f64| (v * dpr).round() as u32;
    let root = backend.into_drawing_area();
    let _ = root.fill(&WHITE);
    let x_max = (until as f64 / 1000.0).max(0.001);
    let y_top = series.iter().flat_map(|s| s.points.iter()).map(|p| p.1 as f64).fold(0.0, f64::max);
    let y_max = if y_top <= 0.0 { 1.0 } else { y_top * 1.12 };
    let labelled = series.len().min(LABELLED);
    let longest = series.iter().take(labelled).map(|s| s.name.chars().count()).max().unwrap_or(0).min(24);
    let label_w = if labelled == 0 { 8.0 } else { 10.0 + longest as f64 * 6.0 };
    let Ok(mut chart) = ChartBuilder::on(&root)
        .margin(px(6.0))
        .margin_right(px(label_w))
        .x_label_area_size(px(18.0))
        .y_label_area_size(px(40.0))
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
        .y_labels(5)
        .x_label_formatter(&|x| format!("{x:.0}s"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", px(10.0)).into_font().color(&RGBColor(75, 85, 99)))
        .draw();
    // The playhead.
    let t = now as f64 / 1000.0;
    let _ = chart
        .draw_series(std::iter::once(PathElement::new(vec![(t, 0.0), (t, y_max)], RGBColor(17, 24, 39).stroke_width(pxu(1.5)))));
    let mut ends: Vec<(f64, usize)> = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let faint = i >= LABELLED;
        let col = if faint { RGBColor(209, 213, 219) } else { INKS[(i / 3) % INKS.len()] };
        let style = col.stroke_width(pxu(if faint { 1.0 } else { 1.6 }));
        let pts: Vec<(f64, f64)> = s.points.iter().map(|&(at, v)| (at as f64 / 1000.0, v as f64)).collect();
        if let Some(&(_, last)) = pts.last() {
            if !faint {
                ends.push((last, i));
            }
        }
        let _ = match i % 3 {
            0 => chart.draw_series(LineSeries::new(pts, style)).map(|_| ()),
            1 => chart.draw_series(DashedLineSeries::new(pts, pxu(6.0), pxu(3.0), style)).map(|_| ()),
            _ => chart.draw_series(DashedLineSeries::new(pts, pxu(1.5), pxu(3.0), style)).map(|_| ()),
        };
    }
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let ys: Vec<(i32, usize)> = ends.iter().map(|&(v, i)| (chart.backend_coord(&(x_max, v)).1, i)).collect();
    for (y, i) in spread(ys, px(11.0), yr.start, yr.end - px(4.0)) {
        let col = INKS[(i / 3) % INKS.len()];
        let name: String = series[i].name.chars().take(24).collect();
        let style = ("sans-serif", px(10.0)).into_font().color(&col).pos(Pos::new(HPos::Left, VPos::Center));
        let _ = root.draw(&Text::new(name, (xr.end + px(4.0), y), style));
    }
    let _ = root.present();
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

#[cfg(test)]
mod tests {
    use super::spread;

    #[test]
    fn end_labels_are_pushed_apart_and_kept_above_the_bottom() {
        let ys = |v: Vec<(i32, usize)>| v.into_iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(ys(spread(vec![(50, 0), (52, 1), (51, 2)], 11, 10, 200)), [50, 61, 72]);
        assert_eq!(ys(spread(vec![(198, 0), (195, 1)], 11, 10, 200)), [189, 200]);
        assert_eq!(ys(spread(vec![(20, 0), (20, 1), (20, 2)], 11, 10, 20)), [10, 15, 20]);
    }
}
