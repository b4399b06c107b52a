//! Every preset parses with the model it names, so this runs in mqviz-sim, which knows them all.

/// The sorted names of the JSON files in `static/<dir>`: what a compiled-in list must match.
pub(crate) fn static_json_files(dir: &str) -> Vec<String> {
    let path = format!("{}/../../static/{dir}", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(path)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| f.ends_with(".json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_preset_file_is_listed_and_parses() {
    let files = static_json_files("scenarios");
    let mut listed: Vec<String> = crate::presets::PRESETS.iter().map(|p| p.file.to_string()).collect();
    listed.sort();
    assert_eq!(files, listed, "static/scenarios and PRESETS disagree");
    for p in crate::presets::PRESETS {
        crate::registry::parse(p.text).unwrap_or_else(|e| panic!("{}: {e:?}", p.file));
        // A preset that opens into a comparison names a variant that loads too.
        let v: serde_json::Value = serde_json::from_str(p.text).unwrap();
        if let Some((label, variant)) = mqviz_engine::scenario::compare_variant(&v) {
            crate::registry::parse_value(&variant).unwrap_or_else(|e| panic!("{} compare {label}: {e:?}", p.file));
        }
    }
}

/// `mqviz run`'s report (JSON and text) carries the event-log digest the page shows, for every
/// model: it is how a run in the page is checked against the command line.
#[test]
fn every_model_reports_its_digest() {
    for kind in mqviz_model::BrokerKind::ALL {
        let p = crate::presets::PRESETS
            .iter()
            .find(|p| crate::registry::kind_of(&serde_json::from_str(p.text).unwrap()) == Ok(*kind))
            .unwrap_or_else(|| panic!("no preset of {kind:?}"));
        let sim = crate::registry::run(p.text).unwrap();
        let digest = format!("{:016x}", sim.digest());
        assert_eq!(sim.report()["digest"], digest.as_str(), "{}", p.file);
        assert!(sim.report_text().contains(&format!("digest {digest}")), "{}", p.file);
    }
}

/// The page lists `CATALOGUE` and carries only the default preset's texts; the rest it fetches
/// from `static/`. Both lists, and the default texts, must say what the files say.
#[test]
fn the_catalogue_and_the_default_texts_match_the_files() {
    use crate::presets::{CATALOGUE, DEFAULT_SCENARIO, DEFAULT_TOUR, PRESETS};
    assert_eq!(CATALOGUE.len(), PRESETS.len());
    for (e, p) in CATALOGUE.iter().zip(PRESETS) {
        assert_eq!((e.file, e.label), (p.file, p.label));
        assert_eq!(e.tour, crate::tour::text_of(p.file).is_some(), "{}", p.file);
    }
    assert_eq!(DEFAULT_SCENARIO, PRESETS[0].text);
    assert_eq!(Some(DEFAULT_TOUR), crate::tour::text_of(PRESETS[0].file));
    assert!(CATALOGUE.iter().any(|e| !e.tour), "has_tour is never false here");
}
