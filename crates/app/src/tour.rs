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
    o.finish(e);
    Some(Step { when: when?, caption: caption?, highlight })
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

    #[test]
    fn a_bad_tour_is_refused_with_paths() {
        let e = parse_tour(r#"{"format": "mqviz-tour/1", "preset": "x", "title": "t", "steps": [{"when": {}, "caption": 1}]}"#)
            .unwrap_err();
        let text: Vec<String> = e.iter().map(|x| x.to_string()).collect();
        assert!(text.iter().any(|t| t.starts_with("$.steps[0].when.text")), "{text:?}");
        assert!(text.iter().any(|t| t.starts_with("$.steps[0].caption")), "{text:?}");
    }
}
