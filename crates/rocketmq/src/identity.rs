//! Identities carried by everything that comes back later: pull responses, consume completions,
//! lock renewals, timers. A reply changes state only when the identity it carries is still the
//! current one, exactly as the real client ties a `PullRequest` and a `ConsumeRequest` to one
//! `ProcessQueue` object: a queue that is removed and added again gets a new object, and whatever
//! still runs for the old one finds it dropped (spec §5, `updateProcessQueueTableInRebalance`).
//!
//! Plain integers would let a reply meant for one ProcessQueue be applied to its successor for the
//! same MessageQueue; the newtypes make every such comparison explicit.

use std::fmt;
use std::num::NonZeroU32;

/// One run of a consumer between `start()` and its shutdown or crash. Timers and replies of an
/// earlier incarnation are ignored by a restarted consumer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Incarnation(pub u32);

impl Incarnation {
    pub fn next(self) -> Incarnation {
        Incarnation(self.0 + 1)
    }

    /// Never started.
    pub fn is_initial(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Incarnation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One `ProcessQueue` object, unique in the whole run. Dropping a queue ends its identity for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcessQueueId(pub u32);

impl fmt::Display for ProcessQueueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pq{}", self.0)
    }
}

/// One pull RPC sent by a `PullRequest`. A ProcessQueue has at most one outstanding; its response
/// is applied only if it answers that very RPC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PullRequestId(pub u32);

/// One grant of a broker-side orderly lock (`RebalanceLockManager`), unique in the whole run. The
/// broker keys its locks by clientId, as upstream does; the grant id tells a renewal from a fresh
/// grant so that the report and the invariants can see who held a queue when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LockGrantId(NonZeroU32);

impl LockGrantId {
    pub fn get(self) -> u32 {
        self.0.get()
    }
}

/// Issues fresh identities in creation order (deterministic: they depend only on the run).
#[derive(Clone, Debug, Default)]
pub struct IdSource {
    process_queues: u32,
    pull_requests: u32,
    lock_grants: u32,
}

impl IdSource {
    pub fn process_queue(&mut self) -> ProcessQueueId {
        self.process_queues += 1;
        ProcessQueueId(self.process_queues)
    }

    pub fn pull_request(&mut self) -> PullRequestId {
        self.pull_requests += 1;
        PullRequestId(self.pull_requests)
    }

    pub fn lock_grant(&mut self) -> LockGrantId {
        self.lock_grants += 1;
        LockGrantId(NonZeroU32::new(self.lock_grants).expect("counts from 1"))
    }
}
