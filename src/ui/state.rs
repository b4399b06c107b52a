//! Shared UI state. The running model lives in a `StoredValue` as a `Box<dyn Simulation>`, so the
//! shell, canvas, tracker, plots and history never name a broker. `version` is bumped after every
//! change so views that read the model re-run.
//!
//! Invariant (a deliberate trade for speed): the model is not a reactive signal. Components read it
//! through `Sim::read` (which subscribes to `ui_version`) or `Sim::peek` (which does not), and every
//! mutation goes through `Sim::mutate` / `Sim::command`, which bump the version counters.

use leptos::prelude::*;
use serde_json::Value;

use crate::sim::engine::Millis;
use crate::sim::history::History;
use crate::sim::json_path::PathError;
use crate::sim::model::{self, BrokerKind, Simulation, View};
use crate::sim::story::Story;
use crate::sim::tour::{self, Pinned, Tour};

pub use crate::sim::presets::PRESETS;

fn errors_text(errs: &[PathError]) -> String {
    errs.iter().map(|e| format!("{}: {}", e.path, e.message)).collect::<Vec<_>>().join("; ")
}

/// Builds a fresh model from a preset; errors become text for an inline message.
pub fn load_preset(i: usize) -> Result<Box<dyn Simulation>, String> {
    let p = PRESETS.get(i).ok_or_else(|| format!("no preset #{i}"))?;
    model::parse(p.text).map_err(|errs| errors_text(&errs))
}

/// A guided tour being played: its steps pinned to events of this run, and the step shown.
#[derive(Clone, Debug, PartialEq)]
pub struct TourRun {
    pub tour: Tour,
    pub pinned: Vec<Pinned>,
    /// The step whose caption is shown (`None` before the first).
    pub step: Option<usize>,
}

/// Everything the components share. `Copy`, so closures can capture it freely.
#[derive(Clone, Copy)]
pub struct Sim {
    pub model: StoredValue<Option<Box<dyn Simulation>>, LocalStorage>,
    /// Bumped on every change of the model (the frame loop redraws the canvas on it).
    pub version: RwSignal<u64>,
    /// What the DOM panels follow: equal to `version` when paused; while playing the frame loop
    /// catches it up at most every 100 ms, so tables and the log do not re-render every frame.
    pub ui_version: RwSignal<u64>,
    pub playing: RwSignal<bool>,
    /// log10 of the speed factor, -2..=2.
    pub speed_log: RwSignal<f64>,
    pub preset: RwSignal<usize>,
    /// The loaded model's kind: model-specific panels switch on it.
    pub kind: RwSignal<Option<BrokerKind>>,
    pub load_error: RwSignal<Option<String>>,
    pub show_help: RwSignal<bool>,
    /// Bumped whenever a different model is loaded (the frame tracker starts over).
    pub epoch: StoredValue<u64>,
    /// The log event whose provenance is shown.
    pub selected: RwSignal<Option<u32>>,
    /// Checkpoints and entered commands, for stepping back and scrubbing.
    pub history: StoredValue<Option<History>, LocalStorage>,
    /// The run's key moments, computed ahead on a clone (chapter marks, pacing).
    pub story: StoredValue<Option<Story>, LocalStorage>,
    /// Bumped when the story is recomputed (the marks re-render).
    pub story_version: RwSignal<u64>,
    /// Slow down around key moments and skip idle stretches while playing.
    pub pacing: RwSignal<bool>,
    pub tour: RwSignal<Option<TourRun>>,
    /// The text of the `aria-live` region.
    pub announce: RwSignal<String>,
    /// The view last announced (changes are said relative to it).
    pub announced: StoredValue<Option<View>, LocalStorage>,
}

impl Default for Sim {
    fn default() -> Self {
        Sim::new()
    }
}

impl Sim {
    /// A Sim on the default preset, paused at t=0. Needs a reactive owner (call inside a component).
    pub fn new() -> Sim {
        let (m, err) = match load_preset(0) {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(e)),
        };
        let history = m.as_deref().map(History::new);
        let kind = m.as_ref().map(|m| m.kind());
        Sim {
            history: StoredValue::new_local(history),
            model: StoredValue::new_local(m),
            version: RwSignal::new(0),
            ui_version: RwSignal::new(0),
            playing: RwSignal::new(false),
            speed_log: RwSignal::new(1.0),
            preset: RwSignal::new(0),
            kind: RwSignal::new(kind),
            load_error: RwSignal::new(err),
            show_help: RwSignal::new(false),
            epoch: StoredValue::new(0),
            selected: RwSignal::new(None),
            story: StoredValue::new_local(None),
            story_version: RwSignal::new(0),
            pacing: RwSignal::new(true),
            tour: RwSignal::new(None),
            announce: RwSignal::new(String::new()),
            announced: StoredValue::new_local(None),
        }
    }

    /// Recomputes the story from the model as it is now (past and determined future).
    pub fn refresh_story(&self) {
        let story = self.peek(Story::compute);
        self.story.set_value(story);
        self.story_version.update(|v| *v += 1);
    }

    /// The preset file loaded, if a preset is.
    pub fn preset_file(&self) -> Option<&'static str> {
        PRESETS.get(self.preset.get_untracked()).map(|p| p.file)
    }

    /// Runs forward to the next key moment and pauses there.
    pub fn next_moment(&self) {
        let now = self.peek(|m| m.now()).unwrap_or(0);
        let next = self.story.with_value(|s| s.as_ref().and_then(|s| s.next_mark(now)).map(|m| m.at));
        if let Some(at) = next {
            self.playing.set(false);
            self.mutate(|m| m.run_until(at));
        }
    }

    /// Starts the preset's tour from the beginning (reloading the preset).
    pub fn start_tour(&self) {
        let Some(file) = self.preset_file() else { return };
        let Some(tour) = tour::for_preset(file) else { return };
        self.load(self.preset.get_untracked());
        // Pin the steps on a run to the end: the future is determined by the scenario.
        let pinned = self.peek(|m| {
            let mut ahead = m.clone_box();
            let until = ahead.until();
            ahead.run_until(until);
            tour.pin(&*ahead)
        });
        match pinned {
            Some(Ok(pinned)) => {
                self.tour.set(Some(TourRun { tour, pinned, step: None }));
                self.tour_step(0);
            }
            Some(Err(e)) => self.load_error.set(Some(e)),
            None => {}
        }
    }

    /// Shows step `k` of the running tour: the model is moved to its event and paused.
    pub fn tour_step(&self, k: usize) {
        let Some(run) = self.tour.get_untracked() else { return };
        let Some(p) = run.pinned.get(k) else { return };
        let at = p.at;
        let now = self.peek(|m| m.now()).unwrap_or(0);
        self.playing.set(false);
        if at >= now {
            self.mutate(|m| m.run_until(at));
        } else {
            self.seek(at);
        }
        self.tour.update(|t| {
            if let Some(t) = t {
                t.step = Some(k);
            }
        });
    }

    pub fn end_tour(&self) {
        self.tour.set(None);
    }

    fn loaded(&self, r: Result<Box<dyn Simulation>, String>) {
        self.playing.set(false);
        match r {
            Ok(m) => {
                self.history.set_value(Some(History::new(&*m)));
                self.kind.set(Some(m.kind()));
                self.model.set_value(Some(m));
                self.load_error.set(None);
            }
            Err(e) => {
                self.model.set_value(None);
                self.kind.set(None);
                self.load_error.set(Some(e));
            }
        }
        self.epoch.update_value(|e| *e += 1);
        self.selected.set(None);
        self.tour.set(None);
        self.announced.set_value(None);
        super::canvas::reset();
        self.refresh_story();
        self.bump();
    }

    /// Loads the generated benchmark scenario (`#bench`), thousands of messages in flight.
    pub fn load_bench(&self) {
        self.loaded(model::parse(&bench_scenario()).map_err(|errs| errors_text(&errs)));
        // The benchmark measures frames, not pacing.
        self.pacing.set(false);
    }

    pub fn bump(&self) {
        self.version.update(|v| *v += 1);
        if !self.playing.get_untracked() {
            self.sync_ui();
        }
    }

    /// Brings the DOM panels up to date with the model.
    pub fn sync_ui(&self) {
        let v = self.version.get_untracked();
        if self.ui_version.get_untracked() != v {
            self.ui_version.set(v);
        }
    }

    /// Reads the model (subscribing to `ui_version`); `None` when no scenario loaded.
    pub fn read<R>(&self, f: impl FnOnce(&dyn Simulation) -> R) -> Option<R> {
        self.ui_version.track();
        self.peek(f)
    }

    /// Like `read` but without subscribing.
    pub fn peek<R>(&self, f: impl FnOnce(&dyn Simulation) -> R) -> Option<R> {
        self.model.with_value(|m| m.as_deref().map(f))
    }

    /// Reads the model as its concrete world type (for `ui/<model>/` panels), subscribing to
    /// `ui_version`. `None` when another model is loaded.
    pub fn read_as<W: 'static, R>(&self, f: impl FnOnce(&W) -> R) -> Option<R> {
        self.ui_version.track();
        self.peek_as(f)
    }

    /// Like `read_as` but without subscribing.
    pub fn peek_as<W: 'static, R>(&self, f: impl FnOnce(&W) -> R) -> Option<R> {
        self.model.with_value(|m| m.as_deref().and_then(|m| m.as_any().downcast_ref::<W>()).map(f))
    }

    /// Mutates the model, lets the history take a checkpoint if one is due, and bumps the version.
    pub fn mutate<R>(&self, f: impl FnOnce(&mut dyn Simulation) -> R) -> Option<R> {
        let r = self.model.try_update_value(|m| m.as_mut().map(|m| f(&mut **m))).flatten();
        self.model.with_value(|m| {
            if let Some(m) = m {
                self.history.update_value(|h| {
                    if let Some(h) = h {
                        h.after_advance(&**m);
                    }
                });
            }
        });
        self.bump();
        r
    }

    /// Applies a history operation that may move the model backwards; panels and the frame
    /// tracker start over from the rebuilt state.
    fn rewind(&self, f: impl FnOnce(&mut History, &mut Box<dyn Simulation>)) {
        self.playing.set(false);
        let commands = || self.history.with_value(|h| h.as_ref().map(|h| h.commands().len()).unwrap_or(0));
        let before = commands();
        self.model.update_value(|m| {
            if let Some(m) = m {
                self.history.update_value(|h| {
                    if let Some(h) = h {
                        f(h, m);
                    }
                });
            }
        });
        self.epoch.update_value(|e| *e += 1);
        self.selected.set(None);
        // Only an abandoned edit changes the future.
        if commands() != before {
            self.refresh_story();
        }
        self.bump();
    }

    /// One step back: the state right after the previous instant at which something happened.
    pub fn step_back(&self) {
        self.rewind(|h, m| h.step_back(m));
    }

    /// Moves to simulated time `t` (backwards by checkpoint + replay).
    pub fn seek(&self, t: Millis) {
        self.rewind(|h, m| {
            let t = t.min(m.until());
            h.seek(m, t)
        });
    }

    pub fn now(&self) -> Millis {
        self.version.track();
        self.peek(|m| m.now()).unwrap_or(0)
    }

    pub fn speed(&self) -> f64 {
        10f64.powf(self.speed_log.get_untracked())
    }

    pub fn until(&self) -> Millis {
        self.peek(|m| m.until()).unwrap_or(0)
    }

    pub fn load(&self, i: usize) {
        self.preset.set(i);
        self.loaded(load_preset(i));
    }

    /// Runs the next scheduled event (not beyond `until`).
    pub fn step(&self) {
        self.mutate(|m| {
            let until = m.until();
            if let Some(t) = m.next_event_time() {
                if t <= until {
                    m.step_until(t);
                }
            }
        });
    }

    pub fn run_to_end(&self) {
        self.playing.set(false);
        self.mutate(|m| {
            let until = m.until();
            m.run_until(until)
        });
    }

    /// Enters a command (a timeline entry in the model's JSON form, without `at`) at the current
    /// time and applies it right away (and whatever else is due at this instant), so the editors
    /// see its effect while paused. An invalid command changes nothing; its errors are returned.
    pub fn command(&self, command: Value) -> Result<(), String> {
        let mut result = Ok(());
        self.model.update_value(|m| {
            if let Some(m) = m {
                self.history.update_value(|h| {
                    result = match h {
                        Some(h) => h.command(m, command),
                        None => m.enter_command(&command),
                    };
                });
            }
        });
        if result.is_ok() {
            self.refresh_story();
        }
        self.bump();
        result.map_err(|errs| errors_text(&errs))
    }

    pub fn at_end(&self) -> bool {
        self.version.track();
        self.peek(|m| m.now() >= m.until()).unwrap_or(true)
    }
}

/// "12.345 s".
pub fn fmt_ms(ms: Millis) -> String {
    format!("{}.{:03} s", ms / 1000, ms % 1000)
}

/// A generated scenario for the performance test: one topic of 8 queues fed at 4 messages per
/// simulated millisecond, one group whose consumers disagree on the tag (so both filters drop).
pub fn bench_scenario() -> String {
    let sends: Vec<String> = ["TagA", "TagB", "TagC", "TagA"]
        .iter()
        .enumerate()
        .map(|(i, tag)| {
            format!(
                r#"{{"at": {}, "topic": "Bench", "tag": "{tag}", "body": "m{{i}}", "count": 60000, "intervalMs": 1}}"#,
                1000 + i
            )
        })
        .collect();
    format!(
        r#"{{"format": "mqviz-scenario/1", "broker": "rocketmq", "name": "Benchmark: thousands of messages in flight",
  "description": "Generated load for the frame-time measurement: 4 messages per simulated millisecond into 8 queues; ConsumerA takes everything, ConsumerB only TagA, ConsumerC only TagB, so the broker's and the clients' tag filters both drop messages.",
  "seed": 7, "until": 60000, "network": {{"latencyMs": 1}},
  "brokers": [{{"name": "broker-a"}}],
  "topics": [{{"name": "Bench", "queues": 8}}],
  "producers": [{{"id": "Loader", "group": "benchProducers", "startIndex": 0, "sends": [{}]}}],
  "groups": [{{"name": "benchGroup", "messageModel": "CLUSTERING", "allocation": {{"strategy": "AVG"}},
    "consumers": [
      {{"clientId": "ConsumerA", "subscriptions": {{"Bench": "*"}}, "startAt": 0}},
      {{"clientId": "ConsumerB", "subscriptions": {{"Bench": "TagA"}}, "startAt": 0}},
      {{"clientId": "ConsumerC", "subscriptions": {{"Bench": "TagB"}}, "startAt": 0}}
    ]}}]}}"#,
        sends.join(", ")
    )
}

/// Escapes text for HTML built as a string (read-only tables rendered with `inner_html`).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes an identifier for HTML and lets it wrap where a reader would split it: after `%`,
/// `-`, `_`, `.`, `:`, `@`, and between a lower-case letter and an upper-case one
/// (`%RETRY%<wbr>test<wbr>Group<wbr>Consumer`), never in the middle of a word.
pub fn esc_ident(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let chars: Vec<char> = s.chars().collect();
    let mut prev: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        // Only before a capital that starts a word ("Group" in "testGroup"), not a lone suffix
        // ("B" in "ConsumerB").
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        if prev.is_some_and(|p| p.is_lowercase() && c.is_uppercase()) && next_lower {
            out.push_str("<wbr>");
        }
        out.push_str(&esc(&c.to_string()));
        if matches!(c, '%' | '-' | '_' | '.' | ':' | '@') {
            out.push_str("<wbr>");
        }
        prev = Some(c);
    }
    out
}
