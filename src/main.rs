//! Browser entry point (built by Trunk). Natively it only points at the CLI.

#[cfg(target_arch = "wasm32")]
fn main() {
    mqviz::ui::mount();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("mqviz-web is the browser build; run `trunk serve`, or use the `mqviz` CLI");
}
