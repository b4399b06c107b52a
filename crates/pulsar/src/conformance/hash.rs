//! Kind `pulsar.hash`: `murmur3_32_raw {utf8}` and `key_hashes {key}` (spec §0.2, §1.4.1, §4.3).

use serde_json::{json, Value};

use super::input::{In, Res};
use crate::hash::{
    consistent_sticky_hash, java_string_make_hash, make_hash, murmur3_raw, range_selector_sticky_hash, segment_hash,
    SegmentHashEra,
};
use mqviz_engine::hash::java_string_hash;

pub fn run(input: &Value) -> Res<Value> {
    let i = In::root(input)?;
    match i.op()? {
        "murmur3_32_raw" => {
            let text = i.str("utf8")?;
            let raw = murmur3_raw(text.as_bytes());
            Ok(json!({
                "raw_u32": raw,
                "raw_hex": format!("0x{raw:08x}"),
                "raw_i32": raw as i32,
                "pulsar_makeHash": make_hash(text.as_bytes()),
            }))
        }
        "key_hashes" => {
            let key = i.str("key")?;
            let bytes = key.as_bytes();
            Ok(json!({
                "murmur3_raw_u32": murmur3_raw(bytes),
                "murmur3_makeHash": make_hash(bytes),
                "java_hashCode_i32": java_string_hash(key),
                "javaStringHash": java_string_make_hash(key),
                "keyShared_stickyHash_consistent": consistent_sticky_hash(bytes),
                "keyShared_stickyHash_rangeSelectors": range_selector_sticky_hash(bytes),
                "scalable_segmentHash_pip468_lowbits": segment_hash(bytes, SegmentHashEra::Pip468LowBits),
                "scalable_segmentHash_pip486_highbits": segment_hash(bytes, SegmentHashEra::Pip486HighBits),
            }))
        }
        other => Err(format!("input.op: unknown operation {other:?}")),
    }
}
