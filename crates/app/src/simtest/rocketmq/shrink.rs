//! Smaller variants of a RocketMQ scenario, for shrinking a failure: the shared moves
//! (`simtest::shrink`) on RocketMQ's shape.

use serde_json::Value;

use crate::simtest::shrink::{self, Shape};

const SHAPE: Shape = Shape { simplify: &["consumeResult", "latencyMs", "onStartFailure"], sizes: &["queues"] };

/// Candidates, most reducing first.
pub fn candidates(s: &Value) -> Vec<Value> {
    shrink::candidates(s, &SHAPE)
}
