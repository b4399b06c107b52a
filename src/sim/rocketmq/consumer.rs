//! Client-side state of one push consumer (`DefaultMQPushConsumerImpl` + `RebalanceImpl`).

use std::collections::BTreeMap;

use super::allocate::Strategy;
use super::events::{MsgId, Name};
use super::filterapi::SubscriptionData;
use super::types::{ConsumeFromWhere, MessageModel, MessageQueue};
use crate::sim::engine::Millis;
use crate::sim::rocketmq::scenario::{ConsumeResultPolicy, ConsumerSpec};

/// `ProcessQueue`: what the client holds for one allocated queue.
#[derive(Clone, Debug, Default)]
pub struct ProcessQueue {
    pub dropped: bool,
    /// `PullRequest.nextOffset`.
    pub next_offset: u64,
    /// Messages pulled and not yet consumed, by queue offset.
    pub in_flight: BTreeMap<u64, MsgId>,
    /// Largest queue offset ever put into this queue (`queueOffsetMax`).
    pub max_offset: Option<u64>,
    /// Orderly: a consume task is running for this queue.
    pub consuming: bool,
    /// Orderly: local re-consume attempts per message.
    pub local_reconsume: BTreeMap<MsgId, u32>,
}

impl ProcessQueue {
    /// `ProcessQueue.removeMessage`: the smallest offset still in flight, else max + 1.
    pub fn committed_offset(&self) -> Option<u64> {
        match self.in_flight.keys().next() {
            Some(o) => Some(*o),
            None => self.max_offset.map(|m| m + 1),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsumerStats {
    pub pulls: u64,
    pub pulled: u64,
    pub client_filtered: u64,
    pub consumed: u64,
    pub failed: u64,
    pub retried: u64,
}

#[derive(Clone, Debug)]
pub struct Consumer {
    pub client_id: Name,
    pub group: Name,
    pub spec: ConsumerSpec,
    pub model: MessageModel,
    pub consume_from_where: ConsumeFromWhere,
    pub orderly: bool,
    pub strategy: Strategy,
    pub strategy_name: &'static str,
    pub latency: Millis,
    pub running: bool,
    pub incarnation: u32,
    pub channel: Name,
    pub started_at: Millis,
    /// `subscriptionInner`: topic-keyed, including `%RETRY%<group>` in CLUSTERING.
    pub subs: BTreeMap<String, SubscriptionData>,
    /// `topicSubscribeInfoTable`, refreshed from the name server every 30 s.
    pub routes: BTreeMap<String, Vec<MessageQueue>>,
    pub pqs: BTreeMap<MessageQueue, ProcessQueue>,
    /// The offset store's in-memory table (remote for CLUSTERING).
    pub offsets: BTreeMap<MessageQueue, u64>,
    /// BROADCASTING: `LocalFileOffsetStore`, which survives restarts.
    pub local_offsets: BTreeMap<MessageQueue, u64>,
    pub rebalance_gen: u64,
    /// The last stop was a crash (no unregister), not a graceful shutdown.
    pub crashed: bool,
    /// Why the last `start()` threw, if it did.
    pub start_error: Option<String>,
    pub stats: ConsumerStats,
    /// Root message ids this consumer consumed, in order.
    pub consumed: Vec<MsgId>,
}

impl Consumer {
    pub fn fails(&self, reconsume_times: u32) -> bool {
        match self.spec.result {
            ConsumeResultPolicy::Success => false,
            ConsumeResultPolicy::AlwaysFail => true,
            ConsumeResultPolicy::FailTimes(n) => reconsume_times < n,
        }
    }

    /// The subscriptions as `topic=expr` for logs and heartbeats.
    pub fn subscription_summary(&self) -> String {
        let parts: Vec<String> = self.subs.values().map(|s| format!("{}={}@{}", s.topic, s.sub_string, s.sub_version)).collect();
        format!("[{}]", parts.join(","))
    }
}
