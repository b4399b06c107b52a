//! The preset scenarios, compiled in so the web app works offline and the native and wasm
//! determinism tests check the very same texts. Files live in `static/scenarios/`.

pub struct Preset {
    pub file: &'static str,
    pub label: &'static str,
    pub text: &'static str,
}

macro_rules! preset {
    ($file:literal, $label:literal) => {
        Preset { file: $file, label: $label, text: include_str!(concat!("../../static/scenarios/", $file)) }
    };
}

/// In picker order; the first is the default page.
pub const PRESETS: &[Preset] = &[
    preset!("seed-same-topic-different-tags.json", "Same topic, different tags (TagB wins)"),
    preset!("seed-same-topic-different-tags-a-wins.json", "Same topic, different tags (TagA wins)"),
    preset!("seed-different-topics-same-tag.json", "Different topics, same tag"),
    preset!("consistent-group.json", "Consistent group (control)"),
    preset!("sql92-filter.json", "SQL92 filter (properties, eval errors, enablePropertyFilter off)"),
    preset!("filter-manager-heartbeat-cost.json", "Filter manager heartbeat cost (topic scan vs group index)"),
    preset!("duplicate-client-id.json", "Duplicate clientId (two containers share IP@PID)"),
];

pub fn by_file(file: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.file == file)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_preset_file_is_listed_and_parses() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/static/scenarios");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|f| f.ends_with(".json"))
            .collect();
        files.sort();
        let mut listed: Vec<String> = super::PRESETS.iter().map(|p| p.file.to_string()).collect();
        listed.sort();
        assert_eq!(files, listed, "static/scenarios and PRESETS disagree");
        for p in super::PRESETS {
            crate::sim::rocketmq::scenario::parse_scenario(p.text).unwrap_or_else(|e| panic!("{}: {e:?}", p.file));
        }
    }
}
