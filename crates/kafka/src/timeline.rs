//! State spans for a Gantt view, read from the log: each consumer's FetchState per partition
//! (UNASSIGNED gaps make an eager stop-the-world visible at a glance), each classic group's state
//! and each KIP-848 member's reconciliation state on the coordinator; each classic member's own
//! membership state (`member_lanes`).

use std::collections::BTreeMap;

use super::events::Event;
use super::world::World;
use mqviz_engine::Millis;

/// One lane's state from `from` until `to` (`None`: still in it when the log ends).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub state: &'static str,
    pub from: Millis,
    pub to: Option<Millis>,
}

/// A lane of spans, named by what it follows (`c1 orders-3`, `group billing`, `member c2`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    pub name: String,
    pub spans: Vec<Span>,
}

fn push(lanes: &mut BTreeMap<String, Vec<Span>>, name: String, state: &'static str, at: Millis) {
    let spans = lanes.entry(name).or_default();
    if let Some(last) = spans.last_mut() {
        if last.to.is_none() {
            if last.state == state {
                return;
            }
            last.to = Some(at);
        }
    }
    spans.push(Span { state, from: at, to: None });
}

fn lanes(map: BTreeMap<String, Vec<Span>>) -> Vec<Lane> {
    map.into_iter().map(|(name, spans)| Lane { name, spans }).collect()
}

/// Per consumer and partition: INITIALIZING, AWAIT_RESET, AWAIT_VALIDATION, FETCHING, UNASSIGNED.
pub fn fetch_state_lanes(w: &World) -> Vec<Lane> {
    let mut out = BTreeMap::new();
    for e in w.log.entries() {
        match &e.kind {
            Event::FetchStateChanged { client, part, to, .. } => push(&mut out, format!("{client} {part}"), to, e.at),
            Event::ConsumerCrashed { client } | Event::ConsumerClosed { client, .. } => {
                let prefix = format!("{client} ");
                for (_, spans) in out.iter_mut().filter(|(n, _)| n.starts_with(&prefix)) {
                    if let Some(last) = spans.last_mut().filter(|s| s.to.is_none() && s.state != "UNASSIGNED") {
                        last.to = Some(e.at);
                        spans.push(Span { state: "UNASSIGNED", from: e.at, to: None });
                    }
                }
            }
            _ => {}
        }
    }
    lanes(out)
}

/// Per classic group its coordinator state; per KIP-848 member its reconciliation state.
pub fn group_lanes(w: &World) -> Vec<Lane> {
    let mut out = BTreeMap::new();
    for e in w.log.entries() {
        match &e.kind {
            Event::GroupStateChanged { group, to, .. } => push(&mut out, format!("group {group}"), to, e.at),
            Event::MemberReconciled { group, client, state, .. } => {
                push(&mut out, format!("{group} member {client}"), state, e.at)
            }
            Event::MemberFenced { group, client, .. } => push(&mut out, format!("{group} member {client}"), "GONE", e.at),
            Event::StaticMemberLeft { group, client } => {
                push(&mut out, format!("{group} member {client}"), "LEFT (epoch -2)", e.at)
            }
            _ => {}
        }
    }
    lanes(out)
}

/// Per classic-protocol consumer its membership state as the client sees it (`member c1`):
/// PREPARING_REBALANCE from its JoinGroup, COMPLETING_REBALANCE once the coordinator completes
/// the join, STABLE from its SyncGroup answer; UNJOINED, CLOSED, CRASHED or FAILED otherwise. Next
/// to the FetchState lanes this tells a member that waits for the rebalance (EAGER: nothing
/// fetched) from one that rejoins while it keeps fetching (COOPERATIVE).
pub fn member_lanes(w: &World) -> Vec<Lane> {
    let mut out = BTreeMap::new();
    // Only consumers that take part in a classic group get a membership lane.
    let mut joined = std::collections::BTreeSet::new();
    let group_of = |client: &str| w.consumers.iter().find(|c| &*c.name == client).map(|c| c.group);
    let lane = |client: &str| format!("member {client}");
    for e in w.log.entries() {
        match &e.kind {
            Event::ConsumerStarted { client, .. } => push(&mut out, lane(client), "UNJOINED", e.at),
            Event::JoinSent { client, .. } => {
                joined.insert(lane(client));
                push(&mut out, lane(client), "PREPARING_REBALANCE", e.at)
            }
            Event::JoinCompleted { group, .. } => {
                let g = w.find_group(group);
                let joining: Vec<String> = out
                    .iter()
                    .filter(|(name, spans)| {
                        spans.last().is_some_and(|s| s.to.is_none() && s.state == "PREPARING_REBALANCE")
                            && group_of(name.trim_start_matches("member ")) == g
                    })
                    .map(|(name, _)| name.clone())
                    .collect();
                for name in joining {
                    push(&mut out, name, "COMPLETING_REBALANCE", e.at);
                }
            }
            Event::Assigned { client, .. } => push(&mut out, lane(client), "STABLE", e.at),
            Event::JoinRejected { client, .. } | Event::PollTimeoutExpired { client, .. } if out.contains_key(&lane(client)) => {
                push(&mut out, lane(client), "UNJOINED", e.at)
            }
            Event::ConsumerClosed { client, .. } => push(&mut out, lane(client), "CLOSED", e.at),
            Event::ConsumerCrashed { client } => push(&mut out, lane(client), "CRASHED", e.at),
            Event::PollThrew { client, .. } => push(&mut out, lane(client), "FAILED", e.at),
            _ => {}
        }
    }
    out.retain(|name, _| joined.contains(name));
    lanes(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_scenario;
    use mqviz_model::preset_files;

    fn run(file: &str) -> World {
        let mut w = World::new(parse_scenario(&preset_files::text(file)).unwrap());
        w.run_to_end();
        w
    }

    #[test]
    fn an_eager_rebalance_shows_as_unassigned_gaps() {
        let w = run("kafka-eager-join.json");
        let lanes = fetch_state_lanes(&w);
        let c1 = lanes.iter().find(|l| l.name == "c1 orders-0").unwrap();
        let states: Vec<&str> = c1.spans.iter().map(|s| s.state).collect();
        assert_eq!(&states[..4], ["INITIALIZING", "AWAIT_RESET", "FETCHING", "UNASSIGNED"], "{states:?}");
        let gap = &c1.spans[3];
        assert!(gap.to.unwrap() - gap.from > 1_000, "{gap:?}");
        let groups = group_lanes(&w);
        assert!(groups[0].spans.iter().any(|s| s.state == "PREPARING_REBALANCE"));
    }

    #[test]
    fn kip848_members_show_their_reconciliation_states() {
        let w = run("kafka-kip848-reconciliation.json");
        let lanes = group_lanes(&w);
        let c3 = lanes.iter().find(|l| l.name == "fulfilment member c3").unwrap();
        let states: Vec<&str> = c3.spans.iter().map(|s| s.state).collect();
        assert_eq!(&states[..3], ["UNRELEASED_PARTITIONS", "STABLE", "LEFT (epoch -2)"], "{states:?}");
    }

    #[test]
    fn classic_members_wait_in_an_eager_rebalance_but_keep_fetching_in_a_cooperative_one() {
        let eager = run("kafka-eager-join.json");
        let lanes = member_lanes(&eager);
        let c1 = lanes.iter().find(|l| l.name == "member c1").unwrap();
        let states: Vec<&str> = c1.spans.iter().map(|s| s.state).collect();
        assert_eq!(
            &states[..5],
            ["UNJOINED", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE", "PREPARING_REBALANCE"],
            "{states:?}"
        );
        assert_eq!(lanes.len(), 4);
        let coop = run("kafka-cooperative-join.json");
        let c4 = member_lanes(&coop).into_iter().find(|l| l.name == "member c4").unwrap();
        assert!(c4.spans.iter().any(|s| s.state == "STABLE"), "{c4:?}");
        // KIP-848 members have no classic membership lane.
        assert!(member_lanes(&run("kafka-kip848-reconciliation.json")).is_empty());
    }
}
