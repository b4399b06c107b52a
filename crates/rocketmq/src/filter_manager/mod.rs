//! The broker's `ConsumerFilterManager` (`broker/.../filter/ConsumerFilterManager.java`,
//! `ConsumerFilterData.java`; shared/specs/rocketmq.md §9), in the two designs that upstream has had:
//!
//! - [`IndexDesign::TopicScan`] (before apache/rocketmq PR #10714): the only index is
//!   `filterDataByTopic: topic → (group → ConsumerFilterData)`. Every heartbeat (`register(group,
//!   subList)`) ends with `getByGroup(group)`, which walks **every topic and every group entry** to
//!   find the group's entries, an O(topics × groups) scan (issue apache/rocketmq#10713).
//! - [`IndexDesign::GroupIndex`] (after PR #10714): a group-keyed index (`subscriptionFilterData`,
//!   here group → its topics) is kept in sync with the topic-keyed registry and used to find the
//!   group's entries; topics the broker does not have are not registered (topic-existence check);
//!   bloom data is generated only when `enableCalcFilterBitMap` is on. The PR's code was not in the
//!   spec's snapshot: this follows the issue/PR text (spec §9).
//!
//! The per-(topic, group) rules are upstream's `FilterDataMapByTopic.register` in both designs:
//! - new entry → compile (failure ⇒ nothing stored; TopicScan still leaves the topic's map behind,
//!   as upstream creates it before compiling), born now, not dead;
//! - `version <= old` ⇒ ignored, except that an equal version re-alives a dead entry;
//! - newer and changed (expression, type, or bloom data) ⇒ recompiled and **replaced** by a new
//!   entry (new born time); compile failure ⇒ the old entry is **removed**;
//! - newer and unchanged ⇒ version bumped, re-alived if dead (born time kept);
//! - then every entry of the group whose topic is not in the subList (of any type: a topic that
//!   switched from SQL92 to TAG keeps its SQL entry alive) and is alive gets `dead_time = now`.
//!
//! `is_dead()` is upstream's `deadTime >= bornTime`, so with logical time an entry **born at
//! time 0 is dead from the start** (re-aliving sets `dead_time = 0`, which does not help);
//! upstream uses epoch milliseconds and never sees this. Drive the manager with times ≥ 1.
//!
//! Everything is a `VecMap`/`VecSet`: no hash-map iteration decides anything. Time is the
//! caller's logical `u64` milliseconds. Every heartbeat returns a [`RegisterCost`] counting the
//! entries it touched, so the two designs' cost can be shown side by side.

mod persist;
#[cfg(test)]
mod tests;

use mqviz_engine::vec_map::{VecMap, VecSet};
use std::fmt;

use super::bloom::{BloomError, BloomFilter, BloomFilterData};
use super::filterapi::{ExpressionType, SubscriptionData};
use super::sql92::{self, Expression, Sql92Version};

/// `filterDataCleanTimeSpan` default (`BrokerConfig`): 24 hours.
pub const FILTER_DATA_CLEAN_TIME_SPAN_MS: u64 = 24 * 3600 * 1000;

/// On load, live entries are declared dead this long before the load time (`decode`).
pub const LOAD_DEAD_OFFSET_MS: u64 = 30_000;

/// Which registry design the broker runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IndexDesign {
    /// Upstream before PR #10714: topic-keyed registry only; `getByGroup` scans it all.
    #[default]
    TopicScan,
    /// Upstream after PR #10714: plus a group-keyed index kept in sync.
    GroupIndex,
}

impl IndexDesign {
    /// `"topicScan"` / `"groupIndex"` (the scenario / JSON spelling).
    pub fn name(self) -> &'static str {
        match self {
            IndexDesign::TopicScan => "topicScan",
            IndexDesign::GroupIndex => "groupIndex",
        }
    }

    pub fn parse(s: &str) -> Option<IndexDesign> {
        match s {
            "topicScan" => Some(IndexDesign::TopicScan),
            "groupIndex" => Some(IndexDesign::GroupIndex),
            _ => None,
        }
    }
}

/// The broker settings the manager reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterManagerConfig {
    pub design: IndexDesign,
    /// `enableCalcFilterBitMap` (default false). Only read by [`IndexDesign::GroupIndex`]:
    /// TopicScan generates bloom data on every registration regardless, as upstream did.
    pub enable_calc_filter_bitmap: bool,
    /// `maxErrorRateOfBloomFilter` (default 20).
    pub max_error_rate_of_bloom_filter: i32,
    /// `expectConsumerNumUseFilter` (default 32).
    pub expect_consumer_num_use_filter: i32,
    /// `filterDataCleanTimeSpan` (default 24 h).
    pub filter_data_clean_time_span_ms: u64,
    /// The filter module compiling the expressions.
    pub sql92_version: Sql92Version,
}

impl Default for FilterManagerConfig {
    fn default() -> Self {
        FilterManagerConfig {
            design: IndexDesign::TopicScan,
            enable_calc_filter_bitmap: false,
            max_error_rate_of_bloom_filter: 20,
            expect_consumer_num_use_filter: 32,
            filter_data_clean_time_span_ms: FILTER_DATA_CLEAN_TIME_SPAN_MS,
            sql92_version: Sql92Version::V5,
        }
    }
}

impl FilterManagerConfig {
    pub fn with_design(design: IndexDesign) -> Self {
        FilterManagerConfig { design, ..FilterManagerConfig::default() }
    }
}

/// `ConsumerFilterData`: one group's filter on one topic.
#[derive(Clone, Debug)]
pub struct ConsumerFilterData {
    pub group: String,
    pub topic: String,
    pub expression: String,
    pub expression_type: ExpressionType,
    /// `None` only after a restore whose expression no longer compiles (upstream keeps such entries).
    pub compiled: Option<Expression>,
    /// `BloomFilterData` of `group#topic`; `None` under GroupIndex with bitmaps off.
    pub bloom: Option<BloomFilterData>,
    pub client_version: u64,
    pub born_time: u64,
    /// 0 = alive (see [`ConsumerFilterData::is_dead`]).
    pub dead_time: u64,
}

impl PartialEq for ConsumerFilterData {
    /// Field-wise; compiled expressions compare by their source text.
    fn eq(&self, o: &Self) -> bool {
        self.group == o.group
            && self.topic == o.topic
            && self.expression == o.expression
            && self.expression_type == o.expression_type
            && self.compiled.as_ref().map(Expression::source) == o.compiled.as_ref().map(Expression::source)
            && self.bloom == o.bloom
            && self.client_version == o.client_version
            && self.born_time == o.born_time
            && self.dead_time == o.dead_time
    }
}

impl ConsumerFilterData {
    /// Upstream `isDead()`: `deadTime >= bornTime` (so an entry born at time 0 is always dead).
    pub fn is_dead(&self) -> bool {
        self.dead_time >= self.born_time
    }

    /// `howLongAfterDeath()`: `now - deadTime` when dead (may be negative), `None` when alive.
    pub fn how_long_after_death(&self, now: u64) -> Option<i128> {
        self.is_dead().then(|| i128::from(now) - i128::from(self.dead_time))
    }

    /// `isMsgInLive(storeTime)`: the message was stored after this filter was born, so its
    /// bitmap (if computed) includes this group.
    pub fn is_msg_in_live(&self, msg_store_time: u64) -> bool {
        is_msg_in_live(self.born_time, msg_store_time)
    }
}

/// `ConsumerFilterData.isMsgInLive`: a message stored strictly after the filter data was born.
/// Only such a message's bitmap (computed at dispatch) can include the group's bits.
pub fn is_msg_in_live(born_time: u64, msg_store_time: u64) -> bool {
    msg_store_time > born_time
}

/// What one `register(topic, group, …)` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegisterOutcome {
    /// TAG type (or empty type): the manager only keeps expression filters.
    SkippedTag,
    /// Empty expression.
    SkippedEmpty,
    /// GroupIndex only: the broker has no such topic.
    SkippedMissingTopic,
    /// New entry stored.
    Registered,
    /// New entry whose expression did not compile: nothing stored.
    CompileError,
    /// `version <= old` (and not an equal version on a dead entry): nothing changed.
    Ignored,
    /// Equal version on a dead entry: re-alived.
    ReAlived,
    /// Newer version, same expression: version bumped (re-alived if it was dead).
    Bumped,
    /// Newer version, changed expression/type/bloom: recompiled and replaced.
    Replaced,
    /// Newer version, changed, and the new expression did not compile: the old entry was removed.
    RemovedOnCompileError,
}

impl RegisterOutcome {
    pub fn name(self) -> &'static str {
        match self {
            RegisterOutcome::SkippedTag => "skipped-tag",
            RegisterOutcome::SkippedEmpty => "skipped-empty",
            RegisterOutcome::SkippedMissingTopic => "skipped-missing-topic",
            RegisterOutcome::Registered => "registered",
            RegisterOutcome::CompileError => "compile-error",
            RegisterOutcome::Ignored => "ignored",
            RegisterOutcome::ReAlived => "re-alived",
            RegisterOutcome::Bumped => "bumped",
            RegisterOutcome::Replaced => "replaced",
            RegisterOutcome::RemovedOnCompileError => "removed-on-compile-error",
        }
    }

    /// Upstream's boolean return value of `register(topic, …)`.
    pub fn upstream_result(self) -> bool {
        matches!(
            self,
            RegisterOutcome::Registered | RegisterOutcome::ReAlived | RegisterOutcome::Bumped | RegisterOutcome::Replaced
        )
    }
}

/// The work one call did. `entries_touched` is the comparable figure: for TopicScan it includes
/// every entry of every topic visited by `getByGroup`; for GroupIndex only the group's own entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegisterCost {
    /// Subscriptions in the heartbeat.
    pub subscriptions: u64,
    /// Registry entries looked up, created or visited (per-subscription lookups + the group pass).
    pub entries_touched: u64,
    /// Topic maps visited by the group pass (TopicScan: all of them; GroupIndex: the group's topics).
    pub topics_scanned: u64,
    /// Topic-existence checks (GroupIndex).
    pub topic_checks: u64,
    /// `bloom.generate(group#topic)` calls.
    pub bloom_generated: u64,
    /// Expression compilations.
    pub compiled: u64,
    pub registered: u64,
    pub compile_errors: u64,
    pub ignored: u64,
    pub re_alived: u64,
    pub bumped: u64,
    pub replaced: u64,
    pub removed: u64,
    pub marked_dead: u64,
    pub skipped_tag: u64,
    pub skipped_missing_topic: u64,
}

impl RegisterCost {
    fn count(&mut self, o: RegisterOutcome) {
        match o {
            RegisterOutcome::SkippedTag | RegisterOutcome::SkippedEmpty => self.skipped_tag += 1,
            RegisterOutcome::SkippedMissingTopic => self.skipped_missing_topic += 1,
            RegisterOutcome::Registered => self.registered += 1,
            RegisterOutcome::CompileError => self.compile_errors += 1,
            RegisterOutcome::Ignored => self.ignored += 1,
            RegisterOutcome::ReAlived => self.re_alived += 1,
            RegisterOutcome::Bumped => self.bumped += 1,
            RegisterOutcome::Replaced => self.replaced += 1,
            RegisterOutcome::RemovedOnCompileError => {
                self.compile_errors += 1;
                self.removed += 1;
            }
        }
    }
}

impl std::ops::AddAssign for RegisterCost {
    fn add_assign(&mut self, o: RegisterCost) {
        self.subscriptions += o.subscriptions;
        self.entries_touched += o.entries_touched;
        self.topics_scanned += o.topics_scanned;
        self.topic_checks += o.topic_checks;
        self.bloom_generated += o.bloom_generated;
        self.compiled += o.compiled;
        self.registered += o.registered;
        self.compile_errors += o.compile_errors;
        self.ignored += o.ignored;
        self.re_alived += o.re_alived;
        self.bumped += o.bumped;
        self.replaced += o.replaced;
        self.removed += o.removed;
        self.marked_dead += o.marked_dead;
        self.skipped_tag += o.skipped_tag;
        self.skipped_missing_topic += o.skipped_missing_topic;
    }
}

impl fmt::Display for RegisterCost {
    /// One stable line, e.g. `subs=3 touched=1203 topicsScanned=600 registered=1 markedDead=0`
    /// (zero outcome counters are left out).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "subs={} touched={} topicsScanned={}", self.subscriptions, self.entries_touched, self.topics_scanned)?;
        let rest = [
            ("topicChecks", self.topic_checks),
            ("bloom", self.bloom_generated),
            ("compiled", self.compiled),
            ("registered", self.registered),
            ("compileErrors", self.compile_errors),
            ("ignored", self.ignored),
            ("reAlived", self.re_alived),
            ("bumped", self.bumped),
            ("replaced", self.replaced),
            ("removed", self.removed),
            ("markedDead", self.marked_dead),
            ("skippedTag", self.skipped_tag),
            ("skippedMissingTopic", self.skipped_missing_topic),
        ];
        for (k, v) in rest {
            if v != 0 {
                write!(f, " {k}={v}")?;
            }
        }
        Ok(())
    }
}

/// `ExpressionType.isTagType`: null, empty or `TAG`.
fn is_tag_type(t: &ExpressionType) -> bool {
    matches!(t, ExpressionType::Tag) || matches!(t, ExpressionType::Other(s) if s.is_empty() || s == "TAG")
}

/// Group → topic → entry (the group-keyed index).
pub type GroupIndexMap = VecMap<String, VecMap<String, ConsumerFilterData>>;

/// The broker's consumer filter registry.
#[derive(Clone, Debug)]
pub struct ConsumerFilterManager {
    config: FilterManagerConfig,
    bloom: BloomFilter,
    /// `filterDataByTopic`: topic → group → entry. May hold empty topic maps (until `clean`).
    by_topic: VecMap<String, VecMap<String, ConsumerFilterData>>,
    /// GroupIndex only (`subscriptionFilterData`): group → topic → entry, a copy of every entry of
    /// `by_topic` kept in sync on every write (upstream shares the objects between both maps).
    by_group: GroupIndexMap,
}

impl ConsumerFilterManager {
    /// A manager with the broker's bloom filter (`createByFn(maxErrorRate, expectConsumerNum)`).
    pub fn new(config: FilterManagerConfig) -> Result<Self, BloomError> {
        let bloom = BloomFilter::create_by_fn(config.max_error_rate_of_bloom_filter, config.expect_consumer_num_use_filter)?;
        Ok(ConsumerFilterManager { config, bloom, by_topic: VecMap::new(), by_group: VecMap::new() })
    }

    /// Broker defaults with the given design.
    pub fn with_design(design: IndexDesign) -> Self {
        Self::new(FilterManagerConfig::with_design(design)).expect("default bloom parameters are valid")
    }

    pub fn config(&self) -> &FilterManagerConfig {
        &self.config
    }

    pub fn design(&self) -> IndexDesign {
        self.config.design
    }

    pub fn bloom_filter(&self) -> &BloomFilter {
        &self.bloom
    }

    /// The topic-keyed registry (`filterDataByTopic`), including empty topic maps.
    pub fn by_topic(&self) -> &VecMap<String, VecMap<String, ConsumerFilterData>> {
        &self.by_topic
    }

    /// The group-keyed index (empty under TopicScan).
    pub fn group_index(&self) -> &GroupIndexMap {
        &self.by_group
    }

    /// Number of entries (live and dead).
    pub fn entry_count(&self) -> usize {
        self.by_topic.values().map(VecMap::len).sum()
    }

    /// All entries, by topic then group.
    pub fn entries(&self) -> impl Iterator<Item = &ConsumerFilterData> {
        self.by_topic.values().flat_map(VecMap::values)
    }

    /// `get(topic, group)`: dead entries are returned too.
    pub fn get(&self, topic: &str, group: &str) -> Option<&ConsumerFilterData> {
        self.by_topic.get(topic)?.get(group)
    }

    /// `get(topic)`: every group's entry for the topic (what `CommitLogDispatcherCalcBitMap` reads).
    pub fn get_topic(&self, topic: &str) -> Vec<&ConsumerFilterData> {
        self.by_topic.get(topic).map(|m| m.values().collect()).unwrap_or_default()
    }

    /// `getByGroup(group)`, through the design's own path (a full scan under TopicScan), ordered by topic.
    pub fn get_by_group(&self, group: &str) -> Vec<&ConsumerFilterData> {
        match self.config.design {
            IndexDesign::TopicScan => self.by_topic.values().filter_map(|m| m.values().find(|d| d.group == group)).collect(),
            IndexDesign::GroupIndex => self.by_group.get(group).map(|m| m.values().collect()).unwrap_or_default(),
        }
    }

    /// The entry as the design looks it up on the heartbeat path (GroupIndex: through its index).
    fn lookup(&self, topic: &str, group: &str) -> Option<&ConsumerFilterData> {
        match self.config.design {
            IndexDesign::TopicScan => self.get(topic, group),
            IndexDesign::GroupIndex => self.by_group.get(group)?.get(topic),
        }
    }

    /// Applies a write to the entry in both indexes.
    fn modify(&mut self, topic: &str, group: &str, f: impl Fn(&mut ConsumerFilterData)) {
        if let Some(d) = self.by_group.get_mut(group).and_then(|m| m.get_mut(topic)) {
            f(d);
        }
        if let Some(d) = self.by_topic.get_mut(topic).and_then(|m| m.get_mut(group)) {
            f(d);
        }
    }

    /// `register(group, subList)` for one heartbeat at `now`. `topic_exists` is the broker's
    /// `TopicConfigManager` lookup; only GroupIndex consults it.
    pub fn register(
        &mut self,
        group: &str,
        subs: &[SubscriptionData],
        now: u64,
        topic_exists: &dyn Fn(&str) -> bool,
    ) -> RegisterCost {
        let mut cost = RegisterCost { subscriptions: subs.len() as u64, ..RegisterCost::default() };
        for sub in subs {
            let o = self.register_one(
                &sub.topic,
                group,
                &sub.sub_string,
                &sub.expression_type,
                sub.sub_version,
                now,
                topic_exists,
                &mut cost,
            );
            cost.count(o);
        }
        // Make the topics that left the subList dead. (Upstream loops over the subList for every
        // entry; a set gives the same answer without the quadratic cost on long subLists.)
        let sub_set: VecSet<&str> = if subs.len() > 8 { subs.iter().map(|s| s.topic.as_str()).collect() } else { VecSet::new() };
        let in_sub_list =
            |topic: &str| if subs.len() > 8 { sub_set.contains(topic) } else { subs.iter().any(|s| s.topic == topic) };
        match self.config.design {
            IndexDesign::TopicScan => {
                // getByGroup: every topic, every entry.
                for m in self.by_topic.values_mut() {
                    cost.topics_scanned += 1;
                    for d in m.values_mut() {
                        cost.entries_touched += 1;
                        if d.group == group && !in_sub_list(&d.topic) && !d.is_dead() {
                            d.dead_time = now;
                            cost.marked_dead += 1;
                        }
                    }
                }
            }
            IndexDesign::GroupIndex => {
                if let Some(m) = self.by_group.get_mut(group) {
                    for d in m.values_mut() {
                        cost.topics_scanned += 1;
                        cost.entries_touched += 1;
                        if !in_sub_list(&d.topic) && !d.is_dead() {
                            d.dead_time = now;
                            cost.marked_dead += 1;
                            if let Some(t) = self.by_topic.get_mut(&d.topic).and_then(|m| m.get_mut(group)) {
                                t.dead_time = now;
                            }
                        }
                    }
                }
            }
        }
        cost
    }

    /// `register(topic, group, expression, type, clientVersion)` for one subscription.
    #[allow(clippy::too_many_arguments)]
    pub fn register_topic(
        &mut self,
        topic: &str,
        group: &str,
        expression: &str,
        expression_type: &ExpressionType,
        client_version: u64,
        now: u64,
        topic_exists: &dyn Fn(&str) -> bool,
    ) -> (RegisterOutcome, RegisterCost) {
        let mut cost = RegisterCost { subscriptions: 1, ..RegisterCost::default() };
        let o = self.register_one(topic, group, expression, expression_type, client_version, now, topic_exists, &mut cost);
        cost.count(o);
        (o, cost)
    }

    fn compile(&self, expression: &str, t: &ExpressionType, cost: &mut RegisterCost) -> Option<Expression> {
        cost.compiled += 1;
        // FilterFactory knows SQL92 only; any other type has no filter (an NPE upstream, caught).
        if !t.is_sql92() {
            return None;
        }
        sql92::compile(expression, self.config.sql92_version).ok()
    }

    #[allow(clippy::too_many_arguments)]
    fn register_one(
        &mut self,
        topic: &str,
        group: &str,
        expression: &str,
        t: &ExpressionType,
        version: u64,
        now: u64,
        topic_exists: &dyn Fn(&str) -> bool,
        cost: &mut RegisterCost,
    ) -> RegisterOutcome {
        if is_tag_type(t) {
            return RegisterOutcome::SkippedTag;
        }
        if expression.is_empty() {
            return RegisterOutcome::SkippedEmpty;
        }
        let group_index = self.config.design == IndexDesign::GroupIndex;
        if group_index {
            cost.topic_checks += 1;
            if !topic_exists(topic) {
                return RegisterOutcome::SkippedMissingTopic;
            }
        }
        cost.entries_touched += 1;
        let bloom = if !group_index || self.config.enable_calc_filter_bitmap {
            cost.bloom_generated += 1;
            Some(self.bloom.generate(&format!("{group}#{topic}")))
        } else {
            None
        };
        // TopicScan creates the topic's map up front (putIfAbsent), even if nothing gets stored.
        if !group_index && !self.by_topic.contains_key(topic) {
            self.by_topic.insert(topic.to_string(), VecMap::new());
        }
        let Some(old) = self.lookup(topic, group) else {
            let Some(compiled) = self.compile(expression, t, cost) else {
                return RegisterOutcome::CompileError;
            };
            self.insert(build(topic, group, expression, t, compiled, bloom, version, now));
            return RegisterOutcome::Registered;
        };
        if version <= old.client_version {
            if version == old.client_version && old.is_dead() {
                self.modify(topic, group, |d| d.dead_time = 0);
                return RegisterOutcome::ReAlived;
            }
            return RegisterOutcome::Ignored;
        }
        let changed = old.expression != expression
            || old.expression_type != *t
            || (old.bloom.is_none() && bloom.is_some())
            || (old.bloom.is_some() && old.bloom != bloom);
        if changed {
            match self.compile(expression, t, cost) {
                None => {
                    // "new expression compile error, remove old, let client report error."
                    self.remove(topic, group);
                    RegisterOutcome::RemovedOnCompileError
                }
                Some(compiled) => {
                    self.insert(build(topic, group, expression, t, compiled, bloom, version, now));
                    RegisterOutcome::Replaced
                }
            }
        } else {
            self.modify(topic, group, |d| {
                d.client_version = version;
                if d.is_dead() {
                    d.dead_time = 0;
                }
            });
            RegisterOutcome::Bumped
        }
    }

    /// Stores (or replaces) an entry in both indexes. GroupIndex writes its own index first.
    fn insert(&mut self, d: ConsumerFilterData) {
        if self.config.design == IndexDesign::GroupIndex {
            self.by_group.entry(d.group.clone()).or_default().insert(d.topic.clone(), d.clone());
        }
        self.by_topic.entry(d.topic.clone()).or_default().insert(d.group.clone(), d);
    }

    /// Removes an entry from both indexes (the topic's map stays, possibly empty, until `clean`).
    fn remove(&mut self, topic: &str, group: &str) {
        if let Some(m) = self.by_topic.get_mut(topic) {
            m.remove(group);
        }
        if let Some(m) = self.by_group.get_mut(group) {
            m.remove(topic);
            if m.is_empty() {
                self.by_group.remove(group);
            }
        }
    }

    /// `unRegister(group)` (UNREGISTER: the group's last channel left): every alive entry of the
    /// group gets `dead_time = now`. TopicScan visits every topic; GroupIndex the group's topics.
    pub fn unregister(&mut self, group: &str, now: u64) -> RegisterCost {
        let mut cost = RegisterCost::default();
        match self.config.design {
            IndexDesign::TopicScan => {
                for m in self.by_topic.values_mut() {
                    cost.topics_scanned += 1;
                    cost.entries_touched += 1;
                    if let Some(d) = m.get_mut(group).filter(|d| !d.is_dead()) {
                        d.dead_time = now;
                        cost.marked_dead += 1;
                    }
                }
            }
            IndexDesign::GroupIndex => {
                if let Some(m) = self.by_group.get_mut(group) {
                    for d in m.values_mut() {
                        cost.topics_scanned += 1;
                        cost.entries_touched += 1;
                        if !d.is_dead() {
                            d.dead_time = now;
                            cost.marked_dead += 1;
                            if let Some(t) = self.by_topic.get_mut(&d.topic).and_then(|m| m.get_mut(group)) {
                                t.dead_time = now;
                            }
                        }
                    }
                }
            }
        }
        cost
    }

    /// `clean()`: removes entries dead for at least `filterDataCleanTimeSpan` (upstream compares
    /// `howLongAfterDeath() >= span`), then topic maps left empty. Returns the entries removed.
    pub fn clean(&mut self, now: u64) -> usize {
        let span = i128::from(self.config.filter_data_clean_time_span_ms);
        let mut removed: Vec<(String, String)> = Vec::new();
        self.by_topic.retain(|topic, m| {
            m.retain(|group, d| {
                let expired = d.how_long_after_death(now).is_some_and(|age| age >= span);
                if expired {
                    removed.push((topic.clone(), group.clone()));
                }
                !expired
            });
            !m.is_empty()
        });
        for (topic, group) in &removed {
            if let Some(m) = self.by_group.get_mut(group) {
                m.remove(topic);
                if m.is_empty() {
                    self.by_group.remove(group);
                }
            }
        }
        removed.len()
    }

    /// Checks that the group index (GroupIndex) holds exactly the registry's entries, and that
    /// every entry sits under its own topic and group. TopicScan must have no group index.
    pub fn check_index(&self) -> Result<(), String> {
        for (topic, m) in &self.by_topic {
            for (group, d) in m {
                if &d.topic != topic || &d.group != group {
                    return Err(format!("entry {}/{} filed under {topic}/{group}", d.topic, d.group));
                }
            }
        }
        let expect = match self.config.design {
            IndexDesign::TopicScan => GroupIndexMap::new(),
            IndexDesign::GroupIndex => self.derived_group_index(),
        };
        if expect == self.by_group {
            return Ok(());
        }
        let flat = |idx: &GroupIndexMap| -> Vec<(String, String, ConsumerFilterData)> {
            idx.iter().flat_map(|(g, m)| m.iter().map(|(t, d)| (g.clone(), t.clone(), d.clone()))).collect()
        };
        let (have, want) = (flat(&self.by_group), flat(&expect));
        let i = have.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(have.len().min(want.len()));
        Err(format!(
            "group index differs from the registry at #{i}: index has {:?}, registry has {:?}",
            have.get(i).map(|(g, t, d)| (g, t, d.dead_time, d.client_version)),
            want.get(i).map(|(g, t, d)| (g, t, d.dead_time, d.client_version)),
        ))
    }

    fn derived_group_index(&self) -> GroupIndexMap {
        let mut idx = GroupIndexMap::new();
        for d in self.entries() {
            idx.entry(d.group.clone()).or_default().insert(d.topic.clone(), d.clone());
        }
        idx
    }

    /// Rebuilds the group index from the registry (after a load).
    fn rebuild_group_index(&mut self) {
        self.by_group = match self.config.design {
            IndexDesign::TopicScan => GroupIndexMap::new(),
            IndexDesign::GroupIndex => self.derived_group_index(),
        };
    }
}

/// `ConsumerFilterManager.build` (plus the bloom data the caller sets right after).
#[allow(clippy::too_many_arguments)]
fn build(
    topic: &str,
    group: &str,
    expression: &str,
    t: &ExpressionType,
    compiled: Expression,
    bloom: Option<BloomFilterData>,
    version: u64,
    now: u64,
) -> ConsumerFilterData {
    ConsumerFilterData {
        group: group.to_string(),
        topic: topic.to_string(),
        expression: expression.to_string(),
        expression_type: t.clone(),
        compiled: Some(compiled),
        bloom,
        client_version: version,
        born_time: now,
        dead_time: 0,
    }
}
