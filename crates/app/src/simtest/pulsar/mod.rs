//! The Pulsar model under simulation testing: its scenario generator, invariants and shrinking.

pub mod generate;
pub mod invariants;

use serde_json::Value;

use super::shrink::{self, Shape};
use super::{rng_for, Property, SimTarget, Violation};
use mqviz_model::Simulation;

/// Plugs the Pulsar model into the simulation-testing driver.
#[derive(Clone, Copy, Debug, Default)]
pub struct PulsarTarget;

const SHAPE: Shape = Shape {
    simplify: &["latencyMs", "ackTimeoutMs", "deadLetterPolicy", "keySharedPolicy", "receiverQueueSize"],
    sizes: &["partitions"],
};

impl SimTarget for PulsarTarget {
    type Watch = invariants::Watch;

    fn model(&self) -> &'static str {
        "pulsar"
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
        shrink::candidates(scenario, &SHAPE)
    }

    fn properties(&self) -> &'static [Property] {
        invariants::PROPERTIES
    }
}
