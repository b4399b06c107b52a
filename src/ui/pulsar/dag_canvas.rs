//! Draws the segment DAG (`dag::SegmentDag`) on a `<canvas>` at the device pixel ratio: one column
//! per generation, parent→child edges, and each segment's state by fill, border and words —
//! active (white, solid), withheld (grey, dashed, the reason written), sealed (grey, solid),
//! drained (hatched) — with an ink badge naming an upstream gap, as wide as its measured text.

use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::dag::{layout, DagLayout, DagNode, NodeState, SegmentDag, HEAD_H};
use super::paint::{self, dash, font, hatch, rounded, text, EDGE, FILL_OFF, FILL_SEALED, INK, LINE, MUTED};

/// Padding inside the gap badge, each side.
const BADGE_PAD: f64 = 4.0;

fn edge(ctx: &CanvasRenderingContext2d, l: &DagLayout, parent: u64, child: &DagNode) {
    let (Some(p), Some(c)) = (l.get(parent), l.get(child.id)) else { return };
    let (x0, y0) = (p.x + p.w, p.y + p.h / 2.0);
    let (x1, y1) = (c.x - 5.0, c.y + c.h / 2.0);
    let mx = (x0 + x1) / 2.0;
    ctx.set_stroke_style_str(EDGE);
    ctx.set_line_width(1.5);
    // A withheld child's edge is dashed: the parent still stands between it and its readers.
    dash(ctx, if child.state == NodeState::Withheld { 4.0 } else { 0.0 }, 3.0);
    ctx.begin_path();
    ctx.move_to(x0, y0);
    ctx.bezier_curve_to(mx, y0, mx, y1, x1, y1);
    ctx.stroke();
    dash(ctx, 0.0, 0.0);
    ctx.set_fill_style_str(EDGE);
    ctx.begin_path();
    ctx.move_to(c.x, y1);
    ctx.line_to(x1 - 2.0, y1 - 4.0);
    ctx.line_to(x1 - 2.0, y1 + 4.0);
    ctx.close_path();
    ctx.fill();
}

fn node(ctx: &CanvasRenderingContext2d, l: &DagLayout, n: &DagNode) {
    let Some(b) = l.get(n.id) else { return };
    let (fill, border, width, dashed) = match n.state {
        NodeState::Active => ("#ffffff", INK, 2.0, false),
        NodeState::Withheld => (FILL_OFF, MUTED, 1.5, true),
        NodeState::Sealed => (FILL_SEALED, "#374151", 1.5, false),
        NodeState::Drained => ("#ffffff", "#374151", 1.0, false),
    };
    rounded(ctx, b.x, b.y, b.w, b.h, 5.0);
    ctx.set_fill_style_str(fill);
    ctx.fill();
    if n.state == NodeState::Drained {
        rounded(ctx, b.x, b.y, b.w, b.h, 5.0);
        hatch(ctx, b.x, b.y, b.w, b.h, 7.0, LINE);
    }
    rounded(ctx, b.x, b.y, b.w, b.h, 5.0);
    ctx.set_stroke_style_str(border);
    ctx.set_line_width(width);
    dash(ctx, if dashed { 5.0 } else { 0.0 }, 3.0);
    ctx.stroke();
    dash(ctx, 0.0, 0.0);
    let ink = if n.state == NodeState::Withheld { MUTED } else { INK };
    let inner = b.w - 12.0;
    // The gap badge is as wide as its text (measured in its font), never wider than the node.
    let badge = n.gap.as_ref().map(|g| format!("⚠{}", g.issue));
    let badge_w = badge.as_deref().map_or(0.0, |t| {
        font(ctx, 10.0, "700");
        let w = ctx.measure_text(t).map(|m| m.width()).unwrap_or(48.0);
        (w + 2.0 * BADGE_PAD).min(inner)
    });
    ctx.set_fill_style_str(ink);
    font(ctx, 11.5, "600");
    text(ctx, &n.title(), b.x + 6.0, b.y + 10.0, inner);
    font(ctx, 11.0, "400");
    text(ctx, &n.state_line(), b.x + 6.0, b.y + 25.0, inner);
    text(ctx, &n.detail_line(), b.x + 6.0, b.y + 39.0, inner - badge_w - 3.0);
    if let Some(t) = &badge {
        // The badge names the upstream issue; the figure's notes say what it means.
        let (bx, by) = (b.x + b.w - badge_w - 5.0, b.y + 32.0);
        rounded(ctx, bx, by, badge_w, 14.0, 3.0);
        ctx.set_fill_style_str(INK);
        ctx.fill();
        ctx.set_fill_style_str("#ffffff");
        font(ctx, 10.0, "700");
        text(ctx, t, bx + BADGE_PAD, by + 7.5, badge_w - 2.0 * BADGE_PAD);
    }
}

/// Draws `dag` across the canvas's width; the canvas takes the height the layout needs.
pub fn draw(el: &HtmlCanvasElement, dag: &SegmentDag) {
    let width = el.client_width().max(200) as f64;
    let l = layout(dag, width);
    let Some((ctx, _)) = paint::fit(el, l.height) else { return };
    font(&ctx, 10.5, "600");
    ctx.set_fill_style_str(MUTED);
    for (g, (x, w)) in l.columns.iter().enumerate() {
        let head = if g == 0 { "generation 0 (initial)".to_string() } else { format!("generation {g}") };
        text(&ctx, &head, *x, HEAD_H / 2.0 + 1.0, *w);
    }
    for &(p, c) in &dag.edges {
        if let Some(child) = dag.node(c) {
            edge(&ctx, &l, p, child);
        }
    }
    for n in &dag.nodes {
        node(&ctx, &l, n);
    }
}
