//! The preset scenarios. Files live in `static/scenarios/`; their texts are compiled in here, so
//! the CLI and the native and wasm determinism tests check the very same texts.
//!
//! The page's picker reads `CATALOGUE` instead, which carries no texts: the release page has only
//! the default preset's text in its first download (`DEFAULT_SCENARIO`) and fetches the others
//! when they are chosen (`ui::presets`). A page that named `PRESETS` would link every text in.

pub struct Preset {
    pub file: &'static str,
    pub label: &'static str,
    pub text: &'static str,
}

/// A preset without its text: what the page's picker lists.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    pub file: &'static str,
    pub label: &'static str,
    /// Whether `static/tours/` has a tour of it (a test checks).
    pub tour: bool,
}

macro_rules! presets {
    ($(($file:literal, $label:literal, tour: $tour:literal)),* $(,)?) => {
        /// In picker order; the first is the default page.
        pub const PRESETS: &[Preset] =
            &[$(Preset { file: $file, label: $label, text: include_str!(concat!("../../../static/scenarios/", $file)) }),*];

        /// `PRESETS` without the texts, in the same order.
        pub const CATALOGUE: &[Entry] = &[$(Entry { file: $file, label: $label, tour: $tour }),*];
    };
}

/// The default page's scenario and tour (the first preset's): the only preset texts in the
/// page's first download.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../static/scenarios/seed-same-topic-different-tags.json");
pub const DEFAULT_TOUR: &str = include_str!("../../../static/tours/seed-same-topic-different-tags.json");

presets![
    ("seed-same-topic-different-tags.json", "Same topic, different tags (TagB wins)", tour: true),
    ("seed-same-topic-different-tags-a-wins.json", "Same topic, different tags (TagA wins)", tour: true),
    ("seed-different-topics-same-tag.json", "Different topics, same tag", tour: true),
    ("consistent-group.json", "Consistent group (control)", tour: true),
    ("sql92-filter.json", "SQL92 filter (properties, eval errors, enablePropertyFilter off)", tour: true),
    ("filter-manager-heartbeat-cost.json", "Filter manager heartbeat cost (topic scan vs group index)", tour: true),
    ("duplicate-client-id.json", "Duplicate clientId (two containers share IP@PID)", tour: false),
    ("compare-join-avg-vs-consistent-hash.json", "Compare: a consumer joins, AVG vs CONSISTENT_HASH", tour: false),
    ("pulsar-scalable-post-split-backlog.json", "Pulsar scalable topic: new EARLIEST stream consumer after a split", tour: true),
    ("pulsar-scalable-two-splits.json", "Pulsar scalable topic: two generations of sealed segments", tour: true),
    ("pulsar-scalable-sealed-not-redelivered.json", "Pulsar scalable topic: drained sealed segment not redelivered", tour: true),
    ("pulsar-scalable-children-blocked.json", "Pulsar scalable topic: children blocked until the parent drains", tour: true),
    ("pulsar-key-shared-join.json", "Pulsar Key_Shared: a consumer joins (PIP-379 draining hashes)", tour: true),
    ("pulsar-failover.json", "Pulsar Failover: priority, modulo pick, delay and rewind", tour: true),
    ("pulsar-shared-dlq.json", "Pulsar Shared: poison messages to the dead-letter topic", tour: true),
    ("kafka-eager-join.json", "Kafka: a 4th member joins an EAGER group (stop the world)", tour: true),
    ("kafka-cooperative-join.json", "Kafka: a 4th member joins a COOPERATIVE group (two rebalances)", tour: true),
    ("kafka-fetch-states.json", "Kafka: every FetchState (leader change, truncation, seeks)", tour: true),
    ("kafka-new-group-latest.json", "Kafka: a new group starts at latest (records skipped)", tour: true),
    ("kafka-crash-redelivery.json", "Kafka: a crash inside the auto-commit window (duplicates)", tour: true),
    ("kafka-static-membership.json", "Kafka: static membership survives a restart", tour: true),
    ("kafka-kip848-reconciliation.json", "Kafka: KIP-848 reconciliation (revoke before assign)", tour: true),
];

pub fn by_file(file: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.file == file)
}

/// The catalogue entry of a preset file, without its text (what the page may name).
pub fn entry(file: &str) -> Option<&'static Entry> {
    CATALOGUE.iter().find(|p| p.file == file)
}

/// The preset whose name is nearest a mistyped one (`kafka-eager-joins`: `kafka-eager-join`),
/// when it is a few keystrokes away.
pub fn nearest(name: &str) -> Option<&'static str> {
    let name = name.trim_end_matches(".json");
    let distance = |a: &str, b: &str| {
        // Levenshtein over bytes: preset names are ASCII, and this runs once per bad link.
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.bytes().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, cb) in b.bytes().enumerate() {
                let next = (row[j + 1] + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
                diagonal = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    };
    CATALOGUE
        .iter()
        .map(|p| (distance(name, p.file.trim_end_matches(".json")), p.file))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, file)| file.trim_end_matches(".json"))
}

/// The generated load scenario the page opens for `#bench=N` (and `mqviz bench load` measures): a
/// RocketMQ group of three consumers that disagree on the tag, fed `messages` messages.
pub fn load_scenario(messages: u64) -> String {
    mqviz_rocketmq::scenario::load_scenario(messages)
}
