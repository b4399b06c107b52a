//! Cursor and acknowledgement model (spec §2): the broker's durable cursor, and the client-side
//! redelivery machinery (nacks, ack timeout, dead letters).

pub mod managed_cursor;
pub mod redelivery;

pub use managed_cursor::{AckOutcome, CursorError, InitialPosition, ManagedCursor};
pub use redelivery::{
    default_dead_letter_topic, default_retry_letter_topic, partition_dead_letter_topic, AckTimeoutTracker, DeadLetterPolicy,
    DeliveryVerdict, NackDelay, NegativeAcksTracker, RedeliverVerdict, RedeliveryCounts,
};
