//! Simulation testing over random scenarios, in the spirit of FoundationDB's simulator and
//! TigerBeetle's VOPR: a seed draws a whole valid scenario (members, queues, strategies, churn,
//! latencies, failures), the model runs it while named invariants are checked after every step
//! and at the end, and a failure is shrunk to a small scenario that still fails.
//!
//! The driver is model-neutral: it builds, steps, clones and digests models only through
//! `mqviz_model::Simulation`. A broker model plugs in with a [`SimTarget`]: its generator, its
//! invariants (which may downcast to the model's own world type) and its shrinking moves. Kafka
//! and Pulsar add their own targets next to [`rocketmq`].
//!
//! Invariants that hold for every model live here ([`COMMON_PROPERTIES`]): the scenario is valid,
//! nothing panics, every log entry's cause comes before it, the same scenario gives the same
//! digest, and a checkpoint clone replays identically. Each target lists its own with
//! [`SimTarget::properties`], as stateright's `properties()` does, and `mqviz fuzz --list` prints them.

pub mod draw;
pub mod kafka;
pub mod pulsar;
pub mod rocketmq;
pub mod shrink;

use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::Value;

use crate::registry;
use mqviz_engine::{Millis, SplitMix64};
use mqviz_model::Simulation;

/// A broken invariant: which one (a stable name), when, and what was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub invariant: &'static str,
    pub at: Millis,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] t={}: {}", self.invariant, self.at, self.detail)
    }
}

/// A named invariant and what it asserts, as `mqviz fuzz --list` prints it.
#[derive(Clone, Copy, Debug)]
pub struct Property {
    pub name: &'static str,
    pub asserts: &'static str,
}

/// The invariants the driver checks for every model.
pub const COMMON_PROPERTIES: &[Property] = &[
    Property { name: "valid-scenario", asserts: "the generated scenario is one the model's parser accepts" },
    Property { name: "no-panic", asserts: "nothing panics while the scenario is read, run, checked or replayed" },
    Property { name: "causality", asserts: "every log entry's cause is an earlier entry, and time never goes back" },
    Property { name: "determinism", asserts: "the same scenario, built again and digested at once, gives the same digest" },
    Property { name: "checkpoint-replay", asserts: "a clone taken mid-run and run to the end on its own gives the same digest" },
];

/// What a broker model brings to simulation testing.
pub trait SimTarget: Sync {
    /// What the step checks remember between steps (e.g. how much of the log they have read).
    type Watch: Default;

    /// The scenario `broker` name this target generates for.
    fn model(&self) -> &'static str;

    /// A random valid scenario, entirely determined by `seed`.
    fn generate(&self, seed: u64) -> Value;

    /// Safety invariants after one step of the model.
    fn check_step(&self, sim: &dyn Simulation, watch: &mut Self::Watch, out: &mut Vec<Violation>);

    /// Invariants at the end of the run (liveness included: the scenario says when churn stopped).
    fn check_end(&self, scenario: &Value, sim: &dyn Simulation, watch: &Self::Watch, out: &mut Vec<Violation>);

    /// Smaller variants of `scenario`, most promising first (fewer consumers, messages, actions).
    fn shrink_candidates(&self, scenario: &Value) -> Vec<Value>;

    /// The model's own invariants, by the names its violations carry.
    fn properties(&self) -> &'static [Property];
}

/// The outcome of one seed.
#[derive(Clone, Debug)]
pub struct SeedOutcome {
    pub seed: u64,
    pub scenario: Value,
    pub violations: Vec<Violation>,
    /// Log entries of the checked run (0 if it did not get that far).
    pub events: usize,
}

impl SeedOutcome {
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Generates the scenario of `seed`, runs it with every check, and reports what broke.
pub fn run_seed<T: SimTarget>(target: &T, seed: u64) -> SeedOutcome {
    let scenario = target.generate(seed);
    let (violations, events) = run_scenario(target, &scenario);
    SeedOutcome { seed, scenario, violations, events }
}

/// Runs one scenario with the step and end checks, then again to check determinism, and from a
/// mid-run checkpoint clone to check that a clone replays identically. A panic anywhere is a
/// violation. Returns the violations and the number of log entries.
pub fn run_scenario<T: SimTarget>(target: &T, scenario: &Value) -> (Vec<Violation>, usize) {
    let result = catch_unwind(AssertUnwindSafe(|| checked_run(target, scenario)));
    match result {
        Ok(r) => r,
        Err(panic) => {
            let detail = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".to_string());
            (vec![Violation { invariant: "no-panic", at: 0, detail }], 0)
        }
    }
}

/// Lines hashed per step of a checked run: small and odd, so pieces end anywhere in a burst.
const DIGEST_PIECE: usize = 7;

fn checked_run<T: SimTarget>(target: &T, scenario: &Value) -> (Vec<Violation>, usize) {
    let mut out = Vec::new();
    let mut sim = match registry::parse_value(scenario) {
        Ok(sim) => sim,
        Err(errors) => {
            let detail = errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ");
            return (vec![Violation { invariant: "valid-scenario", at: 0, detail }], 0);
        }
    };
    let until = sim.until();
    let checkpoint_at = until / 2;
    let mut checkpoint: Option<Box<dyn Simulation>> = None;
    let mut watch = T::Watch::default();
    let mut causal = CausalWatch::default();
    while sim.step_until(until) {
        causal.check(&*sim, &mut out);
        target.check_step(&*sim, &mut watch, &mut out);
        // The run's digest is folded in pieces as its log grows, as the page does; the second run
        // below digests its log at once, so the determinism check covers the memo too.
        let _ = sim.digest_within(DIGEST_PIECE);
        if checkpoint.is_none() && sim.now() >= checkpoint_at {
            checkpoint = Some(sim.clone_box());
        }
        if out.len() > 20 {
            break;
        }
    }
    sim.run_until(until);
    target.check_end(scenario, &*sim, &watch, &mut out);
    let digest = sim.digest();
    let events = sim.log_len();
    // Determinism: the same scenario, built afresh, gives the same log.
    if let Ok(mut again) = registry::parse_value(scenario) {
        again.run_until(until);
        if again.digest() != digest {
            out.push(Violation {
                invariant: "determinism",
                at: until,
                detail: format!(
                    "a second run, digested at once, gave {:016x}; the first, digested in pieces, {digest:016x}",
                    again.digest()
                ),
            });
        }
    }
    // A checkpoint clone, run to the end on its own, replays the same events.
    if let Some(mut clone) = checkpoint {
        let from = clone.now();
        clone.run_until(until);
        if clone.digest() != digest {
            out.push(Violation {
                invariant: "checkpoint-replay",
                at: from,
                detail: format!("the clone taken at t={from} ended with digest {:016x}, the run {digest:016x}", clone.digest()),
            });
        }
    }
    (out, events)
}

/// How much of the log the `causality` check has read, and the time of its last entry.
#[derive(Default)]
struct CausalWatch {
    seen: usize,
    last_time: Millis,
}

impl CausalWatch {
    fn check(&mut self, sim: &dyn Simulation, out: &mut Vec<Violation>) {
        let len = sim.log_len();
        for i in self.seen..len {
            let at = sim.log_time(i);
            if sim.log_cause(i).is_some_and(|c| c >= i) {
                out.push(Violation {
                    invariant: "causality",
                    at,
                    detail: format!("#{i} is caused by the later #{:?}", sim.log_cause(i)),
                });
            }
            if at < self.last_time {
                out.push(Violation {
                    invariant: "causality",
                    at,
                    detail: format!("#{i} at t={at} comes after t={}", self.last_time),
                });
            }
            self.last_time = at;
        }
        self.seen = len;
    }
}

/// Shrinks a failing scenario: repeatedly takes the first smaller variant that still breaks the
/// same invariant, until none does or `budget` runs are spent.
pub fn shrink<T: SimTarget>(target: &T, scenario: &Value, invariant: &str, budget: usize) -> Value {
    let mut current = scenario.clone();
    let mut runs = 0;
    'outer: loop {
        for candidate in target.shrink_candidates(&current) {
            if runs >= budget {
                break 'outer;
            }
            runs += 1;
            let (violations, _) = run_scenario(target, &candidate);
            if violations.iter().any(|v| v.invariant == invariant) {
                current = candidate;
                continue 'outer;
            }
        }
        break;
    }
    current
}

/// Seeds from `from`, `count` of them, in a portable order (the seed itself, then SplitMix64
/// steps), so a run of N seeds from S always covers the same scenarios.
pub fn seeds(from: u64, count: u64) -> impl Iterator<Item = u64> {
    (0..count).map(move |i| from.wrapping_add(i))
}

/// A SplitMix64 seeded for one scenario: the generator's only source of randomness.
pub fn rng_for(seed: u64) -> SplitMix64 {
    // Mix so that neighbouring seeds draw unrelated scenarios.
    let mut r = SplitMix64::new(seed ^ 0x6D71_7669_7A5F_7369);
    r.next_u64();
    r
}
