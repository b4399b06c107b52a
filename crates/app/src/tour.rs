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
}
