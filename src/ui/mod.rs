//! The Leptos front end. It reads the core's state (`sim::rocketmq::world::World` and its
//! report) and never re-implements broker logic.

mod app;
mod canvas;
mod editor;
mod filters;
mod inspector;
mod plots;
mod state;
mod track;

pub use app::App;
pub use editor::Editor;
pub use filters::FilterPanel;
pub use inspector::Inspector;
pub use state::{bench_scenario, Sim};

/// Mounts the app on `<body>`; panics become console errors instead of a silent dead page.
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
