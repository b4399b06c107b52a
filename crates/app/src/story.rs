//! The story of a run: its key moments (sends, table overwrites, rebalances, stops, losses) and
//! when anything visible happens, read from the neutral `Trace` of a run to its `until`. The UI
//! turns it into chapter marks on the scrubber, a "next key moment" control and pacing: playback
//! slows down around key moments and skips stretches where nothing visible happens.
//!
//! A story is computed on a clone run ahead to the end (the future is determined by the scenario,
//! the seed and the commands entered so far), so marks are known before playback reaches them.

use crate::history::{Entered, History};
use mqviz_engine::sort::StableSort;
use mqviz_engine::Millis;
use mqviz_model::{MomentKind, Simulation, Trace};

/// Logs beyond this many entries are not scanned ahead (a story of a huge run covers its start).
const MAX_AHEAD_EVENTS: usize = 400_000;

/// One chapter mark: moments of one kind close together, merged.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub at: Millis,
    pub kind: MomentKind,
    /// What it holds: consumers for the kinds that `count_each`, instants for the others.
    pub count: u32,
    /// The last moment merged into it.
    pub last: Millis,
}

impl Mark {
    pub fn label(&self) -> String {
        if self.count > 1 && self.kind.says_count() {
            format!("{} ×{}", self.kind.label(), self.count)
        } else {
            self.kind.label().to_string()
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Story {
    pub until: Millis,
    /// Key moments, merged, in time order.
    pub marks: Vec<Mark>,
    /// Sorted, distinct instants at which messages move (stored, delivered, dropped).
    activity: Vec<Millis>,
    /// Sorted (instant, kind) of every key moment, unmerged: pacing slows around each.
    moments: Vec<(Millis, MomentKind)>,
}

/// One key moment with how many consumers or messages it is about.
type Moment = (Millis, MomentKind, u32);

/// How much slower than normal a key moment plays, and how far around it (simulated ms).
fn slow_zone(kind: MomentKind) -> (f64, Millis) {
    match kind {
        // Sim ms per wall ms at most: an overwrite burst of 10 ms then takes about a second.
        MomentKind::Overwrite => (0.01, 20),
        MomentKind::Rebalance => (0.05, 20),
        MomentKind::Stop | MomentKind::Crash => (0.1, 20),
        MomentKind::Loss | MomentKind::DeadLetter => (0.2, 5),
        MomentKind::Send => (1.0, 5),
    }
}

impl Story {
    /// The story of `sim` from its start to its `until` (computed on a clone).
    pub fn compute(sim: &dyn Simulation) -> Story {
        Story::compute_with(sim, &[])
    }

    /// The story of `sim` with `pending` commands still to be entered at their instants (edits
    /// kept across time travel), to its `until` or the last of them.
    pub fn compute_with(sim: &dyn Simulation, pending: &[Entered]) -> Story {
        let mut ahead = sim.clone_box();
        let until = ahead.until().max(pending.last().map(|c| c.at).unwrap_or(0)).max(ahead.now());
        let mut history = History::replay(pending.to_vec());
        // Run ahead in slices so a huge run stops at the event budget.
        let mut t = ahead.now();
        while t < until && ahead.log_len() < MAX_AHEAD_EVENTS {
            t = (t + 1_000).min(until);
            let _ = history.advance(&mut ahead, t);
        }
        Story::from_log(&*ahead, until)
    }

    /// Reads the moments of a model's log as it is.
    pub fn from_log(sim: &dyn Simulation, until: Millis) -> Story {
        let mut counted: Vec<Moment> = Vec::new();
        let mut activity: Vec<Millis> = Vec::new();
        sim.trace(0, sim.log_len(), &mut |i, t| {
            let at = sim.log_time(i);
            if matches!(t, Trace::Stored { .. } | Trace::Delivered { .. } | Trace::Dropped { .. }) && activity.last() != Some(&at)
            {
                activity.push(at);
            }
            let Some(k) = t.moment() else { return };
            match counted.last_mut() {
                Some((a, kind, n)) if (*a, *kind) == (at, k) => *n += u32::from(k.counts_each()),
                _ => counted.push((at, k, 1)),
            }
        });
        activity.dedup();
        let marks = merge(&counted, until);
        let moments = counted.iter().map(|&(at, k, _)| (at, k)).collect();
        Story { until, marks, activity, moments }
    }

    /// The first mark strictly after `t`.
    pub fn next_mark(&self, t: Millis) -> Option<&Mark> {
        self.marks.iter().find(|m| m.at > t)
    }

    /// How far to advance from `now` in `wall_ms` of playback at `speed` (simulated ms per wall
    /// ms): slower inside a key moment's zone, and straight over stretches where nothing visible
    /// happens.
    pub fn paced_advance(&self, now: Millis, speed: f64, wall_ms: f64) -> f64 {
        let plain = (speed * wall_ms).max(0.0);
        // Inside (or entering) a slow zone: cap the speed.
        let reach = now + plain.ceil() as Millis + 1;
        let mut cap = f64::INFINITY;
        let mut inside = false;
        let mut first_start = Millis::MAX;
        let from = self.moments.partition_point(|(at, _)| *at + 25 < now);
        for &(at, kind) in &self.moments[from..] {
            let (slow, half) = slow_zone(kind);
            let start = at.saturating_sub(half);
            if start > reach {
                break;
            }
            if now <= at + half && slow < speed {
                cap = cap.min(slow);
                inside |= start <= now;
                first_start = first_start.min(start);
            }
        }
        if cap < speed {
            // Inside a zone: play it slowly (fractions of a simulated ms add up across frames in
            // the caller). Before one: go exactly to where it starts.
            return if inside { cap * wall_ms } else { first_start.saturating_sub(now) as f64 };
        }
        // Idle: skip to shortly before the next thing that moves.
        let next_thing = [
            self.activity.get(self.activity.partition_point(|&a| a <= now)).copied(),
            self.moments.get(self.moments.partition_point(|(a, _)| *a <= now)).map(|m| m.0),
        ]
        .into_iter()
        .flatten()
        .min();
        let lead = (speed * 400.0) as Millis;
        match next_thing {
            Some(next) if next > now + plain as Millis + lead * 3 => ((next - lead - now) as f64).max(plain),
            None if now < self.until && plain > 0.0 => {
                // Nothing more will move: hurry to the end (but let the viewer see it end).
                (((self.until - now) / 8) as f64).max(plain)
            }
            _ => plain,
        }
    }
}

/// Merges moments of one kind that are close into one mark: 1/200 of the run for the rare
/// kinds, 1/40 for losses and dead letters, which come in streams. Sends are routine, not the
/// lesson: they fold into one quiet mark where the first one happens.
fn merge(moments: &[Moment], until: Millis) -> Vec<Mark> {
    let near = |k: MomentKind| match k {
        MomentKind::Loss | MomentKind::DeadLetter => (until / 40).max(50),
        _ => (until / 200).max(50),
    };
    let mut marks: Vec<Mark> = Vec::new();
    for &(at, kind, n) in moments {
        let open = match kind {
            MomentKind::Send => marks.iter_mut().find(|m| m.kind == kind),
            _ => marks.iter_mut().rev().take(6).find(|m| m.kind == kind && at.saturating_sub(m.at) <= near(kind)),
        };
        match open {
            Some(m) => {
                m.count += n;
                m.last = at;
            }
            None => marks.push(Mark { at, kind, count: n, last: at }),
        }
    }
    marks.stable_sort_by_key(|m| (m.at, m.kind));
    marks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::by_file;
    use crate::registry::parse;

    fn story(file: &str) -> Story {
        Story::compute(&*parse(by_file(file).unwrap().text).unwrap())
    }

    #[test]
    fn the_seed_story_has_its_overwrites_rebalances_and_losses() {
        let s = story("seed-same-topic-different-tags.json");
        let kinds: Vec<MomentKind> = s.marks.iter().map(|m| m.kind).collect();
        for k in [MomentKind::Overwrite, MomentKind::Rebalance, MomentKind::Send, MomentKind::Loss, MomentKind::Stop] {
            assert!(kinds.contains(&k), "{k:?} missing from {:?}", s.marks);
        }
        assert!(
            s.marks.iter().any(|m| m.kind == MomentKind::Overwrite && (5_000..5_100).contains(&m.at) && m.count >= 2),
            "the 5 s burst (ConsumerB's heartbeat, then ConsumerA's answer): {:?}",
            s.marks
        );
    }

    #[test]
    fn pacing_slows_around_the_overwrite_burst_and_skips_the_idle_stretch() {
        let s = story("seed-same-topic-different-tags.json");
        let overwrite = s.marks.iter().find(|m| m.kind == MomentKind::Overwrite && m.at > 5_000).unwrap().at;
        // At 10x, 16 ms of wall time is 160 simulated ms normally; around the burst, far less.
        let near = s.paced_advance(overwrite - 2, 10.0, 16.0);
        assert!(near <= 2.0, "advance near the overwrite: {near}");
        // Playing the burst at 10x takes more than half a second of wall time.
        let (mut t, mut carry, mut wall) = (overwrite - 30, 0.0, 0.0);
        while t < overwrite + 30 {
            let adv = s.paced_advance(t, 10.0, 16.0) + carry;
            t += adv.floor() as Millis;
            carry = adv - adv.floor();
            wall += 16.0;
        }
        assert!(wall >= 500.0, "the burst played in {wall} ms of wall time");
        // The idle stretch between the last consumption and the stop at 60 s is skipped.
        let quiet = 30_000;
        let jump = s.paced_advance(quiet, 10.0, 16.0);
        assert!(jump > 10_000.0, "from {quiet}: {jump}");
    }

    /// A snapshot's members own their partitions from t=0: that is where the run starts, not a
    /// rebalance, so no rebalance mark stands at t=0 (one did, saying what had not happened).
    #[test]
    fn a_snapshot_start_is_no_rebalance() {
        let text = r#"{"format": "mqviz-scenario/1", "broker": "kafka", "until": 30000, "brokers": [{"name": "b0"}],
            "topics": [{"name": "t", "partitions": 2, "logEndOffsets": [5, 5]}],
            "groups": [{"name": "g", "committed": {"t-0": 1, "t-1": 5}, "consumers": [
                {"clientId": "a", "subscribe": ["t"], "assigned": ["t-0"]},
                {"clientId": "b", "subscribe": ["t"], "assigned": ["t-1"]}]}],
            "timeline": [{"at": 10000, "action": "addConsumer", "group": "g", "consumer": {"clientId": "c", "subscribe": ["t"]}}]}"#;
        let s = Story::compute(&*parse(text).unwrap());
        let rebalances: Vec<Millis> = s.marks.iter().filter(|m| m.kind == MomentKind::Rebalance).map(|m| m.at).collect();
        assert!(!rebalances.is_empty() && rebalances.iter().all(|at| *at >= 10_000), "{:?}", s.marks);
    }

    /// The same for Pulsar: consumers connected in the snapshot and their active picks are where
    /// the run starts; a consumer joining later is a rebalance.
    #[test]
    fn a_pulsar_snapshot_start_is_no_rebalance() {
        let text = r#"{"format": "mqviz-scenario/1", "broker": "pulsar", "until": 30000,
            "topics": [{"name": "t", "partitions": 2, "entries": [5, 5]}],
            "consumers": [{"name": "a", "topic": "t", "subscription": "s", "subscriptionType": "Failover"},
                          {"name": "b", "topic": "t", "subscription": "s", "subscriptionType": "Failover"},
                          {"name": "c", "topic": "t", "subscription": "s", "subscriptionType": "Failover", "startAt": 10000}],
            "subscriptions": [{"topic": "t", "name": "s", "cursors": [{"markDeletePosition": 1}, {"markDeletePosition": 4}],
                               "connected": ["a", "b"]}]}"#;
        let s = Story::compute(&*parse(text).unwrap());
        let rebalances: Vec<Millis> = s.marks.iter().filter(|m| m.kind == MomentKind::Rebalance).map(|m| m.at).collect();
        assert!(!rebalances.is_empty() && rebalances.iter().all(|at| *at >= 10_000), "{:?}", s.marks);
    }
}
