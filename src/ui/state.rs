//! Shared UI state: the World lives in a `StoredValue`; `version` is bumped after every change so
//! views that read the World re-run.

use leptos::prelude::*;

use crate::sim::engine::Millis;
use crate::sim::history::History;
use crate::sim::rocketmq::scenario::{parse_scenario, TimedAction};
use crate::sim::rocketmq::world::World;

pub use crate::sim::presets::PRESETS;

/// Builds a fresh World from a preset; errors become text for an inline message.
pub fn load_preset(i: usize) -> Result<World, String> {
    let p = PRESETS.get(i).ok_or_else(|| format!("no preset #{i}"))?;
    parse_scenario(p.text)
        .map(World::new)
        .map_err(|errs| errs.iter().map(|e| format!("{}: {}", e.path, e.message)).collect::<Vec<_>>().join("; "))
}

/// Everything the components share. `Copy`, so closures can capture it freely.
#[derive(Clone, Copy)]
pub struct Sim {
    pub world: StoredValue<Option<World>, LocalStorage>,
    /// Bumped on every change of the World (the frame loop redraws the canvas on it).
    pub version: RwSignal<u64>,
    /// What the DOM panels follow: equal to `version` when paused; while playing the frame loop
    /// catches it up at most every 100 ms, so tables and the log do not re-render every frame.
    pub ui_version: RwSignal<u64>,
    pub playing: RwSignal<bool>,
    /// log10 of the speed factor, -2..=2.
    pub speed_log: RwSignal<f64>,
    pub preset: RwSignal<usize>,
    pub load_error: RwSignal<Option<String>>,
    pub show_help: RwSignal<bool>,
    /// Bumped whenever a different World is loaded (the frame tracker starts over).
    pub epoch: StoredValue<u64>,
    /// The log event whose provenance is shown.
    pub selected: RwSignal<Option<u32>>,
    /// Checkpoints and entered commands, for stepping back and scrubbing.
    pub history: StoredValue<Option<History>, LocalStorage>,
}

impl Default for Sim {
    fn default() -> Self {
        Sim::new()
    }
}

impl Sim {
    /// A Sim on the default preset, paused at t=0. Needs a reactive owner (call inside a component).
    pub fn new() -> Sim {
        let (w, err) = match load_preset(0) {
            Ok(w) => (Some(w), None),
            Err(e) => (None, Some(e)),
        };
        let history = w.as_ref().map(History::new);
        Sim {
            history: StoredValue::new_local(history),
            world: StoredValue::new_local(w),
            version: RwSignal::new(0),
            ui_version: RwSignal::new(0),
            playing: RwSignal::new(false),
            speed_log: RwSignal::new(1.0),
            preset: RwSignal::new(0),
            load_error: RwSignal::new(err),
            show_help: RwSignal::new(false),
            epoch: StoredValue::new(0),
            selected: RwSignal::new(None),
        }
    }

    fn loaded(&self, r: Result<World, String>) {
        self.playing.set(false);
        match r {
            Ok(w) => {
                self.history.set_value(Some(History::new(&w)));
                self.world.set_value(Some(w));
                self.load_error.set(None);
            }
            Err(e) => {
                self.world.set_value(None);
                self.load_error.set(Some(e));
            }
        }
        self.epoch.update_value(|e| *e += 1);
        self.selected.set(None);
        self.bump();
    }

    /// Loads the generated benchmark scenario (`#bench`), thousands of messages in flight.
    pub fn load_bench(&self) {
        let r = parse_scenario(&bench_scenario())
            .map(World::new)
            .map_err(|errs| errs.iter().map(|e| format!("{}: {}", e.path, e.message)).collect::<Vec<_>>().join("; "));
        self.loaded(r);
    }

    pub fn bump(&self) {
        self.version.update(|v| *v += 1);
        if !self.playing.get_untracked() {
            self.sync_ui();
        }
    }

    /// Brings the DOM panels up to date with the World.
    pub fn sync_ui(&self) {
        let v = self.version.get_untracked();
        if self.ui_version.get_untracked() != v {
            self.ui_version.set(v);
        }
    }

    /// Reads the World (subscribing to `ui_version`); `None` when no scenario loaded.
    pub fn read<R>(&self, f: impl FnOnce(&World) -> R) -> Option<R> {
        self.ui_version.track();
        self.world.with_value(|w| w.as_ref().map(f))
    }

    /// Like `read` but without subscribing.
    pub fn peek<R>(&self, f: impl FnOnce(&World) -> R) -> Option<R> {
        self.world.with_value(|w| w.as_ref().map(f))
    }

    /// Mutates the World, lets the history take a checkpoint if one is due, and bumps the version.
    pub fn mutate<R>(&self, f: impl FnOnce(&mut World) -> R) -> Option<R> {
        let r = self.world.try_update_value(|w| w.as_mut().map(f)).flatten();
        self.world.with_value(|w| {
            if let Some(w) = w {
                self.history.update_value(|h| {
                    if let Some(h) = h {
                        h.after_advance(w);
                    }
                });
            }
        });
        self.bump();
        r
    }

    /// Applies a history operation that may move the World backwards; panels and the frame
    /// tracker start over from the rebuilt state.
    fn rewind(&self, f: impl FnOnce(&mut History, &mut World)) {
        self.playing.set(false);
        self.world.update_value(|w| {
            if let Some(w) = w {
                self.history.update_value(|h| {
                    if let Some(h) = h {
                        f(h, w);
                    }
                });
            }
        });
        self.epoch.update_value(|e| *e += 1);
        self.selected.set(None);
        self.bump();
    }

    /// One step back: the state right after the previous instant at which something happened.
    pub fn step_back(&self) {
        self.rewind(|h, w| h.step_back(w));
    }

    /// Moves to simulated time `t` (backwards by checkpoint + replay).
    pub fn seek(&self, t: Millis) {
        self.rewind(|h, w| {
            let t = t.min(w.scenario.until);
            h.seek(w, t)
        });
    }

    pub fn now(&self) -> Millis {
        self.version.track();
        self.peek(|w| w.now).unwrap_or(0)
    }

    pub fn speed(&self) -> f64 {
        10f64.powf(self.speed_log.get_untracked())
    }

    pub fn until(&self) -> Millis {
        self.peek(|w| w.scenario.until).unwrap_or(0)
    }

    pub fn load(&self, i: usize) {
        self.preset.set(i);
        self.loaded(load_preset(i));
    }

    /// Runs the next scheduled event (not beyond `until`).
    pub fn step(&self) {
        self.mutate(|w| {
            let until = w.scenario.until;
            if let Some(t) = w.next_event_time() {
                if t <= until {
                    w.step_until(t);
                }
            }
        });
    }

    pub fn run_to_end(&self) {
        self.playing.set(false);
        self.mutate(|w| w.run_to_end());
    }

    /// Enters a command at the current time and applies it right away (and whatever else is due
    /// at this instant), so the editors see its effect while paused.
    pub fn command(&self, action: crate::sim::rocketmq::scenario::Action) {
        self.world.update_value(|w| {
            if let Some(w) = w {
                self.history.update_value(|h| match h {
                    Some(h) => h.command(w, action),
                    None => {
                        let now = w.now;
                        w.handle_command(TimedAction { at: now, action });
                        w.run_until(now);
                    }
                });
            }
        });
        self.bump();
    }

    pub fn at_end(&self) -> bool {
        self.version.track();
        self.peek(|w| w.now >= w.scenario.until).unwrap_or(true)
    }
}

/// "12.345 s".
pub fn fmt_ms(ms: Millis) -> String {
    format!("{}.{:03} s", ms / 1000, ms % 1000)
}

/// Group name -> member indexes, in consumer order.
pub fn group_members(w: &World) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, c) in w.consumers.iter().enumerate() {
        match out.iter_mut().find(|(g, _)| **g == *c.group) {
            Some((_, v)) => v.push(i),
            None => out.push((c.group.to_string(), vec![i])),
        }
    }
    out
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
