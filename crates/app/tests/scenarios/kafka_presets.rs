//! The Kafka presets, each asserting the outcome it was written to show (issue 7, item 4).

use std::collections::{BTreeMap, BTreeSet};

use mqviz_app::presets::by_file;
use mqviz_kafka::events::Event;
use mqviz_kafka::scenario::parse_scenario;
use mqviz_kafka::world::{Life, World};
use mqviz_model::Simulation;
use serde_json::Value;

fn run(file: &str) -> World {
    let preset = by_file(file).unwrap_or_else(|| panic!("no preset {file}"));
    let mut w = World::new(parse_scenario(preset.text).unwrap_or_else(|e| panic!("{file}: {e:?}")));
    w.run_to_end();
    w
}

fn labels(parts: &[mqviz_kafka::events::Part]) -> Vec<String> {
    parts.iter().map(|p| p.label.to_string()).collect()
}

/// (event index, time, event) of every entry.
fn events(w: &World) -> impl Iterator<Item = (usize, u64, &Event)> {
    w.log.entries().iter().map(|e| (e.id.0 as usize, e.at, &e.kind))
}

#[test]
fn eager_join_revokes_all_twelve_and_stops_the_world() {
    let w = run("kafka-eager-join.json");
    let mut revoked: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut first_revoke = None;
    for (i, at, e) in events(&w) {
        if let Event::Revoked { client, partitions, reason, lost: false } = e {
            if reason.starts_with("EAGER") {
                revoked.insert(client.to_string(), labels(partitions));
                first_revoke.get_or_insert((i, at));
            }
        }
    }
    let all: BTreeSet<&String> = revoked.values().flatten().collect();
    assert_eq!(all.len(), 12, "every partition is revoked: {revoked:?}");
    assert_eq!(revoked.keys().cloned().collect::<Vec<_>>(), ["c1", "c2", "c3"]);
    let (first_i, first_at) = first_revoke.expect("an eager revocation");
    let (last_i, last_at) = events(&w)
        .filter(|(_, _, e)| matches!(e, Event::Assigned { generation: 2, .. }))
        .map(|(i, at, _)| (i, at))
        .last()
        .expect("generation 2");
    let polled_during = events(&w).filter(|(i, _, e)| *i > first_i && *i < last_i && matches!(e, Event::Polled { .. })).count();
    assert_eq!(polled_during, 0, "nobody polls a record during an eager rebalance");
    assert!(last_at - first_at > 1_000, "the slow member holds the whole group: {} ms", last_at - first_at);
    for c in &w.consumers {
        assert_eq!(c.subs.assigned_partitions().len(), 3, "{} ends with 3 partitions", c.client_id);
    }
    let report = w.report();
    assert_eq!(report["duplicateCount"], 0);
    assert!(report["groups"]["billing"]["warnings"][0].as_str().unwrap().contains("EAGER"));
}

#[test]
fn cooperative_join_moves_exactly_three_over_two_rebalances() {
    let w = run("kafka-cooperative-join.json");
    let mut moved = BTreeSet::new();
    let mut gen2: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    let mut gen3_added: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, _, e) in events(&w) {
        match e {
            Event::Revoked { partitions, .. } => moved.extend(labels(partitions)),
            Event::Assigned { client, generation: 2, revoked, added, .. } => {
                gen2.insert(client.to_string(), (labels(revoked), labels(added)));
            }
            Event::Assigned { client, generation: 3, added, .. } => {
                gen3_added.insert(client.to_string(), labels(added));
            }
            _ => {}
        }
    }
    assert_eq!(moved.len(), 3, "only three partitions ever leave a member: {moved:?}");
    for c in ["c1", "c2", "c3"] {
        assert_eq!(gen2[c].0.len(), 1, "{c} gives up one partition in generation 2");
        assert!(gen2[c].1.is_empty(), "{c} gains nothing");
        assert!(gen3_added[c].is_empty(), "{c} gains nothing in generation 3");
    }
    assert!(gen2["c4"].1.is_empty(), "the moved partitions are unowned for one round");
    let c4: BTreeSet<String> = gen3_added["c4"].iter().cloned().collect();
    assert_eq!(c4, moved.iter().cloned().collect::<BTreeSet<_>>(), "the second rebalance hands them to c4");
    // c1 and c2 keep fetching while the rebalance waits for the slow c3.
    let start = events(&w)
        .find(|(_, _, e)| matches!(e, Event::GroupStateChanged { to: "PREPARING_REBALANCE", reason, .. } if reason.contains("adding new member c4")))
        .map(|(i, _, _)| i)
        .expect("c4 starts a rebalance");
    let end =
        events(&w).filter(|(_, _, e)| matches!(e, Event::Assigned { generation: 3, .. })).map(|(i, _, _)| i).last().unwrap();
    for c in ["c1", "c2"] {
        let n = events(&w)
            .filter(|(i, _, e)| *i > start && *i < end && matches!(e, Event::Polled { client, .. } if &**client == c))
            .count();
        assert!(n > 10, "{c} polled only {n} times during the rebalances");
    }
    // Records read twice are on moved partitions only (no commit in onPartitionsRevoked).
    let report = w.report();
    for d in report["duplicates"].as_array().unwrap() {
        let p = format!("{}-{}", d["topic"].as_str().unwrap(), d["partition"]);
        assert!(moved.contains(&p), "duplicate on a partition that did not move: {d}");
    }
}

#[test]
fn fetch_states_shows_every_state_and_transition() {
    let w = run("kafka-fetch-states.json");
    let mut transitions = BTreeSet::new();
    for (_, _, e) in events(&w) {
        if let Event::FetchStateChanged { from, to, .. } = e {
            transitions.insert((*from, *to));
        }
    }
    for t in [
        ("UNASSIGNED", "INITIALIZING"),
        ("INITIALIZING", "AWAIT_RESET"),
        ("AWAIT_RESET", "FETCHING"),
        ("FETCHING", "AWAIT_VALIDATION"),
        ("AWAIT_VALIDATION", "FETCHING"),
        ("FETCHING", "AWAIT_RESET"),
        ("FETCHING", "FETCHING"),
        ("INITIALIZING", "AWAIT_VALIDATION"),
        ("INITIALIZING", "FETCHING"),
    ] {
        assert!(transitions.contains(&t), "missing transition {t:?}; have {transitions:?}");
    }
    let text: Vec<String> = (0..w.log_len()).map(|i| w.log_text(i)).collect();
    let has = |needle: &str| text.iter().any(|t| t.contains(needle));
    // The clean leader change: validation finds the position safe.
    assert!(has("fetch-state reader-1 events-0 FETCHING -> AWAIT_VALIDATION"));
    assert!(has("fetch-state reader-1 events-0 AWAIT_VALIDATION -> FETCHING position 38 (validation: epoch 0 ends at 38"));
    // The unclean election: reader-1 rewinds to the divergence point, the auditor (none) throws.
    assert!(has("truncated events-1 to 50"));
    assert!(has("fetch-state reader-1 events-1 AWAIT_VALIDATION -> FETCHING position 50"));
    assert!(has("log-truncation auditor events-1"));
    assert!(has("poll-threw auditor LogTruncationException"));
    let auditor = w.consumers.iter().find(|c| &*c.client_id == "auditor").unwrap();
    assert_eq!(auditor.life, Life::Failed);
    // The second reader starts from the committed offsets, validating their epochs first.
    assert!(has("fetch-state reader-2 events-0 INITIALIZING -> AWAIT_VALIDATION"));
    assert!(has("fetch-state reader-2 events-1 INITIALIZING -> AWAIT_VALIDATION"));
    let report = w.report();
    let states: Vec<&str> = report["consumers"]["reader-1"]["fetchStates"]["events-1"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(&states[..5], ["INITIALIZING", "AWAIT_RESET", "FETCHING", "AWAIT_VALIDATION", "FETCHING"]);
}

#[test]
fn new_group_at_latest_skips_what_was_produced_before() {
    let w = run("kafka-new-group-latest.json");
    let report = w.report();
    let unconsumed = report["unconsumed"].as_array().unwrap();
    assert!(unconsumed.len() > 100, "{}", unconsumed.len());
    for u in unconsumed {
        assert_eq!(u["group"], "analytics");
        let reason = u["reason"].as_str().unwrap();
        assert!(reason.contains("reset to latest") && reason.contains("no committed offset"), "{reason}");
        assert!(!u["events"].as_array().unwrap().is_empty());
    }
    let audit = w.consumers.iter().find(|c| &*c.client_id == "audit-1").unwrap();
    assert_eq!(audit.consumed, 200, "earliest reads everything");
    let analytics = w.consumers.iter().find(|c| &*c.client_id == "analytics-1").unwrap();
    assert_eq!(analytics.consumed as usize + unconsumed.len(), 200, "latest reads exactly what came after");
    assert!(report["groups"]["analytics"]["warnings"][0].as_str().unwrap().contains("skipped"));
}

#[test]
fn crash_inside_the_auto_commit_window_redelivers() {
    let w = run("kafka-crash-redelivery.json");
    let report = w.report();
    let dups = report["duplicates"].as_array().unwrap();
    assert!(dups.len() >= 5, "{}", dups.len());
    let last_commit_by_c1 = events(&w)
        .filter(|(_, _, e)| matches!(e, Event::Committed { client, .. } if &**client == "c1"))
        .map(|(_, at, _)| at)
        .last()
        .unwrap();
    for d in dups {
        let deliveries = d["deliveries"].as_array().unwrap();
        assert_eq!(deliveries[0]["client"], "c1");
        assert_eq!(deliveries[1]["client"], "c2");
        let first = deliveries[0]["at"].as_u64().unwrap();
        assert!(
            first < 14_300 && first + 5_000 > last_commit_by_c1,
            "read by c1 at {first}, after its last commit at {last_commit_by_c1}"
        );
        let reason = d["reason"].as_str().unwrap();
        assert!(reason.contains("c1 crashed at t=14300") && reason.contains("read again by c2"), "{reason}");
    }
    assert_eq!(report["unconsumedCount"], 0);
}

#[test]
fn static_member_restart_causes_no_rebalance() {
    let w = run("kafka-static-membership.json");
    let static_generations: BTreeSet<i32> = events(&w)
        .filter_map(|(_, _, e)| match e {
            Event::JoinCompleted { group, generation, .. } if &**group == "static-group" => Some(*generation),
            _ => None,
        })
        .collect();
    assert_eq!(static_generations, BTreeSet::from([1]), "the static group never rebalances again");
    assert!(events(&w).any(|(_, _, e)| matches!(e, Event::StaticMemberReplaced { rebalance: false, .. })));
    let s2: Vec<Vec<String>> = events(&w)
        .filter_map(|(_, _, e)| match e {
            Event::Assigned { client, assigned, .. } if &**client == "s2" => Some(labels(assigned)),
            _ => None,
        })
        .collect();
    assert_eq!(s2.len(), 2);
    assert_eq!(s2[0], s2[1], "s2 gets its partitions back");
    let g = w.groups.iter().find(|g| &*g.name == "dynamic-group").unwrap();
    assert_eq!(g.classic.generation, 3, "the dynamic group pays two rebalances");
}

#[test]
fn kip848_revokes_before_assigning() {
    let w = run("kafka-kip848-reconciliation.json");
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    let mut unreleased_seen = false;
    let mut handovers = 0;
    for (_, _, e) in events(&w) {
        match e {
            Event::Reconciled { client, revoked, added, .. } => {
                for p in labels(revoked) {
                    assert_eq!(owner.remove(&p).as_deref(), Some(&**client), "{client} revokes {p} it owns");
                }
                for p in labels(added) {
                    if let Some(other) = owner.get(&p) {
                        panic!("{client} gets {p} while {other} still owns it");
                    }
                    owner.insert(p, client.to_string());
                    handovers += 1;
                }
            }
            Event::Revoked { client, partitions, .. } => {
                for p in labels(partitions) {
                    if owner.get(&p).map(String::as_str) == Some(&**client) {
                        owner.remove(&p);
                    }
                }
            }
            Event::MemberReconciled { client, state: "UNRELEASED_PARTITIONS", .. } if &**client == "c3" => unreleased_seen = true,
            _ => {}
        }
    }
    assert!(unreleased_seen, "c3 waits UNRELEASED until the old owners let go");
    assert!(handovers >= 8, "{handovers}");
    // The static leave keeps the assignment: no group epoch between leaving and coming back.
    let leave = events(&w).find(|(_, _, e)| matches!(e, Event::StaticMemberLeft { .. })).map(|(i, _, _)| i).expect("epoch -2");
    let back = events(&w)
        .find(|(i, _, e)| *i > leave && matches!(e, Event::StaticMemberReplaced { rebalance: false, .. }))
        .map(|(i, _, _)| i)
        .expect("c3 takes its assignment back");
    assert!(!events(&w).any(|(i, _, e)| i > leave && i < back && matches!(e, Event::GroupEpochBumped { .. })));
}

#[test]
fn report_has_the_issue_shape() {
    let w = run("kafka-crash-redelivery.json");
    let r: Value = w.report();
    let c1 = &r["consumers"]["c1"];
    assert_eq!(c1["group"], "ledger");
    let rec = &c1["consumed"][0];
    for k in ["topic", "partition", "offset", "key", "value"] {
        assert!(!rec[k].is_null(), "consumed record lacks {k}: {rec}");
    }
    let fs = c1["fetchStates"]["payments-0"][0].clone();
    for k in ["at", "state", "position"] {
        assert!(fs.get(k).is_some(), "fetch state lacks {k}: {fs}");
    }
    let g = &r["groups"]["ledger"];
    assert_eq!(g["protocol"], "classic");
    assert_eq!(g["rebalanceProtocol"], "EAGER");
    let gen = &g["generations"][0];
    for k in ["generation", "at", "assignment", "revoked", "added"] {
        assert!(gen.get(k).is_some(), "generation lacks {k}: {gen}");
    }
    assert!(g["assignment"]["payments"]["0"].is_string());
    assert!(g["committed"]["payments-0"].is_u64());
    assert!(g["warnings"].is_array());
    assert!(r["unconsumed"].is_array() && r["duplicates"].is_array());
    assert!(r["duplicates"][0]["events"].as_array().is_some_and(|e| e.len() >= 3), "reasons cite event ids");
}
