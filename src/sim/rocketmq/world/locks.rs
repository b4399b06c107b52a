//! Orderly consumption's broker-side queue locks.

use super::*;

impl World {
    pub(super) fn lock_queue(&mut self, c: usize, mq: &MessageQueue) -> bool {
        let Some(b) = self.broker_index(&mq.broker) else { return false };
        let now = self.now;
        let (group, client) = (self.consumers[c].group.to_string(), self.consumers[c].client_id.clone());
        let key = (group, mq.clone());
        let granted = match self.brokers[b].locks.get(&key) {
            None => true,
            Some((holder, at)) => *holder == *client || now.saturating_sub(*at) > LOCK_EXPIRY,
        };
        if granted {
            self.brokers[b].locks.insert(key, (client.to_string(), now));
        }
        self.emit(Event::QueueLocked { client, mq: mq.clone(), granted });
        granted
    }

    pub(super) fn unlock_queue(&mut self, c: usize, mq: &MessageQueue) {
        if !self.consumers[c].orderly {
            return;
        }
        let Some(b) = self.broker_index(&mq.broker) else { return };
        let key = (self.consumers[c].group.to_string(), mq.clone());
        if self.brokers[b].locks.get(&key).is_some_and(|(h, _)| *h == *self.consumers[c].client_id) {
            self.brokers[b].locks.remove(&key);
        }
    }

    pub(super) fn renew_locks(&mut self, c: usize) {
        let mqs: Vec<MessageQueue> = self.consumers[c].pqs.keys().cloned().collect();
        for mq in mqs {
            if !self.lock_queue(c, &mq) {
                if let Some(pq) = self.consumers[c].pqs.get_mut(&mq) {
                    pq.dropped = true;
                }
                self.consumers[c].pqs.remove(&mq);
            }
        }
    }
}
