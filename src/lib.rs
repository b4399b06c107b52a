//! mqviz: a deterministic message-broker consumption simulator.
//!
//! `sim` is the pure core (no UI crates, no wall clock); `ui` is the Leptos front end behind the
//! default `web` feature. See ARCHITECTURE.md for the code map and its invariants.

pub use mqviz_sim as sim;

#[cfg(feature = "web")]
pub mod ui;

pub mod bench;
pub mod bench_filters;
pub mod bench_kafka;
pub mod bench_kafka_sim;
pub mod bench_pulsar;
pub mod bench_pulsar_sim;
// The command line has no place in the page.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub mod cli;
pub mod fuzz;
