//! The Kafka seam against the history and the shared loaders, which live in mqviz-sim.

use serde_json::json;

use crate::history::History;
use crate::presets::by_file;
use crate::registry;
use mqviz_model::{self as model, log_line, Fate, Simulation, Trace};

fn render(sim: &dyn Simulation) -> String {
    (0..sim.log_len()).map(|i| log_line(sim, i) + "\n").collect()
}

/// Equal logs, or the first line where they part.
fn assert_same_log(a: &str, b: &str, what: &str) {
    if let Some((x, y)) = a.lines().zip(b.lines()).find(|(x, y)| x != y) {
        panic!("{what}: the logs part at\n  {x}\n  {y}");
    }
    assert_eq!(a.lines().count(), b.lines().count(), "{what}: one log is longer");
}

#[test]
fn trace_and_view_name_the_same_partitions_and_consumers() {
    let sim = registry::run(by_file("kafka-crash-redelivery.json").unwrap().text).unwrap();
    let view = sim.view();
    assert_eq!(sim.partition_noun(), "partition");
    let ids: Vec<u32> = view.topics.iter().flat_map(|t| t.partitions.iter().map(|p| p.id)).collect();
    let (mut stored, mut delivered, mut committed, mut heartbeats) = (0, 0, 0, 0);
    sim.trace(0, sim.log_len(), &mut |_, t| match t {
        Trace::Stored { partition, .. } => {
            assert!(ids.contains(&partition));
            stored += 1;
        }
        Trace::Delivered { partition, consumer, .. } => {
            assert!(ids.contains(&partition) && (consumer as usize) < view.consumers.len());
            delivered += 1;
        }
        Trace::Dropped { partition, .. } => assert!(ids.contains(&partition)),
        Trace::Committed { partition, group, .. } => {
            assert!(ids.contains(&partition) && (group as usize) < view.groups.len());
            committed += 1;
        }
        Trace::Heartbeat { consumer, broker } => {
            assert!((consumer as usize) < view.consumers.len() && (broker as usize) < view.brokers.len());
            heartbeats += 1;
        }
        Trace::Reassigned { consumer } | Trace::Lifecycle { consumer, .. } => {
            assert!((consumer as usize) < view.consumers.len())
        }
        Trace::Overwritten { .. } => panic!("Kafka has no overwritten tables"),
    });
    assert_eq!(stored, 300);
    assert!(delivered > 300, "redeliveries are deliveries too: {delivered}");
    assert!(committed > 10 && heartbeats > 10);
    // Each partition carries its high watermark, the group's committed offset and the owner's position.
    let p0 = &view.topics[0].partitions[0];
    let kinds: Vec<model::MarkKind> = p0.marks.iter().map(|m| m.kind).collect();
    assert!(kinds.contains(&model::MarkKind::HighWatermark) && kinds.contains(&model::MarkKind::Committed));
    assert!(kinds.contains(&model::MarkKind::Position));
    assert_eq!(p0.badge.as_deref(), Some("FETCHING"));
    let cells = sim.cells(p0.id, 0, p0.log_end);
    assert_eq!(cells.len() as u64, p0.log_end);
    assert!(cells.iter().any(|c| c.note == Some("delivered more than once to a group")));
    assert!(cells.iter().all(|c| c.fate == Fate::Consumed));
    let m = sim.message(cells[0].msg).unwrap();
    assert_eq!(m.label.as_deref(), cells[0].label.as_deref());
    assert!(sim.provenance(cells[0].msg).len() >= 2, "stored and polled");
    assert!(view.groups[0].lines[0].text.starts_with("classic · STABLE · generation 2"), "{:?}", view.groups[0].lines);
    assert!(view.consumers[1].lines.iter().any(|l| l.text.contains("payments-0 FETCHING")), "{:?}", view.consumers[1].lines);
    assert!(!sim.warnings().is_empty());
}

#[test]
fn seeking_back_with_commands_rebuilds_the_identical_run() {
    let mut w = registry::parse(by_file("kafka-cooperative-join.json").unwrap().text).unwrap();
    let mut h = History::new(&*w);
    h.seek(&mut w, 9_000);
    h.command(&mut w, json!({"action": "crashConsumer", "clientId": "c2"})).unwrap();
    h.seek(&mut w, 12_000);
    h.command(&mut w, json!({"action": "leaderChange", "partition": "orders-3"})).unwrap();
    h.seek(&mut w, 30_000);
    let reference = render(&*w);
    for t in [25_000, 15_000, 12_500, 30_000] {
        h.seek(&mut w, t);
    }
    assert_same_log(&render(&*w), &reference, "after seeking back and forth");
    assert!(reference.contains("consumer-crashed c2") && reference.contains("leader-changed orders-3"));
}
