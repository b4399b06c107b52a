//! The native command line (`mqviz`). Kept in the library so tests can drive it.

use std::process::ExitCode;

use serde_json::json;

use mqviz_app::conformance;
use mqviz_app::registry;
use mqviz_model::log_line;

const USAGE: &str = "usage:
  mqviz run SCENARIO.json [--json] [--log]     run a scenario and print its report (or event log)
  mqviz validate SCENARIO.json...              check scenario files, print every error with its JSON path
  mqviz conformance [--emit] VECTORS.json...   run conformance vectors (--emit: one JSON line per case for check.py)
  mqviz bench [throughput|load|allocate|sql92|filters|pulsar|pulsar-sim|kafka|kafka-sim|all] [--messages N] [--provenance on|off] [--memory-budget MB] [--warmup N]   run the benchmarks
  mqviz fuzz [--model rocketmq|kafka|pulsar|all] [--seeds N] [--from S] [--jobs J] [--no-shrink] [--list]   simulation testing over random scenarios";

pub fn main(args: &[String]) -> ExitCode {
    match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("validate") => validate(&args[1..]),
        Some("conformance") => conformance_cmd(&args[1..]),
        Some("bench") => crate::bench::main(&args[1..]),
        Some("fuzz") => crate::fuzz::main(&args[1..]),
        Some("-h") | Some("--help") | Some("help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

fn run(args: &[String]) -> ExitCode {
    let as_json = args.iter().any(|a| a == "--json");
    let log = args.iter().any(|a| a == "--log");
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let text = match read(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match registry::run(&text) {
        Ok(sim) => {
            if log {
                let mut out = String::new();
                for i in 0..sim.log_len() {
                    out.push_str(&log_line(&*sim, i));
                    out.push('\n');
                }
                emit(&out)
            } else if as_json {
                emit(&(serde_json::to_string_pretty(&sim.report()).unwrap_or_default() + "\n"))
            } else {
                // The page's outcome sentence at the same moment, in the same words.
                let outcome = sim.totals().sentence().map(|(s, _)| format!("Outcome at t={}: {s}\n\n", sim.now()));
                emit(&(outcome.unwrap_or_default() + &sim.report_text()))
            }
        }
        Err(errors) => {
            for e in errors {
                eprintln!("{path}: {e}");
            }
            ExitCode::from(1)
        }
    }
}

fn validate(args: &[String]) -> ExitCode {
    let mut ok = true;
    for path in args {
        match read(path)
            .map_err(|e| vec![e])
            .and_then(|t| registry::parse(&t).map(drop).map_err(|errs| errs.iter().map(|e| format!("{path}: {e}")).collect()))
        {
            Ok(_) => println!("{path}: ok"),
            Err(errs) => {
                ok = false;
                for e in errs {
                    println!("{e}");
                }
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn conformance_cmd(args: &[String]) -> ExitCode {
    let emit = args.iter().any(|a| a == "--emit");
    let files: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let (mut passed, mut failed, mut skipped) = (0u64, 0u64, 0u64);
    for path in files {
        let text = match read(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        let base = std::path::Path::new(path).file_name().and_then(|n| n.to_str()).unwrap_or(path);
        let vf = match conformance::parse_vector_file(base, &text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        if !conformance::supported_kinds().any(|k| k == vf.kind) {
            if !emit {
                println!("{base}: kind {} not supported yet ({} cases skipped)", vf.kind, vf.cases.len());
            }
            skipped += vf.cases.len() as u64;
            continue;
        }
        let (mut fp, mut ff) = (0, 0);
        for (id, input, expected) in &vf.cases {
            let actual = conformance::run_case(&vf.kind, input).unwrap_or_else(mqviz_model::conformance::error_value);
            if emit {
                println!("{}", json!({"file": base, "id": id, "actual": actual}));
            } else if conformance::matches(&vf.kind, expected, &actual) {
                fp += 1;
            } else {
                ff += 1;
                println!("FAIL {base} {id}\n  expected {expected}\n  actual   {actual}");
            }
        }
        if !emit {
            println!("{base}: {fp} passed, {ff} failed");
        }
        passed += fp;
        failed += ff;
    }
    if !emit {
        println!("conformance: {passed} passed, {failed} failed, {skipped} skipped");
    }
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes a (possibly long) output; a reader that went away (`| head`) is not an error, whereas
/// `print!` would panic on the broken pipe.
fn emit(text: &str) -> ExitCode {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("writing the output: {e}");
            ExitCode::FAILURE
        }
    }
}
