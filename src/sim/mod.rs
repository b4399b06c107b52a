//! The pure simulation core: commands in, events out, logical time passed in.
//!
//! Invariant: nothing in here reads a wall clock, uses unseeded randomness, or lets `HashMap`
//! iteration order decide an outcome. The same scenario, seed and command list always give the
//! same event log, natively and in wasm.

// The engine, the seam and each model other than RocketMQ are packages of their own (src/sim/crates/),
// so the browser build can set each one's optimisation: see src/sim/Cargo.toml. Their modules are
// re-exported here under the paths they always had.
pub use mqviz_base::{decimal, engine, hash, json_path, presets, scenario, sort, vec_map};
pub use mqviz_kafka::kafka;
pub use mqviz_pulsar::pulsar;

pub mod conformance;
pub mod history;
pub mod link;
#[path = "models.rs"]
pub mod model;
pub mod moves;
pub mod rocketmq;
pub mod simtest;
pub mod story;
pub mod tour;

// Tests of the base and model packages that need what only this package has (every model, the
// history): they run here.
#[cfg(test)]
#[path = "kafka/seam_tests.rs"]
mod kafka_seam_tests;
#[cfg(test)]
#[path = "model/track_tests.rs"]
mod model_track_tests;
#[cfg(test)]
#[path = "presets_tests.rs"]
mod presets_tests;
