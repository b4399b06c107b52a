//! Orderly consumption's broker-side queue locks (`RebalanceLockManager`, keyed by clientId) and
//! the client's view of them (`ProcessQueue.locked`, `lastLockTimestamp`).

use super::*;
use crate::broker::BrokerLock;

impl World {
    /// `LOCK_BATCH_MQ` for one queue (a synchronous RPC, applied at the broker at once): granted
    /// if free, expired (60 s without renewal) or already held by this clientId. A ProcessQueue
    /// of the queue, if any, records the lock.
    pub(super) fn lock_queue(&mut self, c: usize, mq: &MessageQueue) -> bool {
        let Some(b) = self.broker_index(&mq.broker) else { return false };
        self.flush_oneway(c, mq);
        let now = self.now;
        let (group, client) = (self.consumers[c].group.to_string(), self.consumers[c].client_id.clone());
        let key = (group, mq.clone());
        let current = self.brokers[b].locks.get(&key).cloned();
        let granted = match &current {
            None => true,
            Some(lock) => lock.client_id == client || now.saturating_sub(lock.last_locked) > LOCK_EXPIRY,
        };
        if granted {
            let grant = match current {
                Some(lock) if lock.client_id == client && now.saturating_sub(lock.last_locked) <= LOCK_EXPIRY => lock.grant,
                _ => self.ids.lock_grant(),
            };
            self.brokers[b].locks.insert(key, BrokerLock { client_id: client.clone(), last_locked: now, grant });
            if let Some(pq) = self.consumers[c].pqs.get_mut(mq) {
                pq.locked = true;
                pq.last_lock_at = now;
            }
        }
        self.emit(Event::QueueLocked { client, mq: mq.clone(), granted });
        granted
    }

    /// `UNLOCK_BATCH_MQ` applied at once (the synchronous unlockAll of a shutdown).
    pub(super) fn unlock_queue_now(&mut self, c: usize, mq: &MessageQueue) {
        let (group, client) = (self.consumers[c].group.clone(), self.consumers[c].client_id.clone());
        if let Some(b) = self.broker_index(&mq.broker) {
            self.handle_unlock_arrive(b, &group, &client, mq);
        }
    }

    /// A one-way `UNLOCK_BATCH_MQ` (queue removal): it reaches the broker one latency later.
    pub(super) fn unlock_queue_later(&mut self, c: usize, mq: &MessageQueue) {
        let Some(b) = self.broker_index(&mq.broker) else { return };
        let (group, client) = (self.consumers[c].group.clone(), self.consumers[c].client_id.clone());
        self.send_oneway(c, b, mq, super::oneway::OnewayKind::Unlock { group, client });
    }

    /// The broker removes a lock only for the clientId that holds it (`unlockBatch`): the lock
    /// carries no other identity, so any client with that id may release it.
    pub(super) fn handle_unlock_arrive(&mut self, b: usize, group: &str, client: &str, mq: &MessageQueue) {
        let key = (group.to_string(), mq.clone());
        if self.brokers[b].locks.get(&key).is_some_and(|l| *l.client_id == *client) {
            self.brokers[b].locks.remove(&key);
        }
    }

    /// `lockAll` every 20 s: renews the lock of every ProcessQueue that is not dropped. A queue
    /// whose lock is refused stays, unlocked: it is neither pulled nor consumed until it is
    /// locked again or the rebalance takes it away.
    pub(super) fn renew_locks(&mut self, c: usize) {
        let mqs: Vec<MessageQueue> =
            self.consumers[c].pqs.iter().filter(|(_, pq)| !pq.dropped).map(|(mq, _)| mq.clone()).collect();
        for mq in mqs {
            if !self.lock_queue(c, &mq) {
                if let Some(pq) = self.consumers[c].pqs.get_mut(&mq) {
                    pq.locked = false;
                }
            }
        }
    }
}
