//! Offsets: the consumer's offset store, persisted to the broker.

use super::*;

impl World {
    /// `OffsetStore.persist(mq)`: CLUSTERING sends a one-way commit to the queue's broker;
    /// BROADCASTING writes the local offset file.
    pub(super) fn persist_one(&mut self, c: usize, mq: &MessageQueue) {
        self.persist_one_as(c, mq, false);
    }

    /// `persist_one`, marking the commit as the OFFSET_ILLEGAL fix when `reset`.
    pub(super) fn persist_one_as(&mut self, c: usize, mq: &MessageQueue, reset: bool) {
        let writer = self.offset_writer(c, mq, reset);
        let con = &self.consumers[c];
        let Some(&offset) = con.offsets.get(mq) else { return };
        if con.model == MessageModel::Broadcasting {
            self.consumers[c].local_offsets.insert(mq.clone(), offset);
            return;
        }
        let Some(b) = self.broker_index(&mq.broker) else { return };
        let group = con.group.clone();
        self.send_oneway(c, b, mq, oneway::OnewayKind::Commit { group, offset, writer });
    }

    /// `persistAllConsumerOffset`: every queue in the ProcessQueue table.
    pub(super) fn persist_offsets(&mut self, c: usize) {
        let mqs: Vec<MessageQueue> = self.consumers[c].pqs.keys().cloned().collect();
        for mq in mqs {
            self.persist_one(c, &mq);
        }
    }

    /// `ConsumerOffsetManager.commitOffset`: the broker takes any commit that reaches it, even
    /// from a client that has since crashed or lost the queue (it overwrites, and may go back).
    pub(super) fn handle_offset_commit(&mut self, b: usize, group: Name, mq: MessageQueue, offset: u64, writer: OffsetWriter) {
        self.commit_offset(b, &group, &mq, offset, writer);
        let bname = self.brokers[b].name.clone();
        self.emit(Event::OffsetCommitted { broker: bname, group, mq, offset });
    }
}
