//! The seam between the engine and the broker models: every model is driven the same way, from
//! the same scenario envelope, and reports in the same shape.

use serde_json::Value;

use crate::sim::engine::Millis;
use crate::sim::json_path::PathError;
use crate::sim::rocketmq::world::World;
use crate::sim::scenario::{parse_scenario, BrokerKind, Scenario, TimedAction};

/// What the CLI and the UI need from any broker model.
pub trait Simulation {
    fn now(&self) -> Millis;
    fn until(&self) -> Millis;
    fn next_event_time(&self) -> Option<Millis>;
    /// Runs one event if it is due at or before `limit`.
    fn step_until(&mut self, limit: Millis) -> bool;
    fn run_until(&mut self, t: Millis);
    /// Enters a user command at the current time (a timeline action).
    fn handle_command(&mut self, cmd: TimedAction);
    fn event_log_text(&self) -> String;
    fn digest(&self) -> u64;
    fn report(&self) -> Value;
}

impl Simulation for World {
    fn now(&self) -> Millis {
        self.now
    }
    fn until(&self) -> Millis {
        self.scenario.until
    }
    fn next_event_time(&self) -> Option<Millis> {
        World::next_event_time(self)
    }
    fn step_until(&mut self, limit: Millis) -> bool {
        World::step_until(self, limit)
    }
    fn run_until(&mut self, t: Millis) {
        World::run_until(self, t)
    }
    fn handle_command(&mut self, cmd: TimedAction) {
        World::handle_command(self, cmd)
    }
    fn event_log_text(&self) -> String {
        self.log.render()
    }
    fn digest(&self) -> u64 {
        self.log.digest()
    }
    fn report(&self) -> Value {
        crate::sim::rocketmq::report::report_json(self)
    }
}

/// Builds the model a scenario asks for.
pub fn build(scenario: Scenario) -> Result<Box<dyn Simulation>, Vec<PathError>> {
    match scenario.kind {
        BrokerKind::RocketMq => Ok(Box::new(World::new(scenario))),
        BrokerKind::Kafka | BrokerKind::Pulsar => Err(vec![PathError {
            path: "$.broker".into(),
            message: "this broker model is not implemented yet (only rocketmq)".into(),
        }]),
    }
}

/// Parses and runs a scenario to its end; returns the finished RocketMQ world.
pub fn run_rocketmq(text: &str) -> Result<World, Vec<PathError>> {
    let s = parse_scenario(text)?;
    let mut w = World::new(s);
    w.run_to_end();
    Ok(w)
}
