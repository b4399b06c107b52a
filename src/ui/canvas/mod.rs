//! The topology canvas, drawn from any model's neutral `View`: producers, one box per broker with
//! its state lines (a RocketMQ broker shows each topic's table entry, and the line flashes when a
//! heartbeat overwrites it), partitions as logs of cells, assignment edges, consumers with a mark
//! when their own subscription differs from what the broker applies, heartbeats travelling as
//! pulses, and message dots travelling along the edges.
//!
//! One meaning per colour (`palette`): hues are tags or keys; a cell's fate is its shape (filled =
//! consumed, outline = waiting, crossed = skipped, dashed = retrying, dark = dead-lettered) and a
//! dropped dot turns into a cross and fades. Canvas only, no DOM node per message; the geometry
//! comes from `layout`, which is tested at every size.

mod layout;
pub(crate) mod palette;

use mqviz_engine::decimal;
use mqviz_engine::vec_map::VecMap;
use std::cell::RefCell;
use std::f64::consts::PI;

use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

pub use layout::{Layout, Pages, Rect, Target};

use super::track::{DotKind, Tracker, DOT_MS};
use mqviz_engine::Millis;
use mqviz_model::{Cell, ConsumerState, Fate, MarkKind, MsgId, Simulation, View};

/// A state line flashes this long (wall ms) after it changed.
const FLASH_MS: f64 = 1600.0;

/// The visible cells of one row, for clicks and keyboard focus.
struct RowCells {
    partition: u32,
    bar: Rect,
    cell_w: f64,
    cells: Vec<Cell>,
}

/// Keyboard focus on the canvas: a target, and for a partition row a cell in it.
#[derive(Clone, Debug, Default, PartialEq)]
struct Focus {
    target: usize,
    cell: Option<usize>,
}

#[derive(Default)]
struct CanvasState {
    pages: Pages,
    layout: Option<Layout>,
    targets: Vec<(Target, Rect)>,
    target_keys: Vec<Option<String>>,
    rows: Vec<RowCells>,
    /// (broker, line) → (the `changed_at` seen, wall time the flash started).
    flashes: VecMap<(usize, usize), (Millis, f64)>,
    focus: Option<Focus>,
    highlight: Option<String>,
    /// Where the highlight was drawn in the last frame.
    highlight_rect: Option<Rect>,
    /// Set when the highlight changes, cleared by the next draw.
    redraw: bool,
    /// The state badges drawn last: (text, text as drawn, its pill).
    badges: Vec<(String, String, Rect)>,
    /// The last `data-scene` written.
    scene: String,
}

thread_local! {
    /// One state per canvas slot (0: the main canvas, 1: the comparison's second canvas).
    static STATES: RefCell<Vec<CanvasState>> = const { RefCell::new(Vec::new()) };
    /// The font last set with `font()`, and text widths measured in it: measuring crosses into
    /// the browser, and the same labels are fitted every frame.
    static FONT: RefCell<String> = const { RefCell::new(String::new()) };
    static WIDTHS: RefCell<std::collections::HashMap<(String, String), f64>> = RefCell::new(std::collections::HashMap::new());
    /// The texts the frame being drawn had to shorten (reported in `data-scene`).
    static CUT: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// Every text the frame being drawn wrote, with its box (x, y, w, h in CSS px; reported in
    /// `data-scene`, where a browser test checks that no two overlap and none leaves the canvas).
    static TEXTS: RefCell<Vec<(String, Rect)>> = const { RefCell::new(Vec::new()) };
}

/// Writes `s` with its left end at `x` and its middle at `y` (the canvas's alignment and
/// baseline), and records its box.
fn fill(ctx: &CanvasRenderingContext2d, s: &str, x: f64, y: f64) {
    let _ = ctx.fill_text(s, x, y);
    let size = FONT.with(|f| {
        let f = f.borrow();
        f.split_whitespace().find_map(|w| w.strip_suffix("px").and_then(decimal::parse)).unwrap_or(12.0)
    });
    let r = Rect { x, y: y - size / 2.0, w: measure(ctx, s), h: size };
    TEXTS.with(|t| t.borrow_mut().push((s.to_string(), r)));
}

/// Runs `f` on the state of canvas `slot`.
fn with_state<R>(slot: usize, f: impl FnOnce(&mut CanvasState) -> R) -> R {
    STATES.with(|all| {
        let mut all = all.borrow_mut();
        while all.len() <= slot {
            all.push(CanvasState::default());
        }
        f(&mut all[slot])
    })
}

/// The width of `s` in the current font, measured once per (font, text).
fn measure(ctx: &CanvasRenderingContext2d, s: &str) -> f64 {
    let font = FONT.with(|f| f.borrow().clone());
    let key = (font, s.to_string());
    if let Some(w) = WIDTHS.with(|m| m.borrow().get(&key).copied()) {
        return w;
    }
    let w = ctx.measure_text(s).map(|m| m.width()).unwrap_or(s.len() as f64 * 7.0);
    WIDTHS.with(|m| {
        let mut m = m.borrow_mut();
        // Bounded: a long session measures many different strings.
        if m.len() > 8192 {
            m.clear();
        }
        m.insert(key, w);
    });
    w
}

/// What one frame drew.
pub struct Drawn {
    pub dots: usize,
    /// Something is still animating (a flash): draw again next frame even when paused.
    pub busy: bool,
}

/// What a click or a key press on the canvas asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Act {
    /// Show this message's provenance.
    Open(MsgId),
    /// A "+N more" row turned its page: redraw.
    Paged,
    /// Focus moved: announce this.
    Focused(String),
    Nothing,
}

fn rounded(ctx: &CanvasRenderingContext2d, r: Rect, radius: f64) {
    let rad = radius.min(r.h / 2.0).min(r.w / 2.0);
    ctx.begin_path();
    ctx.move_to(r.x + rad, r.y);
    ctx.line_to(r.right() - rad, r.y);
    ctx.quadratic_curve_to(r.right(), r.y, r.right(), r.y + rad);
    ctx.line_to(r.right(), r.bottom() - rad);
    ctx.quadratic_curve_to(r.right(), r.bottom(), r.right() - rad, r.bottom());
    ctx.line_to(r.x + rad, r.bottom());
    ctx.quadratic_curve_to(r.x, r.bottom(), r.x, r.bottom() - rad);
    ctx.line_to(r.x, r.y + rad);
    ctx.quadratic_curve_to(r.x, r.y, r.x + rad, r.y);
    ctx.close_path();
}

/// `text`, shortened with "…" until it fits `max_w` at the context's current font.
fn fit(ctx: &CanvasRenderingContext2d, text: &str, max_w: f64) -> String {
    let width = |s: &str| measure(ctx, s);
    if max_w <= 0.0 {
        return String::new();
    }
    if width(text) <= max_w {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let s: String = chars[..mid].iter().collect::<String>() + "…";
        if width(&s) <= max_w {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        return String::new();
    }
    chars[..lo].iter().collect::<String>() + "…"
}

/// `text` broken into at most `max_lines` lines of at most `max_w` (the last one shortened with
/// "…" if it still does not fit; the scene's `cut` then lists `text`, as `text()` does).
fn wrap(ctx: &CanvasRenderingContext2d, text: &str, max_w: f64, max_lines: usize) -> Vec<String> {
    let lines = wrap_lines(ctx, text, max_w, max_lines);
    if lines.join(" ") != text {
        CUT.with(|c| c.borrow_mut().push(text.to_string()));
    }
    lines
}

fn wrap_lines(ctx: &CanvasRenderingContext2d, text: &str, max_w: f64, max_lines: usize) -> Vec<String> {
    let width = |s: &str| measure(ctx, s);
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    let words: Vec<&str> = text.split(' ').collect();
    for (i, w) in words.iter().enumerate() {
        let candidate = if cur.is_empty() { w.to_string() } else { format!("{cur} {w}") };
        if width(&candidate) <= max_w || cur.is_empty() {
            cur = candidate;
            continue;
        }
        lines.push(std::mem::take(&mut cur));
        if lines.len() == max_lines {
            // No room left: the rest goes on the last line, shortened.
            let rest = words[i..].join(" ");
            let last = lines.pop().unwrap_or_default();
            lines.push(fit(ctx, &format!("{last} {rest}"), max_w));
            return lines;
        }
        cur = w.to_string();
    }
    if !cur.is_empty() {
        lines.push(fit(ctx, &cur, max_w));
    }
    lines
}

fn text(ctx: &CanvasRenderingContext2d, s: &str, x: f64, y: f64, max_w: f64) {
    let t = fit(ctx, s, max_w);
    if t != s {
        CUT.with(|c| c.borrow_mut().push(s.to_string()));
    }
    if !t.is_empty() {
        fill(ctx, &t, x, y);
    }
}

fn font(ctx: &CanvasRenderingContext2d, size: f64, weight: &str) {
    let f = format!("{weight} {}px system-ui, sans-serif", decimal::fixed(size, 1));
    ctx.set_font(&f);
    FONT.with(|cur| *cur.borrow_mut() = f);
}

fn bezier(p0: (f64, f64), p1: (f64, f64), t: f64) -> (f64, f64) {
    let mx = (p0.0 + p1.0) / 2.0;
    let u = 1.0 - t;
    let x = u * u * u * p0.0 + 3.0 * u * u * t * mx + 3.0 * u * t * t * mx + t * t * t * p1.0;
    let y = u * u * u * p0.1 + 3.0 * u * u * t * p0.1 + 3.0 * u * t * t * p1.1 + t * t * t * p1.1;
    (x, y)
}

/// Cells grouped by how they are drawn, so a frame makes a few paths instead of one call per cell.
#[derive(Default)]
struct CellBatch {
    /// (fate, colour key) → cell rectangles.
    groups: VecMap<(u8, u32), Vec<Rect>>,
    /// Letters drawn on cells (SQL92 verdicts).
    letters: Vec<(&'static str, Rect)>,
}

impl CellBatch {
    fn add(&mut self, c: &Cell, r: Rect) {
        let fate = match c.fate {
            Fate::Consumed => 0,
            Fate::Pending => 1,
            Fate::Skipped => 2,
            Fate::Retrying => 3,
            Fate::DeadLettered => 4,
        };
        self.groups.entry((fate, c.key)).or_default().push(r);
        if let Some(note) = c.note {
            let letter = match note {
                "FALSE" => "F",
                "NULL" => "N",
                "EVAL_ERROR" => "E",
                "BLOOM_MISS" => "B",
                _ => "?",
            };
            self.letters.push((letter, r));
        }
    }

    /// Draws every cell in the style of its fate: filled = consumed, outline = waiting, outline
    /// and a cross = skipped, dashed = retrying, dark with a coloured top = dead-lettered.
    fn draw(&self, ctx: &CanvasRenderingContext2d, font_px: f64) {
        let outline = |rs: &[Rect]| {
            ctx.begin_path();
            for r in rs {
                ctx.rect(r.x + 0.6, r.y + 0.6, (r.w - 1.2).max(0.5), (r.h - 1.2).max(0.5));
            }
            ctx.stroke();
        };
        ctx.set_line_width(1.2);
        for (&(fate, key), rs) in &self.groups {
            let col = palette::tag(key);
            match fate {
                0 => {
                    ctx.set_fill_style_str(col);
                    ctx.begin_path();
                    for r in rs {
                        ctx.rect(r.x, r.y, r.w, r.h);
                    }
                    ctx.fill();
                }
                1 => {
                    ctx.set_stroke_style_str(col);
                    outline(rs);
                }
                // Lost: the loudest mark, a tinted cell with a thick cross in the loss colour
                // (drawn over all cells below), its tag colour kept as the outline.
                2 => {
                    ctx.set_fill_style_str(palette::LOST_TINT);
                    ctx.begin_path();
                    for r in rs {
                        ctx.rect(r.x, r.y, r.w, r.h);
                    }
                    ctx.fill();
                    ctx.set_stroke_style_str(col);
                    outline(rs);
                }
                3 => {
                    let dash = js_sys::Array::of2(&2.0.into(), &2.0.into());
                    ctx.set_line_dash(&dash).ok();
                    ctx.set_stroke_style_str(col);
                    outline(rs);
                    ctx.set_line_dash(&js_sys::Array::new()).ok();
                }
                _ => {
                    ctx.set_fill_style_str(palette::INK);
                    ctx.begin_path();
                    for r in rs {
                        ctx.rect(r.x, r.y, r.w, r.h);
                    }
                    ctx.fill();
                    ctx.set_fill_style_str(col);
                    ctx.begin_path();
                    for r in rs {
                        ctx.rect(r.x, r.y, r.w, (r.h * 0.25).max(1.0));
                    }
                    ctx.fill();
                }
            }
        }
        // The crosses of lost cells, thick, in the loss colour, one path; they reach a little
        // past the cell so that even a thin cell of a long log shows one.
        ctx.set_stroke_style_str(palette::LOST);
        ctx.set_line_width(2.2);
        ctx.set_line_cap("round");
        ctx.begin_path();
        for ((fate, _), rs) in &self.groups {
            if *fate == 2 {
                for r in rs {
                    let half = (r.w.max(r.h * 0.5)) / 2.0;
                    let (cx, cy) = (r.x + r.w / 2.0, r.mid_y());
                    let hy = r.h / 2.0 + 1.0;
                    ctx.move_to(cx - half, cy - hy);
                    ctx.line_to(cx + half, cy + hy);
                    ctx.move_to(cx + half, cy - hy);
                    ctx.line_to(cx - half, cy + hy);
                }
            }
        }
        ctx.stroke();
        ctx.set_line_cap("butt");
        // The SQL92 verdict that skipped a message, where there is room for a letter.
        if !self.letters.is_empty() {
            ctx.set_text_align("center");
            ctx.set_fill_style_str(palette::INK);
            for (letter, r) in &self.letters {
                if r.w >= font_px * 0.75 && r.h >= font_px * 0.9 {
                    font(ctx, (font_px * 0.75).min(r.h - 2.0), "700");
                    let _ = ctx.fill_text(letter, r.x + r.w / 2.0, r.mid_y());
                }
            }
            ctx.set_text_align("left");
        }
    }
}

fn draw_cross(ctx: &CanvasRenderingContext2d, x: f64, y: f64, s: f64) {
    ctx.move_to(x - s, y - s);
    ctx.line_to(x + s, y + s);
    ctx.move_to(x + s, y - s);
    ctx.line_to(x - s, y + s);
}

/// Draws the model. `clock` is the animation clock (ms) dots move by; `wall` is the page's clock
/// (ms), for flashes that play out even while paused.
/// `describe`: also refresh the canvas's `data-scene` (costs a little; the frame loop asks for it
/// when paused and a few times a second while playing).
pub fn draw(
    el: &HtmlCanvasElement,
    slot: usize,
    sim: &dyn Simulation,
    t: &Tracker,
    clock: f64,
    wall: f64,
    describe: bool,
) -> Drawn {
    let idle = Drawn { dots: 0, busy: false };
    let cw = el.client_width().max(200) as f64;
    let ch = el.client_height().max(160) as f64;
    let Some(ctx) = super::bitmap::begin(el, cw, ch, palette::BG) else { return idle };
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");

    let view = sim.view();
    CUT.with(|c| c.borrow_mut().clear());
    TEXTS.with(|t| t.borrow_mut().clear());
    with_state(slot, |st| {
        let mut l = layout::layout(&view, cw, ch, &st.pages);
        // A tour's highlight on a page not shown: turn to the page that shows it.
        if let Some(key) = st.highlight.as_deref().filter(|k| l.highlight_rect(&view, k).is_none()) {
            if let Some(pages) = layout::pages_showing(&view, cw, ch, &st.pages, key) {
                st.pages = pages;
                l = layout::layout(&view, cw, ch, &st.pages);
            }
        }
        st.highlight_rect = st.highlight.as_deref().and_then(|k| l.highlight_rect(&view, k));
        st.redraw = false;
        let (busy, slots) = paint(&ctx, sim, &view, &l, t, clock, wall, st);
        let (dots, crosses) = paint_dots(&ctx, &view, &l, t, clock, slots);
        st.targets = l.targets();
        st.target_keys = st.targets.iter().map(|(tg, _)| tg.key(&view)).collect();
        paint_focus(&ctx, st, &l);
        if describe {
            let scene = scene(&view, &l, st, t.pulses.len(), dots, crosses, busy);
            if st.scene != scene {
                let _ = el.set_attribute("data-scene", &scene);
                st.scene = scene;
            }
        }
        st.layout = Some(l);
        Drawn { dots, busy }
    })
}

/// What the frame shows, as JSON on the canvas element (`data-scene`): the browser tests read
/// the drawing through it, and it changes only when the picture does.
fn scene(view: &View, l: &Layout, st: &CanvasState, pulses: usize, dots: usize, crosses: usize, flashing: bool) -> String {
    use serde_json::json;
    let mut fates = [0u32; 5];
    let mut notes = 0;
    for row in &st.rows {
        for c in &row.cells {
            fates[match c.fate {
                Fate::Consumed => 0,
                Fate::Pending => 1,
                Fate::Skipped => 2,
                Fate::Retrying => 3,
                Fate::DeadLettered => 4,
            }] += 1;
            notes += u32::from(c.note.is_some());
        }
    }
    let brokers: Vec<_> = l
        .brokers
        .iter()
        .map(|b| {
            let bv = &view.brokers[b.index];
            json!({"name": bv.name, "lines": b.lines.iter().map(|(i, _)| &bv.lines[*i].text).collect::<Vec<_>>(),
                   "alerts": b.lines.iter().filter(|(i, _)| bv.lines[*i].alert).count()})
        })
        .collect();
    let consumers: Vec<_> = l
        .consumers
        .iter()
        .map(|(i, _)| {
            let c = &view.consumers[*i];
            json!({"name": c.name, "state": c.state.label(), "mismatch": c.mismatch.is_some()})
        })
        .collect();
    json!({
        "brokers": brokers,
        "consumers": consumers,
        "rows": l.rows.iter().map(|r| &r.label).collect::<Vec<_>>(),
        "mores": l.mores.iter().map(|m| json!({"list": m.list, "hidden": m.hidden})).collect::<Vec<_>>(),
        "cells": {"consumed": fates[0], "pending": fates[1], "skipped": fates[2], "retrying": fates[3], "dead": fates[4], "notes": notes},
        // Where a test can point: the first and last cell of the first row, and each "+N more" row.
        "probe": st.rows.first().filter(|r| !r.cells.is_empty()).map(|r| json!({
            "x": r.bar.x + r.cell_w * 0.5, "y": r.bar.mid_y(),
            "lastX": r.bar.x + r.cell_w * (r.cells.len() as f64 - 0.5),
        })),
        "moreAt": l.mores.iter().map(|m| json!({"list": m.list, "x": m.rect.x + 10.0, "y": m.rect.mid_y()})).collect::<Vec<_>>(),
        "moving": dots > 0, "pulses": pulses > 0, "crosses": crosses > 0, "flashing": flashing,
        "labels": view.labels,
        // Each partition badge in the view with how many partitions carry it.
        "badges": view.topics.iter().flat_map(|t| &t.partitions).filter_map(|p| p.badge.as_deref())
            .fold(serde_json::Map::new(), |mut m, b| {
                let n = m.get(b).and_then(serde_json::Value::as_u64).unwrap_or(0);
                m.insert(b.to_string(), json!(n + 1));
                m
            }),
        // Each badge drawn: its text, the text as drawn (shortened if it had to be) and its pill.
        "badgeBoxes": st.badges.iter().map(|(b, shown, r)| json!({"text": b, "shown": shown,
            "x": r.x, "y": r.y, "w": r.w, "h": r.h})).collect::<Vec<_>>(),
        "width": l.canvas.w,
        "font": l.font,
        // The tour's highlight as drawn (canvas CSS px), and every text shortened with "…".
        "highlight": st.highlight.as_ref().zip(st.highlight_rect).map(|(k, r)| json!({"key": k, "x": r.x, "y": r.y, "w": r.w, "h": r.h})),
        "cut": CUT.with(|c| c.borrow().clone()),
        // Every element a tour can point at: [key, x, y, w, h], as the tour rings it.
        "elements": st.targets.iter().zip(&st.target_keys).filter_map(|((t, r), k)| {
            let r = l.ringed(t, *r);
            k.as_ref().map(|k| json!([k, r.x, r.y, r.w, r.h]))
        }).collect::<Vec<_>>(),
        // Every text drawn: [text, x, y, w, h].
        "texts": TEXTS.with(|t| t.borrow().iter().map(|(s, r)| json!([s, r.x, r.y, r.w, r.h])).collect::<Vec<_>>()),
    })
    .to_string()
}

/// The most of a bar a state badge may take with the cells after it (else it sits on the bar's
/// top edge): the cells keep at least two fifths of the bar.
const BADGE_LANE_SHARE: f64 = 0.6;

/// A state badge's font size and pills for `bar`: inside the bar at its left end, vertically
/// centred, and on the bar's top edge (never above `row_top`, the top of its row's slot, onto
/// the broker's lines or the topic's title). Both sized to the measured text, inside bar and
/// canvas: a little smaller first (not below 9 px) where it does not fit.
fn badge_pill(ctx: &CanvasRenderingContext2d, f: f64, badge: &str, bar: Rect, row_top: f64, canvas: Rect) -> Pill {
    let room = bar.w.min(canvas.right() - 1.0 - bar.x) - 2.0 * layout::BADGE_PAD;
    let mut size = f * 0.8;
    font(ctx, size, "600");
    let wide = measure(ctx, badge);
    if wide > room && wide > 0.0 {
        size = (size * room / wide).max(9.0_f64.min(size));
        font(ctx, size, "600");
    }
    let r = layout::badge_rect(bar, measure(ctx, badge), (size + 4.0).round(), canvas);
    Pill { inside: Rect { y: (bar.mid_y() - r.h / 2.0).max(row_top), ..r }, on_edge: Rect { y: r.y.max(row_top), ..r }, size }
}

#[derive(Clone, Copy)]
struct Pill {
    inside: Rect,
    on_edge: Rect,
    size: f64,
}

/// A description of the message cell under (x, y), with its properties, for the canvas's tooltip.
pub fn hover(slot: usize, x: f64, y: f64, sim: &dyn Simulation) -> Option<String> {
    let msg = with_state(slot, |st| {
        st.rows.iter().find(|r| r.bar.contains(x, y) && r.cell_w > 0.0).and_then(|r| {
            let k = ((x - r.bar.x) / r.cell_w).floor() as usize;
            r.cells.get(k).map(|c| c.msg)
        })
    })?;
    let m = sim.message(msg)?;
    let fate = match m.fate {
        Fate::Pending => "waiting",
        Fate::Consumed => "consumed",
        Fate::Skipped => "skipped (lost for the group)",
        Fate::Retrying => "retrying",
        Fate::DeadLettered => "dead-lettered",
    };
    let props: Vec<String> = m.properties.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Some(format!(
        "{} offset {} · {} · {fate}\n{}\n{}\nclick: provenance",
        m.topic,
        m.offset.map(|o| o.to_string()).unwrap_or_default(),
        m.label.unwrap_or_else(|| "no tag".into()),
        m.body,
        props.join(", ")
    ))
}

#[allow(clippy::too_many_arguments)]
fn paint(
    ctx: &CanvasRenderingContext2d,
    sim: &dyn Simulation,
    view: &View,
    l: &Layout,
    _t: &Tracker,
    _clock: f64,
    wall: f64,
    st: &mut CanvasState,
) -> (bool, f64) {
    let f = l.font;
    let mut busy = false;

    // Producers.
    for &(i, r) in &l.producers {
        let p = &view.producers[i];
        rounded(ctx, r, 6.0);
        ctx.set_fill_style_str(palette::BOX);
        ctx.fill();
        ctx.set_stroke_style_str(palette::EDGE);
        ctx.set_line_width(1.0);
        ctx.stroke();
        font(ctx, f, "600");
        ctx.set_fill_style_str(palette::INK);
        let two = r.h >= 2.0 * f + 6.0;
        text(ctx, &p.name, r.x + 6.0, if two { r.y + r.h * 0.32 } else { r.mid_y() }, r.w - 12.0);
        if two {
            font(ctx, f * 0.92, "400");
            ctx.set_fill_style_str(palette::MUTED);
            text(ctx, &format!("sent {}", p.sent), r.x + 6.0, r.y + r.h * 0.72, r.w - 12.0);
        }
    }

    // Brokers: box, name, state lines (flash when they change).
    for b in &l.brokers {
        let bv = &view.brokers[b.index];
        rounded(ctx, b.rect, 8.0);
        ctx.set_fill_style_str(palette::BOX);
        ctx.fill();
        ctx.set_stroke_style_str(palette::LINE);
        ctx.set_line_width(1.0);
        ctx.stroke();
        font(ctx, f * 1.05, "700");
        ctx.set_fill_style_str(palette::INK);
        text(ctx, &format!("Broker {}", bv.name), b.name_rect.x, b.name_rect.mid_y(), b.name_rect.w);
        for &(li, r) in &b.lines {
            let line = &bv.lines[li];
            let mut alpha = 0.0;
            if let Some(changed) = line.changed_at {
                let entry = st.flashes.entry((b.index, li)).or_insert((changed, f64::MIN));
                if entry.0 != changed {
                    *entry = (changed, wall);
                }
                alpha = decimal::clamp(1.0 - (wall - entry.1) / FLASH_MS, 0.0, 1.0);
                busy |= alpha > 0.0;
            }
            if alpha > 0.0 {
                ctx.set_global_alpha(alpha * 0.9);
                ctx.set_fill_style_str(palette::INK);
                ctx.fill_rect(r.x - 3.0, r.y, r.w + 6.0, r.h);
                ctx.set_global_alpha(1.0);
            }
            let inverted = alpha > 0.45;
            font(ctx, f, if line.alert { "700" } else { "400" });
            ctx.set_fill_style_str(if inverted { palette::BG } else { palette::INK });
            let s = if line.alert { format!("⚠ {}", line.text) } else { line.text.clone() };
            let lh = f + 4.0;
            let n = ((r.h / lh).round() as usize).max(1);
            let parts = wrap(ctx, &s, r.w, n);
            let top = r.mid_y() - (parts.len() as f64 - 1.0) * lh / 2.0;
            for (k, part) in parts.iter().enumerate() {
                fill(ctx, part, r.x, top + k as f64 * lh);
            }
        }
        if b.more_lines > 0 {
            if let Some(&(_, last)) = b.lines.last() {
                font(ctx, f * 0.9, "400");
                ctx.set_fill_style_str(palette::MUTED);
                text(ctx, &format!("+{} more entries (Inspector)", b.more_lines), last.x, last.bottom() + last.h / 2.0, last.w);
            }
        }
    }

    // Topic titles.
    for title in &l.titles {
        font(ctx, f * 0.95, "600");
        ctx.set_fill_style_str(palette::MUTED);
        text(ctx, &title.text, title.rect.x, title.rect.mid_y(), title.rect.w);
    }

    // Partition rows: label, log of cells, offset marks, "log end · committed". Cells share one
    // width across rows, sized to the longest visible log (short logs get wide cells).
    st.rows.clear();
    let longest = l
        .rows
        .iter()
        .map(|row| {
            let p = &view.topics[row.topic].partitions[row.index];
            p.log_end.saturating_sub(p.log_start).min(l.max_cells)
        })
        .max()
        .unwrap_or(0);
    let slots = (longest as f64).max(12.0);
    let mut batch = CellBatch::default();
    // (badge, its pill, its font size).
    let mut badges: Vec<(String, Rect, f64)> = Vec::new();
    let mut carets: Vec<(f64, f64)> = Vec::new();
    for row in &l.rows {
        let p = &view.topics[row.topic].partitions[row.index];
        // At t = 0 nothing has started: no alarm for owners nobody could have yet.
        let unowned = p.owners.is_empty() && p.unowned_reason.is_some() && sim.now() > 0;
        font(ctx, f, if unowned { "italic 400" } else { "400" });
        ctx.set_fill_style_str(palette::INK);
        let bar = row.bar;
        let long = format!("{} (no owner)", row.label);
        // "q0 (no owner)" where it fits; else "q0", with "no owner" said inside the (dashed) bar.
        let no_owner_in_bar = unowned && measure(ctx, &long) > row.label_rect.w;
        let label = if unowned && !no_owner_in_bar { long } else { row.label.clone() };
        text(ctx, &label, row.label_rect.x, row.label_rect.mid_y(), row.label_rect.w);
        ctx.set_fill_style_str(palette::BG);
        ctx.fill_rect(bar.x, bar.y, bar.w, bar.h);
        if unowned {
            let dash = js_sys::Array::of2(&4.0.into(), &3.0.into());
            ctx.set_line_dash(&dash).ok();
            ctx.set_stroke_style_str(palette::INK);
            ctx.set_line_width(1.5);
        } else {
            ctx.set_stroke_style_str(palette::LINE);
            ctx.set_line_width(1.0);
        }
        ctx.stroke_rect(bar.x, bar.y, bar.w, bar.h);
        ctx.set_line_dash(&js_sys::Array::new()).ok();
        // A state badge (FETCHING, sealed · drained) takes the bar's left end and the cells start
        // after it, so it covers none of them; where it would need most of the bar it sits on
        // the bar's top edge over the first cells instead.
        let pill = p.badge.as_ref().map(|badge| badge_pill(ctx, f, badge, bar, row.rect.y, l.canvas));
        let lane = match pill {
            Some(Pill { inside, .. }) if inside.w <= bar.w * BADGE_LANE_SHARE => {
                Rect { x: inside.right() + 2.0, w: (bar.right() - inside.right() - 2.0).max(0.0), ..bar }
            }
            _ => bar,
        };
        if let (Some(badge), Some(pill)) = (&p.badge, pill) {
            badges.push((badge.clone(), if lane == bar { pill.on_edge } else { pill.inside }, pill.size));
        }
        let bar = lane;
        let start = p.log_end.saturating_sub(l.max_cells).max(p.log_start);
        let cells = sim.cells(p.id, start, p.log_end);
        let cell_w = bar.w / slots;
        if no_owner_in_bar {
            // After the last cell, where the bar is empty.
            let free_x = bar.x + cells.len() as f64 * cell_w + 4.0;
            font(ctx, f * 0.9, "italic 400");
            ctx.set_fill_style_str(palette::MUTED);
            if bar.right() - free_x >= measure(ctx, "no owner") {
                text(ctx, "no owner", free_x, bar.mid_y(), bar.right() - free_x - 2.0);
            }
        }
        let gap = if cell_w >= 4.0 { 1.0 } else { 0.0 };
        for (k, c) in cells.iter().enumerate() {
            let r =
                Rect::new(bar.x + k as f64 * cell_w + gap / 2.0, bar.y + 2.0, (cell_w - gap).max(0.8), (bar.h - 4.0).max(1.0));
            batch.add(c, r);
        }
        for m in &p.marks {
            if m.offset < start || m.offset > p.log_end {
                continue;
            }
            let x = bar.x + ((m.offset - start) as f64).min(slots) * cell_w;
            ctx.set_stroke_style_str(palette::INK);
            ctx.set_line_width(2.0);
            ctx.begin_path();
            match m.kind {
                MarkKind::Committed => {
                    ctx.move_to(x, bar.y - 2.0);
                    ctx.line_to(x, bar.bottom() + 2.0);
                }
                MarkKind::Position => {
                    carets.push((x, bar.bottom()));
                    ctx.move_to(x - 3.0, bar.bottom() + 3.0);
                    ctx.line_to(x, bar.bottom() - 1.0);
                    ctx.line_to(x + 3.0, bar.bottom() + 3.0);
                }
                MarkKind::HighWatermark => {
                    ctx.move_to(x - 3.0, bar.y - 3.0);
                    ctx.line_to(x, bar.y + 1.0);
                    ctx.line_to(x + 3.0, bar.y - 3.0);
                }
            }
            ctx.stroke();
        }
        let committed = p.marks.iter().filter(|m| m.kind == MarkKind::Committed).map(|m| m.offset).min();
        font(ctx, f * 0.9, "400");
        ctx.set_fill_style_str(palette::MUTED);
        let info = format!("{} · {}", p.log_end, committed.map(|c| c.to_string()).unwrap_or_else(|| "–".into()));
        text(ctx, &info, row.info.x, row.info.mid_y(), row.info.w);
        st.rows.push(RowCells { partition: p.id, bar, cell_w, cells });
    }

    batch.draw(ctx, f);

    // State badges, over the cells: pills sized to their measured text, inside bar and canvas.
    // They straddle the bar's top edge, where the row above has its position carets: those are
    // drawn again on top.
    st.badges.clear();
    for (badge, r, size) in badges {
        font(ctx, size, "600");
        let shown = fit(ctx, &badge, r.w - 2.0 * layout::BADGE_PAD);
        rounded(ctx, r, r.h / 2.0);
        ctx.set_fill_style_str(palette::BG);
        ctx.fill();
        ctx.set_stroke_style_str(palette::MUTED);
        ctx.set_line_width(1.0);
        ctx.stroke();
        ctx.set_fill_style_str(palette::INK);
        let _ = ctx.fill_text(&shown, r.x + layout::BADGE_PAD, r.mid_y() + 0.5);
        // The pill is the text's box: nothing else may be written on it.
        TEXTS.with(|t| t.borrow_mut().push((shown.clone(), r)));
        st.badges.push((badge, shown, r));
    }
    ctx.set_stroke_style_str(palette::INK);
    ctx.set_line_width(2.0);
    for &(x, y) in &carets {
        ctx.begin_path();
        ctx.move_to(x - 3.0, y + 3.0);
        ctx.line_to(x, y - 1.0);
        ctx.line_to(x + 3.0, y + 3.0);
        ctx.stroke();
    }

    // "+N more" rows.
    for m in &l.mores {
        font(ctx, f * 0.92, "600");
        ctx.set_fill_style_str(palette::INK);
        let what = if m.list == "consumers" {
            "consumers"
        } else if m.list.ends_with(":topics") {
            "topics"
        } else {
            "partitions"
        };
        let s = if m.shown == 0 {
            // No row fits: who owns which, or the labels before the run starts.
            let summary = layout::fold_summary(view, &m.folded, sim.now() > 0);
            if summary.is_empty() {
                format!("{} partitions", m.hidden)
            } else {
                summary
            }
        } else if m.wraps {
            format!("▸ {} more {what} · back to the first", m.hidden)
        } else {
            format!("▸ {} more {what} · next", m.hidden)
        };
        rounded(ctx, m.rect, 4.0);
        ctx.set_stroke_style_str(palette::LINE);
        ctx.set_line_width(1.0);
        ctx.stroke();
        text(ctx, &s, m.rect.x + 6.0, m.rect.mid_y(), m.rect.w - 12.0);
    }

    // Assignment edges: partition row → owner.
    ctx.set_stroke_style_str(palette::EDGE);
    ctx.set_line_width(1.4);
    for row in &l.rows {
        let p = &view.topics[row.topic].partitions[row.index];
        for &o in &p.owners {
            let Some(c) = l.consumer_rect(o as usize) else { continue };
            let (x0, y0) = (row.info.right(), row.rect.mid_y());
            let (x1, y1) = (c.x, c.mid_y());
            let mx = (x0 + x1) / 2.0;
            ctx.begin_path();
            ctx.move_to(x0, y0);
            ctx.bezier_curve_to(mx, y0, mx, y1, x1, y1);
            ctx.stroke();
        }
    }

    // Consumers.
    for &(i, r) in &l.consumers {
        let c = &view.consumers[i];
        let running = c.state == ConsumerState::Running;
        rounded(ctx, r, 8.0);
        ctx.set_fill_style_str(if running { palette::BG } else { palette::BOX_OFF });
        ctx.fill();
        if !running {
            let dash = js_sys::Array::of2(&4.0.into(), &3.0.into());
            ctx.set_line_dash(&dash).ok();
        }
        ctx.set_stroke_style_str(if running { palette::INK } else { palette::FAINT });
        ctx.set_line_width(if running { 1.5 } else { 1.0 });
        ctx.stroke();
        ctx.set_line_dash(&js_sys::Array::new()).ok();
        let lh = f + 4.0;
        let mut y = r.y + 5.0 + lh / 2.0;
        let inner = r.w - 14.0;
        font(ctx, f, "700");
        ctx.set_fill_style_str(palette::INK);
        let head = if c.mismatch.is_some() { format!("⚠ {}", c.name) } else { c.name.clone() };
        text(ctx, &head, r.x + 7.0, y, inner);
        let mut lines: Vec<(String, &str, &str)> = Vec::new();
        if !running {
            lines.push((c.state.label().to_string(), "700", palette::INK));
        }
        if let Some(m) = &c.mismatch {
            lines.push((m.clone(), "700", palette::INK));
        }
        lines.push((c.subscription.clone(), "400", palette::MUTED));
        for sl in &c.lines {
            lines.push((sl.text.clone(), if sl.alert { "700" } else { "400" }, palette::INK));
        }
        lines.push((format!("consumed {}", c.consumed), "400", palette::MUTED));
        let room = ((r.bottom() - y - lh * 0.5) / lh).floor().max(0.0) as usize;
        let mut budget = room;
        for (k, (s, weight, colour)) in lines.iter().enumerate() {
            if budget == 0 {
                break;
            }
            font(ctx, f * 0.92, weight);
            // The mismatch may take two lines when there is room for the rest too.
            let spare = budget.saturating_sub(lines.len() - k - 1);
            let parts = wrap(ctx, s, inner, spare.clamp(1, 2));
            for part in parts {
                if budget == 0 {
                    break;
                }
                y += lh;
                budget -= 1;
                ctx.set_fill_style_str(colour);
                fill(ctx, &part, r.x + 7.0, y);
            }
        }
    }

    // Tag key along the bottom.
    font(ctx, f * 0.92, "400");
    let mut x = l.key.x;
    let y = l.key.mid_y();
    let more_w = measure(ctx, "…");
    for (k, label) in view.labels.iter().enumerate().filter(|_| l.key.h > 0.0) {
        let w = measure(ctx, label);
        // Room for this label, and for a "…" after it unless it is the last.
        let reserve = if k + 1 < view.labels.len() { more_w + 6.0 } else { 0.0 };
        if x + 14.0 + w + reserve > l.key.right() {
            ctx.set_fill_style_str(palette::MUTED);
            // Just after the last label drawn (or at the start), inside the key's width.
            let at = if k == 0 { l.key.x } else { x - 10.0 };
            fill(ctx, "…", at, y);
            break;
        }
        ctx.set_fill_style_str(palette::tag(k as u32));
        ctx.fill_rect(x, y - 5.0, 10.0, 10.0);
        ctx.set_fill_style_str(palette::INK);
        fill(ctx, label, x + 14.0, y);
        x += 14.0 + w + 14.0;
    }
    (busy, slots)
}

/// Dots and heartbeat pulses in flight. Returns how many were drawn, and whether any dropped
/// message (a cross) was among them.
fn paint_dots(ctx: &CanvasRenderingContext2d, view: &View, l: &Layout, t: &Tracker, clock: f64, slots: f64) -> (usize, usize) {
    let mut crosses = 0;
    let r = decimal::clamp(l.font * 0.36, 3.5, 6.0);
    let mut drawn = 0;
    // Heartbeats: consumer → broker, a ring; a diamond when it overwrote broker-side state.
    ctx.set_stroke_style_str(palette::EDGE);
    ctx.set_line_width(1.5);
    for p in &t.pulses {
        let (Some(c), Some(b)) = (l.consumer_rect(p.consumer as usize), l.brokers.iter().find(|b| b.index == p.broker as usize))
        else {
            continue;
        };
        let k = decimal::clamp((clock - p.born) / DOT_MS, 0.0, 1.0);
        let (x0, y0) = (c.x, c.y + 8.0);
        let (x1, y1) = (b.rect.right(), b.name_rect.mid_y());
        let (x, y) = (x0 + (x1 - x0) * k, y0 + (y1 - y0) * k);
        ctx.begin_path();
        if p.overwrite {
            ctx.move_to(x, y - r * 1.4);
            ctx.line_to(x + r * 1.4, y);
            ctx.line_to(x, y + r * 1.4);
            ctx.line_to(x - r * 1.4, y);
            ctx.close_path();
            ctx.set_fill_style_str(palette::INK);
            ctx.fill();
        } else {
            let _ = ctx.arc(x, y, r, 0.0, 2.0 * PI);
            ctx.stroke();
        }
        drawn += 1;
    }
    // Messages: one path per colour key for the moving ones (squares: cheap to fill by the
    // thousand), one per colour and fade step for the dropped ones (crosses).
    let mut moving: VecMap<u32, Vec<(f64, f64)>> = VecMap::new();
    let mut dropped: VecMap<(u32, u8), Vec<(f64, f64)>> = VecMap::new();
    for d in &t.dots {
        let Some(row) = l.row_of(d.partition) else { continue };
        let p = decimal::clamp((clock - d.born) / DOT_MS, 0.0, 1.0);
        let ry = row.rect.mid_y();
        let from = (row.info.right(), ry);
        let to = l.consumer_rect(d.consumer as usize).map(|c| (c.x, c.mid_y())).unwrap_or(from);
        let part = view.topics[row.topic].partitions.get(row.index);
        let start = part.map(|p| p.log_end.saturating_sub(l.max_cells).max(p.log_start)).unwrap_or(0);
        let (x, y, gone, alpha) = match d.kind {
            DotKind::Stored => {
                let (px, py) = l.producer_rect(d.producer as usize).map(|r| (r.right(), r.mid_y())).unwrap_or((row.bar.x, ry));
                let qx = row.bar.x + ((d.offset.saturating_sub(start)) as f64 + 0.5).min(slots) * (row.bar.w / slots);
                (px + (qx - px) * p, py + (ry - py) * p, false, 1.0)
            }
            DotKind::Delivered => {
                let (x, y) = bezier(from, to, p);
                (x, y, false, 1.0)
            }
            DotKind::BrokerFiltered => {
                // Leaves the partition, turns into a cross a quarter of the way, and fades.
                let (x, y) = bezier(from, to, p.min(0.25));
                (x, y + (p - 0.25).max(0.0) * 30.0, p > 0.25, 1.0 - (p - 0.25).max(0.0) / 0.75)
            }
            DotKind::ClientFiltered => {
                // Reaches the consumer, then becomes a cross below it and fades.
                let (x, y) = bezier(from, to, (p / 0.6).min(1.0));
                (x, y + (p - 0.6).max(0.0) * 40.0, p > 0.6, 1.0 - (p - 0.6).max(0.0) / 0.4)
            }
        };
        if gone {
            let step = (decimal::clamp(alpha, 0.0, 1.0) * 3.0).ceil() as u8;
            dropped.entry((d.key, step)).or_default().push((x, y));
        } else {
            moving.entry(d.key).or_default().push((x, y));
        }
    }
    for (key, pts) in &moving {
        ctx.set_fill_style_str(palette::tag(*key));
        ctx.begin_path();
        for &(x, y) in pts {
            ctx.rect(x - r, y - r, 2.0 * r, 2.0 * r);
        }
        ctx.fill();
        drawn += pts.len();
    }
    ctx.set_line_width(2.0);
    for ((key, step), pts) in &dropped {
        ctx.set_global_alpha(*step as f64 / 3.0);
        ctx.set_stroke_style_str(palette::tag(*key));
        ctx.begin_path();
        for &(x, y) in pts {
            draw_cross(ctx, x, y, r);
        }
        ctx.stroke();
        drawn += pts.len();
        crosses += pts.len();
    }
    ctx.set_global_alpha(1.0);
    (drawn, crosses)
}

/// The keyboard focus ring and the tour's highlight.
fn paint_focus(ctx: &CanvasRenderingContext2d, st: &CanvasState, l: &Layout) {
    ctx.set_stroke_style_str(palette::FOCUS);
    if st.highlight.is_some() {
        if let Some(r) = st.highlight_rect {
            ctx.set_line_width(3.0);
            rounded(ctx, Rect::new(r.x - 4.0, r.y - 3.0, r.w + 8.0, r.h + 6.0), 8.0);
            ctx.stroke();
        }
    }
    if let Some(fo) = &st.focus {
        let Some((target, r)) = st.targets.get(fo.target) else { return };
        let r = match (target, fo.cell) {
            (Target::Partition(pid), Some(k)) => st
                .rows
                .iter()
                .find(|row| row.partition == *pid)
                .map(|row| Rect::new(row.bar.x + k as f64 * row.cell_w - 1.0, row.bar.y - 1.0, row.cell_w + 2.0, row.bar.h + 2.0))
                .unwrap_or(*r),
            _ => *r,
        };
        ctx.set_line_width(2.5);
        let dash = js_sys::Array::of2(&3.0.into(), &2.0.into());
        ctx.set_line_dash(&dash).ok();
        ctx.stroke_rect(r.x - 2.0, r.y - 2.0, r.w + 4.0, r.h + 4.0);
        ctx.set_line_dash(&js_sys::Array::new()).ok();
    }
    let _ = l;
}

/// What is at canvas CSS pixel (x, y) in the last drawn frame, acted on.
pub fn click(slot: usize, x: f64, y: f64) -> Act {
    with_state(slot, |st| {
        for row in &st.rows {
            if row.bar.contains(x, y) && row.cell_w > 0.0 {
                let k = ((x - row.bar.x) / row.cell_w).floor() as usize;
                if let Some(c) = row.cells.get(k) {
                    return Act::Open(c.msg);
                }
            }
        }
        let hit = st.targets.iter().find(|(_, r)| r.contains(x, y)).map(|(t, _)| t.clone());
        match hit {
            Some(Target::More(list)) => {
                turn_page(st, &list);
                Act::Paged
            }
            _ => Act::Nothing,
        }
    })
}

fn turn_page(st: &mut CanvasState, list: &str) {
    let Some(more) = st.layout.as_ref().and_then(|l| l.mores.iter().find(|m| m.list == list)) else { return };
    let cur = st.pages.get(list).copied().unwrap_or(0);
    let next = if more.wraps { 0 } else { cur + more.shown.max(1) };
    st.pages.insert(list.to_string(), next);
}

/// Sets (or clears) the tour's highlight, by target key (`broker:<name>`, `consumer:<name>`...).
pub fn set_highlight(key: Option<String>) {
    with_state(0, |st| {
        if st.highlight != key {
            st.highlight = key;
            st.redraw = true;
        }
    });
}

/// Whether the canvas must be drawn again although the model did not change (a new highlight).
pub fn wants_redraw() -> bool {
    with_state(0, |st| st.redraw)
}

/// Where a target was drawn in the last frame (CSS px in the canvas), for placing a caption.
pub fn rect_of(key: &str) -> Option<Rect> {
    with_state(0, |st| st.highlight_rect.filter(|_| st.highlight.as_deref() == Some(key)))
}

/// Every element the last frame drew (CSS px in the canvas, as the tour rings it), each with
/// whether `caption` names it (`mqviz_app::tour::names`): a tour's caption keeps off the named
/// ones as it keeps off its highlight, and prefers free space to covering the rest.
pub fn elements_for_caption(caption: &str) -> Vec<(Rect, bool)> {
    with_state(0, |st| {
        let Some(l) = &st.layout else { return Vec::new() };
        st.targets
            .iter()
            .zip(&st.target_keys)
            .map(|((t, r), key)| (l.ringed(t, *r), key.as_deref().is_some_and(|k| mqviz_app::tour::names(caption, k))))
            .collect()
    })
}

/// Starts over: pages and focus of the previous scenario no longer apply.
pub fn reset() {
    STATES.with(|all| {
        for st in all.borrow_mut().iter_mut() {
            st.pages.clear();
            st.focus = None;
            st.flashes.clear();
        }
    });
}

fn describe_target(st: &CanvasState, view_text: &dyn Fn(&Target) -> String, fo: &Focus) -> String {
    let Some((target, _)) = st.targets.get(fo.target) else { return String::new() };
    match (target, fo.cell) {
        (Target::Partition(pid), Some(k)) => {
            let Some(row) = st.rows.iter().find(|r| r.partition == *pid) else { return view_text(target) };
            match row.cells.get(k) {
                Some(c) => format!(
                    "{}: offset {}, {}{}, {}. Enter shows its provenance.",
                    view_text(target),
                    c.offset,
                    c.label.as_deref().map(|l| format!("tag {l}")).unwrap_or_else(|| "no tag".into()),
                    c.note.map(|n| format!(" ({n})")).unwrap_or_default(),
                    match c.fate {
                        Fate::Pending => "waiting",
                        Fate::Consumed => "consumed",
                        Fate::Skipped => "skipped: lost for the group",
                        Fate::Retrying => "retrying",
                        Fate::DeadLettered => "dead-lettered",
                    }
                ),
                None => view_text(target),
            }
        }
        _ => view_text(target),
    }
}

/// A key press while the canvas has focus: arrows move between elements (up/down) and between a
/// row's cells (left/right), Enter opens a cell's provenance or turns a "+N more" page.
pub fn key(slot: usize, key: &str, sim: &dyn Simulation) -> Act {
    let view = sim.view();
    let name = |t: &Target| -> String {
        match t {
            Target::Broker(i) => {
                let b = &view.brokers[*i];
                let lines: Vec<&str> = b.lines.iter().map(|l| l.text.as_str()).collect();
                format!("Broker {}. {}", b.name, lines.join(". "))
            }
            Target::Consumer(i) => {
                let c = &view.consumers[*i];
                format!(
                    "Consumer {}, {}. Subscribes {}. {}Consumed {}.",
                    c.name,
                    c.state.label(),
                    c.subscription,
                    c.mismatch.as_ref().map(|m| format!("Mismatch: {m}. ")).unwrap_or_default(),
                    c.consumed
                )
            }
            Target::Producer(i) => format!("Producer {}, sent {}", view.producers[*i].name, view.producers[*i].sent),
            Target::Partition(pid) => view
                .topics
                .iter()
                .find_map(|t| t.partitions.iter().find(|p| p.id == *pid).map(|p| (t, p)))
                .map(|(t, p)| {
                    let owners: Vec<&str> =
                        p.owners.iter().filter_map(|o| view.consumers.get(*o as usize)).map(|c| c.name.as_str()).collect();
                    format!(
                        "{} {}: {} messages, owner {}",
                        t.name,
                        p.label,
                        p.log_end,
                        if owners.is_empty() {
                            p.unowned_reason.clone().unwrap_or_else(|| "none".into())
                        } else {
                            owners.join(", ")
                        }
                    )
                })
                .unwrap_or_default(),
            Target::More(list) => format!("More items of {list}. Enter shows the next page."),
        }
    };
    with_state(slot, |st| {
        let n = st.targets.len();
        if n == 0 {
            return Act::Nothing;
        }
        let mut fo = st.focus.clone().unwrap_or_default();
        fo.target = fo.target.min(n - 1);
        let is_row = matches!(st.targets[fo.target].0, Target::Partition(_));
        let row_len = |st: &CanvasState, fo: &Focus| match &st.targets[fo.target].0 {
            Target::Partition(pid) => st.rows.iter().find(|r| r.partition == *pid).map(|r| r.cells.len()).unwrap_or(0),
            _ => 0,
        };
        match key {
            "ArrowDown" => {
                fo.target = (fo.target + 1) % n;
                fo.cell = None;
            }
            "ArrowUp" => {
                fo.target = (fo.target + n - 1) % n;
                fo.cell = None;
            }
            "ArrowRight" if is_row => {
                let len = row_len(st, &fo);
                if len > 0 {
                    fo.cell = Some(fo.cell.map(|c| (c + 1).min(len - 1)).unwrap_or(len - 1));
                }
            }
            "ArrowLeft" if is_row => {
                let len = row_len(st, &fo);
                if len > 0 {
                    fo.cell = Some(fo.cell.map(|c| c.saturating_sub(1)).unwrap_or(len - 1));
                }
            }
            "Home" => fo = Focus::default(),
            "Enter" | " " => {
                let target = st.targets[fo.target].0.clone();
                return match (target, fo.cell) {
                    (Target::Partition(pid), Some(k)) => st
                        .rows
                        .iter()
                        .find(|r| r.partition == pid)
                        .and_then(|r| r.cells.get(k))
                        .map(|c| Act::Open(c.msg))
                        .unwrap_or(Act::Nothing),
                    (Target::More(list), _) => {
                        turn_page(st, &list);
                        Act::Paged
                    }
                    (t, _) => Act::Focused(name(&t)),
                };
            }
            "Escape" => {
                st.focus = None;
                return Act::Focused(String::new());
            }
            _ => return Act::Nothing,
        }
        let text = describe_target(st, &name, &fo);
        st.focus = Some(fo);
        Act::Focused(text)
    })
}
