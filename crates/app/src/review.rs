//! `mqviz review`: the verdict on a proposed change. The scenario's timeline holds the change (a
//! rolling deploy of a new subscription, members added or removed, an assignor or strategy
//! switched, partitions added); the review runs it and says what moved and when the group was
//! stable again, which partitions or queues had no owner and for how long, and which messages
//! were lost, duplicated or left unconsumed, each with the model's own reason and the events
//! behind it, plus the model's warnings (a subscription inconsistency and its consequence).
//!
//! Nothing here decides broker behaviour. Owners come from the neutral `View` (`moves`), counts
//! from `Totals`, each message's fate from `Simulation::message`, and reasons from the model's
//! report, so the review says what the page and `mqviz run` say of the same run. The browser
//! build has no `Simulation::report` (ARCHITECTURE.md, "The page carries only what it shows"): the
//! page's comparison passes `registry::report_of`, which only its split part reaches.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::history::Entered;
use crate::moves::{self, Gap, Move};
use mqviz_engine::sort::CollectSorted;
use mqviz_engine::Millis;
use mqviz_model::{Fate, PartitionId, Simulation, Totals};

/// One message the review lists: where it is, for which group, why, and the log events behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub message: String,
    pub group: String,
    pub reason: String,
    pub events: Vec<u64>,
}

#[derive(Clone, Debug)]
pub struct Review {
    pub name: String,
    pub until: Millis,
    /// When the change under review begins (the timeline's first entry), if the caller knows.
    pub change_at: Option<Millis>,
    /// What `change_at` is, as the text says it: "the timeline's first entry" (the CLI), "your
    /// first edit" (the page).
    pub change_label: &'static str,
    pub moves: Vec<Move>,
    pub gaps: Vec<Gap>,
    /// The last instant an owner changed (`None`: nothing moved).
    pub settled_at: Option<Millis>,
    /// Partitions or queues of consumed topics with no owner at the end.
    pub unowned_at_end: Vec<String>,
    /// Messages a group will never consume (skipped, filtered, truncated, dead-lettered).
    pub lost: Vec<Finding>,
    pub duplicated: Vec<Finding>,
    /// Messages not consumed by the end that may still be (no owner, behind, retrying).
    pub unconsumed: Vec<Finding>,
    /// The model's warnings: (title, text).
    pub warnings: Vec<(String, String)>,
    pub totals: Totals,
    /// How far owner changes were read (less than `until` for a very long log).
    pub moves_read_until: Millis,
}

/// Runs `start` (a scenario at t=0, its timeline holding the change, which begins at
/// `change_at`) to `until` and reviews it.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub fn review(start: &dyn Simulation, until: Millis, change_at: Option<Millis>) -> Review {
    review_with(start, &[], until, change_at, &|sim| sim.report())
}

/// The same review of `start` with `commands` entered on its way (the page's edits are the
/// change), reading reasons from `report`.
pub fn review_with(
    start: &dyn Simulation,
    commands: &[Entered],
    until: Millis,
    change_at: Option<Millis>,
    report: &dyn Fn(&dyn Simulation) -> Value,
) -> Review {
    // One run: the moves are read on the way, then the run goes on to `until` (it stops early
    // only for a very long log).
    let (moves_seen, mut sim, mut history) = moves::compute_run(start, commands, until);
    let (moves, gaps) = moves_seen.at(until);
    // An edit the model refuses is left out, as the page left it out when it was entered.
    let _ = history.advance(&mut sim, until);
    let view = sim.view();
    let end_owners = moves::owners(&view);
    let labels: BTreeMap<PartitionId, String> =
        view.topics.iter().flat_map(|t| t.partitions.iter().map(|p| (p.id, p.label.clone()))).collect_map();
    // A topic is consumed when one of its partitions has an owner at the end or had one.
    let topic_of = |label: &str| label.rsplit_once(' ').map(|(t, _)| t.to_string()).unwrap_or_default();
    let consumed_topics: Vec<String> = end_owners
        .iter()
        .filter(|(_, o)| o.as_str() != "nobody")
        .map(|(p, _)| topic_of(p))
        .chain(moves.iter().map(|m| topic_of(&m.partition)))
        .collect();
    let unowned_at_end = end_owners
        .iter()
        .filter(|(p, o)| o.as_str() == "nobody" && consumed_topics.contains(&topic_of(p)))
        .map(|(p, _)| p.clone())
        .collect();
    let settled_at = moves.iter().map(|m| m.at).chain(gaps.iter().filter_map(|g| g.to)).max();
    let report = report(&*sim);
    let (mut lost, mut unconsumed) = (Vec::new(), Vec::new());
    for (entry, group) in undelivered_entries(&report) {
        let Some(f) = finding(&*sim, &labels, entry, group, &["reason"]) else { continue };
        let fate = entry["msg"].as_u64().and_then(|m| sim.message(m as _)).map(|m| m.fate);
        match fate {
            Some(Fate::Skipped | Fate::DeadLettered) => lost.push(f),
            _ => unconsumed.push(f),
        }
    }
    let duplicated = duplicate_entries(&report)
        .into_iter()
        .filter_map(|(entry, group)| finding(&*sim, &labels, entry, group, &["reason", "cause"]))
        .collect();
    Review {
        name: sim.name().to_string(),
        until,
        change_at,
        change_label: "the timeline's first entry",
        moves,
        gaps,
        settled_at,
        unowned_at_end,
        lost,
        duplicated,
        unconsumed,
        warnings: sim.warnings(),
        totals: sim.totals(),
        moves_read_until: moves_seen.read_until,
    }
}

/// When the change in a scenario begins: its timeline's first entry.
pub fn change_at(scenario: &Value) -> Option<Millis> {
    scenario["timeline"].as_array()?.iter().filter_map(|a| a["at"].as_u64()).min()
}

/// The report's lists of messages not delivered to a group, with the group's key: RocketMQ and
/// Kafka list `unconsumed` by `group`, Pulsar `messages.neverDelivered` and `deadLettered` by
/// `subscription`.
fn undelivered_entries(report: &Value) -> Vec<(&Value, &str)> {
    let lists = [
        (&report["unconsumed"], "group"),
        (&report["messages"]["neverDelivered"], "subscription"),
        (&report["messages"]["deadLettered"], "subscription"),
    ];
    lists.into_iter().flat_map(|(list, key)| list.as_array().into_iter().flatten().map(move |e| (e, key))).collect()
}

/// Messages a group consumed more than once (RocketMQ, Kafka) or that were delivered again
/// (Pulsar `redelivered`).
fn duplicate_entries(report: &Value) -> Vec<(&Value, &str)> {
    let lists = [(&report["duplicates"], "group"), (&report["messages"]["redelivered"], "subscription")];
    lists.into_iter().flat_map(|(list, key)| list.as_array().into_iter().flatten().map(move |e| (e, key))).collect()
}

fn finding(
    sim: &dyn Simulation,
    labels: &BTreeMap<PartitionId, String>,
    entry: &Value,
    group_key: &str,
    reason_keys: &[&str],
) -> Option<Finding> {
    let msg = entry["msg"].as_u64()?;
    let view = sim.message(msg as _);
    let message = match &view {
        Some(m) => match (m.partition.and_then(|p| labels.get(&p)), m.offset) {
            // A partition labelled as its topic (a non-partitioned Pulsar topic) is named once.
            (Some(p), Some(o)) if m.topic.ends_with(p.as_str()) => format!("{} offset {o}", m.topic),
            (Some(p), Some(o)) => format!("{} {p} offset {o}", m.topic),
            _ => m.topic.clone(),
        },
        None => format!("message {msg}"),
    };
    // Pulsar tells a redelivered message's story step by step instead of one reason.
    let story = entry["story"].as_array();
    let told = || story.map(|steps| steps.iter().filter_map(|s| s["what"].as_str()).collect::<Vec<_>>().join("; "));
    let reason = reason_keys.iter().find_map(|k| entry[*k].as_str().map(str::to_string)).or_else(told).unwrap_or_default();
    let events = match (&entry["events"], story) {
        (Value::Array(a), _) => a.iter().filter_map(Value::as_u64).collect(),
        (_, Some(steps)) => steps.iter().filter_map(|s| s["event"].as_u64()).collect(),
        _ => entry["event"].as_u64().into_iter().collect(),
    };
    Some(Finding { message, group: entry[group_key].as_str().unwrap_or("").to_string(), reason, events })
}

impl Review {
    /// True when the change is risky: something is lost or duplicated, or a partition or queue
    /// of a consumed topic has no owner at the end. `mqviz review` exits 1 then.
    pub fn risky(&self) -> bool {
        self.lost_count() > 0 || self.duplicated_count() > 0 || !self.unowned_at_end.is_empty()
    }

    /// Messages a group will never process: lost (skipped, filtered, truncated) and
    /// dead-lettered, by the model's counts, or as many as are listed if more.
    pub fn lost_count(&self) -> u64 {
        (self.totals.lost + self.totals.dead_lettered).max(self.lost.len() as u64)
    }

    pub fn duplicated_count(&self) -> u64 {
        self.totals.duplicated.max(self.duplicated.len() as u64)
    }

    pub fn verdict(&self) -> String {
        if !self.risky() {
            return format!("SAFE: nothing lost or duplicated, and every {} has an owner at t={}.", self.noun(), self.until);
        }
        let mut risks = Vec::new();
        if self.lost_count() > 0 {
            risks.push(format!("{} lost", self.lost_count()));
        }
        if self.duplicated_count() > 0 {
            risks.push(format!("{} duplicated", self.duplicated_count()));
        }
        if !self.unowned_at_end.is_empty() {
            risks.push(format!("{} without an owner at the end", self.unowned_at_end.len()));
        }
        format!("RISK: {}.", risks.join(", "))
    }

    fn noun(&self) -> &'static str {
        "partition or queue"
    }

    fn movement(&self) -> String {
        let change = match self.change_at {
            Some(t) => {
                let before = self.moves.iter().filter(|m| m.at < t).count();
                format!("The change begins at t={t} ({}); {before} of the moves below came before it. ", self.change_label)
            }
            None => String::new(),
        };
        change
            + &match self.settled_at {
                None => "Nothing moved: every owner stayed the same.".to_string(),
                Some(t) if self.gaps.iter().any(|g| g.to.is_none()) => {
                    format!("{}; not stable by t={} (the last change at t={t}).", moves_text(self.moves.len()), self.until)
                }
                Some(t) => format!("{}; stable again from t={t}.", moves_text(self.moves.len())),
            }
    }

    /// Plain text for a terminal.
    pub fn text(&self) -> String {
        let mut s = format!("Review of {:?} at t={}\n{}\n\n{}\n", self.name, self.until, self.verdict(), self.movement());
        for m in &self.moves {
            s += &format!("  t={} {}: {} -> {}{}\n", m.at, m.partition, m.from, m.to, unowned_text(m));
        }
        if self.moves_read_until < self.until {
            s += &format!("  (owner changes read up to t={}: the log is longer than the review scans)\n", self.moves_read_until);
        }
        if !self.gaps.is_empty() {
            s += "\nWithout an owner:\n";
            for g in &self.gaps {
                s += &format!("  {} {}\n", g.partition, gap_text(g, self.until));
            }
        }
        for (title, list, total) in self.lists() {
            if list.is_empty() {
                continue;
            }
            s += &format!("\n{title} ({total}):\n");
            for f in list {
                s += &format!("  {}{}: {}{}\n", f.message, group_text(&f.group), f.reason, events_text(&f.events));
            }
        }
        for (title, text) in &self.warnings {
            s += &format!("\nWarning: {title}: {text}\n");
        }
        s
    }

    /// Markdown to paste into a pull request or a change ticket.
    pub fn markdown(&self) -> String {
        let mut s = format!("### mqviz review: {}\n\n**{}**\n\n{}\n", self.name, self.verdict(), self.movement());
        if !self.moves.is_empty() {
            s += "\n| t (ms) | partition | from | to |\n|---:|---|---|---|\n";
            for m in &self.moves {
                s += &format!("| {} | {} | {} | {}{} |\n", m.at, cell(&m.partition), cell(&m.from), cell(&m.to), unowned_text(m));
            }
        }
        if !self.gaps.is_empty() {
            s += "\n**Without an owner**\n\n";
            for g in &self.gaps {
                s += &format!("- {} {}\n", cell(&g.partition), gap_text(g, self.until));
            }
        }
        for (title, list, total) in self.lists() {
            if list.is_empty() {
                continue;
            }
            s += &format!("\n**{title}** ({total})\n\n");
            for f in list {
                s +=
                    &format!("- `{}`{}: {}{}\n", f.message, cell(&group_text(&f.group)), cell(&f.reason), events_text(&f.events));
            }
        }
        for (title, text) in &self.warnings {
            s += &format!("\n> **Warning: {}** {}\n", cell(title), cell(text));
        }
        s
    }

    pub fn json(&self) -> Value {
        let findings = |l: &[Finding]| {
            l.iter()
                .map(|f| json!({"message": f.message, "group": f.group, "reason": f.reason, "events": f.events}))
                .collect::<Vec<_>>()
        };
        json!({
            "name": self.name,
            "until": self.until,
            "changeAt": self.change_at,
            "verdict": self.verdict(),
            "risky": self.risky(),
            "settledAt": self.settled_at,
            "moves": self.moves.iter().map(|m| json!({"at": m.at, "partition": m.partition, "from": m.from, "to": m.to, "unownedSince": m.unowned_since})).collect::<Vec<_>>(),
            "withoutOwner": self.gaps.iter().map(|g| json!({"partition": g.partition, "from": g.from, "to": g.to})).collect::<Vec<_>>(),
            "unownedAtEnd": self.unowned_at_end,
            "lostCount": self.lost_count(),
            "lost": findings(&self.lost),
            "duplicatedCount": self.duplicated_count(),
            "duplicated": findings(&self.duplicated),
            "unconsumedCount": self.totals.unconsumed,
            "unconsumed": findings(&self.unconsumed),
            "warnings": self.warnings.iter().map(|(t, x)| json!({"title": t, "text": x})).collect::<Vec<_>>(),
        })
    }

    /// The message lists with their titles and the model's full counts (the lists may be capped).
    fn lists(&self) -> [(&'static str, &[Finding], u64); 3] {
        [
            ("Lost (skipped, filtered, truncated or dead-lettered)", &self.lost[..], self.lost_count()),
            ("Duplicated or delivered again", &self.duplicated[..], self.duplicated_count()),
            ("Not consumed by the end", &self.unconsumed[..], self.totals.unconsumed.max(self.unconsumed.len() as u64)),
        ]
    }
}

/// ` [group]`, or nothing when the report does not say (Pulsar's per-message lists).
fn group_text(group: &str) -> String {
    if group.is_empty() {
        String::new()
    } else {
        format!(" [{group}]")
    }
}

fn moves_text(n: usize) -> String {
    if n == 1 {
        "1 move".into()
    } else {
        format!("{n} moves")
    }
}

fn unowned_text(m: &Move) -> String {
    match m.unowned_since {
        Some(since) if m.to != "nobody" => format!(" (no owner for {} ms)", m.at - since),
        _ => String::new(),
    }
}

fn gap_text(g: &Gap, until: Millis) -> String {
    match g.to {
        Some(to) => format!("from t={} to t={} ({} ms)", g.from, to, to - g.from),
        None => format!("from t={} to the end (at least {} ms)", g.from, until.saturating_sub(g.from)),
    }
}

fn events_text(events: &[u64]) -> String {
    if events.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = events.iter().take(6).map(|e| format!("#{e}")).collect();
    format!(" (events {}{})", shown.join(", "), if events.len() > 6 { ", …" } else { "" })
}

/// Text safe inside a Markdown table cell or list item.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
