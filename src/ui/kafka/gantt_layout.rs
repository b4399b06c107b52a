//! Where the Gantt draws what (pure, tested natively): row heights that fit a height budget, the
//! time scale, one bar per span, the stop-the-world windows and the playhead; and how each state
//! looks. States are told apart by fill pattern and by their name written in the bar, never by
//! hue alone (hues on this page belong to record keys).

use super::lanes::{GanttData, RowKind};
use mqviz_engine::decimal::fixed;
use mqviz_engine::Millis;

/// How a state's bar is filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// Solid dark: records are being fetched.
    Dark,
    /// Solid mid grey: a settled member or group.
    Mid,
    /// Light with dots: just assigned, no position yet.
    Dots,
    /// Hatched `/`: giving something up (preparing a rebalance, revoking).
    Forward,
    /// Hatched `\`: waiting to be given something (completing a rebalance, unreleased).
    Back,
    /// Vertical lines: waiting for ListOffsets (a reset).
    Vertical,
    /// Cross-hatched: waiting for OffsetsForLeaderEpoch (validation).
    Cross,
    /// Nothing: not assigned, not a member.
    Empty,
}

/// A state's fill and the words written in its bar and in the legend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Look {
    pub fill: Fill,
    pub short: &'static str,
}

pub fn look(state: &str) -> Look {
    let (fill, short) = match state {
        "FETCHING" => (Fill::Dark, "FETCHING"),
        "INITIALIZING" => (Fill::Dots, "INITIALIZING"),
        "AWAIT_RESET" => (Fill::Vertical, "AWAIT_RESET"),
        "AWAIT_VALIDATION" => (Fill::Cross, "AWAIT_VALIDATION"),
        "STABLE" => (Fill::Mid, "STABLE"),
        "PREPARING_REBALANCE" => (Fill::Forward, "PREPARING_REBALANCE"),
        "COMPLETING_REBALANCE" => (Fill::Back, "COMPLETING_REBALANCE"),
        "UNREVOKED_PARTITIONS" => (Fill::Forward, "UNREVOKED_PARTITIONS"),
        "UNRELEASED_PARTITIONS" => (Fill::Back, "UNRELEASED_PARTITIONS"),
        "UNASSIGNED" => (Fill::Empty, ""),
        "EMPTY" => (Fill::Empty, "EMPTY"),
        "UNJOINED" => (Fill::Empty, "UNJOINED"),
        "CLOSED" => (Fill::Empty, "closed"),
        "CRASHED" => (Fill::Empty, "crashed"),
        "FAILED" => (Fill::Empty, "failed"),
        "GONE" => (Fill::Empty, "fenced"),
        "LEFT (epoch -2)" => (Fill::Empty, "left (epoch -2)"),
        _ => (Fill::Empty, "?"),
    };
    Look { fill, short }
}

/// The legend's entries, in the order they are explained: each fill with the states it stands for.
pub const LEGEND: [(Fill, &str); 7] = [
    (Fill::Dark, "FETCHING"),
    (Fill::Dots, "INITIALIZING"),
    (Fill::Vertical, "AWAIT_RESET"),
    (Fill::Cross, "AWAIT_VALIDATION"),
    (Fill::Mid, "STABLE member / group"),
    (Fill::Forward, "PREPARING_REBALANCE · UNREVOKED_PARTITIONS"),
    (Fill::Back, "COMPLETING_REBALANCE · UNRELEASED_PARTITIONS"),
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.x && x < self.x + self.w && y >= self.y && y < self.y + self.h
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RowBox {
    pub rect: Rect,
    pub label: String,
    pub kind: RowKind,
    /// The label is drawn (thin partition rows only name themselves on hover).
    pub labelled: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub row: usize,
    pub rect: Rect,
    pub state: &'static str,
    pub from: Millis,
    pub to: Millis,
    /// Still in this state now.
    pub open: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WindowBox {
    pub rect: Rect,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    pub plot: Rect,
    pub rows: Vec<RowBox>,
    pub bars: Vec<Bar>,
    pub windows: Vec<WindowBox>,
    pub playhead_x: f64,
    /// Tick positions and texts of the time axis.
    pub ticks: Vec<(f64, String)>,
    pub until: Millis,
}

/// Left column for the row labels.
pub const LABEL_W: f64 = 96.0;
/// Strip above the rows for the stop-the-world labels.
pub const TOP_H: f64 = 16.0;
/// Time axis under the rows.
pub const AXIS_H: f64 = 16.0;
const RIGHT_PAD: f64 = 8.0;
/// Space between one consumer's band and the next.
const BAND_GAP: f64 = 3.0;
/// Rows at least this tall carry their label and the state names.
pub const LABEL_MIN_H: f64 = 9.0;

/// Heights of the heading rows (group, member) and the partition rows that fit `budget`.
fn row_heights(data: &GanttData, budget: f64) -> (f64, f64) {
    let heads = data.rows.iter().filter(|r| r.kind != RowKind::Partition).count() as f64;
    let parts = data.rows.iter().filter(|r| r.kind == RowKind::Partition).count() as f64;
    let gaps = heads * BAND_GAP;
    let room = (budget - TOP_H - AXIS_H - gaps).max(0.0);
    for (head, part) in [(14.0, 11.0), (13.0, 9.0), (12.0, 7.0), (11.0, 5.0)] {
        if heads * head + parts * part <= room {
            return (head, part);
        }
    }
    (10.0, 4.0)
}

fn ticks(until: Millis, plot: Rect) -> Vec<(f64, String)> {
    let secs = until as f64 / 1000.0;
    // A step that gives at most one tick per 70 px.
    let max_ticks = (plot.w / 70.0).floor().max(1.0);
    let step = [1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0]
        .into_iter()
        .find(|s| secs / s <= max_ticks)
        .unwrap_or(secs.max(1.0));
    let mut out = Vec::new();
    let mut t = 0.0;
    while t <= secs + 1e-9 {
        out.push((plot.x + plot.w * (t / secs.max(0.001)), format!("{}s", fixed(t, 0))));
        t += step;
    }
    out
}

/// Lays the Gantt out in a box `width` wide and at most `budget` tall (it may be shorter).
pub fn layout(data: &GanttData, width: f64, budget: f64) -> Layout {
    let (head_h, part_h) = row_heights(data, budget);
    let until = data.until.max(data.now).max(1);
    let plot_x = LABEL_W;
    let plot_w = (width - LABEL_W - RIGHT_PAD).max(10.0);
    let x_of = |t: Millis| plot_x + plot_w * (t.min(until) as f64 / until as f64);
    let mut y = TOP_H;
    let mut rows = Vec::with_capacity(data.rows.len());
    let mut bars = Vec::new();
    for (i, r) in data.rows.iter().enumerate() {
        let h = if r.kind == RowKind::Partition { part_h } else { head_h };
        if r.kind != RowKind::Partition && i > 0 {
            y += BAND_GAP;
        }
        let rect = Rect { x: plot_x, y, w: plot_w, h };
        rows.push(RowBox { rect, label: r.label.clone(), kind: r.kind, labelled: h >= LABEL_MIN_H });
        for s in &r.spans {
            if s.from > data.now {
                continue;
            }
            let to = s.to.unwrap_or(data.now).min(data.now);
            let (x0, x1) = (x_of(s.from), x_of(to));
            // A state that lasted an instant still shows as a sliver.
            let w = (x1 - x0).max(1.0);
            bars.push(Bar {
                row: i,
                rect: Rect { x: x0, y: y + 0.5, w, h: (h - 1.0).max(1.0) },
                state: s.state,
                from: s.from,
                to,
                open: s.to.is_none_or(|t| t > data.now),
            });
        }
        y += h;
    }
    let bottom = y;
    let mut windows = Vec::new();
    for wdw in &data.windows {
        let group_rows: Vec<&RowBox> =
            rows.iter().zip(&data.rows).filter(|(_, r)| r.group == wdw.group).map(|(b, _)| b).collect();
        let (Some(first), Some(last)) = (group_rows.first(), group_rows.last()) else { continue };
        let to = wdw.to.unwrap_or(data.now);
        let (x0, x1) = (x_of(wdw.from), x_of(to));
        let ms = to - wdw.from;
        let took = if ms < 1000 { format!("{ms} ms") } else { format!("{} s", fixed(ms as f64 / 1000.0, 1)) };
        windows.push(WindowBox {
            rect: Rect { x: x0, y: first.rect.y - 1.0, w: (x1 - x0).max(2.0), h: last.rect.y + last.rect.h - first.rect.y + 2.0 },
            text: format!("stop-the-world {took}"),
        });
    }
    let plot = Rect { x: plot_x, y: TOP_H, w: plot_w, h: bottom - TOP_H };
    Layout {
        width,
        height: bottom + AXIS_H,
        plot,
        rows,
        bars,
        windows,
        playhead_x: x_of(data.now),
        ticks: ticks(until, plot),
        until,
    }
}

/// What is under the pointer, as one line: the row, the state and its time span.
pub fn describe_at(l: &Layout, x: f64, y: f64) -> Option<String> {
    let secs = |t: Millis| format!("{} s", fixed(t as f64 / 1000.0, 3));
    if let Some(b) = l.bars.iter().find(|b| b.rect.contains(x, y)) {
        let row = &l.rows[b.row];
        let state = if b.state == "UNASSIGNED" { "not assigned" } else { b.state };
        let until = if b.open { "now".to_string() } else { secs(b.to) };
        return Some(format!("{}: {state} from {} to {until}", row.label, secs(b.from)));
    }
    l.rows.iter().find(|r| y >= r.rect.y && y < r.rect.y + r.rect.h).map(|r| r.label.clone())
}

#[cfg(test)]
mod tests {
    use super::super::lanes::{gantt_data, tests::run};
    use super::*;

    #[test]
    fn rows_shrink_to_fit_and_bars_stay_inside_the_plot() {
        let d = gantt_data(&run("kafka-eager-join.json", None));
        let roomy = layout(&d, 800.0, 1000.0);
        let tight = layout(&d, 800.0, 180.0);
        assert!(tight.height <= roomy.height && tight.height <= 200.0, "{} vs {}", tight.height, roomy.height);
        for l in [&roomy, &tight] {
            for b in &l.bars {
                assert!(b.rect.x >= l.plot.x - 0.01 && b.rect.x + b.rect.w <= l.plot.x + l.plot.w + 1.01, "{b:?}");
            }
            assert_eq!(l.windows.len(), 1);
            assert!(l.windows[0].text.starts_with("stop-the-world"));
            assert!((l.playhead_x - (l.plot.x + l.plot.w)).abs() < 0.01, "the run ended: playhead at the right end");
        }
        assert!(roomy.rows.iter().all(|r| r.labelled));
    }

    #[test]
    fn the_pointer_names_row_state_and_time() {
        let d = gantt_data(&run("kafka-fetch-states.json", Some(20_000)));
        let l = layout(&d, 900.0, 400.0);
        let b = l.bars.iter().find(|b| b.state == "AWAIT_VALIDATION").unwrap();
        let text = describe_at(&l, b.rect.x + 0.5, b.rect.y + 1.0).unwrap();
        assert!(text.contains("AWAIT_VALIDATION from"), "{text}");
        assert!(l.ticks.len() >= 4 && l.ticks[0].1 == "0s");
    }

    #[test]
    fn every_state_has_words_and_no_two_waiting_states_share_a_fill_in_one_lane_kind() {
        let fetch: Vec<Fill> =
            ["FETCHING", "INITIALIZING", "AWAIT_RESET", "AWAIT_VALIDATION", "UNASSIGNED"].map(|s| look(s).fill).to_vec();
        let distinct: std::collections::BTreeSet<String> = fetch.iter().map(|f| format!("{f:?}")).collect();
        assert_eq!(distinct.len(), fetch.len());
        for s in ["PREPARING_REBALANCE", "COMPLETING_REBALANCE", "UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS", "STABLE"] {
            assert_eq!(look(s).short, s);
        }
    }
}
