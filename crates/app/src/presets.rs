//! The preset scenarios. Files live in `static/scenarios/`; their texts are compiled in here, so
//! the CLI and the native and wasm determinism tests check the very same texts.
//!
//! The page's picker reads `CATALOGUE` instead, which carries no texts: the release page has only
//! the default preset's text in its first download (`DEFAULT_SCENARIO`) and fetches the others
//! when they are chosen (`ui::presets`). A page that named `PRESETS` would link every text in.

pub struct Preset {
    pub file: &'static str,
    pub label: &'static str,
    /// What the run teaches, in one sentence (at most 120 characters, a test checks): the page
    /// shows it above the canvas before Play and during the run.
    pub lesson: &'static str,
    pub text: &'static str,
}

/// A preset without its text: what the page's picker lists.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    pub file: &'static str,
    pub label: &'static str,
    /// As `Preset::lesson`.
    pub lesson: &'static str,
    /// Whether `static/tours/` has a tour of it (a test checks).
    pub tour: bool,
}

macro_rules! presets {
    ($(($file:literal, $label:literal, tour: $tour:literal, lesson: $lesson:literal)),* $(,)?) => {
        /// In picker order; the first is the default page.
        pub const PRESETS: &[Preset] = &[$(Preset {
            file: $file,
            label: $label,
            lesson: $lesson,
            text: include_str!(concat!("../../../static/scenarios/", $file)),
        }),*];

        /// `PRESETS` without the texts, in the same order.
        pub const CATALOGUE: &[Entry] = &[$(Entry { file: $file, label: $label, lesson: $lesson, tour: $tour }),*];
    };
}

/// The default page's scenario and tour (the first preset's): the only preset texts in the
/// page's first download.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../static/scenarios/seed-same-topic-different-tags.json");
pub const DEFAULT_TOUR: &str = include_str!("../../../static/tours/seed-same-topic-different-tags.json");

presets![
    ("seed-same-topic-different-tags.json", "Same topic, different tags (TagB wins)", tour: true,
        lesson: "Different tags in one group lose messages: the broker keeps one expression per topic per group, the newest subVersion's."),
    ("seed-same-topic-different-tags-a-wins.json", "Same topic, different tags (TagA wins)", tour: true,
        lesson: "Which tag a mixed group gets is a race: the member that rebalances last, here the slow link, sets the group's filter."),
    ("seed-different-topics-same-tag.json", "Different topics, same tag", tour: true,
        lesson: "Members of one group on different topics leave queues unpulled: each topic's queues are split among all group members."),
    ("consistent-group.json", "Consistent group (control)", tour: true,
        lesson: "All messages are consumed once when every member subscribes the same expression, whichever heartbeat wins."),
    ("sql92-filter.json", "SQL92 filter (properties, eval errors, enablePropertyFilter off)", tour: true,
        lesson: "An SQL92 filter delivers only TRUE: NULL and eval errors are skipped like FALSE, and brokers need enablePropertyFilter."),
    ("filter-manager-heartbeat-cost.json", "Filter manager heartbeat cost (topic scan vs group index)", tour: true,
        lesson: "Each heartbeat re-registers a group's filters: before PR #10714 that scans every topic and group, after it only its own."),
    ("duplicate-client-id.json", "Duplicate clientId (two containers share IP@PID)", tour: false,
        lesson: "Consumers sharing a clientId both take the first copy's AVG block and consume it twice; the second copy's goes unpulled."),
    ("compare-join-avg-vs-consistent-hash.json", "Compare: a consumer joins, AVG vs CONSISTENT_HASH", tour: false,
        lesson: "When a consumer joins, AVG's contiguous blocks move most queues; a consistent-hash ring moves only the newcomer's."),
    ("pulsar-scalable-post-split-backlog.json", "Pulsar scalable topic: new EARLIEST stream consumer after a split", tour: true,
        lesson: "A new Earliest STREAM consumer reads a split's sealed parent first: the children are withheld until the parent drains."),
    ("pulsar-scalable-two-splits.json", "Pulsar scalable topic: two generations of sealed segments", tour: true,
        lesson: "A sealed child can be read with its undrained parent (gap #26274): only direct parents of active segments are checked."),
    ("pulsar-scalable-sealed-not-redelivered.json", "Pulsar scalable topic: drained sealed segment not redelivered", tour: true,
        lesson: "A sealed segment one consumer drained is not redelivered to the next: the subscription's cursor is already at its end."),
    ("pulsar-scalable-children-blocked.json", "Pulsar scalable topic: children blocked until the parent drains", tour: true,
        lesson: "A split segment's children are withheld from STREAM consumers until a drain poll finds the parent's backlog at 0."),
    ("pulsar-key-shared-join.json", "Pulsar Key_Shared: a consumer joins (PIP-379 draining hashes)", tour: true,
        lesson: "With PIP-379, a Key_Shared key moved to a joiner waits until its old owner acks its pending messages, keeping key order."),
    ("pulsar-failover.json", "Pulsar Failover: priority, modulo pick, delay and rewind", tour: true,
        lesson: "A Failover switch rewinds the cursor to markDelete+1: unacked messages go to the new active consumer, some twice."),
    ("pulsar-shared-dlq.json", "Pulsar Shared: poison messages to the dead-letter topic", tour: true,
        lesson: "After maxRedeliverCount + 1 nacked deliveries the client publishes a message to the dead-letter topic and acks it."),
    ("kafka-eager-join.json", "Kafka: a 4th member joins an EAGER group (stop the world)", tour: true,
        lesson: "In an EAGER rebalance every member revokes all its partitions, so none is fetched until the slowest member rejoins."),
    ("kafka-cooperative-join.json", "Kafka: a 4th member joins a COOPERATIVE group (two rebalances)", tour: true,
        lesson: "COOPERATIVE moves partitions in two rebalances while members keep fetching, but uncommitted records are still reread."),
    ("kafka-fetch-states.json", "Kafka: every FetchState (leader change, truncation, seeks)", tour: true,
        lesson: "After a leader change a consumer validates its position, and a truncated log rewinds it to the divergence point."),
    ("kafka-new-group-latest.json", "Kafka: a new group starts at latest (records skipped)", tour: true,
        lesson: "A new group with no committed offsets starts at latest by default and never reads the records produced before it."),
    ("kafka-crash-redelivery.json", "Kafka: a crash inside the auto-commit window (duplicates)", tour: true,
        lesson: "A crash between auto-commits commits nothing, so the partition's next owner rereads all it polled since the last commit."),
    ("kafka-static-membership.json", "Kafka: static membership survives a restart", tour: true,
        lesson: "A static member sends no LeaveGroup on close, so a restart within session.timeout.ms keeps its partitions, no rebalance."),
    ("kafka-kip848-reconciliation.json", "Kafka: KIP-848 reconciliation (revoke before assign)", tour: true,
        lesson: "KIP-848 revokes before it assigns: a partition reaches its new owner only after the old owner's heartbeat releases it."),
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

#[cfg(test)]
mod tests {
    use super::PRESETS;

    #[test]
    fn every_preset_states_its_lesson_in_one_short_sentence() {
        for p in PRESETS {
            let chars = p.lesson.chars().count();
            assert!((20..=120).contains(&chars), "{}: {chars} characters", p.file);
            assert!(p.lesson.ends_with('.'), "{}: ends with a full stop", p.file);
            // One sentence: no full stop followed by a new sentence inside it.
            assert!(!p.lesson.trim_end_matches('.').contains(". "), "{}: one sentence", p.file);
        }
    }
}
