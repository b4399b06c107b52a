//! The RocketMQ consumption model (shared/specs/rocketmq.md).

pub mod allocate;
pub mod bloom;
pub mod broker;
pub mod consumer;
pub mod duplicates;
pub mod events;
pub mod filter;
pub mod filter_manager;
pub mod filterapi;
pub mod group_info;
pub mod identity;
pub mod producer_index;
pub mod report;
pub mod scenario;
pub mod seam;
pub mod sql92;
pub mod store;
pub mod types;
pub mod world;
