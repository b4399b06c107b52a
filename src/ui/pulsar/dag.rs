//! The segment DAG of a scalable topic as a picture model: every segment with its generation,
//! hash range, state for one STREAM subscription (active, withheld with the reason, sealed,
//! drained), its owner in the coordinator's assignment, and the upstream gaps (#26274, #26434)
//! that show on it. Pure: built from the World at the playhead and laid out without a browser,
//! so the unit tests check what the canvas will draw.

use mqviz_engine::sort::StableSort;
use std::collections::BTreeMap;

use mqviz_engine::Millis;
use mqviz_pulsar::scalable::{SegmentLayout, UpstreamGap};
use mqviz_pulsar::world::{ScalableTopic, World};

/// What one segment is for the subscription drawn. Told apart by fill, border and words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// Active and assignable: STREAM consumers read it.
    Active,
    /// Active, but STREAM consumers do not get it yet: a direct parent is not drained.
    Withheld,
    /// Sealed (terminated) and not known drained: its backlog is still being read.
    Sealed,
    /// Sealed, and the coordinator's drain poll saw its backlog at 0.
    Drained,
}

impl NodeState {
    pub fn word(self) -> &'static str {
        match self {
            NodeState::Active => "active",
            NodeState::Withheld => "withheld",
            NodeState::Sealed => "sealed",
            NodeState::Drained => "drained",
        }
    }
}

/// An upstream gap marked on a segment (or on the whole picture).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GapMark {
    /// `#26274` or `#26434`.
    pub issue: &'static str,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DagNode {
    pub id: u64,
    /// 0 for the initial segments, then one more than the deepest parent.
    pub generation: usize,
    pub range: (u32, u32),
    pub state: NodeState,
    /// Why a withheld child is not assigned ("parent 0 not drained").
    pub reason: Option<String>,
    /// The consumer the coordinator assigns it to, and its 1-based place in that consumer's list.
    pub owner: Option<(String, usize)>,
    /// The subscription's backlog on this segment (entries not acked).
    pub backlog: Option<u64>,
    pub gap: Option<GapMark>,
}

impl DagNode {
    /// `0000-1fff`, as the segment topic names print ranges.
    pub fn range_hex(&self) -> String {
        format!("{:04x}-{:04x}", self.range.0, self.range.1)
    }

    pub fn title(&self) -> String {
        format!("seg {} [{}]", self.id, self.range_hex())
    }

    /// The node's second line: its state in words (with the backlog of an undrained segment).
    pub fn state_line(&self) -> String {
        match (self.state, self.backlog) {
            (NodeState::Withheld, _) => "withheld".into(),
            (NodeState::Drained, _) => "sealed · drained".into(),
            (NodeState::Sealed, Some(b)) => format!("sealed · backlog {b}"),
            (NodeState::Sealed, None) => "sealed".into(),
            (NodeState::Active, Some(b)) => format!("active · backlog {b}"),
            (NodeState::Active, None) => "active".into(),
        }
    }

    /// The node's third line: the reason it is withheld, or who reads it.
    pub fn detail_line(&self) -> String {
        if let Some(r) = &self.reason {
            return r.clone();
        }
        match &self.owner {
            Some((c, k)) => format!("→ {c} ({})", ordinal(*k)),
            None => String::new(),
        }
    }
}

pub fn ordinal(k: usize) -> String {
    let suffix = match (k % 10, k % 100) {
        (1, n) if n != 11 => "st",
        (2, n) if n != 12 => "nd",
        (3, n) if n != 13 => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

/// One scalable topic as one subscription sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentDag {
    /// The topic as the scenario writes it.
    pub topic: String,
    /// The STREAM subscription whose drain state and assignment are drawn (`None` when the topic
    /// has no STREAM subscription yet: then nothing is withheld and nobody is assigned).
    pub subscription: Option<String>,
    pub epoch: u64,
    /// By segment id.
    pub nodes: Vec<DagNode>,
    /// (parent, child).
    pub edges: Vec<(u64, u64)>,
    /// Each consumer's segments in the order `computeAssignment` dealt them.
    pub assignment: Vec<(String, Vec<u64>)>,
    /// When the coordinator polls the parents' backlog next.
    pub next_poll: Option<Millis>,
    /// Gaps that concern a consumer rather than one segment (#26434: only drained segments).
    pub notes: Vec<GapMark>,
}

impl SegmentDag {
    pub fn node(&self, id: u64) -> Option<&DagNode> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn generations(&self) -> usize {
        self.nodes.iter().map(|n| n.generation + 1).max().unwrap_or(0)
    }

    /// A label for pickers and captions: `sub on four-segments`.
    pub fn label(&self) -> String {
        match &self.subscription {
            Some(s) => format!("{s} on {}", self.topic),
            None => self.topic.clone(),
        }
    }
}

fn generations(layout: &SegmentLayout) -> BTreeMap<u64, usize> {
    let mut out = BTreeMap::new();
    // Ids grow with creation, so every parent is seen before its children.
    for s in layout.all_segments() {
        let g = s.parent_ids.iter().filter_map(|p| out.get(p)).map(|g: &usize| g + 1).max().unwrap_or(0);
        out.insert(s.segment_id, g);
    }
    out
}

fn gap_mark(gap: &UpstreamGap) -> (Option<u64>, GapMark) {
    match gap {
        UpstreamGap::SealedChildBeforeParentDrained { segment, undrained_parent } => (
            Some(*segment),
            GapMark { issue: "#26274", text: format!("read while its parent {undrained_parent} is not drained") },
        ),
        UpstreamGap::DrainedSegmentAssigned { segment, consumer } => {
            (Some(*segment), GapMark { issue: "#26434", text: format!("drained, yet takes a slot of {consumer}") })
        }
        UpstreamGap::ConsumerHasOnlyDrainedSegments { consumer } => {
            (None, GapMark { issue: "#26434", text: format!("{consumer} is assigned only drained segments and reads nothing") })
        }
    }
}

fn backlog_of(w: &World, scalable: &ScalableTopic, segment: u64, sub: Option<&str>) -> Option<u64> {
    let part = &w.partitions[*scalable.segment_partitions.get(&segment)? as usize];
    match sub {
        Some(s) => part.subscription(s).map(|i| part.subscriptions[i].cursor.backlog()),
        None => part.subscriptions.iter().map(|s| s.cursor.backlog()).max(),
    }
}

fn build(w: &World, t: usize, sub: Option<&str>) -> Option<SegmentDag> {
    let topic = &w.topics[t];
    let scalable = topic.scalable.as_ref()?;
    let layout = &scalable.layout;
    let coordinator = sub.and_then(|s| scalable.coordinators.get(s));
    let gens = generations(layout);
    let assignment = coordinator.map(|c| c.current_assignment());
    let mut owner: BTreeMap<u64, (String, usize)> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut gaps: BTreeMap<u64, GapMark> = BTreeMap::new();
    if let Some(a) = &assignment {
        for (consumer, segments) in &a.by_consumer {
            for (k, s) in segments.iter().enumerate() {
                owner.insert(s.segment_id, (consumer.clone(), k + 1));
            }
        }
        for g in &a.gaps {
            match gap_mark(g) {
                (Some(seg), mark) => {
                    gaps.entry(seg).or_insert(mark);
                }
                (None, mark) => notes.push(mark),
            }
        }
    }
    let nodes = layout
        .all_segments()
        .map(|s| {
            let drain = coordinator.map(|c| c.drain_state());
            // The model says whether and why a child is held back; the picture only draws it.
            let reason = sub.and_then(|sub| w.withheld_reason(t, s.segment_id, sub));
            let withheld = reason.is_some();
            let state = match (s.is_active(), withheld) {
                (true, true) => NodeState::Withheld,
                (true, false) => NodeState::Active,
                (false, _) if drain.is_some_and(|d| d.drained.contains(&s.segment_id)) => NodeState::Drained,
                (false, _) => NodeState::Sealed,
            };
            DagNode {
                id: s.segment_id,
                generation: gens.get(&s.segment_id).copied().unwrap_or(0),
                range: (s.hash_range.start, s.hash_range.end),
                state,
                reason,
                owner: owner.get(&s.segment_id).cloned(),
                backlog: backlog_of(w, scalable, s.segment_id, sub),
                gap: gaps.remove(&s.segment_id),
            }
        })
        .collect();
    let edges =
        layout.all_segments().flat_map(|s| s.parent_ids.iter().map(move |&p| (p, s.segment_id))).collect::<Vec<(u64, u64)>>();
    Some(SegmentDag {
        topic: topic.written.clone(),
        subscription: sub.map(str::to_string),
        epoch: layout.epoch,
        nodes,
        edges,
        assignment: assignment
            .map(|a| a.by_consumer.iter().map(|(c, s)| (c.clone(), s.iter().map(|x| x.segment_id).collect())).collect())
            .unwrap_or_default(),
        next_poll: coordinator.and_then(|c| c.scheduled_poll()).map(|(_, at)| at),
        notes,
    })
}

/// Every scalable topic's DAG: one per STREAM subscription, or one plain picture while the
/// topic has none.
pub fn dags(w: &World) -> Vec<SegmentDag> {
    let mut out = Vec::new();
    for (t, topic) in w.topics.iter().enumerate() {
        let Some(scalable) = topic.scalable.as_ref() else { continue };
        if scalable.coordinators.is_empty() {
            out.extend(build(w, t, None));
        }
        for sub in scalable.coordinators.keys() {
            out.extend(build(w, t, Some(sub)));
        }
    }
    out
}

/// Where a node is drawn, in CSS pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeBox {
    pub id: u64,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DagLayout {
    pub boxes: Vec<NodeBox>,
    pub height: f64,
    /// The left edge and width of each generation's column (for its heading).
    pub columns: Vec<(f64, f64)>,
}

impl DagLayout {
    pub fn get(&self, id: u64) -> Option<&NodeBox> {
        self.boxes.iter().find(|b| b.id == id)
    }
}

pub const NODE_H: f64 = 50.0;
const NODE_GAP: f64 = 8.0;
const PAD: f64 = 8.0;
/// Room above the nodes for the column headings.
pub const HEAD_H: f64 = 18.0;
const MIN_HEIGHT: f64 = 150.0;
const MAX_NODE_W: f64 = 176.0;
const MIN_NODE_W: f64 = 96.0;

/// Lays the DAG out in `width` CSS pixels: one column per generation, left to right; within a
/// column, nodes ordered by hash range and placed near the height of their range's start, so a
/// child sits level with the part of its parent it came from. Returns the height it needs.
pub fn layout(dag: &SegmentDag, width: f64) -> DagLayout {
    let columns = dag.generations().max(1);
    let slot = ((width - 2.0 * PAD) / columns as f64).max(MIN_NODE_W + 24.0);
    let node_w = (slot - 36.0).clamp(MIN_NODE_W, MAX_NODE_W);
    let mut by_column: Vec<Vec<&DagNode>> = vec![Vec::new(); columns];
    for n in &dag.nodes {
        by_column[n.generation.min(columns - 1)].push(n);
    }
    let tallest = by_column.iter().map(Vec::len).max().unwrap_or(0) as f64;
    let height = (HEAD_H + PAD + tallest * (NODE_H + NODE_GAP)).max(MIN_HEIGHT);
    let (top, bottom) = (HEAD_H, height - PAD - NODE_H);
    let mut boxes = Vec::new();
    let mut heads = Vec::new();
    for (g, column) in by_column.iter_mut().enumerate() {
        let x = PAD + g as f64 * slot;
        heads.push((x, node_w));
        column.stable_sort_by_key(|n| (n.range.0, n.id));
        // Wanted: level with the range's start; then pushed down so none overlap, and the
        // stack moved up if it ran past the bottom.
        let mut ys: Vec<f64> = column.iter().map(|n| top + (bottom - top) * f64::from(n.range.0) / 65_536.0).collect();
        for i in 1..ys.len() {
            ys[i] = ys[i].max(ys[i - 1] + NODE_H + NODE_GAP);
        }
        if let Some(&last) = ys.last() {
            let over = last - bottom;
            if over > 0.0 {
                for y in ys.iter_mut() {
                    *y -= over;
                }
            }
        }
        for (n, y) in column.iter().zip(ys) {
            boxes.push(NodeBox { id: n.id, x, y: y.max(top), w: node_w, h: NODE_H });
        }
    }
    DagLayout { boxes, height, columns: heads }
}

/// The DAG as JSON for the canvas's `data-dag` attribute: what the browser tests read.
pub fn describe(dag: &SegmentDag) -> String {
    use serde_json::json;
    json!({
        "topic": dag.topic,
        "subscription": dag.subscription,
        "epoch": dag.epoch,
        "nodes": dag.nodes.iter().map(|n| json!({
            "id": n.id, "generation": n.generation, "range": n.range_hex(), "state": n.state.word(),
            "reason": n.reason, "owner": n.owner.as_ref().map(|o| &o.0), "order": n.owner.as_ref().map(|o| o.1),
            "backlog": n.backlog, "gap": n.gap.as_ref().map(|g| g.issue),
        })).collect::<Vec<_>>(),
        "edges": dag.edges,
        "assignment": dag.assignment.iter().map(|(c, s)| json!({"consumer": c, "segments": s})).collect::<Vec<_>>(),
        "nextPoll": dag.next_poll,
        "notes": dag.notes.iter().map(|g| format!("{} {}", g.issue, g.text)).collect::<Vec<_>>(),
    })
    .to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mqviz_app::presets::by_file;
    use mqviz_pulsar::scenario::parse_scenario;

    pub fn world_at(file: &str, t: Millis) -> World {
        let scenario = parse_scenario(by_file(file).unwrap().text).unwrap();
        let mut w = World::new(scenario);
        w.run_until(t);
        w
    }

    fn states(dag: &SegmentDag) -> Vec<(u64, &'static str)> {
        dag.nodes.iter().map(|n| (n.id, n.state.word())).collect()
    }

    #[test]
    fn children_are_withheld_until_their_parent_drains_then_dealt_4_0_5_1_2_3() {
        let w = world_at("pulsar-scalable-children-blocked.json", 1_000);
        let dag = &dags(&w)[0];
        assert_eq!(dag.subscription.as_deref(), Some("sub"));
        assert_eq!(
            states(dag),
            vec![(0, "sealed"), (1, "active"), (2, "active"), (3, "active"), (4, "withheld"), (5, "withheld")]
        );
        assert_eq!(dag.node(4).unwrap().reason.as_deref(), Some("parent 0 not drained"));
        assert_eq!(dag.node(5).unwrap().generation, 1);
        assert_eq!(dag.edges, vec![(0, 4), (0, 5)]);
        assert_eq!(dag.assignment, vec![("consumer-1".to_string(), vec![0, 1, 2, 3])]);
        assert!(dag.next_poll.is_some());
        let w = world_at("pulsar-scalable-children-blocked.json", 12_000);
        let dag = &dags(&w)[0];
        assert_eq!(dag.node(0).unwrap().state, NodeState::Drained);
        assert_eq!(dag.node(4).unwrap().state, NodeState::Active);
        assert_eq!(dag.assignment[0].1, vec![4, 0, 5, 1, 2, 3]);
        assert_eq!(dag.node(0).unwrap().owner, Some(("consumer-1".into(), 2)));
        assert_eq!(dag.node(0).unwrap().gap.as_ref().map(|g| g.issue), Some("#26434"));
        assert_eq!(dag.node(4).unwrap().detail_line(), "→ consumer-1 (1st)");
    }

    #[test]
    fn the_deep_dag_gap_26274_is_marked_on_the_sealed_child() {
        let w = world_at("pulsar-scalable-two-splits.json", 7_500);
        let dag = &dags(&w)[0];
        assert_eq!(dag.generations(), 3);
        let one = dag.node(1).unwrap();
        assert_eq!(one.state, NodeState::Sealed);
        assert_eq!(one.gap.as_ref().map(|g| g.issue), Some("#26274"));
        assert_eq!(dag.assignment[0].1, vec![1, 0]);
        assert_eq!(dag.node(3).unwrap().reason.as_deref(), Some("parent 1 not drained"));
    }

    #[test]
    fn before_any_stream_consumer_the_topic_is_drawn_plain() {
        let w = world_at("pulsar-scalable-post-split-backlog.json", 3_000);
        let dag = &dags(&w)[0];
        assert_eq!(dag.subscription, None);
        assert_eq!(states(dag), vec![(0, "sealed"), (1, "active"), (2, "active")]);
        assert!(dag.assignment.is_empty());
    }

    #[test]
    fn a_consumer_with_only_drained_segments_is_noted() {
        let w = world_at("pulsar-scalable-sealed-not-redelivered.json", 6_000);
        let dag = &dags(&w)[0];
        assert!(dag.notes.iter().any(|n| n.issue == "#26434" && n.text.starts_with("consumer-B")), "{:?}", dag.notes);
    }

    #[test]
    fn layout_puts_generations_in_columns_without_overlap() {
        let w = world_at("pulsar-scalable-children-blocked.json", 1_000);
        let dag = &dags(&w)[0];
        let l = layout(dag, 600.0);
        let (b0, b4, b5, b1) = (l.get(0).unwrap(), l.get(4).unwrap(), l.get(5).unwrap(), l.get(1).unwrap());
        assert!(b4.x > b0.x + b0.w, "children right of their parent");
        assert!(b4.y < b5.y && b5.y < b1.y + NODE_H, "children level with the half they came from");
        for a in &l.boxes {
            for b in &l.boxes {
                let overlap = a.id != b.id && a.x == b.x && (a.y - b.y).abs() < NODE_H;
                assert!(!overlap, "{a:?} overlaps {b:?}");
            }
            assert!(a.y >= HEAD_H && a.y + a.h <= l.height);
        }
        assert_eq!(ordinal(2), "2nd");
        assert_eq!(ordinal(11), "11th");
        assert!(describe(dag).contains("\"withheld\""));
    }
}
