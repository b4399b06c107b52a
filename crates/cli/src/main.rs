//! `mqviz`: run scenarios, conformance vectors, simulation tests and benchmarks from the command
//! line. `cli` parses the arguments and runs `run`, `validate` and `conformance`; `fuzz` runs the
//! simulation tests over random scenarios; `bench/` holds one file per benchmark.

mod bench;
mod cli;
mod fuzz;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    cli::main(&args)
}
