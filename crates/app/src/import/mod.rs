//! Importers: what the admin tools print, turned into a snapshot scenario (`mqviz import`,
//! `docs/import.md`). Each parsed row is explained and every line that could not be used is
//! listed with its line number, so nothing is dropped silently; input that no importer
//! recognises is an error with its file and line, never a panic.
//!
//! Kafka (`kafka-consumer-groups.sh --describe`, `--members [--verbose]`, `--state`), RocketMQ
//! (`mqadmin consumerProgress`, `consumerConnection`, the client's rebalance log) and Pulsar
//! (`pulsar-admin topics stats`, `stats-internal`, and their partitioned forms); see [`Format`].

mod kafka;
mod pulsar;
mod rocketmq;

use std::fmt;

/// The output formats an importer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Recognise each file by its header.
    Auto,
    KafkaDescribe,
    KafkaMembers,
    KafkaState,
    RocketmqProgress,
    RocketmqConnection,
    RocketmqRebalanceLog,
    PulsarStats,
    PulsarStatsInternal,
}

impl Format {
    pub const NAMES: &'static str =
        "auto, kafka-describe, kafka-members, kafka-state, rocketmq-progress, rocketmq-connection, rocketmq-rebalance-log, pulsar-stats or pulsar-stats-internal";

    /// The broker whose admin tools print this format (`None`: recognise it).
    fn broker(self) -> Option<&'static str> {
        match self {
            Format::Auto => None,
            Format::KafkaDescribe | Format::KafkaMembers | Format::KafkaState => Some("Kafka"),
            Format::RocketmqProgress | Format::RocketmqConnection | Format::RocketmqRebalanceLog => Some("RocketMQ"),
            Format::PulsarStats | Format::PulsarStatsInternal => Some("Pulsar"),
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "auto" => Some(Format::Auto),
            "kafka-describe" => Some(Format::KafkaDescribe),
            "kafka-members" => Some(Format::KafkaMembers),
            "kafka-state" => Some(Format::KafkaState),
            "rocketmq-progress" => Some(Format::RocketmqProgress),
            "rocketmq-connection" => Some(Format::RocketmqConnection),
            "rocketmq-rebalance-log" => Some(Format::RocketmqRebalanceLog),
            "pulsar-stats" => Some(Format::PulsarStats),
            "pulsar-stats-internal" => Some(Format::PulsarStatsInternal),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::KafkaDescribe => "kafka-describe",
            Format::KafkaMembers => "kafka-members",
            Format::KafkaState => "kafka-state",
            Format::RocketmqProgress => "rocketmq-progress",
            Format::RocketmqConnection => "rocketmq-connection",
            Format::RocketmqRebalanceLog => "rocketmq-rebalance-log",
            Format::PulsarStats => "pulsar-stats",
            Format::PulsarStatsInternal => "pulsar-stats-internal",
        }
    }
}

/// One captured file.
#[derive(Clone, Debug)]
pub struct Capture {
    /// How the notes name it (a path, or "paste").
    pub name: String,
    pub text: String,
    pub format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// A row that was read, and what it means.
    Parsed,
    /// A line that was not used, and why.
    Unused,
    /// A fact the capture lacks, derived as the broker would.
    Derived,
}

/// One line of the importer's explanation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    pub file: String,
    /// 1-based; 0 for notes about the whole import.
    pub line: usize,
    pub text: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            NoteKind::Parsed => "read",
            NoteKind::Unused => "unused",
            NoteKind::Derived => "derived",
        };
        if self.line == 0 {
            write!(f, "{kind}: {}", self.text)
        } else {
            write!(f, "{}:{}: {kind}: {}", self.file, self.line, self.text)
        }
    }
}

/// Why an import failed: the file and line where it became clear.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

/// A scenario and the explanation of how it was read.
#[derive(Clone, Debug)]
pub struct Imported {
    /// A valid `mqviz-scenario/1` scenario (checked by the model's own parser).
    pub scenario: serde_json::Value,
    pub notes: Vec<Note>,
}

/// How an imported scenario's description begins: the page knows an import by it (also after
/// an export and a reopen) and says that its links carry the cluster's names.
pub const DESCRIPTION_PREFIX: &str = "A snapshot read by mqviz import";

/// The most a capture may hold (a 50 MB paste is read; more is refused before parsing).
pub const MAX_CAPTURE_BYTES: usize = 64 << 20;

/// Reads the captures together into one scenario: captures of the same group combine (a
/// `--describe` with its `--members` and `--state`).
pub fn import(captures: &[Capture]) -> Result<Imported, ImportError> {
    if captures.is_empty() {
        return Err(ImportError { file: "import".into(), line: 0, message: "no capture given".into() });
    }
    for c in captures {
        if c.text.len() > MAX_CAPTURE_BYTES {
            return Err(ImportError {
                file: c.name.clone(),
                line: 0,
                message: format!("{} bytes is more than the {MAX_CAPTURE_BYTES} an import reads", c.text.len()),
            });
        }
    }
    // One model per import: RocketMQ and Pulsar captures are known by their headers and their
    // JSON, the rest is Kafka's.
    let broker = |c: &Capture| match c.format.broker() {
        Some(b) => b,
        None if rocketmq::sniff(&c.text).is_some() => "RocketMQ",
        None if pulsar::sniff(&c.text).is_some() => "Pulsar",
        None => "Kafka",
    };
    let first = broker(&captures[0]);
    if let Some(other) = captures.iter().find(|c| broker(c) != first) {
        return Err(ImportError {
            file: other.name.clone(),
            line: 0,
            message: format!(
                "a {} capture, while {} is a {first} one: import the captures of one broker at a time",
                broker(other),
                captures[0].name
            ),
        });
    }
    match first {
        "RocketMQ" => rocketmq::import(captures),
        "Pulsar" => pulsar::import(captures),
        _ => kafka::import(captures),
    }
}

/// The scenario an importer wrote, checked by its model's own reader: a capture that describes
/// something the model refuses is an error naming the captures, not a scenario that fails later.
pub(crate) fn checked<T, E: fmt::Display>(
    scenario: serde_json::Value,
    notes: Vec<Note>,
    captures: &[Capture],
    read: impl Fn(&serde_json::Value) -> Result<T, Vec<E>>,
    what: &str,
) -> Result<Imported, ImportError> {
    match read(&scenario) {
        Ok(_) => Ok(Imported { scenario, notes }),
        Err(errors) => Err(ImportError {
            file: captures.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
            line: 0,
            message: format!(
                "the captures describe {what} the model refuses: {}",
                errors.first().map(ToString::to_string).unwrap_or_default()
            ),
        }),
    }
}

/// An imported scenario: the envelope every importer writes (its description names the
/// captures, so the page knows an import), then the model's `fields`.
pub(crate) fn scenario_of(broker: &str, name: String, captures: &[Capture], fields: serde_json::Value) -> serde_json::Value {
    let sources: Vec<&str> = captures.iter().map(|c| c.name.as_str()).collect();
    let mut v = serde_json::json!({
        "format": "mqviz-scenario/1",
        "broker": broker,
        "name": name,
        "description": format!("{DESCRIPTION_PREFIX} from {}.", sources.join(", ")),
        "seed": 1,
        "until": 60000,
    });
    if let (Some(o), serde_json::Value::Object(f)) = (v.as_object_mut(), fields) {
        o.extend(f);
    }
    v
}

/// Lines with their 1-based numbers, without line ends.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).enumerate().map(|(i, l)| (i + 1, l))
}

/// A line cut to a readable length for a note.
pub(crate) fn excerpt(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests;
