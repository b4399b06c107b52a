//! The typed event log of the Kafka model. Each variant renders as one stable line; the rendering
//! is what the determinism digest hashes, so wording changes are golden-digest changes.

use std::fmt::{self, Display, Write as _};
use std::sync::Arc;

pub type Name = Arc<str>;
pub type MsgId = u32;

/// A partition as events name it: its neutral id and its `topic-p` label.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Part {
    pub pid: u32,
    pub label: Name,
}

impl Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

/// `[orders-0, orders-1]`.
pub struct PartList<'a>(pub &'a [Part]);

impl Display for PartList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&p.label)?;
        }
        f.write_char(']')
    }
}

/// How the producer chose a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Explicit,
    Keyed,
    Sticky,
    RoundRobin,
}

impl Choice {
    pub fn name(self) -> &'static str {
        match self {
            Choice::Explicit => "explicit",
            Choice::Keyed => "keyed",
            Choice::Sticky => "sticky",
            Choice::RoundRobin => "round-robin",
        }
    }
}

/// Which commit an event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitKind {
    /// `auto.commit.interval.ms` elapsed (async, from inside `poll()`).
    Auto,
    /// Before a rebalance (`onJoinPrepare` / before revocation).
    BeforeRebalance,
    /// `close()`.
    OnClose,
    /// The application's `commitSync()`.
    Sync,
    /// The application's `commitAsync()`.
    Async,
}

impl CommitKind {
    pub fn name(self) -> &'static str {
        match self {
            CommitKind::Auto => "auto-commit",
            CommitKind::BeforeRebalance => "commit before rebalance",
            CommitKind::OnClose => "commit on close",
            CommitKind::Sync => "commitSync",
            CommitKind::Async => "commitAsync",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Event {
    /// A scenario or user command took effect.
    Command {
        text: String,
    },
    /// The run outgrew its memory budget and stops here.
    BudgetExceeded {
        budget: u64,
        reached: u64,
    },
    ConsumerStarted {
        client: Name,
        subscription: String,
    },
    /// `close()` finished (or `setProtocol` restarted it).
    ConsumerClosed {
        client: Name,
        reason: &'static str,
    },
    ConsumerCrashed {
        client: Name,
    },
    /// An exception escaped `poll()`; the application closes the consumer.
    PollThrew {
        client: Name,
        error: String,
    },
    /// A call the application made threw (nothing changed).
    CallThrew {
        client: Name,
        call: &'static str,
        error: String,
    },

    /// A produce request was appended to a partition: records `base..base+count`, messages
    /// `first_msg..first_msg+count`.
    Appended {
        producer: Name,
        part: Part,
        base: u64,
        count: u32,
        first_msg: MsgId,
        epoch: i32,
        choice: Choice,
    },
    ProduceFailed {
        producer: Name,
        topic: Name,
        reason: String,
    },
    LeaderChanged {
        part: Part,
        leader: Name,
        epoch: i32,
    },
    /// An unclean election cut the log back to `offset`; `lost` messages were above it.
    Truncated {
        part: Part,
        offset: u64,
        epoch: i32,
        leader: Name,
        lost: Arc<[MsgId]>,
    },
    PartitionsAdded {
        topic: Name,
        from: u32,
        to: u32,
    },
    TopicCreated {
        topic: Name,
        partitions: u32,
    },
    /// The client's metadata changed (leaders, epochs, partition counts, pattern matches).
    MetadataUpdated {
        client: Name,
        changes: String,
    },

    /// Classic protocol, client side.
    JoinSent {
        client: Name,
        group: Name,
        member: Name,
        reason: String,
    },
    /// Partitions given up before joining (EAGER: all; COOPERATIVE: unsubscribed topics) or lost.
    Revoked {
        client: Name,
        partitions: Vec<Part>,
        lost: bool,
        reason: &'static str,
    },
    /// SyncGroup answered: the new assignment and what changed. `restored`: not an answer but
    /// a scenario snapshot's member owning its partitions at t=0 (no rebalance happened).
    Assigned {
        client: Name,
        group: Name,
        generation: i32,
        assigned: Vec<Part>,
        revoked: Vec<Part>,
        added: Vec<Part>,
        restored: bool,
    },
    /// The leader ran the assignor.
    AssignmentComputed {
        group: Name,
        generation: i32,
        leader: Name,
        assignor: &'static str,
        result: String,
    },
    AssignorFailed {
        group: Name,
        leader: Name,
        error: String,
    },
    Heartbeat {
        client: Name,
        group: Name,
        result: &'static str,
    },
    PollTimeoutExpired {
        client: Name,
        group: Name,
    },
    /// Classic protocol, coordinator side.
    MemberIdRequired {
        group: Name,
        client: Name,
        member: Name,
    },
    GroupStateChanged {
        group: Name,
        from: &'static str,
        to: &'static str,
        reason: String,
    },
    JoinCompleted {
        group: Name,
        generation: i32,
        protocol: String,
        leader: Name,
        members: usize,
    },
    MemberRemoved {
        group: Name,
        member: Name,
        reason: String,
    },
    StaticMemberReplaced {
        group: Name,
        instance: Name,
        old: Name,
        new: Name,
        rebalance: bool,
    },
    JoinRejected {
        group: Name,
        client: Name,
        error: &'static str,
    },

    /// KIP-848, coordinator side.
    GroupEpochBumped {
        group: Name,
        epoch: i32,
        reason: String,
    },
    /// The new target: each member (by consumer name) and its target partitions.
    TargetComputed {
        group: Name,
        epoch: i32,
        assignor: &'static str,
        members: Vec<(Name, Vec<Part>)>,
    },
    MemberReconciled {
        group: Name,
        client: Name,
        epoch: i32,
        state: &'static str,
        assigned: Vec<Part>,
        pending: Vec<Part>,
    },
    MemberFenced {
        group: Name,
        client: Name,
        reason: String,
    },
    StaticMemberLeft {
        group: Name,
        client: Name,
    },
    /// KIP-848, client side: a new assignment applied (revocations first).
    Reconciled {
        client: Name,
        group: Name,
        epoch: i32,
        assigned: Vec<Part>,
        revoked: Vec<Part>,
        added: Vec<Part>,
    },
    CgHeartbeat {
        client: Name,
        group: Name,
        epoch: i32,
        result: String,
    },

    FetchStateChanged {
        client: Name,
        part: Part,
        from: &'static str,
        to: &'static str,
        position: Option<i64>,
        why: String,
    },
    /// A fetch response for one partition: records `from..to` buffered.
    Fetched {
        client: Name,
        part: Part,
        from: u64,
        to: u64,
        high_watermark: u64,
    },
    FetchError {
        client: Name,
        part: Part,
        error: &'static str,
    },
    /// `poll()` returned these records of one partition to the application.
    Polled {
        client: Name,
        part: Part,
        from: u64,
        to: u64,
        msgs: Arc<[MsgId]>,
    },
    /// A position moved forward past records the group never read.
    Skipped {
        client: Name,
        part: Part,
        from: u64,
        to: u64,
        msgs: Arc<[MsgId]>,
        reason: String,
    },
    LogTruncationDetected {
        client: Name,
        part: Part,
        position: i64,
        divergent: Option<(i64, i32)>,
    },

    Committed {
        group: Name,
        client: Name,
        kind: CommitKind,
        offsets: Vec<(Part, u64)>,
        generation: i32,
    },
    CommitFailed {
        group: Name,
        client: Name,
        kind: CommitKind,
        error: &'static str,
    },
}

impl Event {
    /// A short category for filtering the log.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Command { .. } | Event::BudgetExceeded { .. } => "command",
            Event::ConsumerStarted { .. }
            | Event::ConsumerClosed { .. }
            | Event::ConsumerCrashed { .. }
            | Event::PollThrew { .. }
            | Event::CallThrew { .. } => "lifecycle",
            Event::Appended { .. } | Event::ProduceFailed { .. } => "produce",
            Event::LeaderChanged { .. }
            | Event::Truncated { .. }
            | Event::PartitionsAdded { .. }
            | Event::TopicCreated { .. } => "partition",
            Event::MetadataUpdated { .. } => "metadata",
            Event::JoinSent { .. }
            | Event::Revoked { .. }
            | Event::Assigned { .. }
            | Event::AssignmentComputed { .. }
            | Event::AssignorFailed { .. }
            | Event::MemberIdRequired { .. }
            | Event::GroupStateChanged { .. }
            | Event::JoinCompleted { .. }
            | Event::MemberRemoved { .. }
            | Event::StaticMemberReplaced { .. }
            | Event::JoinRejected { .. }
            | Event::GroupEpochBumped { .. }
            | Event::TargetComputed { .. }
            | Event::MemberReconciled { .. }
            | Event::MemberFenced { .. }
            | Event::StaticMemberLeft { .. }
            | Event::Reconciled { .. }
            | Event::PollTimeoutExpired { .. } => "rebalance",
            Event::Heartbeat { .. } | Event::CgHeartbeat { .. } => "heartbeat",
            Event::FetchStateChanged { .. } | Event::LogTruncationDetected { .. } => "fetch-state",
            Event::Fetched { .. } | Event::FetchError { .. } => "fetch",
            Event::Polled { .. } | Event::Skipped { .. } => "consume",
            Event::Committed { .. } | Event::CommitFailed { .. } => "commit",
        }
    }

    /// The first message an entry is about, if any.
    pub fn message(&self) -> Option<MsgId> {
        match self {
            Event::Appended { first_msg, count, .. } if *count > 0 => Some(*first_msg),
            Event::Polled { msgs, .. } | Event::Skipped { msgs, .. } | Event::Truncated { lost: msgs, .. } => {
                msgs.first().copied()
            }
            _ => None,
        }
    }
}

fn offsets_text(offsets: &[(Part, u64)]) -> String {
    offsets.iter().map(|(p, o)| format!("{p}={o}")).collect::<Vec<_>>().join(", ")
}

impl Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Command { text } => write!(f, "command {text}"),
            Event::BudgetExceeded { budget, reached } => write!(
                f,
                "memory budget: the model holds {} (its own estimate), over its budget of {}: the run stops here",
                mqviz_engine::budget::mb(*reached),
                mqviz_engine::budget::mb(*budget)
            ),
            Event::ConsumerStarted { client, subscription } => write!(f, "consumer-started {client} {subscription}"),
            Event::ConsumerClosed { client, reason } => write!(f, "consumer-closed {client} ({reason})"),
            Event::ConsumerCrashed { client } => write!(f, "consumer-crashed {client}"),
            Event::PollThrew { client, error } => write!(f, "poll-threw {client} {error}"),
            Event::CallThrew { client, call, error } => write!(f, "call-threw {client} {call}: {error}"),
            Event::Appended { producer, part, base, count, first_msg, epoch, choice } => {
                let last = base + *count as u64;
                write!(
                    f,
                    "appended {part} [{base}..{last}) m{first_msg}+{count} from {producer} ({}, leader epoch {epoch})",
                    choice.name()
                )
            }
            Event::ProduceFailed { producer, topic, reason } => write!(f, "produce-failed {producer} {topic}: {reason}"),
            Event::LeaderChanged { part, leader, epoch } => write!(f, "leader-changed {part} leader {leader} epoch {epoch}"),
            Event::Truncated { part, offset, epoch, leader, lost } => {
                write!(
                    f,
                    "truncated {part} to {offset} (unclean election: leader {leader} epoch {epoch}, {} records lost)",
                    lost.len()
                )
            }
            Event::PartitionsAdded { topic, from, to } => write!(f, "partitions-added {topic} {from} -> {to}"),
            Event::TopicCreated { topic, partitions } => write!(f, "topic-created {topic} ({partitions} partitions)"),
            Event::MetadataUpdated { client, changes } => write!(f, "metadata {client}: {changes}"),
            Event::JoinSent { client, group, member, reason } => {
                write!(f, "join-group {client} -> {group} member {:?} ({reason})", &**member)
            }
            Event::Revoked { client, partitions, lost, reason } => {
                let what = if *lost { "partitions-lost" } else { "partitions-revoked" };
                write!(f, "{what} {client} {} ({reason})", PartList(partitions))
            }
            Event::Assigned { client, group, generation, assigned, revoked, added, restored } => {
                write!(
                    f,
                    "assigned {client} {group} generation {generation} {} revoked {} added {}",
                    PartList(assigned),
                    PartList(revoked),
                    PartList(added)
                )?;
                if *restored {
                    write!(f, " (owned in the scenario's snapshot)")?;
                }
                Ok(())
            }
            Event::AssignmentComputed { group, generation, leader, assignor, result } => {
                write!(f, "assignment {group} generation {generation} by leader {leader} ({assignor}): {result}")
            }
            Event::AssignorFailed { group, leader, error } => write!(f, "assignor-failed {group} leader {leader}: {error}"),
            Event::Heartbeat { client, group, result } => write!(f, "heartbeat {client} -> {group}: {result}"),
            Event::PollTimeoutExpired { client, group } => {
                write!(f, "poll-timeout {client} {group}: max.poll.interval.ms exceeded, leaving the group")
            }
            Event::MemberIdRequired { group, client, member } => write!(f, "member-id-required {group} {client} -> {member}"),
            Event::GroupStateChanged { group, from, to, reason } => write!(f, "group-state {group} {from} -> {to} ({reason})"),
            Event::JoinCompleted { group, generation, protocol, leader, members } => {
                write!(f, "join-complete {group} generation {generation} protocol {protocol} leader {leader} ({members} members)")
            }
            Event::MemberRemoved { group, member, reason } => write!(f, "member-removed {group} {member} ({reason})"),
            Event::StaticMemberReplaced { group, instance, old, new, rebalance } => write!(
                f,
                "static-member-replaced {group} instance {instance}: {old} -> {new} ({})",
                if *rebalance { "rebalance" } else { "no rebalance" }
            ),
            Event::JoinRejected { group, client, error } => write!(f, "join-rejected {group} {client}: {error}"),
            Event::GroupEpochBumped { group, epoch, reason } => write!(f, "group-epoch {group} {epoch} ({reason})"),
            Event::TargetComputed { group, epoch, assignor, members } => {
                write!(f, "target-assignment {group} epoch {epoch} ({assignor}):")?;
                for (client, parts) in members {
                    write!(f, " {client}={}", PartList(parts))?;
                }
                Ok(())
            }
            Event::MemberReconciled { group, client, epoch, state, assigned, pending } => write!(
                f,
                "member-reconciled {group} {client} epoch {epoch} {state} assigned {} pending-revocation {}",
                PartList(assigned),
                PartList(pending)
            ),
            Event::MemberFenced { group, client, reason } => write!(f, "member-fenced {group} {client} ({reason})"),
            Event::StaticMemberLeft { group, client } => {
                write!(f, "static-member-left {group} {client} (epoch -2: assignment kept until the session expires)")
            }
            Event::Reconciled { client, group, epoch, assigned, revoked, added } => write!(
                f,
                "reconciled {client} {group} epoch {epoch} {} revoked {} added {}",
                PartList(assigned),
                PartList(revoked),
                PartList(added)
            ),
            Event::CgHeartbeat { client, group, epoch, result } => {
                write!(f, "heartbeat {client} -> {group} epoch {epoch}: {result}")
            }
            Event::FetchStateChanged { client, part, from, to, position, why } => {
                write!(f, "fetch-state {client} {part} {from} -> {to}")?;
                if let Some(p) = position {
                    write!(f, " position {p}")?;
                }
                write!(f, " ({why})")
            }
            Event::Fetched { client, part, from, to, high_watermark } => {
                write!(f, "fetched {client} {part} [{from}..{to}) high watermark {high_watermark}")
            }
            Event::FetchError { client, part, error } => write!(f, "fetch-error {client} {part}: {error}"),
            Event::Polled { client, part, from, to, msgs } => {
                write!(f, "polled {client} {part} [{from}..{to}) {} records", msgs.len())
            }
            Event::Skipped { client, part, from, to, reason, .. } => {
                write!(f, "skipped {client} {part} [{from}..{to}) ({reason})")
            }
            Event::LogTruncationDetected { client, part, position, divergent } => match divergent {
                Some((o, e)) => {
                    write!(f, "log-truncation {client} {part} position {position}: diverges at offset {o} (epoch {e})")
                }
                None => write!(f, "log-truncation {client} {part} position {position}: divergence unknown"),
            },
            Event::Committed { group, client, kind, offsets, generation } => {
                write!(f, "committed {group} by {client} ({}, generation {generation}) {}", kind.name(), offsets_text(offsets))
            }
            Event::CommitFailed { group, client, kind, error } => {
                write!(f, "commit-failed {group} by {client} ({}): {error}", kind.name())
            }
        }
    }
}
