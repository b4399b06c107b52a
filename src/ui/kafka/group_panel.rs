//! The group panel (inspector tables): per group its state machine with the current state
//! emphasised, its generation (classic) or group and target epochs (KIP-848), the records it
//! received, skipped or received more than once; its members (member id, generation or member
//! epoch, static instance id, state, owned / assigned / revoking / awaited partitions); and its
//! partitions (owner, FetchState and position, committed offset, lag).
//!
//! Read-only, so rendered as escaped HTML behind a memo (one DOM write when the text changes).
//! The builders are pure and tested natively.

use mqviz_engine::sort::CollectSorted;
use mqviz_engine::sort::StableSort;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use leptos::prelude::*;

use crate::ui::state::{esc, esc_ident, Sim};
use mqviz_kafka::assignor::TopicPartition;
use mqviz_kafka::classic_group::{rebalance_protocol, RebalanceProtocol};
use mqviz_kafka::pattern::TopicPattern;
use mqviz_kafka::reconciliation::Partitions;
use mqviz_kafka::scenario::{GroupProtocol, SubscriptionSpec};
use mqviz_kafka::world::{Consumer, Group, Life, World};
use mqviz_model::Totals;

const CLASSIC_STATES: [&str; 4] = ["EMPTY", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE"];
const MODERN_STATES: [&str; 4] = ["EMPTY", "ASSIGNING", "RECONCILING", "STABLE"];

/// `orders 0–2, 5 · events 1`: partitions by topic, consecutive ones as ranges.
pub fn compact<'a>(parts: impl IntoIterator<Item = (&'a str, i32)>) -> String {
    let mut by_topic: BTreeMap<&str, BTreeSet<i32>> = BTreeMap::new();
    for (t, p) in parts {
        by_topic.entry(t).or_default().insert(p);
    }
    let mut out = Vec::new();
    for (topic, ps) in by_topic {
        let ps: Vec<i32> = ps.into_iter().collect();
        let mut runs: Vec<String> = Vec::new();
        let mut i = 0;
        while i < ps.len() {
            let mut j = i;
            while j + 1 < ps.len() && ps[j + 1] == ps[j] + 1 {
                j += 1;
            }
            runs.push(match j - i {
                0 => ps[i].to_string(),
                1 => format!("{}, {}", ps[i], ps[j]),
                _ => format!("{}–{}", ps[i], ps[j]),
            });
            i = j + 1;
        }
        out.push(format!("{topic} {}", runs.join(", ")));
    }
    out.join(" · ")
}

fn tps(list: &[TopicPartition]) -> String {
    compact(list.iter().map(|tp| (tp.topic.as_str(), tp.partition)))
}

fn parts_of(p: &Partitions) -> Vec<TopicPartition> {
    p.iter().flat_map(|(t, ps)| ps.iter().map(move |&x| TopicPartition::new(t.clone(), x))).collect()
}

fn joined(list: &[TopicPartition]) -> String {
    list.iter().map(|tp| format!("{}-{}", tp.topic, tp.partition)).collect::<Vec<_>>().join(",")
}

/// A member id shortened for the table (the whole id is in the title).
pub fn short_id(id: &str) -> String {
    if id.chars().count() <= 14 {
        return id.to_string();
    }
    let head: String = id.chars().take(12).collect();
    format!("{head}…")
}

/// The partitions a group reads: its consumers' topics (or assigned partitions), the ones it
/// committed, in topic then partition order, as neutral partition ids.
fn group_pids(w: &World, g: usize) -> Vec<u32> {
    let mut out: BTreeSet<u32> = w.groups[g].committed.keys().copied().collect_set();
    for c in w.consumers.iter().filter(|c| c.group == g) {
        match &c.subscription {
            Some(SubscriptionSpec::Topics(topics)) => {
                for t in topics.iter().filter_map(|t| w.topic_index(t)) {
                    out.extend(w.topics[t].pids.iter().copied());
                }
            }
            Some(SubscriptionSpec::Pattern(p)) => {
                if let Ok(pattern) = TopicPattern::compile(p) {
                    for t in w.topics.iter().filter(|t| pattern.matches(&t.name)) {
                        out.extend(t.pids.iter().copied());
                    }
                }
            }
            Some(SubscriptionSpec::Assign(parts)) => {
                out.extend(parts.iter().filter_map(|r| w.pid_of(&TopicPartition::new(r.topic.clone(), r.partition as i32))));
            }
            None => {}
        }
        if c.running() {
            out.extend(c.subs.assigned_partitions().iter().filter_map(|tp| w.pid_of(tp)));
        }
    }
    let mut v: Vec<u32> = out.into_iter().collect();
    v.stable_sort_by_key(|&pid| (w.partitions[pid as usize].topic, w.partitions[pid as usize].partition));
    v
}

fn state_machine(states: &[&str], current: &str, group: &str) -> String {
    let mut h = format!("<ol class=\"kstates\" aria-label=\"{} group state: {}\">", esc(group), esc(current));
    for s in states {
        if *s == current {
            let _ = write!(h, "<li class=\"current\" aria-current=\"step\">{}</li>", esc_ident(s));
        } else {
            let _ = write!(h, "<li>{}</li>", esc_ident(s));
        }
    }
    h.push_str("</ol>");
    h
}

fn life_text(c: &Consumer) -> Option<String> {
    match c.life {
        Life::Running => None,
        Life::NotStarted => Some("not started".into()),
        Life::Stopped => Some("stopped".into()),
        Life::Crashed => Some("crashed".into()),
        Life::Failed => Some(format!("failed: {}", c.failure.as_deref().unwrap_or("poll() threw"))),
    }
}

/// One member row: who, generation or epoch, state, partitions.
struct MemberRow {
    client: String,
    member_id: String,
    instance: Option<String>,
    leader: bool,
    generation: String,
    state: String,
    detail: String,
    /// (what, partitions) lines: owns, assigned, revoking, target, awaiting release.
    lines: Vec<(&'static str, Vec<TopicPartition>)>,
    running: bool,
}

fn owned(c: &Consumer) -> Vec<TopicPartition> {
    if c.running() {
        c.subs.assigned_partitions().to_vec()
    } else {
        Vec::new()
    }
}

fn revoking(c: &Consumer) -> Vec<TopicPartition> {
    owned(c).into_iter().filter(|tp| c.subs.state(tp).is_some_and(|s| s.pending_revocation)).collect()
}

fn classic_row(grp: &Group, ci: usize, c: &Consumer) -> MemberRow {
    let cg = &grp.classic;
    let coord = cg.members.values().find(|m| m.c == ci);
    let cl = &c.classic;
    let member_id = if !cl.member_id.is_empty() && c.running() {
        cl.member_id.to_string()
    } else {
        coord.map(|m| m.id.to_string()).unwrap_or_default()
    };
    let leader = coord.is_some_and(|m| cg.leader.as_ref() == Some(&m.id));
    let (state, detail) = match life_text(c) {
        None if !c.group_managed() => ("assign()".to_string(), "no group membership".to_string()),
        None => (cl.state.name().to_string(), String::new()),
        Some(life) => {
            let still = if coord.is_some() { "still a member until its session times out" } else { "" };
            (life, still.to_string())
        }
    };
    let generation = if c.running() && cl.generation >= 0 { cl.generation.to_string() } else { "–".into() };
    let mut lines = vec![("owns", owned(c))];
    if let Some(m) = coord {
        let mut assigned = m.assignment.clone();
        assigned.stable_sort();
        let mut mine = owned(c);
        mine.stable_sort();
        if assigned != mine {
            lines.push(("assigned", assigned));
        }
    }
    lines.push(("revoking", revoking(c)));
    MemberRow {
        client: c.name.to_string(),
        member_id,
        instance: c.instance_id.as_deref().map(str::to_string),
        leader,
        generation,
        state,
        detail,
        lines,
        running: c.running(),
    }
}

fn modern_row(grp: &Group, ci: usize, c: &Consumer) -> MemberRow {
    let mg = &grp.modern;
    let coord = mg.members.iter().find(|m| m.c == ci);
    let (state, detail) = match (life_text(c), coord) {
        (None, Some(m)) => (m.assignment.state.name().to_string(), format!("client {}", c.modern.state.name())),
        (None, None) if !c.group_managed() => ("assign()".to_string(), "no group membership".to_string()),
        (None, None) => (c.modern.state.name().to_string(), "not a member yet".to_string()),
        (Some(life), Some(_)) => (life, "still a member until its session times out".to_string()),
        (Some(life), None) => (life, String::new()),
    };
    let generation = match coord {
        Some(m) => m.assignment.member_epoch.to_string(),
        None if c.running() => c.modern.epoch.to_string(),
        None => "–".into(),
    };
    let mut lines = vec![("owns", owned(c))];
    if let Some(m) = coord {
        let assigned = parts_of(&m.assignment.assigned);
        let pending = parts_of(&m.assignment.pending_revocation);
        let target = parts_of(&mg.target.of(&m.id));
        // Target partitions the coordinator withholds: still owned by another member.
        let unreleased: Vec<TopicPartition> =
            target.iter().filter(|tp| !assigned.contains(tp) && !pending.contains(tp)).cloned().collect();
        lines.push(("assigned", assigned));
        lines.push(("revoking", pending));
        lines.push(("awaits release of", unreleased));
        lines.push(("target", target));
    }
    MemberRow {
        client: c.name.to_string(),
        member_id: coord.map(|m| m.id.to_string()).unwrap_or_else(|| c.modern.member_id.to_string()),
        instance: c.instance_id.as_deref().map(str::to_string),
        leader: false,
        generation,
        state,
        detail,
        lines,
        running: c.running(),
    }
}

fn member_row_html(r: &MemberRow) -> String {
    let mut who = format!("<b>{}</b>", esc_ident(&r.client));
    if r.leader {
        who.push_str(" <span class=\"muted small\">leader</span>");
    }
    if !r.member_id.is_empty() {
        let _ = write!(
            who,
            "<div class=\"muted small\" title=\"member id {}\">{}</div>",
            esc(&r.member_id),
            esc(&short_id(&r.member_id))
        );
    }
    if let Some(i) = &r.instance {
        let _ = write!(who, "<div class=\"muted small\">static {}</div>", esc_ident(i));
    }
    let mut parts = String::new();
    let mut owns = String::new();
    let mut pending = String::new();
    for (what, list) in &r.lines {
        // "target" only matters when it differs from what the member owns.
        let same_as_owned = r.lines.first().is_some_and(|(_, o)| {
            let (mut a, mut b) = (o.clone(), list.clone());
            a.stable_sort();
            b.stable_sort();
            a == b
        });
        if (list.is_empty() && *what != "owns") || (*what != "owns" && same_as_owned && matches!(*what, "target" | "assigned")) {
            continue;
        }
        match *what {
            "owns" => owns = joined(list),
            "revoking" => pending = joined(list),
            _ => {}
        }
        let text = if list.is_empty() { "nothing".to_string() } else { tps(list) };
        let _ = write!(parts, "<div><span class=\"muted\">{what}</span> {}</div>", esc(&text));
    }
    let detail = if r.detail.is_empty() { String::new() } else { format!("<div class=\"muted small\">{}</div>", esc(&r.detail)) };
    format!(
        "<tr data-testid=\"kafka-member\" data-client-id=\"{c}\" data-state=\"{s}\" data-generation=\"{g}\" data-owned=\"{owns}\" \
         data-pending=\"{pending}\"{cls}><td>{who}</td><td class=\"num\">{g}</td><td>{st}{detail}</td><td>{parts}</td></tr>",
        c = esc(&r.client),
        s = esc(&r.state),
        g = esc(&r.generation),
        st = esc_ident(&r.state),
        cls = if r.running { "" } else { " class=\"stopped\"" },
    )
}

fn partitions_html(w: &World, g: usize) -> String {
    let grp = &w.groups[g];
    let mut h = String::new();
    for pid in group_pids(w, g) {
        let p = &w.partitions[pid as usize];
        let tp = w.tp_of(pid);
        let label = format!("{}-{}", tp.topic, tp.partition);
        let hw = p.high_watermark();
        let owner = w.consumers.iter().find(|c| c.group == g && c.running() && c.subs.is_assigned(&tp));
        let state = owner.and_then(|c| c.subs.state(&tp));
        let committed = grp.committed.get(&pid).map(|c| c.0);
        let position = state.and_then(|s| s.position).map(|p| p.offset.max(0) as u64);
        let (lag, lag_title) = match (position, committed) {
            (Some(pos), _) => (hw.saturating_sub(pos).to_string(), "high watermark − the owner's position"),
            (None, Some(c)) => (hw.saturating_sub(c).to_string(), "nobody fetches it: high watermark − the committed offset"),
            (None, None) => ("–".to_string(), "no position and nothing committed"),
        };
        let fetch = match state {
            Some(s) => {
                let mut t = esc_ident(s.fetch_state.name());
                if s.paused {
                    t.push_str(" · paused");
                }
                if s.pending_revocation {
                    t.push_str(" · revoking");
                }
                if let Some(pos) = position {
                    let _ = write!(t, "<div class=\"muted small\">position {pos}</div>");
                }
                t
            }
            None => "–".into(),
        };
        let (owner_text, why) = match owner {
            Some(c) => (esc_ident(&c.name), String::new()),
            None => ("none".to_string(), w.unowned_reason(pid, Some(g)).unwrap_or_else(|| "no running member reads it".into())),
        };
        let _ = write!(
            h,
            "<tr data-testid=\"kafka-partition\" data-partition=\"{l}\" data-owner=\"{o}\" data-fetch-state=\"{fs}\" \
             data-committed=\"{cm}\" data-lag=\"{lag}\"><td>{lt}</td><td title=\"{why}\">{owner_text}</td><td>{fetch}</td>\
             <td class=\"num\">{cm}</td><td class=\"num\" title=\"{lag_title}\">{lag}</td></tr>",
            l = esc(&label),
            lt = esc_ident(&label),
            o = owner.map(|c| esc(&c.name)).unwrap_or_default(),
            fs = state.map(|s| s.fetch_state.name()).unwrap_or(""),
            cm = committed.map(|c| c.to_string()).unwrap_or_else(|| "–".into()),
            why = esc(&why),
        );
    }
    h
}

/// One group's block, with its counts (`report::totals_by_group`: the outcome sentence sums
/// the same counts, so the two agree).
pub fn group_html(w: &World, g: usize, counts: &Totals) -> String {
    let grp = &w.groups[g];
    let members: Vec<(usize, &Consumer)> = w.consumers.iter().enumerate().filter(|(_, c)| c.group == g).collect();
    let protocol = members.first().map(|(_, c)| c.protocol).unwrap_or(grp.protocol);
    let name = &*grp.name;
    let (received, twice, lost) = (counts.consumed, counts.duplicated, counts.lost);
    let mut h = String::new();
    let (state, head, machine, rows) = match protocol {
        GroupProtocol::Classic => {
            let cg = &grp.classic;
            let rebalance = members
                .first()
                .map(|(_, c)| match rebalance_protocol(&c.config.assignors) {
                    RebalanceProtocol::Eager => "EAGER",
                    RebalanceProtocol::Cooperative => "COOPERATIVE",
                })
                .unwrap_or("EAGER");
            let assignors =
                members.first().map(|(_, c)| c.config.assignors.iter().map(|a| a.name()).collect::<Vec<_>>().join(", "));
            let leader = cg.leader.as_ref().and_then(|l| cg.members.get(l)).map(|m| m.name.to_string());
            let mut head = format!(
                "generation <b data-testid=\"kafka-generation\">{}</b> · assigned by <code>{}</code>",
                cg.generation,
                esc(cg.protocol_name.as_deref().unwrap_or("–"))
            );
            if let Some(l) = leader {
                let _ = write!(head, " · leader {}", esc_ident(&l));
            }
            let _ = write!(
                head,
                " · {} members<div class=\"muted small\">assignors [{}] → {rebalance}</div>",
                cg.members.len(),
                esc(&assignors.unwrap_or_default())
            );
            let rows: Vec<MemberRow> = members.iter().map(|&(ci, c)| classic_row(grp, ci, c)).collect();
            (cg.state.name(), head, state_machine(&CLASSIC_STATES, cg.state.name(), name), rows)
        }
        GroupProtocol::Consumer => {
            let mg = &grp.modern;
            let state = mg.state().name();
            let head = format!(
                "group epoch <b data-testid=\"kafka-group-epoch\">{}</b> · target epoch <b>{}</b> · assignor <code>{}</code> · {} members",
                mg.group_epoch,
                mg.target.epoch,
                mg.assignor.map(|a| a.name()).unwrap_or("uniform"),
                mg.members.len()
            );
            let rows: Vec<MemberRow> = members.iter().map(|&(ci, c)| modern_row(grp, ci, c)).collect();
            (state, head, state_machine(&MODERN_STATES, state, name), rows)
        }
    };
    let epoch_attr = match protocol {
        GroupProtocol::Classic => format!("data-generation=\"{}\"", grp.classic.generation),
        GroupProtocol::Consumer => format!("data-epoch=\"{}\"", grp.modern.group_epoch),
    };
    let _ = write!(
        h,
        "<div class=\"kgroup\" data-testid=\"kafka-group\" data-group=\"{n}\" data-protocol=\"{p}\" data-state=\"{state}\" {epoch_attr} \
         data-received=\"{received}\" data-duplicates=\"{twice}\" data-lost=\"{lost}\">\
         <div class=\"row-head\"><span class=\"gname\">{nt}</span><span class=\"badge model\">{p}</span></div>{machine}\
         <p class=\"kgen\">{head}</p><p class=\"krecords\">received {received} records (repeats counted) · \
         <b>{twice}</b> more than once · <b>{lost}</b> lost</p>",
        n = esc(name),
        nt = esc_ident(name),
        p = protocol.name(),
    );
    h.push_str(
        "<table class=\"grid kmembers\"><thead><tr><th>Member</th><th class=\"num\" title=\"generation (classic) or member epoch (KIP-848)\">gen.</th>\
         <th>State</th><th>Partitions</th></tr></thead><tbody>",
    );
    for r in &rows {
        h.push_str(&member_row_html(r));
    }
    h.push_str(
        "</tbody></table><table class=\"grid kparts\"><thead><tr><th>Partition</th><th>Owner</th><th>FetchState</th>\
         <th class=\"num\">committed</th><th class=\"num\" title=\"high watermark − position\">lag</th></tr></thead><tbody>",
    );
    h.push_str(&partitions_html(w, g));
    h.push_str("</tbody></table></div>");
    h
}

pub fn groups_html(w: &World) -> String {
    let counts = mqviz_kafka::report::totals_by_group(w);
    counts.iter().enumerate().map(|(g, c)| group_html(w, g, c)).collect()
}

#[component]
pub fn Tables() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let html = Memo::new(move |_| sim.read_as::<World, _>(groups_html).unwrap_or_default());
    view! {
        <section class="kafka-groups" data-testid="kafka-groups">
            <h2>"Consumer groups"</h2>
            <div inner_html=move || html.get()></div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::super::lanes::tests::run;
    use super::*;

    #[test]
    fn partitions_read_as_ranges() {
        assert_eq!(
            compact([("orders", 0), ("orders", 1), ("orders", 2), ("orders", 5), ("events", 1)]),
            "events 1 · orders 0–2, 5"
        );
        assert_eq!(compact([("t", 3), ("t", 4)]), "t 3, 4");
        assert_eq!(short_id("c1-0d9f1b2c-aaaa-bbbb"), "c1-0d9f1b2c-…");
    }

    #[test]
    fn an_eager_group_in_the_middle_of_its_rebalance() {
        let w = run("kafka-eager-join.json", Some(16_000));
        let h = groups_html(&w);
        assert!(h.contains("data-state=\"PREPARING_REBALANCE\""), "{h}");
        assert!(h.contains("<li class=\"current\" aria-current=\"step\">PREPARING_<wbr>REBALANCE</li>"), "{h}");
        assert_eq!(h.matches("data-testid=\"kafka-partition\"").count(), 12);
        assert!(h.contains("data-client-id=\"c4\""));
    }

    #[test]
    fn kip848_members_show_epochs_and_unreleased_partitions() {
        let w = run("kafka-kip848-reconciliation.json", Some(12_100));
        let h = groups_html(&w);
        assert!(h.contains("data-protocol=\"consumer\""));
        assert!(h.contains("group epoch"), "{h}");
        assert!(h.contains("UNRELEASED_<wbr>PARTITIONS") || h.contains("UNREVOKED_<wbr>PARTITIONS"), "{h}");
    }

    #[test]
    fn duplicates_and_skips_are_counted_per_group() {
        let w = run("kafka-crash-redelivery.json", None);
        assert!(mqviz_kafka::report::totals_by_group(&w)[0].duplicated > 0);
        let w = run("kafka-new-group-latest.json", None);
        let analytics = w.find_group("analytics").unwrap();
        let audit = w.find_group("audit").unwrap();
        let counts = mqviz_kafka::report::totals_by_group(&w);
        assert!(counts[analytics].lost > 0 && counts[audit].lost == 0);
        // The panel states the counts the outcome sentence sums.
        let h = groups_html(&w);
        let total = mqviz_kafka::report::totals(&w);
        let received: u64 = counts.iter().map(|c| c.consumed).sum();
        assert_eq!(received, total.consumed);
        assert!(h.contains(&format!("received {} records", counts[audit].consumed)), "{h}");
    }
}
