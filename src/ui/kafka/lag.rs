//! Lag per partition over time (pure, tested natively), read from the log: for each group and
//! partition, the high watermark minus the group's position (the next offset its owner will
//! read). It grows while nobody fetches the partition and falls as the owner catches up; a jump
//! up means the position went back (a reset, a seek, or a new owner starting from the committed
//! offset). Sampled at a fixed number of instants over the run, up to now.

use mqviz_engine::sort::CollectSorted;
use mqviz_engine::sort::StableSort;
use std::collections::BTreeMap;

use mqviz_engine::Millis;
use mqviz_kafka::events::Event;
use mqviz_kafka::world::World;

#[derive(Clone, Debug, PartialEq)]
pub struct LagSeries {
    /// `orders-3`, or `analytics orders-3` when several groups read.
    pub name: String,
    /// (time ms, lag in records).
    pub points: Vec<(Millis, u64)>,
}

/// Samples over the whole run.
pub const SAMPLES: u64 = 240;

/// The running state while the log is read: high watermarks, positions, samples so far.
#[derive(Default)]
struct Reading {
    hw: BTreeMap<u32, u64>,
    /// (group, partition id) -> position.
    pos: BTreeMap<(usize, u32), u64>,
    series: BTreeMap<(usize, u32), Vec<(Millis, u64)>>,
    last_sample: Option<Millis>,
}

impl Reading {
    fn sample(&mut self, at: Millis) {
        for (&(g, pid), &p) in &self.pos {
            let h = self.hw.get(&pid).copied().unwrap_or(0);
            self.series.entry((g, pid)).or_default().push((at, h.saturating_sub(p)));
        }
        self.last_sample = Some(at);
    }
}

pub fn lag_series(w: &World) -> Vec<LagSeries> {
    let group_of: BTreeMap<&str, usize> = w.consumers.iter().map(|c| (&*c.name, c.group)).collect_map();
    let mut r = Reading::default();
    let until = w.scenario.until.max(w.now).max(1);
    let step = until.div_ceil(SAMPLES).max(1);
    let mut next_sample = 0;
    for e in w.log.entries() {
        while next_sample < e.at && next_sample <= w.now {
            r.sample(next_sample);
            next_sample += step;
        }
        let moved = match &e.kind {
            Event::Appended { part, base, count, .. } => {
                let h = r.hw.entry(part.pid).or_default();
                *h = (*h).max(base + *count as u64);
                None
            }
            Event::Truncated { part, offset, .. } => {
                r.hw.insert(part.pid, *offset);
                None
            }
            Event::FetchStateChanged { client, part, position: Some(p), .. } => Some((client, part.pid, (*p).max(0) as u64)),
            Event::Polled { client, part, to, .. } | Event::Skipped { client, part, to, .. } => Some((client, part.pid, *to)),
            _ => None,
        };
        if let Some((client, pid, p)) = moved {
            if let Some(&g) = group_of.get(&**client) {
                r.pos.insert((g, pid), p);
            }
        }
    }
    while next_sample <= w.now {
        r.sample(next_sample);
        next_sample += step;
    }
    // The lines end at the playhead.
    if r.last_sample != Some(w.now) {
        r.sample(w.now);
    }
    let series = r.series;
    let several_groups = series.keys().map(|k| k.0).collect::<std::collections::BTreeSet<_>>().len() > 1;
    let mut out: Vec<(String, u32, u32, LagSeries)> = series
        .into_iter()
        .map(|((g, pid), points)| {
            let p = &w.partitions[pid as usize];
            let label = format!("{}-{}", w.topics[p.topic].name, p.partition);
            let name = if several_groups { format!("{} {label}", w.groups[g].name) } else { label };
            (w.groups[g].name.to_string(), p.topic as u32, p.partition, LagSeries { name, points })
        })
        .collect();
    out.stable_sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));
    out.into_iter().map(|x| x.3).collect()
}

#[cfg(test)]
mod tests {
    use super::super::lanes::tests::run;
    use super::*;

    #[test]
    fn lag_grows_while_an_eager_group_stops_and_falls_after() {
        let w = run("kafka-eager-join.json", None);
        let s = lag_series(&w);
        assert_eq!(s.len(), 12);
        assert_eq!(s[0].name, "orders-0");
        assert_eq!(s[11].name, "orders-11");
        let peak = s.iter().flat_map(|x| x.points.iter()).map(|p| p.1).max().unwrap();
        let end: u64 = s.iter().map(|x| x.points.last().unwrap().1).max().unwrap();
        assert!(peak > 10 && end < peak, "peak {peak}, end {end}");
        assert_eq!(s[0].points.last().unwrap().0, w.now);
    }

    #[test]
    fn several_groups_name_their_series() {
        let w = run("kafka-new-group-latest.json", Some(15_000));
        let names: Vec<String> = lag_series(&w).into_iter().map(|s| s.name).collect();
        assert!(names.contains(&"analytics orders-0".to_string()) && names.contains(&"audit orders-3".to_string()), "{names:?}");
    }
}
