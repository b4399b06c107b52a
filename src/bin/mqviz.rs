//! `mqviz`: run scenarios, conformance vectors and benchmarks from the command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    mqviz::cli::main(&args)
}
