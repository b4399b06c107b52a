//! Shared UI state: the World lives in a `StoredValue`; `version` is bumped after every change so
//! views that read the World re-run.

use leptos::prelude::*;

use crate::sim::engine::Millis;
use crate::sim::rocketmq::world::World;
use crate::sim::scenario::{parse_scenario, TimedAction};

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
    pub version: RwSignal<u64>,
    pub playing: RwSignal<bool>,
    /// log10 of the speed factor, -2..=2.
    pub speed_log: RwSignal<f64>,
    pub preset: RwSignal<usize>,
    pub load_error: RwSignal<Option<String>>,
    pub show_help: RwSignal<bool>,
}

impl Sim {
    pub fn new() -> Sim {
        let (w, err) = match load_preset(0) {
            Ok(w) => (Some(w), None),
            Err(e) => (None, Some(e)),
        };
        Sim {
            world: StoredValue::new_local(w),
            version: RwSignal::new(0),
            playing: RwSignal::new(false),
            speed_log: RwSignal::new(1.0),
            preset: RwSignal::new(0),
            load_error: RwSignal::new(err),
            show_help: RwSignal::new(false),
        }
    }

    pub fn bump(&self) {
        self.version.update(|v| *v += 1);
    }

    /// Reads the World (subscribing to `version`); `None` when no scenario loaded.
    pub fn read<R>(&self, f: impl FnOnce(&World) -> R) -> Option<R> {
        self.version.track();
        self.world.with_value(|w| w.as_ref().map(f))
    }

    /// Like `read` but without subscribing.
    pub fn peek<R>(&self, f: impl FnOnce(&World) -> R) -> Option<R> {
        self.world.with_value(|w| w.as_ref().map(f))
    }

    /// Mutates the World and bumps the version.
    pub fn mutate<R>(&self, f: impl FnOnce(&mut World) -> R) -> Option<R> {
        let r = self.world.try_update_value(|w| w.as_mut().map(f)).flatten();
        self.bump();
        r
    }

    pub fn speed(&self) -> f64 {
        10f64.powf(self.speed_log.get_untracked())
    }

    pub fn until(&self) -> Millis {
        self.peek(|w| w.scenario.until).unwrap_or(0)
    }

    pub fn load(&self, i: usize) {
        self.playing.set(false);
        match load_preset(i) {
            Ok(w) => {
                self.world.set_value(Some(w));
                self.load_error.set(None);
            }
            Err(e) => {
                self.world.set_value(None);
                self.load_error.set(Some(e));
            }
        }
        self.preset.set(i);
        self.bump();
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
    pub fn command(&self, action: crate::sim::scenario::Action) {
        self.mutate(|w| {
            let now = w.now;
            w.handle_command(TimedAction { at: now, action });
            w.run_until(now);
        });
    }

    pub fn at_end(&self) -> bool {
        self.read(|w| w.now >= w.scenario.until).unwrap_or(true)
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
