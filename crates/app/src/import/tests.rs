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
    // Every prefix of a real capture (a table cut anywhere) reads or fails cleanly.
    let members = std::fs::read_to_string(corpus().join("kafka/describe-members-state-3.7/members.txt")).unwrap();
    for text in [&describe, &members] {
        for cut in (0..text.len()).filter(|i| text.is_char_boundary(*i)) {
            let _ = one(&text[..cut], Format::Auto);
        }
    }
    // Cells swapped for what captures mangle into them: every result is a scenario or an error.
    let mut rng = mqviz_engine::SplitMix64::new(7);
    let junk = ["-", "(", ")", "/", ":", "(0,", "t(1),u(", "18446744073709551616", "", "é", "GROUP", "\t", "';"];
    for text in [&describe, &members] {
        for _ in 0..300 {
            let mangled: String = text
                .split_inclusive(' ')
                .map(|cell| if rng.next_u64() % 9 == 0 { junk[(rng.next_u64() % junk.len() as u64) as usize] } else { cell })
                .collect();
            let _ = one(&mangled, Format::Auto);
        }
    }
    // A 50 MB paste of rows is read (well under a second for 10,000 partitions, measured apart).
    let big: String =
        std::iter::once("GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n".to_string())
            .chain((0..10_000).map(|p| format!("g big {p} 5 9 4 m-{} /10.0.0.1 c-{}\n", p % 50, p % 50)))
            .collect();
    let imported = one(&big, Format::Auto).unwrap();
    assert_eq!(imported.scenario["topics"][0]["partitions"], 10_000);
}
