//! Small canvas helpers the Pulsar pictures share: sizing a `<canvas>` to its box at the device
//! pixel ratio, fonts, text cut to a width, rounded boxes, hatching and dashes. Colours follow the
//! app's rule: ink and greys for states, hues only for keys (the canvas's Okabe–Ito order).

use mqviz_engine::decimal::fixed;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

pub const INK: &str = "#111827";
pub const MUTED: &str = "#4b5563";
pub const EDGE: &str = "#64748b";
pub const LINE: &str = "#d1d5db";
pub const FILL_SEALED: &str = "#e5e7eb";
pub const FILL_OFF: &str = "#f3f4f6";
pub const BG: &str = "#ffffff";

/// The canvas's key hues (Okabe & Ito, without black), in the same order, so a key's dot on the
/// ring has the colour of its cells on the topology canvas.
pub(super) const KEY_HUES: [&str; 7] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"];

pub fn key_hue(colour: u32) -> &'static str {
    KEY_HUES[colour as usize % KEY_HUES.len()]
}

/// Gives the canvas a CSS height (its width follows its box), sizes its bitmap at the device
/// pixel ratio and returns a context drawing in CSS pixels with the CSS width. `None` while the
/// canvas has no layout (a hidden panel).
pub fn fit(el: &HtmlCanvasElement, css_height: f64) -> Option<(CanvasRenderingContext2d, f64)> {
    let style = format!("height: {}px", fixed(css_height, 0));
    if el.get_attribute("style").as_deref() != Some(style.as_str()) {
        let _ = el.set_attribute("style", &style);
    }
    let w = el.client_width() as f64;
    if w < 40.0 {
        return None;
    }
    let ctx = crate::ui::bitmap::begin(el, w, css_height, BG)?;
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    Some((ctx, w))
}

pub fn font(ctx: &CanvasRenderingContext2d, size: f64, weight: &str) {
    ctx.set_font(&format!("{weight} {}px system-ui, sans-serif", fixed(size, 1)));
}

/// `s`, cut with an ellipsis to fit `max_w`.
pub fn cut(ctx: &CanvasRenderingContext2d, s: &str, max_w: f64) -> String {
    let width = |t: &str| ctx.measure_text(t).map(|m| m.width()).unwrap_or(0.0);
    if width(s) <= max_w {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    for n in (0..chars.len()).rev() {
        let t: String = chars[..n].iter().collect::<String>() + "…";
        if width(&t) <= max_w {
            return t;
        }
    }
    String::new()
}

pub fn text(ctx: &CanvasRenderingContext2d, s: &str, x: f64, y: f64, max_w: f64) {
    let t = cut(ctx, s, max_w);
    if !t.is_empty() {
        let _ = ctx.fill_text(&t, x, y);
    }
}

/// Text on a white backing, so it reads over lines.
pub fn label(ctx: &CanvasRenderingContext2d, s: &str, x: f64, y: f64, align: &str) {
    let w = ctx.measure_text(s).map(|m| m.width()).unwrap_or(0.0);
    let left = match align {
        "right" => x - w,
        "center" => x - w / 2.0,
        _ => x,
    };
    ctx.set_fill_style_str(BG);
    ctx.fill_rect(left - 2.0, y - 7.0, w + 4.0, 14.0);
    ctx.set_fill_style_str(INK);
    ctx.set_text_align(align);
    let _ = ctx.fill_text(s, x, y);
    ctx.set_text_align("left");
}

pub fn rounded(ctx: &CanvasRenderingContext2d, x: f64, y: f64, w: f64, h: f64, r: f64) {
    let r = r.min(w / 2.0).min(h / 2.0);
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

pub fn dash(ctx: &CanvasRenderingContext2d, on: f64, off: f64) {
    let a = js_sys::Array::new();
    if on > 0.0 {
        a.push(&on.into());
        a.push(&off.into());
    }
    let _ = ctx.set_line_dash(&a);
}

/// Diagonal hatching inside the current path (which it clips to), `gap` apart.
pub fn hatch(ctx: &CanvasRenderingContext2d, x: f64, y: f64, w: f64, h: f64, gap: f64, colour: &str) {
    ctx.save();
    ctx.clip();
    ctx.set_stroke_style_str(colour);
    ctx.set_line_width(1.0);
    ctx.begin_path();
    let mut d = -h;
    while d < w {
        ctx.move_to(x + d, y + h);
        ctx.line_to(x + d + h, y);
        d += gap;
    }
    ctx.stroke();
    ctx.restore();
}
