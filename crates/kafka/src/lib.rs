//! The Kafka consumer-group model: brokers with partition logs, producers, the classic and the
//! KIP-848 group coordinators, and consumers with their fetch-state machine, as `apache/kafka`
//! trunk at 1eb7644 (4.0-dev) behaves (`shared/specs/kafka.md`); the pure algorithms are
//! bit-exact with the upstream Java where the conformance vectors pin them down. Start reading
//! at [`world`] (the coordinators and members), then [`assignor`] and [`reconciliation`].
//!
//! - [`java_order`], [`uuid`]: Java ordering and `HashMap` iteration order (§0.2, §0.3);
//!   [`fast_hash`]: a hasher for lookup-only tables.
//! - [`murmur2`], [`partitioner`]: producer partition choice (§6).
//! - [`assignor`]: classic-protocol client assignors (§1).
//! - [`classic_group`]: rebalance protocol, protocol vote and leader choice (§1.4, §2, §10).
//! - [`server_assignor`]: KIP-848 coordinator assignors (§3).
//! - [`fetch_state`], [`subscription_state`]: the consumer's `SubscriptionState` (§4).
//! - [`reconciliation`]: KIP-848 member reconciliation and epochs (§3).
//!
//! The simulation model built on them, behind the broker-neutral seam (`mqviz_model`):
//! - [`scenario`]: the Kafka section of a scenario (reader, writer, consumer settings);
//! - [`world`]: brokers with partition logs, producers, both group coordinators, consumers;
//! - [`events`]: the typed event log; [`seam`]: `impl Simulation`; [`report`]: the run report;
//!   [`timeline`]: state spans for a Gantt view.

pub mod assignor;
pub mod classic_group;
pub mod conformance;
pub mod events;
pub mod fast_hash;
pub mod fetch_state;
pub mod java_order;
pub mod murmur2;
pub mod partitioner;
pub mod pattern;
pub mod reconciliation;
pub mod report;
pub mod scenario;
pub mod seam;
pub mod server_assignor;
pub mod subscription_state;
pub mod timeline;
pub mod uuid;
pub mod variants;
pub mod world;
