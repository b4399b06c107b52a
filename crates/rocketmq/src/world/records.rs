//! What the run keeps for the report and the invariants: every listener run that consumed a
//! message, every ProcessQueue ever created, and every send that failed for good. Consumptions
//! are 40-byte records, the only list of who consumed what.

use super::*;

/// One listener run that consumed a message (the listener returned success). A run whose result
/// was discarded (its ProcessQueue was dropped while it ran) still consumed the message: the
/// business logic ran, and the new owner will run it again (spec §5 step 3, §11.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumptionRecord {
    /// The message as consumed: the original or a retry copy.
    pub msg: MsgId,
    /// Consumer index (a u32 keeps the record at 40 bytes; see the size assertion).
    consumer: u32,
    pub incarnation: Incarnation,
    pub pq: ProcessQueueId,
    pub started_at: Millis,
    pub at: Millis,
    /// `reconsumeTimes` the listener saw (orderly local retries included), with
    /// `DISCARDED` set when the run's result was discarded: one word keeps the record at 40 bytes.
    reconsume: u32,
    /// Orderly: the broker lock grant the ProcessQueue held when the run started.
    pub lock: Option<LockGrantId>,
}

/// The bit of `ConsumptionRecord::reconsume` that marks a discarded result.
const DISCARDED: u32 = 1 << 31;

impl World {
    /// The messages (as roots: a retry counts for its original) that any of `consumers` consumed.
    pub fn consumed_roots(&self, consumers: &[usize]) -> BitSet {
        let mut set = BitSet::default();
        for r in self.consumptions.iter().filter(|r| consumers.contains(&r.consumer())) {
            set.insert(self.messages[r.msg as usize].root());
        }
        set
    }
}

impl ConsumptionRecord {
    pub fn consumer(&self) -> usize {
        self.consumer as usize
    }

    /// `reconsumeTimes` the listener saw (orderly local retries included).
    pub fn reconsume_times(&self) -> u32 {
        self.reconsume & !DISCARDED
    }

    /// The listener ran, but its ProcessQueue was dropped meanwhile, so its result was thrown away.
    pub fn result_discarded(&self) -> bool {
        self.reconsume & DISCARDED != 0
    }
}

// One per consumption: a regression here multiplies by millions.
const _: () = assert!(std::mem::size_of::<ConsumptionRecord>() <= 40);

/// Where a ProcessQueue's first pull offset came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartOffsetSource {
    /// The group's offset committed on the broker (CLUSTERING) or the local offset file (BROADCASTING).
    Stored,
    /// No stored offset: the consumeFromWhere policy (or the broker's young-queue answer 0).
    Policy,
}

/// A ProcessQueue's life: who owned it, for which queue, from when, starting where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PqRecord {
    pub id: ProcessQueueId,
    pub consumer: usize,
    pub incarnation: Incarnation,
    pub mq: MessageQueue,
    pub created_at: Millis,
    /// Where its pulls started (orderly: re-read from the broker at the first pull after the lock).
    pub start_offset: u64,
    pub source: StartOffsetSource,
    /// When and why it was dropped.
    pub dropped: Option<(Millis, DropReason)>,
    /// Orderly: the removal did not wait for the running listener, because the queue was last
    /// locked more than `UNLOCK_DELAY` before (`tryRemoveOrderMessageQueue`'s forceUnlock).
    pub forced_unlock: Option<ForcedUnlock>,
}

/// An orderly removal forced while the listener ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForcedUnlock {
    pub at: Millis,
    pub last_lock_at: Millis,
}

/// Why a ProcessQueue was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The rebalance gave the queue to someone else (or no one).
    Rebalance,
    /// `isPullExpired`: the pull chain was silent for 120 s.
    PullExpired,
    /// `truncateMessageQueueNotMyTopic`: the topic is no longer subscribed.
    NotSubscribed,
    /// OFFSET_ILLEGAL: dropped and re-created at the corrected offset.
    OffsetIllegal,
    Shutdown,
    Crash,
}

/// Who sent a committed offset: the consumer incarnation and the ProcessQueue it held for the
/// queue then (none once it was removed). `reset` marks the OFFSET_ILLEGAL fix, the one
/// deliberate move backwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetWriter {
    pub consumer: usize,
    pub incarnation: Incarnation,
    pub pq: Option<ProcessQueueId>,
    pub reset: bool,
}

/// One change of a committed offset on a broker (`ConsumerOffsetManager.commitOffset`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetCommit {
    pub broker: usize,
    pub group: Name,
    pub mq: MessageQueue,
    pub previous: Option<(u64, Option<OffsetWriter>)>,
    pub offset: u64,
    pub writer: OffsetWriter,
}

/// A synchronous send whose every attempt the broker refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendFailure {
    pub msg: MsgId,
    pub at: Millis,
    pub attempts: u32,
    pub reason: String,
}

impl World {
    /// The writer of a commit `c` sends now for `mq`.
    pub(super) fn offset_writer(&self, c: usize, mq: &MessageQueue, reset: bool) -> OffsetWriter {
        let con = &self.consumers[c];
        OffsetWriter { consumer: c, incarnation: con.incarnation, pq: con.pqs.get(mq).map(|pq| pq.id), reset }
    }

    /// `commitOffset` at broker `b`: overwrite (it may go back), and remember who wrote it.
    pub(super) fn commit_offset(&mut self, b: usize, group: &Name, mq: &MessageQueue, offset: u64, writer: OffsetWriter) {
        let previous = self.brokers[b].offsets.insert(&mq.topic, group, mq.queue_id, offset, writer);
        self.recent_commits.push(OffsetCommit { broker: b, group: group.clone(), mq: mq.clone(), previous, offset, writer });
    }

    /// Creates the ProcessQueue for `mq` (a new identity) and records it.
    pub(super) fn create_process_queue(
        &mut self,
        c: usize,
        mq: &MessageQueue,
        start_offset: u64,
        source: StartOffsetSource,
    ) -> ProcessQueueId {
        let id = self.ids.process_queue();
        let now = self.now;
        let incarnation = self.consumers[c].incarnation;
        self.process_queues.push(PqRecord {
            id,
            consumer: c,
            incarnation,
            mq: mq.clone(),
            created_at: now,
            start_offset,
            source,
            dropped: None,
            forced_unlock: None,
        });
        self.consumers[c].pqs.insert(mq.clone(), ProcessQueue::new(id, start_offset, now));
        id
    }

    /// A ProcessQueue of one of `members` that started `mq` past `offset` by the consumeFromWhere
    /// policy (member, start): a queue that is not young (a snapshot's) with no committed offset
    /// starts where the policy says, and what was below was never due to the group.
    pub fn group_policy_start(&self, members: &[usize], mq: &MessageQueue, offset: u64) -> Option<(usize, u64)> {
        let r = self.process_queues.iter().find(|r| {
            members.contains(&r.consumer) && r.mq == *mq && r.source == StartOffsetSource::Policy && r.start_offset > offset
        })?;
        Some((r.consumer, r.start_offset))
    }

    /// Where consumer `c` last started `mq` by its consumeFromWhere policy (no stored offset):
    /// messages below it may have been skipped, legitimately (BROADCASTING's local offset file).
    pub fn policy_start(&self, c: usize, mq: &MessageQueue) -> Option<u64> {
        let r =
            self.process_queues.iter().rev().find(|r| r.consumer == c && r.mq == *mq && r.source == StartOffsetSource::Policy)?;
        Some(r.start_offset)
    }

    pub fn process_queue_record(&self, id: ProcessQueueId) -> Option<&PqRecord> {
        self.process_queues.get((id.0 as usize).checked_sub(1)?)
    }

    /// Marks a ProcessQueue dropped (`setDropped(true)`): whatever still runs for it stops or is
    /// discarded. It may stay in the table (an orderly queue whose removal must wait).
    pub(super) fn drop_process_queue(&mut self, c: usize, mq: &MessageQueue, why: DropReason) {
        let now = self.now;
        let Some(pq) = self.consumers[c].pqs.get_mut(mq) else { return };
        if pq.dropped {
            return;
        }
        pq.dropped = true;
        let id = pq.id;
        if let Some(r) = self.process_queues.get_mut(id.0 as usize - 1) {
            r.dropped = Some((now, why));
        }
    }

    /// Drops and forgets a ProcessQueue in one step.
    pub(super) fn remove_process_queue(&mut self, c: usize, mq: &MessageQueue, why: DropReason) {
        self.drop_process_queue(c, mq, why);
        self.consumers[c].pqs.remove(mq);
    }

    /// Records a listener run that consumed `m` and emits `Consumed`.
    pub(super) fn record_consumed(
        &mut self,
        r: &PqRef,
        m: MsgId,
        started_at: Millis,
        reconsume_times: u32,
        result_discarded: bool,
        lock: Option<LockGrantId>,
    ) {
        let con = &mut self.consumers[r.c];
        con.stats.consumed += 1;
        if result_discarded {
            con.stats.discarded += 1;
        }
        self.consumptions.push(ConsumptionRecord {
            msg: m,
            consumer: r.c as u32,
            incarnation: r.inc,
            pq: r.pq,
            started_at,
            at: self.now,
            // Orderly local retries count up one per failed run, far below the flag bit.
            reconsume: reconsume_times.min(!DISCARDED) | if result_discarded { DISCARDED } else { 0 },
            lock,
        });
        self.emit_consumed(r.c, m, reconsume_times);
    }
}
