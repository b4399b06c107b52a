//! The seam between the engine and the broker models. Every model is built from the same scenario
//! envelope, driven the same way (time in, commands in, events out), and read the same way (a
//! neutral `View`, `Trace` facts from its log, a JSON report). The CLI, the history, the links and
//! the shared UI (shell, canvas, tracker, plots) only ever hold a `Box<dyn Simulation>`.
//!
//! Adding a model: implement `Simulation` for its world type, add a `BrokerKind` variant here and
//! its arm in `mqviz_app::registry` (the one place that knows every model). Nothing
//! else in the shared code changes.

// Test support for the model crates, which run natively; the page never reads files.
pub mod conformance;
#[cfg(not(target_arch = "wasm32"))]
#[doc(hidden)]
pub mod preset_files;
pub mod track;
pub mod view;

use std::any::Any;

use serde_json::Value;

use mqviz_engine::json_path::PathError;
use mqviz_engine::Millis;

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
    /// Events run since the model was built. With `now` it names one event exactly, even one
    /// a Step stopped at inside an instant.
    fn events_run(&self) -> u64;
    /// Runs every event up to and including `t`, then sets the clock to `t`.
    fn run_until(&mut self, t: Millis);

    /// Enters one timeline entry in the model's JSON form (`{"at", "action", ...}`) at
    /// `max(at, now)`. It is validated against the current state first: an invalid command changes
    /// nothing and returns every problem with its JSON path.
    fn enter_command(&mut self, command: &Value) -> Result<(), Vec<PathError>>;

    /// The bytes the run holds by the model's own accounting (its memory budget's measure):
    /// what a checkpoint's clone copies, so the history stops keeping them past a size.
    fn memory_bytes(&self) -> u64;

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
        let mut t =
            Totals { produced: view.producers.iter().map(|p| p.sent).sum(), lost_cause: LOST_TO_A_FILTER, ..Totals::default() };
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
    /// The configuration `variants` varies, as this scenario sets it, in the words of their
    /// labels (`allocation AVG`, `EAGER: assignors [range]`, `subscription type Shared`): what
    /// the comparison calls each side.
    fn setting(&self, scenario: &Value) -> String {
        let _ = scenario;
        String::new()
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
    mqviz_engine::digest::write_line_prefix(&mut line, i as u32, sim.log_time(i), cause);
    line.push_str(&sim.log_text(i));
    line
}
