//! Messages a group consumed more than once, each with the reason the real client gives for it
//! (spec §5 step 3, §8, §11.7): a result discarded because the queue moved while the listener
//! ran, a handover before the offset covering the message reached the broker, a crash before the
//! offset was persisted, a RECONSUME_LATER retry. Anything else is a model bug, and the
//! simulation tests fail on it.

use mqviz_engine::sort::StableSort;

use super::events::MsgId;
use super::types::MessageModel;
use super::world::{ConsumptionRecord, DropReason, PqRecord, World};

/// Why a message was consumed again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DuplicateCause {
    /// The earlier listener's ProcessQueue was dropped by a rebalance while it ran: its result
    /// was discarded, the offset never covered the message, and the new owner pulled it again.
    DiscardedByRebalance,
    /// The same, because the consumer was shut down while the listener ran.
    DiscardedByShutdown,
    /// The queue moved to a new ProcessQueue that started from the broker's committed offset,
    /// which did not cover the message yet (offsets are persisted every 5 s and on removal).
    HandoverBeforeCommit,
    /// Two members held the queue at the same time: their allocations disagreed for a moment.
    ConcurrentOwners,
    /// Two members share a clientId, so they compute the same allocation and both own the queue.
    SharedClientId,
    /// The earlier consumer crashed before its offset reached the broker.
    Crash,
    /// A RECONSUME_LATER retry copy was consumed after the message itself.
    RetryCopy,
    /// None of the above: a model bug.
    Unexplained,
}

impl DuplicateCause {
    pub fn text(self) -> &'static str {
        match self {
            DuplicateCause::DiscardedByRebalance => {
                "rebalance handover: the queue was taken away while the listener ran, so its result was discarded and the message was consumed again"
            }
            DuplicateCause::DiscardedByShutdown => {
                "shutdown: the consumer stopped while the listener ran, so its result was discarded and the message was consumed again"
            }
            DuplicateCause::HandoverBeforeCommit => {
                "rebalance handover: the queue's next ProcessQueue started from the broker's committed offset, which did not cover the message yet"
            }
            DuplicateCause::ConcurrentOwners => {
                "rebalance handover: two members held the queue at the same time while their allocations disagreed"
            }
            DuplicateCause::SharedClientId => {
                "duplicate clientId: the two instances share a clientId, compute the same allocation and both consume the queue"
            }
            DuplicateCause::Crash => "crash: the consumer died before the offset covering the message reached the broker",
            DuplicateCause::RetryCopy => "RECONSUME_LATER retry: a retry copy was consumed after the message itself",
            DuplicateCause::Unexplained => "unexplained",
        }
    }
}

/// One message consumed more than once within a group (BROADCASTING: by one member).
#[derive(Clone, Debug)]
pub struct Duplicate {
    pub group: String,
    /// The message first produced (retry copies count as their origin).
    pub root: MsgId,
    /// Indexes into `World::consumptions`, in the order the listeners started.
    pub consumptions: Vec<usize>,
    /// The cause of each consumption after the first.
    pub causes: Vec<DuplicateCause>,
}

impl Duplicate {
    pub fn unexplained(&self) -> bool {
        self.causes.contains(&DuplicateCause::Unexplained)
    }
}

/// Whose consumptions of a message count as one: (group, member for BROADCASTING, root).
type DuplicateKey<'a> = (&'a str, Option<usize>, MsgId);

/// Every duplicate consumption in the run, by group then message.
pub fn find_duplicates(w: &World) -> Vec<Duplicate> {
    // Each consumption's key, sorted (stably, so each key's consumptions stay in index order):
    // runs of one key are one message's consumptions.
    let mut keyed: Vec<(DuplicateKey, usize)> = w
        .consumptions
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let con = &w.consumers[r.consumer()];
            let member = (con.model == MessageModel::Broadcasting).then_some(r.consumer());
            ((&*con.group, member, w.messages[r.msg as usize].root()), i)
        })
        .collect();
    keyed.stable_sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    for run in keyed.chunk_by(|a, b| a.0 == b.0) {
        if run.len() < 2 {
            continue;
        }
        let ((group, _, root), _) = run[0];
        let mut consumptions: Vec<usize> = run.iter().map(|&(_, i)| i).collect();
        // In the order the listeners started: a run whose result is discarded later came first.
        consumptions.stable_sort_by_key(|&i| (w.consumptions[i].started_at, w.consumptions[i].at, i));
        let causes = consumptions[1..]
            .iter()
            .enumerate()
            .map(|(k, &later)| cause_of(w, &consumptions[..=k], &w.consumptions[later]))
            .collect();
        out.push(Duplicate { group: group.to_string(), root, consumptions, causes });
    }
    out
}

/// Why `later` happened although the consumptions `earlier` (indexes) came before it.
fn cause_of(w: &World, earlier: &[usize], later: &ConsumptionRecord) -> DuplicateCause {
    let earlier: Vec<&ConsumptionRecord> = earlier.iter().map(|&i| &w.consumptions[i]).collect();
    if let Some(e) = earlier.iter().find(|e| e.result_discarded()) {
        let shutdown = w.process_queue_record(e.pq).and_then(|r| r.dropped).is_some_and(|(_, why)| why == DropReason::Shutdown);
        return if shutdown { DuplicateCause::DiscardedByShutdown } else { DuplicateCause::DiscardedByRebalance };
    }
    let crashed =
        |e: &ConsumptionRecord| w.consumers[e.consumer()].crash_time(e.incarnation).is_some_and(|t| e.at <= t && t <= later.at);
    if earlier.iter().any(|e| crashed(e)) {
        return DuplicateCause::Crash;
    }
    if w.messages[later.msg as usize].origin().is_some() && earlier.iter().any(|e| e.msg != later.msg) {
        return DuplicateCause::RetryCopy;
    }
    let Some(pq) = w.process_queue_record(later.pq) else { return DuplicateCause::Unexplained };
    let offset = w.messages[later.msg as usize].queue_offset();
    for e in &earlier {
        if e.pq == later.pq || pq.start_offset > offset {
            continue;
        }
        let Some(other) = w.process_queue_record(e.pq) else { continue };
        let alive_until = |r: &PqRecord| r.dropped.map(|(t, _)| t).unwrap_or(u64::MAX);
        if e.at <= pq.created_at {
            return DuplicateCause::HandoverBeforeCommit;
        }
        if other.created_at <= alive_until(pq) && pq.created_at <= alive_until(other) {
            let shared = w.consumers[e.consumer()].client_id == w.consumers[later.consumer()].client_id
                && e.consumer() != later.consumer();
            return if shared { DuplicateCause::SharedClientId } else { DuplicateCause::ConcurrentOwners };
        }
    }
    DuplicateCause::Unexplained
}
