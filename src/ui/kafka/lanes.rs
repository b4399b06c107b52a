//! The Gantt's rows, read from the Kafka world (pure, tested natively): per group its state lane,
//! then per consumer its membership lane and one FetchState lane per partition it ever held; and
//! the stop-the-world windows, stretches in which a group with live members fetched none of the
//! partitions it had been fetching.

use mqviz_engine::sort::CollectSorted;
use mqviz_engine::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet};

use mqviz_engine::Millis;
use mqviz_kafka::timeline::{fetch_state_lanes, group_lanes, member_lanes, Span};
use mqviz_kafka::world::World;

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

/// A stretch of a rebalance in which the members waiting in it fetched nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopWindow {
    pub group: String,
    pub from: Millis,
    /// `None`: still stopped now.
    pub to: Option<Millis>,
    /// The most partitions idle at once during it (fetched before, fetched by nobody then).
    pub idle: usize,
    /// Partitions the group had fetched before the window.
    pub partitions: usize,
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

/// The rows of the Gantt, group by group, in the world's order.
pub fn rows(w: &World) -> Vec<Row> {
    let mut fetch: BTreeMap<String, Vec<Span>> = fetch_state_lanes(w).into_iter().map(|l| (l.name, l.spans)).collect_map();
    let mut members: BTreeMap<String, Vec<Span>> = member_lanes(w).into_iter().map(|l| (l.name, l.spans)).collect_map();
    let mut groups: BTreeMap<String, Vec<Span>> = group_lanes(w).into_iter().map(|l| (l.name, l.spans)).collect_map();
    let mut out = Vec::new();
    for g in &w.groups {
        let group = g.name.to_string();
        if let Some(spans) = groups.remove(&format!("group {group}")) {
            out.push(Row { kind: RowKind::Group, label: group.clone(), consumer: None, group: group.clone(), spans });
        }
        for c in w.consumers.iter().filter(|c| w.groups[c.group].name == g.name) {
            let client = c.name.to_string();
            let member =
                members.remove(&format!("member {client}")).or_else(|| groups.remove(&format!("{group} member {client}")));
            let prefix = format!("{client} ");
            let mut parts: Vec<(String, Vec<Span>)> = fetch
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect::<Vec<_>>()
                .into_iter()
                .filter_map(|k| fetch.remove(&k).map(|s| (k[prefix.len()..].to_string(), s)))
                .collect();
            parts.stable_sort_by_key(|(label, _)| partition_order(label));
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
    if out.iter().filter(|r| r.kind == RowKind::Partition).count() > MAX_PARTITION_ROWS {
        out = collapse(out);
    }
    out
}

/// More partition lanes than this and each consumer's lanes become one (the chart has a fixed
/// height budget, and one pixel per lane would say nothing).
pub const MAX_PARTITION_ROWS: usize = 48;

/// The state a consumer's merged lane shows: FETCHING while any of its partitions is fetched (so
/// a stop-the-world still shows as a gap), else the state that holds it up.
fn merged_state(states: &[Option<&'static str>]) -> Option<&'static str> {
    ["FETCHING", "AWAIT_VALIDATION", "AWAIT_RESET", "INITIALIZING", "UNASSIGNED"]
        .into_iter()
        .find(|s| states.contains(&Some(*s)))
        .or_else(|| states.iter().flatten().next().copied())
}

/// Each consumer's partition rows merged into one row labelled with their count.
fn collapse(rows: Vec<Row>) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    let mut batch: Vec<Row> = Vec::new();
    let flush = |batch: &mut Vec<Row>, out: &mut Vec<Row>| {
        let Some(first) = batch.first() else { return };
        let cuts: BTreeSet<Millis> =
            batch.iter().flat_map(|r| r.spans.iter().flat_map(|s| std::iter::once(s.from).chain(s.to))).collect_set();
        let mut spans: Vec<Span> = Vec::new();
        for &t in &cuts {
            let states: Vec<Option<&'static str>> = batch.iter().map(|r| r.state_at(t)).collect();
            let state = merged_state(&states);
            if spans.last().map(|s| s.state) == state {
                continue;
            }
            if let Some(last) = spans.last_mut() {
                last.to = Some(t);
            }
            if let Some(state) = state {
                spans.push(Span { state, from: t, to: None });
            }
        }
        out.push(Row {
            kind: RowKind::Partition,
            label: format!("{} partitions", batch.len()),
            consumer: first.consumer.clone(),
            group: first.group.clone(),
            spans,
        });
        batch.clear();
    };
    for r in rows {
        if r.kind == RowKind::Partition {
            batch.push(r);
        } else {
            flush(&mut batch, &mut out);
            out.push(r);
        }
    }
    flush(&mut batch, &mut out);
    out
}

fn waiting(state: Option<&str>) -> bool {
    matches!(state, Some("PREPARING_REBALANCE" | "COMPLETING_REBALANCE"))
}

/// The stop-the-world windows of one group's rows, up to `now`. A member still busy with its last
/// batch keeps its partitions FETCHING, so "no partition FETCHING" would miss the stop that EAGER
/// imposes on everyone else; what marks it is that every member waiting in the rebalance, which
/// had been fetching, now fetches nothing (COOPERATIVE members keep fetching while they wait).
fn group_windows(group: &str, rows: &[&Row], now: Millis) -> Vec<StopWindow> {
    let Some(group_row) = rows.iter().find(|r| r.kind == RowKind::Group) else { return Vec::new() };
    let members: Vec<(&Row, Vec<&Row>)> = rows
        .iter()
        .filter(|r| r.kind == RowKind::Member)
        .map(|m| (*m, rows.iter().filter(|r| r.kind == RowKind::Partition && r.consumer == m.consumer).copied().collect()))
        .collect();
    let mut cuts: BTreeSet<Millis> = BTreeSet::new();
    for r in rows {
        for s in &r.spans {
            cuts.insert(s.from);
            cuts.extend(s.to);
        }
    }
    let fetching = |parts: &[&Row], t: Millis| parts.iter().any(|r| r.state_at(t) == Some("FETCHING"));
    let fetched_before =
        |parts: &[&Row], t: Millis| parts.iter().any(|r| r.spans.iter().any(|s| s.state == "FETCHING" && s.from < t));
    let idle_at = |t: Millis| {
        let before: BTreeSet<&str> = members
            .iter()
            .flat_map(|(_, p)| p.iter())
            .filter(|r| fetched_before(&[r], t))
            .map(|r| r.label.as_str())
            .collect_set();
        let now: BTreeSet<&str> = members
            .iter()
            .flat_map(|(_, p)| p.iter())
            .filter(|r| r.state_at(t) == Some("FETCHING"))
            .map(|r| r.label.as_str())
            .collect_set();
        (before.difference(&now).count(), before.len())
    };
    let stopped = |t: Millis| {
        if !waiting(group_row.state_at(t)) {
            return false;
        }
        let mut waiters = members.iter().filter(|(m, p)| waiting(m.state_at(t)) && fetched_before(p, t)).peekable();
        waiters.peek().is_some() && waiters.all(|(_, p)| !fetching(p, t))
    };
    let mut out = Vec::new();
    let mut open: Option<StopWindow> = None;
    for &t in cuts.iter().filter(|&&t| t <= now) {
        match (open.as_mut(), stopped(t)) {
            (None, true) => {
                let (idle, partitions) = idle_at(t);
                open = Some(StopWindow { group: group.to_string(), from: t, to: None, idle, partitions });
            }
            (Some(w), true) => {
                let (idle, partitions) = idle_at(t);
                w.idle = w.idle.max(idle);
                w.partitions = w.partitions.max(partitions);
            }
            (Some(_), false) => {
                let mut w = open.take().unwrap_or_else(|| unreachable!());
                w.to = Some(t);
                out.push(w);
            }
            (None, false) => {}
        }
    }
    out.extend(open.filter(|w| now > w.from));
    out
}

/// Everything the Gantt draws, now.
pub fn gantt_data(w: &World) -> GanttData {
    let rows = rows(w);
    let mut windows = Vec::new();
    for g in &w.groups {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.group == *g.name).collect();
        windows.extend(group_windows(&g.name, &mine, w.now));
    }
    GanttData { rows, windows, now: w.now, until: w.scenario.until.max(w.now) }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mqviz_app::presets::by_file;
    use mqviz_kafka::scenario::parse_scenario;

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
        assert_eq!((stop.idle, stop.partitions), (12, 12));
        assert!(stop.from > 15_500 && stop.to.unwrap() - stop.from > 1_000, "{stop:?}");
        // In the middle of the window c1 and c2, waiting in the rebalance, fetch nothing; the
        // slow c3 still holds its partitions (it has not polled yet).
        let mid = (stop.from + stop.to.unwrap()) / 2;
        let fetching = |c: &str| {
            d.rows
                .iter()
                .any(|r| r.consumer.as_deref() == Some(c) && r.kind == RowKind::Partition && r.state_at(mid) == Some("FETCHING"))
        };
        assert!(!fetching("c1") && !fetching("c2") && fetching("c3"));
    }

    #[test]
    fn a_cooperative_join_never_stops_the_group() {
        let d = gantt_data(&run("kafka-cooperative-join.json", None));
        assert!(d.windows.is_empty(), "{:?}", d.windows);
        // c4's partitions come after c3's, in partition order.
        let c4: Vec<&str> = d
            .rows
            .iter()
            .filter(|r| r.kind == RowKind::Partition && r.consumer.as_deref() == Some("c4"))
            .map(|r| r.label.as_str())
            .collect();
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
    fn many_partition_lanes_merge_per_consumer_and_keep_the_stop() {
        let mut d = rows(&run("kafka-eager-join.json", None));
        d.retain(|r| r.kind != RowKind::Group || r.label == "billing");
        let merged = collapse(d);
        let c1: Vec<&Row> =
            merged.iter().filter(|r| r.kind == RowKind::Partition && r.consumer.as_deref() == Some("c1")).collect();
        assert_eq!(c1.len(), 1);
        assert_eq!(c1[0].label, "4 partitions");
        let states: Vec<&str> = c1[0].spans.iter().map(|s| s.state).collect();
        assert!(states.windows(2).any(|w| w == ["FETCHING", "UNASSIGNED"]), "{states:?}");
        let refs: Vec<&Row> = merged.iter().collect();
        assert_eq!(group_windows("billing", &refs, 30_000).len(), 1);
    }

    #[test]
    fn every_fetch_state_has_a_lane_span() {
        let d = gantt_data(&run("kafka-fetch-states.json", None));
        let seen: BTreeSet<&str> =
            d.rows.iter().filter(|r| r.kind == RowKind::Partition).flat_map(|r| r.spans.iter().map(|s| s.state)).collect_set();
        for s in ["INITIALIZING", "AWAIT_RESET", "AWAIT_VALIDATION", "FETCHING", "UNASSIGNED"] {
            assert!(seen.contains(s), "{s} missing from {seen:?}");
        }
    }
}
