//! Key_Shared subscriptions (spec §1.4): sticky keys and hashes, the three selectors, PIP-379
//! draining hashes, and the dispatcher that ties them together.

pub mod consistent_ring;
pub mod dispatcher;
pub mod draining;
mod pending;
pub mod range_split;
pub mod selector;
pub mod sticky_key;
pub mod sticky_ranges;

pub use consistent_ring::ConsistentHashRing;
pub use dispatcher::{
    HoldReason, JoinContext, KeySharedConfig, KeySharedConsumer, KeySharedDispatcher, KeySharedRound, KeyedEntry, ReadPlan,
    ReadRequest, ReadType,
};
pub use draining::{DrainingEntry, DrainingError, DrainingHashesTracker, UnblockNotice};
pub use range_split::RangeSplitSelector;
pub use selector::{lost_ranges, HashRangeAssignment, KeySharedError, StickyKeySelector};
pub use sticky_key::{sticky_key, EntryKeys, NONE_KEY};
pub use sticky_ranges::StickyRangeSelector;
