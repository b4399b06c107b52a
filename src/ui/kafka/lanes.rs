//! The Gantt's rows, read from the Kafka world (pure, tested natively): per group its state lane,
//! then per consumer its membership lane and one FetchState lane per partition it ever held; and
//! the stop-the-world windows, stretches in which a group with live members fetched none of the
//! partitions it had been fetching.

use std::collections::{BTreeMap, BTreeSet};

use crate::sim::engine::Millis;
use crate::sim::kafka::events::Event;
use crate::sim::kafka::timeline::{fetch_state_lanes, group_lanes, member_lanes, Span};
use crate::sim::kafka::world::World;

/// Windows shorter than this are the ordinary hand-over of one partition, not a stop.
pub const MIN_STOP_MS: Millis = 50;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// A classic group's coordinator state.
    Group,
    /// A consumer's membership (classic client state, or its KIP-848 reconciliation state).
    Member,
    /// One consumer's FetchState for one partition.
    Partition,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub kind: RowKind,
    /// What the row is labelled with: the group, the consumer or the partition.
    pub label: String,
    /// The consumer it belongs to (member and partition rows).
    pub consumer: Option<String>,
    pub group: String,
    pub spans: Vec<Span>,
}

impl Row {
    /// The state at `t`, if the row has one then.
    pub fn state_at(&self, t: Millis) -> Option<&'static str> {
        self.spans.iter().find(|s| s.from <= t && s.to.is_none_or(|to| t < to)).map(|s| s.state)
    }
}

/// A stretch in which a group fetched nothing although it had live members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopWindow {
    pub group: String,
    pub from: Millis,
    /// `None`: still stopped now.
    pub to: Option<Millis>,
    /// Partitions the group had been fetching before the window.
    pub partitions: usize,
    /// The group was rebalancing during it (classic PREPARING / COMPLETING_REBALANCE).
    pub rebalance: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GanttData {
    pub rows: Vec<Row>,
    pub windows: Vec<StopWindow>,
    pub now: Millis,
    pub until: Millis,
}

/// `orders-10` after `orders-9`: topic, then the partition number.
fn partition_order(label: &str) -> (String, u64) {
    match label.rsplit_once('-') {
        Some((t, p)) => (t.to_string(), p.parse().unwrap_or(0)),
        None => (label.to_string(), 0),
    }
}

/// When each consumer was alive (started and not yet closed, crashed or failed).
fn alive_spans(w: &World) -> BTreeMap<String, Vec<(Millis, Option<Millis>)>> {
    let mut out: BTreeMap<String, Vec<(Millis, Option<Millis>)>> = BTreeMap::new();
    for e in w.log.entries() {
        match &e.kind {
            Event::ConsumerStarted { client, .. } => {
                let spans = out.entry(client.to_string()).or_default();
                if spans.last().is_none_or(|s| s.1.is_some()) {
                    spans.push((e.at, None));
                }
            }
            Event::ConsumerClosed { client, .. } | Event::ConsumerCrashed { client } | Event::PollThrew { client, .. } => {
                if let Some(last) = out.get_mut(&**client).and_then(|s| s.last_mut()).filter(|s| s.1.is_none()) {
                    last.1 = Some(e.at);
                }
            }
            _ => {}
        }
    }
    out
}

fn alive_at(spans: &[(Millis, Option<Millis>)], t: Millis) -> bool {
    spans.iter().any(|&(from, to)| from <= t && to.is_none_or(|to| t < to))
}

/// The rows of the Gantt, group by group, in the world's order.
pub fn rows(w: &World) -> Vec<Row> {
    let mut fetch: BTreeMap<String, Vec<Span>> = fetch_state_lanes(w).into_iter().map(|l| (l.name, l.spans)).collect();
    let mut members: BTreeMap<String, Vec<Span>> = member_lanes(w).into_iter().map(|l| (l.name, l.spans)).collect();
    let mut groups: BTreeMap<String, Vec<Span>> = group_lanes(w).into_iter().map(|l| (l.name, l.spans)).collect();
    let mut out = Vec::new();
    for g in &w.groups {
        let group = g.name.to_string();
        if let Some(spans) = groups.remove(&format!("group {group}")) {
            out.push(Row { kind: RowKind::Group, label: group.clone(), consumer: None, group: group.clone(), spans });
        }
        for c in w.consumers.iter().filter(|c| w.groups[c.group].name == g.name) {
            let client = c.client_id.to_string();
            let member = members.remove(&format!("member {client}")).or_else(|| groups.remove(&format!("{group} member {client}")));
            let prefix = format!("{client} ");
            let mut parts: Vec<(String, Vec<Span>)> = fetch
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect::<Vec<_>>()
                .into_iter()
                .filter_map(|k| fetch.remove(&k).map(|s| (k[prefix.len()..].to_string(), s)))
                .collect();
            parts.sort_by_key(|(label, _)| partition_order(label));
            if member.is_none() && parts.is_empty() {
                continue;
            }
            out.push(Row {
                kind: RowKind::Member,
                label: client.clone(),
                consumer: Some(client.clone()),
                group: group.clone(),
                spans: member.unwrap_or_default(),
            });
            for (label, spans) in parts {
                out.push(Row { kind: RowKind::Partition, label, consumer: Some(client.clone()), group: group.clone(), spans });
            }
        }
    }
    out
}

/// The stop-the-world windows of one group's rows, up to `now`.
fn group_windows(group: &str, rows: &[&Row], alive: &BTreeMap<String, Vec<(Millis, Option<Millis>)>>, now: Millis) -> Vec<StopWindow> {
    let parts: Vec<&&Row> = rows.iter().filter(|r| r.kind == RowKind::Partition).collect();
    // Every instant at which some partition row changes state.
    let mut cuts: BTreeSet<Millis> = BTreeSet::new();
    for r in &parts {
        for s in &r.spans {
            cuts.insert(s.from);
            if let Some(to) = s.to {
                cuts.insert(to);
            }
        }
    }
    let fetching_at = |t: Millis| parts.iter().filter(|r| r.state_at(t) == Some("FETCHING")).count();
    let members: Vec<&str> = rows.iter().filter(|r| r.kind == RowKind::Member).filter_map(|r| r.consumer.as_deref()).collect();
    let someone_alive = |t: Millis| members.iter().any(|c| alive.get(*c).is_some_and(|s| alive_at(s, t)));
    let group_row = rows.iter().find(|r| r.kind == RowKind::Group);
    let rebalancing = |from: Millis, to: Millis| {
        group_row.is_some_and(|g| {
            g.spans.iter().any(|s| {
                matches!(s.state, "PREPARING_REBALANCE" | "COMPLETING_REBALANCE") && s.from < to && s.to.is_none_or(|e| e > from)
            })
        })
    };
    let mut out = Vec::new();
    let mut seen_fetching: BTreeSet<&str> = BTreeSet::new();
    let mut open: Option<(Millis, usize)> = None;
    for &t in cuts.iter().filter(|&&t| t <= now) {
        let n = fetching_at(t);
        match (open, n) {
            (None, 0) if !seen_fetching.is_empty() && someone_alive(t) => open = Some((t, seen_fetching.len())),
            (Some((from, partitions)), n) if n > 0 => {
                if t - from >= MIN_STOP_MS {
                    out.push(StopWindow {
                        group: group.to_string(),
                        from,
                        to: Some(t),
                        partitions,
                        rebalance: rebalancing(from, t),
                    });
                }
                open = None;
            }
            _ => {}
        }
        for r in parts.iter().filter(|r| r.state_at(t) == Some("FETCHING")) {
            seen_fetching.insert(&r.label);
        }
    }
    if let Some((from, partitions)) = open {
        if now.saturating_sub(from) >= MIN_STOP_MS && someone_alive(now) {
            out.push(StopWindow { group: group.to_string(), from, to: None, partitions, rebalance: rebalancing(from, now.max(from + 1)) });
        }
    }
    out
}

/// Everything the Gantt draws, now.
pub fn gantt_data(w: &World) -> GanttData {
    let rows = rows(w);
    let alive = alive_spans(w);
    let mut windows = Vec::new();
    for g in &w.groups {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.group == *g.name).collect();
        windows.extend(group_windows(&g.name, &mine, &alive, w.now));
    }
    GanttData { rows, windows, now: w.now, until: w.scenario.until.max(w.now) }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sim::kafka::scenario::parse_scenario;
    use crate::sim::presets::by_file;

    pub(crate) fn run(file: &str, until: Option<Millis>) -> World {
        let mut w = World::new(parse_scenario(by_file(file).unwrap().text).unwrap());
        match until {
            Some(t) => w.run_until(t),
            None => w.run_to_end(),
        }
        w
    }

    #[test]
    fn an_eager_join_stops_every_partition_at_once() {
        let d = gantt_data(&run("kafka-eager-join.json", None));
        let labels: Vec<(RowKind, &str)> = d.rows.iter().take(3).map(|r| (r.kind, r.label.as_str())).collect();
        assert_eq!(labels, [(RowKind::Group, "billing"), (RowKind::Member, "c1"), (RowKind::Partition, "orders-0")]);
        assert_eq!(d.windows.len(), 1, "{:?}", d.windows);
        let stop = &d.windows[0];
        assert_eq!(stop.partitions, 12);
        assert!(stop.rebalance && stop.from > 15_500 && stop.to.unwrap() - stop.from > 1_000, "{stop:?}");
        // In the middle of the window no partition row is FETCHING.
        let mid = (stop.from + stop.to.unwrap()) / 2;
        assert!(d.rows.iter().filter(|r| r.kind == RowKind::Partition).all(|r| r.state_at(mid) != Some("FETCHING")));
    }

    #[test]
    fn a_cooperative_join_never_stops_the_group() {
        let d = gantt_data(&run("kafka-cooperative-join.json", None));
        assert!(d.windows.is_empty(), "{:?}", d.windows);
        // c4's partitions come after c3's, in partition order.
        let c4: Vec<&str> =
            d.rows.iter().filter(|r| r.kind == RowKind::Partition && r.consumer.as_deref() == Some("c4")).map(|r| r.label.as_str()).collect();
        assert_eq!(c4.len(), 3, "{c4:?}");
    }

    #[test]
    fn static_members_restart_without_a_stop_while_the_dynamic_group_stops_twice() {
        let d = gantt_data(&run("kafka-static-membership.json", None));
        let groups: Vec<&str> = d.windows.iter().map(|w| w.group.as_str()).collect();
        assert_eq!(groups, ["dynamic-group", "dynamic-group"], "{:?}", d.windows);
    }

    #[test]
    fn kip848_members_have_reconciliation_lanes() {
        let d = gantt_data(&run("kafka-kip848-reconciliation.json", None));
        let c3 = d.rows.iter().find(|r| r.kind == RowKind::Member && r.label == "c3").unwrap();
        assert!(c3.spans.iter().any(|s| s.state == "UNRELEASED_PARTITIONS"));
        assert!(d.windows.is_empty(), "{:?}", d.windows);
        assert!(!d.rows.iter().any(|r| r.kind == RowKind::Group), "KIP-848 groups have no classic state lane");
    }

    #[test]
    fn every_fetch_state_has_a_lane_span() {
        let d = gantt_data(&run("kafka-fetch-states.json", None));
        let seen: BTreeSet<&str> = d.rows.iter().filter(|r| r.kind == RowKind::Partition).flat_map(|r| r.spans.iter().map(|s| s.state)).collect();
        for s in ["INITIALIZING", "AWAIT_RESET", "AWAIT_VALIDATION", "FETCHING", "UNASSIGNED"] {
            assert!(seen.contains(s), "{s} missing from {seen:?}");
        }
    }
}
#[cfg(test)]
mod dump {
    #[test]
    fn dump_eager() {
        let w = super::tests::run("kafka-eager-join.json", None);
        for r in super::rows(&w) {
            let s: Vec<String> = r.spans.iter().map(|s| format!("{}@{}-{:?}", s.state, s.from, s.to)).collect();
            println!("{:?} {} {}: {}", r.kind, r.consumer.as_deref().unwrap_or(""), r.label, s.join(" "));
        }
    }
}
