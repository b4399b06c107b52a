//! The memory budget (`mqviz_engine::budget`): the world's own estimate of what it holds,
//! checked as it runs. Past the budget the run stops at that instant with a log entry, a warning
//! and a line in the report, as RocketMQ's and Pulsar's do.

use std::mem::size_of;

use super::*;
use mqviz_engine::budget::{BudgetStop, CHECK_EVERY};

impl World {
    /// The bytes the run holds, by the world's own accounting: what grows with records and
    /// events (log, messages, partition logs, deliveries, provenance, pending actions).
    /// Fixed-size state (brokers, groups, consumers) is small and left out.
    pub fn memory_bytes(&self) -> u64 {
        let records: usize = self.partitions.iter().map(|p| p.records.capacity() * size_of::<partitions::Rec>()).sum();
        let deliveries: usize = self.deliveries.iter().map(|d| d.capacity() * size_of::<u16>()).sum();
        (self.log.bytes()
            + self.messages.capacity() * size_of::<Message>()
            + self.fates.capacity() * size_of::<Fate>()
            + self.msg_events.capacity() * size_of::<(MsgId, EventId)>()
            + records
            + deliveries
            + self.queue.bytes()) as u64
    }

    /// Checks the budget every `CHECK_EVERY` steps; over it, the run ends here.
    pub(super) fn check_budget(&mut self) {
        self.steps += 1;
        if self.steps % CHECK_EVERY != 0 {
            return;
        }
        let reached = self.memory_bytes();
        if reached <= self.memory_budget {
            return;
        }
        let stop = BudgetStop { at: self.now, budget: self.memory_budget, reached };
        self.handler_cause = None;
        self.emit(Event::BudgetExceeded { budget: stop.budget, reached: stop.reached });
        self.queue.clear();
        self.budget_stop = Some(stop);
    }
}
