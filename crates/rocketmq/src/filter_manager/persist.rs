//! Persisting the registry (`ConfigManager.encode` / `decode` of `consumerFilter.json`).
//!
//! The JSON mirrors upstream's fastjson shape, plus an optional `config` object for the
//! mqviz-side settings (upstream ignores unknown fields; we read strictly):
//!
//! ```json
//! {"filterDataByTopic": {"T": {"topic": "T", "groupFilterData": {"G": {
//!     "consumerGroup": "G", "topic": "T", "expression": "a > 5", "expressionType": "SQL92",
//!     "bornTime": 1000, "deadTime": 0, "clientVersion": 7,
//!     "bloomFilterData": {"bitPos": [80, 66, 42], "bitNum": 112}}}}},
//!  "config": {"indexDesign": "groupIndex", "enableCalcFilterBitMap": false, "sql92Version": "5",
//!             "maxErrorRateOfBloomFilter": 20, "expectConsumerNumUseFilter": 32,
//!             "filterDataCleanTimeSpan": 86400000}}
//! ```
//!
//! Compiled expressions are transient: they are recompiled on load (failure keeps the entry with
//! `compiled = None`, as upstream). The group index is not persisted; it is rebuilt on load.

use mqviz_engine::vec_map::VecMap;

use serde_json::{json, Map, Value};

use super::{ConsumerFilterData, ConsumerFilterManager, FilterManagerConfig, IndexDesign, LOAD_DEAD_OFFSET_MS};
use crate::bloom::BloomFilterData;
use crate::filterapi::ExpressionType;
use crate::sql92::{self, Sql92Version};
use mqviz_engine::json_path::{parse_json, type_name, Errors, Obj};

/// Java `long` range for times and versions.
const MAX_LONG: u64 = i64::MAX as u64;

fn version_name(v: Sql92Version) -> &'static str {
    match v {
        Sql92Version::V4_9 => "4.9",
        Sql92Version::V5 => "5",
    }
}

fn key_path(path: &str, key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("{path}.{key}")
    } else {
        format!("{path}[{key:?}]")
    }
}

fn entry_json(d: &ConsumerFilterData) -> Value {
    let bloom = match &d.bloom {
        Some(b) => json!({"bitPos": b.bit_pos, "bitNum": b.bit_num}),
        None => Value::Null,
    };
    json!({
        "consumerGroup": d.group,
        "topic": d.topic,
        "expression": d.expression,
        "expressionType": d.expression_type.name(),
        "bornTime": d.born_time,
        "deadTime": d.dead_time,
        "clientVersion": d.client_version,
        "bloomFilterData": bloom,
    })
}

fn as_object<'a>(v: &'a Value, path: &str, e: &mut Errors) -> Option<&'a Map<String, Value>> {
    match v {
        Value::Object(m) => Some(m),
        other => {
            e.push(path, format!("expected an object, found {}", type_name(other)));
            None
        }
    }
}

fn as_i32(v: &Value, path: &str, e: &mut Errors) -> Option<i32> {
    match v.as_i64().and_then(|x| i32::try_from(x).ok()) {
        Some(x) => Some(x),
        None => {
            e.push(
                path,
                format!("expected a 32-bit integer, found {}", if v.is_number() { "another number" } else { type_name(v) }),
            );
            None
        }
    }
}

fn read_bloom(v: &Value, path: &str, e: &mut Errors) -> Option<BloomFilterData> {
    let mut o = Obj::new(v, path, e)?;
    let bit_pos: Vec<Option<i32>> = o.array("bitPos", e).into_iter().map(|(p, v)| as_i32(v, &p, e)).collect();
    let bit_num = o.required("bitNum", e).and_then(|v| as_i32(v, &o.child_path("bitNum"), e));
    o.finish(e);
    Some(BloomFilterData { bit_pos: bit_pos.into_iter().collect::<Option<Vec<i32>>>()?, bit_num: bit_num? })
}

fn read_entry(
    v: &Value,
    path: &str,
    topic: &str,
    group: &str,
    version: Sql92Version,
    e: &mut Errors,
) -> Option<ConsumerFilterData> {
    let mut o = Obj::new(v, path, e)?;
    let g = o.req_str("consumerGroup", e);
    let t = o.req_str("topic", e);
    let expression = o.req_str("expression", e);
    let expression_type = o.req_str("expressionType", e);
    let born_time = o.req_u64_in("bornTime", 0, MAX_LONG, e);
    let dead_time = o.u64_in("deadTime", 0, MAX_LONG, e).unwrap_or(0);
    let client_version = o.req_u64_in("clientVersion", 0, MAX_LONG, e);
    let bloom_path = o.child_path("bloomFilterData");
    let bloom = o.get("bloomFilterData").map(|b| read_bloom(b, &bloom_path, e));
    if let Some(g) = g.filter(|g| *g != group) {
        e.push(&o.child_path("consumerGroup"), format!("{g:?} does not match its key {group:?}"));
    }
    if let Some(t) = t.filter(|t| *t != topic) {
        e.push(&o.child_path("topic"), format!("{t:?} does not match its key {topic:?}"));
    }
    o.finish(e);
    let (expression, expression_type) = (expression?, expression_type?);
    let expression_type =
        if expression_type == "TAG" { ExpressionType::Tag } else { ExpressionType::Other(expression_type.to_string()) };
    let compiled = if expression_type.is_sql92() { sql92::compile(expression, version).ok() } else { None };
    Some(ConsumerFilterData {
        group: g?.to_string(),
        topic: t?.to_string(),
        expression: expression.to_string(),
        compiled,
        expression_type,
        bloom: match bloom {
            None => None,
            Some(b) => Some(b?),
        },
        client_version: client_version?,
        born_time: born_time?,
        dead_time,
    })
}

fn read_config(v: &Value, path: &str, e: &mut Errors) -> FilterManagerConfig {
    let mut c = FilterManagerConfig::default();
    let Some(mut o) = Obj::new(v, path, e) else { return c };
    if let Some(s) = o.str("indexDesign", e) {
        match IndexDesign::parse(s) {
            Some(d) => c.design = d,
            None => e.push(&o.child_path("indexDesign"), format!("unknown design {s:?} (expected topicScan or groupIndex)")),
        }
    }
    if let Some(b) = o.bool("enableCalcFilterBitMap", e) {
        c.enable_calc_filter_bitmap = b;
    }
    if let Some(s) = o.str("sql92Version", e) {
        match s {
            "4.9" => c.sql92_version = Sql92Version::V4_9,
            "5" => c.sql92_version = Sql92Version::V5,
            _ => e.push(&o.child_path("sql92Version"), format!("unknown version {s:?} (expected \"4.9\" or \"5\")")),
        }
    }
    if let Some(f) = o.u64_in("maxErrorRateOfBloomFilter", 1, 99, e) {
        c.max_error_rate_of_bloom_filter = f as i32;
    }
    if let Some(n) = o.u64_in("expectConsumerNumUseFilter", 1, i32::MAX as u64, e) {
        c.expect_consumer_num_use_filter = n as i32;
    }
    if let Some(s) = o.u64_in("filterDataCleanTimeSpan", 0, MAX_LONG, e) {
        c.filter_data_clean_time_span_ms = s;
    }
    o.finish(e);
    c
}

fn errors_to_string(e: Errors) -> String {
    e.list.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

impl ConsumerFilterManager {
    /// The registry and the settings as JSON (no `clean()` first: see [`Self::encode`]).
    pub fn to_json(&self) -> String {
        let mut topics = Map::new();
        for (topic, m) in &self.by_topic {
            let groups: Map<String, Value> = m.iter().map(|(g, d)| (g.clone(), entry_json(d))).collect();
            topics.insert(topic.clone(), json!({"topic": topic, "groupFilterData": groups}));
        }
        let c = &self.config;
        json!({
            "filterDataByTopic": topics,
            "config": {
                "indexDesign": c.design.name(),
                "enableCalcFilterBitMap": c.enable_calc_filter_bitmap,
                "sql92Version": version_name(c.sql92_version),
                "maxErrorRateOfBloomFilter": c.max_error_rate_of_bloom_filter,
                "expectConsumerNumUseFilter": c.expect_consumer_num_use_filter,
                "filterDataCleanTimeSpan": c.filter_data_clean_time_span_ms,
            }
        })
        .to_string()
    }

    /// Upstream `encode()`: `clean(now)` first, then the JSON.
    pub fn encode(&mut self, now: u64) -> String {
        self.clean(now);
        self.to_json()
    }

    /// Restores exactly what [`Self::to_json`] wrote (settings from its `config`, defaults if
    /// absent), recompiling the expressions and rebuilding the group index.
    pub fn from_json(text: &str) -> Result<Self, String> {
        Self::read(text, None)
    }

    /// Like [`Self::from_json`] but with the given settings (the file's `config`, if any, is
    /// checked and ignored): e.g. to load a TopicScan broker's file into a GroupIndex broker.
    pub fn from_json_with(text: &str, config: FilterManagerConfig) -> Result<Self, String> {
        Self::read(text, Some(config))
    }

    fn read(text: &str, config: Option<FilterManagerConfig>) -> Result<Self, String> {
        let v = parse_json(text).map_err(|e| e.to_string())?;
        let mut e = Errors::default();
        let Some(mut root) = Obj::new(&v, "$", &mut e) else {
            return Err(errors_to_string(e));
        };
        let file_config = root.get("config").map(|c| read_config(c, "$.config", &mut e)).unwrap_or_default();
        let config = config.unwrap_or(file_config);
        let version = config.sql92_version;
        let mut by_topic: VecMap<String, VecMap<String, ConsumerFilterData>> = VecMap::new();
        if let Some(topics) = root.get("filterDataByTopic").and_then(|t| as_object(t, "$.filterDataByTopic", &mut e)) {
            for (topic, tv) in topics {
                let tpath = key_path("$.filterDataByTopic", topic);
                let Some(mut to) = Obj::new(tv, &tpath, &mut e) else { continue };
                if let Some(t) = to.str("topic", &mut e).filter(|t| t != topic) {
                    e.push(&to.child_path("topic"), format!("{t:?} does not match its key {topic:?}"));
                }
                let gpath = to.child_path("groupFilterData");
                let groups = to.get("groupFilterData").and_then(|g| as_object(g, &gpath, &mut e));
                to.finish(&mut e);
                let m = by_topic.entry(topic.clone()).or_default();
                for (group, gv) in groups.into_iter().flatten() {
                    if let Some(d) = read_entry(gv, &key_path(&gpath, group), topic, group, version, &mut e) {
                        m.insert(group.clone(), d);
                    }
                }
            }
        }
        root.finish(&mut e);
        if !e.is_empty() {
            return Err(errors_to_string(e));
        }
        let mut mgr = ConsumerFilterManager::new(config).map_err(|b| format!("$.config: {b}"))?;
        mgr.by_topic = by_topic;
        mgr.rebuild_group_index();
        Ok(mgr)
    }

    /// Upstream `decode()` at broker start (`now`): loads the file with the given settings, then
    /// - if any entry's bloom data does not fit this broker's bloom filter ("Bloom filter is
    ///   changed!") **nothing** is loaded (returns an empty manager and `true`); under TopicScan a
    ///   missing bloom data counts as not fitting (upstream `isValid(null)` is false), under
    ///   GroupIndex it is accepted (bitmaps off write none; the PR's decode was not read);
    /// - every entry still alive (`deadTime == 0`) is declared dead at `max(now - 30 s, bornTime)`
    ///   ("we think all consumers are dead when load"); the next heartbeats re-alive them.
    pub fn decode(text: &str, config: FilterManagerConfig, now: u64) -> Result<(Self, bool), String> {
        let mut mgr = Self::from_json_with(text, config)?;
        let lenient = mgr.config.design == IndexDesign::GroupIndex;
        let bloom = mgr.bloom;
        let bloom_changed = mgr.entries().any(|d| match &d.bloom {
            Some(b) => !bloom.is_valid(b),
            None => !lenient,
        });
        if bloom_changed {
            let empty = ConsumerFilterManager::new(mgr.config.clone()).expect("config was valid");
            return Ok((empty, true));
        }
        let dead_at = now.saturating_sub(LOAD_DEAD_OFFSET_MS);
        for m in mgr.by_topic.values_mut() {
            for d in m.values_mut() {
                if d.dead_time == 0 {
                    d.dead_time = dead_at.max(d.born_time);
                }
            }
        }
        mgr.rebuild_group_index();
        Ok((mgr, false))
    }
}
