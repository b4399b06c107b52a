//! How Pulsar events read in the log: each event names things by index, and the world (whose
//! tables only grow, with names that never change) turns it into one stable line. The digest
//! hashes exactly these lines, streamed, so a million-entry log is never held as one string.

use std::fmt::Write as _;

use super::cursor::InitialPosition;
use super::events::{Event, MsgId};
use super::message_id::MessageId;
use super::world::{hold_reason_text, World, NO_PRODUCER};
use mqviz_engine::digest::{write_line_prefix, FRESH};

const UNKNOWN: &str = "?";

impl World {
    fn consumer_name(&self, c: u32) -> &str {
        self.consumers.get(c as usize).map_or(UNKNOWN, |x| &x.name)
    }

    fn partition_name(&self, p: u32) -> &str {
        self.partitions.get(p as usize).map_or(UNKNOWN, |x| &x.name)
    }

    fn subscription_name(&self, p: u32, s: u32) -> &str {
        self.partitions.get(p as usize).and_then(|x| x.subscriptions.get(s as usize)).map_or(UNKNOWN, |x| &x.name)
    }

    fn topic_name(&self, t: u32) -> &str {
        self.topics.get(t as usize).map_or(UNKNOWN, |x| &x.name)
    }

    /// `topic / subscription` of a `View::groups` entry.
    fn group_name(&self, g: u32) -> (&str, &str) {
        self.groups.get(g as usize).map_or((UNKNOWN, UNKNOWN), |(t, s)| (self.topic_name(*t), s))
    }

    /// The `ledger:entry[:batchIndex]` of a stored message.
    pub fn message_id(&self, m: MsgId) -> MessageId {
        let msg = &self.messages[m as usize];
        MessageId {
            ledger_id: self.partitions[msg.partition as usize].ledger_id,
            entry_id: msg.entry,
            batch_index: msg.batch_index,
        }
    }

    fn position(&self, p: u32, entry: i64) -> MessageId {
        MessageId::entry(self.partitions.get(p as usize).map_or(-1, |x| x.ledger_id), entry)
    }

    /// A stored message's body, expanded from its send script's template.
    pub fn body_text(&self, m: MsgId) -> String {
        let b = self.messages[m as usize].out.body;
        let script = self.producers.get(b.producer as usize).and_then(|p| p.scripts.get(b.script as usize));
        script.map_or_else(String::new, |s| crate::scenario::expand(&s.spec.body, b.index))
    }

    /// Who published a stored message: its producer, or the client that wrote a DLQ/retry copy.
    pub fn message_producer(&self, m: MsgId) -> &str {
        let out = &self.messages[m as usize].out;
        match self.producers.get(out.producer as usize) {
            Some(p) if out.producer != NO_PRODUCER => &p.name,
            // Only dead-letter and retry copies, and the snapshot's entries, have no producer.
            _ => out.copy.as_ref().map_or(super::world::SNAPSHOT_WRITER, |c| &c.by),
        }
    }

    /// Appends the line of one event.
    pub fn write_event(&self, e: &Event, out: &mut String) {
        use Event::*;
        let c = |x: u32| self.consumer_name(x);
        let p = |x: u32| self.partition_name(x);
        let sub = |x: u32, s: u32| self.subscription_name(x, s);
        let _ = match e {
            Command { text } => write!(out, "command {text}"),
            ConsumerRestored { consumer } => {
                let con = &self.consumers[*consumer as usize];
                write!(
                    out,
                    "consumer {} was connected to {} / {} before the snapshot: running from t=0",
                    con.name,
                    self.topic_name(con.topic),
                    con.subscription
                )
            }
            CursorRestored { partition, sub: s, mark_delete, acked_ranges, backlog } => write!(
                out,
                "cursor {} / {} as the snapshot had it: markDelete {}, {acked_ranges} individually acked ranges above it, backlog {backlog}",
                p(*partition),
                sub(*partition, *s),
                self.position(*partition, *mark_delete)
            ),
            ConsumerStarted { consumer } => {
                let con = &self.consumers[*consumer as usize];
                write!(out, "consumer {} started on {} / {}", con.name, self.topic_name(con.topic), con.subscription)
            }
            Subscribed { consumer, partition, sub: s, sub_type, consumer_id } => write!(
                out,
                "{} subscribed {} / {} ({}, consumerId {consumer_id})",
                c(*consumer),
                p(*partition),
                sub(*partition, *s),
                sub_type.name()
            ),
            SubscribeFailed { consumer, partition, reason } => {
                let subscription = self.consumers.get(*consumer as usize).map_or(UNKNOWN, |x| &x.subscription);
                write!(out, "{} could not subscribe {} / {subscription}: {reason}", c(*consumer), p(*partition))
            }
            ClientError { consumer, reason } => write!(out, "consumer {}: {reason}", c(*consumer)),
            BudgetExceeded { budget, reached } => write!(
                out,
                "memory budget: the model holds {} (its own estimate), over its budget of {}: the run stops here",
                mqviz_engine::budget::mb(*reached),
                mqviz_engine::budget::mb(*budget)
            ),
            ConsumerClosed { consumer, crashed: true, unsent_acks } => {
                write!(out, "consumer {} crashed ({unsent_acks} grouped acks never sent)", c(*consumer))
            }
            ConsumerClosed { consumer, crashed: false, unsent_acks } => {
                write!(out, "consumer {} closed (grouped acks flushed: {unsent_acks})", c(*consumer))
            }
            ConsumerRemoved { consumer, partition, sub: s, consumer_id, returned } => {
                let _ = write!(
                    out,
                    "broker removed {} (consumerId {consumer_id}) from {} / {}",
                    c(*consumer),
                    p(*partition),
                    sub(*partition, *s)
                );
                match returned {
                    Some(n) => write!(out, "; {n} pending entries back for redelivery"),
                    None => Ok(()),
                }
            }
            CursorCreated { partition, sub: s, initial, mark_delete, backlog } => write!(
                out,
                "cursor {} / {} created at {}: markDelete {}, backlog {backlog}",
                p(*partition),
                sub(*partition, *s),
                match initial {
                    InitialPosition::Latest => "Latest",
                    InitialPosition::Earliest => "Earliest",
                },
                self.position(*partition, *mark_delete)
            ),
            MessageStored { msg } => {
                let m = &self.messages[*msg as usize];
                write!(
                    out,
                    "stored m{msg} {} key={} on {} from {}",
                    self.message_id(*msg),
                    self.key_text(m.out.key).unwrap_or("-"),
                    p(m.partition),
                    self.message_producer(*msg)
                )
            }
            PublishRejected { producer, partition, messages } => {
                let who = self.producers.get(*producer as usize).map_or("client", |x| &x.name);
                write!(
                    out,
                    "{} is terminated: {messages} messages from {who} rejected (TopicTerminated), re-routing",
                    p(*partition)
                )
            }
            Dispatched { partition, sub: s, entries, consumers, replay } => write!(
                out,
                "dispatched {entries} entries of {} / {} to {consumers} consumers{}",
                p(*partition),
                sub(*partition, *s),
                if *replay { " (replay)" } else { "" }
            ),
            Held { msg, sub: s, reason } => {
                let part = self.messages[*msg as usize].partition;
                write!(
                    out,
                    "held m{msg} {} of {} / {}: {}",
                    self.position(part, self.messages[*msg as usize].entry),
                    p(part),
                    sub(part, *s),
                    hold_reason_text(*reason)
                )
            }
            Received { consumer, msg, redelivery_count } => {
                write!(out, "{} received m{msg} {} (redeliveryCount {redelivery_count})", c(*consumer), self.message_id(*msg))
            }
            Nacked { consumer, msg } => write!(out, "{} negatively acked m{msg} {}", c(*consumer), self.message_id(*msg)),
            AcksApplied { consumer, partition, sub: s, acked, cumulative, moved, mark_delete, backlog } => write!(
                out,
                "{} ack of {acked} from {} on {} / {}: markDelete {}{}, backlog {backlog}",
                if *cumulative { "cumulative" } else { "individual" },
                c(*consumer),
                p(*partition),
                sub(*partition, *s),
                self.position(*partition, *mark_delete),
                if *moved { " (moved)" } else { "" }
            ),
            Flow { consumer, partition, permits } => write!(out, "FLOW {permits} from {} on {}", c(*consumer), p(*partition)),
            ConsumerBlocked { consumer, partition, unacked, limit } => {
                write!(out, "{} blocked on {}: {unacked} unacked (limit {limit})", c(*consumer), p(*partition))
            }
            ConsumerUnblocked { consumer, partition, unacked } => {
                write!(out, "{} unblocked on {}: {unacked} unacked", c(*consumer), p(*partition))
            }
            SubscriptionBlocked { partition, sub: s, unacked } => {
                write!(out, "{} / {} blocked: {unacked} unacked messages in the subscription", p(*partition), sub(*partition, *s))
            }
            ActiveConsumerPicked { partition, sub: s, active, delay_ms: Some(ms) } => write!(
                out,
                "{} / {}: active consumer is now {}; reading resumes in {ms} ms",
                p(*partition),
                sub(*partition, *s),
                c(*active)
            ),
            ActiveConsumerPicked { partition, sub: s, active, delay_ms: None } => write!(
                out,
                "{} / {}: active consumer is now {}, when the pending switch completes",
                p(*partition),
                sub(*partition, *s),
                c(*active)
            ),
            ActiveConsumerNotice { partition, sub: s, consumer, active } => write!(
                out,
                "{} / {}: ActiveConsumerChange to {} (inactive; active is {})",
                p(*partition),
                sub(*partition, *s),
                c(*consumer),
                c(*active)
            ),
            ActiveSwitched { partition, sub: s, active, rewound_to, redelivered } => write!(
                out,
                "{} / {}: {} active, cursor rewound to {} ({redelivered} unacked entries will be read again)",
                p(*partition),
                sub(*partition, *s),
                c(*active),
                self.position(*partition, *rewound_to)
            ),
            Rewound { partition, sub: s, consumer, rewound_to, redelivered } => write!(
                out,
                "{} / {}: rewound to {} for {} ({redelivered} unacked entries will be read again)",
                p(*partition),
                sub(*partition, *s),
                self.position(*partition, *rewound_to),
                c(*consumer)
            ),
            RedeliveryRequested { consumer, partition, messages, reason } => {
                let topic = match partition {
                    Some(x) => p(*x),
                    None => self.consumers.get(*consumer as usize).map_or(UNKNOWN, |x| self.topic_name(x.topic)),
                };
                match messages {
                    Some(n) => write!(out, "{} asks redelivery of {n} entries on {topic} ({})", c(*consumer), reason.name()),
                    None => {
                        write!(out, "{} asks redelivery of all unacked messages on {topic} ({})", c(*consumer), reason.name())
                    }
                }
            }
            ReturnedToReplay { partition, sub: s, consumer, entries, reason } => write!(
                out,
                "{} / {}: {entries} entries of {} back in the replay set ({})",
                p(*partition),
                sub(*partition, *s),
                c(*consumer),
                reason.name()
            ),
            AckTimedOut { consumer, partition, entries } => {
                write!(out, "{}: ack timeout of {entries} entries on {}", c(*consumer), p(*partition))
            }
            DeadLettered { consumer, msg, dead_letter_partition, deliveries } => write!(
                out,
                "{} sent m{msg} {} to {} after {deliveries} deliveries, and acked the original",
                c(*consumer),
                self.message_id(*msg),
                p(*dead_letter_partition)
            ),
            Reconsumed { consumer, msg, retry_partition, reconsume_times, delay_ms } => write!(
                out,
                "{} reconsumeLater m{msg}: copy to {} (RECONSUMETIMES {reconsume_times}, delay {delay_ms} ms)",
                c(*consumer),
                p(*retry_partition)
            ),
            ReachedEndOfTopic { consumer, partition } => {
                write!(out, "{} reached the end of terminated {}", c(*consumer), p(*partition))
            }
            HashRangesChanged { partition, sub: s, consumer, ranges } => {
                write!(out, "{} / {}: {} now owns hashes {ranges}", p(*partition), sub(*partition, *s), c(*consumer))
            }
            DrainingHashes { partition, sub: s, consumer, hashes } => write!(
                out,
                "{} / {}: {hashes} moved hashes draining at {} (their new owners wait for its acks)",
                p(*partition),
                sub(*partition, *s),
                c(*consumer)
            ),
            HashUnblocked { partition, sub: s, consumer } => write!(
                out,
                "{} / {}: {} acked the last pending message of a draining hash",
                p(*partition),
                sub(*partition, *s),
                c(*consumer)
            ),
            SegmentTopicCreated { topic, segment, partition, cursors_at_earliest } => write!(
                out,
                "{}: segment {segment} created as {} ({cursors_at_earliest} subscription cursors at Earliest)",
                self.topic_name(*topic),
                p(*partition)
            ),
            SegmentTerminated { topic, segment, partition } => {
                let last = self.partitions.get(*partition as usize).map_or(-1, |x| x.last_entry());
                write!(out, "{}: segment {segment} terminated at {}", self.topic_name(*topic), self.position(*partition, last))
            }
            LayoutUpdated { topic, epoch, change_and_active } => {
                write!(out, "{}: layout epoch {epoch} {change_and_active}", self.topic_name(*topic))
            }
            SegmentTopicDeleted { topic, segment } => {
                write!(out, "{}: segment {segment} pruned and its topic deleted", self.topic_name(*topic))
            }
            SessionRegistered { group, consumer, fresh } => {
                let (t, s) = self.group_name(*group);
                let how = if *fresh { "registered" } else { "reconnected within grace" };
                write!(out, "{t} / {s}: session {} {how}", c(*consumer))
            }
            SessionDisconnected { group, consumer, grace_until } => {
                let (t, s) = self.group_name(*group);
                write!(out, "{t} / {s}: session {} disconnected, evicted at {grace_until} unless it returns", c(*consumer))
            }
            SessionEvicted { group, consumer } => {
                let (t, s) = self.group_name(*group);
                write!(out, "{t} / {s}: session {} evicted", c(*consumer))
            }
            DrainCheckerInstalled { group } => {
                let (t, s) = self.group_name(*group);
                write!(out, "{t} / {s}: drain checker installed (parent-drain ordering on)")
            }
            AssignmentSent { group, consumer, epoch, segments } => {
                let (t, s) = self.group_name(*group);
                write!(out, "{t} / {s}: assignment to {} at epoch {epoch}: [{}]", c(*consumer), ids(segments))
            }
            DrainPollScheduled { group, at } => {
                let (t, s) = self.group_name(*group);
                write!(out, "{t} / {s}: drain poll at {at}")
            }
            DrainPolled { group, poll } => {
                let (t, s) = self.group_name(*group);
                write!(out, "{t} / {s}: drain poll, backlogs {}; newly drained [{}]", poll.backlogs, ids(&poll.drained))
            }
            UpstreamGap { gap } => write!(out, "upstream gap {}: {}", gap.issue, gap.text),
            EraNote { text } => write!(out, "era: {text}"),
        };
    }

    pub fn event_text(&self, e: &Event) -> String {
        let mut s = String::new();
        self.write_event(e, &mut s);
        s
    }

    /// FNV-1a of the rendered log, line by line as `model::log_line` prints it.
    pub fn log_digest(&self) -> u64 {
        self.digest_within(usize::MAX).unwrap_or_default()
    }

    /// The digest once at most `max_lines` more lines are hashed (`DigestMemo`); `None` until then.
    pub fn digest_within(&self, max_lines: usize) -> Option<u64> {
        let len = u32::try_from(self.log.len()).unwrap_or(u32::MAX);
        self.log.digest.fold(
            FRESH,
            len,
            max_lines,
            |r| self.log.iter_from(r.start),
            |out, e| {
                write_line_prefix(out, e.id.0, e.at, e.cause.map(|c| c.0));
                self.write_event(&e.kind, out);
            },
        )
    }
}

fn ids(list: &[u64]) -> String {
    list.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}
