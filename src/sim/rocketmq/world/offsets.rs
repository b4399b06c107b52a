//! Offsets: the consumer's offset store, persisted to the broker.

use super::*;

impl World {
    pub(super) fn persist_one(&mut self, c: usize, mq: &MessageQueue) {
        let con = &self.consumers[c];
        let Some(&offset) = con.offsets.get(mq) else { return };
        if con.model == MessageModel::Broadcasting {
            self.consumers[c].local_offsets.insert(mq.clone(), offset);
            return;
        }
        let Some(b) = self.broker_index(&mq.broker) else { return };
        let (group, latency) = (con.group.clone(), con.latency);
        self.schedule(latency, Action::OffsetCommitArrive { broker: b, group, mq: mq.clone(), offset });
    }

    pub(super) fn persist_offsets(&mut self, c: usize) {
        let mqs: Vec<MessageQueue> = self.consumers[c].pqs.keys().cloned().collect();
        for mq in mqs {
            self.persist_one(c, &mq);
        }
    }
}
