//! Guided tours: data in `static/tours/*.json`. Each step anchors to an event of the run by a
//! predicate over the log (never a hard-coded time), says one sentence, and names what to
//! highlight. Steps resolve in order: a step's event is the `nth` match at or after the previous
//! step's event, so a tour follows the story even when timings shift.
//!
//! ```json
//! {"format": "mqviz-tour/1", "preset": "seed-same-topic-different-tags.json", "title": "...",
//!  "steps": [{"when": {"kind": "heartbeat", "text": "overwritten by \"TagB\"", "nth": 1},
//!             "caption": "ConsumerB's heartbeat overwrites ...", "highlight": "broker:broker-a"}]}
//! ```
//! `highlight` names a canvas element (`broker:<name>`, `consumer:<name>`, `producer:<name>`,
//! `partition:<topic>:<label>`) or a panel (`panel:<data-testid>`).

use serde_json::Value;

use mqviz_engine::json_path::{parse_json, Errors, Obj, PathError};
use mqviz_engine::Millis;
use mqviz_model::Simulation;

pub const FORMAT: &str = "mqviz-tour/1";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct When {
    /// The log category (`Simulation::log_kind`), if it matters.
    pub kind: Option<String>,
    /// A piece of the entry's text.
    pub text: String,
    /// Which match, counting from the previous step's event (1 = the first).
    pub nth: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub when: When,
    pub caption: String,
    pub highlight: Option<String>,
    /// What the caption says is on screen at its moment, checked against the model by
    /// `check_shows` (tests only; the page carries it along unread):
    /// `{"owns": {"<consumer>": ["<label>" | "<topic>:<label>", ...]}, "warnings": <n>,
    ///   "warning": "<text in one warning>", "line": "<text in a box's state line>",
    ///   "sent" | "consumed" | "lost" | "unconsumed" | "duplicated" | "deadLettered": <n>}`
    pub shows: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tour {
    pub preset: String,
    pub title: String,
    pub steps: Vec<Step>,
}

/// A step pinned to its event in one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pinned {
    pub event: usize,
    pub at: Millis,
}

fn read_step(v: &Value, path: &str, e: &mut Errors) -> Option<Step> {
    let mut o = Obj::new(v, path, e)?;
    let when = o.required("when", e).and_then(|w| {
        let wp = format!("{path}.when");
        let mut wo = Obj::new(w, &wp, e)?;
        let kind = wo.str("kind", e).map(str::to_string);
        let text = wo.req_str("text", e).map(str::to_string);
        let nth = wo.u64_in("nth", 1, 100_000, e).unwrap_or(1) as usize;
        wo.finish(e);
        Some(When { kind, text: text?, nth })
    });
    let caption = o.req_str("caption", e).map(str::to_string);
    let highlight = o.str("highlight", e).map(str::to_string);
    let shows = o.get("shows").cloned();
    o.finish(e);
    Some(Step { when: when?, caption: caption?, highlight, shows })
}

/// Reads a tour; every problem is reported with its JSON path.
pub fn parse_tour(text: &str) -> Result<Tour, Vec<PathError>> {
    let v = parse_json(text).map_err(|e| vec![e])?;
    let mut e = Errors::default();
    let tour = (|| {
        let mut o = Obj::new(&v, "$", &mut e)?;
        match o.req_str("format", &mut e) {
            Some(FORMAT) | None => {}
            Some(other) => e.push("$.format", format!("unsupported format {other:?} (expected {FORMAT:?})")),
        }
        let preset = o.req_str("preset", &mut e).map(str::to_string);
        let title = o.req_str("title", &mut e).map(str::to_string);
        let steps: Vec<Step> = o.array("steps", &mut e).into_iter().filter_map(|(p, s)| read_step(s, &p, &mut e)).collect();
        o.finish(&mut e);
        if steps.is_empty() {
            e.push("$.steps", "a tour needs at least one step");
        }
        Some(Tour { preset: preset?, title: title?, steps })
    })();
    match tour {
        Some(t) if e.is_empty() => Ok(t),
        _ => Err(if e.list.is_empty() { vec![PathError { path: "$".into(), message: "invalid tour".into() }] } else { e.list }),
    }
}

impl When {
    fn matches(&self, sim: &dyn Simulation, i: usize) -> bool {
        self.kind.as_deref().is_none_or(|k| sim.log_kind(i) == k) && sim.log_text(i).contains(&self.text)
    }
}

impl Tour {
    /// Pins every step to its event in `sim`'s log (a run far enough to contain them all).
    /// `Err` names the first step whose predicate matches nothing.
    pub fn pin(&self, sim: &dyn Simulation) -> Result<Vec<Pinned>, String> {
        let mut out = Vec::new();
        let mut from = 0;
        for (k, step) in self.steps.iter().enumerate() {
            let mut seen = 0;
            let found = (from..sim.log_len()).find(|&i| {
                if step.when.matches(sim, i) {
                    seen += 1;
                }
                seen == step.when.nth
            });
            let Some(i) = found else {
                return Err(format!(
                    "step {} of tour {:?}: no event matches {:?} (kind {:?}, match #{}) after event #{from}",
                    k + 1,
                    self.title,
                    step.when.text,
                    step.when.kind,
                    step.when.nth
                ));
            };
            out.push(Pinned { event: i, at: sim.log_time(i) });
            from = i;
        }
        Ok(out)
    }
}

/// Checks a step's `shows` against `sim` at the step's moment (after its instant, as the page
/// shows it). Each claim that does not hold is one line saying what is there instead.
pub fn check_shows(shows: &Value, sim: &dyn Simulation) -> Vec<String> {
    let mut wrong = Vec::new();
    let Some(claims) = shows.as_object() else { return vec!["shows: expected an object".into()] };
    let view = sim.view();
    let totals = sim.totals();
    let warnings = sim.warnings();
    for (key, want) in claims {
        match key.as_str() {
            "owns" => {
                let Some(owners) = want.as_object() else {
                    wrong.push("owns: expected {consumer: [labels]}".into());
                    continue;
                };
                for (consumer, labels) in owners {
                    let Some(c) = view.consumers.iter().position(|c| c.name == *consumer) else {
                        wrong.push(format!("owns: no consumer {consumer:?}"));
                        continue;
                    };
                    // Retry and dead-letter topics are drawn apart: a caption speaks of the others.
                    let mut owned: Vec<(String, String)> = view
                        .topics
                        .iter()
                        .filter(|t| !t.internal)
                        .flat_map(|t| t.partitions.iter().map(move |p| (t, p)))
                        .filter(|(_, p)| p.owners.contains(&(c as u32)))
                        .map(|(t, p)| (p.label.clone(), format!("{}:{}", t.name, p.label)))
                        .collect();
                    let want: Vec<&str> = labels.as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                    let all = owned.len() == want.len();
                    owned.retain(|(label, full)| !want.iter().any(|w| w == label || w == full));
                    if !owned.is_empty() || !all {
                        let drawn: Vec<String> = view
                            .topics
                            .iter()
                            .filter(|t| !t.internal)
                            .flat_map(|t| t.partitions.iter().map(move |p| (t, p)))
                            .filter(|(_, p)| p.owners.contains(&(c as u32)))
                            .map(|(t, p)| format!("{}:{}", t.name, p.label))
                            .collect();
                        wrong.push(format!("owns: {consumer} owns {drawn:?}, not {want:?}"));
                    }
                }
            }
            "warnings" => {
                if want.as_u64() != Some(warnings.len() as u64) {
                    wrong.push(format!("warnings: {} shown ({warnings:?}), not {want}", warnings.len()));
                }
            }
            "warning" => {
                let piece = want.as_str().unwrap_or_default();
                if !warnings.iter().any(|(a, b)| a.contains(piece) || b.contains(piece)) {
                    wrong.push(format!("warning: none says {piece:?} ({warnings:?})"));
                }
            }
            "line" => {
                let piece = want.as_str().unwrap_or_default();
                let lines = view.brokers.iter().flat_map(|b| &b.lines).chain(view.groups.iter().flat_map(|g| &g.lines));
                let lines = lines.chain(view.consumers.iter().flat_map(|c| &c.lines));
                if !lines.clone().any(|l| l.text.contains(piece)) {
                    let drawn: Vec<&str> = lines.map(|l| l.text.as_str()).collect();
                    wrong.push(format!("line: no state line says {piece:?} ({drawn:?})"));
                }
            }
            count => {
                let n = match count {
                    "sent" => totals.produced,
                    "consumed" => totals.consumed,
                    "lost" => totals.lost,
                    "unconsumed" => totals.unconsumed,
                    "duplicated" => totals.duplicated,
                    "deadLettered" => totals.dead_lettered,
                    other => {
                        wrong.push(format!("shows: unknown claim {other:?}"));
                        continue;
                    }
                };
                if want.as_u64() != Some(n) {
                    wrong.push(format!("{count}: {n}, not {want}"));
                }
            }
        }
    }
    wrong
}

/// The tours compiled in, one per file in `static/tours/`.
pub const TOURS: &[(&str, &str)] = &[
    ("seed-same-topic-different-tags.json", include_str!("../../../static/tours/seed-same-topic-different-tags.json")),
    (
        "seed-same-topic-different-tags-a-wins.json",
        include_str!("../../../static/tours/seed-same-topic-different-tags-a-wins.json"),
    ),
    ("seed-different-topics-same-tag.json", include_str!("../../../static/tours/seed-different-topics-same-tag.json")),
    ("consistent-group.json", include_str!("../../../static/tours/consistent-group.json")),
    ("sql92-filter.json", include_str!("../../../static/tours/sql92-filter.json")),
    ("filter-manager-heartbeat-cost.json", include_str!("../../../static/tours/filter-manager-heartbeat-cost.json")),
    ("kafka-eager-join.json", include_str!("../../../static/tours/kafka-eager-join.json")),
    ("kafka-cooperative-join.json", include_str!("../../../static/tours/kafka-cooperative-join.json")),
    ("kafka-fetch-states.json", include_str!("../../../static/tours/kafka-fetch-states.json")),
    ("kafka-new-group-latest.json", include_str!("../../../static/tours/kafka-new-group-latest.json")),
    ("kafka-crash-redelivery.json", include_str!("../../../static/tours/kafka-crash-redelivery.json")),
    ("kafka-static-membership.json", include_str!("../../../static/tours/kafka-static-membership.json")),
    ("kafka-kip848-reconciliation.json", include_str!("../../../static/tours/kafka-kip848-reconciliation.json")),
    ("pulsar-scalable-children-blocked.json", include_str!("../../../static/tours/pulsar-scalable-children-blocked.json")),
    ("pulsar-scalable-post-split-backlog.json", include_str!("../../../static/tours/pulsar-scalable-post-split-backlog.json")),
    ("pulsar-scalable-two-splits.json", include_str!("../../../static/tours/pulsar-scalable-two-splits.json")),
    (
        "pulsar-scalable-sealed-not-redelivered.json",
        include_str!("../../../static/tours/pulsar-scalable-sealed-not-redelivered.json"),
    ),
    ("pulsar-key-shared-join.json", include_str!("../../../static/tours/pulsar-key-shared-join.json")),
    ("pulsar-failover.json", include_str!("../../../static/tours/pulsar-failover.json")),
    ("pulsar-shared-dlq.json", include_str!("../../../static/tours/pulsar-shared-dlq.json")),
];

/// The tour of a preset file, if it has one.
pub fn for_preset(preset: &str) -> Option<Tour> {
    text_of(preset).and_then(|text| parse_tour(text).ok())
}

/// The text of a preset file's tour, if it has one.
pub fn text_of(preset: &str) -> Option<&'static str> {
    TOURS.iter().find(|(f, _)| *f == preset).map(|(_, text)| *text)
}

/// Whether a caption names the canvas element `key` (`consumer:<name>`, `broker:<name>`,
/// `producer:<name>`, `partition:<topic>:<label>`): the page keeps a caption off what its text
/// names, not only off its highlight, so that the reader sees what the sentence points at.
/// - The element's name (a partition's label) as a word of its own: "c1" names c1, not c11.
/// - A partition by its number after "queue(s)" or "partition(s)": "queues 2 and 3", "queues
///   0–2", "partition 5".
/// - Every broker when the text speaks of "the broker".
pub fn names(caption: &str, key: &str) -> bool {
    let Some((kind, rest)) = key.split_once(':') else { return false };
    let name = if kind == "partition" { rest.rsplit(':').next().unwrap_or(rest) } else { rest };
    if !name.is_empty() && word_positions(caption, name).next().is_some() {
        return true;
    }
    match kind {
        "broker" => word_positions(caption, "broker").chain(word_positions(caption, "brokers")).next().is_some(),
        "partition" => label_number(name).is_some_and(|n| numbered(caption).contains(&n)),
        _ => false,
    }
}

/// Where `word` stands in `text` with no letter, digit, `-` or `_` touching it.
fn word_positions<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let part_of_name = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    text.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// The number of a label that is letters and a number: `q2`, `p11`, `seg 4`.
fn label_number(label: &str) -> Option<u64> {
    let digits = label.trim_start_matches(|c: char| c.is_alphabetic() || c == ' ');
    (!digits.is_empty() && digits.len() < label.len()).then(|| digits.parse().ok()).flatten()
}

/// The numbers a text gives after "queue(s)" or "partition(s)": "queues 2 and 3" is [2, 3],
/// "partitions 0–2" is [0, 1, 2], "queue 1, 4 or 5" is [1, 4, 5].
fn numbered(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for word in ["queue", "queues", "partition", "partitions"] {
        for at in word_positions(text, word) {
            let mut rest = &text[at + word.len()..];
            let mut last: Option<u64> = None;
            loop {
                rest = rest.trim_start();
                let len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
                if len > 0 && len < 10 {
                    let n: u64 = rest[..len].parse().unwrap_or(0);
                    match last {
                        // A range: every number from the one before.
                        Some(from) if from < n && n - from <= 64 => out.extend(from + 1..=n),
                        _ => out.push(n),
                    }
                    rest = &rest[len..];
                    last = None;
                    let joined = rest.trim_start();
                    if let Some(r) =
                        joined.strip_prefix('–').or_else(|| joined.strip_prefix('-')).or_else(|| joined.strip_prefix("to "))
                    {
                        last = Some(n);
                        rest = r;
                        continue;
                    }
                    match [",", "and ", "or "].iter().find_map(|sep| joined.strip_prefix(sep)) {
                        Some(r) => rest = r,
                        None => break,
                    }
                } else {
                    break;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::by_file;
    use crate::registry::run;

    #[test]
    fn every_tour_parses_and_every_step_matches_an_event_of_its_preset() {
        let files = crate::presets_tests::static_json_files("tours");
        let mut listed: Vec<String> = TOURS.iter().map(|(f, _)| f.to_string()).collect();
        listed.sort();
        assert_eq!(files, listed, "static/tours and TOURS disagree");
        for (file, text) in TOURS {
            let tour = parse_tour(text).unwrap_or_else(|e| panic!("{file}: {e:?}"));
            assert_eq!(&tour.preset, file, "{file} names another preset");
            let preset = by_file(&tour.preset).unwrap_or_else(|| panic!("{file}: no preset {}", tour.preset));
            let sim = run(preset.text).unwrap();
            let pinned = tour.pin(&*sim).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(pinned.windows(2).all(|w| w[0].event <= w[1].event), "{file}: steps out of order");
            for s in &tour.steps {
                assert!(!s.caption.is_empty() && s.caption.len() <= 240, "{file}: a caption is one sentence");
            }
        }
    }

    /// Words whose truth depends on where the page happens to place a caption or a panel.
    const PLACEMENT_WORDS: &[&str] = &["below", "above the", "on the left", "on the right", "to the left", "to the right"];
    /// Verbs that say who owns what: a caption using one states ownership the canvas draws, so
    /// its step must say which (`shows.owns`), and the test checks it.
    const OWNERSHIP_VERBS: &[&str] = &[" gets ", " owns ", " take over", " takes over", " takes all"];

    /// Every caption of every tour is true at its step's moment, as the page shows it (after the
    /// step's instant): the owners it names own what it says, "no warnings" is said only when
    /// there is none, the counts it gives are the model's, and no caption speaks of where a
    /// panel happens to be placed.
    #[test]
    fn every_caption_is_true_at_its_moment() {
        let mut wrong: Vec<String> = Vec::new();
        let mut checked = 0;
        for (file, text) in TOURS {
            let tour = parse_tour(text).unwrap();
            let preset = by_file(&tour.preset).unwrap();
            let pinned = tour.pin(&*run(preset.text).unwrap()).unwrap();
            let loaded = crate::registry::load(preset.text).unwrap();
            let mut sim = loaded.sim;
            let mut history = crate::history::History::replay(loaded.edits);
            for (k, (step, p)) in tour.steps.iter().zip(&pinned).enumerate() {
                history.advance(&mut sim, p.at).unwrap();
                let at = format!("{file} step {} at {} ms: {:?}", k + 1, p.at, step.caption);
                let caption = format!(" {} ", step.caption.to_lowercase());
                for w in PLACEMENT_WORDS.iter().filter(|w| caption.contains(**w)) {
                    wrong.push(format!("{at}\n    says {w:?}: the page places captions and panels by the room there is"));
                }
                if caption.contains("no warning") && !sim.warnings().is_empty() {
                    wrong.push(format!("{at}\n    says no warnings beside {:?}", sim.warnings()));
                }
                let claims_owners = step.shows.as_ref().is_some_and(|s| s.get("owns").is_some());
                if let Some(v) = OWNERSHIP_VERBS.iter().find(|v| caption.contains(**v)).filter(|_| !claims_owners) {
                    wrong.push(format!("{at}\n    says {v:?} but its step does not say who owns what (shows.owns)"));
                }
                if let Some(shows) = &step.shows {
                    wrong.extend(check_shows(shows, &*sim).into_iter().map(|w| format!("{at}\n    {w}")));
                }
                checked += 1;
            }
        }
        assert!(wrong.is_empty(), "{} of {checked} captions are not true at their moment:\n{}", wrong.len(), wrong.join("\n"));
    }

    #[test]
    fn a_bad_tour_is_refused_with_paths() {
        let e = parse_tour(r#"{"format": "mqviz-tour/1", "preset": "x", "title": "t", "steps": [{"when": {}, "caption": 1}]}"#)
            .unwrap_err();
        let text: Vec<String> = e.iter().map(|x| x.to_string()).collect();
        assert!(text.iter().any(|t| t.starts_with("$.steps[0].when.text")), "{text:?}");
        assert!(text.iter().any(|t| t.starts_with("$.steps[0].caption")), "{text:?}");
    }

    #[test]
    fn a_caption_names_elements_by_name_by_number_and_the_broker() {
        let c = "ConsumerB consumes only the TagB messages that land on its own queues 2 and 3.";
        assert!(names(c, "consumer:ConsumerB"));
        assert!(!names(c, "consumer:ConsumerA"));
        assert!(names(c, "partition:TopicTestA:q2") && names(c, "partition:TopicTestA:q3"));
        assert!(!names(c, "partition:TopicTestA:q1"));
        assert!(!names(c, "broker:broker-a"));
        // A word of its own: c1 is not named by c11 or by consumer-c1x.
        assert!(!names("c11 joins, then consumer-c1x", "consumer:c1"));
        assert!(names("c4 joins and c1's partitions move", "consumer:c1"));
        assert!(names("so consumer-a gets p0 and p2.", "partition:persistent://public/default/payments:p2"));
        assert!(!names("so consumer-a gets p0 and p2.", "partition:persistent://public/default/payments:p1"));
        assert!(names("the broker filters the group's pulls", "broker:broker-a"));
        assert!(names("partitions 0–2 wait; queue 7, 9 or 11 too", "partition:t:p1"));
        assert!(names("queue 7, 9 or 11 too", "partition:t:q11"));
        assert!(!names("queue 7, 9 or 11 too", "partition:t:q8"));
        assert!(names("segment seg 4 is sealed", "partition:topic://x:seg 4"));
        // Not a key, or a key with nothing to match.
        assert!(!names("anything", "nothing"));
        assert!(!names("12 partitions", "partition:t:p12"));
    }
}
