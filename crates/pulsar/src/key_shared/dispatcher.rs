//! The Key_Shared dispatcher (spec §1.4.5-§1.4.8, §6 item 4): the 4.x per-entry dispatch loop,
//! PIP-379 draining hashes when consumers join or leave, the classic "recently joined consumers"
//! rule, allowOutOfOrderDelivery, and the look-ahead bound on normal reads.
//!
//! The simulation owns time and the message store: it asks `next_read` what to read, hands the
//! entries (with their sticky hashes) to `dispatch`, and schedules the reads that acks request.

use std::collections::{BTreeMap, BTreeSet};

use super::draining::DrainingHashesTracker;
use super::pending::PendingAcks;
use super::selector::{in_ranges, lost_ranges, KeySharedError, StickyKeySelector};
use crate::defaults::{
    KEY_SHARED_LOOK_AHEAD_PER_CONSUMER, KEY_SHARED_LOOK_AHEAD_PER_SUBSCRIPTION, KEY_SHARED_UNBLOCKING_INTERVAL_MS,
    MAX_UNACKED_MESSAGES_PER_CONSUMER,
};
use crate::replay::ReplaySet;
use crate::shared_dispatch::{LimitChange, UnackedLimit};
use mqviz_engine::{IdMap, Millis};

/// Dispatcher settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySharedConfig {
    /// Key affinity only: no draining, no join positions, replayed hashes never block normal reads.
    pub allow_out_of_order_delivery: bool,
    /// The classic (< 4.0) implementation: "recently joined consumers" instead of draining hashes.
    pub classic: bool,
    pub look_ahead_per_consumer: u32,
    pub look_ahead_per_subscription: u32,
    pub unblocking_interval_ms: Millis,
    pub max_unacked_per_consumer: u32,
}

impl Default for KeySharedConfig {
    fn default() -> Self {
        KeySharedConfig {
            allow_out_of_order_delivery: false,
            classic: false,
            look_ahead_per_consumer: KEY_SHARED_LOOK_AHEAD_PER_CONSUMER,
            look_ahead_per_subscription: KEY_SHARED_LOOK_AHEAD_PER_SUBSCRIPTION,
            unblocking_interval_ms: KEY_SHARED_UNBLOCKING_INTERVAL_MS,
            max_unacked_per_consumer: MAX_UNACKED_MESSAGES_PER_CONSUMER,
        }
    }
}

/// Whether the entries come from the replay set or from the cursor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadType {
    Normal,
    Replay,
}

/// One entry handed to `dispatch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyedEntry {
    pub position: i64,
    /// The entry's sticky hash under this dispatcher's selector (`StickyKeySelector::sticky_hash`).
    pub hash: u32,
    /// Messages in the entry (permits and unacked counts are in messages).
    pub messages: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PendingAck {
    hash: u32,
    messages: u32,
}

/// One consumer as the dispatcher sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySharedConsumer {
    pub consumer_id: u64,
    pub name: String,
    pub permits: u32,
    pub unacked: UnackedLimit,
    pending_acks: PendingAcks<PendingAck>,
}

impl KeySharedConsumer {
    /// Positions sent and not yet acked, ascending.
    pub fn pending_positions(&self) -> Vec<i64> {
        self.pending_acks.iter().map(|(p, _)| p).collect()
    }

    pub fn pending_hash(&self, position: i64) -> Option<u32> {
        self.pending_acks.get(position).map(|p| p.hash)
    }
}

/// What the classic implementation records when a consumer joins a busy subscription.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JoinContext {
    /// The newcomer only gets entries strictly below this position until markDelete catches up:
    /// the cursor read position before PIP-282, the last sent position + 1 after it.
    pub exclusive_limit: i64,
    /// `getNumberOfEntriesSinceFirstNotAckedMessage` when the consumer joins.
    pub entries_since_first_unacked: u64,
}

impl JoinContext {
    /// The pre-PIP-282 join position: the cursor's read position.
    pub fn from_read_position(read_position: i64, entries_since_first_unacked: u64) -> JoinContext {
        JoinContext { exclusive_limit: read_position, entries_since_first_unacked }
    }

    /// The PIP-282 (4.0 classic) join position: the last position sent to any consumer.
    pub fn from_last_sent_position(last_sent: i64, entries_since_first_unacked: u64) -> JoinContext {
        JoinContext { exclusive_limit: last_sent + 1, entries_since_first_unacked }
    }

    /// An idle subscription: nothing restricts the newcomer.
    pub fn idle() -> JoinContext {
        JoinContext { exclusive_limit: i64::MAX, entries_since_first_unacked: 0 }
    }
}

/// What the dispatcher asks the simulation to read next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadPlan {
    /// Read these replay positions (ascending) and pass them to `dispatch` with `ReadType::Replay`.
    Replay(Vec<i64>),
    /// Read up to this many new entries from the cursor.
    Normal { max_entries: usize },
    /// Nothing can be dispatched now (no permits, or the look-ahead bound is reached).
    Idle,
}

/// Why an entry was not sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HoldReason {
    /// The selector has no consumer for the hash (no consumers, or a STICKY gap).
    NoConsumer,
    NoPermits,
    /// A normal read found the hash already waiting in the replay set.
    HashInReplay,
    /// An earlier entry of the same hash in this read was held, so this one waits too.
    EarlierEntryHeld,
    /// PIP-379: the previous owner still has pending acks of the hash.
    Draining,
    /// Classic: the consumer joined recently and the entry is past its join position.
    RecentlyJoined,
}

/// The outcome of one `dispatch` call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeySharedRound {
    /// `(consumer, position)` for every entry sent, in entry order.
    pub sends: Vec<(u64, i64)>,
    /// Entries held back (they are, or stay, in the replay set), with why.
    pub held: Vec<(i64, HoldReason)>,
    /// Nothing went out although a consumer had permits: the next read skips the replay set and
    /// looks ahead at new entries.
    pub skip_next_replay: bool,
}

impl KeySharedRound {
    /// The sends grouped per consumer (each list in entry order), as upstream hands them out.
    pub fn grouped(&self) -> BTreeMap<u64, Vec<i64>> {
        let mut out: BTreeMap<u64, Vec<i64>> = BTreeMap::new();
        for &(c, p) in &self.sends {
            out.entry(c).or_default().push(p);
        }
        out
    }
}

/// What an ack or redelivery asks of the simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadRequest {
    /// A draining hash was released: read again after this delay (`keySharedUnblockingIntervalMs`).
    pub read_after_ms: Option<Millis>,
    /// The consumer dropped back to half its unacked limit and can receive again.
    pub consumer_unblocked: bool,
}

/// The dispatcher state of one Key_Shared subscription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySharedDispatcher {
    pub config: KeySharedConfig,
    pub selector: StickyKeySelector,
    pub draining: DrainingHashesTracker,
    pub replay: ReplaySet,
    consumers: IdMap<KeySharedConsumer>,
    /// Classic: consumer → exclusive join limit, for consumers that joined a busy subscription.
    recently_joined: BTreeMap<u64, i64>,
    skip_next_replay: bool,
}

impl KeySharedDispatcher {
    pub fn new(selector: StickyKeySelector, config: KeySharedConfig) -> KeySharedDispatcher {
        KeySharedDispatcher {
            config,
            selector,
            draining: DrainingHashesTracker::new(),
            replay: ReplaySet::new(),
            consumers: IdMap::new(),
            recently_joined: BTreeMap::new(),
            skip_next_replay: false,
        }
    }

    /// PIP-379 applies to the 4.x AUTO_SPLIT dispatcher without out-of-order delivery.
    pub fn draining_enabled(&self) -> bool {
        !self.config.allow_out_of_order_delivery && !self.config.classic && self.selector.is_auto_split()
    }

    pub fn consumer(&self, consumer_id: u64) -> Option<&KeySharedConsumer> {
        self.consumers.get(&consumer_id)
    }

    pub fn consumers(&self) -> impl Iterator<Item = &KeySharedConsumer> {
        self.consumers.values()
    }

    /// Classic: the join limits of recently joined consumers.
    pub fn recently_joined(&self) -> &BTreeMap<u64, i64> {
        &self.recently_joined
    }

    /// A consumer connects with `permits` (its first FLOW).
    pub fn add_consumer(
        &mut self,
        consumer_id: u64,
        name: &str,
        sticky_ranges: Option<&[(u32, u32)]>,
        permits: u32,
        join: JoinContext,
    ) -> Result<(), KeySharedError> {
        if self.consumers.contains_key(&consumer_id) {
            return Err(KeySharedError::DuplicateConsumer { consumer: consumer_id });
        }
        let before = self.moved_pending_acks_possible().then(|| self.selector.assignments());
        self.selector.add(consumer_id, name, sticky_ranges)?;
        self.consumers.insert(
            consumer_id,
            KeySharedConsumer {
                consumer_id,
                name: name.to_string(),
                permits,
                unacked: UnackedLimit::new(self.config.max_unacked_per_consumer),
                pending_acks: PendingAcks::default(),
            },
        );
        if let Some(before) = before {
            self.register_moved_pending_acks(&before, consumer_id);
        }
        if self.config.classic
            && !self.config.allow_out_of_order_delivery
            && self.consumers.len() > 1
            && join.entries_since_first_unacked > 1
        {
            self.recently_joined.insert(consumer_id, join.exclusive_limit);
        }
        self.skip_next_replay = false;
        Ok(())
    }

    /// Whether a membership change can turn pending acks into draining hashes: with nothing
    /// pending anywhere (a group starting up) the before/after range comparison is skipped.
    fn moved_pending_acks_possible(&self) -> bool {
        self.draining_enabled() && self.consumers.values().any(|c| !c.pending_acks.is_empty())
    }

    /// Pending acks of hashes a consumer just lost become draining entries of that consumer.
    fn register_moved_pending_acks(&mut self, before: &[super::selector::HashRangeAssignment], skip: u64) {
        let after = self.selector.assignments();
        for (loser, ranges) in lost_ranges(before, &after) {
            if loser == skip {
                continue;
            }
            let Some(c) = self.consumers.get(&loser) else { continue };
            for (_, p) in c.pending_acks.iter().filter(|(_, p)| in_ranges(&ranges, p.hash)) {
                // Cannot fail: a hash draining at another consumer was never dispatched to this one.
                let _ = self.draining.add_entry(loser, p.hash);
            }
        }
    }

    /// A consumer closes or disconnects: its pending acks go to the replay set (with their hashes)
    /// and stop draining, then the selector forgets it. Returns the positions now in replay.
    pub fn remove_consumer(&mut self, consumer_id: u64) -> Vec<i64> {
        let Some(c) = self.consumers.remove(&consumer_id) else { return Vec::new() };
        let mut replayed = Vec::with_capacity(c.pending_acks.len());
        for (position, p) in c.pending_acks.iter() {
            self.replay.add(position, self.replay_hash(p.hash));
            let _ = self.draining.reduce_ref_count(consumer_id, p.hash, true);
            replayed.push(position);
        }
        let before = self.moved_pending_acks_possible().then(|| self.selector.assignments());
        self.selector.remove(consumer_id);
        if let Some(before) = before {
            self.register_moved_pending_acks(&before, consumer_id);
        }
        self.recently_joined.remove(&consumer_id);
        // What blocked the last round may have left with this consumer: try the replay set first.
        self.skip_next_replay = false;
        replayed
    }

    fn replay_hash(&self, hash: u32) -> u32 {
        if self.config.allow_out_of_order_delivery {
            0
        } else {
            hash
        }
    }

    /// FLOW: the consumer asks for `permits` more messages.
    pub fn add_permits(&mut self, consumer_id: u64, permits: u32) {
        if let Some(c) = self.consumers.get_mut(&consumer_id) {
            c.permits = c.permits.saturating_add(permits);
        }
    }

    /// The replay-set size below which normal reads may look ahead.
    pub fn look_ahead_limit(&self) -> usize {
        let per_consumer = self.config.look_ahead_per_consumer as usize * self.consumers.len();
        per_consumer.min(self.config.look_ahead_per_subscription as usize)
    }

    fn any_consumer_can_receive(&self) -> bool {
        self.consumers.values().any(|c| c.permits > 0 && !c.unacked.blocked)
    }

    /// What to read next: replay first, unless the last round asked to look ahead.
    pub fn next_read(&mut self, max_entries: usize) -> ReadPlan {
        if !self.any_consumer_can_receive() {
            return ReadPlan::Idle;
        }
        let skip_replay = std::mem::take(&mut self.skip_next_replay);
        if !self.replay.is_empty() && !skip_replay {
            return ReadPlan::Replay(self.replay.first(max_entries).into_iter().map(|(p, _)| p).collect());
        }
        if self.replay.len() < self.look_ahead_limit() {
            ReadPlan::Normal { max_entries }
        } else {
            ReadPlan::Idle
        }
    }

    fn join_limit(&self, consumer: u64, read_type: ReadType) -> Option<i64> {
        let own = *self.recently_joined.get(&consumer)?;
        let earliest = self.recently_joined.values().copied().min().unwrap_or(own);
        Some(if read_type == ReadType::Replay { own.min(earliest) } else { own })
    }

    /// The 4.x loop: each entry goes to its hash's consumer if that consumer has permits and the
    /// hash may be dispatched to it; anything else is held in the replay set.
    pub fn dispatch(&mut self, entries: &[KeyedEntry], read_type: ReadType) -> KeySharedRound {
        let mut round = KeySharedRound::default();
        self.dispatch_into(entries, read_type, &mut round);
        round
    }

    /// `dispatch` into a round the caller reuses (cleared first): the simulation runs one per read.
    pub fn dispatch_into(&mut self, entries: &[KeyedEntry], read_type: ReadType, round: &mut KeySharedRound) {
        round.sends.clear();
        round.held.clear();
        round.skip_next_replay = false;
        // Upstream snapshots min(permits, room under the unacked limit) per consumer and counts it
        // down per entry; `record_send` lowers both live, so reading them live is the same.
        let mut held_hashes: BTreeSet<u32> = BTreeSet::new();
        let keep_order = !self.config.allow_out_of_order_delivery;
        for e in entries {
            let verdict = match self.selector.select(e.hash) {
                None => Err(HoldReason::NoConsumer),
                Some(t) if self.permits_left(t) == 0 => Err(HoldReason::NoPermits),
                Some(t) => {
                    let earlier_held = keep_order && !held_hashes.is_empty() && held_hashes.contains(&e.hash);
                    self.check_dispatch(t, e, read_type, earlier_held).map(|()| t)
                }
            };
            match verdict {
                Ok(t) => {
                    self.record_send(t, e);
                    if read_type == ReadType::Replay {
                        self.replay.remove(e.position);
                    }
                    round.sends.push((t, e.position));
                }
                Err(reason) => {
                    held_hashes.insert(e.hash);
                    self.replay.add(e.position, self.replay_hash(e.hash));
                    round.held.push((e.position, reason));
                }
            }
        }
        round.skip_next_replay =
            round.sends.is_empty() && !entries.is_empty() && self.consumers.keys().any(|&c| self.permits_left(c) > 0);
        self.skip_next_replay = round.skip_next_replay;
    }

    fn permits_left(&self, consumer: u64) -> u32 {
        self.consumers.get(&consumer).map_or(0, |c| c.permits.min(c.unacked.room()))
    }

    fn check_dispatch(&mut self, target: u64, e: &KeyedEntry, read_type: ReadType, earlier_held: bool) -> Result<(), HoldReason> {
        if earlier_held {
            return Err(HoldReason::EarlierEntryHeld);
        }
        if read_type == ReadType::Normal
            && !self.config.allow_out_of_order_delivery
            && !self.replay.is_empty()
            && self.replay.contains_hash(e.hash)
        {
            return Err(HoldReason::HashInReplay);
        }
        if self.config.classic {
            if let Some(limit) = self.join_limit(target, read_type) {
                if e.position >= limit {
                    return Err(HoldReason::RecentlyJoined);
                }
            }
        }
        if self.draining_enabled() && !self.draining.is_empty() && self.draining.should_block(target, e.hash) {
            return Err(HoldReason::Draining);
        }
        Ok(())
    }

    fn record_send(&mut self, target: u64, e: &KeyedEntry) {
        if let Some(c) = self.consumers.get_mut(&target) {
            let messages = e.messages.max(1);
            c.permits = c.permits.saturating_sub(messages);
            c.unacked.add(messages);
            c.pending_acks.insert(e.position, PendingAck { hash: e.hash, messages });
        }
    }

    /// An individual ack by `consumer_id`.
    pub fn ack(&mut self, consumer_id: u64, position: i64) -> ReadRequest {
        self.release_pending(consumer_id, position, false)
    }

    /// Negative ack / ack timeout / `redeliverUnacknowledgedMessages` for specific positions:
    /// they go back to the replay set, to any consumer the selector picks.
    pub fn redeliver(&mut self, consumer_id: u64, positions: &[i64]) -> ReadRequest {
        let mut request = ReadRequest::default();
        for &p in positions {
            let hash = self.consumers.get(&consumer_id).and_then(|c| c.pending_hash(p));
            let r = self.release_pending(consumer_id, p, false);
            if let Some(h) = hash {
                self.replay.add(p, self.replay_hash(h));
            }
            request.read_after_ms = request.read_after_ms.or(r.read_after_ms);
            request.consumer_unblocked |= r.consumer_unblocked;
        }
        request
    }

    fn release_pending(&mut self, consumer_id: u64, position: i64, closing: bool) -> ReadRequest {
        let mut request = ReadRequest::default();
        let Some(c) = self.consumers.get_mut(&consumer_id) else { return request };
        let Some(p) = c.pending_acks.remove(position) else { return request };
        request.consumer_unblocked = c.unacked.remove(p.messages) == LimitChange::Unblocked;
        if self.draining_enabled() {
            if let Ok(Some(_)) = self.draining.reduce_ref_count(consumer_id, p.hash, closing) {
                request.read_after_ms = Some(self.config.unblocking_interval_ms);
            }
        }
        request
    }

    /// Classic: markDelete moved; consumers whose join limit is now reached are no longer
    /// restricted. True when one was released: the caller must read again, as upstream's
    /// `markDeletePositionMoveForward` calls `readMoreEntries`, or entries held for it wait for
    /// whatever next triggers a read.
    #[must_use]
    pub fn on_mark_delete(&mut self, mark_delete: i64) -> bool {
        let before = self.recently_joined.len();
        self.recently_joined.retain(|_, &mut limit| limit > mark_delete.saturating_add(1));
        self.recently_joined.len() < before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key_shared::consistent_ring::ConsistentHashRing;

    fn hash(key: &str) -> u32 {
        crate::hash::consistent_sticky_hash(key.as_bytes())
    }

    fn dispatcher(config: KeySharedConfig, names: &[&str]) -> KeySharedDispatcher {
        let mut d = KeySharedDispatcher::new(StickyKeySelector::ConsistentHashing(ConsistentHashRing::new(100)), config);
        for (i, n) in names.iter().enumerate() {
            d.add_consumer(i as u64 + 1, n, None, 1000, JoinContext::idle()).unwrap();
        }
        d
    }

    fn entry(position: i64, key: &str) -> KeyedEntry {
        KeyedEntry { position, hash: hash(key), messages: 1 }
    }

    /// README §5, PIP-379 pending acks: key-0 moves from c3 to c4 only after c3 acked m1 and m2.
    #[test]
    fn pip379_moved_key_waits_for_the_old_owner() {
        let mut d = dispatcher(KeySharedConfig::default(), &["c1", "c2", "c3"]);
        assert_eq!(d.selector.select(hash("key-0")), Some(3));
        let r = d.dispatch(&[entry(1, "key-0"), entry(2, "key-0")], ReadType::Normal);
        assert_eq!(r.grouped(), BTreeMap::from([(3, vec![1, 2])]));
        d.add_consumer(4, "c4", None, 1000, JoinContext::idle()).unwrap();
        assert_eq!(d.selector.select(hash("key-0")), Some(4));
        assert_eq!(d.draining.entry(hash("key-0")).map(|e| e.ref_count), Some(2));
        // m3 is held; another key still flows.
        let r = d.dispatch(&[entry(3, "key-0"), entry(4, "key-1")], ReadType::Normal);
        assert_eq!(r.held, vec![(3, HoldReason::Draining)]);
        assert_eq!(r.sends.iter().map(|&(_, p)| p).collect::<Vec<_>>(), vec![4]);
        assert_eq!(d.ack(3, 1), ReadRequest::default());
        assert_eq!(d.next_read(10), ReadPlan::Replay(vec![3]));
        assert_eq!(d.dispatch(&[entry(3, "key-0")], ReadType::Replay).held, vec![(3, HoldReason::Draining)]);
        assert_eq!(d.ack(3, 2).read_after_ms, Some(10));
        assert!(d.draining.is_empty());
        let r = d.dispatch(&[entry(3, "key-0")], ReadType::Replay);
        assert_eq!(r.grouped(), BTreeMap::from([(4, vec![3])]));
        assert!(d.replay.is_empty());
    }

    /// README §5, PIP-379 disconnect: c3 leaves without acking; replay delivers m1, m2, m3 to c4 in order.
    #[test]
    fn pip379_disconnect_replays_in_position_order() {
        let mut d = dispatcher(KeySharedConfig::default(), &["c1", "c2", "c3"]);
        d.dispatch(&[entry(1, "key-0"), entry(2, "key-0")], ReadType::Normal);
        d.add_consumer(4, "c4", None, 1000, JoinContext::idle()).unwrap();
        d.dispatch(&[entry(3, "key-0")], ReadType::Normal);
        assert_eq!(d.remove_consumer(3), vec![1, 2]);
        assert!(d.draining.is_empty());
        let ReadPlan::Replay(positions) = d.next_read(10) else { panic!("replay expected") };
        assert_eq!(positions, vec![1, 2, 3]);
        let entries: Vec<KeyedEntry> = positions.iter().map(|&p| entry(p, "key-0")).collect();
        assert_eq!(d.dispatch(&entries, ReadType::Replay).grouped(), BTreeMap::from([(4, vec![1, 2, 3])]));
    }

    #[test]
    fn replayed_hash_blocks_normal_reads_unless_out_of_order_is_allowed() {
        for allow in [false, true] {
            let config = KeySharedConfig { allow_out_of_order_delivery: allow, ..KeySharedConfig::default() };
            let mut d = dispatcher(config, &["c1"]);
            d.replay.add(1, if allow { 0 } else { hash("k") });
            let r = d.dispatch(&[entry(2, "k")], ReadType::Normal);
            assert_eq!(r.sends.is_empty(), !allow, "allowOutOfOrderDelivery={allow}");
        }
    }

    #[test]
    fn classic_recently_joined_consumer_waits_for_mark_delete() {
        let config = KeySharedConfig { classic: true, ..KeySharedConfig::default() };
        let mut d = dispatcher(config, &["c1", "c2", "c3"]);
        assert!(!d.draining_enabled());
        d.dispatch(&[entry(0, "key-0"), entry(1, "key-0")], ReadType::Normal);
        d.add_consumer(4, "c4", None, 1000, JoinContext::from_read_position(2, 2)).unwrap();
        let r = d.dispatch(&[entry(2, "key-0")], ReadType::Normal);
        assert_eq!(r.held, vec![(2, HoldReason::RecentlyJoined)]);
        assert!(d.on_mark_delete(1));
        assert!(d.recently_joined().is_empty());
        let r = d.dispatch(&[entry(2, "key-0")], ReadType::Replay);
        assert_eq!(r.grouped(), BTreeMap::from([(4, vec![2])]));
    }

    #[test]
    fn permits_and_look_ahead() {
        let mut d = dispatcher(KeySharedConfig::default(), &["c1"]);
        d.consumers.get_mut(&1).unwrap().permits = 1;
        let r = d.dispatch(&[entry(0, "a"), entry(1, "a"), entry(2, "b")], ReadType::Normal);
        assert_eq!(r.grouped(), BTreeMap::from([(1, vec![0])]));
        assert_eq!(r.held, vec![(1, HoldReason::NoPermits), (2, HoldReason::NoPermits)]);
        assert_eq!(d.next_read(5), ReadPlan::Idle);
        d.add_permits(1, 5);
        assert_eq!(d.next_read(5), ReadPlan::Replay(vec![1, 2]));
        d.config.look_ahead_per_consumer = 2;
        // A replay round that sends nothing makes the next read look ahead, within the bound.
        d.replay.add(7, hash("z"));
        d.draining.add_entry(99, hash("z")).unwrap();
        let r = d.dispatch(&[entry(7, "z")], ReadType::Replay);
        assert!(r.skip_next_replay);
        assert_eq!(d.next_read(5), ReadPlan::Idle, "3 entries in replay exceed the bound of 2");
    }
}
