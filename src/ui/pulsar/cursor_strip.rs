//! A subscription's cursor on one topic, partition or segment as a strip of its entries: acked
//! (at or below markDelete, or individually above it), sent but not acked, and not read yet,
//! told apart by shade, with markDelete as a bar and the read position as a thin line. Pure: the
//! strip is an SVG string and a sentence, both tested natively.

use mqviz_engine::decimal::fixed;
use mqviz_pulsar::message_id::MessageId;
use mqviz_pulsar::world::World;

/// One subscription's cursor on one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CursorStrip {
    pub subscription: String,
    /// `p0`, `seg 4`, or the topic's local name.
    pub partition: String,
    pub ledger: i64,
    /// Entries in the ledger.
    pub entries: i64,
    pub mark_delete: i64,
    pub read_position: i64,
    /// Individually acked ranges above markDelete, inclusive, ascending.
    pub acked_above: Vec<(i64, i64)>,
    pub backlog: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    Acked,
    /// Dispatched (below the read position) and not acked yet.
    Sent,
    Unread,
}

impl CursorStrip {
    /// Runs of entries `[start, end)` by what they are for this subscription.
    pub fn runs(&self) -> Vec<(i64, i64, Run)> {
        let mut out = Vec::new();
        let n = self.entries;
        let mut push = |a: i64, b: i64, r: Run| {
            let (a, b) = (a.max(0), b.min(n));
            if b > a {
                out.push((a, b, r));
            }
        };
        push(0, self.mark_delete + 1, Run::Acked);
        let mut pos = self.mark_delete + 1;
        let read = self.read_position;
        let unacked = |from: i64, to: i64, push: &mut dyn FnMut(i64, i64, Run)| {
            push(from, to.min(read), Run::Sent);
            push(from.max(read), to, Run::Unread);
        };
        for &(s, e) in &self.acked_above {
            unacked(pos, s, &mut push);
            push(s, e + 1, Run::Acked);
            pos = pos.max(e + 1);
        }
        unacked(pos, n, &mut push);
        out
    }

    fn id(&self, entry: i64) -> MessageId {
        MessageId::entry(self.ledger, entry)
    }

    /// The strip in words (what the SVG shows).
    pub fn sentence(&self) -> String {
        let mut s = format!("markDelete {}", self.id(self.mark_delete));
        if !self.acked_above.is_empty() {
            let ranges: Vec<String> = self
                .acked_above
                .iter()
                .take(4)
                .map(|&(a, b)| if a == b { format!("{}", self.id(a)) } else { format!("{}–{}", self.id(a), self.id(b)) })
                .collect();
            let more =
                if self.acked_above.len() > 4 { format!(" and {} more", self.acked_above.len() - 4) } else { String::new() };
            s.push_str(&format!(" · acked above it: {}{more}", ranges.join(", ")));
        }
        s.push_str(&format!(" · backlog {}", self.backlog));
        if self.read_position < self.entries {
            s.push_str(&format!(" · next read {}", self.id(self.read_position)));
        }
        s
    }

    /// The strip as an inline SVG, 1000 units wide, stretched to its box.
    pub fn svg(&self) -> String {
        let n = self.entries.max(1) as f64;
        let x = |i: i64| i as f64 * 1000.0 / n;
        let mut body = String::new();
        body.push_str("<rect class=\"unread\" x=\"0\" y=\"3\" width=\"1000\" height=\"12\"/>");
        for (a, b, r) in self.runs() {
            let class = match r {
                Run::Acked => "acked",
                Run::Sent => "sent",
                Run::Unread => continue,
            };
            body.push_str(&format!(
                "<rect class=\"{class}\" x=\"{}\" y=\"3\" width=\"{}\" height=\"12\"/>",
                fixed(x(a), 2),
                fixed((x(b) - x(a)).max(0.8), 2)
            ));
        }
        let md = fixed(x(self.mark_delete + 1), 2);
        body.push_str(&format!("<line class=\"mark-delete\" x1=\"{md}\" x2=\"{md}\" y1=\"0\" y2=\"18\"/>"));
        if self.read_position > self.mark_delete + 1 && self.read_position <= self.entries {
            let rp = fixed(x(self.read_position), 2);
            body.push_str(&format!("<line class=\"read-pos\" x1=\"{rp}\" x2=\"{rp}\" y1=\"0\" y2=\"18\"/>"));
        }
        format!(
            "<svg class=\"cursor-svg\" viewBox=\"0 0 1000 18\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{}\">{body}</svg>",
            crate::ui::state::esc(&self.sentence())
        )
    }
}

fn partition_label(w: &World, p: u32) -> String {
    let part = &w.partitions[p as usize];
    match (part.segment, part.partition_index) {
        (Some(s), _) => format!("seg {s}"),
        (None, i) if i >= 0 => format!("p{i}"),
        _ => part.name.rsplit('/').next().unwrap_or(&part.name).to_string(),
    }
}

/// Every subscription's cursor on every live partition or segment of its topic, by subscription.
pub fn strips(w: &World) -> Vec<CursorStrip> {
    let mut out = Vec::new();
    for (t, sub) in &w.groups {
        for &p in &w.topics[*t as usize].partitions {
            let part = &w.partitions[p as usize];
            if part.deleted {
                continue;
            }
            let Some(s) = part.subscription(sub) else { continue };
            let c = &part.subscriptions[s].cursor;
            out.push(CursorStrip {
                subscription: sub.to_string(),
                partition: partition_label(w, p),
                ledger: part.ledger_id,
                entries: part.entries.len() as i64,
                mark_delete: c.mark_delete(),
                read_position: c.read_position(),
                acked_above: c.individually_acked_ranges(),
                backlog: c.backlog(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::pulsar::dag::tests::world_at;

    fn strip(entries: i64, md: i64, read: i64, above: Vec<(i64, i64)>) -> CursorStrip {
        CursorStrip {
            subscription: "s".into(),
            partition: "p0".into(),
            ledger: 10,
            entries,
            mark_delete: md,
            read_position: read,
            acked_above: above,
            backlog: 0,
        }
    }

    #[test]
    fn runs_show_acked_holes_sent_and_unread() {
        let s = strip(10, 2, 7, vec![(4, 4), (6, 6)]);
        assert_eq!(
            s.runs(),
            vec![
                (0, 3, Run::Acked),
                (3, 4, Run::Sent),
                (4, 5, Run::Acked),
                (5, 6, Run::Sent),
                (6, 7, Run::Acked),
                (7, 10, Run::Unread)
            ]
        );
        assert_eq!(s.sentence(), "markDelete 10:2 · acked above it: 10:4, 10:6 · backlog 0 · next read 10:7");
        assert!(s.svg().contains("class=\"mark-delete\""));
        assert_eq!(strip(0, -1, 0, vec![]).runs(), vec![]);
    }

    #[test]
    fn shared_acks_leave_holes_above_mark_delete() {
        let w = world_at("pulsar-shared-dlq.json", 2_000);
        let s = &strips(&w)[0];
        assert_eq!((s.subscription.as_str(), s.partition.as_str()), ("work", "jobs"));
        // The nacked poison job 10:5 holds markDelete back while later jobs are acked.
        assert_eq!(s.mark_delete, 4);
        assert!(!s.acked_above.is_empty());
        let w = world_at("pulsar-failover.json", 6_500);
        assert_eq!(strips(&w).iter().map(|s| s.partition.as_str()).collect::<Vec<_>>(), vec!["p0", "p1", "p2"]);
    }
}
