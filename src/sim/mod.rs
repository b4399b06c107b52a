//! The pure simulation core: commands in, events out, logical time passed in.
//!
//! Invariant: nothing in here reads a wall clock, uses unseeded randomness, or lets `HashMap`
//! iteration order decide an outcome. The same scenario, seed and command list always give the
//! same event log, natively and in wasm.

pub mod conformance;
pub mod engine;
pub mod hash;
pub mod history;
pub mod json_path;
pub mod kafka;
pub mod link;
pub mod model;
pub mod presets;
pub mod pulsar;
pub mod rocketmq;
pub mod scenario;
pub mod simtest;
pub mod sort;
pub mod story;
pub mod tour;
