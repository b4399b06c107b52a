//! mqviz's browser app: the Leptos UI (`ui`, behind the default `web` feature) over the pure core
//! in `crates/` (engine, model, one crate per broker, app). The UI reads the core's state and
//! never re-implements broker logic. See ARCHITECTURE.md for the code map and its invariants.

#[cfg(feature = "web")]
pub mod ui;
