//! The tolerance corpus (`tests/import/`): every directory is one import of all its `.txt`
//! captures, compared with its `expected.golden` (the notes, then the scenario). Set
//! `MQVIZ_BLESS=1` to rewrite the golden files after a deliberate change, and read the diff.

use std::path::{Path, PathBuf};

use super::*;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/import")
}

fn captures(dir: &Path) -> Vec<Capture> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| Capture {
            name: p.file_name().unwrap().to_string_lossy().into_owned(),
            text: std::fs::read_to_string(&p).unwrap(),
            format: Format::Auto,
        })
        .collect()
}

fn rendered(result: Result<Imported, ImportError>) -> String {
    match result {
        Ok(i) => {
            let notes: Vec<String> = i.notes.iter().map(ToString::to_string).collect();
            format!("{}\n---\n{}\n", notes.join("\n"), serde_json::to_string_pretty(&i.scenario).unwrap())
        }
        Err(e) => format!("error: {e}\n"),
    }
}

#[test]
fn every_capture_in_the_corpus_imports_as_its_golden_file_says() {
    let bless = std::env::var_os("MQVIZ_BLESS").is_some();
    let mut cases = 0;
    let mut family: Vec<PathBuf> = std::fs::read_dir(corpus()).unwrap().map(|e| e.unwrap().path()).collect();
    family.sort();
    for broker in family.into_iter().filter(|p| p.is_dir()) {
        let mut dirs: Vec<PathBuf> =
            std::fs::read_dir(&broker).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
        dirs.sort();
        for dir in dirs {
            let got = rendered(import(&captures(&dir)));
            let golden = dir.join("expected.golden");
            if bless {
                std::fs::write(&golden, &got).unwrap();
            }
            let want = std::fs::read_to_string(&golden).unwrap_or_default();
            assert_eq!(got, want, "{} differs from its golden file (MQVIZ_BLESS=1 rewrites it)", dir.display());
            cases += 1;
        }
    }
    assert!(cases >= 7, "the corpus holds {cases} cases");
}

/// Import the 3.7 group, run it to t=1, and read the same members, owners and offsets back.
#[test]
fn a_combined_import_reproduces_the_snapshot_at_t_1() {
    let dir = corpus().join("kafka/describe-members-state-3.7");
    let imported = import(&captures(&dir)).unwrap();
    let mut sim = crate::registry::load(&imported.scenario.to_string()).unwrap().sim;
    sim.run_until(1);
    let report = sim.report();
    let g = &report["groups"]["billing"];
    assert_eq!((g["state"].as_str(), g["assignor"].as_str()), (Some("STABLE"), Some("range")));
    assert_eq!(g["assignment"]["orders"]["0"], "consumer-billing-1");
    assert_eq!(g["assignment"]["orders"]["2"], "consumer-billing-2");
    assert_eq!(g["assignment"]["payments"]["0"], "consumer-billing-2");
    assert_eq!(g["committed"]["orders-0"], 1195);
    assert_eq!(g["committed"]["orders-2"], 1150);
    assert!(g["committed"].get("payments-0").is_none(), "`-` in CURRENT-OFFSET: nothing committed");
    assert_eq!(g["lag"]["orders-2"]["now"], 60);
    let c3 = &report["consumers"]["consumer-billing-3"];
    assert_eq!(c3["memberId"], "consumer-billing-3-9a8b7c6d-5e4f-4321-8fed-cba987654333");
    assert_eq!(c3["assigned"].as_array().map(Vec::len), Some(0));
    // A KIP-848 group: at its group epoch, Stable, each member at the target.
    let imported = import(&captures(&corpus().join("kafka/members-state-4.1-kip848"))).unwrap();
    let mut sim = crate::registry::load(&imported.scenario.to_string()).unwrap().sim;
    sim.run_until(1);
    let report = sim.report();
    let g = &report["groups"]["fraud"];
    assert_eq!((g["state"].as_str(), g["groupEpoch"].as_i64(), g["targetEpoch"].as_i64()), (Some("STABLE"), Some(7), Some(7)));
    assert_eq!(g["assignment"]["tx"]["1"], "fraud-1");
    assert_eq!(g["assignment"]["tx"]["2"], "fraud-2");
    assert_eq!(report["consumers"]["fraud-2"]["memberId"], "Yl2qA3z4RxXr1bC2dE3fGh");
}

/// Every prefix of each capture (a table cut anywhere), and 300 copies with cells swapped for
/// what captures mangle into them (`junk`, drawn from `seed`), read or fail cleanly: each result
/// is a scenario or an error, never a panic.
fn survives_cuts_and_manglings(texts: &[&String], seed: u64, junk: &[&str]) {
    let one = |text: &str| import(&[Capture { name: "paste".into(), text: text.into(), format: Format::Auto }]);
    for text in texts {
        for cut in (0..text.len()).filter(|i| text.is_char_boundary(*i)) {
            let _ = one(&text[..cut]);
        }
    }
    let mut rng = mqviz_engine::SplitMix64::new(seed);
    for text in texts {
        for _ in 0..300 {
            let mangled: String = text
                .split_inclusive(' ')
                .map(|cell| if rng.next_u64() % 9 == 0 { junk[(rng.next_u64() % junk.len() as u64) as usize] } else { cell })
                .collect();
            let _ = one(&mangled);
        }
    }
}

#[test]
fn bad_input_is_an_error_with_its_line_never_a_panic() {
    let one = |text: &str, format: Format| import(&[Capture { name: "paste".into(), text: text.into(), format }]);
    let e = one("hello\nworld\n", Format::Auto).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("paste", 1));
    assert!(e.message.contains("not recognised"), "{e}");
    let e = one("\n\n\u{0}\u{1}\u{2}binary", Format::Auto).unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    let describe = std::fs::read_to_string(corpus().join("kafka/describe-members-state-3.7/describe.txt")).unwrap();
    let e = one(&describe, Format::KafkaMembers).unwrap_err();
    assert!(e.message.contains("kafka-describe"), "the wrong --format is named: {e}");
    assert!(one("", Format::Auto).is_err());
    // Numbers no topic or offset can be: the row is set aside or the cell read as none, no overflow.
    let odd = "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n\
               g t 4294967295 1 2 1 m /h c\n\
               g t 0 99999999999999999999 x - m /h c\n";
    let imported = one(odd, Format::Auto).unwrap();
    let text: Vec<String> = imported.notes.iter().map(ToString::to_string).collect();
    assert!(text.iter().any(|n| n.starts_with("paste:2: unused: partition 4294967295 is beyond")), "{text:?}");
    assert!(text.iter().any(|n| n.contains("CURRENT-OFFSET \"99999999999999999999\" is not an offset")), "{text:?}");
    assert_eq!(imported.scenario["topics"][0]["partitions"], 1);
    let members = std::fs::read_to_string(corpus().join("kafka/describe-members-state-3.7/members.txt")).unwrap();
    let junk = ["-", "(", ")", "/", ":", "(0,", "t(1),u(", "18446744073709551616", "", "é", "GROUP", "\t", "';"];
    survives_cuts_and_manglings(&[&describe, &members], 7, &junk);
    // A 50 MB paste of rows is read (well under a second for 10,000 partitions, measured apart).
    let big: String =
        std::iter::once("GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n".to_string())
            .chain((0..10_000).map(|p| format!("g big {p} 5 9 4 m-{} /10.0.0.1 c-{}\n", p % 50, p % 50)))
            .collect();
    let imported = one(&big, Format::Auto).unwrap();
    assert_eq!(imported.scenario["topics"][0]["partitions"], 10_000);
}

/// Import the 4.9.7 group (consumerProgress -s true with consumerConnection), run it to t=1, and
/// read the same members, owners, committed and max offsets back.
#[test]
fn a_combined_rocketmq_import_reproduces_the_snapshot_at_t_1() {
    let imported = import(&captures(&corpus().join("rocketmq/progress-connection-4.9.7"))).unwrap();
    let mut sim = crate::registry::load(&imported.scenario.to_string()).unwrap().sim;
    sim.run_until(1);
    let report = sim.report();
    let g = &report["groups"]["billing_group"];
    assert_eq!(g["strategy"], "AVG");
    assert_eq!(g["subscriptionTable"]["OrderTopic"]["expression"], "TagA || TagB", "{g:#}");
    for q in 0..4 {
        assert_eq!(g["assignment"]["OrderTopic"][format!("broker-a:{q}")], "10.0.0.11@31415", "{g:#}");
        assert_eq!(g["assignment"]["OrderTopic"][format!("broker-b:{q}")], "10.0.0.12@27182", "{g:#}");
    }
    let queues: Vec<&serde_json::Value> =
        report["queues"].as_array().unwrap().iter().filter(|q| q["topic"] == "OrderTopic").collect();
    assert_eq!(queues.len(), 8);
    for row in queues {
        let q = row["queueId"].as_u64().unwrap();
        assert_eq!(row["maxOffset"], 1200 + q, "{row}");
        assert_eq!(row["committed"]["billing_group"], 1190 + q, "{row}");
    }
}

/// The design review the import is for: on the imported group, one member switching its tag
/// loses messages (exit 1); a member added with the table's subscription is safe (exit 0).
#[test]
fn reviews_of_an_imported_rocketmq_group_give_their_verdicts() {
    let imported = import(&captures(&corpus().join("rocketmq/progress-connection-4.9.7"))).unwrap();
    let review_with = |timeline: serde_json::Value| {
        let mut v = imported.scenario.clone();
        v["producers"] = serde_json::json!([{"id": "p", "sends": [{"at": 10000, "topic": "OrderTopic", "tag": "TagA", "count": 40, "intervalMs": 100}]}]);
        v["timeline"] = timeline;
        let start = crate::registry::parse(&v.to_string()).unwrap();
        crate::review::review(&*start, start.until(), crate::review::change_at(&v))
    };
    let switched = review_with(
        serde_json::json!([{"at": 5000, "action": "subscribe", "consumer": "10.0.0.12@27182", "topic": "OrderTopic", "expression": "TagB"}]),
    );
    assert!(switched.risky() && !switched.lost.is_empty(), "{}", switched.text());
    assert!(switched.lost.iter().all(|f| f.reason.contains("subscription table")), "{}", switched.text());
    // Added once the backlog is read and its offsets persisted (every 5 s): a member added while
    // the backlog is read takes queues whose committed offsets lag, and re-reads (a true risk).
    let added = review_with(serde_json::json!([{"at": 30000, "action": "addConsumer", "group": "billing_group",
        "consumer": {"clientId": "10.0.0.13@16180", "subscriptions": {"OrderTopic": "TagA || TagB"}}}]));
    assert!(!added.risky(), "{}", added.text());
    assert!(added.moves.iter().any(|m| m.to == "10.0.0.13@16180"), "{}", added.text());
}

#[test]
fn bad_rocketmq_input_is_an_error_with_its_line_never_a_panic() {
    let one = |text: &str, format: Format| import(&[Capture { name: "paste".into(), text: text.into(), format }]);
    let progress = std::fs::read_to_string(corpus().join("rocketmq/progress-connection-4.9.7/progress.txt")).unwrap();
    let connection = std::fs::read_to_string(corpus().join("rocketmq/progress-connection-4.9.7/connection.txt")).unwrap();
    let log = std::fs::read_to_string(corpus().join("rocketmq/progress-log-5.1-inflight/rebalance.txt")).unwrap();
    // The wrong --format for the text, binary data, a capture of another broker's tool.
    let e = one(&progress, Format::RocketmqConnection).unwrap_err();
    assert!(e.message.contains("consumerConnection"), "{e}");
    let e = one(&connection, Format::RocketmqProgress).unwrap_err();
    assert!(e.message.contains("consumerProgress"), "{e}");
    let e = one("#Topic  #Broker Name  #QID\n\u{0}\u{1}", Format::Auto);
    assert!(e.is_ok_and(|i| i.notes.iter().any(|n| n.text.contains("control characters"))));
    let e = one("\u{0}\u{1}#Topic", Format::RocketmqProgress).unwrap_err();
    assert_eq!(e.line, 1, "{e}");
    let kafka = std::fs::read_to_string(corpus().join("kafka/describe-members-state-3.7/describe.txt")).unwrap();
    let e = import(&[
        Capture { name: "p.txt".into(), text: progress.clone(), format: Format::Auto },
        Capture { name: "k.txt".into(), text: kafka, format: Format::Auto },
    ])
    .unwrap_err();
    assert!(e.file == "k.txt" && e.message.contains("one broker at a time"), "{e}");
    // Two groups in one import: the second names its line.
    let other = progress.replace("%RETRY%billing_group", "%RETRY%audit");
    let e = import(&[
        Capture { name: "a.txt".into(), text: progress.clone(), format: Format::Auto },
        Capture { name: "b.txt".into(), text: other, format: Format::Auto },
    ])
    .unwrap_err();
    assert!(e.file == "b.txt" && e.line > 0 && e.message.contains("one group at a time"), "{e}");
    let junk = ["-", "N/A", "#", "[", "]", "MessageQueue [", "=", "4294967296", "-1", "", "é", "#Topic", "\t", ":", "%RETRY%"];
    survives_cuts_and_manglings(&[&progress, &connection, &log], 11, &junk);
    // Out-of-range numbers are set aside with a note.
    let odd = "#Topic  #Broker Name  #QID  #Broker Offset  #Consumer Offset  #Diff  #LastTime\n\
               T  broker-a  70000  5  4  1  N/A\n\
               T  broker-a  0  99999999999  4  1  N/A\n\
               T  broker-a  1  9  x  1  N/A\n";
    let imported = one(odd, Format::Auto).unwrap();
    let text: Vec<String> = imported.notes.iter().map(ToString::to_string).collect();
    assert!(text.iter().any(|n| n.starts_with("paste:2: unused: queue id 70000 is out of range")), "{text:?}");
    assert!(text.iter().any(|n| n.starts_with("paste:3: unused: broker offset 99999999999 is out of range")), "{text:?}");
    assert!(text.iter().any(|n| n.starts_with("paste:4: unused: \"x\" in #Consumer Offset")), "{text:?}");
    // 10,000 queues read and open as a scenario.
    let big: String =
        std::iter::once("#Topic  #Broker Name  #QID  #Broker Offset  #Consumer Offset  #Diff  #LastTime\n".to_string())
            .chain((0..10_000).map(|q| format!("big  broker-a  {q}  9  5  4  N/A\n")))
            .collect();
    let imported = one(&big, Format::Auto).unwrap();
    assert_eq!(imported.scenario["topics"][0]["queues"], 10_000);
}

/// Captures pasted one after another (the page's paste box) read as if given as files.
#[test]
fn rocketmq_captures_pasted_together_read_as_separate_files() {
    let dir = corpus().join("rocketmq/progress-connection-4.7-cut");
    let files = captures(&dir);
    let pasted = files.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join("\n");
    let together = import(&[Capture { name: "paste".into(), text: pasted, format: Format::Auto }]).unwrap();
    let apart = import(&files).unwrap();
    let without_description = |mut v: serde_json::Value| {
        v["description"] = serde_json::Value::Null;
        v
    };
    assert_eq!(without_description(together.scenario), without_description(apart.scenario));
    assert!(together.notes.iter().any(|n| n.text.contains("cut to 32 characters")), "{:?}", together.notes);
}

/// Found reading the code: a header whose looked-up column is its last, with a row one cell
/// short, indexed past the row; a log line's queue id of u32::MAX overflowed the queue count.
#[test]
fn short_rocketmq_rows_and_huge_queue_ids_are_notes_not_panics() {
    let one = |text: &str| import(&[Capture { name: "paste".into(), text: text.into(), format: Format::Auto }]);
    let _ = one("#Topic  #Broker Name  #QID\nT b\n");
    let _ = one("#Topic  #Broker Name  #QID  #Broker Offset  #Consumer Offset\nT b 0 5\n");
    let log = "x rebalanced result changed. allocateMessageQueueStrategyName=AVG, group=g, topic=T, clientId=1.1.1.1@1, \
               mqAllSize=1, cidAllSize=1, rebalanceResultSize=1, rebalanceResultSet=[MessageQueue [topic=T, brokerName=b, queueId=4294967295]]\n";
    let imported = one(log);
    if let Ok(i) = &imported {
        assert!(i.scenario["topics"][0]["queues"].as_u64().unwrap_or(0) <= 65_536, "{}", i.scenario);
    }
}

/// Import the 3.0 partitioned Failover topic (partitioned-stats with -internal), run it to t=1,
/// and read back the active consumer of each partition, the cursors and the backlog stats gave.
#[test]
fn a_combined_pulsar_import_reproduces_the_snapshot_at_t_1() {
    let imported = import(&captures(&corpus().join("pulsar/stats-3.0-failover-partitioned"))).unwrap();
    let mut sim = crate::registry::load(&imported.scenario.to_string()).unwrap().sim;
    sim.run_until(1);
    let report = sim.report();
    let sub = report["subscriptions"].as_array().unwrap().iter().find(|s| s["subscription"] == "billing").unwrap();
    assert_eq!(sub["type"], "Failover");
    let owners: Vec<&str> = sub["owners"].as_array().unwrap().iter().map(|o| o["owner"].as_str().unwrap()).collect();
    assert_eq!(owners, ["billing-worker-1", "billing-worker-2", "billing-worker-1"], "activeConsumerName per partition");
    let parts = sub["partitions"].as_array().unwrap();
    // msgBacklog of each partition's stats, and the hole stats-internal printed on partition 1.
    let backlog: Vec<u64> = parts.iter().map(|p| p["backlog"].as_u64().unwrap()).collect();
    assert_eq!(backlog, [22, 34, 1175]);
    assert_eq!(parts[1]["ackHoles"].as_array().map(Vec::len), Some(1), "{}", parts[1]);
    // Key_Shared 4.0: the ranges the capture printed are the ones the run holds.
    let imported = import(&captures(&corpus().join("pulsar/stats-4.0-key-shared-arrays"))).unwrap();
    let claimed = imported.scenario["subscriptions"][1]["keyHashRanges"].clone();
    assert!(claimed.as_object().is_some_and(|o| o.len() == 3), "{claimed}");
    let mut sim = crate::registry::load(&imported.scenario.to_string()).unwrap().sim;
    sim.run_until(1);
    let report = sim.report();
    let sub = report["subscriptions"].as_array().unwrap().iter().find(|s| s["subscription"] == "stock-sync").unwrap();
    for r in sub["keyRanges"].as_array().unwrap() {
        let name = r["consumer"].as_str().unwrap();
        assert_eq!(r["ranges"], claimed[name], "{name}");
    }
}

/// A review on the imported Failover topic: a third worker joining moves active consumers, and
/// the verdict says what the rewind redelivers; stopping the only consumer of an Exclusive
/// subscription leaves its partition without an owner.
#[test]
fn reviews_of_an_imported_pulsar_topic_give_their_verdicts() {
    let imported = import(&captures(&corpus().join("pulsar/stats-3.0-failover-partitioned"))).unwrap();
    let review_with = |scenario: &serde_json::Value, timeline: serde_json::Value| {
        let mut v = scenario.clone();
        v["timeline"] = timeline;
        let start = crate::registry::parse(&v.to_string()).unwrap();
        crate::review::review(&*start, start.until(), crate::review::change_at(&v))
    };
    let joined = review_with(
        &imported.scenario,
        serde_json::json!([{"at": 30000, "action": "addConsumer", "consumer": {"name": "billing-worker-3",
            "topic": "persistent://acme/retail/orders", "subscription": "billing", "subscriptionType": "Failover"}}]),
    );
    assert!(joined.moves.iter().any(|m| m.to == "billing-worker-3"), "{}", joined.text());
    assert!(joined.lost.is_empty(), "{}", joined.text());
    let exclusive = import(&captures(&corpus().join("pulsar/stats-only-exclusive"))).unwrap();
    let stopped =
        review_with(&exclusive.scenario, serde_json::json!([{"at": 1, "action": "closeConsumer", "consumer": "archiver-1"}]));
    assert!(stopped.risky(), "{}", stopped.text());
}

#[test]
fn bad_pulsar_input_is_an_error_with_its_line_never_a_panic() {
    let one = |text: &str, format: Format| import(&[Capture { name: "paste".into(), text: text.into(), format }]);
    let dir = corpus().join("pulsar/stats-2.10-key-shared-strings");
    let stats = std::fs::read_to_string(dir.join("stats.txt")).unwrap();
    let internal = std::fs::read_to_string(dir.join("stats-internal.txt")).unwrap();
    // Cut in the middle: the line where the JSON stops.
    let cut = &stats[..stats.len() / 2];
    let e = one(cut, Format::Auto).unwrap_err();
    assert!(e.line > 1 && e.message.contains("ends before it closes"), "{e}");
    // The wrong --format for the text.
    let e = one(&stats, Format::PulsarStatsInternal).unwrap_err();
    assert!(e.message.contains("topics stats"), "{e}");
    let e = one(&internal, Format::PulsarStats).unwrap_err();
    assert!(e.message.contains("stats-internal"), "{e}");
    // Binary after a brace, and JSON that is no stats at all.
    let e = one("{\n\u{0}\u{1}\u{2}", Format::PulsarStats).unwrap_err();
    assert!(e.line >= 1, "{e}");
    let e = one("$ pulsar-admin topics stats t\n{\n  \"hello\" : 1\n}\n", Format::Auto).unwrap_err();
    assert!(e.line == 2 && e.message.contains("neither topics stats nor stats-internal"), "{e}");
    // A partition count or index no scenario holds is an error with its line, built from nothing.
    let e =
        one("{ \"metadata\" : { \"partitions\" : 4294967295 }, \"partitions\" : { \"x\" : { } } }", Format::Auto).unwrap_err();
    assert!(e.line == 1 && e.message.contains("4294967295 partitions is more than the 1024"), "{e}");
    let e =
        one("$ pulsar-admin topics stats persistent://t/n/x-partition-99999999999\n{ \"subscriptions\" : { } }", Format::Auto)
            .unwrap_err();
    assert!(e.line == 2 && e.message.contains("partitions is more than"), "{e}");
    // A Pulsar capture with a Kafka one.
    let kafka = std::fs::read_to_string(corpus().join("kafka/describe-members-state-3.7/describe.txt")).unwrap();
    let e = import(&[
        Capture { name: "s.txt".into(), text: stats.clone(), format: Format::Auto },
        Capture { name: "k.txt".into(), text: kafka, format: Format::Auto },
    ])
    .unwrap_err();
    assert!(e.file == "k.txt" && e.message.contains("one broker at a time"), "{e}");
    let junk = ["{", "}", "[", "]", "\"", ":", ",", "null", "-1", "9223372036854775808", "\"157:-1..\"", "‥", "", "é"];
    survives_cuts_and_manglings(&[&stats, &internal], 13, &junk);
    // Both documents pasted together read as the two files do.
    let together = one(&format!("{stats}\n{internal}"), Format::Auto).unwrap();
    assert_eq!(together.scenario["subscriptions"], import(&captures(&dir)).unwrap().scenario["subscriptions"]);
}

/// 1,024 partitions (the most a scenario has) with a million entries: read, and opened.
#[test]
fn a_large_partitioned_pulsar_capture_reads_and_opens() {
    let mut parts = Vec::new();
    let mut internal = Vec::new();
    for p in 0..1024 {
        let name = format!("persistent://t/ns/big-partition-{p}");
        parts.push(format!(
            "\"{name}\" : {{ \"subscriptions\" : {{ \"s\" : {{ \"type\" : \"Shared\", \"msgBacklog\" : 10, \"consumers\" : [ {{ \"consumerName\" : \"c{}\" }} ] }} }} }}",
            p % 8
        ));
        internal.push(format!(
            "\"{name}\" : {{ \"entriesAddedCounter\" : 1000, \"currentLedgerEntries\" : 1000, \"ledgers\" : [ {{ \"ledgerId\" : {p}, \"entries\" : 0 }} ], \"cursors\" : {{ \"s\" : {{ \"markDeletePosition\" : \"{p}:989\", \"individuallyDeletedMessages\" : \"[]\" }} }} }}"
        ));
    }
    let stats = format!(
        "{{ \"metadata\" : {{ \"partitions\" : 1024 }}, \"subscriptions\" : {{ }}, \"partitions\" : {{ {} }} }}",
        parts.join(",\n")
    );
    let internal = format!("{{ \"metadata\" : {{ \"partitions\" : 1024 }}, \"partitions\" : {{ {} }} }}", internal.join(",\n"));
    let imported = import(&[
        Capture { name: "stats".into(), text: stats, format: Format::Auto },
        Capture { name: "internal".into(), text: internal, format: Format::Auto },
    ])
    .unwrap();
    assert_eq!(imported.scenario["topics"][0]["partitions"], 1024);
    assert_eq!(imported.scenario["subscriptions"][0]["connected"].as_array().map(Vec::len), Some(8));
    let mut sim = crate::registry::load(&imported.scenario.to_string()).unwrap().sim;
    sim.run_until(1);
    let report = sim.report();
    let backlog: u64 =
        report["subscriptions"][0]["partitions"].as_array().unwrap().iter().map(|p| p["backlog"].as_u64().unwrap()).sum();
    assert_eq!(backlog, 10 * 1024);
}

/// A KIP-848 group captured mid-reconciliation (4.x `--members --verbose` with CURRENT-EPOCH
/// below TARGET-EPOCH): at t=1 each member holds its CURRENT-ASSIGNMENT; the reconciliation then
/// finishes as the coordinator would, fraud-1 revoking tx-1 and fraud-3 taking it.
#[test]
fn a_kip848_group_captured_mid_reconciliation_finishes_it() {
    let imported = import(&captures(&corpus().join("kafka/members-state-4.1-kip848-reconciling"))).unwrap();
    let fraud3 =
        imported.scenario["groups"][0]["consumers"].as_array().unwrap().iter().find(|c| c["clientId"] == "fraud-3").cloned();
    assert_eq!(fraud3.as_ref().map(|c| c["target"].clone()), Some(serde_json::json!(["tx-1"])), "{fraud3:?}");
    let mut sim = crate::registry::load(&imported.scenario.to_string()).unwrap().sim;
    sim.run_until(1);
    let report = sim.report();
    let owners = |r: &serde_json::Value| r["groups"]["fraud"]["assignment"]["tx"].clone();
    assert_eq!(owners(&report)["1"], "fraud-1", "{}", report["groups"]["fraud"]);
    sim.run_until(30_000);
    let report = sim.report();
    assert_eq!(
        owners(&report),
        serde_json::json!({"0": "fraud-1", "1": "fraud-3", "2": "fraud-2"}),
        "{}",
        report["groups"]["fraud"]
    );
}
