//! The RocketMQ consumption model: name server, brokers with CommitLog and ConsumeQueues,
//! producers and push consumers (concurrent and orderly) in consumer groups, as
//! `apache/rocketmq` 4.9.8 and 5.x (develop at 8fc57f1) behave; `shared/specs/rocketmq.md` is
//! the spec, section by section. Including the surprising parts: the broker keeps one
//! subscription per topic and group, so members that disagree overwrite each other and lose
//! messages silently.
//!
//! Where to start reading: [`world`] (the World and one file per concern: heartbeat, rebalance,
//! pull, consume, offsets), then [`group_info`] (the overwrite) and [`allocate`]. The algorithms
//! upstream has are one module each ([`filterapi`], [`sql92`], [`bloom`], [`filter_manager`],
//! [`producer_index`]); [`scenario`] reads and writes the RocketMQ section of a scenario;
//! [`events`] and [`log`] are the typed log and its compact storage; [`seam`] is
//! `impl Simulation`; [`report`] explains every message not consumed or consumed twice.

pub mod allocate;
pub mod bloom;
pub mod broker;
pub mod conformance;
pub mod consumer;
pub mod duplicates;
pub mod events;
pub mod filter;
pub mod filter_manager;
pub mod filterapi;
pub mod group_info;
pub mod identity;
pub mod log;
pub mod producer_index;
pub mod report;
pub mod scenario;
pub mod seam;
pub mod sql92;
pub mod store;
pub mod types;
pub mod world;
