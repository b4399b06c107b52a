//! `kafka-consumer-groups.sh` output (`ConsumerGroupCommand`): `--describe` (offsets),
//! `--describe --members [--verbose]` and `--describe --state [--verbose]`, from Kafka 0.10 to
//! 4.x, read into a Kafka snapshot scenario (`docs/scenario-format.md`, "Snapshots (Kafka)").
//!
//! The tool prints with `printf` formats that begin with `\n` and pad each column to its longest
//! value, so rows are read by the header's column names rather than by position: a header line
//! sets the layout for the rows that follow (`--all-groups` repeats it per group). What real
//! captures hold besides rows (the tool's stderr warnings, shell prompts, blank lines) is
//! explained or listed as unused with its line number.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{excerpt, numbered_lines, Capture, Format, ImportError, Imported, Note, NoteKind};
use mqviz_kafka::scenario::MAX_PARTITIONS;

/// `(topic, partition)`.
type Tp = (String, u32);

/// The columns of one header, as printed.
#[derive(Clone, Debug, PartialEq)]
enum Layout {
    /// `--describe`: the column names in order (GROUP from 2.3, OWNER in 0.10.0-0.10.1,
    /// LEADER-EPOCH with 4.x `--verbose`).
    Describe(Vec<String>),
    /// `--members`: whether GROUP-INSTANCE-ID is printed, and what follows #PARTITIONS.
    Members { instance: bool, tail: MembersTail },
    /// `--state`: how many columns follow #MEMBERS (4.x `--verbose`: GROUP-EPOCH and
    /// TARGET-ASSIGNMENT-EPOCH).
    State { extra: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MembersTail {
    None,
    /// `--verbose` up to 3.9: one ASSIGNMENT column, which may hold spaces.
    Assignment,
    /// 4.x (KIP-1099): CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT.
    Epochs,
}

impl Layout {
    fn from_header(line: &str) -> Option<Layout> {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let has = |c: &str| cols.contains(&c);
        if has("CURRENT-OFFSET") && has("LOG-END-OFFSET") && has("PARTITION") {
            return Some(Layout::Describe(cols.iter().map(|c| c.to_string()).collect()));
        }
        if has("GROUP") && has("CONSUMER-ID") && has("#PARTITIONS") {
            let tail = if has("CURRENT-ASSIGNMENT") {
                MembersTail::Epochs
            } else if has("ASSIGNMENT") {
                MembersTail::Assignment
            } else {
                MembersTail::None
            };
            return Some(Layout::Members { instance: has("GROUP-INSTANCE-ID"), tail });
        }
        if has("GROUP") && has("COORDINATOR") && has("STATE") {
            let after = cols.iter().position(|c| *c == "#MEMBERS").map_or(0, |i| cols.len() - i - 1);
            return Some(Layout::State { extra: after });
        }
        None
    }

    fn format(&self) -> Format {
        match self {
            Layout::Describe(_) => Format::KafkaDescribe,
            Layout::Members { .. } => Format::KafkaMembers,
            Layout::State { .. } => Format::KafkaState,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Member {
    client_id: Option<String>,
    host: Option<String>,
    instance: Option<String>,
    partitions: BTreeSet<Tp>,
    /// 4.x KIP-1099: CURRENT-EPOCH, TARGET-EPOCH and TARGET-ASSIGNMENT (a member whose current
    /// epoch is below its target's is still reconciling).
    epoch: Option<u32>,
    target_epoch: Option<u32>,
    target: Option<BTreeSet<Tp>>,
}

#[derive(Clone, Debug, Default)]
struct Group {
    committed: BTreeMap<Tp, u64>,
    /// Members by CONSUMER-ID, in order of first appearance, and where each one is.
    members: Vec<(String, Member)>,
    member_at: BTreeMap<String, usize>,
    /// Partitions listed with `-` as their owner.
    unowned: BTreeSet<Tp>,
    state: Option<String>,
    /// GROUP-EPOCH (4.x `--state --verbose`).
    epoch: Option<u32>,
    strategy: Option<String>,
    coordinator: Option<String>,
    /// `--members` rows whose assignment lost its topic names (3.8-3.9): partition counts.
    nameless: Vec<(String, usize, String)>,
}

impl Group {
    fn member(&mut self, id: &str) -> &mut Member {
        let i = match self.member_at.get(id) {
            Some(&i) => i,
            None => {
                self.members.push((id.to_string(), Member::default()));
                self.member_at.insert(id.to_string(), self.members.len() - 1);
                self.members.len() - 1
            }
        };
        &mut self.members[i].1
    }
}

/// Everything the captures said, before it becomes a scenario.
#[derive(Default)]
struct Facts {
    groups: BTreeMap<String, Group>,
    group_order: Vec<String>,
    /// Log end offsets.
    ends: BTreeMap<Tp, u64>,
    /// Every partition a capture named.
    seen: BTreeSet<Tp>,
    notes: Vec<Note>,
    /// Describe rows without a GROUP column (before 2.3): their group is named later.
    groupless: bool,
}

impl Facts {
    fn group(&mut self, name: &str) -> &mut Group {
        if !self.groups.contains_key(name) {
            self.group_order.push(name.to_string());
        }
        self.groups.entry(name.to_string()).or_default()
    }
}

/// Where a row is read: for notes.
struct At<'a> {
    file: &'a str,
    line: usize,
}

impl Facts {
    fn note(&mut self, at: &At, kind: NoteKind, text: impl Into<String>) {
        self.notes.push(Note { kind, file: at.file.to_string(), line: at.line, text: text.into() });
    }
}

/// The group a row of this name belongs to when the capture printed no GROUP column.
const UNNAMED_GROUP: &str = "\u{0}unnamed";

pub(super) fn import(captures: &[Capture]) -> Result<Imported, ImportError> {
    let mut facts = Facts::default();
    for c in captures {
        read_capture(c, &mut facts)?;
    }
    name_the_unnamed_group(&mut facts);
    let scenario = scenario(&mut facts, captures);
    super::checked(scenario, facts.notes, captures, mqviz_kafka::scenario::parse_scenario_value, "a cluster the Kafka")
}

fn read_capture(c: &Capture, facts: &mut Facts) -> Result<(), ImportError> {
    let mut layout: Option<Layout> = None;
    let mut first_text: Option<(usize, String)> = None;
    let mut rows = 0usize;
    for (n, raw) in numbered_lines(&c.text) {
        let at = At { file: &c.name, line: n };
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line.contains('\u{0}') || line.chars().filter(|ch| ch.is_control() && *ch != '\t').count() > 0 {
            if layout.is_none() {
                return Err(ImportError {
                    file: c.name.clone(),
                    line: n,
                    message: "binary data, not the text an admin tool prints".into(),
                });
            }
            facts.note(&at, NoteKind::Unused, "control characters: not a row");
            continue;
        }
        first_text.get_or_insert((n, excerpt(line)));
        if let Some(l) = Layout::from_header(line) {
            if c.format != Format::Auto && c.format != l.format() {
                return Err(ImportError {
                    file: c.name.clone(),
                    line: n,
                    message: format!(
                        "this is the header of {}, not of {} (leave out --format, or give the right one)",
                        l.format().name(),
                        c.format.name()
                    ),
                });
            }
            layout = Some(l);
            continue;
        }
        if read_warning(line, &at, facts) {
            continue;
        }
        match &layout {
            None => facts.note(&at, NoteKind::Unused, format!("before any table header: {:?}", excerpt(line))),
            Some(l) => {
                rows += 1;
                match l {
                    Layout::Describe(cols) => read_describe_row(cols, line, &at, facts),
                    Layout::Members { instance, tail } => read_members_row(*instance, *tail, line, &at, facts),
                    Layout::State { extra } => read_state_row(*extra, line, &at, facts),
                }
            }
        }
    }
    if layout.is_none() {
        let (line, text) = first_text.unwrap_or((1, String::new()));
        let message = if text.is_empty() {
            "empty: nothing to import".to_string()
        } else {
            format!(
                "not recognised: expected the header of kafka-consumer-groups.sh --describe (GROUP TOPIC PARTITION CURRENT-OFFSET ...), --members (GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS) or --state (GROUP COORDINATOR (ID) ...), found {text:?}"
            )
        };
        // The tool's stderr alone (a group with no members prints no table) is a capture too.
        if rows > 0 || text.is_empty() || !text_is_only_warnings(&c.text) {
            return Err(ImportError { file: c.name.clone(), line, message });
        }
    }
    Ok(())
}

fn text_is_only_warnings(text: &str) -> bool {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).all(|l| warning_group(l).is_some())
}

/// `'<group>'` in one of the tool's warnings, and what it means.
fn warning_group(line: &str) -> Option<(String, &'static str)> {
    let meaning = if line.ends_with("has no active members.") {
        "has no active members: it is Empty (committed offsets only)"
    } else if line.ends_with("is rebalancing.") {
        "was rebalancing when captured: its members' partitions may be about to move"
    } else if line.ends_with("does not exist.") {
        "does not exist on this cluster"
    } else {
        return None;
    };
    let start = line.find('\'')? + 1;
    let end = start + line[start..].rfind('\'')?;
    Some((line[start..end].to_string(), meaning))
}

fn read_warning(line: &str, at: &At, facts: &mut Facts) -> bool {
    let Some((group, meaning)) = warning_group(line) else { return false };
    facts.note(at, NoteKind::Parsed, format!("group {group:?} {meaning}"));
    if meaning.starts_with("has no active members") {
        facts.group(&group).state.get_or_insert_with(|| "Empty".into());
    } else if meaning.starts_with("was rebalancing") {
        facts.group(&group).state.get_or_insert_with(|| "PreparingRebalance".into());
    }
    true
}

/// An offset: Kafka's are signed 64-bit, so larger numbers are not offsets.
fn number(cell: &str) -> Option<u64> {
    cell.parse::<u64>().ok().filter(|n| *n <= i64::MAX as u64)
}

/// A row read by column names; the last column takes the rest of the line (CLIENT-ID may hold
/// spaces). A CONSUMER-ID run into its HOST (`id/10.0.0.1`) is split at the `/`.
fn cells<'a>(cols: &'a [String], line: &str) -> Option<BTreeMap<&'a str, String>> {
    let mut tokens: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if let Some(ci) = cols.iter().position(|c| c == "CONSUMER-ID") {
        let glued = tokens.get(ci).and_then(|t| t.find('/').filter(|i| *i > 0).map(|i| (t[..i].to_string(), t[i..].to_string())));
        if let Some((id, host)) = glued {
            if cols.get(ci + 1).is_some_and(|c| c == "HOST") {
                tokens[ci] = id;
                tokens.insert(ci + 1, host);
            }
        }
    }
    if tokens.len() < cols.len() {
        return None;
    }
    let last = cols.len() - 1;
    let mut out = BTreeMap::new();
    for (i, c) in cols.iter().enumerate() {
        let value = if i == last { tokens[i..].join(" ") } else { tokens[i].clone() };
        out.insert(c.as_str(), value);
    }
    Some(out)
}

fn read_describe_row(cols: &[String], line: &str, at: &At, facts: &mut Facts) {
    let Some(cells) = cells(cols, line) else {
        facts.note(at, NoteKind::Unused, format!("a cut row: fewer cells than the {} columns of its header", cols.len()));
        return;
    };
    let get = |c: &str| cells.get(c).map(String::as_str).filter(|v| *v != "-");
    let group = match get("GROUP") {
        Some(g) => g.to_string(),
        None if cols.iter().any(|c| c == "GROUP") => {
            facts.note(at, NoteKind::Unused, "`-` in GROUP: no group to put the row in");
            return;
        }
        None => {
            facts.groupless = true;
            UNNAMED_GROUP.to_string()
        }
    };
    // 0.10.0-0.10.1 print OWNER as `clientId_/host`.
    let (consumer, host, client) = match get("OWNER") {
        Some(owner) => match owner.split_once("_/") {
            Some((client, host)) => (Some(owner.to_string()), Some(format!("/{host}")), Some(client.to_string())),
            None => (Some(owner.to_string()), None, Some(owner.to_string())),
        },
        None => (get("CONSUMER-ID").map(str::to_string), get("HOST").map(str::to_string), get("CLIENT-ID").map(str::to_string)),
    };
    let (topic, partition) = (get("TOPIC"), get("PARTITION"));
    if topic.is_none() && partition.is_none() {
        match consumer {
            Some(id) => {
                let m = facts.group(&group).member(&id);
                m.client_id = m.client_id.take().or(client.clone());
                m.host = m.host.take().or(host);
                let client = client.map(|c| format!(" (client {c})")).unwrap_or_default();
                facts.note(at, NoteKind::Parsed, format!("member {id}{client} owns no partitions"));
            }
            None => facts.note(at, NoteKind::Unused, "a row of `-` only: nothing to import"),
        }
        return;
    }
    let (Some(topic), Some(p)) = (topic, partition.and_then(|p| p.parse::<u32>().ok())) else {
        facts.note(at, NoteKind::Unused, format!("TOPIC and a numeric PARTITION are needed: {:?}", excerpt(line)));
        return;
    };
    if u64::from(p) >= MAX_PARTITIONS {
        facts.note(
            at,
            NoteKind::Unused,
            format!("partition {p} is beyond the {MAX_PARTITIONS} partitions a topic may have here"),
        );
        return;
    }
    let tp: Tp = (topic.to_string(), p);
    facts.seen.insert(tp.clone());
    let mut said = Vec::new();
    let committed = get("CURRENT-OFFSET").and_then(number);
    let end = get("LOG-END-OFFSET").and_then(number);
    let cell = |c: &str| cells.get(c).map(String::as_str).unwrap_or("-");
    match (committed, cell("CURRENT-OFFSET")) {
        (Some(c), _) => said.push(format!("committed {c}")),
        (None, "-") => said.push("`-` in CURRENT-OFFSET: the group has no committed offset here".into()),
        (None, v) => said.push(format!("CURRENT-OFFSET {v:?} is not an offset: taken as none committed")),
    }
    match (end, cell("LOG-END-OFFSET")) {
        (Some(e), _) => said.push(format!("log end {e}")),
        (None, "-") => said.push("`-` in LOG-END-OFFSET: the log end is unknown".into()),
        (None, v) => said.push(format!("LOG-END-OFFSET {v:?} is not an offset: taken as unknown")),
    }
    if let (Some(c), Some(e), Some(lag)) = (committed, end, get("LAG").and_then(|l| l.parse::<i64>().ok())) {
        if e as i64 - c as i64 != lag {
            said.push(format!("LAG {lag} is not log end minus committed ({}): read at different instants", e as i64 - c as i64));
        }
    }
    if let Some(e) = end {
        let known = facts.ends.entry(tp.clone()).or_insert(e);
        *known = (*known).max(e);
    }
    let g = facts.group(&group);
    if let Some(c) = committed {
        g.committed.insert(tp.clone(), c);
    }
    match consumer {
        Some(id) => {
            said.push(format!("owned by {id}{}", client.as_ref().map(|c| format!(" (client {c})")).unwrap_or_default()));
            let m = g.member(&id);
            m.partitions.insert(tp.clone());
            m.client_id = m.client_id.take().or(client);
            m.host = m.host.take().or(host);
        }
        None => {
            said.push("`-` in CONSUMER-ID: this partition has no owner".into());
            g.unowned.insert(tp.clone());
        }
    }
    facts.note(at, NoteKind::Parsed, format!("{}-{}: {}", tp.0, tp.1, said.join(", ")));
}

/// `topic1(0,1), topic2(0)` (up to 3.7), `(0,1), (0)` (3.8-3.9: topics lost), `t1:0,1;t2:3`
/// (4.x), or `-`. `Err` says what is wrong; `Ok((partitions, nameless))` lists the partitions
/// with topics, and the partition lists whose topic the tool did not print.
fn parse_assignment(text: &str) -> Result<(BTreeSet<Tp>, Vec<Vec<u32>>), String> {
    let text = text.trim();
    let mut named = BTreeSet::new();
    let mut nameless = Vec::new();
    if text.is_empty() || text == "-" {
        return Ok((named, nameless));
    }
    let numbers = |list: &str| -> Result<Vec<u32>, String> {
        list.split(',')
            .map(|p| {
                p.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|n| u64::from(*n) < MAX_PARTITIONS)
                    .ok_or_else(|| format!("{p:?} is not a partition number"))
            })
            .collect()
    };
    if !text.contains('(') && text.contains(':') {
        for part in text.split(';').filter(|s| !s.trim().is_empty()) {
            let (topic, list) = part.trim().rsplit_once(':').ok_or_else(|| format!("expected topic:partitions in {part:?}"))?;
            for p in numbers(list)? {
                named.insert((topic.to_string(), p));
            }
        }
        return Ok((named, nameless));
    }
    let mut rest = text;
    while !rest.is_empty() {
        let open = rest.find('(').ok_or_else(|| format!("expected topic(partitions) at {rest:?}"))?;
        let close = open + rest[open..].find(')').ok_or_else(|| format!("a ( without ) in {rest:?}"))?;
        let topic = rest[..open].trim().trim_start_matches(',').trim();
        if topic.contains(char::is_whitespace) {
            return Err(format!("{topic:?} is not a topic name"));
        }
        let list = numbers(&rest[open + 1..close])?;
        if topic.is_empty() {
            nameless.push(list);
        } else {
            named.extend(list.into_iter().map(|p| (topic.to_string(), p)));
        }
        rest = rest[close + 1..].trim_start().trim_start_matches(',').trim_start();
    }
    Ok((named, nameless))
}

fn read_members_row(instance: bool, tail: MembersTail, line: &str, at: &At, facts: &mut Facts) {
    let mut t: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    // A CONSUMER-ID run into its HOST.
    if !instance {
        if let Some(i) = t.get(1).and_then(|x| x.find('/').filter(|i| *i > 0)) {
            let host = t[1][i..].to_string();
            t[1].truncate(i);
            t.insert(2, host);
        }
    }
    let host_at = if instance { 3 } else { 2 };
    if t.len() < host_at + 3 {
        facts.note(at, NoteKind::Unused, "a cut row: fewer cells than GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS");
        return;
    }
    if t.iter().all(|x| x == "-") {
        facts.note(at, NoteKind::Unused, "a row of `-` only: nothing to import");
        return;
    }
    // CLIENT-ID may hold spaces: find #PARTITIONS from the right.
    let fixed_tail = match tail {
        MembersTail::None => 0,
        MembersTail::Epochs => 4,
        MembersTail::Assignment => usize::MAX,
    };
    let count_at = if fixed_tail == usize::MAX {
        (host_at + 2..t.len())
            .find(|&k| t[k].bytes().all(|b| b.is_ascii_digit()) && parse_assignment(&t[k + 1..].join(" ")).is_ok())
    } else {
        t.len().checked_sub(1 + fixed_tail).filter(|k| *k > host_at && t[*k].bytes().all(|b| b.is_ascii_digit()))
    };
    let Some(count_at) = count_at else {
        facts.note(at, NoteKind::Unused, format!("no #PARTITIONS count where the header puts it: {:?}", excerpt(line)));
        return;
    };
    let group = t[0].clone();
    let id = t[1].clone();
    let instance_id = instance.then(|| t[2].clone()).filter(|x| x != "-" && !x.is_empty());
    let host = Some(t[host_at].clone()).filter(|x| x != "-");
    let client = Some(t[host_at + 1..count_at].join(" ")).filter(|x| x != "-" && !x.is_empty());
    let count: usize = t[count_at].parse().unwrap_or(0);
    let assignment = match tail {
        MembersTail::None => None,
        MembersTail::Assignment => Some(t[count_at + 1..].join(" ")),
        MembersTail::Epochs => t.get(count_at + 2).cloned(),
    };
    if id == "-" {
        facts.note(at, NoteKind::Unused, "`-` in CONSUMER-ID: no member to read");
        return;
    }
    let mut said = vec![format!("member {id}")];
    if let Some(c) = &client {
        said.push(format!("client {c}"));
    }
    if let Some(i) = &instance_id {
        said.push(format!("static (group.instance.id {i})"));
    }
    said.push(partitions(count));
    let mut parsed = None;
    if let Some(a) = &assignment {
        match parse_assignment(a) {
            Ok(p) => parsed = Some(p),
            Err(why) => said.push(format!("assignment not read: {why}")),
        }
    }
    // KIP-1099: CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT.
    let epochs = (tail == MembersTail::Epochs)
        .then(|| {
            let epoch = t.get(count_at + 1)?.parse::<u32>().ok()?;
            let target_epoch = t.get(count_at + 3)?.parse::<u32>().ok()?;
            let target = parse_assignment(t.get(count_at + 4)?).ok()?.0;
            Some((epoch, target_epoch, target))
        })
        .flatten();
    let g = facts.group(&group);
    let m = g.member(&id);
    m.client_id = m.client_id.take().or(client);
    m.host = m.host.take().or(host);
    m.instance = m.instance.take().or(instance_id);
    if let Some((epoch, target_epoch, target)) = epochs.clone() {
        m.epoch = Some(epoch);
        m.target_epoch = Some(target_epoch);
        m.target = Some(target);
    }
    if let Some((named, nameless)) = parsed {
        if !named.is_empty() {
            said.push(format!("owns {}", named.iter().map(|(t, p)| format!("{t}-{p}")).collect::<Vec<_>>().join(", ")));
        }
        if let Some((epoch, target_epoch, target)) = &epochs {
            let list = |p: &BTreeSet<Tp>| {
                if p.is_empty() {
                    "nothing".to_string()
                } else {
                    p.iter().map(|(t, p)| format!("{t}-{p}")).collect::<Vec<_>>().join(", ")
                }
            };
            if epoch < target_epoch {
                said.push(format!("reconciling: at epoch {epoch}, the target's is {target_epoch}; its target {}", list(target)));
            } else if *target != named {
                let missing: BTreeSet<Tp> = target.difference(&named).cloned().collect();
                said.push(format!(
                    "at the target epoch {epoch}, waiting for {} (not yet released by the member that holds it)",
                    list(&missing)
                ));
            } else {
                said.push(format!("at the target (epoch {epoch})"));
            }
        }
        m.partitions.extend(named.iter().cloned());
        if !nameless.is_empty() {
            let n: usize = nameless.iter().map(Vec::len).sum();
            said.push(format!("{} printed without their topics (Kafka 3.8-3.9): taken from --describe", partitions(n)));
            g.nameless.push((id.clone(), n, at.file.to_string()));
        }
        facts.seen.extend(named);
    }
    facts.note(at, NoteKind::Parsed, said.join(", "));
}

fn partitions(n: usize) -> String {
    if n == 1 {
        "1 partition".into()
    } else {
        format!("{n} partitions")
    }
}

fn read_state_row(extra: usize, line: &str, at: &At, facts: &mut Facts) {
    let t: Vec<&str> = line.split_whitespace().collect();
    // GROUP, host:port, (id), [strategy], STATE, #MEMBERS, extra...
    if t.len() < 5 + extra || !t.get(2).is_some_and(|x| x.starts_with('(')) {
        facts.note(at, NoteKind::Unused, format!("not a --state row (GROUP host:port (id) ...): {:?}", excerpt(line)));
        return;
    }
    let end = t.len() - extra;
    let (state, members) = (t[end - 2], t[end - 1]);
    let strategy = t[3..end - 2].join(" ");
    let group = t[0].to_string();
    let coordinator = format!("{} {}", t[1], t[2]);
    let g = facts.group(&group);
    g.state = Some(state.to_string());
    g.coordinator = Some(coordinator.clone());
    // GROUP-EPOCH is the first column after #MEMBERS; a classic group prints `-` there.
    g.epoch = (extra > 0).then(|| t[end].parse::<u32>().ok()).flatten().filter(|e| (1..=i32::MAX as u32).contains(e));
    if !strategy.is_empty() {
        g.strategy = Some(strategy.clone());
    }
    let strategy = if strategy.is_empty() { "none".to_string() } else { strategy };
    facts.note(
        at,
        NoteKind::Parsed,
        format!("group {group}: {state}, {members} members, assignment strategy {strategy}, coordinator {coordinator}"),
    );
}

fn name_the_unnamed_group(facts: &mut Facts) {
    let Some(rows) = facts.groups.remove(UNNAMED_GROUP) else { return };
    facts.group_order.retain(|g| g != UNNAMED_GROUP);
    let named: Vec<String> = facts.group_order.clone();
    let name = if named.len() == 1 { named[0].clone() } else { "imported-group".to_string() };
    let why = if named.len() == 1 {
        format!("the --describe capture prints no GROUP column (Kafka before 2.3): its rows are taken as group {name:?}, named by another capture")
    } else {
        format!("the --describe capture prints no GROUP column (Kafka before 2.3): its group is named {name:?}; rename it")
    };
    facts.notes.push(Note { kind: NoteKind::Derived, file: String::new(), line: 0, text: why });
    let g = facts.group(&name);
    g.committed.extend(rows.committed);
    g.unowned.extend(rows.unowned);
    for (id, m) in rows.members {
        let into = g.member(&id);
        into.partitions.extend(m.partitions);
        into.client_id = into.client_id.take().or(m.client_id);
        into.host = into.host.take().or(m.host);
    }
}

fn derived(facts: &mut Facts, text: String) {
    facts.notes.push(Note { kind: NoteKind::Derived, file: String::new(), line: 0, text });
}

/// The scenario the facts describe, deriving what the captures lack (each derivation noted).
fn scenario(facts: &mut Facts, captures: &[Capture]) -> Value {
    // Topics: partition counts from the highest partition named.
    let mut topics: BTreeMap<String, u32> = BTreeMap::new();
    let all_tps: BTreeSet<Tp> =
        facts.seen.iter().cloned().chain(facts.groups.values().flat_map(|g| g.committed.keys().cloned())).collect();
    for (t, p) in &all_tps {
        let n = topics.entry(t.clone()).or_insert(0);
        *n = (*n).max(p + 1);
    }
    let mut listed_of: BTreeMap<&str, u32> = BTreeMap::new();
    for (t, _) in &all_tps {
        *listed_of.entry(t.as_str()).or_insert(0) += 1;
    }
    let mut topic_values = Vec::new();
    for (name, count) in &topics {
        let listed = listed_of.get(name.as_str()).copied().unwrap_or(0);
        if listed < *count {
            derived(
                facts,
                format!("topic {name}: the captures name {listed} of its partitions 0..{}; the others start empty", count - 1),
            );
        }
        let mut ends = Vec::new();
        for p in 0..*count {
            let tp = (name.clone(), p);
            let committed_max = facts.groups.values().filter_map(|g| g.committed.get(&tp)).max().copied();
            let end = match (facts.ends.get(&tp), committed_max) {
                (Some(e), Some(c)) if c > *e => {
                    derived(facts, format!("{name}-{p}: committed {c} is past the log end {e} as printed (read at different instants); the log end is taken as {c}"));
                    c
                }
                (Some(e), _) => *e,
                (None, Some(c)) => {
                    derived(facts, format!("{name}-{p}: no log end in the captures; taken as the committed offset {c} (no lag)"));
                    c
                }
                (None, None) => 0,
            };
            ends.push(end);
        }
        topic_values.push(json!({"name": name, "partitions": count, "logEndOffsets": ends}));
    }
    let mut groups = Vec::new();
    let order = facts.group_order.clone();
    let mut names_used: BTreeSet<String> = BTreeSet::new();
    for gname in order {
        let Some(g) = facts.groups.get(&gname).cloned() else { continue };
        let group_topics: BTreeSet<String> =
            g.committed.keys().chain(g.members.iter().flat_map(|(_, m)| m.partitions.iter())).map(|(t, _)| t.clone()).collect();
        let mut o = Map::new();
        o.insert("name".into(), json!(gname));
        let strategy = g.strategy.clone();
        let consumer_protocol = strategy.as_deref() == Some("uniform");
        if consumer_protocol {
            o.insert("protocol".into(), json!("consumer"));
            o.insert("remoteAssignor".into(), json!("uniform"));
        } else if let Some(s) = strategy.as_deref() {
            match mqviz_kafka::assignor::ClientAssignor::from_name(s) {
                Some(a) => {
                    o.insert("assignors".into(), json!([a.name()]));
                }
                None => derived(facts, format!("group {gname}: assignment strategy {s:?} is not one the model has; its members use the default [range, cooperative-sticky]")),
            }
        } else if !g.members.is_empty() {
            derived(facts, format!("group {gname}: no --state capture names the assignment strategy; its members use the default [range, cooperative-sticky] (eager range)"));
        }
        if !g.committed.is_empty() {
            let committed: Map<String, Value> = g.committed.iter().map(|((t, p), c)| (format!("{t}-{p}"), json!(c))).collect();
            o.insert("committed".into(), Value::Object(committed));
        }
        let state = g.state.clone();
        let empty = matches!(state.as_deref(), Some("Empty" | "Dead"));
        if empty && !g.members.is_empty() {
            derived(
                facts,
                format!("group {gname} is {} yet captures list members: they are left out", state.as_deref().unwrap_or("")),
            );
        }
        let members = if empty { Vec::new() } else { g.members.clone() };
        for (id, n, file) in &g.nameless {
            let known = g.members.iter().find(|(m, _)| m == id).map_or(0, |(_, m)| m.partitions.len());
            if known < *n {
                facts.notes.push(Note {
                    kind: NoteKind::Derived,
                    file: file.clone(),
                    line: 0,
                    text: format!("member {id}: {n} partitions were printed without topics and no --describe names them; give the group's --describe too"),
                });
            }
        }
        // KIP-1099 columns say where each member stands: the reconciliation continues from there.
        let epochs_known = consumer_protocol && members.iter().any(|(_, m)| m.target.is_some());
        if let Some(s) = state.as_deref().filter(|s| !matches!(*s, "Stable" | "Empty" | "Dead")) {
            if !members.is_empty() && !epochs_known {
                derived(facts, format!("group {gname} was {s} when captured; the snapshot starts it Stable with the partitions each member owned then"));
            }
        }
        let mut consumers = Vec::new();
        if !members.is_empty() {
            let subscribe: Vec<&String> = group_topics.iter().collect();
            derived(
                facts,
                format!(
                    "group {gname}: subscriptions are not in the captures; every member subscribes to the group's topics ({}); edit them where members differ",
                    subscribe.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                ),
            );
            // The group epoch: --state --verbose's GROUP-EPOCH, else the highest TARGET-EPOCH.
            let target_epoch = members.iter().filter_map(|(_, m)| m.target_epoch).max();
            let group_epoch = g.epoch.or(target_epoch);
            let reconciling: Vec<&str> = members
                .iter()
                .filter(|(_, m)| {
                    m.epoch.zip(group_epoch).is_some_and(|(e, g)| e < g) || m.target.as_ref().is_some_and(|t| *t != m.partitions)
                })
                .map(|(id, m)| m.client_id.as_deref().unwrap_or(id.as_str()))
                .collect();
            match (consumer_protocol, group_epoch) {
                (true, Some(e)) => {
                    o.insert("generation".into(), json!(e));
                    let source = if g.epoch.is_some() { "the group epoch" } else { "the members' TARGET-EPOCH (no --state --verbose)" };
                    if reconciling.is_empty() {
                        derived(facts, format!("group {gname} uses the consumer protocol (KIP-848): every member and the target are at {source} {e}"));
                    } else {
                        derived(facts, format!(
                            "group {gname} uses the consumer protocol (KIP-848) at {source} {e}; {} still reconciling ({}): each keeps its epoch and CURRENT-ASSIGNMENT and continues toward its TARGET-ASSIGNMENT",
                            if reconciling.len() == 1 { "1 member is".to_string() } else { format!("{} members are", reconciling.len()) },
                            reconciling.join(", ")
                        ));
                    }
                }
                (true, None) => derived(facts, format!("group {gname} uses the consumer protocol (KIP-848): no --state --verbose capture gives its group epoch; the snapshot uses epoch 1")),
                (false, _) => derived(facts, format!("group {gname}: the captures print no generation; the snapshot uses generation 1")),
            }
            for (id, m) in &members {
                let client = m.client_id.clone().unwrap_or_else(|| id.clone());
                let mut name = client.clone();
                let mut k = 2;
                while names_used.contains(&name) {
                    name = format!("{client}#{k}");
                    k += 1;
                }
                names_used.insert(name.clone());
                let mut c = Map::new();
                if name != client {
                    c.insert("name".into(), json!(name));
                }
                c.insert("clientId".into(), json!(client));
                if let Some(i) = &m.instance {
                    c.insert("groupInstanceId".into(), json!(i));
                }
                c.insert("subscribe".into(), json!(subscribe));
                c.insert("memberId".into(), json!(id));
                let assigned: Vec<String> = m.partitions.iter().map(|(t, p)| format!("{t}-{p}")).collect();
                c.insert("assigned".into(), json!(assigned));
                if consumer_protocol {
                    if let (Some(me), Some(ge)) = (m.epoch, group_epoch) {
                        if me < ge {
                            c.insert("memberEpoch".into(), json!(me));
                        }
                    }
                    if let Some(t) = m.target.as_ref().filter(|t| **t != m.partitions) {
                        c.insert("target".into(), json!(t.iter().map(|(t, p)| format!("{t}-{p}")).collect::<Vec<_>>()));
                    }
                }
                consumers.push(Value::Object(c));
            }
        }
        o.insert("consumers".into(), json!(consumers));
        groups.push(Value::Object(o));
    }
    derived(
        facts,
        "one idle producer, \"producer\", with no sends: the captures give no rates; send from it (the page's send form, or add sends) to see new records arrive".into(),
    );
    derived(facts, "one broker, broker-0, leads every partition: the captures do not say which broker leads what".into());
    let name = match facts.group_order.as_slice() {
        [one] => format!("Imported: group {one}"),
        more => format!("Imported: {} groups", more.len()),
    };
    super::scenario_of(
        "kafka",
        name,
        captures,
        json!({
        "brokers": [{"name": "broker-0"}],
        "topics": topic_values,
        "producers": [{"id": "producer"}],
        "groups": groups,
        }),
    )
}
