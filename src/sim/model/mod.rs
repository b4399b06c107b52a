//! The seam between the engine and the broker models. Every model is built from the same scenario
//! envelope, driven the same way (time in, commands in, events out), and read the same way (a
//! neutral `View`, `Trace` facts from its log, a JSON report). The CLI, the history, the links and
//! the shared UI (shell, canvas, tracker, plots) only ever hold a `Box<dyn Simulation>`.
//!
//! Adding a model: implement `Simulation` for its world type, add a `BrokerKind` variant and its
//! arm in `parse_value`. Nothing else in the shared code changes.

pub mod view;

use std::any::Any;

use serde_json::Value;

use crate::sim::engine::Millis;
use crate::sim::json_path::{parse_json, PathError};
use crate::sim::scenario::broker_name;

pub use view::*;

/// The models this build knows, by their scenario `broker` name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerKind {
    RocketMq,
    Kafka,
}

impl BrokerKind {
    pub const ALL: &'static [BrokerKind] = &[BrokerKind::RocketMq, BrokerKind::Kafka];

    /// The scenario's `broker` value.
    pub fn name(self) -> &'static str {
        match self {
            BrokerKind::RocketMq => "rocketmq",
            BrokerKind::Kafka => "kafka",
        }
    }

    /// The display name.
    pub fn title(self) -> &'static str {
        match self {
            BrokerKind::RocketMq => "RocketMQ",
            BrokerKind::Kafka => "Kafka",
        }
    }

    pub fn from_name(name: &str) -> Option<BrokerKind> {
        BrokerKind::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// What the CLI, the history and the UI need from any broker model.
///
/// Time only moves forward inside a model; going back is the history's job (restore a clone,
/// re-enter the commands). Log entries are addressed by their index, which is also their event id.
pub trait Simulation {
    fn kind(&self) -> BrokerKind;
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn seed(&self) -> u64;
    fn now(&self) -> Millis;
    /// Where the scenario's story ends. Running past it is allowed.
    fn until(&self) -> Millis;
    fn next_event_time(&self) -> Option<Millis>;
    /// Runs one event if one is due at or before `limit`; false when none is.
    fn step_until(&mut self, limit: Millis) -> bool;
    /// Runs every event up to and including `t`, then sets the clock to `t`.
    fn run_until(&mut self, t: Millis);

    /// Enters one timeline entry in the model's JSON form (`{"at", "action", ...}`) at
    /// `max(at, now)`. It is validated against the current state first: an invalid command changes
    /// nothing and returns every problem with its JSON path.
    fn enter_command(&mut self, command: &Value) -> Result<(), Vec<PathError>>;

    fn log_len(&self) -> usize;
    fn log_time(&self, i: usize) -> Millis;
    fn log_cause(&self, i: usize) -> Option<usize>;
    /// The entry's text without id, time and cause.
    fn log_text(&self, i: usize) -> String;
    /// A short category for filtering the log (`heartbeat`, `pull`, `consume`...).
    fn log_kind(&self, i: usize) -> &'static str;
    /// The message an entry is about, if any.
    fn log_message(&self, i: usize) -> Option<MsgId>;
    /// Neutral facts in log entries `from..to`, in log order, each with its entry index.
    fn trace(&self, from: usize, to: usize, out: &mut dyn FnMut(usize, Trace));
    /// FNV-1a of the rendered log: equal digests mean identical runs.
    fn digest(&self) -> u64;

    fn view(&self) -> View;
    /// What the model calls a partition, for labels: `queue`, `partition`, `segment`.
    fn partition_noun(&self) -> &'static str {
        "partition"
    }
    /// Cells of a partition's log for offsets `from..to` (fewer where entries are gone).
    fn cells(&self, partition: PartitionId, from: u64, to: u64) -> Vec<Cell>;
    fn message(&self, msg: MsgId) -> Option<MessageView>;
    /// Log entries about a message (and its retry copies), oldest first.
    fn provenance(&self, msg: MsgId) -> Vec<usize>;

    /// Warnings per group, each spelling out its consequence: `(group, text)`.
    fn warnings(&self) -> Vec<(String, String)>;
    fn report(&self) -> Value;
    fn report_text(&self) -> String;

    fn clone_box(&self) -> Box<dyn Simulation>;
    /// For model-specific panels (`ui/<model>/`), which downcast to their own world.
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl Clone for Box<dyn Simulation> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// One log line as the CLI prints it and the digest hashes it: `#id t=ms cause=#c text`.
pub fn log_line(sim: &dyn Simulation, i: usize) -> String {
    let cause = match sim.log_cause(i) {
        Some(c) => format!("#{c}"),
        None => "-".to_string(),
    };
    format!("#{i} t={} cause={cause} {}", sim.log_time(i), sim.log_text(i))
}

/// Parses scenario text and builds the model it names.
pub fn parse(text: &str) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let v = parse_json(text).map_err(|e| vec![e])?;
    parse_value(&v)
}

/// Builds the model a parsed scenario document names.
pub fn parse_value(v: &Value) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let broker = broker_name(v);
    match BrokerKind::from_name(broker) {
        Some(BrokerKind::RocketMq) => {
            let s = crate::sim::rocketmq::scenario::parse_scenario_value(v)?;
            Ok(Box::new(crate::sim::rocketmq::world::World::new(s)))
        }
        Some(BrokerKind::Kafka) => {
            let s = crate::sim::kafka::scenario::parse_scenario_value(v)?;
            Ok(Box::new(crate::sim::kafka::world::World::new(s)))
        }
        None => {
            let known: Vec<&str> = BrokerKind::ALL.iter().map(|k| k.name()).collect();
            Err(vec![PathError {
                path: "$.broker".into(),
                message: format!("unknown broker model {broker:?} (expected one of: {})", known.join(", ")),
            }])
        }
    }
}

/// Parses and runs a scenario to its `until`.
pub fn run(text: &str) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let mut sim = parse(text)?;
    let until = sim.until();
    sim.run_until(until);
    Ok(sim)
}

/// Parses and runs a RocketMQ scenario to its end; for tests that inspect the RocketMQ world.
pub fn run_rocketmq(text: &str) -> Result<crate::sim::rocketmq::world::World, Vec<PathError>> {
    let s = crate::sim::rocketmq::scenario::parse_scenario(text)?;
    let mut w = crate::sim::rocketmq::world::World::new(s);
    w.run_to_end();
    Ok(w)
}
