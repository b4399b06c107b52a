//! A partition's fetch state machine and position (shared/specs/kafka.md §4; seed 003):
//! `SubscriptionState.FetchStates`, `FetchPosition`, the reset strategies and
//! `TopicPartitionState.transitionState`, where a transition outside `validTransitions` is
//! silently ignored and a state that needs no position discards it (checklist §8 item 10).

use std::fmt;

/// `FetchStates`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FetchState {
    Initializing,
    Fetching,
    AwaitReset,
    AwaitValidation,
}

impl FetchState {
    pub fn name(self) -> &'static str {
        match self {
            FetchState::Initializing => "INITIALIZING",
            FetchState::Fetching => "FETCHING",
            FetchState::AwaitReset => "AWAIT_RESET",
            FetchState::AwaitValidation => "AWAIT_VALIDATION",
        }
    }

    pub fn from_name(name: &str) -> Option<FetchState> {
        [FetchState::Initializing, FetchState::Fetching, FetchState::AwaitReset, FetchState::AwaitValidation]
            .into_iter()
            .find(|s| s.name() == name)
    }

    pub fn can_transition_to(self, next: FetchState) -> bool {
        match self {
            FetchState::AwaitReset => matches!(next, FetchState::Fetching | FetchState::AwaitReset),
            FetchState::Initializing | FetchState::Fetching | FetchState::AwaitValidation => next != FetchState::Initializing,
        }
    }

    pub fn requires_position(self) -> bool {
        matches!(self, FetchState::Fetching | FetchState::AwaitValidation)
    }

    pub fn has_valid_position(self) -> bool {
        self == FetchState::Fetching
    }
}

/// `auto.offset.reset` / `OffsetResetStrategy`; `ByDuration` is the 4.0 KIP-1106 form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OffsetResetStrategy {
    Latest,
    Earliest,
    None,
    /// Reset to the offset of `now - millis`.
    ByDuration {
        millis: i64,
    },
}

impl OffsetResetStrategy {
    /// The config value: `latest`, `earliest`, `none`, or `by_duration:<ISO-8601 duration>`.
    pub fn parse(value: &str) -> Result<OffsetResetStrategy, String> {
        let lower = value.to_ascii_lowercase();
        match lower.as_str() {
            "latest" => Ok(OffsetResetStrategy::Latest),
            "earliest" => Ok(OffsetResetStrategy::Earliest),
            "none" => Ok(OffsetResetStrategy::None),
            _ => match lower.strip_prefix("by_duration:") {
                Some(_) => {
                    let millis = parse_iso_duration_millis(&value["by_duration:".len()..])
                        .ok_or_else(|| format!("ConfigException: Invalid value {value} for configuration auto.offset.reset"))?;
                    if millis < 0 {
                        return Err(format!(
                            "ConfigException: Invalid value {value} for configuration auto.offset.reset: negative duration"
                        ));
                    }
                    Ok(OffsetResetStrategy::ByDuration { millis })
                }
                None => Err(format!("ConfigException: Invalid value {value} for configuration auto.offset.reset")),
            },
        }
    }

    /// The enum constant's name (`LATEST`, `EARLIEST`, `NONE`, `BY_DURATION`).
    pub fn name(self) -> &'static str {
        match self {
            OffsetResetStrategy::Latest => "LATEST",
            OffsetResetStrategy::Earliest => "EARLIEST",
            OffsetResetStrategy::None => "NONE",
            OffsetResetStrategy::ByDuration { .. } => "BY_DURATION",
        }
    }
}

/// `java.time.Duration.parse` for `PnDTnHnMn.nS` (optionally signed), in milliseconds.
fn parse_iso_duration_millis(text: &str) -> Option<i64> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let rest = rest.strip_prefix(['P', 'p'])?;
    let (days, time) = match rest.find(['T', 't']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mut millis: i64 = 0;
    let mut any = false;
    if !days.is_empty() {
        let n: i64 = days.strip_suffix(['D', 'd'])?.parse().ok()?;
        millis = millis.checked_add(n.checked_mul(86_400_000)?)?;
        any = true;
    }
    if let Some(mut time) = time {
        if time.is_empty() {
            return None;
        }
        for (unit, scale) in [(['H', 'h'], 3_600_000i64), (['M', 'm'], 60_000)] {
            if let Some(i) = time.find(unit) {
                let n: i64 = time[..i].parse().ok()?;
                millis = millis.checked_add(n.checked_mul(scale)?)?;
                time = &time[i + 1..];
                any = true;
            }
        }
        if !time.is_empty() {
            let seconds: f64 = time.strip_suffix(['S', 's'])?.parse().ok()?;
            millis = millis.checked_add((seconds * 1000.0).round() as i64)?;
            any = true;
        }
    }
    any.then_some(if negative { -millis } else { millis })
}

/// `Metadata.LeaderAndEpoch`: the partition leader as the client's metadata last saw it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LeaderAndEpoch {
    pub leader: Option<i32>,
    pub epoch: Option<i32>,
}

impl LeaderAndEpoch {
    pub fn unknown() -> LeaderAndEpoch {
        LeaderAndEpoch::default()
    }
}

/// `SubscriptionState.FetchPosition`: the next offset to fetch, the epoch of the record before it,
/// and the leader it was validated against. Equality compares all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FetchPosition {
    pub offset: i64,
    pub offset_epoch: Option<i32>,
    pub current_leader: LeaderAndEpoch,
}

impl FetchPosition {
    /// `new FetchPosition(offset)`: no epochs, no leader.
    pub fn at(offset: i64) -> FetchPosition {
        FetchPosition { offset, offset_epoch: None, current_leader: LeaderAndEpoch::unknown() }
    }
}

/// `TopicPartitionState`: one assigned partition's fetch state and offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicPartitionState {
    pub fetch_state: FetchState,
    pub position: Option<FetchPosition>,
    pub high_watermark: Option<i64>,
    pub log_start_offset: Option<i64>,
    pub last_stable_offset: Option<i64>,
    pub paused: bool,
    pub pending_revocation: bool,
    pub pending_on_assigned_callback: bool,
    pub reset_strategy: Option<OffsetResetStrategy>,
    pub next_retry_time_ms: Option<i64>,
}

impl Default for TopicPartitionState {
    fn default() -> Self {
        TopicPartitionState {
            fetch_state: FetchState::Initializing,
            position: None,
            high_watermark: None,
            log_start_offset: None,
            last_stable_offset: None,
            paused: false,
            pending_revocation: false,
            pending_on_assigned_callback: false,
            reset_strategy: None,
            next_retry_time_ms: None,
        }
    }
}

/// A state left with a null position although it requires one (an upstream `IllegalStateException`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingPosition(pub FetchState);

impl fmt::Display for MissingPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IllegalStateException: Transitioned subscription state to {}, but position is null", self.0.name())
    }
}

impl TopicPartitionState {
    /// `transitionState`: ignored unless allowed; then `update` runs and the position is
    /// dropped if the new state does not use one.
    fn transition(&mut self, next: FetchState, update: impl FnOnce(&mut Self)) -> Result<(), MissingPosition> {
        if !self.fetch_state.can_transition_to(next) {
            return Ok(());
        }
        self.fetch_state = next;
        update(self);
        if self.position.is_none() && next.requires_position() {
            return Err(MissingPosition(next));
        }
        if !next.requires_position() {
            self.position = None;
        }
        Ok(())
    }

    pub fn has_valid_position(&self) -> bool {
        self.fetch_state.has_valid_position()
    }

    pub fn is_fetchable(&self) -> bool {
        !self.paused && !self.pending_revocation && !self.pending_on_assigned_callback && self.has_valid_position()
    }

    pub fn awaiting_reset(&self) -> bool {
        self.fetch_state == FetchState::AwaitReset
    }

    pub fn awaiting_validation(&self) -> bool {
        self.fetch_state == FetchState::AwaitValidation
    }

    pub fn awaiting_retry_backoff(&self, now_ms: i64) -> bool {
        self.next_retry_time_ms.is_some_and(|t| now_ms < t)
    }

    pub(super) fn reset(&mut self, strategy: OffsetResetStrategy) -> Result<(), MissingPosition> {
        self.transition(FetchState::AwaitReset, |s| {
            s.reset_strategy = Some(strategy);
            s.next_retry_time_ms = None;
        })
    }

    pub(super) fn seek_validated(&mut self, position: FetchPosition) -> Result<(), MissingPosition> {
        self.transition(FetchState::Fetching, |s| {
            s.position = Some(position);
            s.reset_strategy = None;
            s.next_retry_time_ms = None;
        })
    }

    /// `validatePosition`: validation is needed only with an offset epoch and a known leader epoch.
    pub(super) fn validate_position(&mut self, position: FetchPosition) -> Result<(), MissingPosition> {
        let next = if position.offset_epoch.is_some() && position.current_leader.epoch.is_some() {
            FetchState::AwaitValidation
        } else {
            FetchState::Fetching
        };
        self.transition(next, |s| {
            s.position = Some(position);
            s.next_retry_time_ms = None;
        })
    }

    pub(super) fn seek_unvalidated(&mut self, position: FetchPosition) -> Result<(), MissingPosition> {
        self.seek_validated(position)?;
        self.validate_position(position)
    }

    pub(super) fn complete_validation(&mut self) -> Result<(), MissingPosition> {
        if self.position.is_some() {
            self.transition(FetchState::Fetching, |s| s.next_retry_time_ms = None)?;
        }
        Ok(())
    }

    /// `maybeValidatePosition`: a leader change (to a known leader) starts validation; returns
    /// whether the partition now awaits validation.
    pub(super) fn maybe_validate_position(&mut self, leader: LeaderAndEpoch) -> Result<bool, MissingPosition> {
        if self.fetch_state == FetchState::AwaitReset || leader.leader.is_none() {
            return Ok(false);
        }
        if let Some(position) = self.position {
            if position.current_leader != leader {
                self.validate_position(FetchPosition { current_leader: leader, ..position })?;
            }
        }
        Ok(self.awaiting_validation())
    }

    /// `updatePositionLeaderNoValidation`: a broker too old for OffsetsForLeaderEpoch.
    pub(super) fn update_leader_without_validation(&mut self, leader: LeaderAndEpoch) -> Result<(), MissingPosition> {
        if let Some(position) = self.position {
            self.transition(FetchState::Fetching, |s| {
                s.position = Some(FetchPosition { current_leader: leader, ..position });
                s.next_retry_time_ms = None;
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_table() {
        use FetchState::*;
        assert!(Initializing.can_transition_to(AwaitValidation));
        assert!(!AwaitReset.can_transition_to(AwaitValidation));
        assert!(!Fetching.can_transition_to(Initializing));
        assert!(AwaitValidation.requires_position() && !AwaitValidation.has_valid_position());
    }

    #[test]
    fn ignored_transition_keeps_state() {
        let mut s = TopicPartitionState { fetch_state: FetchState::AwaitReset, ..Default::default() };
        let pos = FetchPosition {
            offset: 3,
            offset_epoch: Some(1),
            current_leader: LeaderAndEpoch { leader: Some(1), epoch: Some(2) },
        };
        s.validate_position(pos).unwrap();
        assert_eq!((s.fetch_state, s.position), (FetchState::AwaitReset, None));
    }

    #[test]
    fn reset_strategy_values() {
        assert_eq!(OffsetResetStrategy::parse("EARLIEST"), Ok(OffsetResetStrategy::Earliest));
        assert_eq!(OffsetResetStrategy::parse("by_duration:PT1H30M"), Ok(OffsetResetStrategy::ByDuration { millis: 5_400_000 }));
        assert_eq!(
            OffsetResetStrategy::parse("by_duration:P1DT0.5S"),
            Ok(OffsetResetStrategy::ByDuration { millis: 86_400_500 })
        );
        assert!(OffsetResetStrategy::parse("by_duration").is_err());
        assert!(OffsetResetStrategy::parse("by_duration:-PT1S").is_err());
        assert!(OffsetResetStrategy::parse("by_duration:PT").is_err());
    }
}
