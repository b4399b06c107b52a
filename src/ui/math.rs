//! Powers and logarithms of ten for the page (speeds, axis ticks). In the browser they are the
//! JavaScript engine's `Math.pow` and `Math.log10`: Rust's would link libm's pow and log10 into
//! the first download (about 2 KB gzipped) for numbers nothing deterministic depends on. Native
//! builds (the UI's unit tests) use the standard library's.

#[cfg(target_arch = "wasm32")]
pub fn pow10(x: f64) -> f64 {
    js_sys::Math::pow(10.0, x)
}

#[cfg(not(target_arch = "wasm32"))]
pub fn pow10(x: f64) -> f64 {
    10f64.powf(x)
}

#[cfg(target_arch = "wasm32")]
pub fn log10(x: f64) -> f64 {
    js_sys::Math::log10(x)
}

#[cfg(not(target_arch = "wasm32"))]
pub fn log10(x: f64) -> f64 {
    x.log10()
}
