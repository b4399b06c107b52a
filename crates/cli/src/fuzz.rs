//! `mqviz fuzz`: simulation testing over as many seeds as asked, on every core. Each failure is
//! printed with its seed, its violations and its shrunk scenario JSON, ready to become a
//! regression test. The seeds and scenarios are deterministic; only the scheduling of seeds
//! over threads (and the wall-clock progress line) is not.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use mqviz_app::simtest::kafka::KafkaTarget;
use mqviz_app::simtest::pulsar::PulsarTarget;
use mqviz_app::simtest::rocketmq::RocketMqTarget;
use mqviz_app::simtest::{run_seed, shrink, SeedOutcome, SimTarget, COMMON_PROPERTIES};

const USAGE: &str = "usage: mqviz fuzz [--model rocketmq|kafka|pulsar|all] [--seeds N] [--from S] [--jobs J] [--no-shrink]\n       mqviz fuzz --list | mqviz fuzz [--model M] --scenario SEED";

/// The models `--model` names, in the order `all` runs them.
const MODELS: [&str; 3] = ["rocketmq", "kafka", "pulsar"];

struct Options {
    models: Vec<&'static str>,
    seeds: u64,
    from: u64,
    jobs: usize,
    shrink: bool,
    list: bool,
    scenario: Option<u64>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        models: vec!["rocketmq"],
        seeds: 1000,
        from: 0,
        jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        shrink: true,
        list: false,
        scenario: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().and_then(|v| v.parse::<u64>().ok()).ok_or(format!("{name} needs a number"));
        match a.as_str() {
            "--seeds" => o.seeds = value("--seeds")?,
            "--from" => o.from = value("--from")?,
            "--jobs" => o.jobs = value("--jobs")?.max(1) as usize,
            "--no-shrink" => o.shrink = false,
            "--list" => o.list = true,
            "--scenario" => o.scenario = Some(value("--scenario")?),
            "--model" => {
                let m = it.next().map(String::as_str).unwrap_or("");
                o.models = match m {
                    "all" => MODELS.to_vec(),
                    _ => vec![*MODELS
                        .iter()
                        .find(|x| **x == m)
                        .ok_or(format!("--model needs one of {}, all", MODELS.join(", ")))?],
                };
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    Ok(o)
}

pub fn main(args: &[String]) -> ExitCode {
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if o.list {
        list();
        return ExitCode::SUCCESS;
    }
    let mut failures = 0;
    for model in &o.models {
        failures += match *model {
            "kafka" => run_model(&KafkaTarget, &o),
            "pulsar" => run_model(&PulsarTarget, &o),
            _ => run_model(&RocketMqTarget, &o),
        };
    }
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Every invariant by name: the driver's, then each model's.
fn list() {
    let print = |title: &str, properties: &[mqviz_app::simtest::Property]| {
        println!("{title}:");
        for p in properties {
            println!("  {:<28} {}", p.name, p.asserts);
        }
    };
    print("every model", COMMON_PROPERTIES);
    print("rocketmq", RocketMqTarget.properties());
    print("kafka", KafkaTarget.properties());
    print("pulsar", PulsarTarget.properties());
}

/// One model's seeds, or the scenario of one seed (`--scenario`), as a file `mqviz run` reads.
fn run_model<T: SimTarget>(target: &T, o: &Options) -> u64 {
    if let Some(seed) = o.scenario {
        println!("{}", serde_json::to_string_pretty(&target.generate(seed)).unwrap_or_default());
        return 0;
    }
    fuzz(target, o)
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
            "  reproduce: mqviz fuzz --model {} --from {} --seeds 1\n  {}scenario:\n{}",
            target.model(),
            f.seed,
            if o.shrink { "shrunk " } else { "" },
            serde_json::to_string_pretty(&scenario).unwrap_or_default()
        );
    }
    std::panic::set_hook(hook);
    println!(
        "{}: {} seeds from {}: {} failing, {} events simulated in {:.1} s",
        target.model(),
        o.seeds,
        o.from,
        failed.len(),
        events.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
    failed.len() as u64
}
