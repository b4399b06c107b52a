//! The Pulsar model. Its sources live in `src/sim/pulsar/` and name the engine and the seam by their
//! paths in mqviz-sim (`crate::engine`, `crate::model`, ...), which these re-exports keep.

pub use mqviz_base::{engine, hash, json_path, model, presets, scenario, sort};

#[path = "../../pulsar/mod.rs"]
pub mod pulsar;
