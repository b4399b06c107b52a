//! The Leptos front end. The shell (`app`), the canvas, the frame tracker, the plots and the
//! inspector read the model through the broker-neutral `mqviz_model::Simulation`; model-specific
//! panels live in `ui/<model>/` and are found through `parts`. Nothing here re-implements broker
//! logic.

mod announce;
mod app;
mod bitmap;
mod canvas;
mod compare;
mod controls;
mod embed;
mod fetching;
mod frame;
mod help;
mod import;
mod inspector;
pub mod kafka;
mod lazy;
mod legend;
mod math;
mod outcome;
mod parts;
mod plot;
mod plots;
mod presets;
pub mod pulsar;
pub mod rocketmq;
mod share;
mod state;
mod tour;
use mqviz_model::track;
mod url;

pub use app::App;
pub use inspector::Inspector;
pub use state::Sim;

/// Mounts the app on `<body>`; panics become console errors instead of a silent dead page.
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
