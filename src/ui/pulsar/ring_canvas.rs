//! Draws a Key_Shared hash ring (`ring::HashRing`) on a `<canvas>` at the device pixel ratio. Each
//! consumer has its own concentric track (numbered in the notch at the top, named in the legend
//! beside it) and its own colour (`ring::consumer_colour`, the legend's swatch too): owners are
//! told apart by place, number and hue. The outer band holds the run's keys as dots in their key
//! colours; a draining hash (PIP-379) stays ink on a white halo: a dashed radial mark with its
//! key's name, a ring on the previous owner's track (it must ack first) and a square on the new
//! owner's (it waits).

use std::f64::consts::TAU;

use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::paint::{self, dash, font, key_hue, label, BG, FILL_SEALED, INK, MUTED};
use super::ring::{angle, HashRing, HASH_SPACE};

/// Tracks drawn; more consumers are listed, not drawn.
pub const TRACKS_DRAWN: usize = 8;

/// The ring's geometry in a square of `size` CSS pixels.
struct Geometry {
    cx: f64,
    cy: f64,
    key_r: f64,
    track_r: Vec<f64>,
    track_w: f64,
}

fn geometry(size: f64, tracks: usize) -> Geometry {
    let outer = size / 2.0 - 30.0;
    let n = tracks.clamp(1, TRACKS_DRAWN) as f64;
    let step = ((outer * 0.55) / n).clamp(6.0, 14.0);
    let first = outer - 14.0;
    Geometry {
        cx: size / 2.0,
        cy: size / 2.0,
        key_r: outer - 3.0,
        track_r: (0..tracks.min(TRACKS_DRAWN)).map(|i| first - i as f64 * step).collect(),
        track_w: (step * 0.62).max(4.0),
    }
}

fn at(g: &Geometry, r: f64, a: f64) -> (f64, f64) {
    (g.cx + r * a.cos(), g.cy + r * a.sin())
}

fn arc(ctx: &CanvasRenderingContext2d, g: &Geometry, r: f64, from: u32, to: u32) {
    ctx.begin_path();
    // At least a hair wide, so a single owned hash still shows.
    let (a0, a1) = (angle(from), angle(to + 1).max(angle(from) + 0.012));
    let _ = ctx.arc(g.cx, g.cy, r, a0, a1);
    ctx.stroke();
}

fn tracks(ctx: &CanvasRenderingContext2d, g: &Geometry, ring: &HashRing) {
    ctx.set_line_width(g.track_w);
    for (t, r) in ring.tracks.iter().zip(&g.track_r) {
        ctx.set_stroke_style_str(FILL_SEALED);
        arc(ctx, g, *r, 0, HASH_SPACE - 1);
        ctx.set_stroke_style_str(t.colour);
        for &(s, e) in &t.ranges {
            arc(ctx, g, *r, s, e);
        }
    }
    // Track numbers in the notch at the top, in the track's colour, matching the legend.
    font(ctx, 9.5, "700");
    ctx.set_text_align("center");
    for ((i, r), t) in g.track_r.iter().enumerate().zip(&ring.tracks) {
        ctx.set_fill_style_str(t.colour);
        let _ = ctx.fill_text(&(i + 1).to_string(), g.cx, g.cy - r);
    }
    ctx.set_text_align("left");
}

fn keys(ctx: &CanvasRenderingContext2d, g: &Geometry, ring: &HashRing) {
    ctx.set_line_width(1.0);
    ctx.set_stroke_style_str(MUTED);
    ctx.begin_path();
    let _ = ctx.arc(g.cx, g.cy, g.key_r, angle(0), angle(HASH_SPACE));
    ctx.stroke();
    for k in &ring.keys {
        let (x, y) = at(g, g.key_r, angle(k.hash));
        ctx.begin_path();
        let _ = ctx.arc(x, y, 4.0, 0.0, TAU);
        ctx.set_fill_style_str(key_hue(k.colour));
        ctx.fill();
        ctx.set_stroke_style_str(INK);
        ctx.stroke();
    }
}

fn draining(ctx: &CanvasRenderingContext2d, g: &Geometry, ring: &HashRing) {
    let track_of = |name: &str| ring.tracks.iter().position(|t| t.consumer == name).and_then(|i| g.track_r.get(i).copied());
    for d in &ring.draining {
        let a = angle(d.hash);
        let inner = g.track_r.last().copied().unwrap_or(g.key_r) - g.track_w;
        let (x0, y0) = at(g, inner, a);
        let (x1, y1) = at(g, g.key_r + 12.0, a);
        // A white halo first, so the ink mark reads over every consumer's colour.
        ctx.set_stroke_style_str(BG);
        ctx.set_line_width(4.5);
        ctx.begin_path();
        ctx.move_to(x0, y0);
        ctx.line_to(x1, y1);
        ctx.stroke();
        ctx.set_stroke_style_str(INK);
        ctx.set_line_width(1.5);
        dash(ctx, 3.0, 2.0);
        ctx.begin_path();
        ctx.move_to(x0, y0);
        ctx.line_to(x1, y1);
        ctx.stroke();
        dash(ctx, 0.0, 0.0);
        if let Some(r) = track_of(&d.at) {
            let (x, y) = at(g, r, a);
            ctx.begin_path();
            let _ = ctx.arc(x, y, 5.5, 0.0, TAU);
            ctx.set_fill_style_str(BG);
            ctx.fill();
            ctx.set_line_width(2.0);
            ctx.stroke();
        }
        if let Some(r) = d.waiting.as_deref().and_then(track_of) {
            let (x, y) = at(g, r, a);
            ctx.set_fill_style_str(BG);
            ctx.fill_rect(x - 4.5, y - 4.5, 9.0, 9.0);
            ctx.set_line_width(2.0);
            ctx.stroke_rect(x - 4.5, y - 4.5, 9.0, 9.0);
        }
        let (lx, ly) = at(g, g.key_r + 20.0, a);
        font(ctx, 10.5, "600");
        let name = d.key.clone().unwrap_or_else(|| format!("hash {}", d.hash));
        let w = ctx.measure_text(&name).map(|m| m.width()).unwrap_or(0.0);
        let left = if a.cos() < -0.2 {
            lx - w
        } else if a.cos() > 0.2 {
            lx
        } else {
            lx - w / 2.0
        };
        // Kept inside the canvas: a key near 3 or 9 o'clock would otherwise run off its edge.
        let left = left.clamp(2.0, (2.0 * g.cx - w - 2.0).max(2.0));
        label(ctx, &name, left, ly, "left");
    }
}

/// Draws `ring` in a square as wide as the canvas's box (at most `max` CSS pixels).
pub fn draw(el: &HtmlCanvasElement, ring: &HashRing, max: f64) {
    let size = (el.client_width() as f64).clamp(160.0, max);
    let Some((ctx, _)) = paint::fit(el, size) else { return };
    let g = geometry(size, ring.tracks.len());
    tracks(&ctx, &g, ring);
    keys(&ctx, &g, ring);
    draining(&ctx, &g, ring);
    font(&ctx, 10.0, "400");
    ctx.set_fill_style_str(MUTED);
    ctx.set_text_align("center");
    let _ = ctx.fill_text("0 / 65535", g.cx, 9.0);
    ctx.set_text_align("left");
}
