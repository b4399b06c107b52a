//! The RocketMQ model under simulation testing: its scenario generator, invariants and shrinking.

pub mod generate;
pub mod invariants;
pub mod shrink;

use serde_json::Value;

use super::{rng_for, Property, SimTarget, Violation};
use mqviz_model::Simulation;

/// Plugs the RocketMQ model into the simulation-testing driver.
#[derive(Clone, Copy, Debug, Default)]
pub struct RocketMqTarget;

impl SimTarget for RocketMqTarget {
    type Watch = invariants::Watch;

    fn model(&self) -> &'static str {
        "rocketmq"
    }

    fn generate(&self, seed: u64) -> Value {
        generate::generate(&mut rng_for(seed))
    }

    fn check_step(&self, sim: &dyn Simulation, watch: &mut Self::Watch, out: &mut Vec<Violation>) {
        invariants::check_step(invariants::world(sim), watch, out);
    }

    fn check_end(&self, scenario: &Value, sim: &dyn Simulation, watch: &Self::Watch, out: &mut Vec<Violation>) {
        invariants::check_end(scenario, invariants::world(sim), watch, out);
    }

    fn shrink_candidates(&self, scenario: &Value) -> Vec<Value> {
        shrink::candidates(scenario)
    }

    fn properties(&self) -> &'static [Property] {
        invariants::PROPERTIES
    }
}
