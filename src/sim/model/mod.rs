//! The seam between the engine and the broker models. Every model is built from the same scenario
//! envelope, driven the same way (time in, commands in, events out), and read the same way (a
//! neutral `View`, `Trace` facts from its log, a JSON report). The CLI, the history, the links and
//! the shared UI (shell, canvas, tracker, plots) only ever hold a `Box<dyn Simulation>`.
//!
//! Adding a model: implement `Simulation` for its world type, add a `BrokerKind` variant and its
//! arm in `parse_value`. Nothing else in the shared code changes.

pub mod track;
pub mod view;

use std::any::Any;

use serde_json::Value;

use crate::engine::Millis;
use crate::history::{Entered, History};
use crate::json_path::{as_u64_in, parse_json, Errors, PathError};
use crate::scenario::{broker_name, MAX_ENTITIES, MAX_TIME};

pub use view::*;

/// The models this build knows, by their scenario `broker` name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerKind {
    RocketMq,
    Kafka,
    Pulsar,
}

impl BrokerKind {
    pub const ALL: &'static [BrokerKind] = &[BrokerKind::RocketMq, BrokerKind::Kafka, BrokerKind::Pulsar];

    /// The scenario's `broker` value.
    pub fn name(self) -> &'static str {
        match self {
            BrokerKind::RocketMq => "rocketmq",
            BrokerKind::Kafka => "kafka",
            BrokerKind::Pulsar => "pulsar",
        }
    }

    /// The display name.
    pub fn title(self) -> &'static str {
        match self {
            BrokerKind::RocketMq => "RocketMQ",
            BrokerKind::Kafka => "Kafka",
            BrokerKind::Pulsar => "Apache Pulsar",
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
    /// Every category `log_kind` can return, in the order the log filter lists them.
    fn log_kinds(&self) -> &'static [&'static str];
    /// The message an entry is about, if any.
    fn log_message(&self, i: usize) -> Option<MsgId>;
    /// Neutral facts in log entries `from..to`, in log order, each with its entry index.
    fn trace(&self, from: usize, to: usize, out: &mut dyn FnMut(usize, Trace));
    /// FNV-1a of the rendered log: equal digests mean identical runs. Each line is hashed once
    /// (`engine::DigestMemo`): asking again costs only the lines logged since.
    fn digest(&self) -> u64 {
        self.digest_within(usize::MAX).unwrap_or_default()
    }
    /// The digest once at most `max_lines` more lines are hashed; `None` until they cover the
    /// log, so a page can spread a long run's first digest over frames.
    fn digest_within(&self, max_lines: usize) -> Option<u64>;

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

    /// Message counts so far (side-by-side comparison). The default reads the view and the cells;
    /// a model can count faster and tell duplicates apart.
    fn totals(&self) -> Totals {
        let view = self.view();
        let mut t = Totals { produced: view.producers.iter().map(|p| p.sent).sum(), ..Totals::default() };
        t.consumed = view.consumers.iter().map(|c| c.consumed).sum();
        for p in view.topics.iter().filter(|t| !t.internal).flat_map(|t| t.partitions.iter()) {
            for c in self.cells(p.id, p.log_start, p.log_end) {
                match c.fate {
                    Fate::Skipped => t.lost += 1,
                    Fate::Retrying => t.retrying += 1,
                    Fate::DeadLettered => t.dead_lettered += 1,
                    Fate::Consumed | Fate::Pending => {}
                }
            }
        }
        t
    }

    /// Variants of `scenario` (this model's document) worth comparing side by side: another
    /// allocation strategy, assignor or protocol. `(label, whole scenario)`.
    fn variants(&self, scenario: &Value) -> Vec<(String, Value)> {
        let _ = scenario;
        Vec::new()
    }

    /// Warnings per group, each spelling out its consequence: `(group, text)`.
    fn warnings(&self) -> Vec<(String, String)>;
    // The page never shows the CLI's report: leaving it out of the browser build keeps its JSON
    // building out of the wasm the page downloads (the native CLI, tests and WASI builds keep it).
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    fn report(&self) -> Value;
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
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
    let mut line = String::new();
    let cause = sim.log_cause(i).map(|c| c as u32);
    crate::engine::digest::write_line_prefix(&mut line, i as u32, sim.log_time(i), cause);
    line.push_str(&sim.log_text(i));
    line
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
            let s = crate::rocketmq::scenario::parse_scenario_value(v)?;
            Ok(Box::new(crate::rocketmq::world::World::new(s)))
        }
        Some(BrokerKind::Kafka) => {
            let s = crate::kafka::scenario::parse_scenario_value(v)?;
            Ok(Box::new(crate::kafka::world::World::new(s)))
        }
        Some(BrokerKind::Pulsar) => {
            let s = crate::pulsar::scenario::parse_scenario_value(v)?;
            Ok(Box::new(crate::pulsar::world::World::new(s)))
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

/// A scenario and the commands entered during an earlier run of it (its `edits`).
pub struct Loaded {
    pub sim: Box<dyn Simulation>,
    pub edits: Vec<Entered>,
}

/// Reads a scenario's `edits`: timeline entries entered during a run, each run after every other
/// event of its instant, as it was when entered. The array is removed from `v`; the model never
/// sees it. Shapes are checked here; each command is checked when it is entered.
fn take_edits(v: &mut Value, e: &mut Errors) -> Vec<Entered> {
    let Some(raw) = v.as_object_mut().and_then(|o| o.remove("edits")) else { return Vec::new() };
    let Value::Array(items) = raw else {
        e.push("$.edits", "expected an array of timeline entries");
        return Vec::new();
    };
    if items.len() > MAX_ENTITIES {
        e.push("$.edits", format!("too many entries ({}, at most {MAX_ENTITIES})", items.len()));
        return Vec::new();
    }
    let mut out: Vec<Entered> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let path = format!("$.edits[{i}]");
        let Some(at) = item.get("at") else {
            e.push(&path, "expected a timeline entry with \"at\"");
            continue;
        };
        let Some(at) = as_u64_in(at, &format!("{path}.at"), 0, MAX_TIME, e) else { continue };
        if out.last().is_some_and(|l| l.at > at) {
            e.push(&format!("{path}.at"), "edits must be in time order");
        }
        out.push(Entered { at, command: item });
    }
    out
}

/// Parses a scenario with its `edits` (an exported run).
pub fn load(text: &str) -> Result<Loaded, Vec<PathError>> {
    let v = parse_json(text).map_err(|e| vec![e])?;
    load_value(v)
}

pub fn load_value(mut v: Value) -> Result<Loaded, Vec<PathError>> {
    let mut e = Errors::default();
    let edits = take_edits(&mut v, &mut e);
    let sim = parse_value(&v);
    match sim {
        Ok(sim) if e.is_empty() => Ok(Loaded { sim, edits }),
        Ok(_) => Err(e.list),
        Err(mut errs) => {
            errs.extend(e.list);
            Err(errs)
        }
    }
}

/// Parses a scenario, enters its edits at their instants, and runs to `until` (or to the last
/// edit, if later). An edit that cannot be entered is an error naming it.
pub fn run(text: &str) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    let Loaded { mut sim, edits } = load(text)?;
    let end = edits.last().map(|c| c.at).unwrap_or(0).max(sim.until());
    let mut history = History::replay(edits);
    history.advance(&mut sim, end).map_err(|r| {
        r.errors
            .into_iter()
            .map(|pe| PathError { path: format!("$.edits[{}]", r.index), message: pe.message })
            .collect::<Vec<_>>()
    })?;
    Ok(sim)
}

/// The scenario `original` with the commands of a run as its `edits` and `until` set to `end`
/// (the playhead; 0 keeps the scenario's own): `run` of the result reproduces the run's event
/// log exactly as it stands at `end`.
pub fn export(original: &Value, commands: &[Entered], end: Millis) -> Value {
    let mut v = original.clone();
    if let Value::Object(o) = &mut v {
        if end > 0 {
            o.insert("until".into(), Value::from(end));
        }
        if commands.is_empty() {
            o.remove("edits");
        } else {
            o.insert("edits".into(), Value::Array(commands.iter().map(|c| c.command.clone()).collect()));
        }
    }
    v
}

/// Parses and runs a Pulsar scenario to its end; for tests that inspect the Pulsar world.
pub fn run_pulsar(text: &str) -> Result<crate::pulsar::world::World, Vec<PathError>> {
    let s = crate::pulsar::scenario::parse_scenario(text)?;
    let mut w = crate::pulsar::world::World::new(s);
    w.run_to_end();
    Ok(w)
}

/// Parses and runs a RocketMQ scenario to its end; for tests that inspect the RocketMQ world.
pub fn run_rocketmq(text: &str) -> Result<crate::rocketmq::world::World, Vec<PathError>> {
    let s = crate::rocketmq::scenario::parse_scenario(text)?;
    let mut w = crate::rocketmq::world::World::new(s);
    w.run_to_end();
    Ok(w)
}
