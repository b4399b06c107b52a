//! The broker-neutral picture of a running model: what the canvas, the frame tracker, the plots and
//! the shared panels read. Every model fills the same plain values; nothing here names a broker.
//!
//! Identity: consumers are numbered by their index in `View::consumers` and partitions (queues,
//! partitions, segments) by `PartitionView::id`. Both are stable for the life of a run (models
//! only append), so the tracker can key its series by them.

use std::sync::Arc;

use mqviz_engine::Millis;

/// A message's number within its model (retry or DLQ copies have numbers of their own).
pub type MsgId = u32;
/// The colour key of a message without a tag or key.
pub const NO_KEY: u32 = u32::MAX;
/// Index of a consumer in `View::consumers`.
pub type ConsumerIx = u32;
/// `PartitionView::id`.
pub type PartitionId = u32;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct View {
    /// Colour keys: `labels[k]` is the tag or key that colour key `k` stands for.
    pub labels: Vec<String>,
    pub brokers: Vec<BrokerView>,
    pub topics: Vec<TopicView>,
    pub producers: Vec<ProducerView>,
    pub groups: Vec<GroupView>,
    pub consumers: Vec<ConsumerView>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProducerView {
    pub name: String,
    pub sent: u64,
}

/// One line of state shown inside a box, e.g. a broker's subscription-table entry
/// `TopicTestA ⇐ TagB (ConsumerB, subVersion 5010)` or a group's `Stable, generation 4`.
#[derive(Clone, Debug, PartialEq)]
pub struct StateLine {
    pub text: String,
    /// When this line last changed: the canvas flashes it for a moment after.
    pub changed_at: Option<Millis>,
    /// Something the viewer should notice (an overwritten entry, a fenced member, ...).
    pub alert: bool,
}

impl StateLine {
    pub fn plain(text: impl Into<String>) -> StateLine {
        StateLine { text: text.into(), changed_at: None, alert: false }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BrokerView {
    pub name: String,
    pub lines: Vec<StateLine>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TopicView {
    pub name: String,
    /// Retry, dead-letter and other internal topics: drawn apart or not at all.
    pub internal: bool,
    pub partitions: Vec<PartitionView>,
}

/// A queue (RocketMQ), partition (Kafka) or segment / partition (Pulsar), drawn as a log.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionView {
    pub id: PartitionId,
    /// Short label: `q0`, `p3`, `seg 5`.
    pub label: String,
    /// Index into `View::brokers` of the broker that hosts (or leads) it.
    pub broker: Option<usize>,
    /// First offset still stored, and the next offset to be written.
    pub log_start: u64,
    pub log_end: u64,
    /// Offsets drawn on the log: committed offsets, positions, high watermark, mark-delete...
    pub marks: Vec<OffsetMark>,
    /// Consumers that own or read it now (index into `View::consumers`).
    pub owners: Vec<ConsumerIx>,
    /// A short state badge: a FetchState, `sealed`, `draining`...
    pub badge: Option<String>,
    /// Why nobody reads it, when nobody does and that matters (the canvas shows it in red).
    pub unowned_reason: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// A group's committed offset (RocketMQ, Kafka) or a cursor's mark-delete position (Pulsar).
    Committed,
    /// A consumer's fetch position.
    Position,
    /// Kafka's high watermark / last stable offset.
    HighWatermark,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OffsetMark {
    pub kind: MarkKind,
    pub offset: u64,
    /// Whose mark: a group or consumer name.
    pub label: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsumerState {
    NotStarted,
    Running,
    Stopped,
    Crashed,
    /// `start()` threw; the reason is in `ConsumerView::detail`.
    StartFailed,
}

impl ConsumerState {
    /// The one wording used everywhere (canvas, panels, live region).
    pub fn label(self) -> &'static str {
        match self {
            ConsumerState::NotStarted => "not started",
            ConsumerState::Running => "running",
            ConsumerState::Stopped => "stopped",
            ConsumerState::Crashed => "crashed",
            ConsumerState::StartFailed => "start failed",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerView {
    pub name: String,
    pub group: String,
    pub state: ConsumerState,
    /// What it subscribes to, in the model's words (`TopicTestA=TagA`).
    pub subscription: String,
    /// Set when the consumer's own subscription differs from what the broker applies for it.
    pub mismatch: Option<String>,
    /// Extra state lines (member id, generation, FetchStates, permits...).
    pub lines: Vec<StateLine>,
    /// Messages consumed so far.
    pub consumed: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GroupView {
    pub name: String,
    pub lines: Vec<StateLine>,
}

/// What became of a message, for its cell in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Stored, not delivered yet.
    Pending,
    Consumed,
    /// Skipped by a filter (or an offset that moved past it): lost for the group that skipped it.
    Skipped,
    /// Failed and waiting for a retry.
    Retrying,
    DeadLettered,
}

/// One cell of a partition's log.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub offset: u64,
    pub msg: MsgId,
    /// Tag or key: the only thing colour encodes.
    pub label: Option<Arc<str>>,
    /// Its colour key (index into `View::labels`; `NO_KEY` without a tag or key).
    pub key: u32,
    pub fate: Fate,
    /// A short qualifier of the fate, e.g. the SQL92 verdict that skipped it (`FALSE`, `NULL`,
    /// `EVAL_ERROR`, `BLOOM_MISS`).
    pub note: Option<&'static str>,
}

/// Everything known about one message, for hover and provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageView {
    pub msg: MsgId,
    pub topic: String,
    pub partition: Option<PartitionId>,
    pub offset: Option<u64>,
    pub label: Option<String>,
    pub body: String,
    pub properties: Vec<(String, String)>,
    pub producer: String,
    pub born_at: Millis,
    pub fate: Fate,
}

/// Why a message was dropped on its way to a consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropKind {
    /// The broker's filter (RocketMQ: the group's table entry).
    BrokerFilter,
    /// The consumer's own re-filter.
    ClientFilter,
    /// Any other loss (e.g. an offset reset past it).
    Other,
    /// Not lost: moved to a dead-letter topic after its last redelivery.
    DeadLetter,
}

/// One fact read from a log entry, for the frame tracker: dots, plot series and marks. Models
/// translate their own events; entries with no neutral meaning yield nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trace {
    /// A message was appended to a partition (producer → partition).
    Stored {
        msg: MsgId,
        key: u32,
        partition: PartitionId,
        offset: u64,
        producer: Option<u32>,
    },
    /// Handed to the application (partition → consumer).
    Delivered {
        msg: MsgId,
        key: u32,
        partition: PartitionId,
        consumer: ConsumerIx,
    },
    Dropped {
        msg: MsgId,
        key: u32,
        partition: PartitionId,
        consumer: Option<ConsumerIx>,
        kind: DropKind,
    },
    /// A group's committed offset moved (index into `View::groups`).
    Committed {
        partition: PartitionId,
        group: u32,
        offset: u64,
    },
    /// A consumer's assignment changed.
    Reassigned {
        consumer: ConsumerIx,
    },
    /// A consumer's heartbeat reached a broker (index into `View::brokers`).
    Heartbeat {
        consumer: ConsumerIx,
        broker: u32,
    },
    /// Broker-side state a consumer depends on was overwritten (a subscription-table entry, ...).
    Overwritten {
        broker: u32,
        consumer: Option<ConsumerIx>,
    },
    /// A consumer started, stopped, crashed or failed to start.
    Lifecycle {
        consumer: ConsumerIx,
        state: ConsumerState,
    },
}

/// The kinds of moment a viewer should not miss: the scrubber's chapter marks, the pacing's
/// slow-downs and the "next key moment" control are built from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MomentKind {
    Send,
    Overwrite,
    Rebalance,
    Stop,
    Crash,
    Loss,
    DeadLetter,
}

impl MomentKind {
    pub fn label(self) -> &'static str {
        match self {
            MomentKind::Send => "sends",
            MomentKind::Overwrite => "table overwritten",
            MomentKind::Rebalance => "rebalance",
            MomentKind::Stop => "consumer stopped",
            MomentKind::Crash => "consumer crashed",
            MomentKind::Loss => "messages lost",
            MomentKind::DeadLetter => "dead-lettered",
        }
    }

    /// How a chapter mark of this kind counts its moments: a stop or a crash counts each
    /// consumer it is about; the others count instants.
    pub fn counts_each(self) -> bool {
        matches!(self, MomentKind::Stop | MomentKind::Crash)
    }

    /// Whether a mark's word says how many moments it holds ("rebalance ×3"). A loss's or a dead
    /// letter's does not: the instants a stream of them spans are not a count of messages, and
    /// the outcome sentence gives that count, per the model's report.
    pub fn says_count(self) -> bool {
        !matches!(self, MomentKind::Loss | MomentKind::DeadLetter)
    }
}

impl Trace {
    /// The kind of key moment this fact marks, if any.
    pub fn moment(&self) -> Option<MomentKind> {
        match self {
            Trace::Stored { .. } => Some(MomentKind::Send),
            Trace::Overwritten { .. } => Some(MomentKind::Overwrite),
            Trace::Reassigned { .. } => Some(MomentKind::Rebalance),
            Trace::Lifecycle { state: ConsumerState::Crashed, .. } => Some(MomentKind::Crash),
            Trace::Lifecycle { state, .. } if *state != ConsumerState::Running => Some(MomentKind::Stop),
            Trace::Dropped { kind: DropKind::DeadLetter, .. } => Some(MomentKind::DeadLetter),
            Trace::Dropped { .. } => Some(MomentKind::Loss),
            _ => None,
        }
    }
}

/// Message counts of a run so far: the outcome sentence over the canvas, the live region and the
/// comparison read them. Where a model overrides `Simulation::totals`, its counts are the ones its
/// report lists at the same moment (a test holds them equal at the end of every preset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub produced: u64,
    /// Consumptions, counting repeats.
    pub consumed: u64,
    /// Messages consumed more than once (by the same group).
    pub duplicated: u64,
    /// Messages a group will never consume, for the reason `lost_cause` gives in the model's words.
    pub lost: u64,
    /// Why the `lost` messages are lost, completing "N of M sent were lost: ...".
    pub lost_cause: &'static str,
    /// Messages a group has not consumed by now, not counting `lost` ones: still in the log, in
    /// a partition without an owner, or behind a consumer that stopped. Counted once per group.
    pub unconsumed: u64,
    pub retrying: u64,
    pub dead_lettered: u64,
    /// How many groups (RocketMQ: BROADCASTING members apart; Pulsar: subscriptions) the lost,
    /// not-consumed and consumed counts are per. With more than one, a message two groups lost
    /// counts twice, and the sentence says the counts are per group.
    pub groups: u64,
}

impl Totals {
    /// The outcome so far, and whether it is an alarm (messages lost, duplicated or dead-lettered).
    /// Every count is the model's own (`Simulation::totals`, which its report agrees with), and the
    /// cause of a loss is in the model's words; "none lost or duplicated" is said only when every
    /// message sent has been consumed exactly once so far.
    pub fn sentence(&self) -> Option<(String, bool)> {
        let t = self;
        if t.produced == 0 {
            return None;
        }
        let mut bad: Vec<String> = Vec::new();
        // Counts per group do not add up to messages sent: say so, and not "N of M sent".
        let per_group = t.groups > 1;
        let cause = if t.lost_cause.is_empty() { LOST_TO_A_FILTER } else { t.lost_cause };
        if t.lost > 0 && per_group {
            bad.push(format!("{} lost: {cause}", t.lost));
        } else if t.lost > 0 {
            let were = if t.lost == 1 { "was" } else { "were" };
            bad.push(format!("{} of {} sent {were} lost: {cause}", t.lost, messages(t.produced)));
        }
        if t.duplicated > 0 {
            bad.push(format!("{} consumed more than once", messages(t.duplicated)));
        }
        if t.dead_lettered > 0 {
            bad.push(format!("{} dead-lettered", messages(t.dead_lettered)));
        }
        let sent = match per_group {
            true => format!("{} sent to {} groups, counted per group", messages(t.produced), t.groups),
            false => format!("{} sent", messages(t.produced)),
        };
        let mut text = if bad.is_empty() {
            let mut s = format!("So far {sent}, {} consumed", t.consumed);
            if t.unconsumed == 0 && t.retrying == 0 {
                s.push_str("; none lost or duplicated");
            }
            s
        } else if per_group {
            format!("So far {sent}; {}", bad.join("; "))
        } else {
            format!("So far {}", bad.join("; "))
        };
        // Short: mid-run these are mostly the backlog, and the sentence must stay one line where it can.
        if t.unconsumed > 0 {
            text.push_str(&format!("; {} not consumed", t.unconsumed));
        }
        if t.retrying > 0 {
            text.push_str(&format!("; {} waiting to be retried", t.retrying));
        }
        text.push('.');
        Some((text, !bad.is_empty()))
    }
}

fn messages(n: u64) -> String {
    if n == 1 {
        "1 message".to_string()
    } else {
        format!("{n} messages")
    }
}

/// The loss cause of the default `totals`: a message whose cell is skipped was filtered out.
pub const LOST_TO_A_FILTER: &str = "a filter dropped them and no member of the group will consume them";

#[cfg(test)]
mod totals_tests {
    use super::*;

    #[test]
    fn a_loss_is_said_with_its_counts() {
        let t = Totals { produced: 20, consumed: 6, lost: 14, lost_cause: LOST_TO_A_FILTER, ..Totals::default() };
        let (text, alarm) = t.sentence().unwrap();
        assert!(alarm);
        assert!(text.starts_with("So far 14 of 20 messages sent were lost"), "{text}");
    }

    #[test]
    fn a_clean_run_says_so_and_an_empty_one_says_nothing() {
        let t = Totals { produced: 240, consumed: 240, ..Totals::default() };
        assert_eq!(t.sentence(), Some(("So far 240 messages sent, 240 consumed; none lost or duplicated.".into(), false)));
        assert_eq!(Totals::default().sentence(), None);
        let dup = Totals { produced: 10, consumed: 11, duplicated: 1, ..Totals::default() };
        assert!(dup.sentence().unwrap().0.contains("1 message consumed more than once"));
        let waiting = Totals { produced: 20, consumed: 10, unconsumed: 10, ..Totals::default() };
        assert_eq!(waiting.sentence(), Some(("So far 20 messages sent, 10 consumed; 10 not consumed.".into(), false)));
    }

    #[test]
    fn counts_over_several_groups_say_they_are_per_group() {
        // Two groups each lost the same 8 of 16: "16 of 16 sent were lost" would be false.
        let t = Totals { produced: 16, lost: 16, groups: 2, lost_cause: LOST_TO_A_FILTER, ..Totals::default() };
        let (text, _) = t.sentence().unwrap();
        assert_eq!(text, format!("So far 16 messages sent to 2 groups, counted per group; 16 lost: {LOST_TO_A_FILTER}."));
        let clean = Totals { produced: 16, consumed: 32, groups: 2, ..Totals::default() };
        assert_eq!(
            clean.sentence().unwrap().0,
            "So far 16 messages sent to 2 groups, counted per group, 32 consumed; none lost or duplicated."
        );
    }
}
