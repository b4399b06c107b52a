//! The topology canvas: the broker's queues drawn as logs (stored entries, committed offset),
//! the consumers, and assignment edges queue → consumer. Pure drawing from the World.

use std::collections::BTreeSet;

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::sim::rocketmq::events::MsgId;
use crate::sim::rocketmq::types::MessageQueue;
use crate::sim::rocketmq::world::{is_system_topic, World};

const BG: &str = "#ffffff";
const INK: &str = "#1f2937";
const MUTED: &str = "#6b7280";
const LINE: &str = "#d1d5db";
const EDGE: &str = "#2563eb";
const UNOWNED: &str = "#dc2626";
const COMMIT: &str = "#059669";
const TAG_COLORS: [&str; 6] = ["#2563eb", "#ea580c", "#7c3aed", "#0891b2", "#ca8a04", "#db2777"];

struct QueueRow {
    mq: MessageQueue,
    /// (tag colour index, consumed by the group?) per stored entry.
    cells: Vec<(usize, bool)>,
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

/// Draws the world. `anim` is the frame time when dots should move (playing, motion allowed).
pub fn draw(el: &HtmlCanvasElement, w: &World, anim: Option<f64>) {
    let Some(win) = web_sys::window() else { return };
    let dpr = win.device_pixel_ratio().max(1.0);
    let cw = el.client_width().max(200) as f64;
    let ch = el.client_height().max(200) as f64;
    let (pw, ph) = ((cw * dpr).round() as u32, (ch * dpr).round() as u32);
    if el.width() != pw || el.height() != ph {
        el.set_width(pw);
        el.set_height(ph);
    }
    let Ok(Some(ctx)) = el.get_context("2d") else { return };
    let Ok(ctx) = ctx.dyn_into::<CanvasRenderingContext2d>() else { return };
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.set_fill_style_str(BG);
    ctx.fill_rect(0.0, 0.0, cw, ch);

    // Gather queue rows.
    let consumed: BTreeSet<MsgId> =
        w.consumers.iter().flat_map(|c| c.consumed.iter().map(|&m| w.messages[m as usize].root())).collect();
    let mut tags: Vec<String> = Vec::new();
    let mut rows: Vec<QueueRow> = Vec::new();
    for b in &w.brokers {
        for (topic, cqs) in &b.cqs {
            if is_system_topic(topic) {
                continue;
            }
            for (q, cq) in cqs.iter().enumerate() {
                let mq = MessageQueue::new(topic.as_str(), &*b.name, q as u32);
                let cells = cq
                    .entries
                    .iter()
                    .map(|e| {
                        let m = &w.messages[e.msg as usize];
                        (tag_index(&mut tags, m.tag.as_deref()), consumed.contains(&m.id))
                    })
                    .collect();
                let committed = b.offsets.iter().find(|((t, _, qid), _)| t == topic && *qid as usize == q).map(|(_, o)| *o);
                let owner = w.consumers.iter().position(|c| c.running && c.pqs.contains_key(&mq));
                rows.push(QueueRow { mq, cells, committed, owner });
            }
        }
    }

    let pad = 16.0;
    let broker_w = (cw * 0.54).max(200.0);
    let top = 34.0;
    let n = rows.len().max(1) as f64;
    let row_h = ((ch - top - pad - 26.0) / n).clamp(18.0, 46.0);
    let multi_topic = rows.iter().any(|o| o.mq.topic != rows[0].mq.topic);
    let label_w = if multi_topic { 130.0 } else { 64.0 };
    let info_w = 96.0;
    let bar_x = pad + 10.0 + label_w;
    let bar_w = (broker_w - label_w - info_w - 20.0).max(40.0);
    let cap = rows.iter().map(|r| r.cells.len()).max().unwrap_or(0).max(10) as f64;
    let cell_w = bar_w / cap;

    // Broker box.
    let broker_names: Vec<String> = w.brokers.iter().map(|b| b.name.to_string()).collect();
    ctx.set_stroke_style_str(LINE);
    ctx.set_line_width(1.0);
    rounded(&ctx, pad, top - 22.0, broker_w, row_h * n + 30.0, 8.0);
    ctx.set_fill_style_str("#f9fafb");
    ctx.fill();
    ctx.stroke();
    ctx.set_fill_style_str(INK);
    ctx.set_font("600 13px system-ui, sans-serif");
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    let _ = ctx.fill_text(&format!("Broker {}", broker_names.join(", ")), pad + 10.0, top - 10.0);

    let mut row_y = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let y = top + 4.0 + i as f64 * row_h;
        let h = (row_h - 8.0).max(10.0);
        row_y.push(y + h / 2.0);
        ctx.set_font("12px system-ui, sans-serif");
        ctx.set_fill_style_str(if r.owner.is_none() { UNOWNED } else { INK });
        let label = if multi_topic { format!("{} q{}", r.mq.topic, r.mq.queue_id) } else { format!("queue {}", r.mq.queue_id) };
        let _ = ctx.fill_text(&label, pad + 10.0, y + h / 2.0);
        // Log bar.
        ctx.set_fill_style_str("#ffffff");
        ctx.fill_rect(bar_x, y, bar_w, h);
        ctx.set_stroke_style_str(if r.owner.is_none() { UNOWNED } else { LINE });
        ctx.set_line_width(if r.owner.is_none() { 1.5 } else { 1.0 });
        ctx.stroke_rect(bar_x, y, bar_w, h);
        for (k, (tag, done)) in r.cells.iter().enumerate() {
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
        if let Some(c) = r.committed {
            let x = bar_x + (c as f64).min(cap) * cell_w;
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
            &format!("max {} · commit {}", r.cells.len(), r.committed.map(|c| c.to_string()).unwrap_or_else(|| "–".into())),
            bar_x + bar_w + 8.0,
            y + h / 2.0,
        );
    }

    // Consumers.
    let cx = pad + broker_w + ((cw - broker_w - 2.0 * pad) * 0.25).max(40.0);
    let cbox_w = (cw - cx - pad).max(90.0);
    let max_chars = ((cbox_w - 16.0) / 6.2).max(6.0) as usize;
    let fit = |line: String| {
        if line.chars().count() > max_chars {
            line.chars().take(max_chars.saturating_sub(1)).collect::<String>() + "…"
        } else {
            line
        }
    };
    let nc = w.consumers.len().max(1) as f64;
    let avail = ch - top - pad;
    let cbox_h = (avail / nc - 10.0).clamp(30.0, 60.0);
    let mut cons_y = Vec::new();
    for (i, c) in w.consumers.iter().enumerate() {
        let y = top - 10.0 + i as f64 * (cbox_h + 10.0);
        cons_y.push(y + cbox_h / 2.0);
        rounded(&ctx, cx, y, cbox_w, cbox_h, 8.0);
        ctx.set_fill_style_str(if c.running { "#eff6ff" } else { "#f3f4f6" });
        ctx.fill();
        ctx.set_stroke_style_str(if c.running { EDGE } else { LINE });
        ctx.set_line_width(1.0);
        ctx.stroke();
        ctx.set_fill_style_str(if c.running { INK } else { MUTED });
        ctx.set_font("600 12px system-ui, sans-serif");
        let state = if c.running { "" } else { " (stopped)" };
        let _ = ctx.fill_text(&fit(format!("{}{state}", c.client_id)), cx + 8.0, y + 12.0);
        if cbox_h >= 44.0 {
            ctx.set_font("11px system-ui, sans-serif");
            ctx.set_fill_style_str(MUTED);
            let subs: Vec<String> = c.spec.subscriptions.iter().map(|s| format!("{}={}", s.topic, s.expression)).collect();
            let _ = ctx.fill_text(&fit(subs.join(", ")), cx + 8.0, y + 27.0);
            let _ = ctx.fill_text(&fit(format!("consumed {}", c.consumed.len())), cx + 8.0, y + 41.0);
        }
    }

    // Assignment edges.
    for (i, r) in rows.iter().enumerate() {
        let Some(o) = r.owner else { continue };
        let (x0, y0) = (pad + broker_w, row_y[i]);
        let (x1, y1) = (cx, cons_y[o]);
        let mx = (x0 + x1) / 2.0;
        ctx.set_stroke_style_str(EDGE);
        ctx.set_line_width(1.5);
        ctx.begin_path();
        ctx.move_to(x0, y0);
        ctx.bezier_curve_to(mx, y0, mx, y1, x1, y1);
        ctx.stroke();
        // A dot travelling along the edge while playing (skipped with reduced motion).
        if let Some(ts) = anim {
            let t = ((ts / 900.0) + i as f64 * 0.23).fract();
            let u = 1.0 - t;
            let px = u * u * u * x0 + 3.0 * u * u * t * mx + 3.0 * u * t * t * mx + t * t * t * x1;
            let py = u * u * u * y0 + 3.0 * u * u * t * y0 + 3.0 * u * t * t * y1 + t * t * t * y1;
            ctx.set_fill_style_str(EDGE);
            ctx.begin_path();
            let _ = ctx.arc(px, py, 3.0, 0.0, std::f64::consts::TAU);
            ctx.fill();
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
}
