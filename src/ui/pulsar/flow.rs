//! Per consumer, what flow control allows it: on each partition or segment it has opened, its role
//! (active or standby on Exclusive/Failover, a member on Shared/Key_Shared, or still subscribing),
//! the messages it received from there, its FLOW permits and its unacked messages against the
//! limit that blocks it (and unblocks it at half). Pure: everything is read from the World.

use mqviz_pulsar::world::{Dispatcher, World};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowRow {
    /// `p0`, `seg 4`, or the topic's local name.
    pub on: String,
    /// `active`, `standby`, `member`, or `subscribing` while the client waits for the broker's
    /// answer (a STREAM consumer opening newly assigned segments).
    pub role: &'static str,
    /// Messages the application received from this partition or segment (all incarnations).
    pub received: u64,
    pub permits: u32,
    /// Shared and Key_Shared only: unacked messages and the per-consumer limit (0 = none).
    pub unacked: Option<(u32, u32)>,
    pub blocked: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerFlow {
    pub name: String,
    /// One wording everywhere (`running`, `stopped`, `crashed`...).
    pub state: &'static str,
    pub rows: Vec<FlowRow>,
    /// Messages in the receiver queue, not yet taken by the application.
    pub queued: usize,
    pub received: u64,
    pub acked: u64,
    pub nacked: u64,
    pub dead_lettered: u64,
}

impl ConsumerFlow {
    pub fn blocked(&self) -> bool {
        self.rows.iter().any(|r| r.blocked)
    }
}

fn short(w: &World, p: u32) -> String {
    let part = &w.partitions[p as usize];
    match (part.segment, part.partition_index) {
        (Some(s), _) => format!("seg {s}"),
        (None, i) if i >= 0 => format!("p{i}"),
        _ => part.name.rsplit('/').next().unwrap_or(&part.name).to_string(),
    }
}

/// Every consumer's flow control, in scenario order: one row per attachment the client holds
/// open, connected or still subscribing (a closed one, e.g. a segment reassigned away, is gone).
pub fn flows(w: &World) -> Vec<ConsumerFlow> {
    // Receipts per partition, one slot per partition, reused from consumer to consumer: a map
    // entry per receipt made this memo a 100 ms task in the page at the end of a 1 M-message run.
    let mut received: Vec<u64> = vec![0; w.partitions.len()];
    (0..w.consumers.len())
        .map(|c| {
            let con = &w.consumers[c];
            received.iter_mut().for_each(|n| *n = 0);
            for r in &con.received {
                if let Some(n) = w.messages.get(r.msg as usize).and_then(|m| received.get_mut(m.partition as usize)) {
                    *n += 1;
                }
            }
            let got = |p: u32| received.get(p as usize).copied().unwrap_or(0);
            let mut rows = Vec::new();
            for att in con.attachments.iter().filter(|a| !a.closed) {
                if !att.connected {
                    // Opened, the broker's answer not back yet: no permits given, none counted.
                    rows.push(FlowRow {
                        on: short(w, att.partition),
                        role: "subscribing",
                        received: got(att.partition),
                        permits: 0,
                        unacked: None,
                        blocked: false,
                    });
                    continue;
                }
                let part = &w.partitions[att.partition as usize];
                let Some(sub) = part.subscriptions.get(att.subscription as usize) else { continue };
                let received = got(att.partition);
                let row = match &sub.dispatcher {
                    Some(Dispatcher::Single(d)) => FlowRow {
                        on: short(w, att.partition),
                        role: if d.active == Some(att.consumer_id) { "active" } else { "standby" },
                        received,
                        permits: sub.members.get(&att.consumer_id).map_or(0, |m| m.permits),
                        unacked: None,
                        blocked: false,
                    },
                    Some(Dispatcher::Shared(sh)) => match sh.consumers.get(att.consumer_id) {
                        Some(x) => FlowRow {
                            on: short(w, att.partition),
                            role: "member",
                            received,
                            permits: x.permits,
                            unacked: Some((x.unacked.unacked, x.unacked.limit)),
                            blocked: x.unacked.blocked,
                        },
                        None => continue,
                    },
                    Some(Dispatcher::KeyShared(ks)) => match ks.consumer(att.consumer_id) {
                        Some(x) => FlowRow {
                            on: short(w, att.partition),
                            role: "member",
                            received,
                            permits: x.permits,
                            unacked: Some((x.unacked.unacked, x.unacked.limit)),
                            blocked: x.unacked.blocked,
                        },
                        None => continue,
                    },
                    None => continue,
                };
                rows.push(row);
            }
            ConsumerFlow {
                name: con.name.to_string(),
                state: w.consumer_state(c).label(),
                rows,
                queued: con.incoming.len(),
                received: con.stats.received,
                acked: con.stats.acked,
                nacked: con.stats.nacked,
                dead_lettered: con.stats.dead_lettered,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::pulsar::dag::tests::world_at;

    #[test]
    fn failover_shows_active_and_standby_members() {
        let w = world_at("pulsar-failover.json", 2_000);
        let f = flows(&w);
        let a = f.iter().find(|c| c.name == "consumer-a").unwrap();
        assert_eq!(
            a.rows.iter().map(|r| (r.on.as_str(), r.role)).collect::<Vec<_>>(),
            vec![("p0", "active"), ("p1", "standby"), ("p2", "active")]
        );
        let z = f.iter().find(|c| c.name == "consumer-z").unwrap();
        assert!(z.rows.iter().all(|r| r.role == "standby"));
        let w = world_at("pulsar-failover.json", 6_500);
        assert_eq!(flows(&w).iter().find(|c| c.name == "consumer-a").unwrap().state, "crashed");
    }

    /// The scalable tour's last step: consumer-1 has just opened segments 4 and 5 (the broker's
    /// answer is a millisecond away), then reads from them. The table lists both throughout.
    #[test]
    fn a_stream_consumer_lists_the_segments_it_is_opening_then_what_it_received_there() {
        use mqviz_model::Simulation;
        let file = "pulsar-scalable-children-blocked.json";
        let tour = mqviz_app::tour::for_preset(file).unwrap();
        let mut ahead = world_at(file, 0);
        let until = Simulation::until(&ahead);
        Simulation::run_until(&mut ahead, until);
        let last = tour.pin(&ahead).unwrap().last().unwrap().at;
        let on = |w: &World| {
            let f = flows(w);
            let c = f.iter().find(|c| c.name == "consumer-1").unwrap();
            c.rows.iter().map(|r| (r.on.clone(), r.role, r.received)).collect::<Vec<_>>()
        };
        let rows = on(&world_at(file, last));
        for seg in ["seg 4", "seg 5"] {
            assert!(rows.iter().any(|r| r.0 == seg && r.1 == "subscribing"), "{seg} at the tour's last step: {rows:?}");
        }
        let w = world_at(file, 30_000);
        let rows = on(&w);
        let con = w.consumers.iter().find(|c| &*c.name == "consumer-1").unwrap();
        assert_eq!(rows.iter().map(|r| r.2).sum::<u64>(), con.received.len() as u64, "every message counted once: {rows:?}");
        for seg in ["seg 4", "seg 5"] {
            let r = rows.iter().find(|r| r.0 == seg).unwrap();
            assert!(r.1 == "active" && r.2 > 0, "{r:?}");
        }
    }

    #[test]
    fn shared_members_count_unacked_messages() {
        let w = world_at("pulsar-shared-dlq.json", 1_500);
        let f = flows(&w);
        assert!(f.iter().all(|c| c.rows.len() == 1 && c.rows[0].role == "member" && c.rows[0].unacked.is_some()));
    }
}
