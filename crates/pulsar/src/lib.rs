//! Apache Pulsar consumption: subscriptions of every type, cursors and acks, partitioned and
//! scalable topics (spec: `shared/specs/pulsar.md`, read in `apache/pulsar` with the era named
//! where behaviour changed: PIP-379 Key_Shared from 4.0, scalable topics as of PR #25642). Start
//! reading at [`world`] (one file per concern), then the mechanism it drives: [`key_shared`],
//! [`cursor`] or [`scalable`].
//!
//! Each module owns one mechanism and holds plain `Clone` state that a Pulsar simulation world
//! can own and drive with its logical clock and seeded RNG:
//! - `hash`: Murmur3/JavaStringHash and the derived sticky-key and segment hashes (§0.2);
//! - `routing`, `message_id`: partitioned-topic producers (§3);
//! - `subscription`: subscription types, subscribe compatibility, cumulative-ack rule (§1, §2.2);
//! - `failover`: Exclusive/Failover active-consumer pick and switch (§1.1, §1.2);
//! - `shared_dispatch`, `shared_subscription`, `replay`: Shared round robin, permits, unacked
//!   limits, pending acks, replay set (§1.3);
//! - `key_shared`: Key_Shared selectors, PIP-379 draining, dispatch loop (§1.4);
//! - `cursor`: mark-delete, individual acks, backlog, nacks, ack timeout, DLQ (§2);
//! - `scalable`: scalable topics: segment DAG, assignment, drain poller, sessions (§4);
//! - `defaults`: the upstream defaults all of the above use.
//!
//! The simulation model built on them (behind `mqviz_model::Simulation`):
//! - `scenario`: the Pulsar section of a scenario (reader, cross-checks, writer back to JSON);
//! - `world`: brokers, ledgers, dispatchers, cursors, clients and scalable-topic controllers on
//!   one event queue, one file per concern;
//! - `events`: the typed, causal event log, small entries naming things by index;
//! - `log`: that log stored compactly (per-message events as 24-byte slots), decoded on demand;
//! - `render`: each event as one stable line (what the log shows and the digest hashes);
//! - `seam`: `impl Simulation` (command checks, the neutral View, Trace, cells, provenance);
//! - `report`: the run report, warnings and the reasons traced through the log.

pub mod conformance;
pub mod cursor;
pub mod defaults;
pub mod events;
pub mod failover;
pub mod hash;
pub mod key_shared;
pub mod log;
pub mod message_id;
pub mod render;
pub mod replay;
pub mod report;
pub mod routing;
pub mod scalable;
pub mod scenario;
pub mod seam;
pub mod shared_dispatch;
pub mod shared_subscription;
pub mod subscription;
pub mod variants;
pub mod world;
