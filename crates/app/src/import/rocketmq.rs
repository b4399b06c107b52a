//! `mqadmin` output and the client's rebalance log, read into a RocketMQ snapshot scenario
//! (`docs/scenario-format.md`, "Snapshots (RocketMQ)"):
//!
//! - `consumerProgress -g <group> [-s true]` (`ConsumerProgressSubCommand`): one row per queue with
//!   its broker and consumer offsets; topics cut to 32 characters before 4.9.3 and to 64 since;
//!   `#Client IP` with `-s true` (the part of the clientId before `@`), `#Inflight` since 5.1;
//!   the footer `Diff Total` (4.x) or `Consume Diff Total` (5.x).
//! - `consumerConnection -g <group>` (`ConsumerConnectionSubCommand`): the connections and the
//!   broker's subscription table, in the 4.9.3+ layout (`#ClientId` header) or the older `%03d`
//!   one, whose first subscription line is glued to "Below is subscription:".
//! - `rebalanced result changed. allocateMessageQueueStrategyName=…` (`RebalanceImpl`): what each
//!   client held after its last change, with the strategy and the group.
//!
//! Neither mqadmin command prints the group's name: it is read from `%RETRY%<group>` rows or from
//! the log line. What no capture says is derived as the broker would, and the notes say so.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{excerpt, numbered_lines, Capture, Format, ImportError, Imported, Note, NoteKind};
use mqviz_engine::sort::StableSort;
use mqviz_rocketmq::allocate::{self, Strategy};
use mqviz_rocketmq::types::MessageQueue;

/// `(topic, broker, queue id)`, the way the rows name a queue.
type Queue = (String, String, u32);

/// What the captures said about one queue.
#[derive(Clone, Debug, Default)]
struct QueueRow {
    broker_offset: u64,
    /// `None`: the group had no offset there.
    consumer_offset: Option<u64>,
    /// `#Client IP` (`-s true`): the owner's IP, `None` for `N/A`.
    client_ip: Option<String>,
}

#[derive(Default)]
struct Facts {
    group: Option<(String, String)>,
    queues: BTreeMap<Queue, QueueRow>,
    /// Topics printed at the progress layout's width, which may have been cut (width, file, line).
    maybe_cut: BTreeMap<String, (usize, String, usize)>,
    /// Connections by clientId, in the order printed.
    clients: Vec<String>,
    /// The broker's subscription table: topic -> expression.
    table: BTreeMap<String, String>,
    message_model: Option<String>,
    consume_from_where: Option<String>,
    consume_type: Option<String>,
    /// From the rebalance log: the strategy, and per (clientId, topic) the last set it held.
    strategy: Option<String>,
    held: BTreeMap<(String, String), BTreeSet<Queue>>,
    log_clients: Vec<String>,
    notes: Vec<Note>,
}

struct At<'a> {
    file: &'a str,
    line: usize,
}

impl Facts {
    fn note(&mut self, at: &At, kind: NoteKind, text: impl Into<String>) {
        self.notes.push(Note { kind, file: at.file.to_string(), line: at.line, text: text.into() });
    }

    fn derived(&mut self, text: impl Into<String>) {
        self.notes.push(Note { kind: NoteKind::Derived, file: String::new(), line: 0, text: text.into() });
    }

    /// The group a row names (`%RETRY%<group>`, `group=`): the first one seen is the group; a
    /// capture of another group is an error with its line.
    fn name_group(&mut self, name: &str, at: &At) -> Result<(), ImportError> {
        match &self.group {
            None => {
                self.group = Some((name.to_string(), format!("{}:{}", at.file, at.line)));
                Ok(())
            }
            Some((g, _)) if g == name => Ok(()),
            Some((g, from)) => Err(ImportError {
                file: at.file.to_string(),
                line: at.line,
                message: format!("this capture is of group {name:?}, but {from} is of group {g:?}: import one group at a time"),
            }),
        }
    }
}

/// The format a capture's text is in, from its first recognisable line.
pub(super) fn sniff(text: &str) -> Option<Format> {
    text.lines().take(2000).find_map(|l| line_format(l.trim()))
}

fn line_format(line: &str) -> Option<Format> {
    if progress_header(line).is_some() {
        Some(Format::RocketmqProgress)
    } else if line.starts_with("#ClientId") || line.starts_with("Below is subscription:") {
        Some(Format::RocketmqConnection)
    } else if line.contains(REBALANCE_LOG) {
        Some(Format::RocketmqRebalanceLog)
    } else if old_connection_row(line) {
        Some(Format::RocketmqConnection)
    } else {
        None
    }
}

/// A connection row of the layout before 4.9.3: `001  clientId addr language version`.
fn old_connection_row(line: &str) -> bool {
    let tokens: Vec<&str> = line.split_whitespace().take(5).collect();
    tokens.len() == 5
        && tokens[0].len() == 3
        && tokens[0].chars().all(|c| c.is_ascii_digit())
        && tokens[1].contains('@')
        && tokens[2].contains(':')
}

/// A capture in several formats (captures pasted one after another) as one capture per format,
/// each starting where its first line is recognised; blank lines keep every line's number.
fn segments(c: &Capture) -> Vec<Capture> {
    if c.format != Format::Auto {
        return vec![c.clone()];
    }
    let lines: Vec<&str> = numbered_lines(&c.text).map(|(_, l)| l).collect();
    let mut starts: Vec<(usize, Format)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(f) = line_format(l.trim()) {
            if starts.last().is_none_or(|(_, last)| *last != f) {
                starts.push((i, f));
            }
        }
    }
    if starts.len() <= 1 {
        return vec![Capture { format: starts.first().map_or(Format::Auto, |(_, f)| *f), ..c.clone() }];
    }
    starts[0].0 = 0;
    let ends: Vec<usize> = starts.iter().skip(1).map(|(i, _)| *i).chain([lines.len()]).collect();
    starts
        .iter()
        .zip(ends)
        .map(|(&(start, format), end)| Capture {
            name: c.name.clone(),
            text: "\n".repeat(start) + &lines[start..end].join("\n"),
            format,
        })
        .collect()
}

/// The progress header's columns (`Topic`, `Broker Name`, `QID`, ...) and the topic column's
/// width (32 before 4.9.3, 64 since), or `None` for another line.
fn progress_header(line: &str) -> Option<(Vec<String>, usize)> {
    if !(line.starts_with("#Topic") && line.contains("#Broker Name") && line.contains("#QID")) {
        return None;
    }
    let cols: Vec<String> = line.split('#').map(str::trim).filter(|c| !c.is_empty()).map(str::to_string).collect();
    // "%-64s  %-32s": the broker column starts two spaces after the padded topic.
    let width = line.find("#Broker Name").map_or(64, |i| i.saturating_sub(2));
    Some((cols, width))
}

const REBALANCE_LOG: &str = "rebalanced result changed. allocateMessageQueueStrategyName=";

pub(super) fn import(captures: &[Capture]) -> Result<Imported, ImportError> {
    let mut facts = Facts::default();
    for c in captures.iter().flat_map(segments) {
        match c.format {
            Format::RocketmqProgress => read_progress(&c, &mut facts)?,
            Format::RocketmqConnection => read_connection(&c, &mut facts)?,
            Format::RocketmqRebalanceLog => read_rebalance_log(&c, &mut facts)?,
            _ => return Err(not_recognised(&c)),
        }
    }
    restore_cut_topics(&mut facts);
    let scenario = scenario(&mut facts, captures);
    super::checked(scenario, facts.notes, captures, mqviz_rocketmq::scenario::parse_scenario_value, "a group the RocketMQ")
}

fn not_recognised(c: &Capture) -> ImportError {
    let first = numbered_lines(&c.text).find(|(_, l)| !l.trim().is_empty());
    let (line, text) = first.map_or((1, String::new()), |(n, l)| (n, excerpt(l)));
    ImportError {
        file: c.name.clone(),
        line,
        message: if text.is_empty() {
            "empty: nothing to import".into()
        } else {
            format!("not recognised as {}: found {text:?}", c.format.name())
        },
    }
}

/// A line worth reading, trimmed: `None` for a blank one, or for control characters once the
/// capture was `recognised` (a note says so); before that, binary data is an error at its line.
fn readable<'a>(raw: &'a str, recognised: bool, at: &At, facts: &mut Facts) -> Result<Option<&'a str>, ImportError> {
    let line = raw.trim();
    if line.is_empty() {
        return Ok(None);
    }
    if !line.chars().any(|ch| ch.is_control() && ch != '\t') {
        return Ok(Some(line));
    }
    if !recognised {
        return Err(ImportError {
            file: at.file.to_string(),
            line: at.line,
            message: "binary data, not the text mqadmin prints".into(),
        });
    }
    facts.note(at, NoteKind::Unused, "control characters: not a row");
    Ok(None)
}

fn read_progress(c: &Capture, facts: &mut Facts) -> Result<(), ImportError> {
    let mut layout: Option<(Vec<String>, usize)> = None;
    let mut diff_sum: i128 = 0;
    let mut rows = 0usize;
    for (n, raw) in numbered_lines(&c.text) {
        let at = At { file: &c.name, line: n };
        let Some(line) = readable(raw, layout.is_some(), &at, facts)? else { continue };
        if let Some(l) = progress_header(line) {
            layout = Some(l);
            continue;
        }
        if line.starts_with("#Group") && line.contains("#Diff Total") {
            facts.note(
                &at,
                NoteKind::Unused,
                "the group list of consumerProgress without -g: run it with -g <group> for its queues",
            );
            continue;
        }
        if let Some(total) = footer_total(line) {
            match total {
                Some(t) if i128::from(t) == diff_sum => facts.note(&at, NoteKind::Parsed, format!("the diff total {t} agrees with the rows")),
                Some(t) => facts.note(
                    &at,
                    NoteKind::Parsed,
                    format!("the footer's diff total is {t} but the rows read add up to {diff_sum}: rows are missing (a table cut in the middle?)"),
                ),
                None => facts.note(&at, NoteKind::Unused, format!("a footer without a number: {:?}", excerpt(line))),
            }
            continue;
        }
        if line.starts_with("Consume TPS:") || line.starts_with("Consume Inflight Total:") {
            facts.note(
                &at,
                NoteKind::Parsed,
                format!("{}: not part of the snapshot (rates are not simulated from it)", excerpt(line)),
            );
            continue;
        }
        let Some((cols, width)) = &layout else {
            facts.note(&at, NoteKind::Unused, format!("before the #Topic header: {:?}", excerpt(line)));
            continue;
        };
        match progress_row(cols, line) {
            Ok(row) => {
                rows += 1;
                diff_sum += i128::from(row.broker_offset) - i128::from(row.consumer_offset);
                read_progress_row(row, *width, &at, facts)?;
            }
            Err(why) => facts.note(&at, NoteKind::Unused, why),
        }
    }
    if layout.is_none() {
        return Err(ImportError {
            file: c.name.clone(),
            line: numbered_lines(&c.text).find(|(_, l)| !l.trim().is_empty()).map_or(1, |(n, _)| n),
            message: "no #Topic header: expected the output of mqadmin consumerProgress -g <group>".into(),
        });
    }
    if rows == 0 {
        facts.derived(format!("{}: the table has no rows", c.name));
    }
    Ok(())
}

/// `Diff Total: n` (4.x) or `Consume Diff Total: n` (5.x): `Some(None)` when the number is bad.
fn footer_total(line: &str) -> Option<Option<i64>> {
    let rest = line.strip_prefix("Consume Diff Total:").or_else(|| line.strip_prefix("Diff Total:"))?;
    Some(rest.trim().parse().ok())
}

struct ProgressRow {
    topic: String,
    broker: String,
    queue: u32,
    broker_offset: i64,
    consumer_offset: i64,
    client_ip: Option<String>,
    diff: i64,
}

fn progress_row(cols: &[String], line: &str) -> Result<ProgressRow, String> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    // Every column but the last (#LastTime, which may hold a space) is one token.
    let fixed = cols.len().saturating_sub(1);
    if tokens.len() < fixed {
        return Err(format!("a cut row: {} cells where its header has {}", tokens.len(), cols.len()));
    }
    // A header may name fewer columns than a row fills (a mangled one): a missing cell is none.
    let cell = |name: &str| cols.iter().position(|c| c == name).and_then(|i| tokens.get(i).copied());
    let number = |name: &str| -> Result<i64, String> {
        let v = cell(name).ok_or_else(|| format!("no {name} column"))?;
        v.parse::<i64>().map_err(|_| format!("{v:?} in #{name} is not a number"))
    };
    let queue = number("QID")?;
    let queue = u32::try_from(queue)
        .ok()
        .filter(|q| u64::from(*q) < mqviz_rocketmq::scenario::MAX_QUEUES)
        .ok_or(format!("queue id {queue} is out of range (0..{})", mqviz_rocketmq::scenario::MAX_QUEUES))?;
    Ok(ProgressRow {
        topic: cell("Topic").unwrap_or_default().to_string(),
        broker: cell("Broker Name").unwrap_or_default().to_string(),
        queue,
        broker_offset: number("Broker Offset")?,
        consumer_offset: number("Consumer Offset")?,
        client_ip: cell("Client IP").filter(|ip| *ip != "N/A").map(str::to_string),
        diff: number("Diff").unwrap_or(0),
    })
}

fn read_progress_row(row: ProgressRow, width: usize, at: &At, facts: &mut Facts) -> Result<(), ImportError> {
    let max = mqviz_rocketmq::scenario::MAX_QUEUE_OFFSET as i64;
    if !(0..=max).contains(&row.broker_offset) {
        facts.note(at, NoteKind::Unused, format!("broker offset {} is out of range (0..={max})", row.broker_offset));
        return Ok(());
    }
    let q = format!("{}:{}:{}", row.topic, row.broker, row.queue);
    if let Some(group) = row.topic.strip_prefix("%RETRY%") {
        if row.topic.chars().count() < width {
            facts.name_group(group, at)?;
        }
        facts.note(
            at,
            NoteKind::Parsed,
            format!("{q}: the group's retry queue ({} messages waiting for redelivery are not restored)", row.diff.max(0)),
        );
        return Ok(());
    }
    if row.topic.starts_with("%DLQ%") {
        facts.note(at, NoteKind::Parsed, format!("{q}: a dead-letter queue, not restored"));
        return Ok(());
    }
    if row.topic.chars().count() == width {
        facts.maybe_cut.entry(row.topic.clone()).or_insert((width, at.file.to_string(), at.line));
    }
    let mut text = format!("{q}: max offset {}", row.broker_offset);
    let consumer_offset = if row.consumer_offset < 0 {
        text.push_str(", no committed offset (-1)");
        None
    } else if row.consumer_offset > row.broker_offset {
        text.push_str(&format!(
            ", a negative Diff: the consumer offset {} is past it (the broker's queue was truncated or recovered); committed taken as {}",
            row.consumer_offset, row.broker_offset
        ));
        Some(row.broker_offset as u64)
    } else {
        text.push_str(&format!(", committed {} (lag {})", row.consumer_offset, row.broker_offset - row.consumer_offset));
        Some(row.consumer_offset as u64)
    };
    match &row.client_ip {
        Some(ip) => text.push_str(&format!(", held by a client on {ip}")),
        None if !row.topic.is_empty() => {}
        None => {}
    }
    facts.note(at, NoteKind::Parsed, text);
    let queue = (row.topic, row.broker, row.queue);
    facts.queues.insert(queue, QueueRow { broker_offset: row.broker_offset as u64, consumer_offset, client_ip: row.client_ip });
    Ok(())
}

fn read_connection(c: &Capture, facts: &mut Facts) -> Result<(), ImportError> {
    // Where the lines are: connections until "Below is subscription:", then the table.
    let mut in_table = false;
    let mut recognised = false;
    for (n, raw) in numbered_lines(&c.text) {
        let at = At { file: &c.name, line: n };
        let Some(mut line) = readable(raw, recognised, &at, facts)? else { continue };
        if line.starts_with("#ClientId") {
            recognised = true;
            in_table = false;
            continue;
        }
        if let Some(rest) = line.strip_prefix("Below is subscription:") {
            recognised = true;
            in_table = true;
            // Before 4.9.3 the first subscription line follows on the same line.
            line = rest.trim();
            if line.is_empty() {
                continue;
            }
        }
        if line.starts_with("#Topic") {
            continue;
        }
        if let Some((key, value)) =
            line.split_once(':').filter(|(k, _)| matches!(*k, "ConsumeType" | "MessageModel" | "ConsumeFromWhere"))
        {
            let value = value.trim().to_string();
            let meaning = match key {
                "ConsumeType" if value == "CONSUME_ACTIVELY" => {
                    "a pull consumer: the snapshot models push consumers, which rebalance the same way".to_string()
                }
                "ConsumeType" => format!("{value}: push consumers"),
                _ => format!("{key} {value}"),
            };
            facts.note(&at, NoteKind::Parsed, meaning);
            match key {
                "MessageModel" => facts.message_model = Some(value),
                "ConsumeFromWhere" => facts.consume_from_where = Some(value),
                _ => facts.consume_type = Some(value),
            }
            recognised = true;
            continue;
        }
        if in_table {
            read_subscription_line(line, &at, facts)?;
        } else {
            read_connection_line(line, &at, facts, &mut recognised);
        }
    }
    if !recognised {
        return Err(ImportError {
            file: c.name.clone(),
            line: numbered_lines(&c.text).find(|(_, l)| !l.trim().is_empty()).map_or(1, |(n, _)| n),
            message: "no #ClientId header and no \"Below is subscription:\": expected the output of mqadmin consumerConnection -g <group>".into(),
        });
    }
    facts.derived(format!(
        "{}: the subscription table is one broker's answer (consumerConnection asks one broker of the group); where members disagree, another broker may hold another expression",
        c.name
    ));
    Ok(())
}

/// A connection row: `clientId addr language version` (4.9.3+) or `NNN  clientId addr language
/// version` (before).
fn read_connection_line(line: &str, at: &At, facts: &mut Facts, recognised: &mut bool) {
    let mut tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.first().is_some_and(|t| t.len() == 3 && t.chars().all(|c| c.is_ascii_digit())) {
        tokens.remove(0);
        *recognised = true;
    }
    if tokens.len() < 4 || !tokens[0].contains('@') {
        facts.note(at, NoteKind::Unused, format!("not a connection row (clientId addr language version): {:?}", excerpt(line)));
        return;
    }
    let (client, addr, language, version) = (tokens[0], tokens[1], tokens[2], tokens[3..].join(" "));
    facts.note(at, NoteKind::Parsed, format!("member {client} at {addr} ({language} {version})"));
    if !facts.clients.iter().any(|c| c == client) {
        facts.clients.push(client.to_string());
    }
}

/// A subscription row: `topic expression` (4.9.3+) or `NNN  Topic: t SubExpression: e` (before).
fn read_subscription_line(line: &str, at: &At, facts: &mut Facts) -> Result<(), ImportError> {
    let (topic, expression) = match line.find("Topic:") {
        Some(i) => {
            let rest = &line[i + "Topic:".len()..];
            match rest.split_once("SubExpression:") {
                Some((t, e)) => (t.trim(), e.trim()),
                None => (rest.trim(), ""),
            }
        }
        None => match line.split_once(char::is_whitespace) {
            Some((t, e)) => (t, e.trim()),
            None => (line, ""),
        },
    };
    if topic.is_empty() || expression.is_empty() {
        facts.note(at, NoteKind::Unused, format!("a subscription row without its expression: {:?}", excerpt(line)));
        return Ok(());
    }
    if let Some(group) = topic.strip_prefix("%RETRY%") {
        facts.name_group(group, at)?;
        facts.note(at, NoteKind::Parsed, format!("the group's retry topic {topic}: group {group:?}"));
        return Ok(());
    }
    facts.note(at, NoteKind::Parsed, format!("the broker's table: {topic} filtered by {expression:?}"));
    facts.table.insert(topic.to_string(), expression.to_string());
    Ok(())
}

fn read_rebalance_log(c: &Capture, facts: &mut Facts) -> Result<(), ImportError> {
    let mut any = false;
    for (n, raw) in numbered_lines(&c.text) {
        let at = At { file: &c.name, line: n };
        let Some(line) = readable(raw, any, &at, facts)? else { continue };
        if line.contains("broker rebalanced result changed.") {
            facts.note(&at, NoteKind::Unused, "a broker-side (POP) rebalance: not modelled");
            continue;
        }
        let Some(i) = line.find(REBALANCE_LOG) else {
            facts.note(&at, NoteKind::Unused, format!("not a rebalance line: {:?}", excerpt(line)));
            continue;
        };
        any = true;
        let body = &line[i + "rebalanced result changed. ".len()..];
        let field = |key: &str| -> Option<&str> {
            let start = body.find(&format!("{key}="))? + key.len() + 1;
            let rest = &body[start..];
            Some(rest[..rest.find(", ").unwrap_or(rest.len())].trim())
        };
        let (Some(strategy), Some(group), Some(topic), Some(client)) =
            (field("allocateMessageQueueStrategyName"), field("group"), field("topic"), field("clientId"))
        else {
            facts.note(&at, NoteKind::Unused, "a rebalance line without strategy, group, topic and clientId (cut?)");
            continue;
        };
        let Some(set_start) = body.find("rebalanceResultSet=") else {
            facts.note(&at, NoteKind::Unused, "a rebalance line without its rebalanceResultSet (cut?)");
            continue;
        };
        let set = message_queues(&body[set_start..]);
        facts.name_group(group, &at)?;
        let size = field("rebalanceResultSize").and_then(|s| s.parse::<usize>().ok());
        if size.is_some_and(|s| s != set.len()) {
            facts.note(
                &at,
                NoteKind::Unused,
                format!("rebalanceResultSize {} but {} queues listed: a cut line", size.unwrap_or(0), set.len()),
            );
            continue;
        }
        facts.note(
            &at,
            NoteKind::Parsed,
            format!(
                "{client} holds {} of {topic} by {strategy} ({}){}",
                set.len(),
                set.iter().map(|(_, b, q)| format!("{b}:{q}")).collect::<Vec<_>>().join(", "),
                if facts.held.contains_key(&(client.to_string(), topic.to_string())) {
                    "; replaces its earlier line"
                } else {
                    ""
                }
            ),
        );
        if facts.strategy.as_deref().is_some_and(|s| s != strategy) {
            facts.note(&at, NoteKind::Parsed, format!("the strategy changed to {strategy}: the last one is used"));
        }
        facts.strategy = Some(strategy.to_string());
        if !facts.log_clients.iter().any(|c| c == client) {
            facts.log_clients.push(client.to_string());
        }
        for q in &set {
            facts.queues.entry(q.clone()).or_default();
        }
        facts.held.insert((client.to_string(), topic.to_string()), set);
    }
    if !any {
        return Err(ImportError {
            file: c.name.clone(),
            line: numbered_lines(&c.text).find(|(_, l)| !l.trim().is_empty()).map_or(1, |(n, _)| n),
            message: format!("no line holds {REBALANCE_LOG:?}: expected the client's rebalance log"),
        });
    }
    Ok(())
}

/// A queue id within the scenario's limit (a larger one is no queue a scenario can hold).
fn queue_id(text: &str) -> Option<u32> {
    text.parse::<u32>().ok().filter(|q| u64::from(*q) < mqviz_rocketmq::scenario::MAX_QUEUES)
}

/// `[MessageQueue [topic=T, brokerName=B, queueId=0], ...]` (Java's `Set.toString()`).
fn message_queues(text: &str) -> BTreeSet<Queue> {
    let mut out = BTreeSet::new();
    for part in text.split("MessageQueue [").skip(1) {
        let field = |key: &str| -> Option<&str> {
            let start = part.find(&format!("{key}="))? + key.len() + 1;
            let rest = &part[start..];
            Some(rest[..rest.find([',', ']']).unwrap_or(rest.len())].trim())
        };
        if let (Some(t), Some(b), Some(q)) = (field("topic"), field("brokerName"), field("queueId").and_then(queue_id)) {
            out.insert((t.to_string(), b.to_string(), q));
        }
    }
    out
}

/// A topic printed at exactly the column width may have been cut: the full name is taken from
/// another capture (the subscription table, the rebalance log) that has one starting with it.
fn restore_cut_topics(facts: &mut Facts) {
    let cut = std::mem::take(&mut facts.maybe_cut);
    for (short, (width, file, line)) in cut {
        let known: BTreeSet<String> = facts
            .table
            .keys()
            .cloned()
            .chain(facts.held.keys().map(|(_, t)| t.clone()))
            .filter(|t| t.starts_with(&short))
            .collect();
        let at = At { file: &file, line };
        match known.iter().find(|t| t.chars().count() > width) {
            Some(full) => {
                facts.note(&at, NoteKind::Derived, format!("{short} is cut to {width} characters; the full name {full} is from another capture"));
                let rows: Vec<(Queue, QueueRow)> =
                    facts.queues.iter().filter(|((t, _, _), _)| *t == short).map(|(k, v)| (k.clone(), v.clone())).collect();
                for ((_, b, q), row) in rows {
                    facts.queues.remove(&(short.clone(), b.clone(), q));
                    facts.queues.insert((full.clone(), b, q), row);
                }
            }
            None if known.contains(&short) => {}
            None => facts.note(
                &at,
                NoteKind::Derived,
                format!("{short} fills its {width}-character column and may be cut; no other capture names it in full, so it is kept as printed"),
            ),
        }
    }
}

/// The strategy a log names, as the scenario writes it (`MACHINE_ROOM_NEARBY-AVG`, `CONFIG` and
/// `MACHINE_ROOM` need lists the log does not print: AVG stands in, and the notes say so).
fn allocation(facts: &mut Facts) -> Value {
    let Some(name) = facts.strategy.clone() else {
        facts.derived("the captures do not name the allocation strategy: AVG (the client's default)".to_string());
        return json!("AVG");
    };
    match name.as_str() {
        "AVG" | "AVG_BY_CIRCLE" => json!(name),
        "CONSISTENT_HASH" => {
            facts.derived("CONSISTENT_HASH: the log does not print virtualNodeCnt; the default 10 is used".to_string());
            json!("CONSISTENT_HASH")
        }
        other => {
            facts.derived(format!(
                "{other}: its configuration is not in the log; AVG stands in, and the snapshot keeps what each member held"
            ));
            json!("AVG")
        }
    }
}

/// The tag the backlog's messages are given: the captures hold offsets, not contents, so the
/// backlog is taken to be what the group was reading (the first tag its table accepts).
fn backlog_tag(facts: &mut Facts, topic: &str) -> Option<String> {
    let expression = facts.table.get(topic)?.trim().to_string();
    if expression == "*" || expression.is_empty() {
        return None;
    }
    let tags: Vec<&str> = expression.split("||").map(str::trim).collect();
    if tags.iter().any(|t| t.is_empty() || t.contains(char::is_whitespace)) {
        facts.derived(format!(
            "{topic}: {expression:?} is not a tag list (SQL92?): the backlog's messages carry no tag or properties, so such a filter may drop them"
        ));
        return None;
    }
    facts.derived(format!(
        "{topic}: the captures give the backlog's offsets, not its messages; they are given tag {}, the first the group's table accepts",
        tags[0]
    ));
    Some(tags[0].to_string())
}

fn scenario(facts: &mut Facts, captures: &[Capture]) -> Value {
    let group = match facts.group.clone() {
        Some((g, _)) => g,
        None => {
            facts.derived(
                "no capture names the group (only %RETRY%<group> rows and the rebalance log do): it is called \"imported-group\""
                    .to_string(),
            );
            "imported-group".to_string()
        }
    };
    // Topics: what the rows, the table and the log name (retry and DLQ topics are left out).
    let mut topics: BTreeSet<String> = facts.queues.keys().map(|(t, _, _)| t.clone()).collect();
    topics.extend(facts.table.keys().cloned());
    let brokers: BTreeSet<String> = facts.queues.keys().map(|(_, b, _)| b.clone()).collect();
    if brokers.is_empty() {
        facts.derived("no capture lists a queue: one broker, broker-a, and topics with 4 queues".to_string());
    }
    let brokers: Vec<String> = if brokers.is_empty() { vec!["broker-a".to_string()] } else { brokers.into_iter().collect() };
    let mut topic_values = Vec::new();
    let mut routes: BTreeMap<String, Vec<MessageQueue>> = BTreeMap::new();
    for t in &topics {
        let hosts: BTreeSet<String> = facts.queues.keys().filter(|(x, _, _)| x == t).map(|(_, b, _)| b.clone()).collect();
        let count = facts.queues.keys().filter(|(x, _, _)| x == t).map(|(_, _, q)| q + 1).max().unwrap_or(4);
        let per_broker: BTreeSet<u32> = hosts
            .iter()
            .map(|b| facts.queues.keys().filter(|(x, y, _)| x == t && y == b).map(|(_, _, q)| q + 1).max().unwrap_or(0))
            .collect();
        if per_broker.len() > 1 {
            facts.derived(format!(
                "{t}: its brokers list different queue counts; every broker gets {count} (missing queues start empty)"
            ));
        }
        let mut v = json!({"name": t, "queues": count});
        if !hosts.is_empty() && hosts.len() < brokers.len() {
            v["brokers"] = json!(hosts);
        }
        let mut offsets = Map::new();
        for b in &hosts {
            let missing: Vec<String> =
                (0..count).filter(|q| !facts.queues.contains_key(&(t.clone(), b.clone(), *q))).map(|q| q.to_string()).collect();
            if !missing.is_empty() {
                facts.derived(format!(
                    "{t} on {b}: no row for queue {}; it starts empty, with no committed offset",
                    missing.join(", ")
                ));
            }
            let list: Vec<u64> =
                (0..count).map(|q| facts.queues.get(&(t.clone(), b.clone(), q)).map_or(0, |r| r.broker_offset)).collect();
            offsets.insert(b.clone(), json!(list));
        }
        if offsets.values().any(|l| l.as_array().is_some_and(|a| a.iter().any(|o| o.as_u64() != Some(0)))) {
            v["brokerOffsets"] = Value::Object(offsets);
            if let Some(tag) = backlog_tag(facts, t) {
                v["backlogTag"] = json!(tag);
            }
        }
        let host_list: Vec<String> = if hosts.is_empty() { brokers.clone() } else { hosts.into_iter().collect() };
        routes.insert(
            t.clone(),
            host_list.iter().flat_map(|b| (0..count).map(|q| MessageQueue::new(t.as_str(), b.as_str(), q))).collect(),
        );
        topic_values.push(v);
    }
    let mut committed = Map::new();
    for ((t, b, q), row) in &facts.queues {
        if let Some(o) = row.consumer_offset {
            committed.insert(format!("{t}:{b}:{q}"), json!(o));
        }
    }
    // Members: the connections, else the log's clients, else one per client IP.
    let mut clients = facts.clients.clone();
    if clients.is_empty() {
        clients = facts.log_clients.clone();
    }
    if clients.is_empty() {
        let ips: BTreeSet<String> = facts.queues.values().filter_map(|r| r.client_ip.clone()).collect();
        if !ips.is_empty() {
            facts.derived(format!(
                "no connection list: one member per #Client IP ({}); several clients on one host would share it",
                ips.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        clients = ips.into_iter().map(|ip| format!("{ip}@imported")).collect();
    }
    if clients.is_empty() {
        facts.derived("no capture names a member (no connection list, no rebalance log, no #Client IP): the group has no consumers; add them to the scenario".to_string());
    }
    for c in facts.log_clients.clone() {
        if !clients.contains(&c) {
            facts.derived(format!(
                "{c} is in the rebalance log but not in the connection list: it had left when the list was taken"
            ));
        }
    }
    // Subscriptions: the broker's table, else every topic with "*".
    let table: BTreeMap<String, String> = if facts.table.is_empty() {
        if !topics.is_empty() {
            facts.derived(format!(
                "no subscription table (consumerConnection): every member subscribes {} with \"*\"",
                topics.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        topics.iter().map(|t| (t.clone(), "*".to_string())).collect()
    } else {
        facts.derived("every member subscribes as the broker's table says: consumerConnection prints the group's table, not each member's subscription; edit a member to review a change".to_string());
        facts.table.clone()
    };
    let allocation = allocation(facts);
    let broadcasting = facts.message_model.as_deref() == Some("BROADCASTING");
    let held = owners(facts, &clients, &table, &routes, &allocation, broadcasting);
    let mut consumers = Vec::new();
    for c in &clients {
        let assigned: Vec<String> = held.get(c).into_iter().flatten().map(|(t, b, q)| format!("{t}:{b}:{q}")).collect();
        consumers.push(json!({"clientId": c, "subscriptions": table, "assigned": assigned}));
    }
    let mut g = json!({"name": group, "allocation": allocation, "committed": committed, "consumers": consumers});
    if let Some(m) = &facts.message_model {
        g["messageModel"] = json!(m);
    }
    match facts.consume_from_where.as_deref() {
        Some(w @ ("CONSUME_FROM_LAST_OFFSET" | "CONSUME_FROM_FIRST_OFFSET" | "CONSUME_FROM_TIMESTAMP")) => {
            g["consumeFromWhere"] = json!(w)
        }
        Some(other) => {
            facts.derived(format!("ConsumeFromWhere {other} is not one the client offers today: CONSUME_FROM_LAST_OFFSET"))
        }
        None => {}
    }
    facts.derived(
        "one idle producer, \"producer\", with no sends: the captures give no rates; send from it (the page's send form, or add sends) to see new messages arrive".to_string(),
    );
    super::scenario_of(
        "rocketmq",
        format!("Imported: group {group}"),
        captures,
        json!({
        "brokers": brokers.iter().map(|b| json!({"name": b})).collect::<Vec<_>>(),
        "topics": topic_values,
        "producers": [{"id": "producer"}],
        "groups": [g],
        }),
    )
}

/// Who held which queue: the rebalance log where it speaks, else `#Client IP` where one member
/// is on that IP, else what the group's strategy gives each member (as its next rebalance would).
fn owners(
    facts: &mut Facts,
    clients: &[String],
    table: &BTreeMap<String, String>,
    routes: &BTreeMap<String, Vec<MessageQueue>>,
    allocation: &Value,
    broadcasting: bool,
) -> BTreeMap<String, BTreeSet<Queue>> {
    let mut held: BTreeMap<String, BTreeSet<Queue>> = BTreeMap::new();
    let mut cids: Vec<String> = clients.to_vec();
    cids.stable_sort_by(|a, b| mqviz_rocketmq::types::java_str_cmp(a, b));
    let strategy = match allocation.as_str() {
        Some("AVG_BY_CIRCLE") => Strategy::AvgByCircle,
        Some("CONSISTENT_HASH") => Strategy::ConsistentHash { virtual_nodes: 10 },
        _ => Strategy::Avg,
    };
    for topic in table.keys() {
        let route = routes.get(topic).cloned().unwrap_or_default();
        let logged: Vec<&String> = clients.iter().filter(|c| facts.held.contains_key(&((*c).clone(), topic.clone()))).collect();
        if broadcasting {
            for c in clients {
                held.entry(c.clone()).or_default().extend(route.iter().map(queue_of));
            }
            continue;
        }
        if !logged.is_empty() {
            let mut taken: BTreeSet<Queue> = BTreeSet::new();
            for c in logged {
                for q in &facts.held[&(c.clone(), topic.clone())] {
                    // Two lines may claim a queue during a handover: the first client keeps it.
                    if taken.insert(q.clone()) {
                        held.entry(c.clone()).or_default().insert(q.clone());
                    }
                }
            }
            continue;
        }
        let by_ip: Vec<(Queue, String)> = route
            .iter()
            .map(queue_of)
            .filter_map(|q| {
                let ip = facts.queues.get(&q)?.client_ip.clone()?;
                let on_ip: Vec<&String> = clients.iter().filter(|c| c.split('@').next() == Some(ip.as_str())).collect();
                match on_ip.as_slice() {
                    [one] => Some((q, (*one).clone())),
                    _ => None,
                }
            })
            .collect();
        let by_ip_count = by_ip.len();
        let owned_by_ip: BTreeSet<Queue> = by_ip.iter().map(|(q, _)| q.clone()).collect();
        for (q, c) in by_ip {
            held.entry(c).or_default().insert(q);
        }
        if by_ip_count == route.len() {
            continue;
        }
        // The rest (no row, `N/A`, an IP several members share) as the strategy gives it.
        let mut mq_all = route.clone();
        mq_all.stable_sort();
        for c in &cids {
            let queues = allocate::allocate(&strategy, c, &mq_all, &cids).unwrap_or_default();
            held.entry(c.clone()).or_default().extend(queues.iter().map(queue_of).filter(|q| !owned_by_ip.contains(q)));
        }
        if !cids.is_empty() && by_ip_count > 0 {
            facts.derived(format!(
                "{topic}: {} of {} queues have a #Client IP of one member; the others' owners follow the group's strategy, {}",
                by_ip_count,
                route.len(),
                allocation.as_str().unwrap_or("AVG")
            ));
        } else if !cids.is_empty() {
            facts.derived(format!(
                "{topic}: no capture says who held each queue (consumerProgress without -s true, or clients sharing an IP): owners follow the group's strategy, {}",
                allocation.as_str().unwrap_or("AVG")
            ));
        }
    }
    held
}

fn queue_of(mq: &MessageQueue) -> Queue {
    (mq.topic.to_string(), mq.broker.to_string(), mq.queue_id)
}
