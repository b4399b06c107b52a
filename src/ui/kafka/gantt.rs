//! The Gantt under the canvas: per group its state, per consumer its membership state and one
//! FetchState lane per partition, over the whole run with the playhead. A stretch in which a group
//! fetched nothing (an EAGER stop-the-world) is outlined across all its lanes and named above
//! them. Drawn on a `<canvas>` at the device pixel ratio; the legend and a one-line summary are
//! text, and `data-gantt` tells the browser tests what was drawn.

use leptos::prelude::*;
use serde_json::json;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::gantt_layout::{self as gl, describe_at, layout, look, Fill, Layout, Rect};
use super::lanes::{gantt_data, GanttData, RowKind, StopWindow};
use crate::ui::state::Sim;
use mqviz_engine::decimal::fixed;
use mqviz_kafka::world::World;

const INK: &str = "#111827";
const MUTED: &str = "#4b5563";
const DARK: &str = "#1f2937";
const MID: &str = "#9ca3af";
const LIGHT: &str = "#f9fafb";
const LINE: &str = "#e5e7eb";
const FUTURE: &str = "#f3f4f6";
const STOP_BG: &str = "#e5e7eb";

/// The Gantt's height budget: a share of the window, so the topology keeps most of the stage.
fn budget() -> f64 {
    let h = web_sys::window().and_then(|w| w.inner_height().ok()).and_then(|v| v.as_f64()).unwrap_or(800.0);
    (h * 0.25).clamp(120.0, 260.0)
}

/// Fills `r` with the pattern of `fill`.
fn paint_fill(ctx: &CanvasRenderingContext2d, r: Rect, fill: Fill) {
    match fill {
        Fill::Dark => {
            ctx.set_fill_style_str(DARK);
            ctx.fill_rect(r.x, r.y, r.w, r.h);
            return;
        }
        Fill::Mid => {
            ctx.set_fill_style_str(MID);
            ctx.fill_rect(r.x, r.y, r.w, r.h);
            return;
        }
        Fill::Empty => {
            // A thin line through the middle: the lane exists, nothing happens in it.
            ctx.set_fill_style_str(MID);
            ctx.fill_rect(r.x, r.y + r.h / 2.0 - 0.5, r.w, 1.0);
            return;
        }
        _ => {}
    }
    ctx.set_fill_style_str(LIGHT);
    ctx.fill_rect(r.x, r.y, r.w, r.h);
    ctx.save();
    ctx.begin_path();
    ctx.rect(r.x, r.y, r.w, r.h);
    ctx.clip();
    ctx.begin_path();
    ctx.set_stroke_style_str(DARK);
    ctx.set_line_width(1.0);
    let step = 4.0;
    let n = ((r.w + r.h) / step).ceil() as i32 + 1;
    match fill {
        Fill::Dots => {
            ctx.set_fill_style_str(MUTED);
            let mut y = r.y + 1.5;
            while y < r.y + r.h {
                let mut x = r.x + 1.5;
                while x < r.x + r.w {
                    ctx.fill_rect(x, y, 1.2, 1.2);
                    x += 3.5;
                }
                y += 3.0;
            }
        }
        Fill::Vertical => {
            for k in 0..n {
                let x = r.x + k as f64 * step + 0.5;
                ctx.move_to(x, r.y);
                ctx.line_to(x, r.y + r.h);
            }
        }
        Fill::Forward | Fill::Cross | Fill::Back => {
            for k in 0..n {
                let x = r.x - r.h + k as f64 * step;
                if fill != Fill::Back {
                    ctx.move_to(x, r.y + r.h);
                    ctx.line_to(x + r.h, r.y);
                }
                if fill != Fill::Forward {
                    ctx.move_to(x, r.y);
                    ctx.line_to(x + r.h, r.y + r.h);
                }
            }
        }
        _ => {}
    }
    ctx.stroke();
    ctx.restore();
}

/// The state's name inside its bar, when it fits (on a white ground over a pattern).
fn paint_bar_text(ctx: &CanvasRenderingContext2d, r: Rect, fill: Fill, text: &str) {
    if text.is_empty() || r.h < gl::LABEL_MIN_H {
        return;
    }
    let tw = ctx.measure_text(text).map(|m| m.width()).unwrap_or(1e9);
    if tw + 8.0 > r.w {
        return;
    }
    let (x, y) = (r.x + 4.0, r.y + r.h / 2.0);
    match fill {
        Fill::Dark => ctx.set_fill_style_str("#ffffff"),
        Fill::Mid | Fill::Empty => ctx.set_fill_style_str(INK),
        _ => {
            ctx.set_fill_style_str("#ffffff");
            ctx.fill_rect(x - 2.0, r.y + 1.0, tw + 4.0, r.h - 2.0);
            ctx.set_fill_style_str(INK);
        }
    }
    let _ = ctx.fill_text(text, x, y);
}

fn draw(el: &HtmlCanvasElement, l: &Layout) {
    // web-sys here has no CssStyleDeclaration: the height goes in through the attribute.
    let _ = el.set_attribute("style", &format!("height: {}px", l.height.round()));
    let Some(ctx) = crate::ui::bitmap::begin(el, l.width, l.height, "#ffffff") else { return };
    // What has not happened yet is greyed.
    ctx.set_fill_style_str(FUTURE);
    ctx.fill_rect(l.playhead_x, l.plot.y, l.plot.x + l.plot.w - l.playhead_x, l.plot.h);
    for w in &l.windows {
        ctx.set_fill_style_str(STOP_BG);
        ctx.fill_rect(w.rect.x, w.rect.y, w.rect.w, w.rect.h);
    }
    ctx.set_text_baseline("middle");
    // Band separators and row labels.
    for (i, r) in l.rows.iter().enumerate() {
        if r.kind != RowKind::Partition && i > 0 {
            ctx.set_fill_style_str(LINE);
            ctx.fill_rect(0.0, r.rect.y - 2.0, l.width, 1.0);
        }
        if !r.labelled {
            continue;
        }
        let (font, colour) = match r.kind {
            RowKind::Group => ("700 11px system-ui, sans-serif", INK),
            RowKind::Member => ("600 11px system-ui, sans-serif", INK),
            RowKind::Partition => ("10px system-ui, sans-serif", MUTED),
        };
        ctx.set_font(font);
        ctx.set_fill_style_str(colour);
        ctx.set_text_align("right");
        let label = match r.kind {
            RowKind::Group => format!("group {}", r.label),
            _ => r.label.clone(),
        };
        let short: String = label.chars().take(16).collect();
        let _ = ctx.fill_text(&short, gl::LABEL_W - 6.0, r.rect.y + r.rect.h / 2.0);
    }
    ctx.set_text_align("left");
    for b in &l.bars {
        let lk = look(b.state);
        paint_fill(&ctx, b.rect, lk.fill);
        let row = &l.rows[b.row];
        ctx.set_font(if row.rect.h >= 12.0 { "600 10px system-ui, sans-serif" } else { "600 9px system-ui, sans-serif" });
        paint_bar_text(&ctx, b.rect, lk.fill, lk.short);
    }
    // Stop-the-world windows: outlined across the group's lanes and named above the rows.
    ctx.set_font("600 11px system-ui, sans-serif");
    for w in &l.windows {
        ctx.set_stroke_style_str(INK);
        ctx.set_line_width(1.5);
        ctx.stroke_rect(w.rect.x, w.rect.y, w.rect.w, w.rect.h);
        let tw = ctx.measure_text(&w.text).map(|m| m.width()).unwrap_or(80.0);
        let x = (w.rect.x + w.rect.w / 2.0 - tw / 2.0).clamp(l.plot.x, (l.width - tw - 2.0).max(l.plot.x));
        ctx.set_fill_style_str(INK);
        let _ = ctx.fill_text(&w.text, x, gl::TOP_H / 2.0);
        ctx.fill_rect(w.rect.x + w.rect.w / 2.0 - 0.75, gl::TOP_H - 4.0, 1.5, w.rect.y - gl::TOP_H + 4.0);
    }
    // Time axis.
    let axis_y = l.plot.y + l.plot.h;
    ctx.set_font("10px system-ui, sans-serif");
    ctx.set_fill_style_str(MUTED);
    ctx.set_text_align("center");
    for (x, t) in &l.ticks {
        ctx.fill_rect(*x - 0.5, axis_y, 1.0, 3.0);
        let _ = ctx.fill_text(t, x.clamp(l.plot.x + 8.0, l.width - 12.0), axis_y + gl::AXIS_H / 2.0 + 1.0);
    }
    // The playhead.
    ctx.set_fill_style_str(INK);
    ctx.fill_rect(l.playhead_x - 1.0, l.plot.y - 2.0, 2.0, l.plot.h + 4.0);
}

/// What the browser tests read: every row's states in order, the windows, the time.
fn describe(d: &GanttData) -> String {
    let kind = |k: RowKind| match k {
        RowKind::Group => "group",
        RowKind::Member => "member",
        RowKind::Partition => "partition",
    };
    json!({
        "now": d.now,
        "rows": d.rows.iter().map(|r| json!({
            "kind": kind(r.kind), "label": r.label, "consumer": r.consumer, "group": r.group,
            "states": r.spans.iter().filter(|s| s.from <= d.now).map(|s| s.state).collect::<Vec<_>>(),
            "now": r.state_at(d.now),
        })).collect::<Vec<_>>(),
        "windows": d.windows.iter().map(|w| json!({
            "group": w.group, "from": w.from, "to": w.to, "partitions": w.partitions, "idle": w.idle,
        })).collect::<Vec<_>>(),
    })
    .to_string()
}

/// One sentence per stop-the-world window, or that there was none.
pub fn summary(windows: &[StopWindow]) -> String {
    if windows.is_empty() {
        return "No stop-the-world so far: no member waiting in a rebalance was left with nothing to fetch.".into();
    }
    let secs = |t: u64| format!("{} s", fixed(t as f64 / 1000.0, 1));
    windows
        .iter()
        .map(|w| {
            let took = match w.to {
                Some(to) if to - w.from < 1000 => format!("for {} ms", to - w.from),
                Some(to) => format!("for {} s", fixed((to - w.from) as f64 / 1000.0, 1)),
                None => "(still going)".into(),
            };
            let idle = if w.idle == w.partitions { format!("all {}", w.partitions) } else { format!("{} of {}", w.idle, w.partitions) };
            format!(
                "{}: stop-the-world at {} {took}: the members waiting in the rebalance had revoked everything and fetched nothing; at worst {idle} partitions were idle.",
                w.group,
                secs(w.from)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The fills the legend shows: those of the states on the chart.
fn fills_used(d: &GanttData) -> Vec<Fill> {
    let mut out: Vec<Fill> = Vec::new();
    for s in d.rows.iter().flat_map(|r| r.spans.iter()) {
        let f = look(s.state).fill;
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

fn swatch_class(f: Fill) -> &'static str {
    match f {
        Fill::Dark => "kg-dark",
        Fill::Mid => "kg-mid",
        Fill::Dots => "kg-dots",
        Fill::Forward => "kg-forward",
        Fill::Back => "kg-back",
        Fill::Vertical => "kg-vertical",
        Fill::Cross => "kg-cross",
        Fill::Empty => "kg-empty",
    }
}

#[component]
pub fn Gantt() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let canvas: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let open = RwSignal::new(true);
    let resized = RwSignal::new(0u32);
    let _resize = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n = n.wrapping_add(1)));
    let last: StoredValue<Option<Layout>> = StoredValue::new(None);
    let text = RwSignal::new(String::new());
    let fills = RwSignal::new(Vec::<Fill>::new());
    Effect::new(move |_| {
        sim.ui_version.track();
        resized.track();
        if !open.get() {
            return;
        }
        let Some(el) = canvas.get() else { return };
        request_animation_frame(move || {
            let Some(data) = sim.peek_as::<World, _>(gantt_data) else { return };
            let width = el.client_width() as f64;
            if width < 60.0 {
                return;
            }
            let l = layout(&data, width, budget());
            draw(&el, &l);
            let _ = el.set_attribute("data-gantt", &describe(&data));
            let s = summary(&data.windows);
            if text.get_untracked() != s {
                text.set(s);
            }
            let f = fills_used(&data);
            if fills.get_untracked() != f {
                fills.set(f);
            }
            last.set_value(Some(l));
        });
    });
    let on_move = move |ev: leptos::ev::MouseEvent| {
        let tip = last.with_value(|l| l.as_ref().and_then(|l| describe_at(l, ev.offset_x() as f64, ev.offset_y() as f64)));
        if let Some(el) = canvas.get_untracked() {
            let _ = match tip {
                Some(t) => el.set_attribute("title", &t),
                None => el.remove_attribute("title"),
            };
        }
    };
    let legend = move || {
        let used = fills.get();
        gl::LEGEND
            .iter()
            .filter(|(f, _)| used.contains(f))
            .map(|(f, words)| {
                view! {
                    <li>
                        <i class=format!("kg-swatch {}", swatch_class(*f)) aria-hidden="true"></i>
                        {*words}
                    </li>
                }
            })
            .collect_view()
    };
    view! {
        <details
            class="kafka-gantt"
            data-testid="kafka-gantt"
            open
            on:toggle=move |ev| {
                use wasm_bindgen::JsCast;
                let now_open = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                    .map(|d| d.has_attribute("open"))
                    .unwrap_or(true);
                open.set(now_open);
            }
        >
            <summary>"Timeline: group, member and FetchState lanes (a stop-the-world is outlined)"</summary>
            <canvas
                data-testid="kafka-gantt-canvas"
                node_ref=canvas
                on:mousemove=on_move
                role="img"
                aria-label="Gantt chart of each group's state, each member's state and each partition's FetchState over time; the summary below says when a group fetched nothing."
            ></canvas>
            <p class="kg-summary" data-testid="kafka-gantt-summary">{move || text.get()}</p>
            <ul class="kg-legend" aria-label="Timeline legend">
                {legend}
                <li><i class="kg-swatch kg-empty" aria-hidden="true"></i>"not assigned / not a member"</li>
                <li><i class="kg-swatch kg-stop" aria-hidden="true"></i>"group fetched nothing"</li>
            </ul>
        </details>
    }
}
