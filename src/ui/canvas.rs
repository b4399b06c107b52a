//! The topology canvas: partitions drawn as logs (stored entries, committed offsets), the
//! producers, the consumers, assignment edges partition → consumer and the message dots in flight
//! (producer → partition → consumer; filtered ones drop, coloured by the filter that dropped them).
//! Pure drawing from the model's neutral `View`, its `cells` and the frame `Tracker`; canvas only,
//! no DOM node per message, and no broker named here.

use std::cell::RefCell;
use std::collections::HashMap;

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::track::{DotKind, Tracker, DOT_MS};
use crate::sim::model::{ConsumerState, Fate, MarkKind, MsgId, PartitionId, Simulation};

/// Dot colours: stored (producer → queue), consumed, dropped by the broker's tag-hash filter,
/// dropped by the consumer's own tag filter. Mirrored by the legend in app.rs / style.css.
const DOT_STORED: &str = "#64748b";
const DOT_CONSUMED: &str = "#059669";
const DOT_BROKER: &str = "#ea580c";
const DOT_CLIENT: &str = "#c026d3";

/// Where the last frame drew each queue's visible cells, for clicks on a message.
struct HitRow {
    y: f64,
    h: f64,
    msgs: Vec<MsgId>,
}
struct HitLayout {
    bar_x: f64,
    cell_w: f64,
    rows: Vec<HitRow>,
}

thread_local! {
    static HIT: RefCell<Option<HitLayout>> = const { RefCell::new(None) };
}

/// The message whose queue cell is at canvas CSS pixel (x, y) in the last drawn frame.
pub fn message_at(x: f64, y: f64) -> Option<MsgId> {
    HIT.with(|h| {
        let h = h.borrow();
        let l = h.as_ref()?;
        let r = l.rows.iter().find(|r| y >= r.y && y <= r.y + r.h)?;
        if x < l.bar_x || l.cell_w <= 0.0 {
            return None;
        }
        let k = ((x - l.bar_x) / l.cell_w).floor() as usize;
        r.msgs.get(k).copied()
    })
}

const BG: &str = "#ffffff";
const INK: &str = "#1f2937";
const MUTED: &str = "#6b7280";
const LINE: &str = "#d1d5db";
const EDGE: &str = "#2563eb";
const UNOWNED: &str = "#dc2626";
const COMMIT: &str = "#059669";
const TAG_COLORS: [&str; 6] = ["#2563eb", "#ea580c", "#7c3aed", "#0891b2", "#ca8a04", "#db2777"];

struct QueueRow {
    id: PartitionId,
    label: String,
    /// Entries stored in the partition (the cells show the newest that fit).
    len: u64,
    /// Offset of the first visible cell.
    start: u64,
    /// (message, tag colour index, consumed?) per visible entry.
    cells: Vec<(MsgId, usize, bool)>,
    committed: Option<u64>,
    owner: Option<usize>,
}

fn tag_index(tags: &mut Vec<String>, tag: Option<&str>) -> usize {
    let t = tag.unwrap_or("(no tag)");
    match tags.iter().position(|x| x == t) {
        Some(i) => i,
        None => {
            tags.push(t.to_string());
            tags.len() - 1
        }
    }
}

fn rounded(ctx: &CanvasRenderingContext2d, x: f64, y: f64, w: f64, h: f64, r: f64) {
    ctx.begin_path();
    ctx.move_to(x + r, y);
    ctx.line_to(x + w - r, y);
    ctx.quadratic_curve_to(x + w, y, x + w, y + r);
    ctx.line_to(x + w, y + h - r);
    ctx.quadratic_curve_to(x + w, y + h, x + w - r, y + h);
    ctx.line_to(x + r, y + h);
    ctx.quadratic_curve_to(x, y + h, x, y + h - r);
    ctx.line_to(x, y + r);
    ctx.quadratic_curve_to(x, y, x + r, y);
    ctx.close_path();
}

fn bezier(p0: (f64, f64), p1: (f64, f64), t: f64) -> (f64, f64) {
    let mx = (p0.0 + p1.0) / 2.0;
    let u = 1.0 - t;
    let x = u * u * u * p0.0 + 3.0 * u * u * t * mx + 3.0 * u * t * t * mx + t * t * t * p1.0;
    let y = u * u * u * p0.1 + 3.0 * u * u * t * p0.1 + 3.0 * u * t * t * p1.1 + t * t * t * p1.1;
    (x, y)
}

/// Draws the model. `clock` is the animation clock (ms) the dots are positioned by.
pub fn draw(el: &HtmlCanvasElement, sim: &dyn Simulation, t: &Tracker, clock: f64) -> usize {
    let Some(win) = web_sys::window() else { return 0 };
    let dpr = win.device_pixel_ratio().max(1.0);
    let cw = el.client_width().max(200) as f64;
    let ch = el.client_height().max(200) as f64;
    let (pw, ph) = ((cw * dpr).round() as u32, (ch * dpr).round() as u32);
    if el.width() != pw || el.height() != ph {
        el.set_width(pw);
        el.set_height(ph);
    }
    let Ok(Some(ctx)) = el.get_context("2d") else { return 0 };
    let Ok(ctx) = ctx.dyn_into::<CanvasRenderingContext2d>() else { return 0 };
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.set_fill_style_str(BG);
    ctx.fill_rect(0.0, 0.0, cw, ch);
    let view = sim.view();

    let pad = 16.0;
    let prod_w = if view.producers.is_empty() { 0.0 } else { 84.0 };
    let bx0 = pad + prod_w;
    let broker_w = ((cw - 2.0 * pad) * 0.66 - prod_w).max(220.0);
    let multi_topic = view.topics.iter().filter(|t| !t.internal).count() > 1;
    let label_w = if multi_topic { 130.0 } else { 64.0 };
    let info_w = 62.0;
    let bar_x = bx0 + 10.0 + label_w;
    let bar_w = (broker_w - label_w - info_w - 20.0).max(40.0);
    // At most one cell per 4 px: long logs show their newest entries.
    let max_cells = ((bar_w / 4.0).floor() as u64).max(10);

    // Gather partition rows.
    let mut tags: Vec<String> = Vec::new();
    let mut rows: Vec<QueueRow> = Vec::new();
    for topic in view.topics.iter().filter(|t| !t.internal) {
        for p in &topic.partitions {
            let start = p.log_end.saturating_sub(max_cells).max(p.log_start);
            let cells = sim
                .cells(p.id, start, p.log_end)
                .into_iter()
                .map(|c| (c.msg, tag_index(&mut tags, c.label.as_deref()), c.fate == Fate::Consumed))
                .collect();
            let committed = p.marks.iter().filter(|m| m.kind == MarkKind::Committed).map(|m| m.offset).min();
            let label = if multi_topic { format!("{} {}", topic.name, p.label) } else { p.label.clone() };
            rows.push(QueueRow {
                id: p.id,
                label,
                len: p.log_end,
                start,
                cells,
                committed,
                owner: p.owners.first().map(|&o| o as usize),
            });
        }
    }

    let top = 34.0;
    let n = rows.len().max(1) as f64;
    let row_h = ((ch - top - pad - 26.0) / n).clamp(18.0, 46.0);
    let cap = rows.iter().map(|r| r.cells.len()).max().unwrap_or(0).max(10) as f64;
    let cell_w = bar_w / cap;

    // Broker box.
    let broker_names: Vec<String> = view.brokers.iter().map(|b| b.name.clone()).collect();
    ctx.set_stroke_style_str(LINE);
    ctx.set_line_width(1.0);
    rounded(&ctx, bx0, top - 22.0, broker_w, row_h * n + 30.0, 8.0);
    ctx.set_fill_style_str("#f9fafb");
    ctx.fill();
    ctx.stroke();
    ctx.set_fill_style_str(INK);
    ctx.set_font("600 13px system-ui, sans-serif");
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    let _ = ctx.fill_text(&format!("Broker {}", broker_names.join(", ")), bx0 + 10.0, top - 10.0);
    ctx.set_font("10px system-ui, sans-serif");
    ctx.set_fill_style_str(MUTED);
    let _ = ctx.fill_text("max · commit", bar_x + bar_w + 8.0, top - 10.0);

    let mut row_y = Vec::new();
    let mut hit_rows = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let y = top + 4.0 + i as f64 * row_h;
        let h = (row_h - 8.0).max(10.0);
        row_y.push(y + h / 2.0);
        hit_rows.push(HitRow { y, h, msgs: r.cells.iter().map(|c| c.0).collect() });
        ctx.set_font("12px system-ui, sans-serif");
        ctx.set_fill_style_str(if r.owner.is_none() { UNOWNED } else { INK });
        let _ = ctx.fill_text(&r.label, bx0 + 10.0, y + h / 2.0);
        // Log bar.
        ctx.set_fill_style_str("#ffffff");
        ctx.fill_rect(bar_x, y, bar_w, h);
        ctx.set_stroke_style_str(if r.owner.is_none() { UNOWNED } else { LINE });
        ctx.set_line_width(if r.owner.is_none() { 1.5 } else { 1.0 });
        ctx.stroke_rect(bar_x, y, bar_w, h);
        for (k, (_, tag, done)) in r.cells.iter().enumerate() {
            let x = bar_x + k as f64 * cell_w + 1.0;
            let cwid = (cell_w - 2.0).max(1.0);
            let col = TAG_COLORS[tag % TAG_COLORS.len()];
            if *done {
                ctx.set_fill_style_str(col);
                ctx.fill_rect(x, y + 2.0, cwid, h - 4.0);
            } else {
                ctx.set_stroke_style_str(col);
                ctx.set_line_width(1.0);
                ctx.stroke_rect(x + 0.5, y + 2.5, cwid - 1.0, h - 5.0);
            }
        }
        if let Some(c) = r.committed.filter(|&c| c >= r.start) {
            let x = bar_x + ((c - r.start) as f64).min(cap) * cell_w;
            ctx.set_stroke_style_str(COMMIT);
            ctx.set_line_width(2.0);
            ctx.begin_path();
            ctx.move_to(x, y - 2.0);
            ctx.line_to(x, y + h + 2.0);
            ctx.stroke();
        }
        ctx.set_fill_style_str(MUTED);
        ctx.set_font("11px system-ui, sans-serif");
        let _ = ctx.fill_text(
            &format!("{} · {}", r.len, r.committed.map(|c| c.to_string()).unwrap_or_else(|| "–".into())),
            bar_x + bar_w + 8.0,
            y + h / 2.0,
        );
    }

    // Producers: small boxes in the left column, spread over the queue rows.
    let bx1 = bx0 + broker_w;
    let np = view.producers.len();
    let rows_mid = top + 4.0 + row_h * n / 2.0;
    let mut prod_y = Vec::new();
    for (i, p) in view.producers.iter().enumerate() {
        let y = rows_mid + (i as f64 - (np as f64 - 1.0) / 2.0) * 40.0;
        prod_y.push(y);
        rounded(&ctx, pad, y - 14.0, prod_w - 16.0, 28.0, 6.0);
        ctx.set_fill_style_str("#f8fafc");
        ctx.fill();
        ctx.set_stroke_style_str(DOT_STORED);
        ctx.set_line_width(1.0);
        ctx.stroke();
        ctx.set_fill_style_str(INK);
        ctx.set_font("11px system-ui, sans-serif");
        let id: String = p.name.chars().take(8).collect();
        let _ = ctx.fill_text(&id, pad + 5.0, y - 3.0);
        ctx.set_fill_style_str(MUTED);
        let _ = ctx.fill_text(&format!("sent {}", p.sent), pad + 5.0, y + 8.0);
    }

    // Consumers.
    let cx = bx1 + ((cw - bx1 - pad) * 0.25).max(40.0);
    let cbox_w = (cw - cx - pad).max(90.0);
    let max_chars = ((cbox_w - 16.0) / 7.0).max(6.0) as usize;
    let fit = |line: String| {
        if line.chars().count() > max_chars {
            line.chars().take(max_chars.saturating_sub(1)).collect::<String>() + "…"
        } else {
            line
        }
    };
    let nc = view.consumers.len().max(1) as f64;
    let avail = ch - top - pad;
    let cbox_h = (avail / nc - 10.0).clamp(30.0, 60.0);
    let mut cons_y = Vec::new();
    for (i, c) in view.consumers.iter().enumerate() {
        let running = c.state == ConsumerState::Running;
        let y = top - 10.0 + i as f64 * (cbox_h + 10.0);
        cons_y.push(y + cbox_h / 2.0);
        rounded(&ctx, cx, y, cbox_w, cbox_h, 8.0);
        ctx.set_fill_style_str(if running { "#eff6ff" } else { "#f3f4f6" });
        ctx.fill();
        ctx.set_stroke_style_str(if running { EDGE } else { LINE });
        ctx.set_line_width(1.0);
        ctx.stroke();
        ctx.set_fill_style_str(if running { INK } else { MUTED });
        ctx.set_font("600 12px system-ui, sans-serif");
        let state = if running { String::new() } else { format!(" ({})", c.state.label()) };
        let _ = ctx.fill_text(&fit(format!("{}{state}", c.name)), cx + 8.0, y + 12.0);
        if cbox_h >= 44.0 {
            ctx.set_font("11px system-ui, sans-serif");
            ctx.set_fill_style_str(MUTED);
            let _ = ctx.fill_text(&fit(c.subscription.clone()), cx + 8.0, y + 27.0);
            let _ = ctx.fill_text(&fit(format!("consumed {}", c.consumed)), cx + 8.0, y + 41.0);
        }
    }

    // Assignment edges.
    for (i, r) in rows.iter().enumerate() {
        let Some(o) = r.owner else { continue };
        let (x0, y0) = (bx1, row_y[i]);
        let (x1, y1) = (cx, cons_y[o]);
        let mx = (x0 + x1) / 2.0;
        ctx.set_stroke_style_str(EDGE);
        ctx.set_line_width(1.5);
        ctx.begin_path();
        ctx.move_to(x0, y0);
        ctx.bezier_curve_to(mx, y0, mx, y1, x1, y1);
        ctx.stroke();
    }

    // Message dots, batched into one path per colour.
    let row_of: HashMap<PartitionId, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let mut drawn = 0usize;
    for (kind, colour) in [
        (DotKind::Stored, DOT_STORED),
        (DotKind::Delivered, DOT_CONSUMED),
        (DotKind::BrokerFiltered, DOT_BROKER),
        (DotKind::ClientFiltered, DOT_CLIENT),
    ] {
        ctx.begin_path();
        let mut any = false;
        for d in t.dots.iter().filter(|d| d.kind == kind) {
            let Some(&ri) = row_of.get(&d.partition) else { continue };
            let p = ((clock - d.born) / DOT_MS).clamp(0.0, 1.0);
            let ry = row_y[ri];
            let cy = cons_y.get(d.consumer as usize).copied().unwrap_or(ry);
            let (x, y) = match kind {
                DotKind::Stored => {
                    let (px, py) = match prod_y.get(d.producer as usize) {
                        Some(&py) => (pad + prod_w - 16.0, py),
                        None => (bx0, ry),
                    };
                    let off = d.offset.saturating_sub(rows[ri].start) as f64;
                    let qx = bar_x + (off.min(cap) + 0.5) * cell_w;
                    (px + (qx - px) * p, py + (ry - py) * p)
                }
                DotKind::Delivered => bezier((bx1, ry), (cx, cy), p),
                DotKind::BrokerFiltered => {
                    // Leaves the partition, stops a third of the way and falls.
                    let (x, y) = bezier((bx1, ry), (cx, cy), p.min(0.35));
                    (x, y + (p - 0.35).max(0.0) * 70.0)
                }
                DotKind::ClientFiltered => {
                    // Delivered to the consumer, then dropped below it.
                    let (x, y) = bezier((bx1, ry), (cx, cy), (p / 0.6).min(1.0));
                    (x + 6.0 + (p - 0.6).max(0.0) * 20.0, y + (p - 0.6).max(0.0) * 90.0)
                }
            };
            ctx.rect(x - 2.5, y - 2.5, 5.0, 5.0);
            any = true;
            drawn += 1;
        }
        if any {
            // Sent dots are many and cross the labels: keep them light.
            ctx.set_global_alpha(if kind == DotKind::Stored { 0.45 } else { 1.0 });
            ctx.set_fill_style_str(colour);
            ctx.fill();
            ctx.set_global_alpha(1.0);
        }
    }

    // Tag key.
    ctx.set_font("11px system-ui, sans-serif");
    let mut x = pad;
    let y = ch - 10.0;
    for (i, t) in tags.iter().enumerate() {
        ctx.set_fill_style_str(TAG_COLORS[i % TAG_COLORS.len()]);
        ctx.fill_rect(x, y - 5.0, 10.0, 10.0);
        ctx.set_fill_style_str(INK);
        let _ = ctx.fill_text(t, x + 14.0, y);
        x += 14.0 + t.len() as f64 * 6.5 + 14.0;
    }
    if !tags.is_empty() {
        ctx.set_fill_style_str(MUTED);
        let _ = ctx.fill_text("filled = consumed, outline = not consumed", x, y);
    }
    HIT.with(|h| *h.borrow_mut() = Some(HitLayout { bar_x, cell_w, rows: hit_rows }));
    drawn
}
