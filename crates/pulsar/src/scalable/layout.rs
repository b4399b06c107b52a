//! The segment DAG of a scalable topic (`SegmentLayout`, `SegmentInfo`, spec §4.1): the initial
//! layout, split, merge and prune with their id and epoch rules, and the layout expressions the
//! conformance vectors use (`initial(4).split(0).merge(1,2)`).
//!
//! Invariant: ACTIVE segments (the leaves) tile `[0, 0xFFFF]`; SEALED ones are interior nodes.

use std::collections::BTreeMap;
use std::fmt;

use super::hash_range::{HashRange, HashRangeError, MAX_HASH};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SegmentState {
    Active,
    Sealed,
}

impl SegmentState {
    pub fn name(self) -> &'static str {
        match self {
            SegmentState::Active => "ACTIVE",
            SegmentState::Sealed => "SEALED",
        }
    }
}

/// One node of the DAG.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    pub segment_id: u64,
    pub hash_range: HashRange,
    pub state: SegmentState,
    pub parent_ids: Vec<u64>,
    pub child_ids: Vec<u64>,
    pub created_at_epoch: u64,
    /// -1 while active.
    pub sealed_at_epoch: i64,
    pub created_at_ms: i64,
    /// -1 while active.
    pub sealed_at_ms: i64,
}

impl SegmentInfo {
    pub fn is_active(&self) -> bool {
        self.state == SegmentState::Active
    }

    fn active(segment_id: u64, hash_range: HashRange, parent_ids: Vec<u64>, epoch: u64, now_ms: i64) -> SegmentInfo {
        SegmentInfo {
            segment_id,
            hash_range,
            state: SegmentState::Active,
            parent_ids,
            child_ids: Vec::new(),
            created_at_epoch: epoch,
            sealed_at_epoch: -1,
            created_at_ms: now_ms,
            sealed_at_ms: -1,
        }
    }

    fn sealed(&self, epoch: u64, now_ms: i64, child_ids: Vec<u64>) -> SegmentInfo {
        SegmentInfo {
            state: SegmentState::Sealed,
            child_ids,
            sealed_at_epoch: epoch as i64,
            sealed_at_ms: now_ms,
            ..self.clone()
        }
    }
}

/// Layout operations upstream rejects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    InvalidSegmentCount(i64),
    SegmentNotFound(Option<u64>),
    CannotSplitNonActive(u64),
    BothSegmentsMustBeActive,
    NotAdjacent { a: HashRange, b: HashRange },
    CannotPruneActive(u64),
    NoActiveSegmentCovers(u32),
    Range(HashRangeError),
    BadExpression(String),
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const IAE: &str = "IllegalArgumentException";
        match self {
            LayoutError::InvalidSegmentCount(n) => write!(f, "{IAE}: numInitialSegments must be in [1, 65536], got: {n}"),
            LayoutError::SegmentNotFound(Some(id)) => write!(f, "{IAE}: Segment not found: {id}"),
            LayoutError::SegmentNotFound(None) => write!(f, "{IAE}: Segment not found"),
            LayoutError::CannotSplitNonActive(id) => write!(f, "{IAE}: Cannot split non-active segment: {id}"),
            LayoutError::BothSegmentsMustBeActive => write!(f, "{IAE}: Both segments must be active"),
            LayoutError::NotAdjacent { a, b } => write!(f, "{IAE}: Segments are not adjacent: {a} and {b}"),
            LayoutError::CannotPruneActive(id) => write!(f, "{IAE}: Cannot prune an active segment: {id}"),
            LayoutError::NoActiveSegmentCovers(h) => write!(f, "IllegalStateException: No active segment covers hash: {h}"),
            LayoutError::Range(e) => write!(f, "{e}"),
            LayoutError::BadExpression(why) => write!(f, "{IAE}: layout expression: {why}"),
        }
    }
}

impl From<HashRangeError> for LayoutError {
    fn from(e: HashRangeError) -> Self {
        LayoutError::Range(e)
    }
}

/// An immutable-by-convention view of `ScalableTopicMetadata`: operations return a new layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentLayout {
    pub epoch: u64,
    pub next_segment_id: u64,
    /// By id; ids are handed out in increasing order, so this is also insertion order.
    segments: BTreeMap<u64, SegmentInfo>,
}

impl SegmentLayout {
    /// `createInitialMetadata(n)`: segment `i` covers `[i * (65536 / n), ...]`, the last one
    /// ends at 0xFFFF; epoch 0, next id `n`. `now_ms` stamps the creation time.
    pub fn initial(n: i64, now_ms: i64) -> Result<SegmentLayout, LayoutError> {
        if !(1..=i64::from(MAX_HASH) + 1).contains(&n) {
            return Err(LayoutError::InvalidSegmentCount(n));
        }
        let width = (i64::from(MAX_HASH) + 1) / n;
        let mut segments = BTreeMap::new();
        for i in 0..n {
            let start = i * width;
            let end = if i == n - 1 { i64::from(MAX_HASH) } else { start + width - 1 };
            let id = i as u64;
            segments.insert(id, SegmentInfo::active(id, HashRange::new(start, end)?, Vec::new(), 0, now_ms));
        }
        Ok(SegmentLayout { epoch: 0, next_segment_id: n as u64, segments })
    }

    pub fn segment(&self, id: u64) -> Option<&SegmentInfo> {
        self.segments.get(&id)
    }

    /// Every segment, by ascending id.
    pub fn all_segments(&self) -> impl Iterator<Item = &SegmentInfo> {
        self.segments.values()
    }

    pub fn active_segments(&self) -> impl Iterator<Item = &SegmentInfo> {
        self.segments.values().filter(|s| s.is_active())
    }

    pub fn len(&self) -> usize {
        self.segments.len()
    }

    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// The active segment whose range contains `hash`.
    pub fn find_active_segment(&self, hash: u32) -> Result<&SegmentInfo, LayoutError> {
        self.active_segments().find(|s| s.hash_range.contains(hash)).ok_or(LayoutError::NoActiveSegmentCovers(hash))
    }

    /// Seals an active segment and creates children `next` and `next + 1` with its two halves.
    pub fn split(&self, id: u64, now_ms: i64) -> Result<SegmentLayout, LayoutError> {
        let parent = self.segments.get(&id).ok_or(LayoutError::SegmentNotFound(Some(id)))?;
        if !parent.is_active() {
            return Err(LayoutError::CannotSplitNonActive(id));
        }
        let (low, high) = parent.hash_range.split()?;
        let epoch = self.epoch + 1;
        let (a, b) = (self.next_segment_id, self.next_segment_id + 1);
        let mut segments = self.segments.clone();
        segments.insert(id, parent.sealed(epoch, now_ms, vec![a, b]));
        segments.insert(a, SegmentInfo::active(a, low, vec![id], epoch, now_ms));
        segments.insert(b, SegmentInfo::active(b, high, vec![id], epoch, now_ms));
        Ok(SegmentLayout { epoch, next_segment_id: self.next_segment_id + 2, segments })
    }

    /// Seals two adjacent active segments and creates one child `next` with their union.
    pub fn merge(&self, a: u64, b: u64, now_ms: i64) -> Result<SegmentLayout, LayoutError> {
        let (Some(sa), Some(sb)) = (self.segments.get(&a), self.segments.get(&b)) else {
            return Err(LayoutError::SegmentNotFound(None));
        };
        if !sa.is_active() || !sb.is_active() {
            return Err(LayoutError::BothSegmentsMustBeActive);
        }
        if !sa.hash_range.is_adjacent_to(&sb.hash_range) {
            return Err(LayoutError::NotAdjacent { a: sa.hash_range, b: sb.hash_range });
        }
        let merged = sa.hash_range.merge(&sb.hash_range)?;
        let epoch = self.epoch + 1;
        let child = self.next_segment_id;
        let mut segments = self.segments.clone();
        segments.insert(a, sa.sealed(epoch, now_ms, vec![child]));
        segments.insert(b, sb.sealed(epoch, now_ms, vec![child]));
        segments.insert(child, SegmentInfo::active(child, merged, vec![a, b], epoch, now_ms));
        Ok(SegmentLayout { epoch, next_segment_id: child + 1, segments })
    }

    /// Removes a sealed segment (GC) and its id from its children's parents and parents' children.
    pub fn prune(&self, id: u64) -> Result<SegmentLayout, LayoutError> {
        let doomed = self.segments.get(&id).ok_or(LayoutError::SegmentNotFound(Some(id)))?;
        if doomed.is_active() {
            return Err(LayoutError::CannotPruneActive(id));
        }
        let mut segments = self.segments.clone();
        segments.remove(&id);
        for child in &doomed.child_ids {
            if let Some(c) = segments.get_mut(child) {
                c.parent_ids.retain(|&p| p != id);
            }
        }
        for parent in &doomed.parent_ids {
            if let Some(p) = segments.get_mut(parent) {
                p.child_ids.retain(|&c| c != id);
            }
        }
        Ok(SegmentLayout { epoch: self.epoch + 1, next_segment_id: self.next_segment_id, segments })
    }

    /// Applies one operation written `split(id)`, `merge(a,b)` or `prune(id)`.
    pub fn apply_op(&self, op: &str, now_ms: i64) -> Result<SegmentLayout, LayoutError> {
        let (name, args) = parse_call(op)?;
        match (name, args.as_slice()) {
            ("split", &[id]) => self.split(to_id(id)?, now_ms),
            ("merge", &[a, b]) => self.merge(to_id(a)?, to_id(b)?, now_ms),
            ("prune", &[id]) => self.prune(to_id(id)?),
            _ => Err(LayoutError::BadExpression(format!("unknown operation {op:?}"))),
        }
    }

    /// Builds a layout from `initial(n)` followed by operations, either chained with `.` in one
    /// string or given as separate items.
    pub fn from_ops<'a>(ops: impl IntoIterator<Item = &'a str>, now_ms: i64) -> Result<SegmentLayout, LayoutError> {
        let mut calls = ops.into_iter().flat_map(split_chain);
        let first = calls.next().ok_or_else(|| LayoutError::BadExpression("empty".into()))?;
        let (name, args) = parse_call(&first)?;
        let mut layout = match (name, args.as_slice()) {
            ("initial", &[n]) => SegmentLayout::initial(n, now_ms)?,
            _ => return Err(LayoutError::BadExpression(format!("must start with initial(n), got {first:?}"))),
        };
        for call in calls {
            layout = layout.apply_op(&call, now_ms)?;
        }
        Ok(layout)
    }

    /// Parses a chained expression such as `initial(4).split(0).merge(4,5)`.
    pub fn parse(expression: &str, now_ms: i64) -> Result<SegmentLayout, LayoutError> {
        SegmentLayout::from_ops([expression], now_ms)
    }
}

fn split_chain(text: &str) -> Vec<String> {
    // Dots only separate calls (arguments are integers), so a plain split is exact.
    text.split('.').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

fn to_id(v: i64) -> Result<u64, LayoutError> {
    u64::try_from(v).map_err(|_| LayoutError::SegmentNotFound(None))
}

fn parse_call(call: &str) -> Result<(&str, Vec<i64>), LayoutError> {
    let bad = || LayoutError::BadExpression(format!("{call:?} is not name(int, ...)"));
    let call = call.trim();
    let open = call.find('(').ok_or_else(bad)?;
    let inner = call[open + 1..].strip_suffix(')').ok_or_else(bad)?;
    let args = inner.split(',').map(|a| a.trim().parse::<i64>().map_err(|_| bad())).collect::<Result<Vec<_>, _>>()?;
    Ok((call[..open].trim(), args))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (id, start, end, state, parents, children)
    type Row = (u64, u32, u32, &'static str, Vec<u64>, Vec<u64>);

    fn summary(l: &SegmentLayout) -> Vec<Row> {
        l.all_segments()
            .map(|s| {
                (s.segment_id, s.hash_range.start, s.hash_range.end, s.state.name(), s.parent_ids.clone(), s.child_ids.clone())
            })
            .collect()
    }

    #[test]
    fn merge_depth_example() {
        let l = SegmentLayout::parse("initial(1).split(0).merge(1,2).split(3)", 0).unwrap();
        assert_eq!((l.epoch, l.next_segment_id), (3, 6));
        assert_eq!(
            summary(&l),
            vec![
                (0, 0, 0xffff, "SEALED", vec![], vec![1, 2]),
                (1, 0, 0x7fff, "SEALED", vec![0], vec![3]),
                (2, 0x8000, 0xffff, "SEALED", vec![0], vec![3]),
                (3, 0, 0xffff, "SEALED", vec![1, 2], vec![4, 5]),
                (4, 0, 0x7fff, "ACTIVE", vec![3], vec![]),
                (5, 0x8000, 0xffff, "ACTIVE", vec![3], vec![]),
            ]
        );
    }

    #[test]
    fn initial_layouts_tile_the_space() {
        let l = SegmentLayout::initial(3, 0).unwrap();
        let ranges: Vec<(u32, u32)> = l.all_segments().map(|s| (s.hash_range.start, s.hash_range.end)).collect();
        assert_eq!(ranges, vec![(0, 21844), (21845, 43689), (43690, 65535)]);
        assert!(SegmentLayout::initial(0, 0).is_err());
        assert_eq!(SegmentLayout::initial(65_536, 0).unwrap().len(), 65_536);
    }

    #[test]
    fn errors() {
        let l = SegmentLayout::parse("initial(4)", 0).unwrap();
        assert_eq!(
            l.merge(0, 2, 0).unwrap_err().to_string(),
            "IllegalArgumentException: Segments are not adjacent: [0000, 3fff] and [8000, bfff]"
        );
        let s = l.split(0, 0).unwrap();
        assert_eq!(s.split(0, 0).unwrap_err(), LayoutError::CannotSplitNonActive(0));
        assert_eq!(s.merge(0, 1, 0).unwrap_err(), LayoutError::BothSegmentsMustBeActive);
        assert_eq!(l.prune(0).unwrap_err(), LayoutError::CannotPruneActive(0));
        assert_eq!(l.split(9, 0).unwrap_err(), LayoutError::SegmentNotFound(Some(9)));
        assert!(SegmentLayout::parse("split(0)", 0).is_err());
        assert!(SegmentLayout::parse("initial(2).explode(1)", 0).is_err());
        assert!(SegmentLayout::parse("initial(2).split(x)", 0).is_err());
        assert_eq!(l.find_active_segment(0x9000).unwrap().segment_id, 2);
    }

    #[test]
    fn prune_unlinks_and_bumps_the_epoch() {
        let l = SegmentLayout::from_ops(["initial(2)", "split(0)", "prune(0)"], 0).unwrap();
        assert_eq!((l.epoch, l.next_segment_id, l.len()), (2, 4, 3));
        assert!(l.all_segments().all(|s| s.parent_ids.is_empty()));
    }

    #[test]
    fn seal_stamps_epoch_and_time() {
        let l = SegmentLayout::initial(1, 5).unwrap().split(0, 99).unwrap();
        let p = l.segment(0).unwrap();
        assert_eq!((p.sealed_at_epoch, p.sealed_at_ms, p.created_at_ms), (1, 99, 5));
        assert_eq!(l.segment(1).unwrap().created_at_epoch, 1);
    }
}
