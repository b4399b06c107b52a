//! Consumer settings: Kafka's defaults (`ConsumerConfig.java`, spec §2, §5), a group's values and a
//! consumer's overrides, read and written with the same JSON names.

use serde_json::{json, Map, Value};

use crate::assignor::ClientAssignor;
use crate::fetch_state::OffsetResetStrategy;
use crate::server_assignor::ServerAssignor;
use crate::subscription_state::IsolationLevel;
use mqviz_engine::json_path::{as_str, Errors, Obj};
use mqviz_engine::scenario::MAX_TIME;
use mqviz_engine::Millis;

/// What the simulated application does after processing each batch returned by `poll()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ManualCommit {
    None,
    /// `commitSync()`: the loop waits for the answer.
    Sync,
    /// `commitAsync()`: fire and forget.
    Async,
}

impl ManualCommit {
    pub fn name(self) -> &'static str {
        match self {
            ManualCommit::None => "none",
            ManualCommit::Sync => "sync",
            ManualCommit::Async => "async",
        }
    }
}

/// One consumer's effective settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerConfig {
    /// `partition.assignment.strategy` (classic protocol).
    pub assignors: Vec<ClientAssignor>,
    /// `group.remote.assignor` (consumer protocol); `None` lets the coordinator choose.
    pub remote_assignor: Option<ServerAssignor>,
    pub session_timeout_ms: Millis,
    pub heartbeat_interval_ms: Millis,
    /// Also the rebalance timeout sent in JoinGroup / the KIP-848 heartbeat.
    pub max_poll_interval_ms: Millis,
    pub max_poll_records: u32,
    pub auto_offset_reset: OffsetResetStrategy,
    pub enable_auto_commit: bool,
    pub auto_commit_interval_ms: Millis,
    pub isolation_level: IsolationLevel,
    /// The application's `poll(Duration)` timeout.
    pub poll_timeout_ms: Millis,
    /// Application time spent on each returned record before the next `poll()`.
    pub record_processing_ms: Millis,
    pub manual_commit: ManualCommit,
    pub fetch_max_wait_ms: Millis,
    pub max_partition_fetch_bytes: u32,
    pub metadata_max_age_ms: Millis,
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        ConsumerConfig {
            assignors: super::default_assignors(),
            remote_assignor: None,
            session_timeout_ms: 45_000,
            heartbeat_interval_ms: 3_000,
            max_poll_interval_ms: 300_000,
            max_poll_records: 500,
            auto_offset_reset: OffsetResetStrategy::Latest,
            enable_auto_commit: true,
            auto_commit_interval_ms: 5_000,
            isolation_level: IsolationLevel::ReadUncommitted,
            poll_timeout_ms: 100,
            record_processing_ms: 0,
            manual_commit: ManualCommit::None,
            fetch_max_wait_ms: 500,
            max_partition_fetch_bytes: 1_048_576,
            metadata_max_age_ms: 300_000,
        }
    }
}

/// Settings given explicitly (for a group, or for one consumer on top of its group's).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigOverrides {
    pub assignors: Option<Vec<ClientAssignor>>,
    pub remote_assignor: Option<ServerAssignor>,
    pub session_timeout_ms: Option<Millis>,
    pub heartbeat_interval_ms: Option<Millis>,
    pub max_poll_interval_ms: Option<Millis>,
    pub max_poll_records: Option<u32>,
    pub auto_offset_reset: Option<OffsetResetStrategy>,
    pub enable_auto_commit: Option<bool>,
    pub auto_commit_interval_ms: Option<Millis>,
    pub isolation_level: Option<IsolationLevel>,
    pub poll_timeout_ms: Option<Millis>,
    pub record_processing_ms: Option<Millis>,
    pub manual_commit: Option<ManualCommit>,
    pub fetch_max_wait_ms: Option<Millis>,
    pub max_partition_fetch_bytes: Option<u32>,
    pub metadata_max_age_ms: Option<Millis>,
}

impl ConsumerConfig {
    /// These settings with `o`'s explicit values on top.
    pub fn with(&self, o: &ConfigOverrides) -> ConsumerConfig {
        ConsumerConfig {
            assignors: o.assignors.clone().unwrap_or_else(|| self.assignors.clone()),
            remote_assignor: o.remote_assignor.or(self.remote_assignor),
            session_timeout_ms: o.session_timeout_ms.unwrap_or(self.session_timeout_ms),
            heartbeat_interval_ms: o.heartbeat_interval_ms.unwrap_or(self.heartbeat_interval_ms),
            max_poll_interval_ms: o.max_poll_interval_ms.unwrap_or(self.max_poll_interval_ms),
            max_poll_records: o.max_poll_records.unwrap_or(self.max_poll_records),
            auto_offset_reset: o.auto_offset_reset.unwrap_or(self.auto_offset_reset),
            enable_auto_commit: o.enable_auto_commit.unwrap_or(self.enable_auto_commit),
            auto_commit_interval_ms: o.auto_commit_interval_ms.unwrap_or(self.auto_commit_interval_ms),
            isolation_level: o.isolation_level.unwrap_or(self.isolation_level),
            poll_timeout_ms: o.poll_timeout_ms.unwrap_or(self.poll_timeout_ms),
            record_processing_ms: o.record_processing_ms.unwrap_or(self.record_processing_ms),
            manual_commit: o.manual_commit.unwrap_or(self.manual_commit),
            fetch_max_wait_ms: o.fetch_max_wait_ms.unwrap_or(self.fetch_max_wait_ms),
            max_partition_fetch_bytes: o.max_partition_fetch_bytes.unwrap_or(self.max_partition_fetch_bytes),
            metadata_max_age_ms: o.metadata_max_age_ms.unwrap_or(self.metadata_max_age_ms),
        }
    }
}

/// `auto.offset.reset` as written in a scenario.
pub fn reset_value(s: OffsetResetStrategy) -> String {
    match s {
        OffsetResetStrategy::Latest => "latest".into(),
        OffsetResetStrategy::Earliest => "earliest".into(),
        OffsetResetStrategy::None => "none".into(),
        OffsetResetStrategy::ByDuration { millis } => format!("by_duration:PT{}.{:03}S", millis / 1000, millis % 1000),
    }
}

pub fn isolation_name(l: IsolationLevel) -> &'static str {
    match l {
        IsolationLevel::ReadUncommitted => "read_uncommitted",
        IsolationLevel::ReadCommitted => "read_committed",
    }
}

const MAX_RECORDS: u64 = 1_000_000;
const MAX_FETCH_BYTES: u64 = 1 << 30;

pub(super) fn read_assignors(o: &mut Obj, e: &mut Errors) -> Option<Vec<ClientAssignor>> {
    let path = o.child_path("assignors");
    o.get("assignors")?;
    let items = o.array("assignors", e);
    let mut out = Vec::new();
    for (p, v) in items {
        if let Some(name) = as_str(v, &p, e) {
            match ClientAssignor::from_name(name) {
                Some(a) if out.contains(&a) => e.push(&p, format!("assignor {name:?} is listed twice")),
                Some(a) => out.push(a),
                None => {
                    e.push(&p, format!("unknown assignor {name:?} (expected range, roundrobin, sticky or cooperative-sticky)"))
                }
            }
        }
    }
    if out.is_empty() {
        e.push(&path, "at least one assignor is required");
        return None;
    }
    Some(out)
}

fn read_millis(o: &mut Obj, key: &'static str, lo: u64, e: &mut Errors) -> Option<Millis> {
    o.u64_in(key, lo, MAX_TIME, e)
}

/// Reads every consumer setting present in `o`.
pub(super) fn read_overrides(o: &mut Obj, e: &mut Errors) -> ConfigOverrides {
    let assignors = read_assignors(o, e);
    let remote_assignor = o.str("remoteAssignor", e).and_then(|name| {
        let a = ServerAssignor::from_name(name);
        if a.is_none() {
            e.push(&o.child_path("remoteAssignor"), format!("unknown server assignor {name:?} (expected uniform or range)"));
        }
        a
    });
    let auto_offset_reset = o.str("autoOffsetReset", e).and_then(|v| match OffsetResetStrategy::parse(v) {
        Ok(s) => Some(s),
        Err(m) => {
            e.push(&o.child_path("autoOffsetReset"), format!("{m} (expected latest, earliest, none or by_duration:<ISO-8601>)"));
            None
        }
    });
    let isolation_level = o.str("isolationLevel", e).and_then(|v| match v {
        "read_uncommitted" => Some(IsolationLevel::ReadUncommitted),
        "read_committed" => Some(IsolationLevel::ReadCommitted),
        other => {
            e.push(&o.child_path("isolationLevel"), format!("expected read_uncommitted or read_committed, found {other:?}"));
            None
        }
    });
    let manual_commit = o.str("manualCommit", e).and_then(|v| match v {
        "none" => Some(ManualCommit::None),
        "sync" => Some(ManualCommit::Sync),
        "async" => Some(ManualCommit::Async),
        other => {
            e.push(&o.child_path("manualCommit"), format!("expected none, sync or async, found {other:?}"));
            None
        }
    });
    ConfigOverrides {
        assignors,
        remote_assignor,
        session_timeout_ms: read_millis(o, "sessionTimeoutMs", 1, e),
        heartbeat_interval_ms: read_millis(o, "heartbeatIntervalMs", 1, e),
        max_poll_interval_ms: read_millis(o, "maxPollIntervalMs", 1, e),
        max_poll_records: o.u64_in("maxPollRecords", 1, MAX_RECORDS, e).map(|n| n as u32),
        auto_offset_reset,
        enable_auto_commit: o.bool("enableAutoCommit", e),
        auto_commit_interval_ms: read_millis(o, "autoCommitIntervalMs", 1, e),
        isolation_level,
        poll_timeout_ms: read_millis(o, "pollTimeoutMs", 1, e),
        record_processing_ms: read_millis(o, "recordProcessingMs", 0, e),
        manual_commit,
        fetch_max_wait_ms: read_millis(o, "fetchMaxWaitMs", 0, e),
        max_partition_fetch_bytes: o.u64_in("maxPartitionFetchBytes", 1, MAX_FETCH_BYTES, e).map(|n| n as u32),
        metadata_max_age_ms: read_millis(o, "metadataMaxAgeMs", 1, e),
    }
}

/// Writes the explicit settings into `m` under the names `read_overrides` reads.
pub(super) fn write_overrides(m: &mut Map<String, Value>, o: &ConfigOverrides) {
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(k.to_string(), v);
        }
    };
    put("assignors", o.assignors.as_ref().map(|a| json!(a.iter().map(|x| x.name()).collect::<Vec<_>>())));
    put("remoteAssignor", o.remote_assignor.map(|a| json!(a.name())));
    put("sessionTimeoutMs", o.session_timeout_ms.map(Value::from));
    put("heartbeatIntervalMs", o.heartbeat_interval_ms.map(Value::from));
    put("maxPollIntervalMs", o.max_poll_interval_ms.map(Value::from));
    put("maxPollRecords", o.max_poll_records.map(Value::from));
    put("autoOffsetReset", o.auto_offset_reset.map(|s| json!(reset_value(s))));
    put("enableAutoCommit", o.enable_auto_commit.map(Value::from));
    put("autoCommitIntervalMs", o.auto_commit_interval_ms.map(Value::from));
    put("isolationLevel", o.isolation_level.map(|l| json!(isolation_name(l))));
    put("pollTimeoutMs", o.poll_timeout_ms.map(Value::from));
    put("recordProcessingMs", o.record_processing_ms.map(Value::from));
    put("manualCommit", o.manual_commit.map(|c| json!(c.name())));
    put("fetchMaxWaitMs", o.fetch_max_wait_ms.map(Value::from));
    put("maxPartitionFetchBytes", o.max_partition_fetch_bytes.map(Value::from));
    put("metadataMaxAgeMs", o.metadata_max_age_ms.map(Value::from));
}
