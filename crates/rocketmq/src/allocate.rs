//! Client-side queue allocation strategies (shared/specs/rocketmq.md §6), reproducing the upstream
//! `AllocateMessageQueueStrategy` implementations result for result, quirks included:
//!
//! - arguments are used in the order given (the caller sorts, as `rebalanceByTopic` does);
//! - a consumer's position is `cidAll.indexOf(currentCID)`, the first occurrence, so duplicated
//!   client ids share one block while another block is left without an owner;
//! - CONFIG returns the configured list without any check;
//! - CONSISTENT_HASH builds a ring where colliding virtual nodes overwrite (last wins) and a
//!   duplicated client id adds further virtual nodes numbered after the ones it already owns.
//!
//! [`allocate`] is the per-consumer call; [`allocate_group`] computes every consumer's result in one
//! pass (one ring, one hash per queue) and agrees with [`allocate`] for each client id.

use mqviz_engine::sort::StableSort;
use mqviz_engine::vec_map::{VecMap, VecSet};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fmt::Write as _;

use super::types::{java_str_cmp, MessageQueue};
use mqviz_engine::hash::md5::rocketmq_md5_hash;

/// `AllocateMessageQueueConsistentHash` default `virtualNodeCnt`.
pub const DEFAULT_VIRTUAL_NODES: u32 = 10;

/// An allocation strategy and its configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// `AllocateMessageQueueAveragely` (the default): contiguous blocks.
    Avg,
    /// `AllocateMessageQueueAveragelyByCircle`: queue `k` goes to consumer `k % N`.
    AvgByCircle,
    /// `AllocateMessageQueueByConfig`: every consumer gets this list, unchecked.
    Config { queues: Vec<MessageQueue> },
    /// `AllocateMessageQueueByMachineRoom`: only brokers named `<idc>@<name>` with `idc` in the set.
    MachineRoom { consumer_idcs: VecSet<String> },
    /// `AllocateMachineRoomNearby` with the resolver of the upstream tests: the machine room of a
    /// broker name or client id is Java `name.split("-")[0]` (the text before the first `-`).
    MachineRoomNearby { inner: Box<Strategy> },
    /// `AllocateMessageQueueConsistentHash` with the default MD5 hash function.
    ConsistentHash { virtual_nodes: u32 },
}

impl Strategy {
    /// The strategy's name as the Java `getName()` gives it (for MACHINE_ROOM_NEARBY upstream
    /// appends `-<inner name>`; this returns the bare name).
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Avg => "AVG",
            Strategy::AvgByCircle => "AVG_BY_CIRCLE",
            Strategy::Config { .. } => "CONFIG",
            Strategy::MachineRoom { .. } => "MACHINE_ROOM",
            Strategy::MachineRoomNearby { .. } => "MACHINE_ROOM_NEARBY",
            Strategy::ConsistentHash { .. } => "CONSISTENT_HASH",
        }
    }
}

/// The exceptions `allocate()` throws upstream. `Display` gives `"<Java class>: <message>"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocateError {
    /// `currentCID` is empty.
    CurrentCidEmpty,
    /// `mqAll` is null or empty.
    MqAllEmpty,
    /// `cidAll` is null or empty.
    CidAllEmpty,
    /// MACHINE_ROOM_NEARBY: a broker or client resolves to an empty machine room. Holds the Java
    /// message, e.g. `Machine room is null for consumer id -abc`.
    EmptyRoomName(String),
    /// MACHINE_ROOM_NEARBY: a broker name or client id made only of `-` characters, for which the
    /// resolver's `split("-")[0]` indexes an empty array.
    RoomNameOutOfBounds,
}

impl fmt::Display for AllocateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocateError::CurrentCidEmpty => f.write_str("IllegalArgumentException: currentCID is empty"),
            AllocateError::MqAllEmpty => f.write_str("IllegalArgumentException: mqAll is null or mqAll empty"),
            AllocateError::CidAllEmpty => f.write_str("IllegalArgumentException: cidAll is null or cidAll empty"),
            AllocateError::EmptyRoomName(message) => {
                write!(f, "IllegalArgumentException: {message}")
            }
            AllocateError::RoomNameOutOfBounds => {
                f.write_str("ArrayIndexOutOfBoundsException: Index 0 out of bounds for length 0")
            }
        }
    }
}

impl std::error::Error for AllocateError {}

/// `strategy.allocate(group, currentCID, mqAll, cidAll)` exactly as upstream (an empty slice stands
/// for Java null as well: both fail the same check).
pub fn allocate(
    strategy: &Strategy,
    current_cid: &str,
    mq_all: &[MessageQueue],
    cid_all: &[String],
) -> Result<Vec<MessageQueue>, AllocateError> {
    if let Strategy::Config { queues } = strategy {
        return Ok(queues.clone());
    }
    check(current_cid, mq_all, cid_all)?;
    let Some(index) = cid_all.iter().position(|c| c == current_cid) else {
        return Ok(Vec::new());
    };
    let n = cid_all.len();
    Ok(match strategy {
        Strategy::Config { .. } => unreachable!("handled above"),
        Strategy::Avg => mq_all[avg_range(index, mq_all.len(), n)].to_vec(),
        Strategy::AvgByCircle => circle_block(index, mq_all, n),
        Strategy::MachineRoom { consumer_idcs } => {
            let pre = machine_room_queues(consumer_idcs, mq_all);
            machine_room_block(index, &pre, n)
        }
        Strategy::MachineRoomNearby { inner } => return nearby_single(inner, current_cid, mq_all, cid_all),
        Strategy::ConsistentHash { virtual_nodes } => {
            let ring = Ring::build(cid_all, *virtual_nodes, rocketmq_md5_hash);
            let mut buf = String::new();
            mq_all
                .iter()
                .filter(|mq| ring.owner(rocketmq_md5_hash(mq_key(&mut buf, mq))).is_some_and(|o| o == current_cid))
                .cloned()
                .collect()
        }
    })
}

/// The result of [`allocate`] for every distinct client id of `cid_all`, computed in one pass.
///
/// For each distinct `cid` of `cid_all`: if `allocate(strategy, cid, ..)` returns `Ok(list)` the
/// map holds `cid -> list`; the empty client id (for which `allocate` fails with
/// [`AllocateError::CurrentCidEmpty`], except under CONFIG) is left out. The other failures do not
/// depend on which member calls, so they fail the whole group: `Err(MqAllEmpty)` and
/// `Err(CidAllEmpty)` (even when `cid_all` holds no non-empty id, as for any caller) and the
/// MACHINE_ROOM_NEARBY room errors (only when there is a non-empty member: upstream resolves rooms
/// after the membership test).
pub fn allocate_group(
    strategy: &Strategy,
    mq_all: &[MessageQueue],
    cid_all: &[String],
) -> Result<VecMap<String, Vec<MessageQueue>>, AllocateError> {
    let members = first_indices(cid_all, matches!(strategy, Strategy::Config { .. }));
    let lists = group_lists(strategy, mq_all, cid_all, &members, &mut RingCache::default())?;
    Ok(members.iter().map(|&(cid, _)| cid.to_string()).zip(lists).collect())
}

/// `AbstractAllocateMessageQueueStrategy.check`, minus the membership test done by the caller.
fn check(current_cid: &str, mq_all: &[MessageQueue], cid_all: &[String]) -> Result<(), AllocateError> {
    if current_cid.is_empty() {
        return Err(AllocateError::CurrentCidEmpty);
    }
    check_lists(mq_all, cid_all)
}

fn check_lists(mq_all: &[MessageQueue], cid_all: &[String]) -> Result<(), AllocateError> {
    if mq_all.is_empty() {
        return Err(AllocateError::MqAllEmpty);
    }
    if cid_all.is_empty() {
        return Err(AllocateError::CidAllEmpty);
    }
    Ok(())
}

/// Distinct client ids with the index of their first occurrence, in first-occurrence order.
fn first_indices(cid_all: &[String], keep_empty: bool) -> Vec<(&str, usize)> {
    let mut seen = HashSet::with_capacity(cid_all.len());
    cid_all
        .iter()
        .enumerate()
        .filter(|(_, c)| (keep_empty || !c.is_empty()) && seen.insert(c.as_str()))
        .map(|(i, c)| (c.as_str(), i))
        .collect()
}

/// The results for `members` (as built by [`first_indices`] over `cid_all`), in the same order.
fn group_lists(
    strategy: &Strategy,
    mq_all: &[MessageQueue],
    cid_all: &[String],
    members: &[(&str, usize)],
    cache: &mut RingCache,
) -> Result<Vec<Vec<MessageQueue>>, AllocateError> {
    if let Strategy::Config { queues } = strategy {
        return Ok(members.iter().map(|_| queues.clone()).collect());
    }
    check_lists(mq_all, cid_all)?;
    if members.is_empty() {
        // Only the empty id: nobody gets past the checks, and no room is ever resolved.
        return Ok(Vec::new());
    }
    let n = cid_all.len();
    Ok(match strategy {
        Strategy::Config { .. } => unreachable!("handled above"),
        Strategy::Avg => members.iter().map(|&(_, i)| mq_all[avg_range(i, mq_all.len(), n)].to_vec()).collect(),
        Strategy::AvgByCircle => members.iter().map(|&(_, i)| circle_block(i, mq_all, n)).collect(),
        Strategy::MachineRoom { consumer_idcs } => {
            let pre = machine_room_queues(consumer_idcs, mq_all);
            members.iter().map(|&(_, i)| machine_room_block(i, &pre, n)).collect()
        }
        Strategy::MachineRoomNearby { inner } => return nearby_group(inner, mq_all, cid_all, members),
        Strategy::ConsistentHash { virtual_nodes } => {
            let ring = cache.ring(cid_all, *virtual_nodes);
            consistent_hash_group(ring, mq_all, members)
        }
    })
}

// ------------------------------------------------------------------------------------------ AVG

/// AVG: the index range of consumer `index` among `n` consumers over `q` queues (empty when
/// `index >= q`).
fn avg_range(index: usize, q: usize, n: usize) -> std::ops::Range<usize> {
    let rem = q % n;
    let extra = rem > 0 && index < rem;
    let size = if q <= n {
        1
    } else if extra {
        q / n + 1
    } else {
        q / n
    };
    let start = if extra { index * size } else { index * size + rem };
    if start >= q {
        return 0..0;
    }
    start..start + size.min(q - start)
}

/// AVG_BY_CIRCLE: queues `k >= index` with `k % n == index`.
fn circle_block(index: usize, mq_all: &[MessageQueue], n: usize) -> Vec<MessageQueue> {
    mq_all.iter().skip(index).step_by(n).cloned().collect()
}

// --------------------------------------------------------------------------------- MACHINE_ROOM

/// Java `s.split(String.valueOf(sep))` for a plain (non-regex) separator: no separator gives
/// `[s]` (also for `""`); otherwise trailing empty parts are removed.
fn java_split(s: &str, sep: char) -> Vec<&str> {
    if !s.contains(sep) {
        return vec![s];
    }
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

/// MACHINE_ROOM: `mqAll` filtered to brokers whose `split("@")` has exactly two parts, the first
/// being one of the consumer IDCs (order kept).
fn machine_room_queues<'a>(idcs: &VecSet<String>, mq_all: &'a [MessageQueue]) -> Vec<&'a MessageQueue> {
    mq_all
        .iter()
        .filter(|mq| {
            let parts = java_split(&mq.broker, '@');
            parts.len() == 2 && idcs.contains(parts[0])
        })
        .collect()
}

/// MACHINE_ROOM: `m = |pre| / n` contiguous queues, plus one from the tail for the first
/// `|pre| % n` consumers.
fn machine_room_block(index: usize, pre: &[&MessageQueue], n: usize) -> Vec<MessageQueue> {
    let m = pre.len() / n;
    let rem = pre.len() % n;
    let mut out: Vec<MessageQueue> = pre[index * m..index * m + m].iter().map(|&mq| mq.clone()).collect();
    if index < rem {
        out.push(pre[index + m * n].clone());
    }
    out
}

// -------------------------------------------------------------------------- MACHINE_ROOM_NEARBY

/// A string ordered like Java `String.compareTo` (the keys of the upstream `TreeMap`s).
#[derive(Clone, Copy, PartialEq, Eq)]
struct JavaOrd<'a>(&'a str);

impl Ord for JavaOrd<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        java_str_cmp(self.0, other.0)
    }
}

impl PartialOrd for JavaOrd<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The test resolver `name.split("-")[0]`: `Ok("")` for a leading `-` or an empty name (which the
/// caller rejects), `Err` when the name is only dashes (the split array is empty).
fn dash_room(name: &str) -> Result<&str, AllocateError> {
    if !name.is_empty() && name.bytes().all(|b| b == b'-') {
        return Err(AllocateError::RoomNameOutOfBounds);
    }
    Ok(name.split('-').next().unwrap_or(""))
}

type QueuesByRoom<'a> = VecMap<JavaOrd<'a>, Vec<MessageQueue>>;
type ConsumersByRoom<'a> = VecMap<JavaOrd<'a>, Vec<String>>;

/// The two `TreeMap`s of `AllocateMachineRoomNearby`, with its errors in upstream order (all queues
/// first, then all consumers).
fn group_by_room<'a>(
    mq_all: &'a [MessageQueue],
    cid_all: &'a [String],
) -> Result<(QueuesByRoom<'a>, ConsumersByRoom<'a>), AllocateError> {
    let mut queues: QueuesByRoom = VecMap::new();
    for mq in mq_all {
        let room = dash_room(&mq.broker)?;
        if room.is_empty() {
            return Err(AllocateError::EmptyRoomName(format!("Machine room is null for mq {}", mq.java_to_string())));
        }
        queues.entry(JavaOrd(room)).or_default().push(mq.clone());
    }
    let mut consumers: ConsumersByRoom = VecMap::new();
    for cid in cid_all {
        let room = dash_room(cid)?;
        if room.is_empty() {
            return Err(AllocateError::EmptyRoomName(format!("Machine room is null for consumer id {cid}")));
        }
        consumers.entry(JavaOrd(room)).or_default().push(cid.clone());
    }
    Ok((queues, consumers))
}

/// MACHINE_ROOM_NEARBY for one consumer (already checked and a member of `cid_all`).
fn nearby_single(
    inner: &Strategy,
    current_cid: &str,
    mq_all: &[MessageQueue],
    cid_all: &[String],
) -> Result<Vec<MessageQueue>, AllocateError> {
    let (queues, consumers) = group_by_room(mq_all, cid_all)?;
    let my_room = JavaOrd(dash_room(current_cid)?);
    let mut out = Vec::new();
    if let Some(mqs) = queues.get(&my_room) {
        let same_room = consumers.get(&my_room).map(Vec::as_slice).unwrap_or(&[]);
        out.extend(allocate(inner, current_cid, mqs, same_room)?);
    }
    for (room, mqs) in &queues {
        if *room != my_room && !consumers.contains_key(room) {
            out.extend(allocate(inner, current_cid, mqs, cid_all)?);
        }
    }
    Ok(out)
}

/// MACHINE_ROOM_NEARBY for every member: each room's queues are allocated once among that room's
/// consumers, and each room without consumers once among everybody.
fn nearby_group(
    inner: &Strategy,
    mq_all: &[MessageQueue],
    cid_all: &[String],
    members: &[(&str, usize)],
) -> Result<Vec<Vec<MessageQueue>>, AllocateError> {
    let (queues, consumers) = group_by_room(mq_all, cid_all)?;
    let slot: HashMap<&str, usize> = members.iter().enumerate().map(|(k, &(cid, _))| (cid, k)).collect();
    let mut out: Vec<Vec<MessageQueue>> = vec![Vec::new(); members.len()];
    let mut cache = RingCache::default();
    // 1. Queues of a room that has consumers go to those consumers only (listed first).
    for (room, room_cids) in &consumers {
        let Some(mqs) = queues.get(room) else {
            continue;
        };
        let room_members = first_indices(room_cids, false);
        let lists = group_lists(inner, mqs, room_cids, &room_members, &mut RingCache::default())?;
        for (&(cid, _), list) in room_members.iter().zip(lists) {
            if let Some(&k) = slot.get(cid) {
                out[k].extend(list);
            }
        }
    }
    // 2. Rooms without consumers, in room order, are shared by all consumers.
    for (room, mqs) in &queues {
        if consumers.contains_key(room) {
            continue;
        }
        let lists = group_lists(inner, mqs, cid_all, members, &mut cache)?;
        for (k, list) in lists.into_iter().enumerate() {
            out[k].extend(list);
        }
    }
    Ok(out)
}

// ------------------------------------------------------------------------------ CONSISTENT_HASH

/// `ConsistentHashRouter` after adding every client of `cidAll` in order: sorted virtual-node
/// points with the index (into `names`) of the client that owns each.
struct Ring {
    names: Vec<String>,
    points: Vec<(u32, usize)>,
}

impl Ring {
    /// Adds `vnodes` virtual nodes per entry of `cid_all`; node `j` of a client is keyed
    /// `"<cid>-<existing + j>"`, where `existing` counts the nodes that client owns on the ring at
    /// that moment (a duplicated client id continues the numbering); a colliding hash replaces the
    /// previous node (`TreeMap.put`).
    fn build(cid_all: &[String], vnodes: u32, hash: impl Fn(&str) -> u32) -> Ring {
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        let mut owned: Vec<u64> = Vec::new();
        let mut nodes: HashMap<u32, usize> = HashMap::with_capacity(cid_all.len().saturating_mul(vnodes as usize).min(1 << 20));
        let mut key = String::new();
        for cid in cid_all {
            let id = *ids.entry(cid.as_str()).or_insert_with(|| {
                names.push(cid.clone());
                owned.push(0);
                names.len() - 1
            });
            let existing = owned[id];
            for j in 0..u64::from(vnodes) {
                key.clear();
                key.push_str(cid);
                key.push('-');
                let _ = write!(key, "{}", existing + j);
                if let Some(previous) = nodes.insert(hash(&key), id) {
                    owned[previous] -= 1;
                }
                owned[id] += 1;
            }
        }
        let mut points: Vec<(u32, usize)> = nodes.into_iter().collect();
        points.stable_sort();
        Ring { names, points }
    }

    /// Index into `names` of the owner of the first point at or after `h`, wrapping around; `None`
    /// on an empty ring.
    fn owner_id(&self, h: u32) -> Option<usize> {
        let at = self.points.partition_point(|&(p, _)| p < h);
        self.points.get(at).or_else(|| self.points.first()).map(|&(_, id)| id)
    }

    fn owner(&self, h: u32) -> Option<&str> {
        self.owner_id(h).map(|id| self.names[id].as_str())
    }
}

/// The ring of the last `(cid_all, vnodes)` asked for, so that repeated allocations over the same
/// consumers (the rooms without consumers of MACHINE_ROOM_NEARBY) build it once.
#[derive(Default)]
struct RingCache {
    last: Option<(Vec<String>, u32, Ring)>,
}

impl RingCache {
    fn ring(&mut self, cid_all: &[String], vnodes: u32) -> &Ring {
        let fresh = self.last.as_ref().is_some_and(|(c, v, _)| c.as_slice() == cid_all && *v == vnodes);
        if !fresh {
            self.last = Some((cid_all.to_vec(), vnodes, Ring::build(cid_all, vnodes, rocketmq_md5_hash)));
        }
        &self.last.as_ref().expect("set above").2
    }
}

/// `"MessageQueue [topic=.., brokerName=.., queueId=..]"` written into `buf` (no allocation per
/// queue); equal to [`MessageQueue::java_to_string`].
fn mq_key<'b>(buf: &'b mut String, mq: &MessageQueue) -> &'b str {
    buf.clear();
    let _ = write!(buf, "MessageQueue [topic={}, brokerName={}, queueId={}]", mq.topic, mq.broker, mq.queue_id);
    buf
}

/// CONSISTENT_HASH for every member: each queue is hashed once and handed to its owner.
fn consistent_hash_group(ring: &Ring, mq_all: &[MessageQueue], members: &[(&str, usize)]) -> Vec<Vec<MessageQueue>> {
    let slot: HashMap<&str, usize> = members.iter().enumerate().map(|(k, &(cid, _))| (cid, k)).collect();
    let owner_slot: Vec<Option<usize>> = ring.names.iter().map(|name| slot.get(name.as_str()).copied()).collect();
    let mut out: Vec<Vec<MessageQueue>> = vec![Vec::new(); members.len()];
    let mut buf = String::new();
    for mq in mq_all {
        if let Some(k) = ring.owner_id(rocketmq_md5_hash(mq_key(&mut buf, mq))).and_then(|id| owner_slot[id]) {
            out[k].push(mq.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use mqviz_engine::SplitMix64 as Rng;

    fn mqs(broker: &str, n: u32) -> Vec<MessageQueue> {
        (0..n).map(|i| MessageQueue::new("topic", broker, i)).collect()
    }

    fn cids(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    fn ids(list: &[MessageQueue]) -> Vec<u32> {
        list.iter().map(|mq| mq.queue_id).collect()
    }

    #[test]
    fn names() {
        let nearby = Strategy::MachineRoomNearby { inner: Box::new(Strategy::Avg) };
        assert_eq!(Strategy::Avg.name(), "AVG");
        assert_eq!(Strategy::AvgByCircle.name(), "AVG_BY_CIRCLE");
        assert_eq!(Strategy::Config { queues: vec![] }.name(), "CONFIG");
        assert_eq!(Strategy::MachineRoom { consumer_idcs: VecSet::new() }.name(), "MACHINE_ROOM");
        assert_eq!(nearby.name(), "MACHINE_ROOM_NEARBY");
        assert_eq!(Strategy::ConsistentHash { virtual_nodes: 10 }.name(), "CONSISTENT_HASH");
    }

    #[test]
    fn checks_and_error_texts() {
        let q = mqs("b", 3);
        let c = cids("c", 2);
        for s in [Strategy::Avg, Strategy::AvgByCircle, Strategy::ConsistentHash { virtual_nodes: 3 }] {
            let e = allocate(&s, "", &q, &c).unwrap_err();
            assert_eq!(e.to_string(), "IllegalArgumentException: currentCID is empty");
            let e = allocate(&s, "c0", &[], &c).unwrap_err();
            assert_eq!(e.to_string(), "IllegalArgumentException: mqAll is null or mqAll empty");
            let e = allocate(&s, "c0", &q, &[]).unwrap_err();
            assert_eq!(e.to_string(), "IllegalArgumentException: cidAll is null or cidAll empty");
            // The empty-currentCID check comes first.
            assert_eq!(allocate(&s, "", &[], &[]), Err(AllocateError::CurrentCidEmpty));
            assert_eq!(allocate(&s, "other", &q, &c), Ok(vec![]));
        }
        // CONFIG checks nothing.
        let config = Strategy::Config { queues: q.clone() };
        assert_eq!(allocate(&config, "", &[], &[]), Ok(q.clone()));
    }

    #[test]
    fn avg_blocks_and_duplicates() {
        let q = mqs("b", 10);
        let c = cids("c", 4);
        let got: Vec<Vec<u32>> = c.iter().map(|cid| ids(&allocate(&Strategy::Avg, cid, &q, &c).unwrap())).collect();
        assert_eq!(got, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7], vec![8, 9]]);
        // More consumers than queues: the tail idles.
        let c = cids("c", 5);
        let q3 = mqs("b", 3);
        let got: Vec<Vec<u32>> = c.iter().map(|cid| ids(&allocate(&Strategy::Avg, cid, &q3, &c).unwrap())).collect();
        assert_eq!(got, vec![vec![0], vec![1], vec![2], vec![], vec![]]);
        // A duplicated id takes its first position; the block of the second copy is orphaned.
        let dup: Vec<String> = ["a", "b", "b", "c"].iter().map(|s| s.to_string()).collect();
        assert_eq!(ids(&allocate(&Strategy::Avg, "b", &q, &dup).unwrap()), vec![3, 4, 5]);
        assert_eq!(ids(&allocate(&Strategy::Avg, "c", &q, &dup).unwrap()), vec![8, 9]);
    }

    #[test]
    fn avg_by_circle() {
        let q = mqs("b", 10);
        let c = cids("c", 4);
        let got: Vec<Vec<u32>> = c.iter().map(|cid| ids(&allocate(&Strategy::AvgByCircle, cid, &q, &c).unwrap())).collect();
        assert_eq!(got, vec![vec![0, 4, 8], vec![1, 5, 9], vec![2, 6], vec![3, 7]]);
    }

    #[test]
    fn machine_room_takes_extras_from_the_tail() {
        let mut q = mqs("room1@broker-a", 5);
        q.extend((5..10).map(|i| MessageQueue::new("topic", "room2@broker-b", i)));
        let c = cids("c", 2);
        let s = Strategy::MachineRoom { consumer_idcs: ["room1".to_string()].into() };
        assert_eq!(ids(&allocate(&s, "c0", &q, &c).unwrap()), vec![0, 1, 4]);
        assert_eq!(ids(&allocate(&s, "c1", &q, &c).unwrap()), vec![2, 3]);
    }

    #[test]
    fn java_split_semantics() {
        assert_eq!(java_split("", '@'), vec![""]);
        assert_eq!(java_split("abc", '@'), vec!["abc"]);
        assert_eq!(java_split("a@b", '@'), vec!["a", "b"]);
        assert_eq!(java_split("a@b@", '@'), vec!["a", "b"]);
        assert_eq!(java_split("@b", '@'), vec!["", "b"]);
        assert_eq!(java_split("a@@", '@'), vec!["a"]);
        assert_eq!(java_split("@@", '@'), Vec::<&str>::new());
        assert_eq!(java_split("x@room0@b", '@'), vec!["x", "room0", "b"]);
        assert_eq!(dash_room("IDC1-broker-a"), Ok("IDC1"));
        assert_eq!(dash_room("plain"), Ok("plain"));
        assert_eq!(dash_room("-x"), Ok(""));
        assert_eq!(dash_room(""), Ok(""));
        assert_eq!(dash_room("--"), Err(AllocateError::RoomNameOutOfBounds));
    }

    #[test]
    fn nearby_rooms() {
        let nearby = Strategy::MachineRoomNearby { inner: Box::new(Strategy::Avg) };
        let mut q = mqs("IDC1-b", 4);
        q.extend(mqs("IDC2-b", 2));
        q.extend(mqs("IDC3-b", 3));
        let c: Vec<String> = ["IDC1-x", "IDC1-y", "IDC3-z"].iter().map(|s| s.to_string()).collect();
        // IDC2 has no consumer: shared by everybody, after the own room's queues.
        let x = allocate(&nearby, "IDC1-x", &q, &c).unwrap();
        assert_eq!(x.iter().map(MessageQueue::short).collect::<Vec<_>>(), ["IDC1-b:0", "IDC1-b:1", "IDC2-b:0"]);
        let z = allocate(&nearby, "IDC3-z", &q, &c).unwrap();
        assert_eq!(z.iter().map(MessageQueue::short).collect::<Vec<_>>(), ["IDC3-b:0", "IDC3-b:1", "IDC3-b:2"]);
        let group = allocate_group(&nearby, &q, &c).unwrap();
        assert_eq!(group["IDC1-x"], x);
        assert_eq!(group["IDC3-z"], z);

        let mut bad = q.clone();
        bad.push(MessageQueue::new("T", "-b", 7));
        let e = allocate(&nearby, "IDC1-x", &bad, &c).unwrap_err();
        assert_eq!(
            e.to_string(),
            "IllegalArgumentException: Machine room is null for mq MessageQueue [topic=T, brokerName=-b, queueId=7]"
        );
        let mut bad_c = c.clone();
        bad_c.push("-c".to_string());
        let e = allocate(&nearby, "IDC1-x", &q, &bad_c).unwrap_err();
        assert_eq!(e.to_string(), "IllegalArgumentException: Machine room is null for consumer id -c");
        // Not a member: the check returns [] before any room is resolved.
        assert_eq!(allocate(&nearby, "IDC9-w", &bad, &bad_c), Ok(vec![]));
        assert_eq!(allocate_group(&nearby, &bad, &c), Err(e_mq(&bad)));
    }

    fn e_mq(q: &[MessageQueue]) -> AllocateError {
        AllocateError::EmptyRoomName(format!("Machine room is null for mq {}", q.last().unwrap().java_to_string()))
    }

    #[test]
    fn mq_key_is_java_to_string() {
        let mq = MessageQueue::new("topic_test", "brokerName", 7);
        assert_eq!(mq_key(&mut String::from("junk"), &mq), mq.java_to_string());
    }

    /// `ConsistentHashRouter` transcribed literally: `getExistingReplicas` scans the ring.
    fn naive_ring(cid_all: &[String], vnodes: u32, hash: impl Fn(&str) -> u32) -> BTreeMap<u32, String> {
        let mut ring: BTreeMap<u32, String> = BTreeMap::new();
        for cid in cid_all {
            let existing = ring.values().filter(|c| *c == cid).count() as u32;
            for j in 0..vnodes {
                ring.insert(hash(&format!("{cid}-{}", existing + j)), cid.clone());
            }
        }
        ring
    }

    fn naive_owner(ring: &BTreeMap<u32, String>, h: u32) -> Option<&str> {
        ring.range(h..).next().or_else(|| ring.iter().next()).map(|(_, c)| c.as_str())
    }

    #[test]
    fn ring_collisions_last_wins_and_duplicates_extend() {
        // A weak hash (6 bits) makes collisions frequent, so overwrite order and replica numbering
        // are exercised; the real hash is MD5.
        let weak = |s: &str| rocketmq_md5_hash(s) & 0x3f;
        let mut rng = Rng::new(7);
        for _ in 0..300 {
            let n = rng.index(8);
            let cid_all: Vec<String> = (0..n).map(|_| rng.pick(&["a", "b", "c", "dd", "CID-1"]).to_string()).collect();
            let vnodes = rng.index(12) as u32;
            let ring = Ring::build(&cid_all, vnodes, weak);
            let naive = naive_ring(&cid_all, vnodes, weak);
            assert_eq!(ring.points.len(), naive.len());
            for h in (0..70).chain([u32::MAX]) {
                assert_eq!(ring.owner(h), naive_owner(&naive, h), "cids {cid_all:?} vnodes {vnodes} h {h}");
            }
        }
        // With MD5 too.
        let cid_all: Vec<String> = ["CID-0", "CID-1", "CID-0", "CID-2"].iter().map(|s| s.to_string()).collect();
        let ring = Ring::build(&cid_all, 10, rocketmq_md5_hash);
        let naive = naive_ring(&cid_all, 10, rocketmq_md5_hash);
        assert_eq!(ring.points.len(), naive.len());
        assert_eq!(naive.values().filter(|c| *c == "CID-0").count(), 20);
        for (&h, owner) in &naive {
            assert_eq!(ring.owner(h), Some(owner.as_str()));
        }
    }

    #[test]
    fn consistent_hash_empty_ring_owns_nothing() {
        let s = Strategy::ConsistentHash { virtual_nodes: 0 };
        let q = mqs("b", 4);
        let c = cids("c", 3);
        assert_eq!(allocate(&s, "c0", &q, &c), Ok(vec![]));
        let group = allocate_group(&s, &q, &c).unwrap();
        assert!(group.values().all(Vec::is_empty) && group.len() == 3);
    }

    fn random_strategy(rng: &mut Rng, depth: u32) -> Strategy {
        match rng.index(if depth == 0 { 6 } else { 4 }) {
            0 => Strategy::Avg,
            1 => Strategy::AvgByCircle,
            2 => Strategy::ConsistentHash { virtual_nodes: rng.index(12) as u32 },
            3 => Strategy::Config { queues: random_mqs(rng, 4) },
            4 => {
                let idcs = ["room0", "room1", "room2", ""].iter().filter(|_| rng.index(2) == 0).map(|s| s.to_string());
                Strategy::MachineRoom { consumer_idcs: idcs.collect() }
            }
            _ => Strategy::MachineRoomNearby { inner: Box::new(random_strategy(rng, depth + 1)) },
        }
    }

    fn random_mqs(rng: &mut Rng, max: usize) -> Vec<MessageQueue> {
        const COMMON: [&str; 12] = [
            "broker-a",
            "Broker7",
            "IDC1-brokera",
            "IDC1-brokerb",
            "IDC2-brokera",
            "IDC3-brokerc",
            "room0@broker-a",
            "room1@broker-b",
            "room2@b@",
            "x@room0@broker-c",
            "@room1",
            "IDC4",
        ];
        let n = rng.index(max + 1);
        (0..n)
            .map(|_| {
                let broker = if rng.index(60) == 0 { rng.pick(&["-lead", "---", ""]) } else { rng.pick(&COMMON) };
                MessageQueue::new("TopicTest", broker, rng.index(16) as u32)
            })
            .collect()
    }

    fn random_cids(rng: &mut Rng, max: usize) -> Vec<String> {
        const COMMON: [&str; 10] =
            ["IDC1-c0", "IDC1-c1", "IDC2-c2", "IDC3-10.0.0.1@1#2", "IDC5-x", "c7", "CID-3", "10.0.0.2@9#9", "a", "IDC1"];
        let n = rng.index(max + 1);
        (0..n)
            .map(|_| {
                let cid = if rng.index(40) == 0 { rng.pick(&["", "-c", "--"]) } else { rng.pick(&COMMON) };
                cid.to_string()
            })
            .collect()
    }

    /// `allocate_group` against `allocate` for every distinct id (and an outsider, and "").
    fn assert_group_matches(strategy: &Strategy, mq_all: &[MessageQueue], cid_all: &[String]) {
        let group = allocate_group(strategy, mq_all, cid_all);
        let ctx = || format!("{strategy:?}\nmqAll {mq_all:?}\ncidAll {cid_all:?}");
        match &group {
            Ok(map) => {
                for cid in cid_all.iter().map(String::as_str).chain(["outsider", ""]) {
                    let single = allocate(strategy, cid, mq_all, cid_all);
                    match (map.get(cid), strategy) {
                        (Some(list), _) => {
                            assert_eq!(single.as_ref(), Ok(list), "cid {cid:?}: {}", ctx())
                        }
                        (None, Strategy::Config { queues }) => {
                            assert!(!cid_all.iter().any(|c| c == cid), "member {cid:?} missing: {}", ctx());
                            assert_eq!(single.as_ref(), Ok(queues), "{}", ctx());
                        }
                        (None, _) if cid.is_empty() => {
                            assert_eq!(single, Err(AllocateError::CurrentCidEmpty), "{}", ctx());
                        }
                        (None, _) => {
                            assert!(!cid_all.iter().any(|c| c == cid), "member {cid:?} missing: {}", ctx());
                            assert_eq!(single, Ok(vec![]), "outsider: {}", ctx());
                        }
                    }
                }
                let distinct: HashSet<&String> =
                    cid_all.iter().filter(|c| !c.is_empty() || matches!(strategy, Strategy::Config { .. })).collect();
                assert_eq!(map.len(), distinct.len(), "{}", ctx());
            }
            Err(e) => {
                let members: Vec<&str> = cid_all.iter().map(String::as_str).filter(|c| !c.is_empty()).collect();
                let callers = if members.is_empty() { vec!["outsider"] } else { members };
                for cid in callers {
                    assert_eq!(allocate(strategy, cid, mq_all, cid_all).as_ref(), Err(e), "cid {cid:?}: {}", ctx());
                }
            }
        }
    }

    #[test]
    fn group_equals_per_cid_on_random_inputs() {
        let mut rng = Rng::new(0x5eed);
        let mut outcomes = [0usize; 2];
        for _ in 0..3000 {
            let strategy = random_strategy(&mut rng, 0);
            let mq_all = random_mqs(&mut rng, 40);
            let cid_all = random_cids(&mut rng, 12);
            assert_group_matches(&strategy, &mq_all, &cid_all);
            outcomes[usize::from(allocate_group(&strategy, &mq_all, &cid_all).is_ok())] += 1;
        }
        // Both kinds of outcome were exercised.
        assert!(outcomes[0] > 100 && outcomes[1] > 1000, "{outcomes:?}");
    }

    #[test]
    fn group_equals_per_cid_with_distinct_cids() {
        // Larger, clean groups (no duplicates, no errors) for the partitioning strategies.
        let mut rng = Rng::new(99);
        for round in 0..60 {
            let rooms = ["IDC1", "IDC2", "IDC3", "IDC4"];
            let mq_all: Vec<MessageQueue> = (0..rng.index(120) + 1)
                .map(|i| MessageQueue::new("T", format!("{}-broker{}", rng.pick(&rooms), i % 3), i as u32))
                .collect();
            let cid_all: Vec<String> =
                (0..rng.index(30) + 1).map(|i| format!("{}-10.0.0.{i}@{round}", rng.pick(&rooms[..3]))).collect();
            for strategy in [
                Strategy::Avg,
                Strategy::AvgByCircle,
                Strategy::ConsistentHash { virtual_nodes: 10 },
                Strategy::MachineRoomNearby { inner: Box::new(Strategy::ConsistentHash { virtual_nodes: 4 }) },
                Strategy::MachineRoomNearby { inner: Box::new(Strategy::AvgByCircle) },
            ] {
                assert_group_matches(&strategy, &mq_all, &cid_all);
            }
        }
    }

    /// Queues over several brokers, consumers over three of the four machine rooms.
    fn big_inputs(consumers: usize, queues: usize) -> (Vec<MessageQueue>, Vec<String>) {
        let mut mq_all: Vec<MessageQueue> = (0..queues)
            .map(|i| {
                let room = i % 4;
                let broker = if i % 8 < 4 { format!("IDC{room}-broker-a") } else { format!("room{room}@broker-b") };
                MessageQueue::new("TopicTest", broker, (i / 8) as u32)
            })
            .collect();
        mq_all.stable_sort();
        let mut cid_all: Vec<String> = (0..consumers).map(|i| format!("IDC{}-10.0.{}.{}@{i}", i % 3, i / 250, i % 250)).collect();
        cid_all.stable_sort_by(|a, b| java_str_cmp(a, b));
        (mq_all, cid_all)
    }

    #[test]
    fn large_groups() {
        // The full 1000 x 10000 size in optimised builds; a smaller one in debug builds. The speed
        // target is measured by the benchmark, not here.
        let (consumers, queues) = if cfg!(debug_assertions) { (200, 2000) } else { (1000, 10_000) };
        let (mq_all, cid_all) = big_inputs(consumers, queues);
        let idcs: VecSet<String> = ["room0", "room1", "room2"].iter().map(|s| s.to_string()).collect();
        let strategies = [
            Strategy::Avg,
            Strategy::AvgByCircle,
            Strategy::Config { queues: mq_all[..10].to_vec() },
            Strategy::MachineRoom { consumer_idcs: idcs },
            Strategy::MachineRoomNearby { inner: Box::new(Strategy::Avg) },
            Strategy::MachineRoomNearby { inner: Box::new(Strategy::ConsistentHash { virtual_nodes: 10 }) },
            Strategy::ConsistentHash { virtual_nodes: DEFAULT_VIRTUAL_NODES },
        ];
        for strategy in &strategies {
            let group = allocate_group(strategy, &mq_all, &cid_all).unwrap();
            assert_eq!(group.len(), consumers);
            let total: usize = group.values().map(Vec::len).sum();
            match strategy {
                Strategy::Config { queues } => assert_eq!(total, consumers * queues.len()),
                Strategy::MachineRoom { .. } => assert_eq!(total, queues / 2 * 3 / 4),
                // Every other strategy partitions the queues.
                _ => {
                    assert_eq!(total, queues, "{}", strategy.name());
                    let all: HashSet<&MessageQueue> = group.values().flatten().collect();
                    assert_eq!(all.len(), queues);
                }
            }
            for cid in cid_all.iter().step_by(consumers / 4) {
                assert_eq!(allocate(strategy, cid, &mq_all, &cid_all).as_ref(), Ok(&group[cid]));
            }
        }
    }
}
