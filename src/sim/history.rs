//! Stepping backwards: a run is scenario + seed + the commands entered during it, so any earlier
//! instant can be rebuilt by restoring the nearest checkpoint (a clone of the World) and
//! replaying the commands from there. The rebuilt state is identical to the original, event for
//! event, because commands are re-entered at the same instant, after the same events.

use crate::sim::engine::Millis;
use crate::sim::rocketmq::world::World;
use crate::sim::scenario::{Action, TimedAction};

/// How many checkpoints are kept; older ones are thinned out (every other one dropped).
const MAX_CHECKPOINTS: usize = 48;
/// Checkpoints stop once a log is this large: each one clones the whole World.
const MAX_CHECKPOINT_EVENTS: usize = 200_000;

#[derive(Clone, Debug)]
struct Checkpoint {
    at: Millis,
    /// Commands already applied in this checkpoint.
    commands: usize,
    world: World,
}

#[derive(Clone, Debug)]
pub struct History {
    commands: Vec<TimedAction>,
    checkpoints: Vec<Checkpoint>,
    interval: Millis,
}

impl History {
    /// Starts the history of a freshly built World (checkpoint at its current time).
    pub fn new(initial: &World) -> History {
        let interval = (initial.scenario.until / 40).max(1_000);
        History {
            commands: Vec::new(),
            checkpoints: vec![Checkpoint { at: initial.now, commands: 0, world: initial.clone() }],
            interval,
        }
    }

    /// The commands entered so far, in order: with the scenario they describe the whole run.
    pub fn commands(&self) -> &[TimedAction] {
        &self.commands
    }

    /// Call after the World advanced: keeps a checkpoint every `interval` of simulated time.
    pub fn after_advance(&mut self, w: &World) {
        let last = self.checkpoints.last().map(|c| c.at).unwrap_or(0);
        if w.now < last + self.interval || w.log.len() > MAX_CHECKPOINT_EVENTS {
            return;
        }
        self.checkpoints.push(Checkpoint { at: w.now, commands: self.commands.len(), world: w.clone() });
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

    /// Enters a command at the World's current time, records it, and runs what is due now.
    pub fn command(&mut self, w: &mut World, action: Action) {
        let cmd = TimedAction { at: w.now, action };
        self.commands.push(cmd.clone());
        w.handle_command(cmd);
        let now = w.now;
        w.run_until(now);
    }

    /// Moves the World to time `t`: forward by running, backward by restoring and replaying.
    pub fn seek(&mut self, w: &mut World, t: Millis) {
        if t >= w.now {
            w.run_until(t);
            self.after_advance(w);
            return;
        }
        let Some(cp) = self.checkpoints.iter().rev().find(|c| c.at <= t) else { return };
        let mut rebuilt = cp.world.clone();
        for cmd in &self.commands[cp.commands..] {
            if cmd.at > t {
                break;
            }
            rebuilt.run_until(cmd.at);
            rebuilt.handle_command(cmd.clone());
            rebuilt.run_until(cmd.at);
        }
        rebuilt.run_until(t);
        *w = rebuilt;
        // Commands after `t` belong to the abandoned future (like a fork): a new edit replaces them.
        let kept = self.commands.iter().take_while(|c| c.at <= t).count();
        self.commands.truncate(kept);
        self.checkpoints.retain(|c| c.at <= t);
    }

    /// One step back: to the previous instant at which something happened.
    pub fn step_back(&mut self, w: &mut World) {
        let now = w.now;
        let prev = w.log.entries().iter().rev().map(|e| e.at).find(|&at| at < now);
        match prev {
            Some(t) => self.seek(w, t),
            None => {
                if let Some(first) = self.checkpoints.first() {
                    *w = first.world.clone();
                    self.commands.clear();
                    self.checkpoints.truncate(1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::presets::by_file;
    use crate::sim::scenario::{parse_scenario, SubscriptionSpec};

    fn world(file: &str) -> World {
        World::new(parse_scenario(by_file(file).unwrap().text).unwrap())
    }

    #[test]
    fn seeking_back_rebuilds_the_identical_state() {
        let mut w = world("seed-same-topic-different-tags.json");
        let mut h = History::new(&w);
        for t in (0..=40_000).step_by(700) {
            h.seek(&mut w, t);
        }
        let log_at_20s: Vec<String> = w.log.entries().iter().filter(|e| e.at <= 20_000).map(|e| e.kind.to_string()).collect();
        h.seek(&mut w, 20_000);
        assert_eq!(w.now, 20_000);
        let rebuilt: Vec<String> = w.log.entries().iter().map(|e| e.kind.to_string()).collect();
        assert_eq!(rebuilt, log_at_20s);
        // And forward again ends where a straight run ends.
        h.seek(&mut w, 120_000);
        let mut straight = world("seed-same-topic-different-tags.json");
        straight.run_to_end();
        assert_eq!(w.log.render(), straight.log.render());
    }

    #[test]
    fn commands_are_replayed_at_their_instant() {
        let mut w = world("consistent-group.json");
        let mut h = History::new(&w);
        h.seek(&mut w, 12_345);
        let sub = SubscriptionSpec { topic: "TopicTestA".into(), expression: "TagA".into(), expression_type: None };
        h.command(&mut w, Action::Subscribe { client_id: "ConsumerB".into(), subscription: sub });
        h.seek(&mut w, 90_000);
        let reference = w.log.render();
        h.seek(&mut w, 30_000);
        h.seek(&mut w, 90_000);
        assert_eq!(w.log.render(), reference);
        assert_eq!(h.commands().len(), 1);
        // Going back before the command abandons it.
        h.seek(&mut w, 10_000);
        assert!(h.commands().is_empty());
    }

    #[test]
    fn step_back_goes_to_the_previous_event_instant() {
        let mut w = world("seed-same-topic-different-tags.json");
        let mut h = History::new(&w);
        h.seek(&mut w, 5_003);
        let before = w.log.entries().iter().rev().map(|e| e.at).find(|&at| at < 5_003).unwrap();
        h.step_back(&mut w);
        assert_eq!(w.now, before);
        assert!(w.log.entries().iter().all(|e| e.at <= before));
    }
}
