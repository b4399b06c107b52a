//! The native command line (`mqviz`). Kept in the library so tests can drive it.

use std::process::ExitCode;

use serde_json::json;

use mqviz_app::conformance;
use mqviz_app::registry;
use mqviz_model::log_line;

const USAGE: &str = "usage:
  mqviz run SCENARIO.json [--json] [--log] [--until MS]   run a scenario and print its report (or event log)
  mqviz review SCENARIO.json [--json|--markdown] [--until MS]   the verdict on the change in its timeline: exit 0 safe, 1 risk, 2 bad input
  mqviz import CAPTURE... [--format auto|kafka-describe|kafka-members|kafka-state|rocketmq-progress|rocketmq-connection|rocketmq-rebalance-log]   a snapshot scenario (stdout) from admin tools' output, explained on stderr; exit 2 for input it cannot read
  mqviz validate SCENARIO.json...              check scenario files, print every error with its JSON path
  mqviz conformance [--emit] VECTORS.json...   run conformance vectors (--emit: one JSON line per case for check.py)
  mqviz bench [throughput|load|allocate|sql92|filters|pulsar|pulsar-sim|kafka|kafka-sim|all] [--messages N] [--provenance on|off] [--memory-budget MB] [--warmup N]   run the benchmarks
  mqviz fuzz [--model rocketmq|kafka|pulsar|all] [--seeds N] [--from S] [--jobs J] [--no-shrink] [--list]   simulation testing over random scenarios";

pub fn main(args: &[String]) -> ExitCode {
    match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("review") => review(&args[1..]),
        Some("import") => import(&args[1..]),
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

/// A scenario file named on the command line, with `until` replaced by `--until MS` if given.
/// Errors are printed; `None` means exit 2.
fn scenario_arg(args: &[String]) -> Option<(String, String)> {
    let until_at = args.iter().position(|a| a == "--until");
    let Some(path) =
        args.iter().enumerate().find(|(i, a)| !a.starts_with("--") && Some(i.wrapping_sub(1)) != until_at).map(|(_, a)| a)
    else {
        eprintln!("{USAGE}");
        return None;
    };
    let text = read(path).map_err(|e| eprintln!("{e}")).ok()?;
    let Some(at) = until_at else { return Some((path.clone(), text)) };
    let Some(until) = args.get(at + 1).and_then(|v| v.parse::<u64>().ok()) else {
        eprintln!("--until needs a time in milliseconds");
        return None;
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(mut v) if v.is_object() => {
            v["until"] = json!(until);
            Some((path.clone(), v.to_string()))
        }
        // Left as it is, so the parser reports what is wrong with its position.
        _ => Some((path.clone(), text)),
    }
}

/// A capture's text; bytes that are not UTF-8 are an error naming the line they are on.
fn read_capture(path: &str) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() + 1;
        format!("{path}:{line}: not text: byte {at} is not UTF-8 (binary data, or a capture saved in another encoding)")
    })
}

fn import(args: &[String]) -> ExitCode {
    use mqviz_app::import::{Capture, Format};
    let mut format = Format::Auto;
    let mut paths = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--format" => {
                let name = args.get(i + 1).map(String::as_str).unwrap_or("");
                format = match Format::from_name(name) {
                    Some(f) => f,
                    None => {
                        eprintln!("--format needs one of {}, found {name:?}", Format::NAMES);
                        return ExitCode::from(2);
                    }
                };
                i += 2;
            }
            a if a.starts_with("--") => {
                eprintln!("unknown option {a}\n{USAGE}");
                return ExitCode::from(2);
            }
            a => {
                paths.push(a.to_string());
                i += 1;
            }
        }
    }
    if paths.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let mut captures = Vec::new();
    for path in paths {
        match read_capture(&path) {
            Ok(text) => captures.push(Capture { name: path, text, format }),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    }
    match mqviz_app::import::import(&captures) {
        Ok(imported) => {
            for note in &imported.notes {
                eprintln!("{note}");
            }
            println!("{}", serde_json::to_string_pretty(&imported.scenario).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn review(args: &[String]) -> ExitCode {
    let Some((path, text)) = scenario_arg(args) else { return ExitCode::from(2) };
    let start = match registry::load(&text) {
        Ok(loaded) if loaded.edits.is_empty() => loaded.sim,
        Ok(_) => {
            eprintln!("{path}: review reads the change from the timeline; move the run's \"edits\" into \"timeline\"");
            return ExitCode::from(2);
        }
        Err(errors) => {
            for e in errors {
                eprintln!("{path}: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let change_at = serde_json::from_str(&text).ok().and_then(|v| mqviz_app::review::change_at(&v));
    let r = mqviz_app::review::review(&*start, start.until(), change_at);
    let out = if args.iter().any(|a| a == "--json") {
        serde_json::to_string_pretty(&r.json()).unwrap_or_default() + "\n"
    } else if args.iter().any(|a| a == "--markdown") {
        r.markdown()
    } else {
        r.text()
    };
    match emit(&out) {
        code if code != ExitCode::SUCCESS => code,
        _ if r.risky() => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

fn run(args: &[String]) -> ExitCode {
    let as_json = args.iter().any(|a| a == "--json");
    let log = args.iter().any(|a| a == "--log");
    let Some((path, text)) = scenario_arg(args) else { return ExitCode::from(2) };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The consistent-group preset with `timeline` as the change, written to a temporary file.
    fn scenario_file(name: &str, timeline: serde_json::Value) -> String {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../static/scenarios/consistent-group.json"))
            .expect("preset");
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["timeline"] = timeline;
        let path = std::env::temp_dir().join(format!("mqviz-review-{}-{name}.json", std::process::id()));
        std::fs::write(&path, v.to_string()).unwrap();
        path.to_string_lossy().into_owned()
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn review_exits_1_on_a_risk_0_when_safe_and_2_for_bad_input() {
        let switch = scenario_file(
            "switch",
            json!([{"at": 5000, "action": "subscribe", "consumer": "ConsumerB", "topic": "TopicTestA", "expression": "TagB"}]),
        );
        let add = scenario_file(
            "add",
            json!([{"at": 5000, "action": "addConsumer", "group": "testGroupConsumer",
                    "consumer": {"clientId": "ConsumerC", "subscriptions": {"TopicTestA": "TagA || TagB"}}}]),
        );
        assert_eq!(main(&args(&["review", &switch])), ExitCode::from(1));
        assert_eq!(main(&args(&["review", &add, "--markdown"])), ExitCode::SUCCESS);
        // Before the switch reaches the broker nothing is lost yet: --until moves the end.
        assert_eq!(main(&args(&["review", "--until", "4000", &switch])), ExitCode::SUCCESS);
        assert_eq!(main(&args(&["review", "--until", "soon", &switch])), ExitCode::from(2));
        assert_eq!(main(&args(&["review", "/nonexistent/scenario.json"])), ExitCode::from(2));
        let bad = scenario_file("bad", json!([{"at": 5000, "action": "subscribe", "consumer": "Nobody"}]));
        assert_eq!(main(&args(&["review", &bad])), ExitCode::from(2));
        for f in [switch, add, bad] {
            let _ = std::fs::remove_file(f);
        }
    }

    #[test]
    fn import_exits_0_with_a_scenario_and_2_for_what_it_cannot_read() {
        let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/import/kafka/describe-members-state-3.7");
        let files: Vec<String> = ["describe.txt", "members.txt", "state.txt"].iter().map(|f| format!("{corpus}/{f}")).collect();
        let mut all = vec!["import".to_string()];
        all.extend(files.iter().cloned());
        assert_eq!(main(&all), ExitCode::SUCCESS);
        assert_eq!(main(&args(&["import", &files[0], "--format", "kafka-state"])), ExitCode::from(2), "the wrong format");
        assert_eq!(main(&args(&["import", &files[0], "--format", "rocketmq-progress"])), ExitCode::from(2), "a Kafka capture");
        assert_eq!(
            main(&args(&["import", &files[0], "--format", "pulsar-stats"])),
            ExitCode::from(2),
            "a Kafka capture, not JSON"
        );
        let rocketmq = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/import/rocketmq/progress-connection-4.9.7");
        let (progress, connection) = (format!("{rocketmq}/progress.txt"), format!("{rocketmq}/connection.txt"));
        assert_eq!(main(&args(&["import", &progress, &connection])), ExitCode::SUCCESS);
        assert_eq!(main(&args(&["import", &progress, &files[0]])), ExitCode::from(2), "two brokers' captures");
        assert_eq!(main(&args(&["import", "/nonexistent/capture.txt"])), ExitCode::from(2));
        let binary = std::env::temp_dir().join(format!("mqviz-import-{}.bin", std::process::id()));
        std::fs::write(&binary, b"GROUP\n\xff\xfe\x00").unwrap();
        assert_eq!(read_capture(&binary.to_string_lossy()).map_err(|e| e.contains(":2: not text")), Err(true));
        assert_eq!(main(&args(&["import", &binary.to_string_lossy()])), ExitCode::from(2));
    }
}
