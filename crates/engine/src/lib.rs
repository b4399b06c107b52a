//! The deterministic engine shared by every broker model: logical time, one event queue with
//! ties broken by insertion order, a seeded portable RNG, and a causal event log.

pub mod bit_set;
pub mod chunked;
pub mod digest;
pub mod id_map;
pub mod log;
pub mod queue;
pub mod rng;
pub mod runs;

/// Logical time in milliseconds since the start of the scenario.
pub type Millis = u64;

pub use bit_set::BitSet;
pub use chunked::Chunked;
pub use digest::DigestMemo;
pub use id_map::IdMap;
pub use log::{EventId, EventLog, LogEntry};
pub use queue::{Burst, EventQueue};
pub use rng::SplitMix64;
pub use runs::Runs;

pub mod budget;
pub mod decimal;
pub mod hash;
pub mod json_path;
pub mod scenario;
pub mod sort;
pub mod vec_map;
pub mod words;
