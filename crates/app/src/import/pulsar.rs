//! `pulsar-admin` output read into a Pulsar snapshot scenario (`docs/scenario-format.md`,
//! "Snapshots (Pulsar)"). The formats are described, with the upstream classes they come from,
//! in `tests/import/pulsar/FORMAT.md`:
//!
//! - `topics stats` (TopicStatsImpl): the subscriptions, their type, consumers in the broker's
//!   order, `activeConsumerName`, Key_Shared `keyHashRanges` (strings, before 4.0) or
//!   `keyHashRangeArrays` (4.0+), and `msgBacklog` (entries);
//! - `topics stats-internal` (PersistentTopicInternalStats): the retained ledgers (the open one
//!   last, its count in `currentLedgerEntries`) and each cursor's `markDeletePosition` and
//!   `individuallyDeletedMessages` (`[(l:e‥l:e],…]`, open-closed, `‥` or `..`);
//! - `partitioned-stats --per-partition` and `partitioned-stats-internal`: the same per partition,
//!   under `partitions` keyed by the partition's full name.
//!
//! The JSON is found where a line starts with `{` (prompts, the echoed command and log lines
//! before it are listed as unused); one paste may hold several documents. Positions
//! `ledgerId:entryId` are mapped onto the snapshot's single ledger per partition by counting the
//! retained ledgers' entries, and the notes say how.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{excerpt, numbered_lines, Capture, Format, ImportError, Imported, Note, NoteKind};
use mqviz_engine::sort::StableSort;

/// Whether a capture holds `pulsar-admin` JSON: a line that opens an object, then a quoted key.
pub(super) fn sniff(text: &str) -> Option<Format> {
    let mut lines = text.lines().take(2000).map(str::trim);
    while let Some(l) = lines.next() {
        let opens = l == "{" || l.starts_with("{\"") || l.starts_with("{ \"");
        if opens && (l.len() > 1 || lines.next().is_some_and(|n| n.starts_with('"'))) {
            return Some(if text.contains("\"ledgers\"") || text.contains("\"cursors\"") {
                Format::PulsarStatsInternal
            } else {
                Format::PulsarStats
            });
        }
    }
    None
}

/// Where a note points.
#[derive(Clone)]
struct At {
    file: String,
    line: usize,
}

/// One JSON document of a capture: its kind, its value, where it starts, and its text's lines
/// (to point notes at the line a field is on).
struct Doc {
    value: Value,
    at: At,
    /// Lines of the capture the document spans, 1-based and inclusive.
    lines: (usize, usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DocKind {
    Stats,
    Internal,
}

/// What the captures said about one partition (or a non-partitioned topic).
#[derive(Default)]
struct PartitionFacts {
    stats: Option<(Value, At)>,
    internal: Option<(Value, At)>,
}

/// One topic: its partitions by index (-1: non-partitioned).
#[derive(Default)]
struct TopicFacts {
    partitioned: Option<u32>,
    partitions: BTreeMap<i64, PartitionFacts>,
}

#[derive(Default)]
struct Facts {
    topics: BTreeMap<String, TopicFacts>,
    notes: Vec<Note>,
}

impl Facts {
    fn note(&mut self, at: &At, kind: NoteKind, text: impl Into<String>) {
        self.notes.push(Note { kind, file: at.file.clone(), line: at.line, text: text.into() });
    }

    fn derived(&mut self, text: impl Into<String>) {
        self.notes.push(Note { kind: NoteKind::Derived, file: String::new(), line: 0, text: text.into() });
    }
}

/// The documents of one capture; every line outside them is an unused note.
fn documents(c: &Capture, notes: &mut Vec<Note>) -> Result<Vec<Doc>, ImportError> {
    let text = c.text.as_str();
    let starts: Vec<usize> = numbered_lines(text).filter(|(_, l)| l.trim_start().starts_with('{')).map(|(n, _)| n).collect();
    let line_offsets: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let mut docs = Vec::new();
    let mut next_free = 1;
    let unused = |from: usize, to: usize, notes: &mut Vec<Note>| {
        for (n, line) in numbered_lines(text).skip(from - 1).take(to.saturating_sub(from)) {
            if !line.trim().is_empty() {
                notes.push(Note {
                    kind: NoteKind::Unused,
                    file: c.name.clone(),
                    line: n,
                    text: format!("not JSON from pulsar-admin: {}", excerpt(line)),
                });
            }
        }
    };
    for start in starts {
        if start < next_free {
            continue;
        }
        let begin = line_offsets[start - 1];
        let mut stream = serde_json::Deserializer::from_str(&text[begin..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                let end_byte = begin + stream.byte_offset();
                let end_line = line_offsets.partition_point(|&o| o < end_byte).max(start);
                unused(next_free, start, notes);
                docs.push(Doc { value, at: At { file: c.name.clone(), line: start }, lines: (start, end_line) });
                next_free = end_line + 1;
            }
            Some(Err(e)) => {
                let line = start + e.line().saturating_sub(1);
                let why = if e.is_eof() {
                    format!("the JSON that starts at line {start} ends before it closes (a cut paste?)")
                } else {
                    format!("the JSON that starts at line {start} is not valid here: {e}")
                };
                return Err(ImportError { file: c.name.clone(), line, message: why });
            }
            None => {}
        }
    }
    unused(next_free, numbered_lines(text).count() + 1, notes);
    if docs.is_empty() {
        let line = numbered_lines(text).find(|(_, l)| !l.trim().is_empty()).map_or(1, |(n, _)| n);
        return Err(ImportError {
            file: c.name.clone(),
            line,
            message: "no JSON object from pulsar-admin (topics stats or stats-internal) in this capture".into(),
        });
    }
    Ok(docs)
}

fn kind_of(v: &Value) -> Option<DocKind> {
    let o = v.as_object()?;
    if o.contains_key("ledgers") || o.contains_key("cursors") || o.contains_key("entriesAddedCounter") {
        Some(DocKind::Internal)
    } else if o.contains_key("subscriptions") || o.contains_key("publishers") || o.contains_key("msgRateIn") {
        Some(DocKind::Stats)
    } else {
        None
    }
}

/// A topic name in the noise before a document: the last `persistent://…` word (the echoed
/// command), if any.
fn named_in_noise(text: &str, before_line: usize) -> Option<String> {
    numbered_lines(text)
        .take(before_line.saturating_sub(1))
        .flat_map(|(_, l)| l.split_whitespace())
        .filter(|w| w.starts_with("persistent://") || w.starts_with("non-persistent://"))
        .last()
        .map(|w| w.trim_matches(|c: char| c == '"' || c == '\'').to_string())
}

/// `count` partitions, unless that is more than a scenario holds (a number read from a capture
/// sizes what the import builds: a mangled one must not make it build billions).
fn too_many_partitions(count: u64, at: &At) -> Result<u32, ImportError> {
    let most = mqviz_pulsar::scenario::MAX_PARTITIONS;
    if count > most {
        return Err(ImportError {
            file: at.file.clone(),
            line: at.line,
            message: format!("{count} partitions is more than the {most} a Pulsar scenario holds"),
        });
    }
    Ok(count as u32)
}

/// `persistent://t/ns/x-partition-3` -> (`persistent://t/ns/x`, 3).
fn split_partition(name: &str) -> (String, i64) {
    if let Some((base, index)) = name.rsplit_once("-partition-") {
        if let Ok(i) = index.parse::<i64>() {
            return (base.to_string(), i);
        }
    }
    (name.to_string(), -1)
}

pub(super) fn import(captures: &[Capture]) -> Result<Imported, ImportError> {
    let mut facts = Facts::default();
    let mut unnamed = 0;
    for c in captures {
        let docs = documents(c, &mut facts.notes)?;
        for doc in docs {
            read_document(&mut facts, c, doc, &mut unnamed)?;
        }
    }
    if facts.topics.is_empty() {
        let first = facts.notes.iter().find(|n| n.kind == NoteKind::Unused && n.text.starts_with("a JSON object"));
        let (file, line) = first.map_or((captures[0].name.clone(), 0), |n| (n.file.clone(), n.line));
        return Err(ImportError {
            file,
            line,
            message: "a JSON object that is neither topics stats nor stats-internal (no subscriptions, ledgers or cursors)"
                .into(),
        });
    }
    let mut scenario = scenario(&mut facts, captures);
    // An active consumer or hash ranges the model would not give these consumers: the run keeps
    // the model's, and the notes say where the capture differs.
    if let Err(errors) = mqviz_pulsar::scenario::parse_scenario_value(&scenario) {
        for e in &errors {
            let Some(claim) = claim_of(&e.path) else { continue };
            if let Some(sub) = scenario["subscriptions"].get_mut(claim.0).and_then(Value::as_object_mut) {
                if sub.remove(claim.1).is_some() {
                    let name = sub.get("name").and_then(Value::as_str).unwrap_or("?").to_string();
                    facts.derived(format!(
                        "subscription {name}: the capture's {} differ from what the model's broker gives these consumers in this order, so the run uses the model's: {}",
                        if claim.1 == "activeConsumers" { "active consumers" } else { "hash ranges" },
                        e.message
                    ));
                }
            }
        }
    }
    let notes = std::mem::take(&mut facts.notes);
    super::checked(scenario, notes, captures, mqviz_pulsar::scenario::parse_scenario_value, "a topic")
}

/// `$.subscriptions[i].activeConsumers[...]` or `.keyHashRanges[...]`: (i, the claim's field).
fn claim_of(path: &str) -> Option<(usize, &'static str)> {
    let rest = path.strip_prefix("$.subscriptions[")?;
    let (i, rest) = rest.split_once(']')?;
    let field = ["activeConsumers", "keyHashRanges"].into_iter().find(|f| rest.starts_with(&format!(".{f}")))?;
    Some((i.parse().ok()?, field))
}

fn read_document(facts: &mut Facts, c: &Capture, doc: Doc, unnamed: &mut usize) -> Result<(), ImportError> {
    let at = doc.at.clone();
    let obj = doc.value.as_object();
    // Partitioned stats: `metadata.partitions` and the partitions by name.
    if let (Some(meta), Some(Value::Object(parts))) = (obj.and_then(|o| o.get("metadata")), obj.and_then(|o| o.get("partitions")))
    {
        let count = meta.get("partitions").and_then(Value::as_u64).unwrap_or(parts.len() as u64);
        let count = too_many_partitions(count, &at)?;
        if parts.is_empty() {
            facts.note(
                &at,
                NoteKind::Unused,
                "partitioned stats without --per-partition: the sums hide which consumer holds what; run it with --per-partition",
            );
            return Ok(());
        }
        for (name, value) in parts {
            let (topic, index) = split_partition(name);
            too_many_partitions(index.max(-1).saturating_add(1) as u64, &at)?;
            let line = line_of(&c.text, doc.lines, &format!("\"{name}\""), doc.lines.0);
            let part_at = At { file: at.file.clone(), line };
            let t = facts.topics.entry(topic.clone()).or_default();
            t.partitioned = Some(count.max(t.partitioned.unwrap_or(0)));
            store(facts, &topic, index, value.clone(), part_at, c)?;
        }
        return Ok(());
    }
    let topic = match named_in_noise(&c.text, doc.lines.0) {
        Some(n) => n,
        None => {
            *unnamed += 1;
            let name = "imported-topic".to_string();
            if *unnamed == 1 {
                facts.derived(format!(
                    "{}: pulsar-admin's JSON does not name its topic and no command line before it does: it is called {name:?}",
                    at.file
                ));
            }
            name
        }
    };
    let (base, index) = split_partition(&topic);
    too_many_partitions(index.max(-1).saturating_add(1) as u64, &at)?;
    if index >= 0 {
        let t = facts.topics.entry(base.clone()).or_default();
        t.partitioned = Some(t.partitioned.unwrap_or(0).max(index as u32 + 1));
    }
    store(facts, &base, index, doc.value, at, c)
}

/// Files one document under its topic and partition.
fn store(facts: &mut Facts, topic: &str, index: i64, value: Value, at: At, c: &Capture) -> Result<(), ImportError> {
    let Some(kind) = kind_of(&value) else {
        facts.note(&at, NoteKind::Unused, "a JSON object that is neither topics stats nor stats-internal");
        return Ok(());
    };
    let wanted = match c.format {
        Format::PulsarStats => Some(DocKind::Stats),
        Format::PulsarStatsInternal => Some(DocKind::Internal),
        _ => None,
    };
    if wanted.is_some_and(|w| w != kind) {
        return Err(ImportError {
            file: at.file.clone(),
            line: at.line,
            message: format!(
                "--format {} was given, but this is the output of topics {}",
                c.format.name(),
                if kind == DocKind::Stats { "stats" } else { "stats-internal" }
            ),
        });
    }
    let part = facts.topics.entry(topic.to_string()).or_default().partitions.entry(index).or_default();
    let slot = if kind == DocKind::Stats { &mut part.stats } else { &mut part.internal };
    if let Some((_, first)) = slot {
        let first = format!("{}:{}", first.file, first.line);
        facts.note(&at, NoteKind::Unused, format!("a second {kind:?} of the same partition (the one at {first} is used)"));
        return Ok(());
    }
    *slot = Some((value, at));
    Ok(())
}

/// The first line in `lines` (from `from` on) that contains `needle`, else `from`.
fn line_of(text: &str, lines: (usize, usize), needle: &str, from: usize) -> usize {
    numbered_lines(text)
        .skip(from.saturating_sub(1))
        .take_while(|(n, _)| *n <= lines.1)
        .find(|(_, l)| l.contains(needle))
        .map_or(from, |(n, _)| n)
}

/// The retained ledgers of a partition as `(ledgerId, first index, entries)`, in order.
struct Ledgers {
    list: Vec<(i64, i64, i64)>,
    total: i64,
}

impl Ledgers {
    fn read(internal: &Value) -> Ledgers {
        let listed: Vec<(i64, i64)> = internal
            .get("ledgers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|l| Some((l.get("ledgerId")?.as_i64()?, l.get("entries").and_then(Value::as_i64).unwrap_or(0))))
                    .collect()
            })
            .unwrap_or_default();
        let current = internal.get("currentLedgerEntries").and_then(Value::as_i64).unwrap_or(0);
        let mut list = Vec::new();
        let mut base = 0;
        let n = listed.len();
        for (i, (id, entries)) in listed.into_iter().enumerate() {
            // The open ledger is last, with 0 entries listed: its count is currentLedgerEntries.
            let entries = if i + 1 == n && entries <= 0 { current.max(0) } else { entries.max(0) };
            list.push((id, base, entries));
            base += entries;
        }
        Ledgers { list, total: base }
    }

    /// The snapshot's entry index of upstream position `ledger:entry`: inside a retained ledger
    /// its base plus the entry; elsewhere the last retained entry before that ledger (-1: none).
    fn index(&self, ledger: i64, entry: i64) -> i64 {
        match self.list.iter().find(|(id, _, _)| *id == ledger) {
            Some((_, base, count)) => base + entry.min(count - 1),
            None => self.list.iter().filter(|(id, _, _)| *id < ledger).map(|(_, b, c)| b + c).max().unwrap_or(0) - 1,
        }
    }

    fn describe(&self) -> String {
        let parts: Vec<String> = self.list.iter().map(|(id, _, c)| format!("{id} ({c})")).collect();
        format!("ledgers {} hold entries 0..{} of the snapshot", parts.join(", "), self.total - 1)
    }
}

/// `ledger:entry`.
fn position(text: &str) -> Option<(i64, i64)> {
    let (l, e) = text.trim().split_once(':')?;
    Some((l.trim().parse().ok()?, e.trim().parse().ok()?))
}

/// `individuallyDeletedMessages` as inclusive entry ranges of the snapshot, ascending and merged.
/// Each upstream range is open-closed, `(a‥b]`: entries after `a` up to `b`. `Err` names the
/// text that is not a range.
fn acked_ranges(text: &str, ledgers: &Ledgers) -> Result<Vec<(i64, i64)>, String> {
    let body = text.trim();
    let body = body.strip_prefix('[').unwrap_or(body);
    let body = body.strip_suffix(']').unwrap_or(body);
    let mut out: Vec<(i64, i64)> = Vec::new();
    for piece in body.split('(').map(str::trim).filter(|p| !p.is_empty()) {
        let piece = piece.trim_end_matches([',', ' ']);
        let inner = piece.strip_suffix(']').ok_or_else(|| format!("({piece}"))?;
        // `‥` (Guava), `..` (a retyped paste) or `?` (an ASCII terminal).
        let (a, b) = inner
            .split_once('\u{2025}')
            .or_else(|| inner.split_once(".."))
            .or_else(|| inner.split_once('?'))
            .ok_or_else(|| format!("({piece}"))?;
        let (a, b) = (position(a).ok_or_else(|| format!("({piece}"))?, position(b).ok_or_else(|| format!("({piece}"))?);
        let (first, last) = (ledgers.index(a.0, a.1) + 1, ledgers.index(b.0, b.1));
        if first <= last {
            out.push((first, last));
        }
    }
    out.stable_sort();
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (a, b) in out {
        match merged.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    Ok(merged)
}

/// A consumer's ranges: `keyHashRangeArrays` (4.0+) or the strings `"[a, b]"` of `keyHashRanges`.
fn key_ranges(consumer: &Value) -> Option<Vec<(u64, u64)>> {
    if let Some(arrays) = consumer.get("keyHashRangeArrays").and_then(Value::as_array) {
        return Some(arrays.iter().filter_map(|r| Some((r.get(0)?.as_u64()?, r.get(1)?.as_u64()?))).collect());
    }
    let strings = consumer.get("keyHashRanges").and_then(Value::as_array)?;
    Some(
        strings
            .iter()
            .filter_map(|s| {
                let s = s.as_str()?.trim().trim_start_matches('[').trim_end_matches(']');
                let (a, b) = s.split_once(',')?;
                Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
            })
            .collect(),
    )
}

/// What one subscription looks like across the partitions.
#[derive(Default)]
struct SubFacts {
    sub_type: Option<String>,
    key_shared_mode: Option<String>,
    out_of_order: bool,
    /// Consumer names in the broker's order, first seen first.
    consumers: Vec<String>,
    ranges: BTreeMap<String, Vec<(u64, u64)>>,
    /// Per partition index: the active consumer, if stats named one.
    active: BTreeMap<i64, String>,
    /// Per partition index: (markDelete, acked ranges).
    cursors: BTreeMap<i64, (i64, Vec<(i64, i64)>)>,
    /// Per partition index: msgBacklog from stats.
    backlog: BTreeMap<i64, i64>,
}

fn scenario(facts: &mut Facts, captures: &[Capture]) -> Value {
    let mut topics = Vec::new();
    let mut consumers = Vec::new();
    let mut subscriptions = Vec::new();
    let mut used_names: BTreeSet<String> = BTreeSet::new();
    let mut key_shared = false;
    let topic_names: Vec<String> = facts.topics.keys().cloned().collect();
    for topic in &topic_names {
        let t = facts.topics.remove(topic).unwrap_or_default();
        let indexes: Vec<i64> = match t.partitioned {
            Some(n) => (0..i64::from(n)).collect(),
            None => vec![-1],
        };
        let mut entries = Vec::new();
        let mut ledgers_of: BTreeMap<i64, Ledgers> = BTreeMap::new();
        let mut subs: BTreeMap<String, SubFacts> = BTreeMap::new();
        for &i in &indexes {
            let part = t.partitions.get(&i);
            let label = if i < 0 { topic.clone() } else { format!("{topic}-partition-{i}") };
            if let Some((internal, at)) = part.and_then(|p| p.internal.as_ref()) {
                let ledgers = Ledgers::read(internal);
                facts.note(at, NoteKind::Parsed, format!("{label}: {}", ledgers.describe()));
                if let Some(Value::Object(cursors)) = internal.get("cursors") {
                    for (name, cursor) in cursors {
                        let md = cursor.get("markDeletePosition").and_then(Value::as_str).and_then(position);
                        let Some(md) = md else {
                            facts.note(at, NoteKind::Unused, format!("cursor {name}: no markDeletePosition"));
                            continue;
                        };
                        let mark_delete = ledgers.index(md.0, md.1).min(ledgers.total - 1);
                        let holes = cursor.get("individuallyDeletedMessages").and_then(Value::as_str).unwrap_or("[]");
                        let acked = match acked_ranges(holes, &ledgers) {
                            Ok(r) => r
                                .into_iter()
                                .filter(|(_, b)| *b > mark_delete)
                                .map(|(a, b)| (a.max(mark_delete + 1), b))
                                .collect(),
                            Err(bad) => {
                                facts.note(at, NoteKind::Unused, format!("cursor {name}: {} is not a range", excerpt(&bad)));
                                Vec::new()
                            }
                        };
                        let acked: Vec<(i64, i64)> = acked;
                        let acked_count: i64 = acked.iter().map(|(a, b)| b - a + 1).sum();
                        let above = match acked.len() {
                            0 => "nothing individually acked above it".to_string(),
                            1 => format!("1 individually acked range ({acked_count} entries) above it"),
                            n => format!("{n} individually acked ranges ({acked_count} entries) above it"),
                        };
                        facts.note(
                            at,
                            NoteKind::Parsed,
                            format!("{label} / {name}: markDelete {}:{} is entry {mark_delete}; {above}", md.0, md.1),
                        );
                        subs.entry(name.clone()).or_default().cursors.insert(i, (mark_delete, acked));
                    }
                }
                entries.push(ledgers.total.max(0));
                ledgers_of.insert(i, ledgers);
            } else {
                entries.push(-1);
            }
            if let Some((stats, at)) = part.and_then(|p| p.stats.as_ref()) {
                read_stats(facts, stats, at, &label, i, &mut subs, &c_text(captures, at));
            }
        }
        // Entry counts: stats-internal's, else the largest backlog stats gave (positions unknown).
        let missing: Vec<i64> = indexes.iter().zip(&entries).filter(|(_, e)| **e < 0).map(|(i, _)| *i).collect();
        for (&i, e) in indexes.iter().zip(entries.iter_mut()) {
            if *e < 0 {
                *e = subs.values().filter_map(|s| s.backlog.get(&i)).copied().max().unwrap_or(0);
            }
        }
        if !missing.is_empty() {
            facts.derived(format!(
                "{topic}: no stats-internal for {}: ledger positions are unknown, so each partition holds the largest msgBacklog of its subscriptions and each cursor's markDelete sits that subscription's backlog before the end, with no ack holes; paste topics stats-internal for the real positions",
                if t.partitioned.is_some() { format!("partitions {missing:?}") } else { "the topic".to_string() }
            ));
        }
        let mut tv = json!({"name": topic});
        if let Some(n) = t.partitioned {
            tv["partitions"] = json!(n);
        }
        if entries.iter().any(|e| *e > 0) {
            tv["entries"] = json!(entries);
        }
        topics.push(tv);
        for (name, s) in subs {
            let mut cursors = Vec::new();
            for (k, &i) in indexes.iter().enumerate() {
                let (md, acked) = match s.cursors.get(&i) {
                    Some(c) => c.clone(),
                    None => {
                        let backlog = s.backlog.get(&i).copied().unwrap_or(0);
                        ((entries[k] - backlog).max(0) - 1, Vec::new())
                    }
                };
                let mut c = json!({"markDeletePosition": md});
                if !acked.is_empty() {
                    c["individuallyDeleted"] = json!(acked.iter().map(|(a, b)| [a, b]).collect::<Vec<_>>());
                }
                cursors.push(c);
            }
            let (sv, cs) = subscription(facts, topic, &name, &s, &indexes, &mut used_names);
            key_shared |= s.sub_type.as_deref() == Some("Key_Shared");
            let mut sv = sv;
            sv["cursors"] = json!(cursors);
            subscriptions.push(sv);
            consumers.extend(cs);
        }
    }
    if key_shared {
        facts.derived("the captures do not say which keys the backlog carries: its entries have no key, so Key_Shared gives them all to the consumer that owns NONE_KEY's hash; set topics[].backlogKey (\"k-{i%16}\") to spread them".to_string());
    }
    let first_topic = topic_names.first().cloned().unwrap_or_else(|| "imported-topic".into());
    facts.derived(format!(
        "one idle producer, \"producer\", on {first_topic} with no sends: the captures' rates are not replayed; send from it (the page's send form, or add sends) to see new messages arrive"
    ));
    super::scenario_of(
        "pulsar",
        format!("Imported: topic {first_topic}"),
        captures,
        json!({
        "topics": topics,
        "producers": [{"name": "producer", "topic": first_topic, "sends": []}],
        "consumers": consumers,
        "subscriptions": subscriptions,
        }),
    )
}

/// The text of the capture a note points into.
fn c_text(captures: &[Capture], at: &At) -> String {
    captures.iter().find(|c| c.name == at.file).map(|c| c.text.clone()).unwrap_or_default()
}

/// Reads one partition's `topics stats` into the subscriptions' facts.
fn read_stats(
    facts: &mut Facts,
    stats: &Value,
    at: &At,
    label: &str,
    index: i64,
    subs: &mut BTreeMap<String, SubFacts>,
    text: &str,
) {
    let Some(Value::Object(list)) = stats.get("subscriptions") else {
        facts.note(at, NoteKind::Parsed, format!("{label}: no subscriptions"));
        return;
    };
    for (name, sub) in list {
        let line = line_of(text, (at.line, usize::MAX), &format!("\"{name}\" :"), at.line);
        let sat = At { file: at.file.clone(), line };
        if sub.get("isDurable").and_then(Value::as_bool) == Some(false) {
            facts.note(
                &sat,
                NoteKind::Unused,
                format!("{label} / {name}: a non-durable subscription (a Reader): not part of the snapshot"),
            );
            continue;
        }
        let s = subs.entry(name.clone()).or_default();
        let ty = sub.get("type").and_then(Value::as_str).unwrap_or("None").to_string();
        if ty != "None" {
            s.sub_type.get_or_insert(ty.clone());
        }
        if let Some(m) = sub.get("keySharedMode").and_then(Value::as_str) {
            s.key_shared_mode.get_or_insert(m.to_string());
        }
        s.out_of_order |= sub.get("allowOutOfOrderDelivery").and_then(Value::as_bool).unwrap_or(false);
        if let Some(b) = sub.get("msgBacklog").and_then(Value::as_i64) {
            s.backlog.insert(index, b);
        }
        let mut names = Vec::new();
        for c in sub.get("consumers").and_then(Value::as_array).into_iter().flatten() {
            let Some(cname) = c.get("consumerName").and_then(Value::as_str) else { continue };
            names.push(cname.to_string());
            if !s.consumers.iter().any(|x| x == cname) {
                s.consumers.push(cname.to_string());
            }
            if let Some(r) = key_ranges(c) {
                s.ranges.entry(cname.to_string()).or_insert(r);
            }
        }
        let active = sub.get("activeConsumerName").and_then(Value::as_str);
        if let Some(a) = active {
            s.active.insert(index, a.to_string());
        }
        let text = format!(
            "{label} / {name}: {ty}{}, {} consumer{} ({}){}, msgBacklog {}",
            s.key_shared_mode.as_deref().map(|m| format!(" {m}")).unwrap_or_default(),
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", "),
            active.map(|a| format!(", active {a}")).unwrap_or_default(),
            sub.get("msgBacklog").map(ToString::to_string).unwrap_or_else(|| "?".into())
        );
        facts.note(&sat, NoteKind::Parsed, text);
        if ty == "None" {
            facts.note(
                &sat,
                NoteKind::Parsed,
                format!("{label} / {name}: type None: no consumer attached since the broker loaded the topic"),
            );
        }
    }
}

/// The scenario's subscription (without cursors) and its consumers.
fn subscription(
    facts: &mut Facts,
    topic: &str,
    name: &str,
    s: &SubFacts,
    indexes: &[i64],
    used: &mut BTreeSet<String>,
) -> (Value, Vec<Value>) {
    let mut sv = json!({"topic": topic, "name": name});
    let Some(ty) = s.sub_type.clone() else {
        if !s.consumers.is_empty() {
            facts.derived(format!("{topic} / {name}: stats give no type: its consumers are left out"));
        }
        return (sv, Vec::new());
    };
    let sticky = s.key_shared_mode.as_deref() == Some("STICKY");
    // Consumer names repeat (the Java client's are 5 random characters): the scenario's are unique.
    let mut renamed: Vec<(String, String)> = Vec::new();
    for c in &s.consumers {
        let mut n = c.clone();
        let mut k = 2;
        while used.contains(&n) {
            n = format!("{c}-{k}");
            k += 1;
        }
        if &n != c {
            facts.derived(format!("consumer name {c:?} is taken: this one is {n:?} in the scenario"));
        }
        used.insert(n.clone());
        renamed.push((c.clone(), n));
    }
    let scenario_name = |c: &str| renamed.iter().find(|(o, _)| o == c).map_or(c.to_string(), |(_, n)| n.clone());
    let mut consumers = Vec::new();
    for (original, n) in &renamed {
        let mut cv = json!({"name": n, "topic": topic, "subscription": name, "subscriptionType": ty});
        if ty == "Key_Shared" {
            let mut policy = json!({"mode": if sticky { "STICKY" } else { "AUTO_SPLIT" }});
            if s.out_of_order {
                policy["allowOutOfOrderDelivery"] = json!(true);
            }
            if sticky {
                let ranges: Vec<[u64; 2]> =
                    s.ranges.get(original).into_iter().flatten().map(|&(a, b)| [a, b.min(65_535)]).collect();
                policy["ranges"] = json!(ranges);
            }
            cv["keySharedPolicy"] = policy;
        }
        consumers.push(cv);
    }
    sv["connected"] = json!(renamed.iter().map(|(_, n)| n).collect::<Vec<_>>());
    if matches!(ty.as_str(), "Failover" | "Exclusive") && !s.active.is_empty() {
        let active: Vec<Value> =
            indexes.iter().map(|i| s.active.get(i).map_or(Value::Null, |a| json!(scenario_name(a)))).collect();
        sv["activeConsumers"] = json!(active);
    }
    if ty == "Key_Shared" && !sticky && !s.ranges.is_empty() {
        let max = s.ranges.values().flatten().map(|&(_, b)| b).max().unwrap_or(0);
        if max > 65_536 {
            facts.derived(format!(
                "{topic} / {name}: the hash ranges run to {max}: a broker before 4.0, whose consistent-hashing ring spans [0, 2^31-1]; the model runs 4.0's ring over [1, 65535] (PIP-379), so each consumer's ranges in the run are what 4.0 gives these names, not the capture's"
            ));
        } else {
            let mut claims = Map::new();
            for (original, ranges) in &s.ranges {
                let r: Vec<[u64; 2]> = ranges.iter().map(|&(a, b)| [a, b.min(65_535)]).collect();
                claims.insert(scenario_name(original), json!(r));
            }
            sv["keyHashRanges"] = Value::Object(claims);
        }
    }
    (sv, consumers)
}
