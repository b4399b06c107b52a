//! One-way RPCs on a client's connection to a broker: offset commits (`updateConsumeOffsetToBroker`)
//! and orderly unlocks (`unlockBatchMQ(oneway)`). They reach the broker one latency after they are
//! sent. The model answers synchronous RPCs (LOCK_BATCH_MQ, QUERY_CONSUMER_OFFSET) at the broker's
//! state the instant they are sent, but a connection is FIFO: one-way requests sent earlier reach
//! the broker first. So before a synchronous request about a queue, the client's pending one-way
//! requests about that queue are delivered; their scheduled arrival then finds nothing to do.

use super::*;

#[derive(Clone, Debug)]
pub(super) enum OnewayKind {
    Commit { group: Name, offset: u64, writer: OffsetWriter },
    Unlock { group: Name, client: Name },
}

/// A one-way request on its way to a broker.
#[derive(Clone, Debug)]
pub(super) struct OnewayRpc {
    id: u64,
    consumer: usize,
    broker: usize,
    mq: MessageQueue,
    kind: OnewayKind,
}

impl World {
    pub(super) fn send_oneway(&mut self, c: usize, b: usize, mq: &MessageQueue, kind: OnewayKind) {
        self.next_oneway += 1;
        let id = self.next_oneway;
        self.oneway.push(OnewayRpc { id, consumer: c, broker: b, mq: mq.clone(), kind });
        let latency = self.consumers[c].latency;
        self.schedule(latency, Action::OnewayArrive { id });
    }

    pub(super) fn handle_oneway_arrive(&mut self, id: u64) {
        if let Some(i) = self.oneway.iter().position(|r| r.id == id) {
            let rpc = self.oneway.remove(i);
            self.deliver_oneway(rpc);
        }
    }

    /// Delivers now what client `c` sent earlier about `mq` (before one of its synchronous requests).
    pub(super) fn flush_oneway(&mut self, c: usize, mq: &MessageQueue) {
        if !self.oneway.iter().any(|r| r.consumer == c && r.mq == *mq) {
            return;
        }
        let (now, rest): (Vec<OnewayRpc>, Vec<OnewayRpc>) =
            std::mem::take(&mut self.oneway).into_iter().partition(|r| r.consumer == c && r.mq == *mq);
        self.oneway = rest;
        for rpc in now {
            self.deliver_oneway(rpc);
        }
    }

    fn deliver_oneway(&mut self, rpc: OnewayRpc) {
        match rpc.kind {
            OnewayKind::Commit { group, offset, writer } => self.handle_offset_commit(rpc.broker, group, rpc.mq, offset, writer),
            OnewayKind::Unlock { group, client } => self.handle_unlock_arrive(rpc.broker, &group, &client, &rpc.mq),
        }
    }
}
