//! What the editor says about the last edit (pure, tested natively): when it takes effect, read
//! against the world as it is now, and then that it has ("applies at the next rebalance; the
//! group is in PREPARING_REBALANCE" … "applied: generation 3 was assigned by cooperative-sticky").

use mqviz_engine::Millis;
use mqviz_kafka::classic_group::{rebalance_protocol, RebalanceProtocol};
use mqviz_kafka::scenario::{GroupProtocol, SubscriptionSpec};
use mqviz_kafka::world::{Consumer, Life, World};

use super::super::group_panel::compact;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    Start,
    Stop,
    Crash,
}

/// An edit whose effect may come later.
#[derive(Clone, Debug, PartialEq)]
pub enum Pending {
    /// `setAssignors`: the names as entered, the group's generation then.
    Assignors {
        group: String,
        names: Vec<String>,
        generation: i32,
    },
    RemoteAssignor {
        group: String,
        name: String,
        target_epoch: i32,
    },
    Protocol {
        group: String,
        protocol: GroupProtocol,
    },
    /// `subscribe` / `assign`: the client's generation or member epoch then.
    Subscription {
        client: String,
        what: String,
        generation: i32,
    },
    Lifecycle {
        client: String,
        what: Lifecycle,
        at: Millis,
    },
    Added {
        group: String,
        client: String,
    },
    Pause {
        client: String,
        partition: String,
        paused: bool,
    },
    Seek {
        client: String,
        partition: String,
        call: String,
    },
    Partitions {
        topic: String,
        count: u32,
    },
}

fn secs(ms: Millis) -> String {
    format!("{} s", mqviz_engine::decimal::fixed(ms as f64 / 1000.0, 1))
}

/// "the group is in PREPARING_REBALANCE (generation 2)" or "the group is RECONCILING at group epoch 3".
pub fn group_state(w: &World, g: usize) -> String {
    let grp = &w.groups[g];
    match group_protocol(w, g) {
        GroupProtocol::Classic => format!("the group is in {} (generation {})", grp.classic.state.name(), grp.classic.generation),
        GroupProtocol::Consumer => {
            format!("the group is {} at group epoch {}", grp.modern.state().name(), grp.modern.group_epoch)
        }
    }
}

/// The protocol the group's members run now.
pub fn group_protocol(w: &World, g: usize) -> GroupProtocol {
    w.consumers.iter().find(|c| c.group == g).map(|c| c.protocol).unwrap_or(w.groups[g].protocol)
}

fn owned_text(c: &Consumer) -> String {
    let parts = c.subs.assigned_partitions();
    if parts.is_empty() || !c.running() {
        "nothing".into()
    } else {
        compact(parts.iter().map(|tp| (tp.topic.as_str(), tp.partition)))
    }
}

/// The consumer's generation (classic) or member epoch (KIP-848).
pub fn generation_of(c: &Consumer) -> i32 {
    match c.protocol {
        GroupProtocol::Classic => c.classic.generation,
        GroupProtocol::Consumer => c.modern.epoch,
    }
}

fn coordinator_knows(w: &World, c: usize) -> bool {
    let g = &w.groups[w.consumers[c].group];
    g.classic.members.values().any(|m| m.c == c) || g.modern.members.iter().any(|m| m.c == c)
}

pub fn pending_text(w: &World, p: &Pending) -> String {
    match p {
        Pending::Assignors { group, names, generation } => {
            let Some(g) = w.find_group(group) else { return String::new() };
            let cg = &w.groups[g].classic;
            let list = names.join(", ");
            match cg.protocol_name.as_deref() {
                Some(chosen) if cg.generation > *generation && names.iter().any(|n| n == chosen) => {
                    let rebalance = w
                        .consumers
                        .iter()
                        .find(|c| c.group == g)
                        .map(|c| match rebalance_protocol(&c.config.assignors) {
                            RebalanceProtocol::Eager => "EAGER",
                            RebalanceProtocol::Cooperative => "COOPERATIVE",
                        })
                        .unwrap_or("EAGER");
                    format!("[{list}] applied: generation {} was assigned by {chosen} ({rebalance}).", cg.generation)
                }
                _ => format!(
                    "[{list}] applies at the next rebalance, which each member starts when its next poll() rejoins; {}.",
                    group_state(w, g)
                ),
            }
        }
        Pending::RemoteAssignor { group, name, target_epoch } => {
            let Some(g) = w.find_group(group) else { return String::new() };
            let mg = &w.groups[g].modern;
            if mg.target.epoch > *target_epoch && mg.assignor.is_some_and(|a| a.name() == name) {
                format!("{name} applied: the coordinator computed target epoch {} with it.", mg.target.epoch)
            } else {
                format!(
                    "{name} applies when the coordinator next computes a target assignment (after the members' next heartbeats); {}.",
                    group_state(w, g)
                )
            }
        }
        Pending::Protocol { group, protocol } => {
            let Some(g) = w.find_group(group) else { return String::new() };
            format!(
                "{group} now runs group.protocol={}: every running member was closed and started again and rejoins under it; {}.",
                protocol.name(),
                group_state(w, g)
            )
        }
        Pending::Subscription { client, what, generation } => {
            let Some(ci) = w.find_consumer(client) else { return String::new() };
            let c = &w.consumers[ci];
            if !c.running() {
                return format!("{client} is not running: {what} applies when it starts.");
            }
            if matches!(c.subscription, Some(SubscriptionSpec::Assign(_))) {
                return format!("{client} {what}: applies at once, outside group management; it owns {}.", owned_text(c));
            }
            let now = generation_of(c);
            let noun = if c.protocol == GroupProtocol::Classic { "generation" } else { "member epoch" };
            if now > *generation && !c.subs.assigned_partitions().is_empty() {
                format!("applied: {client} is at {noun} {now} with {what} and owns {}.", owned_text(c))
            } else if c.protocol == GroupProtocol::Classic {
                format!(
                    "{client} now asks for {what}; it applies at the next rebalance, which {client}'s next poll() starts; {}.",
                    group_state(w, c.group)
                )
            } else {
                format!(
                    "{client} sends {what} with its next heartbeat; it applies when the coordinator computes a new target; {}.",
                    group_state(w, c.group)
                )
            }
        }
        Pending::Lifecycle { client, what, at } => {
            let Some(ci) = w.find_consumer(client) else { return String::new() };
            lifecycle_text(w, ci, *what, *at)
        }
        Pending::Added { group, client } => {
            let Some(ci) = w.find_consumer(client) else { return String::new() };
            let c = &w.consumers[ci];
            if c.running() && !c.subs.assigned_partitions().is_empty() {
                format!("{client} joined {group} and owns {}.", owned_text(c))
            } else {
                format!(
                    "{client} joins {group}: it gets partitions at the next rebalance, which its JoinGroup starts; {}.",
                    group_state(w, c.group)
                )
            }
        }
        Pending::Pause { client, partition, paused } => {
            let Some(ci) = w.find_consumer(client) else { return String::new() };
            let c = &w.consumers[ci];
            let pos = c
                .subs
                .assigned_partitions()
                .iter()
                .find(|tp| format!("{}-{}", tp.topic, tp.partition) == *partition)
                .and_then(|tp| c.subs.state(tp))
                .and_then(|s| s.position)
                .map(|p| p.offset.to_string())
                .unwrap_or_else(|| "unknown".into());
            if *paused {
                format!("{client} paused {partition}: poll() returns nothing from it and no fetch is sent; its position stays at {pos}.")
            } else {
                format!("{client} resumed {partition}: it fetches again from position {pos}.")
            }
        }
        Pending::Seek { client, partition, call } => {
            let Some(ci) = w.find_consumer(client) else { return String::new() };
            let c = &w.consumers[ci];
            let state = c
                .subs
                .assigned_partitions()
                .iter()
                .find(|tp| format!("{}-{}", tp.topic, tp.partition) == *partition)
                .and_then(|tp| c.subs.state(tp));
            match state {
                Some(s) => {
                    let pos = s.position.map(|p| format!("position {}", p.offset)).unwrap_or_else(|| "no position yet".into());
                    format!("{client}.{call}: {partition} is {} now, {pos}.", s.fetch_state.name())
                }
                None => format!("{client}.{call}: {partition} is no longer assigned to {client}."),
            }
        }
        Pending::Partitions { topic, count } => {
            let running: Vec<&Consumer> = w.consumers.iter().filter(|c| c.running()).collect();
            let know = running.iter().filter(|c| c.meta.topics.get(topic.as_str()).is_some_and(|n| n == count)).count();
            let readers = running.iter().filter(|c| c.subs.subscription().contains(topic.as_str())).count();
            if readers == 0 || know == running.len() {
                format!("{topic} has {count} partitions, and every running consumer's metadata shows them.")
            } else {
                format!(
                    "{topic} has {count} partitions; consumers see them at their next metadata refresh ({know} of {} do already), then their groups rebalance.",
                    running.len()
                )
            }
        }
    }
}

fn lifecycle_text(w: &World, ci: usize, what: Lifecycle, at: Millis) -> String {
    let c = &w.consumers[ci];
    let client = &*c.name;
    let group = &*w.groups[c.group].name;
    let session = c.config.session_timeout_ms;
    let knows = coordinator_knows(w, ci);
    match what {
        Lifecycle::Start => match c.life {
            Life::Running if !c.subs.assigned_partitions().is_empty() => format!("{client} runs and owns {}.", owned_text(c)),
            Life::Running => format!("{client} started: it joins {group}; {}.", group_state(w, c.group)),
            _ => format!("{client} is {}.", life_word(c.life)),
        },
        Lifecycle::Stop => {
            let static_member = c.instance_id.as_deref();
            match (c.protocol, static_member, knows) {
                (_, Some(instance), true) => format!(
                    "{client} closed without leaving (static member {instance}): the coordinator keeps its partitions until session.timeout.ms ({}) runs out, at about {}; a restart before then causes no rebalance.",
                    secs(session),
                    secs(at + session)
                ),
                (GroupProtocol::Classic, None, true) => format!(
                    "{client} closed: it committed its offsets and sent LeaveGroup, so the coordinator rebalances {group}; {}.",
                    group_state(w, c.group)
                ),
                (GroupProtocol::Consumer, None, true) => {
                    format!("{client} closed and left with epoch -1: the coordinator moves its partitions to the others; {}.", group_state(w, c.group))
                }
                _ => format!("{client} closed and is no longer a member of {group}; {}.", group_state(w, c.group)),
            }
        }
        Lifecycle::Crash => {
            if knows {
                format!(
                    "{client} crashed: nothing committed, no LeaveGroup. The coordinator notices when session.timeout.ms ({}) expires, by about {}; until then nobody reads its partitions.",
                    secs(session),
                    secs(at + session)
                )
            } else {
                format!(
                    "{client} crashed and its session expired: the coordinator removed it; records it polled after its last commit are delivered again to the new owners. {}.",
                    capitalised(&group_state(w, c.group))
                )
            }
        }
    }
}

fn life_word(l: Life) -> &'static str {
    match l {
        Life::NotStarted => "not started",
        Life::Running => "running",
        Life::Stopped => "stopped",
        Life::Crashed => "crashed",
        Life::Failed => "failed",
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::super::lanes::tests::run;
    use super::*;

    #[test]
    fn an_assignor_change_says_when_it_applies() {
        let w = run("kafka-eager-join.json", Some(16_000));
        let p = Pending::Assignors { group: "billing".into(), names: vec!["cooperative-sticky".into()], generation: 1 };
        assert!(pending_text(&w, &p).contains("applies at the next rebalance"), "{}", pending_text(&w, &p));
        assert!(pending_text(&w, &p).contains("the group is in PREPARING_REBALANCE (generation 1)"));
        let p = Pending::Assignors { group: "billing".into(), names: vec!["range".into()], generation: 1 };
        let w = run("kafka-eager-join.json", None);
        assert!(
            pending_text(&w, &p).starts_with("[range] applied: generation 2 was assigned by range (EAGER)"),
            "{}",
            pending_text(&w, &p)
        );
    }

    #[test]
    fn lifecycle_feedback_follows_the_coordinator() {
        let w = run("kafka-crash-redelivery.json", Some(15_000));
        let p = Pending::Lifecycle { client: "c1".into(), what: Lifecycle::Crash, at: 14_300 };
        assert!(
            pending_text(&w, &p).contains("notices when session.timeout.ms (10.0 s) expires, by about 24.3 s"),
            "{}",
            pending_text(&w, &p)
        );
        let w = run("kafka-crash-redelivery.json", None);
        assert!(pending_text(&w, &p).contains("removed it"), "{}", pending_text(&w, &p));
        let w = run("kafka-static-membership.json", Some(13_000));
        let p = Pending::Lifecycle { client: "s2".into(), what: Lifecycle::Stop, at: 12_000 };
        assert!(pending_text(&w, &p).contains("static member host-2"), "{}", pending_text(&w, &p));
    }
}
