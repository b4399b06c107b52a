//! The memory budget (`mqviz_engine::budget`): the world's own estimate of what it holds,
//! checked as it runs. Past the budget the run stops at that instant with a log entry, a warning
//! and a line in the report, as RocketMQ's does: a nack loop over a long `until` grows without end
//! and would otherwise exhaust the tab.

use std::mem::size_of;

use super::*;
use mqviz_engine::budget::{BudgetStop, CHECK_EVERY};

impl World {
    /// The bytes the run holds, by the world's own accounting: what grows with messages,
    /// deliveries and events (log, messages, entries, provenance, received and acked records,
    /// pending actions). Fixed-size state (topics, subscriptions, consumers) is small and left out.
    pub fn memory_bytes(&self) -> u64 {
        let entries: usize = self.partitions.iter().map(|p| p.entries.capacity() * size_of::<Entry>()).sum();
        let records: usize = self
            .consumers
            .iter()
            .map(|c| c.received.capacity() * size_of::<ReceivedRecord>() + c.acked.capacity() * size_of::<MsgId>())
            .sum();
        (self.log.bytes()
            + self.messages.capacity() * size_of::<Message>()
            + self.fates.capacity() * size_of::<Fate>()
            + self.msg_events.capacity() * size_of::<(MsgId, EventId)>()
            + self.owners.capacity() * size_of::<OwnerRecord>()
            + entries
            + records
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
