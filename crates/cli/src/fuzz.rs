//! `mqviz fuzz`: simulation testing over as many seeds as asked, on every core. Each failure is
//! printed with its seed, its violations and its shrunk scenario JSON, ready to become a
//! regression test. The seeds and scenarios are deterministic; only the scheduling of seeds
//! over threads (and the wall-clock progress line) is not.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use mqviz_app::simtest::{run_seed, shrink, SeedOutcome, SimTarget};

const USAGE: &str = "usage: mqviz fuzz [--seeds N] [--from S] [--jobs J] [--no-shrink] | mqviz fuzz --scenario SEED";

struct Options {
    seeds: u64,
    from: u64,
    jobs: usize,
    shrink: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o =
        Options { seeds: 1000, from: 0, jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1), shrink: true };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().and_then(|v| v.parse::<u64>().ok()).ok_or(format!("{name} needs a number"));
        match a.as_str() {
            "--seeds" => o.seeds = value("--seeds")?,
            "--from" => o.from = value("--from")?,
            "--jobs" => o.jobs = value("--jobs")?.max(1) as usize,
            "--no-shrink" => o.shrink = false,
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    Ok(o)
}

pub fn main(args: &[String]) -> ExitCode {
    let target = mqviz_app::simtest::rocketmq::RocketMqTarget;
    if args.first().map(String::as_str) == Some("--scenario") {
        // The generated scenario of one seed, as a file `mqviz run` reads.
        let Some(seed) = args.get(1).and_then(|s| s.parse::<u64>().ok()) else {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        };
        println!("{}", serde_json::to_string_pretty(&target.generate(seed)).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let failures = fuzz(&target, &o);
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs the seeds on `o.jobs` threads; returns the number of failing seeds.
fn fuzz<T: SimTarget>(target: &T, o: &Options) -> u64 {
    // Panics are reported as violations; the default hook would also print every one.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let events = AtomicU64::new(0);
    let failed: Mutex<Vec<SeedOutcome>> = Mutex::new(Vec::new());
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..o.jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= o.seeds {
                    break;
                }
                let outcome = run_seed(target, o.from.wrapping_add(i));
                events.fetch_add(outcome.events as u64, Ordering::Relaxed);
                if !outcome.passed() {
                    eprintln!("seed {} failed: {}", outcome.seed, outcome.violations[0]);
                    failed.lock().unwrap_or_else(|e| e.into_inner()).push(outcome);
                }
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if n % 500 == 0 || n == o.seeds {
                    let f = failed.lock().map(|v| v.len()).unwrap_or(0);
                    eprintln!("{n}/{} seeds, {f} failing, {:.0} s", o.seeds, start.elapsed().as_secs_f64());
                }
            });
        }
    });
    let mut failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
    failed.sort_by_key(|f| f.seed);
    for f in &failed {
        println!("seed {} FAILED ({} events):", f.seed, f.events);
        for v in f.violations.iter().take(5) {
            println!("  {v}");
        }
        let scenario = if o.shrink { shrink(target, &f.scenario, f.violations[0].invariant, 300) } else { f.scenario.clone() };
        println!(
            "  reproduce: MQVIZ_SEED={} cargo test --no-default-features --test native simulation::\n  {}scenario:\n{}",
            f.seed,
            if o.shrink { "shrunk " } else { "" },
            serde_json::to_string_pretty(&scenario).unwrap_or_default()
        );
    }
    std::panic::set_hook(hook);
    println!(
        "{} seeds from {}: {} failing, {} events simulated in {:.1} s",
        o.seeds,
        o.from,
        failed.len(),
        events.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
    failed.len() as u64
}
