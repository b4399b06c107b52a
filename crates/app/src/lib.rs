//! What the page and the CLI build on above the models: the registry, the one place that names
//! every model ([`registry`]); a run's edits and their undo ([`history`]); whole-run links
//! ([`link`]); snapshots read from admin tools' output ([`import`]); the moves of a rebalance ([`moves`]); the story and tours told over a run
//! ([`story`], [`tour`]); the presets ([`presets`]); the conformance vectors' dispatcher
//! ([`conformance`]) and the simulation-test driver ([`simtest`]).
//!
//! Invariant, as everywhere in the core: nothing in here reads a wall clock, uses unseeded
//! randomness, or lets `HashMap` iteration order decide an outcome. The same scenario, seed and
//! command list always give the same event log, natively and in wasm.

pub mod conformance;
pub mod history;
pub mod import;
pub mod link;
pub mod moves;
pub mod presets;
pub mod registry;
pub mod review;
pub mod simtest;
pub mod story;
pub mod tour;

#[cfg(test)]
mod kafka_seam_tests;
#[cfg(test)]
mod presets_tests;
#[cfg(test)]
mod track_tests;
