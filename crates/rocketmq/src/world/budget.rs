//! The memory budget: the world's own estimate of what it holds, checked as it runs. A run that
//! grows past the budget first compacts its event log (`World::compact_log`: the oldest entries
//! go, the digest keeps them); if that is not enough, it stops at that instant with a log entry
//! and a warning naming the budget and the size reached, instead of exhausting the browser tab
//! (or the machine).

use std::mem::size_of;

use super::*;
use crate::store::CqEntry;

pub use mqviz_engine::budget::{mb, BudgetStop, CHECK_EVERY, DEFAULT_MEMORY_BUDGET};

/// Compaction is tried while the log is at least 1/this of the estimate.
const COMPACT_WHEN_LOG_IS: u64 = 8;

impl World {
    /// The bytes the run holds, by the world's own accounting: what grows with messages and
    /// events (log, messages, consume queues, records, pending actions). Fixed-size state
    /// (brokers, consumers, tables) is small and left out.
    pub fn memory_bytes(&self) -> u64 {
        let cq_entries: usize = self.brokers.iter().flat_map(|b| b.cqs.values()).flatten().map(|cq| cq.entries.len()).sum();
        let bitmaps: usize = self.brokers.iter().map(|b| b.bitmaps.len() * 64).sum();
        let in_flight: usize = self.consumers.iter().flat_map(|c| c.pqs.values()).map(|pq| pq.in_flight.len() * 32).sum();
        (self.log_store.bytes()
            + self.messages.len() * size_of::<Message>()
            + self.fates.len() * size_of::<Fate>()
            + cq_entries * size_of::<CqEntry>()
            + self.consumptions.bytes()
            + self.process_queues.len() * size_of::<PqRecord>()
            + self.skip_notes.len() * 48
            + self.queue.bytes()
            + bitmaps
            + in_flight) as u64
    }

    /// Checks the budget every `CHECK_EVERY` steps; over it, the run ends here.
    pub(super) fn check_budget(&mut self) {
        self.steps += 1;
        if self.steps % CHECK_EVERY != 0 {
            return;
        }
        let mut reached = self.memory_bytes();
        if reached <= self.memory_budget {
            return;
        }
        // Over the budget: first give up the oldest log entries, while the log is a good part of
        // what the run holds; stop only when that is not enough.
        if self.log_store.bytes() as u64 >= reached / COMPACT_WHEN_LOG_IS {
            self.compact_log();
            reached = self.memory_bytes();
            if reached <= self.memory_budget {
                return;
            }
        }
        let stop = BudgetStop { at: self.now, budget: self.memory_budget, reached };
        self.handler_cause = None;
        self.emit(Event::BudgetExceeded { budget: stop.budget, reached: stop.reached });
        self.queue.clear();
        self.budget_stop = Some(stop);
    }
}

#[cfg(test)]
mod tests {
    use crate::events::Event;
    use crate::scenario::parse_scenario;
    use crate::world::World;
    use mqviz_engine::EventId;
    use mqviz_model::Simulation;

    fn world(messages: u32) -> World {
        let text = format!(
            r#"{{"format": "mqviz-scenario/1", "name": "budget", "until": 600000,
            "brokers": [{{"name": "b"}}], "topics": [{{"name": "T", "queues": 4}}],
            "producers": [{{"id": "p", "sends": [{{"at": 1000, "topic": "T", "tag": "A", "body": "m{{i}}", "count": {messages}, "intervalMs": 0}}]}}],
            "groups": [{{"name": "g", "consumers": [{{"clientId": "c", "subscriptions": {{"T": "A"}}}}]}}]}}"#
        );
        World::new(parse_scenario(&text).expect("valid"))
    }

    #[test]
    fn a_run_over_its_budget_stops_there_and_says_why() {
        let mut w = world(20_000);
        w.memory_budget = 300_000;
        w.run_to_end();
        let stop = w.budget_stop.clone().expect("the budget stopped the run");
        assert!(stop.reached > stop.budget);
        assert!(w.now >= stop.at && w.next_event_time().is_none(), "nothing runs after the stop");
        let last = w.log().entries().last().expect("a log");
        assert!(matches!(last.kind, Event::BudgetExceeded { budget: 300_000, .. }), "{:?}", last.kind);
        assert!(last.kind.to_string().contains("budget of 300000 bytes"));
        let warnings = Simulation::warnings(&w);
        assert!(warnings.iter().any(|(who, text)| who == "memory budget" && text.contains("0.3 MB")), "{warnings:?}");
        assert_eq!(w.report()["stopped"]["memoryBudget"], 300_000);
    }

    #[test]
    fn a_scenario_sets_its_own_budget() {
        let text = r#"{"format": "mqviz-scenario/1", "name": "b", "until": 600000, "memoryBudgetMb": 2,
            "brokers": [{"name": "b"}], "topics": [{"name": "T", "queues": 4}],
            "producers": [{"id": "p", "sends": [{"at": 1000, "topic": "T", "tag": "A", "body": "m{i}", "count": 50000, "intervalMs": 0}]}],
            "groups": [{"name": "g", "consumers": [{"clientId": "c", "subscriptions": {"T": "A"}}]}]}"#;
        let mut w = World::new(parse_scenario(text).expect("valid"));
        assert_eq!(w.memory_budget, 2_000_000);
        w.run_to_end();
        let stop = w.budget_stop.clone().expect("a 2 MB budget stops a 50,000-message run");
        assert!(stop.message().contains("memory budget of 2.0 MB"), "{}", stop.message());
        let bad = parse_scenario(&text.replace(r#""memoryBudgetMb": 2"#, r#""memoryBudgetMb": 0"#)).unwrap_err();
        assert!(format!("{bad:?}").contains("$.memoryBudgetMb"), "{bad:?}");
    }

    /// TagA is consumed and TagC filtered out by the broker, 1 ms apart: the log is most of what
    /// the run holds.
    fn filtered_run(messages: u32) -> World {
        let text = format!(
            r#"{{"format": "mqviz-scenario/1", "name": "compaction", "until": 200000,
            "brokers": [{{"name": "b"}}], "topics": [{{"name": "T", "queues": 4}}],
            "producers": [{{"id": "p", "sends": [
                {{"at": 1000, "topic": "T", "tag": "A", "body": "a{{i}}", "count": {messages}, "intervalMs": 1}},
                {{"at": 1000, "topic": "T", "tag": "C", "body": "c{{i}}", "count": {messages}, "intervalMs": 1}}]}}],
            "groups": [{{"name": "g", "consumers": [{{"clientId": "c", "subscriptions": {{"T": "A"}}}}]}}]}}"#
        );
        World::new(parse_scenario(&text).expect("valid"))
    }

    #[test]
    fn over_its_budget_a_run_compacts_its_log_and_goes_on_with_the_same_digest() {
        let mut whole = filtered_run(20_000);
        whole.run_to_end();
        let full = whole.memory_bytes();
        let log = whole.log_store.bytes() as u64;
        assert!(log > full / 3, "the log is a good part of the run: {log} of {full}");

        let mut compacted = filtered_run(20_000);
        compacted.memory_budget = full - log / 2;
        compacted.run_to_end();
        assert_eq!(compacted.budget_stop, None, "compaction was enough");
        assert!(compacted.memory_bytes() <= compacted.memory_budget);
        let before = compacted.log().log.compacted_before().expect("the log was compacted");
        assert!(compacted.log().log.first_kept() > 0);
        assert_eq!(compacted.log().len(), whole.log().len(), "ids are not renumbered");
        assert_eq!(Simulation::digest(&compacted), Simulation::digest(&whole), "the digest covers compacted entries");
        // Kept entries read as before; compacted ones answer that they were compacted.
        let last = whole.log().len() - 1;
        assert_eq!(
            compacted.log().get(EventId(last as u32)).map(|e| e.kind.to_string()),
            whole.log().get(EventId(last as u32)).map(|e| e.kind.to_string())
        );
        assert!(compacted.log().get(EventId(0)).is_none());
        assert!(Simulation::log_text(&compacted, 0).contains("compacted"));
        assert!(compacted.log().render().starts_with("# entries #0.."));
        let first = Simulation::provenance(&compacted, 0);
        assert!(Simulation::log_text(&compacted, first[0]).contains("compacted"), "the provenance of m0 starts with the note");
        // An early TagC message: its broker-filtered entry is gone, and the report says so.
        let report = compacted.report();
        let unconsumed = report["unconsumed"].as_array().expect("a list");
        let early = unconsumed.iter().find(|u| u["body"] == "c0").expect("c0 is unconsumed");
        assert_eq!(early["kind"], "compacted", "{early}");
        assert!(early["reason"].as_str().unwrap_or("").contains(&format!("before t={before}")), "{early}");
        let late =
            whole.report()["unconsumed"].as_array().expect("a list").iter().find(|u| u["body"] == "c0").cloned().expect("c0");
        assert_eq!(late["kind"], "broker-filtered", "uncompacted, the reason is the filter: {late}");
    }

    #[test]
    fn the_default_budget_leaves_ordinary_runs_alone() {
        let mut w = world(2_000);
        w.run_to_end();
        assert_eq!(w.budget_stop, None);
        assert!(w.memory_bytes() < 1_000_000, "{}", w.memory_bytes());
    }
}
