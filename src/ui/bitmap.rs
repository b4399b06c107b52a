//! A canvas's bitmap at the device's pixel ratio, once for every canvas of the page (the
//! topology, the Gantt, Pulsar's ring and DAG, the plots): drawn at 1:1 a canvas is blurred on a
//! projector or a retina screen, and sizing it is where each drawing begins.

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Device pixels per CSS pixel, never below 1 (a zoomed-out page still draws whole pixels).
pub fn pixel_ratio() -> f64 {
    web_sys::window().map(|w| w.device_pixel_ratio()).unwrap_or(1.0).max(1.0)
}

/// Sizes the bitmap to `css_w` × `css_h` CSS pixels times the pixel ratio and gives the ratio.
/// The size is set only when it changed: setting it clears the bitmap and reallocates it.
pub fn fit(el: &HtmlCanvasElement, css_w: f64, css_h: f64) -> f64 {
    let ratio = pixel_ratio();
    let (pw, ph) = ((css_w * ratio).round() as u32, (css_h * ratio).round() as u32);
    if el.width() != pw || el.height() != ph {
        el.set_width(pw);
        el.set_height(ph);
    }
    ratio
}

/// Sizes the bitmap ([`fit`]) and gives a 2D context that draws in CSS pixels on `background`.
pub fn begin(el: &HtmlCanvasElement, css_w: f64, css_h: f64, background: &str) -> Option<CanvasRenderingContext2d> {
    let ratio = fit(el, css_w, css_h);
    let ctx = el.get_context("2d").ok().flatten()?.dyn_into::<CanvasRenderingContext2d>().ok()?;
    let _ = ctx.set_transform(ratio, 0.0, 0.0, ratio, 0.0, 0.0);
    ctx.set_fill_style_str(background);
    ctx.fill_rect(0.0, 0.0, css_w, css_h);
    Some(ctx)
}
