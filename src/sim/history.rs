//! Stepping backwards: a run is scenario + seed + the commands entered during it, so any earlier
//! instant can be rebuilt by restoring the nearest checkpoint (a clone of the model) and
//! replaying the commands from there. The rebuilt state is identical to the original, event for
//! event, because commands are re-entered at the same instant, after the same events.

use serde_json::Value;

use crate::sim::engine::Millis;
use crate::sim::json_path::PathError;
use crate::sim::model::Simulation;

/// How many checkpoints are kept; older ones are thinned out (every other one dropped).
const MAX_CHECKPOINTS: usize = 48;
/// Checkpoints stop once a log is this large: each one clones the whole model.
const MAX_CHECKPOINT_EVENTS: usize = 200_000;

#[derive(Clone)]
struct Checkpoint {
    at: Millis,
    /// Commands already applied in this checkpoint.
    commands: usize,
    sim: Box<dyn Simulation>,
}

/// A command entered during the run: a timeline entry in the model's JSON form, with its instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Entered {
    pub at: Millis,
    pub command: Value,
}

#[derive(Clone)]
pub struct History {
    commands: Vec<Entered>,
    checkpoints: Vec<Checkpoint>,
    interval: Millis,
}

impl History {
    /// Starts the history of a freshly built model (checkpoint at its current time).
    pub fn new(initial: &dyn Simulation) -> History {
        let interval = (initial.until() / 40).max(1_000);
        History {
            commands: Vec::new(),
            checkpoints: vec![Checkpoint { at: initial.now(), commands: 0, sim: initial.clone_box() }],
            interval,
        }
    }

    /// The commands entered so far, in order: with the scenario they describe the whole run.
    pub fn commands(&self) -> &[Entered] {
        &self.commands
    }

    /// Call after the model advanced: keeps a checkpoint every `interval` of simulated time.
    pub fn after_advance(&mut self, sim: &dyn Simulation) {
        let last = self.checkpoints.last().map(|c| c.at).unwrap_or(0);
        if sim.now() < last + self.interval || sim.log_len() > MAX_CHECKPOINT_EVENTS {
            return;
        }
        self.checkpoints.push(Checkpoint { at: sim.now(), commands: self.commands.len(), sim: sim.clone_box() });
        if self.checkpoints.len() > MAX_CHECKPOINTS {
            // Keep the first, then every other one: spacing doubles, memory stays bounded.
            let mut i = 0;
            self.checkpoints.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.interval *= 2;
        }
    }

    /// Enters a command at the model's current time, records it, and runs what is due now. An
    /// invalid command changes nothing and is not recorded.
    pub fn command(&mut self, sim: &mut Box<dyn Simulation>, mut command: Value) -> Result<(), Vec<PathError>> {
        let at = sim.now();
        if let Value::Object(map) = &mut command {
            map.insert("at".into(), Value::from(at));
        }
        sim.enter_command(&command)?;
        self.commands.push(Entered { at, command });
        sim.run_until(at);
        Ok(())
    }

    /// Moves the model to time `t`: forward by running, backward by restoring and replaying.
    pub fn seek(&mut self, sim: &mut Box<dyn Simulation>, t: Millis) {
        if t >= sim.now() {
            sim.run_until(t);
            self.after_advance(&**sim);
            return;
        }
        let Some(cp) = self.checkpoints.iter().rev().find(|c| c.at <= t) else { return };
        let mut rebuilt = cp.sim.clone_box();
        for cmd in &self.commands[cp.commands..] {
            if cmd.at > t {
                break;
            }
            rebuilt.run_until(cmd.at);
            // It was valid when entered, and the rebuilt state at this instant is the same.
            let _ = rebuilt.enter_command(&cmd.command);
            rebuilt.run_until(cmd.at);
        }
        rebuilt.run_until(t);
        *sim = rebuilt;
        // Commands after `t` belong to the abandoned future (like a fork): a new edit replaces them.
        let kept = self.commands.iter().take_while(|c| c.at <= t).count();
        self.commands.truncate(kept);
        self.checkpoints.retain(|c| c.at <= t);
    }

    /// One step back: to the previous instant at which something happened.
    pub fn step_back(&mut self, sim: &mut Box<dyn Simulation>) {
        let now = sim.now();
        let prev = (0..sim.log_len()).rev().map(|i| sim.log_time(i)).find(|&at| at < now);
        match prev {
            Some(t) => self.seek(sim, t),
            None => {
                if let Some(first) = self.checkpoints.first() {
                    *sim = first.sim.clone_box();
                    self.commands.clear();
                    self.checkpoints.truncate(1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::sim::model::{log_line, parse};
    use crate::sim::presets::by_file;

    fn world(file: &str) -> Box<dyn Simulation> {
        parse(by_file(file).unwrap().text).unwrap()
    }

    fn texts(sim: &dyn Simulation, upto: Millis) -> Vec<String> {
        (0..sim.log_len()).filter(|&i| sim.log_time(i) <= upto).map(|i| sim.log_text(i)).collect()
    }

    fn render(sim: &dyn Simulation) -> String {
        (0..sim.log_len()).map(|i| log_line(sim, i) + "\n").collect()
    }

    #[test]
    fn seeking_back_rebuilds_the_identical_state() {
        let mut w = world("seed-same-topic-different-tags.json");
        let mut h = History::new(&*w);
        for t in (0..=40_000).step_by(700) {
            h.seek(&mut w, t);
        }
        let log_at_20s = texts(&*w, 20_000);
        h.seek(&mut w, 20_000);
        assert_eq!(w.now(), 20_000);
        assert_eq!(texts(&*w, u64::MAX), log_at_20s);
        // And forward again ends where a straight run ends.
        h.seek(&mut w, 120_000);
        let mut straight = world("seed-same-topic-different-tags.json");
        straight.run_until(120_000);
        assert_eq!(render(&*w), render(&*straight));
    }

    #[test]
    fn commands_are_replayed_at_their_instant() {
        let mut w = world("consistent-group.json");
        let mut h = History::new(&*w);
        h.seek(&mut w, 12_345);
        let sub = json!({"action": "subscribe", "clientId": "ConsumerB", "topic": "TopicTestA", "expression": "TagA"});
        h.command(&mut w, sub).unwrap();
        h.seek(&mut w, 90_000);
        let reference = render(&*w);
        h.seek(&mut w, 30_000);
        h.seek(&mut w, 90_000);
        assert_eq!(render(&*w), reference);
        assert_eq!(h.commands().len(), 1);
        // Going back before the command abandons it.
        h.seek(&mut w, 10_000);
        assert!(h.commands().is_empty());
    }

    #[test]
    fn an_invalid_command_changes_nothing() {
        let mut w = world("consistent-group.json");
        let mut h = History::new(&*w);
        h.seek(&mut w, 5_000);
        let before = render(&*w);
        let errors = h.command(&mut w, json!({"action": "stopConsumer", "clientId": "Nobody"})).unwrap_err();
        assert!(errors[0].message.contains("unknown consumer"), "{errors:?}");
        assert_eq!(render(&*w), before);
        assert!(h.commands().is_empty());
    }

    #[test]
    fn step_back_goes_to_the_previous_event_instant() {
        let mut w = world("seed-same-topic-different-tags.json");
        let mut h = History::new(&*w);
        h.seek(&mut w, 5_003);
        let before = (0..w.log_len()).rev().map(|i| w.log_time(i)).find(|&at| at < 5_003).unwrap();
        h.step_back(&mut w);
        assert_eq!(w.now(), before);
        assert!((0..w.log_len()).all(|i| w.log_time(i) <= before));
    }
}
