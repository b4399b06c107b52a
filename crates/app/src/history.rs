//! Time travel over any model. A run is scenario + seed + the commands entered during it, so any
//! instant can be rebuilt by restoring the nearest checkpoint (a clone of the model) and
//! re-entering the commands from there. The rebuilt state is identical to the original, event for
//! event, because each command is re-entered at its instant after every event of that instant, as
//! it was when the user entered it.
//!
//! Edits survive time travel: seeking back keeps the commands entered later, and running forward
//! again re-enters each when its instant comes. Entering a command at an earlier instant than a
//! later edit forks a new branch from there; the previous branch is kept, to switch back to or to
//! compare against.

use mqviz_engine::sort::StableSort;
use serde_json::Value;

use mqviz_engine::json_path::PathError;
use mqviz_engine::Millis;
use mqviz_model::Simulation;

/// How many checkpoints are kept; older ones are thinned out (every other one dropped).
const MAX_CHECKPOINTS: usize = 48;
/// Checkpoints stop once a log is this large: each one clones the whole model.
const MAX_CHECKPOINT_EVENTS: usize = 200_000;
/// ... or once the model holds this much (`Simulation::memory_bytes`). A log's length alone
/// misses models whose events are few and large: a Kafka run of 1 M records has under 5,000
/// events and holds 80 MB, and each of its checkpoints cost 250 ms of wasm in one frame
/// (20-28 ms native) while a scrub ran. RocketMQ reaches the event limit first (10 MB at 200,000
/// events on the 1 M bench), so its checkpoints are as before.
const MAX_CHECKPOINT_BYTES: u64 = 16 << 20;
/// Branches kept at most (the oldest are forgotten).
const MAX_BRANCHES: usize = 16;

#[derive(Clone)]
struct Checkpoint {
    at: Millis,
    /// Commands already applied in this checkpoint.
    applied: usize,
    sim: Box<dyn Simulation>,
}

/// A command entered during the run: a timeline entry in the model's JSON form, with its instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Entered {
    pub at: Millis,
    pub command: Value,
}

/// A branch left behind when an edit in the past forked a new one.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    pub commands: Vec<Entered>,
    /// The instant the newer branch departs from this one.
    pub forked_at: Millis,
}

/// A command that could not be re-entered (a hand-edited file or link): its index and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayError {
    pub index: usize,
    pub errors: Vec<PathError>,
}

#[derive(Clone)]
pub struct History {
    /// The current branch, in order: applied ones first, then those not reached yet.
    commands: Vec<Entered>,
    /// How many of `commands` the model has applied.
    applied: usize,
    branches: Vec<Branch>,
    checkpoints: Vec<Checkpoint>,
    interval: Millis,
    /// Commands taken back by `undo`, the latest last: `redo` enters them again. Entering a new
    /// command or switching branches forgets them, as every editor's redo does.
    undone: Vec<Entered>,
}

impl History {
    /// Starts the history of a freshly built model (checkpoint at its current time).
    pub fn new(initial: &dyn Simulation) -> History {
        History::with_commands(initial, Vec::new())
    }

    /// A history whose commands (from an exported run or a link) are entered as the model
    /// reaches their instants. They must be in time order.
    pub fn with_commands(initial: &dyn Simulation, mut commands: Vec<Entered>) -> History {
        commands.stable_sort_by_key(|c| c.at);
        let interval = (initial.until() / 40).max(1_000);
        History {
            commands,
            applied: 0,
            branches: Vec::new(),
            checkpoints: vec![Checkpoint { at: initial.now(), applied: 0, sim: initial.clone_box() }],
            interval,
            undone: Vec::new(),
        }
    }

    /// A history that only replays `commands` forward (no checkpoints: it cannot go back). For
    /// runs ahead (the story) and command-line runs, where cloning the model would be waste.
    pub fn replay(mut commands: Vec<Entered>) -> History {
        commands.stable_sort_by_key(|c| c.at);
        History { commands, applied: 0, branches: Vec::new(), checkpoints: Vec::new(), interval: Millis::MAX, undone: Vec::new() }
    }

    /// Every command of the current branch (entered or still ahead), in order: with the scenario
    /// they describe the whole run.
    pub fn commands(&self) -> &[Entered] {
        &self.commands
    }

    /// The commands not reached yet.
    pub fn pending(&self) -> &[Entered] {
        &self.commands[self.applied..]
    }

    /// The run as it started (its first checkpoint), for reading a run ahead from its start;
    /// `None` for a replay-only history.
    pub fn start(&self) -> Option<&dyn Simulation> {
        self.checkpoints.first().map(|c| &*c.sim)
    }

    /// Branches left behind by edits in the past, oldest first.
    pub fn branches(&self) -> &[Branch] {
        &self.branches
    }

    /// Keeps a checkpoint every `interval` of simulated time.
    fn checkpoint(&mut self, sim: &dyn Simulation) {
        if self.interval == Millis::MAX {
            return;
        }
        let last = self.checkpoints.last().map(|c| c.at).unwrap_or(0);
        if sim.now() < last + self.interval || sim.log_len() > MAX_CHECKPOINT_EVENTS || sim.memory_bytes() > MAX_CHECKPOINT_BYTES
        {
            return;
        }
        self.checkpoints.push(Checkpoint { at: sim.now(), applied: self.applied, sim: sim.clone_box() });
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

    /// Call after moving the model forward by other means (it keeps checkpoints).
    pub fn after_advance(&mut self, sim: &dyn Simulation) {
        self.checkpoint(sim);
    }

    /// Runs the model forward to `t`, entering each command not reached yet at its instant.
    /// A command that cannot be entered (only possible for hand-made ones) is dropped and
    /// reported; the run goes on without it.
    pub fn advance(&mut self, sim: &mut Box<dyn Simulation>, t: Millis) -> Result<(), ReplayError> {
        let mut first_error = None;
        while let Some(cmd) = self.commands.get(self.applied).filter(|c| c.at <= t).cloned() {
            sim.run_until(cmd.at);
            self.checkpoint(&**sim);
            match sim.enter_command(&cmd.command) {
                Ok(()) => {
                    self.applied += 1;
                    sim.run_until(cmd.at);
                }
                Err(errors) => {
                    first_error.get_or_insert(ReplayError { index: self.applied, errors });
                    self.commands.remove(self.applied);
                }
            }
        }
        sim.run_until(t);
        self.checkpoint(&**sim);
        first_error.map_or(Ok(()), Err)
    }

    /// Moves the model to the `event`-th event run (`Simulation::events_run`), which happened at
    /// `t`: every instant before `t` in full, then the events of `t` one by one up to it. This is
    /// where a Step inside an instant stopped, so a link made there comes back to the same event.
    /// An instant's commands come after all of its events, so none of `t`'s is entered.
    pub fn advance_to_event(&mut self, sim: &mut Box<dyn Simulation>, t: Millis, event: u64) -> Result<(), ReplayError> {
        if t < sim.now() || (t == sim.now() && sim.events_run() > event) {
            self.rewind(sim, t.saturating_sub(1));
        }
        let replayed = match t.checked_sub(1) {
            Some(before) if before >= sim.now() => self.advance(sim, before),
            _ => Ok(()),
        };
        while sim.events_run() < event && sim.step_until(t) {}
        self.checkpoint(&**sim);
        replayed
    }

    /// Enters a command at the model's current time and runs what is due now. An invalid command
    /// changes nothing and is not recorded. When later commands exist (the user went back in
    /// time), the current branch is kept aside and a new one continues from here.
    pub fn command(&mut self, sim: &mut Box<dyn Simulation>, mut command: Value) -> Result<(), Vec<PathError>> {
        let at = sim.now();
        // After a Step inside an instant, the instant's other events come first: a replay enters
        // the command after every event of its instant, so the run rebuilds the same.
        sim.run_until(at);
        if let Value::Object(map) = &mut command {
            map.insert("at".into(), Value::from(at));
        }
        sim.enter_command(&command)?;
        if self.applied < self.commands.len() {
            self.branches.push(Branch { commands: self.commands.clone(), forked_at: at });
            if self.branches.len() > MAX_BRANCHES {
                self.branches.remove(0);
            }
            self.commands.truncate(self.applied);
            self.checkpoints.retain(|c| c.at <= at);
        }
        self.commands.push(Entered { at, command });
        self.applied += 1;
        self.undone.clear();
        sim.run_until(at);
        Ok(())
    }

    /// Whether `undo` has a command to take back, and `redo` one to enter again.
    pub fn can_undo(&self) -> bool {
        !self.commands.is_empty() && self.checkpoints.first().is_some_and(|c| c.applied == 0)
    }

    pub fn can_redo(&self) -> bool {
        !self.undone.is_empty()
    }

    /// Takes back the latest command of the current branch and rebuilds the model at the same
    /// instant without it. When that command had forked a new branch (it was entered in the
    /// past), the branch it left behind becomes the current one again, as it was. Returns the
    /// command taken back; `redo` enters it again.
    pub fn undo(&mut self, sim: &mut Box<dyn Simulation>) -> Option<Entered> {
        if !self.can_undo() {
            return None;
        }
        let t = sim.now();
        let cmd = self.commands.pop()?;
        let left = self.commands.len();
        // The branch this command forked off: it starts with the commands before it.
        let forked = self
            .branches
            .last()
            .is_some_and(|b| b.forked_at == cmd.at && b.commands.len() >= left && b.commands[..left] == self.commands[..]);
        if forked {
            if let Some(b) = self.branches.pop() {
                self.commands = b.commands;
            }
        }
        self.rebuild(sim, left, cmd.at, t);
        self.undone.push(cmd.clone());
        Some(cmd)
    }

    /// Enters the command `undo` took back last, at its own instant, and rebuilds the model at
    /// the same instant with it. Commands of the current branch after that instant are kept
    /// aside as a branch, exactly as when it was first entered.
    pub fn redo(&mut self, sim: &mut Box<dyn Simulation>) -> Option<Entered> {
        let cmd = self.undone.pop()?;
        let t = sim.now();
        let keep = self.commands.partition_point(|c| c.at <= cmd.at);
        if keep < self.commands.len() {
            self.branches.push(Branch { commands: self.commands.clone(), forked_at: cmd.at });
            if self.branches.len() > MAX_BRANCHES {
                self.branches.remove(0);
            }
            self.commands.truncate(keep);
        }
        self.commands.push(cmd.clone());
        self.rebuild(sim, keep, cmd.at, t);
        Some(cmd)
    }

    /// Rebuilds the model at `t` after the commands from index `from` on changed, the first of
    /// them at `changed_at`: from the latest checkpoint that had applied none of them and is
    /// not past that instant.
    fn rebuild(&mut self, sim: &mut Box<dyn Simulation>, from: usize, changed_at: Millis, t: Millis) {
        self.checkpoints.retain(|c| c.applied <= from && c.at <= changed_at);
        let Some(cp) = self.checkpoints.last().cloned() else { return };
        *sim = cp.sim.clone_box();
        self.applied = cp.applied;
        let _ = self.advance(sim, t);
    }

    /// Moves the model to time `t`: forward by running (entering commands as their instants
    /// come), backward by restoring a checkpoint and replaying. No command is lost either way.
    pub fn seek(&mut self, sim: &mut Box<dyn Simulation>, t: Millis) {
        if self.rewind(sim, t) {
            let _ = self.advance(sim, t);
        }
    }

    /// The first half of a seek: when `t` is in the past, restores the latest checkpoint at or
    /// before it (cheap: a clone), leaving the replay up to `t` to `advance`, which a caller may
    /// run in slices. False when there is no such checkpoint (nothing changes).
    pub fn rewind(&mut self, sim: &mut Box<dyn Simulation>, t: Millis) -> bool {
        if t >= sim.now() {
            return true;
        }
        let Some(cp) = self.checkpoints.iter().rev().find(|c| c.at <= t).cloned() else { return false };
        *sim = cp.sim.clone_box();
        self.applied = cp.applied;
        true
    }

    /// One step back: to the previous instant at which something happened.
    pub fn step_back(&mut self, sim: &mut Box<dyn Simulation>) {
        let now = sim.now();
        let prev = (0..sim.log_len()).rev().map(|i| sim.log_time(i)).find(|&at| at < now);
        match prev {
            Some(t) => self.seek(sim, t),
            None => {
                if let Some(first) = self.checkpoints.first().cloned() {
                    *sim = first.sim.clone_box();
                    self.applied = first.applied;
                    self.checkpoints.truncate(1);
                }
            }
        }
    }

    /// Makes branch `i` the current one (the current one becomes a branch), at the same instant.
    pub fn switch_branch(&mut self, sim: &mut Box<dyn Simulation>, i: usize) {
        if i >= self.branches.len() {
            return;
        }
        let t = sim.now();
        self.undone.clear();
        let other = self.branches.remove(i);
        let current = std::mem::replace(&mut self.commands, other.commands);
        self.branches.push(Branch { commands: current, forked_at: other.forked_at });
        // Rebuild from the first checkpoint: the branches share only the start for sure.
        self.checkpoints.truncate(1);
        let first = self.checkpoints[0].clone();
        *sim = first.sim.clone_box();
        self.applied = 0;
        let _ = self.advance(sim, t);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::presets::by_file;
    use crate::registry::parse;
    use mqviz_model::log_line;

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
    fn a_seek_in_slices_equals_one_seek() {
        // The UI seeks long runs as rewind + many small advances across frames.
        let mut one = world("consistent-group.json");
        let mut h1 = History::new(&*one);
        h1.seek(&mut one, 90_000);
        h1.command(&mut one, json!({"action": "crashConsumer", "consumer": "ConsumerA"})).unwrap();
        h1.seek(&mut one, 30_000);
        let mut sliced = one.clone_box();
        let mut h2 = h1.clone();
        h1.seek(&mut one, 100_000);
        assert!(h2.rewind(&mut sliced, 100_000));
        let mut t = sliced.now();
        while t < 100_000 {
            t = (t + 777).min(100_000);
            h2.advance(&mut sliced, t).unwrap();
        }
        assert_eq!(render(&*sliced), render(&*one));
        // Backwards: the rewind restores a checkpoint at or before the target.
        assert!(h2.rewind(&mut sliced, 25_000));
        assert!(sliced.now() <= 25_000);
        h2.advance(&mut sliced, 25_000).unwrap();
        assert_eq!(sliced.now(), 25_000);
    }

    #[test]
    fn edits_survive_time_travel() {
        let mut w = world("consistent-group.json");
        let mut h = History::new(&*w);
        h.seek(&mut w, 12_345);
        let sub = json!({"action": "subscribe", "clientId": "ConsumerB", "topic": "TopicTestA", "expression": "TagA"});
        h.command(&mut w, sub).unwrap();
        h.seek(&mut w, 20_000);
        h.command(&mut w, json!({"action": "crashConsumer", "clientId": "ConsumerA"})).unwrap();
        h.seek(&mut w, 90_000);
        let reference = render(&*w);
        // Back before both edits and forward again: both are re-entered at their instants.
        h.seek(&mut w, 10_000);
        assert_eq!(h.commands().len(), 2);
        assert_eq!(h.pending().len(), 2);
        h.seek(&mut w, 90_000);
        assert_eq!(render(&*w), reference);
        assert!(h.pending().is_empty());
    }

    #[test]
    fn an_edit_in_the_past_forks_a_branch() {
        let mut w = world("consistent-group.json");
        let mut h = History::new(&*w);
        h.seek(&mut w, 20_000);
        h.command(&mut w, json!({"action": "crashConsumer", "clientId": "ConsumerA"})).unwrap();
        h.seek(&mut w, 60_000);
        let first = render(&*w);
        h.seek(&mut w, 15_000);
        h.command(&mut w, json!({"action": "stopConsumer", "clientId": "ConsumerB"})).unwrap();
        assert_eq!(h.branches().len(), 1);
        assert_eq!(h.branches()[0].forked_at, 15_000);
        assert_eq!(h.commands().len(), 1, "the new branch has only the new edit");
        h.seek(&mut w, 60_000);
        assert_ne!(render(&*w), first);
        // Switching back gives the first branch's run again.
        h.switch_branch(&mut w, 0);
        assert_eq!(w.now(), 60_000);
        assert_eq!(render(&*w), first);
    }

    #[test]
    fn undo_takes_an_edit_back_and_redo_enters_it_again_at_its_instant() {
        let mut w = world("consistent-group.json");
        let mut h = History::new(&*w);
        h.seek(&mut w, 20_000);
        let crash = json!({"action": "crashConsumer", "clientId": "ConsumerA"});
        h.command(&mut w, crash).unwrap();
        h.seek(&mut w, 60_000);
        let edited = render(&*w);
        let mut plain = world("consistent-group.json");
        plain.run_until(60_000);
        // Undo at 60 s: the run at 60 s is the run without the edit, event for event.
        assert!(h.can_undo());
        let taken = h.undo(&mut w).unwrap();
        assert_eq!(taken.at, 20_000);
        assert_eq!(w.now(), 60_000);
        assert!(h.commands().is_empty());
        assert_eq!(render(&*w), render(&*plain));
        // Redo: the edit is back at 20 s, and the run equals the edited one.
        assert!(h.can_redo());
        h.redo(&mut w).unwrap();
        assert_eq!(h.commands().len(), 1);
        assert_eq!(h.commands()[0].at, 20_000);
        assert_eq!(render(&*w), edited);
        assert!(!h.can_redo());
        // A new edit forgets what could be redone.
        h.undo(&mut w).unwrap();
        h.command(&mut w, json!({"action": "stopConsumer", "clientId": "ConsumerB"})).unwrap();
        assert!(!h.can_redo());
    }

    #[test]
    fn undoing_an_edit_that_forked_a_branch_brings_the_branch_back() {
        let mut w = world("consistent-group.json");
        let mut h = History::new(&*w);
        h.seek(&mut w, 20_000);
        h.command(&mut w, json!({"action": "crashConsumer", "clientId": "ConsumerA"})).unwrap();
        h.seek(&mut w, 15_000);
        h.command(&mut w, json!({"action": "stopConsumer", "clientId": "ConsumerB"})).unwrap();
        assert_eq!(h.branches().len(), 1);
        h.seek(&mut w, 60_000);
        h.undo(&mut w).unwrap();
        assert!(h.branches().is_empty(), "the branch left behind is current again");
        assert_eq!(h.commands().len(), 1);
        assert_eq!(h.commands()[0].at, 20_000);
        let mut first = world("consistent-group.json");
        let mut hf = History::new(&*first);
        hf.seek(&mut first, 20_000);
        hf.command(&mut first, json!({"action": "crashConsumer", "clientId": "ConsumerA"})).unwrap();
        hf.seek(&mut first, 60_000);
        assert_eq!(render(&*w), render(&*first));
        // Redo forks again, as entering it did.
        h.redo(&mut w).unwrap();
        assert_eq!(h.branches().len(), 1);
        assert_eq!(h.branches()[0].forked_at, 15_000);
        assert_eq!(h.commands().len(), 1);
        assert_eq!(h.commands()[0].at, 15_000);
    }

    #[test]
    fn commands_from_a_file_are_entered_when_reached() {
        let mut live = world("consistent-group.json");
        let mut h = History::new(&*live);
        h.seek(&mut live, 12_000);
        h.command(&mut live, json!({"action": "crashConsumer", "clientId": "ConsumerA"})).unwrap();
        h.seek(&mut live, 50_000);
        let mut replayed = world("consistent-group.json");
        let mut r = History::with_commands(&*replayed, h.commands().to_vec());
        r.advance(&mut replayed, 50_000).unwrap();
        assert_eq!(render(&*replayed), render(&*live));
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

    /// Steps `n` events into the first instant after `from` that has more than `n` events.
    fn step_into_a_busy_instant(w: &mut Box<dyn Simulation>, h: &mut History, from: Millis, n: usize) {
        h.seek(w, from);
        loop {
            let t = w.next_event_time().unwrap();
            let mut ahead = w.clone_box();
            let start = ahead.events_run();
            ahead.run_until(t);
            if ahead.events_run() - start > n as u64 {
                for _ in 0..n {
                    assert!(w.step_until(t));
                }
                h.after_advance(&**w);
                return;
            }
            h.seek(w, t);
        }
    }

    #[test]
    fn a_step_inside_an_instant_comes_back_as_the_same_event() {
        for file in ["seed-same-topic-different-tags.json", "kafka-eager-join.json", "pulsar-failover.json"] {
            let mut w = world(file);
            let mut h = History::new(&*w);
            step_into_a_busy_instant(&mut w, &mut h, 1_000, 3);
            assert_eq!(w.next_event_time(), Some(w.now()), "{file}: stopped inside the instant");
            let (t, event, want) = (w.now(), w.events_run(), render(&*w));
            // From the start, as a link opens it.
            let mut again = world(file);
            let mut h2 = History::new(&*again);
            h2.advance(&mut again, 0).unwrap();
            h2.advance_to_event(&mut again, t, event).unwrap();
            assert_eq!((again.now(), again.events_run()), (t, event), "{file}");
            assert_eq!(render(&*again), want, "{file}");
            // From later in the run, as the page does when a link opens over a run.
            h.seek(&mut w, t + 5_000);
            h.advance_to_event(&mut w, t, event).unwrap();
            assert_eq!(render(&*w), want, "{file}");
        }
    }

    #[test]
    fn an_edit_after_a_step_inside_an_instant_replays_the_same() {
        let mut w = world("seed-same-topic-different-tags.json");
        let mut h = History::new(&*w);
        step_into_a_busy_instant(&mut w, &mut h, 1_000, 2);
        h.command(&mut w, json!({"action": "stopConsumer", "clientId": "ConsumerA"})).unwrap();
        h.seek(&mut w, 30_000);
        let want = render(&*w);
        let mut again = world("seed-same-topic-different-tags.json");
        let mut h2 = History::with_commands(&*again, h.commands().to_vec());
        h2.advance(&mut again, 30_000).unwrap();
        assert_eq!(render(&*again), want);
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
