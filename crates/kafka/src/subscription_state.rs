//! The consumer's `SubscriptionState` (shared/specs/kafka.md §4; seed 003): subscription type
//! (topics, pattern and manual assignment are mutually exclusive until `unsubscribe`), the
//! assigned partitions with their fetch states, positions, validation, resets, pause and
//! pending revocation, and lag. Plain `Clone` data that a consumer simulation owns.

use mqviz_engine::sort::CollectSorted;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

pub use super::assignor::TopicPartition;
use super::fetch_state::MissingPosition;
pub use super::fetch_state::{FetchPosition, FetchState, LeaderAndEpoch, OffsetResetStrategy, TopicPartitionState};
use super::java_order::{iteration_order, java_string_hash, topic_partition_hash, TableInit};

const MUTUALLY_EXCLUSIVE: &str = "Subscription to topics, partitions and pattern are mutually exclusive";

/// `SubscriptionState.SubscriptionType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubscriptionType {
    None,
    AutoTopics,
    AutoPattern,
    UserAssigned,
    AutoTopicsShare,
}

impl SubscriptionType {
    pub fn name(self) -> &'static str {
        match self {
            SubscriptionType::None => "NONE",
            SubscriptionType::AutoTopics => "AUTO_TOPICS",
            SubscriptionType::AutoPattern => "AUTO_PATTERN",
            SubscriptionType::UserAssigned => "USER_ASSIGNED",
            SubscriptionType::AutoTopicsShare => "AUTO_TOPICS_SHARE",
        }
    }

    pub fn from_name(name: &str) -> Option<SubscriptionType> {
        [
            SubscriptionType::None,
            SubscriptionType::AutoTopics,
            SubscriptionType::AutoPattern,
            SubscriptionType::UserAssigned,
            SubscriptionType::AutoTopicsShare,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }
}

/// `read_uncommitted` (lag against the high watermark) or `read_committed` (against the LSO).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IsolationLevel {
    ReadUncommitted,
    ReadCommitted,
}

/// What `SubscriptionState` throws. `Display` gives `"<Java class>: <message>"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubscriptionError {
    IllegalState(String),
    IllegalArgument(String),
    /// `resetInitializingPositions` with `auto.offset.reset=none`.
    NoOffsetForPartition(Vec<TopicPartition>),
    /// A state built with AWAIT_VALIDATION but no position, compared during validation.
    NullPointer(String),
}

impl fmt::Display for SubscriptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubscriptionError::IllegalState(m) => write!(f, "IllegalStateException: {m}"),
            SubscriptionError::IllegalArgument(m) => write!(f, "IllegalArgumentException: {m}"),
            SubscriptionError::NullPointer(m) => write!(f, "NullPointerException: {m}"),
            SubscriptionError::NoOffsetForPartition(tps) => {
                let names: Vec<String> = tps.iter().map(|tp| format!("{}-{}", tp.topic, tp.partition)).collect();
                write!(
                    f,
                    "NoOffsetForPartitionException: Undefined offset with no reset policy for partitions: [{}]",
                    names.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for SubscriptionError {}

impl From<MissingPosition> for SubscriptionError {
    fn from(e: MissingPosition) -> Self {
        SubscriptionError::IllegalState(format!("Transitioned subscription state to {}, but position is null", e.0.name()))
    }
}

/// `LogTruncation`: validation found the log truncated below the position and no reset policy
/// applies; the consumer throws `LogTruncationException` on its next poll.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogTruncation {
    pub partition: TopicPartition,
    pub fetch_position: FetchPosition,
    /// First offset known to diverge and its epoch, when the broker knew it.
    pub divergent: Option<(i64, i32)>,
}

/// `SubscriptionState`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionState {
    subscription_type: SubscriptionType,
    pattern: Option<String>,
    subscription: BTreeSet<String>,
    group_subscription: BTreeSet<String>,
    /// `PartitionStates`: insertion-ordered (that order is the fetch order).
    order: Vec<TopicPartition>,
    states: BTreeMap<TopicPartition, TopicPartitionState>,
    default_reset: OffsetResetStrategy,
    assignment_id: u64,
}

fn not_assigned(tp: &TopicPartition) -> SubscriptionError {
    SubscriptionError::IllegalState(format!("No current assignment for partition {}-{}", tp.topic, tp.partition))
}

impl SubscriptionState {
    pub fn new(default_reset: OffsetResetStrategy) -> SubscriptionState {
        SubscriptionState {
            subscription_type: SubscriptionType::None,
            pattern: None,
            subscription: BTreeSet::new(),
            group_subscription: BTreeSet::new(),
            order: Vec::new(),
            states: BTreeMap::new(),
            default_reset,
            assignment_id: 0,
        }
    }

    /// Builds a state directly (what a restored consumer or a test fixture holds).
    pub fn from_parts(
        default_reset: OffsetResetStrategy,
        subscription_type: SubscriptionType,
        subscription: BTreeSet<String>,
        partitions: Vec<(TopicPartition, TopicPartitionState)>,
    ) -> SubscriptionState {
        let mut s = SubscriptionState::new(default_reset);
        s.subscription_type = subscription_type;
        s.subscription = subscription;
        for (tp, state) in partitions {
            if s.states.insert(tp.clone(), state).is_none() {
                s.order.push(tp);
            }
        }
        s
    }

    pub fn default_reset_strategy(&self) -> OffsetResetStrategy {
        self.default_reset
    }

    pub fn subscription_type(&self) -> SubscriptionType {
        self.subscription_type
    }

    pub fn assignment_id(&self) -> u64 {
        self.assignment_id
    }

    fn set_subscription_type(&mut self, t: SubscriptionType) -> Result<(), SubscriptionError> {
        if self.subscription_type == SubscriptionType::None {
            self.subscription_type = t;
        } else if self.subscription_type != t {
            return Err(SubscriptionError::IllegalState(MUTUALLY_EXCLUSIVE.into()));
        }
        Ok(())
    }

    fn change_subscription(&mut self, topics: BTreeSet<String>) -> bool {
        if self.subscription == topics {
            return false;
        }
        self.subscription = topics;
        true
    }

    /// `subscribe(topics)`: returns whether the subscription changed.
    pub fn subscribe(&mut self, topics: impl IntoIterator<Item = String>) -> Result<bool, SubscriptionError> {
        self.set_subscription_type(SubscriptionType::AutoTopics)?;
        Ok(self.change_subscription(topics.into_iter().collect()))
    }

    /// `subscribe(Pattern)`; the topics matching it arrive through [`Self::subscribe_from_pattern`].
    pub fn subscribe_pattern(&mut self, pattern: impl Into<String>) -> Result<(), SubscriptionError> {
        self.set_subscription_type(SubscriptionType::AutoPattern)?;
        self.pattern = Some(pattern.into());
        Ok(())
    }

    pub fn subscribe_from_pattern(&mut self, topics: impl IntoIterator<Item = String>) -> Result<bool, SubscriptionError> {
        if self.subscription_type != SubscriptionType::AutoPattern {
            return Err(SubscriptionError::IllegalArgument(format!(
                "Attempt to subscribe from pattern while subscription type set to {}",
                self.subscription_type.name()
            )));
        }
        Ok(self.change_subscription(topics.into_iter().collect()))
    }

    pub fn pattern(&self) -> Option<&str> {
        self.pattern.as_deref()
    }

    /// `groupSubscribe` (leader only): the union of the group's subscriptions; returns whether it
    /// has topics this member does not subscribe to.
    pub fn group_subscribe(&mut self, topics: impl IntoIterator<Item = String>) -> Result<bool, SubscriptionError> {
        if !self.has_auto_assigned_partitions() {
            return Err(SubscriptionError::IllegalState(MUTUALLY_EXCLUSIVE.into()));
        }
        self.group_subscription = topics.into_iter().collect();
        Ok(!self.group_subscription.is_subset(&self.subscription))
    }

    pub fn has_auto_assigned_partitions(&self) -> bool {
        matches!(
            self.subscription_type,
            SubscriptionType::AutoTopics | SubscriptionType::AutoPattern | SubscriptionType::AutoTopicsShare
        )
    }

    /// `subscription()`: empty unless partitions are auto-assigned.
    pub fn subscription(&self) -> BTreeSet<String> {
        if self.has_auto_assigned_partitions() {
            self.subscription.clone()
        } else {
            BTreeSet::new()
        }
    }

    /// Replaces the assignment, keeping the state of partitions that stay and ordering them as
    /// `PartitionStates.set` does: the `HashMap` iteration order, grouped by topic.
    fn set_assignment(&mut self, partitions: &[TopicPartition], init: TableInit) {
        let mut distinct: Vec<&TopicPartition> = Vec::with_capacity(partitions.len());
        let mut seen = BTreeSet::new();
        for tp in partitions {
            if seen.insert(tp) {
                distinct.push(tp);
            }
        }
        let hashes: Vec<i32> =
            distinct.iter().map(|tp| topic_partition_hash(java_string_hash(&tp.topic), tp.partition)).collect();
        let mut by_topic: Vec<(&str, Vec<&TopicPartition>)> = Vec::new();
        for i in iteration_order(&hashes, init) {
            let tp = distinct[i];
            match by_topic.iter_mut().find(|(t, _)| *t == tp.topic) {
                Some((_, list)) => list.push(tp),
                None => by_topic.push((&tp.topic, vec![tp])),
            }
        }
        let mut states = BTreeMap::new();
        let mut order = Vec::with_capacity(distinct.len());
        for tp in by_topic.into_iter().flat_map(|(_, list)| list) {
            states.insert(tp.clone(), self.states.remove(tp).unwrap_or_default());
            order.push(tp.clone());
        }
        self.states = states;
        self.order = order;
    }

    /// `assignFromUser`: returns whether the subscription (the assigned topics) changed.
    pub fn assign_from_user(&mut self, partitions: &[TopicPartition]) -> Result<bool, SubscriptionError> {
        self.set_subscription_type(SubscriptionType::UserAssigned)?;
        let wanted: BTreeSet<&TopicPartition> = partitions.iter().collect_set();
        if wanted == self.states.keys().collect() {
            return Ok(false);
        }
        self.assignment_id += 1;
        self.set_assignment(partitions, TableInit::Default);
        Ok(self.change_subscription(partitions.iter().map(|tp| tp.topic.clone()).collect()))
    }

    /// `assignFromSubscribed`: the group's assignment. Does not check that the topics are
    /// subscribed (the coordinator checks and rejoins first).
    pub fn assign_from_subscribed(&mut self, partitions: &[TopicPartition]) -> Result<(), SubscriptionError> {
        if !self.has_auto_assigned_partitions() {
            return Err(SubscriptionError::IllegalArgument(
                "Attempt to dynamically assign partitions while manual assignment in use".into(),
            ));
        }
        self.set_assignment(partitions, TableInit::WithCapacity(partitions.len()));
        self.assignment_id += 1;
        Ok(())
    }

    /// `assignFromSubscribedAwaitingCallback`: `added` stay unfetchable until
    /// [`Self::enable_partitions_awaiting_callback`] (after `onPartitionsAssigned`).
    pub fn assign_from_subscribed_awaiting_callback(
        &mut self,
        partitions: &[TopicPartition],
        added: &[TopicPartition],
    ) -> Result<(), SubscriptionError> {
        self.assign_from_subscribed(partitions)?;
        for tp in added {
            self.state_mut(tp)?.pending_on_assigned_callback = true;
        }
        Ok(())
    }

    pub fn enable_partitions_awaiting_callback(&mut self, partitions: &[TopicPartition]) -> Result<(), SubscriptionError> {
        for tp in partitions {
            self.state_mut(tp)?.pending_on_assigned_callback = false;
        }
        Ok(())
    }

    /// Whether the assignment only has subscribed topics (`checkAssignmentMatchedSubscription`,
    /// topic subscriptions only; a pattern needs a regex engine the caller provides).
    pub fn assignment_matches_subscription(&self, partitions: &[TopicPartition]) -> bool {
        partitions.iter().all(|tp| self.subscription.contains(&tp.topic))
    }

    pub fn unsubscribe(&mut self) {
        self.subscription.clear();
        self.group_subscription.clear();
        self.states.clear();
        self.order.clear();
        self.pattern = None;
        self.subscription_type = SubscriptionType::None;
        self.assignment_id += 1;
    }

    /// Assigned partitions in fetch order.
    pub fn assigned_partitions(&self) -> &[TopicPartition] {
        &self.order
    }

    pub fn is_assigned(&self, tp: &TopicPartition) -> bool {
        self.states.contains_key(tp)
    }

    pub fn state(&self, tp: &TopicPartition) -> Option<&TopicPartitionState> {
        self.states.get(tp)
    }

    fn state_mut(&mut self, tp: &TopicPartition) -> Result<&mut TopicPartitionState, SubscriptionError> {
        self.states.get_mut(tp).ok_or_else(|| not_assigned(tp))
    }

    fn assigned_state(&self, tp: &TopicPartition) -> Result<&TopicPartitionState, SubscriptionError> {
        self.states.get(tp).ok_or_else(|| not_assigned(tp))
    }

    pub fn fetch_state(&self, tp: &TopicPartition) -> Result<FetchState, SubscriptionError> {
        Ok(self.assigned_state(tp)?.fetch_state)
    }

    /// `seek(tp, offset)`: a position without epochs, FETCHING.
    pub fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), SubscriptionError> {
        self.seek_validated(tp, FetchPosition::at(offset))
    }

    pub fn seek_validated(&mut self, tp: &TopicPartition, position: FetchPosition) -> Result<(), SubscriptionError> {
        Ok(self.state_mut(tp)?.seek_validated(position)?)
    }

    /// `seekUnvalidated`: AWAIT_VALIDATION when the position has an offset epoch and the leader
    /// epoch is known, else FETCHING.
    pub fn seek_unvalidated(&mut self, tp: &TopicPartition, position: FetchPosition) -> Result<(), SubscriptionError> {
        Ok(self.state_mut(tp)?.seek_unvalidated(position)?)
    }

    /// `maybeSeekUnvalidated`: applies a reset result only if the partition still awaits the same
    /// reset.
    pub fn maybe_seek_unvalidated(
        &mut self,
        tp: &TopicPartition,
        position: FetchPosition,
        requested: OffsetResetStrategy,
    ) -> Result<(), SubscriptionError> {
        if let Some(state) = self.states.get_mut(tp) {
            if state.awaiting_reset() && state.reset_strategy == Some(requested) {
                state.seek_unvalidated(position)?;
            }
        }
        Ok(())
    }

    /// `position(tp, position)`: needs a valid current position.
    pub fn set_position(&mut self, tp: &TopicPartition, position: FetchPosition) -> Result<(), SubscriptionError> {
        let state = self.state_mut(tp)?;
        if !state.has_valid_position() {
            return Err(SubscriptionError::IllegalState("Cannot set a new position without a valid current position".into()));
        }
        state.position = Some(position);
        Ok(())
    }

    pub fn position(&self, tp: &TopicPartition) -> Result<Option<FetchPosition>, SubscriptionError> {
        Ok(self.assigned_state(tp)?.position)
    }

    /// `validPosition`: the position only while FETCHING.
    pub fn valid_position(&self, tp: &TopicPartition) -> Result<Option<FetchPosition>, SubscriptionError> {
        let s = self.assigned_state(tp)?;
        Ok(if s.has_valid_position() { s.position } else { None })
    }

    /// `maybeValidatePositionForCurrentLeader` with a broker that supports OffsetsForLeaderEpoch.
    pub fn maybe_validate_position_for_current_leader(
        &mut self,
        tp: &TopicPartition,
        leader: LeaderAndEpoch,
    ) -> Result<bool, SubscriptionError> {
        match self.states.get_mut(tp) {
            None => Ok(false),
            Some(state) => Ok(state.maybe_validate_position(leader)?),
        }
    }

    /// The same for a leader too old for OffsetsForLeaderEpoch: the position takes the new leader
    /// and validation is skipped.
    pub fn update_position_leader_without_validation(
        &mut self,
        tp: &TopicPartition,
        leader: LeaderAndEpoch,
    ) -> Result<(), SubscriptionError> {
        if let Some(state) = self.states.get_mut(tp) {
            state.update_leader_without_validation(leader)?;
        }
        Ok(())
    }

    /// `maybeCompleteValidation` with the OffsetsForLeaderEpoch answer (`end_offset`, `epoch`; -1
    /// when undefined). Truncation below the position resets to the divergence point, or with
    /// `auto.offset.reset=none` is returned as a [`LogTruncation`].
    pub fn maybe_complete_validation(
        &mut self,
        tp: &TopicPartition,
        request_position: FetchPosition,
        end_offset: i64,
        epoch: i32,
    ) -> Result<Option<LogTruncation>, SubscriptionError> {
        let has_reset_policy = self.default_reset != OffsetResetStrategy::None;
        let default_reset = self.default_reset;
        let Some(state) = self.states.get_mut(tp) else { return Ok(None) };
        if !state.awaiting_validation() {
            return Ok(None);
        }
        let Some(current) = state.position else {
            return Err(SubscriptionError::NullPointer("the position awaiting validation is null".into()));
        };
        if current != request_position {
            return Ok(None);
        }
        if end_offset == -1 || epoch == -1 {
            if has_reset_policy {
                state.reset(default_reset)?;
                return Ok(None);
            }
            return Ok(Some(LogTruncation { partition: tp.clone(), fetch_position: request_position, divergent: None }));
        }
        if end_offset < current.offset {
            if has_reset_policy {
                let diverged =
                    FetchPosition { offset: end_offset, offset_epoch: Some(epoch), current_leader: current.current_leader };
                state.seek_validated(diverged)?;
                return Ok(None);
            }
            return Ok(Some(LogTruncation {
                partition: tp.clone(),
                fetch_position: request_position,
                divergent: Some((end_offset, epoch)),
            }));
        }
        state.complete_validation()?;
        Ok(None)
    }

    /// `requestOffsetReset(tp, strategy)`; `None` uses `auto.offset.reset`.
    pub fn request_offset_reset(
        &mut self,
        tp: &TopicPartition,
        strategy: Option<OffsetResetStrategy>,
    ) -> Result<(), SubscriptionError> {
        let strategy = strategy.unwrap_or(self.default_reset);
        Ok(self.state_mut(tp)?.reset(strategy)?)
    }

    pub fn reset_strategy(&self, tp: &TopicPartition) -> Result<Option<OffsetResetStrategy>, SubscriptionError> {
        Ok(self.assigned_state(tp)?.reset_strategy)
    }

    pub fn is_offset_reset_needed(&self, tp: &TopicPartition) -> Result<bool, SubscriptionError> {
        Ok(self.assigned_state(tp)?.awaiting_reset())
    }

    /// `resetInitializingPositions`: every INITIALIZING partition goes to AWAIT_RESET, or all of
    /// them are reported when there is no reset policy.
    pub fn reset_initializing_positions(&mut self) -> Result<(), SubscriptionError> {
        let initializing: Vec<TopicPartition> =
            self.order.iter().filter(|tp| self.states[*tp].fetch_state == FetchState::Initializing).cloned().collect();
        if self.default_reset == OffsetResetStrategy::None {
            if initializing.is_empty() {
                return Ok(());
            }
            return Err(SubscriptionError::NoOffsetForPartition(initializing));
        }
        for tp in &initializing {
            self.request_offset_reset(tp, None)?;
        }
        Ok(())
    }

    fn partitions_where(&self, keep: impl Fn(&TopicPartitionState) -> bool) -> Vec<TopicPartition> {
        self.order.iter().filter(|tp| keep(&self.states[*tp])).cloned().collect()
    }

    pub fn initializing_partitions(&self) -> Vec<TopicPartition> {
        self.partitions_where(|s| s.fetch_state == FetchState::Initializing)
    }

    pub fn partitions_needing_reset(&self, now_ms: i64) -> Vec<TopicPartition> {
        self.partitions_where(|s| s.awaiting_reset() && !s.awaiting_retry_backoff(now_ms))
    }

    pub fn partitions_needing_validation(&self, now_ms: i64) -> Vec<TopicPartition> {
        self.partitions_where(|s| s.awaiting_validation() && !s.awaiting_retry_backoff(now_ms))
    }

    /// `fetchablePartitions`, in fetch order.
    pub fn fetchable_partitions(&self) -> Vec<TopicPartition> {
        let share = self.subscription_type == SubscriptionType::AutoTopicsShare;
        self.partitions_where(|s| share || s.is_fetchable())
    }

    /// `requestFailed`: back off until `next_retry_ms` (partitions no longer assigned are skipped).
    pub fn request_failed(&mut self, partitions: &[TopicPartition], next_retry_ms: i64) {
        for tp in partitions {
            if let Some(s) = self.states.get_mut(tp) {
                s.next_retry_time_ms = Some(next_retry_ms);
            }
        }
    }

    /// `movePartitionToEnd`: fetch rotation after a partition returned data.
    pub fn move_partition_to_end(&mut self, tp: &TopicPartition) {
        if let Some(i) = self.order.iter().position(|x| x == tp) {
            let tp = self.order.remove(i);
            self.order.push(tp);
        }
    }

    pub fn has_valid_position(&self, tp: &TopicPartition) -> bool {
        self.states.get(tp).is_some_and(TopicPartitionState::has_valid_position)
    }

    pub fn has_all_fetch_positions(&self) -> bool {
        self.states.values().all(TopicPartitionState::has_valid_position)
    }

    pub fn is_fetchable(&self, tp: &TopicPartition) -> bool {
        self.states.get(tp).is_some_and(TopicPartitionState::is_fetchable)
    }

    pub fn is_paused(&self, tp: &TopicPartition) -> bool {
        self.states.get(tp).is_some_and(|s| s.paused)
    }

    /// `pause`: the position is kept; fetched data for the partition is dropped.
    pub fn pause(&mut self, tp: &TopicPartition) -> Result<(), SubscriptionError> {
        self.state_mut(tp)?.paused = true;
        Ok(())
    }

    pub fn resume(&mut self, tp: &TopicPartition) -> Result<(), SubscriptionError> {
        self.state_mut(tp)?.paused = false;
        Ok(())
    }

    pub fn mark_pending_revocation(&mut self, partitions: &[TopicPartition]) -> Result<(), SubscriptionError> {
        for tp in partitions {
            self.state_mut(tp)?.pending_revocation = true;
        }
        Ok(())
    }

    pub fn update_high_watermark(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), SubscriptionError> {
        self.state_mut(tp)?.high_watermark = Some(offset);
        Ok(())
    }

    pub fn update_last_stable_offset(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), SubscriptionError> {
        self.state_mut(tp)?.last_stable_offset = Some(offset);
        Ok(())
    }

    pub fn update_log_start_offset(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), SubscriptionError> {
        self.state_mut(tp)?.log_start_offset = Some(offset);
        Ok(())
    }

    /// `partitionLag`: `None` without a position or without the needed end offset.
    pub fn partition_lag(&self, tp: &TopicPartition, isolation: IsolationLevel) -> Result<Option<i64>, SubscriptionError> {
        let s = self.assigned_state(tp)?;
        let Some(position) = s.position else { return Ok(None) };
        let end = match isolation {
            IsolationLevel::ReadCommitted => s.last_stable_offset,
            IsolationLevel::ReadUncommitted => s.high_watermark,
        };
        Ok(end.map(|e| e.wrapping_sub(position.offset)))
    }

    /// `allConsumed`: what auto-commit commits, the position (next offset) and offset epoch of
    /// every partition with a valid position.
    pub fn all_consumed(&self) -> Vec<(TopicPartition, i64, Option<i32>)> {
        self.order
            .iter()
            .filter_map(|tp| {
                let s = &self.states[tp];
                let p = s.position.filter(|_| s.has_valid_position())?;
                Some((tp.clone(), p.offset, p.offset_epoch))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    #[test]
    fn subscription_types_are_exclusive() {
        let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
        s.subscribe(["t".to_string()]).unwrap();
        assert!(matches!(s.assign_from_user(&[tp(0)]), Err(SubscriptionError::IllegalState(_))));
        s.unsubscribe();
        s.assign_from_user(&[tp(0)]).unwrap();
        assert!(s.subscription().is_empty());
        assert!(matches!(s.assign_from_subscribed(&[tp(0)]), Err(SubscriptionError::IllegalArgument(_))));
    }

    #[test]
    fn reassignment_keeps_positions() {
        let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
        s.subscribe(["t".to_string()]).unwrap();
        s.assign_from_subscribed(&[tp(0)]).unwrap();
        s.seek(&tp(0), 9).unwrap();
        s.assign_from_subscribed(&[tp(1), tp(0)]).unwrap();
        assert_eq!(s.position(&tp(0)).unwrap().map(|p| p.offset), Some(9));
        assert_eq!(s.fetch_state(&tp(1)).unwrap(), FetchState::Initializing);
        // Fetch order: HashMap(2) of TopicPartition grows to 4 slots; t-1 hashes to slot 0, t-0 to slot 1.
        assert_eq!(s.assigned_partitions(), &[tp(1), tp(0)]);
    }

    #[test]
    fn truncation_resets_to_divergence_point_or_reports() {
        let leader = LeaderAndEpoch { leader: Some(1), epoch: Some(10) };
        let pos = FetchPosition { offset: 10, offset_epoch: Some(5), current_leader: leader };
        for (reset, expect_truncation) in [(OffsetResetStrategy::Latest, false), (OffsetResetStrategy::None, true)] {
            let mut s = SubscriptionState::new(reset);
            s.assign_from_user(&[tp(0)]).unwrap();
            s.seek_unvalidated(&tp(0), pos).unwrap();
            assert_eq!(s.fetch_state(&tp(0)).unwrap(), FetchState::AwaitValidation);
            let t = s.maybe_complete_validation(&tp(0), pos, 5, 7).unwrap();
            assert_eq!(t.is_some(), expect_truncation);
            if !expect_truncation {
                assert_eq!(s.position(&tp(0)).unwrap().map(|p| (p.offset, p.offset_epoch)), Some((5, Some(7))));
            }
        }
    }

    #[test]
    fn no_reset_policy_reports_initializing_partitions() {
        let mut s = SubscriptionState::new(OffsetResetStrategy::None);
        s.assign_from_user(&[tp(0), tp(1)]).unwrap();
        s.seek(&tp(1), 0).unwrap();
        assert_eq!(s.reset_initializing_positions(), Err(SubscriptionError::NoOffsetForPartition(vec![tp(0)])));
    }
}
