//! What the editor's fields may hold (pure, tested natively): each reader turns the raw text of a
//! field into the scenario type it stands for, or says in one sentence what is wrong with it, so
//! every bad number or name gets an inline error and nothing is entered.

use mqviz_engine::Millis;
use mqviz_kafka::assignor::ClientAssignor;
use mqviz_kafka::pattern::TopicPattern;
use mqviz_kafka::scenario::{parse_partition_ref, PartitionRef, SeekTarget, SendSpec, SubscriptionSpec};
use mqviz_kafka::world::World;

/// Largest partition count the editor accepts (the canvas draws every partition).
pub const MAX_UI_PARTITIONS: u32 = 256;
pub const MAX_UI_SEND_COUNT: u32 = 100_000;
pub const MAX_UI_INTERVAL_MS: u64 = 600_000;
/// Largest offset a seek accepts.
pub const MAX_UI_OFFSET: u64 = 1_000_000_000_000;

/// The assignor lists the editor offers for a classic group: `partition.assignment.strategy`.
pub const ASSIGNOR_CHOICES: [&[ClientAssignor]; 6] = [
    &[ClientAssignor::Range, ClientAssignor::CooperativeSticky],
    &[ClientAssignor::Range],
    &[ClientAssignor::RoundRobin],
    &[ClientAssignor::Sticky],
    &[ClientAssignor::CooperativeSticky],
    &[ClientAssignor::CooperativeSticky, ClientAssignor::Range],
];

/// `range, cooperative-sticky`.
pub fn assignor_list(list: &[ClientAssignor]) -> String {
    list.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
}

/// How a consumer gets its partitions, as the editor's select names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubKind {
    Topics,
    Pattern,
    Assign,
}

impl SubKind {
    pub fn of(s: Option<&SubscriptionSpec>) -> SubKind {
        match s {
            Some(SubscriptionSpec::Pattern(_)) => SubKind::Pattern,
            Some(SubscriptionSpec::Assign(_)) => SubKind::Assign,
            _ => SubKind::Topics,
        }
    }

    pub fn value(self) -> &'static str {
        match self {
            SubKind::Topics => "topics",
            SubKind::Pattern => "pattern",
            SubKind::Assign => "assign",
        }
    }

    pub fn from_value(v: &str) -> SubKind {
        match v {
            "pattern" => SubKind::Pattern,
            "assign" => SubKind::Assign,
            _ => SubKind::Topics,
        }
    }
}

/// The text a subscription is edited as: topics or partitions separated by commas, or the pattern.
pub fn subscription_text(s: Option<&SubscriptionSpec>) -> String {
    match s {
        Some(SubscriptionSpec::Topics(t)) => t.join(", "),
        Some(SubscriptionSpec::Pattern(p)) => p.clone(),
        Some(SubscriptionSpec::Assign(ps)) => ps.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        None => String::new(),
    }
}

fn topic_names(w: &World) -> String {
    w.topics.iter().map(|t| t.name.to_string()).collect::<Vec<_>>().join(", ")
}

fn items(text: &str) -> Vec<&str> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// A partition that exists now, from `orders-3`.
pub fn read_partition(w: &World, text: &str) -> Result<PartitionRef, String> {
    let r = parse_partition_ref(text.trim())
        .ok_or_else(|| format!("{:?} is not a partition (write it as topic-number, e.g. orders-3)", text.trim()))?;
    let t = w.topic_index(&r.topic).ok_or_else(|| format!("unknown topic {:?} (topics: {})", r.topic, topic_names(w)))?;
    let n = w.topics[t].pids.len() as u32;
    if r.partition >= n {
        return Err(format!("{} has partitions 0 to {}; there is no {r}", r.topic, n.saturating_sub(1)));
    }
    Ok(r)
}

/// The subscription a field holds.
pub fn read_subscription(w: &World, kind: SubKind, text: &str) -> Result<SubscriptionSpec, String> {
    match kind {
        SubKind::Topics => {
            let topics = items(text);
            if topics.is_empty() {
                return Err("name at least one topic".into());
            }
            if let Some(t) = topics.iter().find(|t| w.topic_index(t).is_none()) {
                return Err(format!("unknown topic {t:?} (topics: {})", topic_names(w)));
            }
            Ok(SubscriptionSpec::Topics(topics.into_iter().map(str::to_string).collect()))
        }
        SubKind::Pattern => {
            let p = text.trim();
            if p.is_empty() {
                return Err("a pattern cannot be empty".into());
            }
            TopicPattern::compile(p).map_err(|e| format!("not a valid pattern: {e}"))?;
            Ok(SubscriptionSpec::Pattern(p.to_string()))
        }
        SubKind::Assign => {
            let parts = items(text);
            if parts.is_empty() {
                return Err("name at least one partition, e.g. orders-0".into());
            }
            let refs = parts.into_iter().map(|p| read_partition(w, p)).collect::<Result<Vec<_>, _>>()?;
            Ok(SubscriptionSpec::Assign(refs))
        }
    }
}

/// `12`, `beginning` or `end`.
pub fn read_seek(text: &str) -> Result<SeekTarget, String> {
    match text.trim() {
        "beginning" | "begin" | "start" => Ok(SeekTarget::Beginning),
        "end" => Ok(SeekTarget::End),
        t => match t.parse::<u64>() {
            Ok(o) if o <= MAX_UI_OFFSET => Ok(SeekTarget::Offset(o)),
            _ => Err(format!("seek to a whole offset from 0 to {MAX_UI_OFFSET}, or to beginning or end (not {t:?})")),
        },
    }
}

/// A new partition count for `topic`: larger than now (partition counts only grow), at most
/// `MAX_UI_PARTITIONS`.
pub fn read_partition_count(current: u32, text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if n > current && n <= MAX_UI_PARTITIONS => Ok(n),
        Ok(n) if n == current => Err(format!("it already has {current} partitions")),
        Ok(n) if n < current && n > 0 => Err(format!("partition counts only grow: it has {current}, so {n} is not possible")),
        _ => Err(format!("a partition count is a whole number from {} to {MAX_UI_PARTITIONS}", current + 1)),
    }
}

/// The raw text of a producer's send form.
#[derive(Clone, Debug, Default)]
pub struct SendForm {
    pub topic: String,
    pub key: String,
    pub value: String,
    pub partition: String,
    pub count: String,
    pub interval: String,
}

/// A send script starting at `at`; `Err` lists every problem.
pub fn read_send(w: &World, at: Millis, form: &SendForm) -> Result<SendSpec, String> {
    let mut problems = Vec::new();
    let count = match form.count.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_UI_SEND_COUNT).contains(&n) => n,
        _ => {
            problems.push(format!("count must be a whole number from 1 to {MAX_UI_SEND_COUNT}"));
            0
        }
    };
    let interval_ms = match form.interval.trim().parse::<u64>() {
        Ok(v) if v <= MAX_UI_INTERVAL_MS => v,
        _ => {
            problems.push(format!("the interval must be a whole number of ms from 0 to {MAX_UI_INTERVAL_MS}"));
            0
        }
    };
    let topic = w.topic_index(form.topic.trim());
    if topic.is_none() {
        problems.push(format!("pick a topic ({})", topic_names(w)));
    }
    let partition = match (form.partition.trim(), topic) {
        ("", _) => None,
        (p, Some(t)) => {
            let n = w.topics[t].pids.len() as u32;
            match p.parse::<u32>() {
                Ok(x) if x < n => Some(x),
                _ => {
                    problems.push(format!(
                        "the partition must be empty (the partitioner chooses) or a whole number from 0 to {}",
                        n - 1
                    ));
                    None
                }
            }
        }
        (_, None) => None,
    };
    if form.key.chars().count() > 200 || form.value.chars().count() > 200 {
        problems.push("keys and values are at most 200 characters".into());
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let key = form.key.trim();
    let value = if form.value.trim().is_empty() { "value {i}" } else { form.value.trim() };
    Ok(SendSpec {
        at,
        topic: form.topic.trim().to_string(),
        key: (!key.is_empty()).then(|| key.to_string()),
        value: value.to_string(),
        partition,
        count,
        interval_ms,
        times: Vec::new(),
    })
}

/// The first consumer name `prefix<n>` not taken, e.g. `c5`.
pub fn next_consumer_name(w: &World, like: &str) -> Option<String> {
    let prefix: String = like.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    let prefix = if prefix.is_empty() { "consumer-".to_string() } else { prefix };
    (1..1000).map(|n| format!("{prefix}{n}")).find(|id| w.find_consumer(id).is_none())
}

#[cfg(test)]
mod tests {
    use super::super::super::lanes::tests::run;
    use super::*;

    #[test]
    fn subscriptions_are_checked_against_the_cluster() {
        let w = run("kafka-eager-join.json", Some(1_000));
        assert_eq!(read_subscription(&w, SubKind::Topics, " orders ,"), Ok(SubscriptionSpec::Topics(vec!["orders".into()])));
        assert!(read_subscription(&w, SubKind::Topics, "ordrs")
            .unwrap_err()
            .contains("unknown topic \"ordrs\" (topics: orders)"));
        assert!(read_subscription(&w, SubKind::Topics, "  ").is_err());
        assert!(read_subscription(&w, SubKind::Pattern, "ord(").unwrap_err().starts_with("not a valid pattern"));
        assert_eq!(read_subscription(&w, SubKind::Pattern, "ord.*"), Ok(SubscriptionSpec::Pattern("ord.*".into())));
        assert!(read_subscription(&w, SubKind::Assign, "orders-12").unwrap_err().contains("partitions 0 to 11"));
        assert!(read_subscription(&w, SubKind::Assign, "orders").unwrap_err().contains("is not a partition"));
        assert_eq!(
            subscription_text(Some(&read_subscription(&w, SubKind::Assign, "orders-1, orders-2").unwrap())),
            "orders-1, orders-2"
        );
    }

    #[test]
    fn every_bad_number_is_refused_with_a_reason() {
        assert_eq!(read_seek("40"), Ok(SeekTarget::Offset(40)));
        assert_eq!(read_seek(" end "), Ok(SeekTarget::End));
        for bad in ["-1", "4.5", "lots", "", "99999999999999999999"] {
            assert!(read_seek(bad).is_err(), "{bad}");
        }
        assert_eq!(read_partition_count(12, "16"), Ok(16));
        assert!(read_partition_count(12, "8").unwrap_err().contains("only grow"));
        assert!(read_partition_count(12, "12").unwrap_err().contains("already"));
        assert!(read_partition_count(12, "100000").is_err());
        let w = run("kafka-eager-join.json", Some(1_000));
        let form = SendForm {
            topic: "orders".into(),
            count: "many".into(),
            interval: "-5".into(),
            partition: "12".into(),
            ..Default::default()
        };
        let e = read_send(&w, 0, &form).unwrap_err();
        assert!(e.contains("count must") && e.contains("interval must") && e.contains("from 0 to 11"), "{e}");
        let ok = SendForm {
            topic: "orders".into(),
            key: "k-{i}".into(),
            count: "10".into(),
            interval: "100".into(),
            ..Default::default()
        };
        let s = read_send(&w, 5, &ok).unwrap();
        assert_eq!((s.at, s.count, s.interval_ms, s.key.as_deref(), s.partition), (5, 10, 100, Some("k-{i}"), None));
        assert_eq!(next_consumer_name(&w, "c3").as_deref(), Some("c5"));
    }
}
