//! `mqviz`: run scenarios, conformance vectors and benchmarks from the command line.

use std::process::ExitCode;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    mqviz::cli::main(&args)
}

/// A browser has no command line (the page is `mqviz-web`); this only lets `cargo test --target
/// wasm32-unknown-unknown` build every binary target.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
fn main() -> ExitCode {
    ExitCode::FAILURE
}
