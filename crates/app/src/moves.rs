//! Who owns each partition over a whole run, and every change of owner, read from the run itself.
//!
//! The comparison lists the partitions that moved on each side. A move belongs to the rebalance
//! that made it, so it is read from a run ahead (a clone of the run's start, with its commands),
//! instant by instant: after every instant whose log says an assignment changed or a consumer
//! started or stopped, the owners are read off the neutral `View` and compared with the owners
//! before. The list is then the same however the playhead got where it is (played, stepped,
//! scrubbed or sent to the end), which a list built from the owners seen at each frame is not.

use std::collections::BTreeMap;

use crate::history::{Entered, History};
use mqviz_engine::sort::StableSort;
use mqviz_engine::Millis;
use mqviz_model::{Simulation, Trace, View};

/// Logs beyond this many entries are not scanned (the moves of a huge run cover its start).
const MAX_AHEAD_EVENTS: usize = 400_000;

/// One partition changing owner: from one consumer to another, directly or after a time with
/// no owner (a RocketMQ queue released before its new owner's rebalance, an eager revocation),
/// stamped with the instant the new owner took it. A partition released and not taken again
/// (yet) is a move `to` "nobody", stamped with its release. A partition's first owner is not a
/// move, and neither is a time without an owner that ends with the same owner again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    pub at: Millis,
    pub partition: String,
    /// Consumer names joined by `+`, or `nobody`.
    pub from: String,
    pub to: String,
    /// When the partition lost its previous owner, if it had no owner for a while.
    pub unowned_since: Option<Millis>,
}

/// A time during which a partition that had an owner had none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    pub partition: String,
    pub from: Millis,
    /// `None` while it lasts.
    pub to: Option<Millis>,
}

/// One change of owner as read at an instant.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Transition {
    at: Millis,
    partition: String,
    to: String,
}

/// Every change of owner of a run up to `until`, in time order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Moves {
    transitions: Vec<Transition>,
    /// How far the run was read: `until`, or less when the log grew past the scan's budget.
    pub read_until: Millis,
}

const NOBODY: &str = "nobody";

impl Moves {
    /// The moves and the times without an owner, as they stand at `t`.
    pub fn at(&self, t: Millis) -> (Vec<Move>, Vec<Gap>) {
        let upto = &self.transitions[..self.transitions.partition_point(|m| m.at <= t)];
        // Per partition: its last owner, and since when it has had none.
        let mut state: BTreeMap<&str, (Option<&str>, Option<Millis>)> = BTreeMap::new();
        let mut moves = Vec::new();
        let mut gaps = Vec::new();
        for tr in upto {
            let (owner, released) = state.entry(&tr.partition).or_insert((None, None));
            if tr.to == NOBODY {
                if owner.is_some() && released.is_none() {
                    *released = Some(tr.at);
                }
                continue;
            }
            if let Some(since) = released.take() {
                gaps.push(Gap { partition: tr.partition.clone(), from: since, to: Some(tr.at) });
            }
            if let Some(before) = owner.filter(|o| *o != tr.to) {
                let since = gaps.last().filter(|g| g.partition == tr.partition && g.to == Some(tr.at)).map(|g| g.from);
                moves.push(Move {
                    at: tr.at,
                    partition: tr.partition.clone(),
                    from: before.to_string(),
                    to: tr.to.clone(),
                    unowned_since: since,
                });
            }
            *owner = Some(&tr.to);
        }
        for (partition, (owner, released)) in state {
            if let (Some(before), Some(since)) = (owner, released) {
                moves.push(Move {
                    at: since,
                    partition: partition.to_string(),
                    from: before.to_string(),
                    to: NOBODY.into(),
                    unowned_since: Some(since),
                });
                gaps.push(Gap { partition: partition.to_string(), from: since, to: None });
            }
        }
        moves.stable_sort_by_key(|m| m.at);
        gaps.stable_sort_by_key(|g| g.from);
        (moves, gaps)
    }
}

/// Who owns each partition, by a label that reads the same in two runs of one scenario
/// (`q3`, or `TopicA q3` when several topics are shown).
pub fn owners(view: &View) -> BTreeMap<String, String> {
    let multi = view.topics.iter().filter(|t| !t.internal).count() > 1;
    let mut out = BTreeMap::new();
    for t in view.topics.iter().filter(|t| !t.internal) {
        for p in &t.partitions {
            let label = if multi { format!("{} {}", t.name, p.label) } else { p.label.clone() };
            let who: Vec<&str> =
                p.owners.iter().filter_map(|&o| view.consumers.get(o as usize)).map(|c| c.name.as_str()).collect();
            out.insert(label, if who.is_empty() { "nobody".to_string() } else { who.join("+") });
        }
    }
    out
}

/// The moves of the run that starts as `start` and enters `commands` at their instants, up to
/// `until` (computed on a clone; `start` is left as it is).
pub fn compute(start: &dyn Simulation, commands: &[Entered], until: Millis) -> Moves {
    compute_run(start, commands, until).0
}

/// `compute`, and the run where it stopped reading with the commands still to enter: a caller
/// that needs the run's end (the review) continues it instead of running it again.
pub fn compute_run(start: &dyn Simulation, commands: &[Entered], until: Millis) -> (Moves, Box<dyn Simulation>, History) {
    let mut ahead = start.clone_box();
    let mut history = History::replay(commands.to_vec());
    let mut before = owners(&ahead.view());
    let mut read = ahead.log_len();
    // Owners the run starts with (a restored snapshot's members) are where moves start from.
    let start_at = ahead.now();
    let mut transitions: Vec<Transition> = before
        .iter()
        .filter(|(_, to)| to.as_str() != NOBODY)
        .map(|(partition, to)| Transition { at: start_at, partition: partition.clone(), to: to.clone() })
        .collect();
    let mut read_until = until;
    loop {
        let next_event = ahead.next_event_time();
        let next_command = history.pending().first().map(|c| c.at);
        let Some(t) = [next_event, next_command].into_iter().flatten().min() else { break };
        if t > until {
            break;
        }
        let (now, ran) = (ahead.now(), ahead.events_run());
        let _ = history.advance(&mut ahead, t);
        // An instant that neither ran an event nor entered a command would be read forever.
        // (An event may log nothing: a restored snapshot's first poll, at t=0, does not.)
        if ahead.events_run() == ran && ahead.now() == now && history.pending().first().map(|c| c.at) == next_command {
            break;
        }
        let mut changed = false;
        ahead.trace(read, ahead.log_len(), &mut |_, fact| {
            changed |= matches!(fact, Trace::Reassigned { .. } | Trace::Lifecycle { .. });
        });
        read = ahead.log_len();
        if changed {
            let after = owners(&ahead.view());
            for (partition, to) in &after {
                if before.get(partition).map(String::as_str).unwrap_or(NOBODY) != to {
                    transitions.push(Transition { at: t, partition: partition.clone(), to: to.clone() });
                }
            }
            before = after;
        }
        if read > MAX_AHEAD_EVENTS {
            read_until = t;
            break;
        }
    }
    (Moves { transitions, read_until }, ahead, history)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::by_file;
    use crate::registry::parse;

    fn run(file: &str) -> Box<dyn Simulation> {
        parse(by_file(file).unwrap().text).unwrap()
    }

    fn moved(moves: &[Move]) -> Vec<(Millis, &str, &str, &str)> {
        moves.iter().map(|m| (m.at, m.partition.as_str(), m.from.as_str(), m.to.as_str())).collect()
    }

    #[test]
    fn avg_moves_six_queues_where_consistent_hash_moves_three() {
        // The comparison preset: a fourth consumer joins a group of three over twelve queues.
        let file = "compare-join-avg-vs-consistent-hash.json";
        let m = run(file);
        let avg = compute(&*m, &[], m.until());
        assert_eq!(avg.read_until, m.until());
        let (moves, gaps) = avg.at(m.until());
        assert_eq!(moves.len(), 6, "{:?}", moved(&moves));
        // Three of them had no owner between the old owner's rebalance and billing-4's.
        let via_nobody: Vec<&Move> = moves.iter().filter(|m| m.unowned_since.is_some()).collect();
        assert_eq!(via_nobody.len(), 3, "{:?}", moved(&moves));
        assert!(via_nobody.iter().all(|m| m.to == "billing-4"));
        assert_eq!(gaps.len(), 3);
        let variant =
            mqviz_engine::scenario::compare_variant(&mqviz_engine::json_path::parse_json(by_file(file).unwrap().text).unwrap())
                .unwrap()
                .1;
        let ch = crate::registry::parse_value(&variant).unwrap();
        let (ch_moves, _) = compute(&*ch, &[], ch.until()).at(ch.until());
        assert_eq!(ch_moves.len(), 3, "{:?}", moved(&ch_moves));
        assert!(ch_moves.iter().all(|m| m.to == "billing-4"));
    }

    #[test]
    fn moves_are_stamped_with_their_rebalance_whatever_the_playhead_did() {
        let file = "compare-join-avg-vs-consistent-hash.json";
        let m = run(file);
        let all = compute(&*m, &[], m.until());
        // Every move happens at an instant whose log says an assignment changed.
        let mut ahead = run(file);
        ahead.run_until(ahead.until());
        let mut reassigned = Vec::new();
        ahead.trace(0, ahead.log_len(), &mut |i, f| {
            if matches!(f, Trace::Reassigned { .. } | Trace::Lifecycle { .. }) {
                reassigned.push(ahead.log_time(i));
            }
        });
        let (moves, _) = all.at(m.until());
        for mv in &moves {
            assert!(reassigned.contains(&mv.at), "{mv:?}");
        }
        // At 20.5 s the released queues have no owner yet: they are moves to nobody so far.
        let (mid, gaps) = all.at(20_500);
        assert!(mid.iter().any(|m| m.to == "nobody" && m.unowned_since.is_some()), "{:?}", moved(&mid));
        assert!(gaps.iter().any(|g| g.to.is_none()));
        // Before the join nothing has moved: first owners are not moves.
        assert!(all.at(19_000).0.is_empty());
        // The owners the transitions end with are the run's at its end.
        let mut last = owners(&run(file).view());
        for tr in &all.transitions {
            last.insert(tr.partition.clone(), tr.to.clone());
        }
        assert_eq!(last, owners(&ahead.view()));
    }

    #[test]
    fn an_eager_rebalance_idles_every_partition() {
        let file = "kafka-eager-join.json";
        let m = run(file);
        let a = compute(&*m, &[], m.until());
        assert_eq!(a, compute(&*m, &[], m.until()));
        let (moves, gaps) = a.at(m.until());
        let idle: std::collections::BTreeSet<&str> = gaps.iter().map(|g| g.partition.as_str()).collect();
        assert_eq!(idle.len(), 12, "EAGER revokes all twelve partitions: {gaps:?}");
        assert!(!moves.is_empty() && moves.len() < 12, "{:?}", moved(&moves));
    }

    /// A restored snapshot's members own partitions from t=0, and its first events (their
    /// polls at t=0) log nothing: the moves after them were once never read, and a move from a
    /// starting owner was not one.
    #[test]
    fn moves_after_an_instant_that_logged_nothing_are_read() {
        let text = r#"{"format": "mqviz-scenario/1", "broker": "kafka", "until": 60000, "brokers": [{"name": "b0"}],
            "topics": [{"name": "t", "partitions": 2, "logEndOffsets": [5, 5]}],
            "groups": [{"name": "g", "committed": {"t-0": 5, "t-1": 5}, "consumers": [
                {"clientId": "a", "subscribe": ["t"], "assigned": ["t-0"]},
                {"clientId": "b", "subscribe": ["t"], "assigned": ["t-1"]}]}],
            "timeline": [{"at": 10000, "action": "crashConsumer", "consumer": "b"}]}"#;
        let m = parse(text).unwrap();
        let (moves, gaps) = compute(&*m, &[], m.until()).at(m.until());
        assert_eq!(moves.len(), 1, "{:?}", moved(&moves));
        assert_eq!((moves[0].partition.as_str(), moves[0].from.as_str(), moves[0].to.as_str()), ("p1", "b", "a"));
        assert_eq!(gaps.first().map(|g| g.from), Some(10_000), "without an owner from the crash");
    }
}
