//! Sentences for the page's `aria-live` region: what changed between two neutral views, said the
//! way a viewer would ("ConsumerB now owns q0–q3", "broker-a: TopicTestA ⇐ TagB (ConsumerB, …)").

use mqviz_engine::vec_map::VecMap;

use mqviz_model::View;

/// At most this many sentences per announcement: the rest is in the panels.
const MAX_SENTENCES: usize = 4;

/// Compresses `q0, q1, q2, q3` into `q0–q3` where the labels share a prefix and run on.
fn ranges(labels: &[String]) -> String {
    let split = |s: &str| -> Option<(String, u64)> {
        let digits = s.chars().rev().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let (p, n) = s.split_at(s.len() - digits);
        Some((p.to_string(), n.parse().ok()?))
    };
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < labels.len() {
        let mut j = i;
        if let Some((p, n)) = split(&labels[i]) {
            while j + 1 < labels.len() && split(&labels[j + 1]) == Some((p.clone(), n + (j + 1 - i) as u64)) {
                j += 1;
            }
        }
        if j > i + 1 {
            let last = split(&labels[j]).map(|x| x.1.to_string()).unwrap_or_default();
            out.push(format!("{}–{last}", labels[i]));
        } else {
            out.extend(labels[i..=j].iter().cloned());
        }
        i = j + 1;
    }
    out.join(", ")
}

fn owned(view: &View) -> VecMap<usize, Vec<String>> {
    let mut m: VecMap<usize, Vec<String>> = VecMap::new();
    let multi = view.topics.iter().filter(|t| !t.internal).count() > 1;
    for t in view.topics.iter().filter(|t| !t.internal) {
        for p in &t.partitions {
            for &o in &p.owners {
                let label = if multi { format!("{} {}", t.name, p.label) } else { p.label.clone() };
                m.entry(o as usize).or_default().push(label);
            }
        }
    }
    m
}

/// What changed from `prev` to `cur`, most important first.
pub fn changes(prev: &View, cur: &View) -> Vec<String> {
    let mut out = Vec::new();
    // Broker-side state (a RocketMQ table entry overwritten...).
    for (b, bv) in cur.brokers.iter().enumerate() {
        let before: Vec<&str> =
            prev.brokers.get(b).map(|x| x.lines.iter().map(|l| l.text.as_str()).collect()).unwrap_or_default();
        for l in &bv.lines {
            if !before.contains(&l.text.as_str()) {
                out.push(format!(
                    "{}: {}{}",
                    bv.name,
                    l.text,
                    if l.alert { " (differs from a member's own subscription)" } else { "" }
                ));
            }
        }
    }
    // Consumer states.
    for (i, c) in cur.consumers.iter().enumerate() {
        match prev.consumers.get(i) {
            Some(p) if p.state == c.state => {}
            _ => out.push(format!("{} {}", c.name, c.state.label())),
        }
        let was = prev.consumers.get(i).and_then(|p| p.mismatch.clone());
        if c.mismatch.is_some() && c.mismatch != was {
            out.push(format!("{}: {}", c.name, c.mismatch.clone().unwrap_or_default()));
        }
    }
    // Ownership.
    let (before, now) = (owned(prev), owned(cur));
    for (i, c) in cur.consumers.iter().enumerate() {
        let a = before.get(&i).cloned().unwrap_or_default();
        let b = now.get(&i).cloned().unwrap_or_default();
        if a != b {
            out.push(if b.is_empty() {
                format!("{} owns nothing now", c.name)
            } else {
                format!("{} now owns {}", c.name, ranges(&b))
            });
        }
    }
    out.truncate(MAX_SENTENCES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqviz_app::presets::by_file;
    use mqviz_app::registry::parse;

    #[test]
    fn ranges_compress_runs() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(ranges(&l(&["q0", "q1", "q2", "q3"])), "q0–3");
        assert_eq!(ranges(&l(&["q0", "q2"])), "q0, q2");
        assert_eq!(ranges(&l(&["q0", "q1", "q5"])), "q0, q1, q5");
    }

    #[test]
    fn the_seed_overwrite_and_takeover_are_announced() {
        let mut sim = parse(by_file("seed-same-topic-different-tags.json").unwrap().text).unwrap();
        sim.run_until(5_004);
        let before = sim.view();
        // ConsumerB joins at 5 s; its first rebalance (1 s after start) takes q2, q3 and its
        // heartbeat at 6.010 s overwrites the table last.
        sim.run_until(6_020);
        let said = changes(&before, &sim.view()).join(" | ");
        assert!(said.contains("broker-a: TopicTestA ⇐ TagB (ConsumerB"), "{said}");
        assert!(said.contains("ConsumerB now owns q2, q3"), "{said}");
        let before = sim.view();
        sim.run_until(61_000);
        let said = changes(&before, &sim.view()).join(" | ");
        assert!(said.contains("ConsumerA stopped"), "{said}");
        assert!(said.contains("ConsumerB now owns q0–3"), "{said}");
    }
}
