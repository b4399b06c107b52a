//! Where everything goes on the topology canvas, computed from the neutral `View` and the canvas
//! size alone (no drawing, no DOM), so "nothing is clipped at any screen size" is a unit test.
//!
//! Columns, left to right: producers, one box per broker (its state lines, then its partitions
//! grouped by topic), the assignment edges, the consumers. Rows shrink to fit; when they would get
//! too small, long lists (a topic's partitions, a broker's topics, the consumers) show a page and a
//! "+N more" row that pages on when clicked.

use mqviz_engine::decimal;
use mqviz_engine::vec_map::VecMap;

use mqviz_model::{PartitionId, View};

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn new(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect { x, y, w, h }
    }
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.x && x <= self.x + self.w && y >= self.y && y <= self.y + self.h
    }
    pub fn right(&self) -> f64 {
        self.x + self.w
    }
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }
    pub fn mid_y(&self) -> f64 {
        self.y + self.h / 2.0
    }
    /// The smallest rectangle holding both.
    pub fn union(&self, o: &Rect) -> Rect {
        let (x, y) = (self.x.min(o.x), self.y.min(o.y));
        Rect::new(x, y, self.right().max(o.right()) - x, self.bottom().max(o.bottom()) - y)
    }
    /// Fully inside `outer` (with a tolerance for rounding).
    #[cfg(test)]
    pub fn inside(&self, outer: &Rect) -> bool {
        self.x >= outer.x - 0.5
            && self.y >= outer.y - 0.5
            && self.right() <= outer.right() + 0.5
            && self.bottom() <= outer.bottom() + 0.5
    }
    #[cfg(test)]
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.right() - 0.5 && o.x < self.right() - 0.5 && self.y < o.bottom() - 0.5 && o.y < self.bottom() - 0.5
    }
}

/// Something on the canvas a click or a key press acts on, or a tour points at.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Broker(usize),
    Consumer(usize),
    Producer(usize),
    Partition(PartitionId),
    /// A "+N more" row: pages the list with this id.
    More(String),
}

impl Target {
    /// The name a tour uses for it: `broker:<name>`, `consumer:<name>`, `producer:<name>`,
    /// `partition:<topic>:<label>`.
    pub fn key(&self, view: &View) -> Option<String> {
        match self {
            Target::Broker(i) => view.brokers.get(*i).map(|b| format!("broker:{}", b.name)),
            Target::Consumer(i) => view.consumers.get(*i).map(|c| format!("consumer:{}", c.name)),
            Target::Producer(i) => view.producers.get(*i).map(|p| format!("producer:{}", p.name)),
            Target::Partition(id) => view
                .topics
                .iter()
                .find_map(|t| t.partitions.iter().find(|p| p.id == *id).map(|p| format!("partition:{}:{}", t.name, p.label))),
            Target::More(id) => Some(format!("more:{id}")),
        }
    }
}

/// One partition's row: its label, the log bar of cells and the offsets text.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub partition: PartitionId,
    pub topic: usize,
    pub index: usize,
    pub label: String,
    pub rect: Rect,
    pub label_rect: Rect,
    pub bar: Rect,
    pub info: Rect,
}

/// A topic's title inside a broker box (omitted for one-partition topics, whose row says it all).
#[derive(Clone, Debug, PartialEq)]
pub struct Title {
    pub text: String,
    pub rect: Rect,
}

/// A "+N more" row.
#[derive(Clone, Debug, PartialEq)]
pub struct More {
    pub list: String,
    pub hidden: usize,
    /// Items on the page shown now (the next page starts after them).
    pub shown: usize,
    /// True when the page shown is the last one (clicking goes back to the first).
    pub wraps: bool,
    pub rect: Rect,
    /// A broker folded to this one line (no row fits): its partitions, as (topic, index into
    /// `TopicView::partitions`), which the line summarises ([`fold_summary`]).
    pub folded: Vec<(usize, usize)>,
}

/// What a broker folded to one line says of its partitions: who owns which ("c1: p0 p3 · c2: p6
/// · no owner: p9"), or only their labels before the run starts. A reader of an embed in a docs
/// page cannot enlarge it, so the line says what the rows would.
pub fn fold_summary(view: &View, parts: &[(usize, usize)], started: bool) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for &(t, i) in parts {
        let Some(p) = view.topics.get(t).and_then(|t| t.partitions.get(i)) else { continue };
        let owner = if !started {
            String::new()
        } else if p.owners.is_empty() {
            "no owner".to_string()
        } else {
            let names: Vec<&str> =
                p.owners.iter().filter_map(|&o| view.consumers.get(o as usize)).map(|c| c.name.as_str()).collect();
            names.join("+")
        };
        match groups.iter_mut().find(|(o, _)| *o == owner) {
            Some((_, labels)) => labels.push(&p.label),
            None => groups.push((owner, vec![&p.label])),
        }
    }
    let said: Vec<String> = groups
        .iter()
        .map(|(owner, labels)| if owner.is_empty() { labels.join(" ") } else { format!("{owner}: {}", labels.join(" ")) })
        .collect();
    said.join(" · ")
}

#[derive(Clone, Debug, PartialEq)]
pub struct BrokerBox {
    pub index: usize,
    pub rect: Rect,
    pub name_rect: Rect,
    /// (line index in `BrokerView::lines`, where).
    pub lines: Vec<(usize, Rect)>,
    pub more_lines: usize,
}

/// Padding inside a partition's state badge, each side (CSS px).
pub const BADGE_PAD: f64 = 4.0;

/// Where a partition's state badge (`sealed · drained`, `FETCHING · paused`...) goes: a pill as
/// wide as its measured text (`text_w`, at the badge font) plus padding, `h` high, at the bar's
/// top-left, sitting on its top edge. Never wider than the bar, never past the canvas: when the
/// text needs more room the pill takes what there is, and the caller fits the text to
/// `w - 2 * BADGE_PAD`.
pub fn badge_rect(bar: Rect, text_w: f64, h: f64, canvas: Rect) -> Rect {
    let x = bar.x.max(canvas.x + 1.0);
    let room = (bar.right().min(canvas.right() - 1.0) - x).max(0.0);
    let w = (text_w.max(0.0) + 2.0 * BADGE_PAD).min(room);
    // Its bottom just inside the bar's top: it covers a pixel of this row's cells and the bottom
    // of the gap above, rather than the top third of the cells.
    let y = (bar.y + 3.0 - h).max(canvas.y);
    Rect::new(x, y, w, h)
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    pub canvas: Rect,
    /// Base font size in CSS px.
    pub font: f64,
    pub producers: Vec<(usize, Rect)>,
    pub brokers: Vec<BrokerBox>,
    pub titles: Vec<Title>,
    pub rows: Vec<Row>,
    pub mores: Vec<More>,
    pub consumers: Vec<(usize, Rect)>,
    /// The strip along the bottom for the tag key.
    pub key: Rect,
    /// Cells per row at most (long logs show their newest entries).
    pub max_cells: u64,
}

impl Layout {
    pub fn row_of(&self, partition: PartitionId) -> Option<&Row> {
        self.rows.iter().find(|r| r.partition == partition)
    }
    pub fn consumer_rect(&self, i: usize) -> Option<Rect> {
        self.consumers.iter().find(|(c, _)| *c == i).map(|(_, r)| *r)
    }
    pub fn producer_rect(&self, i: usize) -> Option<Rect> {
        self.producers.iter().find(|(p, _)| *p == i).map(|(_, r)| *r)
    }

    /// Every clickable or highlightable thing with its rectangle, in reading order.
    pub fn targets(&self) -> Vec<(Target, Rect)> {
        let mut out: Vec<(Target, Rect)> = Vec::new();
        out.extend(self.producers.iter().map(|(i, r)| (Target::Producer(*i), *r)));
        for b in &self.brokers {
            out.push((Target::Broker(b.index), b.name_rect));
        }
        out.extend(self.rows.iter().map(|r| (Target::Partition(r.partition), r.rect)));
        out.extend(self.mores.iter().map(|m| (Target::More(m.list.clone()), m.rect)));
        out.extend(self.consumers.iter().map(|(i, r)| (Target::Consumer(*i), *r)));
        out
    }

    /// What the tour rings for a target key: a broker's title with its state lines (a step about
    /// the subscription table points at the table, not only at the name), anything else's own
    /// rectangle. `None` when the key is not drawn.
    pub fn highlight_rect(&self, view: &View, key: &str) -> Option<Rect> {
        let (target, r) = self.targets().into_iter().find(|(t, _)| t.key(view).as_deref() == Some(key))?;
        Some(self.ringed(&target, r))
    }

    /// The rectangle a target is shown by: a broker's title with its state lines, anything
    /// else's own (`r`, its rectangle in [`Layout::targets`]).
    pub fn ringed(&self, target: &Target, r: Rect) -> Rect {
        match target {
            Target::Broker(i) => match self.brokers.iter().find(|b| b.index == *i) {
                Some(b) => b.lines.iter().fold(b.name_rect, |acc, (_, line)| acc.union(line)),
                None => r,
            },
            _ => r,
        }
    }

    /// Every rectangle that must stay inside the canvas and must not overlap its siblings.
    #[cfg(test)]
    pub fn boxes(&self) -> Vec<Rect> {
        let mut v: Vec<Rect> = self.producers.iter().map(|p| p.1).collect();
        v.extend(self.brokers.iter().map(|b| b.rect));
        v.extend(self.consumers.iter().map(|c| c.1));
        v.push(self.key);
        v
    }
}

/// Pages of the canvas's long lists (list id → first item shown).
pub type Pages = VecMap<String, usize>;

/// The pages under which `key` is drawn: `pages` itself when it already is, else `pages` with
/// one list (or one list inside another, as a broker's topics hold partitions) turned to the
/// page that shows it. `None` when no page does (the key names nothing in the view).
pub fn pages_showing(view: &View, width: f64, height: f64, pages: &Pages, key: &str) -> Option<Pages> {
    fn search(view: &View, width: f64, height: f64, pages: &Pages, key: &str, depth: usize) -> Option<Pages> {
        let l = layout(view, width, height, pages);
        if l.targets().iter().any(|(t, _)| t.key(view).as_deref() == Some(key)) {
            return Some(pages.clone());
        }
        if depth == 0 {
            return None;
        }
        for more in &l.mores {
            let mut turned = pages.clone();
            let mut m = more.clone();
            // Every page of this list once, then it wraps to the first.
            for _ in 0..=m.hidden + m.shown {
                if m.wraps {
                    break;
                }
                let cur = turned.get(&m.list).copied().unwrap_or(0);
                turned.insert(m.list.clone(), cur + m.shown.max(1));
                if let Some(found) = search(view, width, height, &turned, key, depth - 1) {
                    return Some(found);
                }
                let next = layout(view, width, height, &turned);
                match next.mores.iter().find(|n| n.list == m.list) {
                    Some(n) => m = n.clone(),
                    None => break,
                }
            }
        }
        None
    }
    search(view, width, height, pages, key, 2)
}

/// How many of `n` items to show on a page starting at `start` when at most `fit` rows are
/// available; a "+N more" row takes one of them when not everything fits.
fn page(n: usize, fit: usize, start: usize) -> (usize, usize, bool) {
    if n <= fit {
        return (0, n, false);
    }
    let per = fit.saturating_sub(1).max(1);
    let start = if start >= n { 0 } else { start };
    let shown = per.min(n - start);
    (start, shown, true)
}

struct TopicPart {
    topic: usize,
    name: String,
    /// Indexes into `TopicView::partitions` on this broker.
    parts: Vec<usize>,
}

/// The partitions of `broker`, topic by topic (internal topics left out).
fn broker_topics(view: &View, broker: usize, single_broker: bool) -> Vec<TopicPart> {
    let mut out = Vec::new();
    for (ti, t) in view.topics.iter().enumerate() {
        if t.internal {
            continue;
        }
        let parts: Vec<usize> = t
            .partitions
            .iter()
            .enumerate()
            .filter(|(_, p)| p.broker == Some(broker) || (single_broker && p.broker.is_none()))
            .map(|(i, _)| i)
            .collect();
        if !parts.is_empty() {
            out.push(TopicPart { topic: ti, name: t.name.clone(), parts });
        }
    }
    out
}

/// Lays out `view` on a canvas of `width` × `height` CSS pixels.
/// The shortest canvas that draws the tag key.
const KEYED_HEIGHT: f64 = 200.0;

pub fn layout(view: &View, width: f64, height: f64, pages: &Pages) -> Layout {
    let canvas = Rect::new(0.0, 0.0, width, height);
    // Text grows with the canvas (a classroom projector at 1920×1080 gets about 15 px), as far
    // as both its width and its height allow.
    let font = decimal::clamp((width / 900.0).min(height / 540.0) * 12.0, 11.0, 18.0);
    let pad = decimal::clamp(width * 0.012, 8.0, 24.0);
    let line_h = font + 4.0;
    // The tag key along the bottom, but not on a canvas as short as an embed's at 480×270: there
    // its row is worth more to the brokers' lines (the key names the dots' colours; the rows say
    // who owns what).
    let key = if height >= KEYED_HEIGHT {
        Rect::new(pad, height - pad - line_h, width - 2.0 * pad, line_h)
    } else {
        Rect::new(pad, height, width - 2.0 * pad, 0.0)
    };
    let top = pad;
    let bottom = if key.h > 0.0 { key.y - pad * 0.5 } else { height - pad };
    let avail = (bottom - top).max(40.0);

    // Narrow canvases (a comparison, an embed) drop the producer column: the dots still start at
    // the partition's left edge.
    let narrow = width < 520.0;
    let has_producers = !view.producers.is_empty() && !narrow;
    // Wide enough for the longest producer name in the bold label font (about 0.62 em a
    // character, plus the box's padding), within a tenth to a quarter of the canvas: at a fifth,
    // Pulsar's "payment-service" was cut at 1280x800, where the canvas is 580 px wide.
    let longest_name = view.producers.iter().map(|p| p.name.chars().count()).max().unwrap_or(0);
    let name_w = longest_name as f64 * font * 0.62 + 14.0;
    let prod_w =
        if has_producers { decimal::clamp(name_w.max(width * 0.1), 84.0, (width * 0.25).clamp(84.0, 170.0)) } else { 0.0 };
    let gap_pb = if has_producers { decimal::clamp(width * 0.03, 10.0, 70.0) } else { 0.0 };
    let cons_w = if narrow { (width * 0.3).max(80.0) } else { decimal::clamp(width * 0.25, 130.0, 380.0) };
    let gap_bc = if narrow { (width * 0.06).max(14.0) } else { decimal::clamp(width * 0.07, 32.0, 160.0) };
    let broker_x = pad + prod_w + gap_pb;
    let broker_w = (width - 2.0 * pad - prod_w - gap_pb - gap_bc - cons_w).max(120.0);
    let cons_x = broker_x + broker_w + gap_bc;

    let mut out = Layout { canvas, font, key, ..Layout::default() };

    // Consumers: boxes of up to four lines, paged when even one line each does not fit.
    let nc = view.consumers.len();
    let gap_c = (line_h * 0.5).max(6.0);
    let min_box = line_h + 10.0;
    let fit_c = (((avail + gap_c) / (min_box + gap_c)).floor() as usize).max(1);
    let (start, shown, paged) = page(nc, fit_c, pages.get("consumers").copied().unwrap_or(0));
    let slots = shown + usize::from(paged);
    if slots > 0 {
        let box_h = decimal::clamp((avail - gap_c * (slots as f64 - 1.0)) / slots as f64, min_box, 5.5 * line_h + 12.0);
        let total = box_h * slots as f64 + gap_c * (slots as f64 - 1.0);
        let mut y = top + ((avail - total) / 2.0).max(0.0);
        for i in start..start + shown {
            out.consumers.push((i, Rect::new(cons_x, y, cons_w, box_h)));
            y += box_h + gap_c;
        }
        if paged {
            out.mores.push(More {
                list: "consumers".into(),
                hidden: nc - shown,
                shown,
                wraps: start + shown >= nc,
                rect: Rect::new(cons_x, y, cons_w, line_h.min(box_h)),
                folded: Vec::new(),
            });
        }
    }

    // Producers: small boxes, centred (none on a narrow canvas, whose dots start at the rows).
    let np = if has_producers { view.producers.len() } else { 0 };
    if np > 0 {
        let box_h = (2.0 * line_h + 8.0).min((avail / np as f64 - 6.0).max(line_h));
        let total = (box_h + 6.0) * np as f64 - 6.0;
        let mut y = top + ((avail - total) / 2.0).max(0.0);
        for i in 0..np {
            if y + box_h > bottom {
                break;
            }
            out.producers.push((i, Rect::new(pad, y, prod_w, box_h)));
            y += box_h + 6.0;
        }
    }

    // Brokers: share the height by how many rows each would like.
    let single_broker = view.brokers.len() <= 1;
    let topics: Vec<Vec<TopicPart>> = (0..view.brokers.len()).map(|b| broker_topics(view, b, single_broker)).collect();
    let gap_b = pad * 0.6;
    let nb = view.brokers.len().max(1);
    let header = line_h + 6.0;
    let wants: Vec<f64> = (0..view.brokers.len())
        .map(|b| {
            let lines = view.brokers[b].lines.len().min(4) as f64;
            let rows: usize = topics[b].iter().map(|t| t.parts.len() + usize::from(t.parts.len() > 1)).sum();
            header + lines * line_h + rows.max(1) as f64 * (line_h + 4.0) + 8.0
        })
        .collect();
    // The most a broker can use: rows at their largest.
    let most: Vec<f64> = (0..view.brokers.len())
        .map(|b| {
            let lines = view.brokers[b].lines.len().min(4) as f64;
            let rows: usize = topics[b].iter().map(|t| t.parts.len() + usize::from(t.parts.len() > 1)).sum();
            header + lines * line_h + rows.max(1) as f64 * 2.4 * line_h + 8.0
        })
        .collect();
    let room = avail - gap_b * (nb as f64 - 1.0);
    let want_total: f64 = wants.iter().sum::<f64>().max(1.0);
    let most_total: f64 = most.iter().sum::<f64>().max(1.0);
    // Everything fits: grow towards the largest rows, and centre the column.
    let grow = if want_total < room { ((room - want_total) / (most_total - want_total).max(1.0)).min(1.0) } else { 0.0 };
    let used: f64 = if want_total < room {
        (0..wants.len()).map(|b| wants[b] + (most[b] - wants[b]) * grow).sum::<f64>() + gap_b * (nb as f64 - 1.0)
    } else {
        avail
    };
    let mut y = top + ((avail - used) / 2.0).max(0.0);
    for b in 0..view.brokers.len() {
        // A broker gets what it wants when everything fits, else its share (at least a header).
        let h = if want_total <= room {
            wants[b] + (most[b] - wants[b]) * grow
        } else {
            (room * wants[b] / want_total).max(header + line_h + 8.0)
        };
        let h = h.min(bottom - y).max(0.0);
        if h < header {
            break;
        }
        let rect = Rect::new(broker_x, y, broker_w, h);
        let name_rect = Rect::new(broker_x + 8.0, y + 3.0, broker_w - 16.0, line_h);
        let mut inner_y = y + header;
        let inner_bottom = y + h - 6.0;
        // State lines: at most four, never more than a third of the box, and only what the
        // partition rows leave (at least one): a broker's partitions are drawn whole where they
        // can be, its other lines are in the Inspector too.
        let rows_here: usize = topics[b].iter().map(|t| t.parts.len() + usize::from(t.parts.len() > 1)).sum();
        let inner_h = inner_bottom - inner_y;
        let rows_need = rows_here.max(1) as f64 * row_min(line_h) + 4.0;
        // Rows without their topic title need one unit less (see `lay_partitions`).
        let rows_need_untitled = rows_need - if topics[b].len() == 1 && rows_here > 1 { row_min(line_h) } else { 0.0 };
        let left_for_lines = ((inner_h - rows_need_untitled) / line_h).floor().max(0.0) as usize;
        let lines_fit = ((inner_h / 3.0 / line_h).floor() as usize).min(4).min(left_for_lines);
        let n_lines = view.brokers[b].lines.len();
        // A "+N more entries" line only where it does not push a row off.
        let shown_lines =
            if n_lines > lines_fit && left_for_lines > lines_fit { lines_fit.saturating_sub(1) } else { n_lines.min(lines_fit) };
        let spare = (inner_bottom - inner_y) - rows_here.max(1) as f64 * (line_h + 4.0);
        let span = if shown_lines > 0 && spare >= shown_lines as f64 * 2.0 * line_h + line_h { 2.0 } else { 1.0 };
        let mut lines = Vec::new();
        for li in 0..shown_lines {
            lines.push((li, Rect::new(broker_x + 8.0, inner_y, broker_w - 16.0, line_h * span)));
            inner_y += line_h * span;
        }
        let more_lines = if left_for_lines > lines_fit { n_lines - shown_lines } else { 0 };
        if more_lines > 0 && lines_fit > 0 {
            inner_y += line_h;
        }
        if !lines.is_empty() || more_lines > 0 {
            inner_y += 4.0;
        }
        lay_partitions(
            &mut out,
            view,
            &topics[b],
            b,
            Rect::new(broker_x, inner_y, broker_w, (inner_bottom - inner_y).max(0.0)),
            line_h,
            pages,
        );
        out.brokers.push(BrokerBox { index: b, rect, name_rect, lines, more_lines });
        y += h + gap_b;
    }
    let label_w = out.rows.first().map(|r| r.label_rect.w).unwrap_or(60.0);
    let bar_w = out.rows.first().map(|r| r.bar.w).unwrap_or(broker_w - label_w);
    out.max_cells = ((bar_w / 5.0).floor() as u64).clamp(8, 400);
    out
}

/// The least height of a partition row: its label's font and a pixel (rows get that tight
/// before a list is paged).
fn row_min(line_h: f64) -> f64 {
    line_h - 3.0
}

/// Every partition of a broker's topics, for the line it folds to.
fn folded(topics: &[TopicPart]) -> Vec<(usize, usize)> {
    topics.iter().flat_map(|t| t.parts.iter().map(|&i| (t.topic, i))).collect()
}

/// Partition rows of one broker inside `area`, topic by topic, paged when they do not fit.
fn lay_partitions(out: &mut Layout, view: &View, topics: &[TopicPart], broker: usize, area: Rect, line_h: f64, pages: &Pages) {
    let row_min = row_min(line_h);
    let row_max = 2.4 * line_h;
    let x = area.x + 8.0;
    let w = area.w - 16.0;
    let multi_topic = view.topics.iter().filter(|t| !t.internal).count() > 1;
    // A label column wide enough for "TopicTestA q0" when rows name their topic.
    let label_w = if multi_topic { decimal::clamp(w * 0.3, 70.0, 220.0) } else { decimal::clamp(w * 0.16, 50.0, 100.0) };
    // Room for "log end · committed" of four digits each at the row font.
    let info_w = decimal::clamp(w * 0.2, (line_h * 4.2).min(w * 0.3), 130.0);
    let bar_x = x + label_w;
    let bar_w = (w - label_w - info_w - 6.0).max(20.0);
    let fit_rows = ((area.h / row_min).floor() as usize).max(1);
    // Items: a title (topics with several partitions) and its rows; a one-partition topic is one row.
    // A broker of one topic whose rows fit only without their title leaves the title out (the
    // consumers' boxes name what they subscribe).
    let with_titles: usize = topics.iter().map(|t| t.parts.len() + usize::from(t.parts.len() > 1)).sum();
    let untitled = topics.len() == 1 && with_titles > fit_rows && topics[0].parts.len() <= fit_rows;
    let titled = |t: &TopicPart| t.parts.len() > 1 && !untitled;
    let units = |t: &TopicPart| t.parts.len() + usize::from(titled(t));
    let total: usize = topics.iter().map(units).sum();
    // Room for one row only, and more to show: say how many, and nothing else.
    if fit_rows < 2 && total > 1 {
        if area.h >= 10.0 {
            let parts: usize = topics.iter().map(|t| t.parts.len()).sum();
            out.mores.push(More {
                list: format!("broker:{broker}:topics"),
                hidden: parts,
                shown: 0,
                wraps: true,
                rect: Rect::new(x, area.y, w, area.h.min(row_min)),
                folded: folded(topics),
            });
        }
        return;
    }
    // Decide how many partitions each topic may show: all, or pages of `per_topic`.
    let mut per_topic = usize::MAX;
    if total > fit_rows {
        // Cap each topic (title + k rows + a "+N more" row) until the broker fits, down to one row.
        for k in (1..=topics.iter().map(|t| t.parts.len()).max().unwrap_or(1)).rev() {
            let need: usize = topics.iter().map(|t| if t.parts.len() > k { k + 2 } else { units(t) }).sum();
            per_topic = k;
            if need <= fit_rows {
                break;
            }
        }
    }
    let shown_units = |t: &TopicPart| if t.parts.len() > per_topic { per_topic + 2 } else { units(t) };
    // Then page the topics themselves when even that does not fit.
    let list_id = format!("broker:{broker}:topics");
    let mut fit_topics = topics.len();
    let mut acc = 0;
    for (i, t) in topics.iter().enumerate() {
        acc += shown_units(t);
        if acc > fit_rows.saturating_sub(usize::from(i + 1 < topics.len())) {
            fit_topics = i.max(1);
            break;
        }
    }
    let (t_start, t_shown, t_paged) = if fit_topics < topics.len() {
        let start = pages.get(&list_id).copied().unwrap_or(0);
        let start = if start >= topics.len() { 0 } else { start };
        (start, fit_topics.min(topics.len() - start), true)
    } else {
        (0, topics.len(), false)
    };
    let used: usize = topics[t_start..t_start + t_shown].iter().map(shown_units).sum::<usize>() + usize::from(t_paged);
    if used as f64 * row_min > area.h + 0.5 {
        // Even a page does not fit: say how many partitions there are, and nothing else.
        if area.h >= 10.0 {
            let parts: usize = topics.iter().map(|t| t.parts.len()).sum();
            let rect = Rect::new(x, area.y, w, area.h.min(row_min));
            out.mores.push(More {
                list: format!("broker:{broker}:topics"),
                hidden: parts,
                shown: 0,
                wraps: true,
                rect,
                folded: folded(topics),
            });
        }
        return;
    }
    let row_h = decimal::clamp(area.h / used.max(1) as f64, row_min.min(area.h.max(1.0)), row_max);
    let mut y = area.y;
    for t in &topics[t_start..t_start + t_shown] {
        let title = titled(t);
        if title {
            out.titles.push(Title { text: t.name.clone(), rect: Rect::new(x, y, w, row_h) });
            y += row_h;
        }
        let list = format!("topic:{broker}:{}", t.name);
        let (p_start, p_shown, p_paged) = if t.parts.len() > per_topic {
            page(t.parts.len(), per_topic + 1, pages.get(&list).copied().unwrap_or(0))
        } else {
            (0, t.parts.len(), false)
        };
        for &pi in &t.parts[p_start..p_start + p_shown] {
            let p = &view.topics[t.topic].partitions[pi];
            let label = if title || !multi_topic { p.label.clone() } else { format!("{} {}", t.name, p.label) };
            let rect = Rect::new(x, y, w, row_h);
            let pad = (row_h * 0.15).min(3.0);
            out.rows.push(Row {
                partition: p.id,
                topic: t.topic,
                index: pi,
                label,
                rect,
                label_rect: Rect::new(x + if title { 8.0 } else { 0.0 }, y, label_w - if title { 10.0 } else { 4.0 }, row_h),
                bar: Rect::new(bar_x, y + pad, bar_w, row_h - 2.0 * pad),
                info: Rect::new(bar_x + bar_w + 6.0, y, info_w, row_h),
            });
            y += row_h;
        }
        if p_paged {
            out.mores.push(More {
                list,
                hidden: t.parts.len() - p_shown,
                shown: p_shown,
                wraps: p_start + p_shown >= t.parts.len(),
                rect: Rect::new(x + 10.0, y, w - 10.0, row_h),
                folded: Vec::new(),
            });
            y += row_h;
        }
    }
    if t_paged {
        out.mores.push(More {
            list: list_id,
            hidden: topics.len() - t_shown,
            shown: t_shown,
            wraps: t_start + t_shown >= topics.len(),
            rect: Rect::new(x, y, w, row_h),
            folded: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqviz_app::presets::PRESETS;
    use mqviz_app::registry::parse;

    #[test]
    fn a_badge_is_as_wide_as_its_text_within_the_bar_and_the_canvas() {
        let canvas = Rect::new(0.0, 0.0, 560.0, 300.0);
        let bar = Rect::new(120.0, 40.0, 200.0, 16.0);
        // "sealed · drained" at ~10 px is about 80 px: more than half the old bar.w * 0.5 cap
        // on a 150 px bar, which cut it.
        let r = badge_rect(Rect::new(120.0, 40.0, 150.0, 16.0), 80.0, 13.0, canvas);
        assert_eq!(r.w, 80.0 + 2.0 * BADGE_PAD, "sized to the measured text");
        assert!(r.y < 40.0 && r.bottom() > 40.0 && r.bottom() <= 43.0, "sits on the bar's top edge: {r:?}");
        let r = badge_rect(bar, 500.0, 13.0, canvas);
        assert_eq!((r.x, r.right()), (bar.x, bar.right()), "never wider than the bar");
        let r = badge_rect(Rect::new(500.0, 40.0, 200.0, 16.0), 120.0, 13.0, canvas);
        assert!(r.right() <= canvas.right() - 1.0 && r.w > 0.0, "kept inside the canvas: {r:?}");
        let r = badge_rect(Rect::new(120.0, 2.0, 150.0, 16.0), 40.0, 13.0, canvas);
        assert!(r.y >= 0.0, "not above the canvas: {r:?}");
    }

    const SIZES: [(f64, f64); 6] =
        [(560.0, 300.0), (760.0, 420.0), (980.0, 520.0), (1240.0, 560.0), (1880.0, 800.0), (3800.0, 1800.0)];

    fn check(name: &str, view: &View, w: f64, h: f64, pages: &Pages) -> Layout {
        let l = layout(view, w, h, pages);
        let canvas = l.canvas;
        for r in l.boxes() {
            assert!(r.inside(&canvas), "{name} at {w}x{h}: {r:?} outside the canvas");
        }
        let boxes = l.boxes();
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert!(!a.overlaps(b), "{name} at {w}x{h}: {a:?} overlaps {b:?}");
            }
        }
        for b in &l.brokers {
            for row in l.rows.iter().filter(|r| view.topics[r.topic].partitions[r.index].broker.is_none_or(|x| x == b.index)) {
                if row.rect.y >= b.rect.y && row.rect.y < b.rect.bottom() {
                    assert!(row.rect.inside(&b.rect), "{name} at {w}x{h}: row {} spills out of its broker", row.label);
                    assert!(row.bar.w >= 20.0 && row.rect.h >= 10.0, "{name} at {w}x{h}: row {} too small", row.label);
                }
            }
            for (_, r) in &b.lines {
                assert!(r.inside(&b.rect), "{name} at {w}x{h}: a state line spills out of its broker");
            }
        }
        for m in &l.mores {
            assert!(m.rect.inside(&canvas), "{name} at {w}x{h}: {m:?}");
        }
        // Everything is either shown or counted in a "+N more".
        let partitions: usize = view.topics.iter().filter(|t| !t.internal).map(|t| t.partitions.len()).sum();
        let hidden_parts: usize =
            l.mores.iter().filter(|m| m.list.starts_with("topic:") || m.list.contains(":topics")).map(|m| m.hidden).sum();
        assert!(l.rows.len() + hidden_parts >= partitions.min(1), "{name}: nothing shown");
        assert_eq!(
            l.consumers.len() + l.mores.iter().filter(|m| m.list == "consumers").map(|m| m.hidden).sum::<usize>(),
            view.consumers.len(),
            "{name} at {w}x{h}"
        );
        l
    }

    #[test]
    fn every_preset_fits_every_size() {
        for p in PRESETS {
            let mut sim = parse(p.text).unwrap();
            let until = sim.until();
            sim.run_until(until.min(70_000));
            let view = sim.view();
            for (w, h) in SIZES {
                check(p.file, &view, w, h, &Pages::new());
            }
        }
    }

    #[test]
    fn a_broker_folded_to_one_line_says_who_owns_each_of_its_partitions() {
        let p = PRESETS.iter().find(|p| p.file == "kafka-cooperative-join.json").unwrap();
        let mut sim = parse(p.text).unwrap();
        let before = sim.view();
        sim.run_until(20_000);
        let view = sim.view();
        // An embed's canvas at 480×270: no row fits, each broker is one line.
        let l = layout(&view, 466.0, 164.0, &Pages::new());
        let folded: Vec<&More> = l.mores.iter().filter(|m| m.shown == 0).collect();
        assert_eq!(folded.len(), 3, "{:?}", l.mores);
        assert_eq!(l.key.h, 0.0, "no tag key on a canvas this short");
        let mut named = 0;
        for m in &folded {
            let said = fold_summary(&view, &m.folded, true);
            for &(t, i) in &m.folded {
                let part = &view.topics[t].partitions[i];
                let owner = part.owners.first().map_or("no owner", |&o| view.consumers[o as usize].name.as_str());
                // "<owner>: ... <label> ..." with no other owner between them.
                let group =
                    said.split(" · ").find(|g| g.split(": ").nth(1).is_some_and(|ls| ls.split(' ').any(|l| l == part.label)));
                assert_eq!(group.and_then(|g| g.split(": ").next()), Some(owner), "{said}");
                named += 1;
            }
        }
        assert_eq!(named, 12);
        // Before the run: the labels alone.
        let l0 = layout(&before, 466.0, 164.0, &Pages::new());
        let m0 = l0.mores.iter().find(|m| m.shown == 0).unwrap();
        let said = fold_summary(&before, &m0.folded, false);
        assert!(!said.contains(':') && said.split(' ').count() == m0.folded.len(), "{said}");
    }

    #[test]
    fn a_highlight_on_a_hidden_page_turns_to_the_page_that_shows_it() {
        let p = PRESETS.iter().find(|p| p.file == "kafka-cooperative-join.json").unwrap();
        let mut sim = parse(p.text).unwrap();
        sim.run_until(20_000);
        let view = sim.view();
        // A size at which some of orders' twelve partitions are on another page, while every
        // broker still draws rows (below that a broker only says how many it holds).
        let keys: Vec<String> = (0..12).map(|i| format!("partition:orders:p{i}")).collect();
        let paged =
            [(560.0, 200.0), (560.0, 240.0), (560.0, 300.0), (760.0, 300.0), (760.0, 340.0)].into_iter().find(|&(w, h)| {
                let l = layout(&view, w, h, &Pages::new());
                let hidden = keys.iter().any(|k| l.highlight_rect(&view, k).is_none());
                hidden && l.mores.iter().all(|m| m.shown > 0 || m.list == "consumers")
            });
        let (w, h) = paged.expect("a size that pages orders' partitions");
        let first = layout(&view, w, h, &Pages::new());
        let hidden: Vec<&String> = keys.iter().filter(|k| first.highlight_rect(&view, k).is_none()).collect();
        for key in &hidden {
            let pages =
                pages_showing(&view, w, h, &Pages::new(), key).unwrap_or_else(|| panic!("no page shows {key} at {w}x{h}"));
            let l = check(p.file, &view, w, h, &pages);
            assert!(l.highlight_rect(&view, key).is_some(), "{key} drawn under {pages:?}");
        }
        assert_eq!(pages_showing(&view, w, h, &Pages::new(), "partition:orders:p99"), None);
    }

    #[test]
    fn twelve_partitions_on_three_brokers_fit_an_embed_whole() {
        // A Kafka embed at 720×420 leaves the canvas about 700×290: every partition is drawn (the
        // brokers' own lines and the topic titles give way first), none behind "+N more".
        let p = PRESETS.iter().find(|p| p.file == "kafka-eager-join.json").unwrap();
        let mut sim = parse(p.text).unwrap();
        sim.run_until(17_000);
        let view = sim.view();
        for (w, h) in [(700.0, 290.0), (574.0, 430.0)] {
            let l = check(p.file, &view, w, h, &Pages::new());
            assert_eq!(
                l.rows.len(),
                12,
                "at {w}x{h}: {:?} shown, {:?}",
                l.rows.iter().map(|r| &r.label).collect::<Vec<_>>(),
                l.mores
            );
        }
    }

    #[test]
    fn a_broker_is_highlighted_with_its_state_lines() {
        let p = PRESETS.iter().find(|p| p.file == "seed-same-topic-different-tags.json").unwrap();
        let mut sim = parse(p.text).unwrap();
        sim.run_until(6_100);
        let view = sim.view();
        let l = layout(&view, 980.0, 520.0, &Pages::new());
        let b = &l.brokers[0];
        let r = l.highlight_rect(&view, "broker:broker-a").unwrap();
        assert!(!b.lines.is_empty());
        for (_, line) in &b.lines {
            assert!(line.inside(&r), "{line:?} outside {r:?}");
        }
        assert!(b.name_rect.inside(&r));
    }

    #[test]
    fn a_large_topology_pages_its_topics() {
        let p = PRESETS.iter().find(|p| p.file == "filter-manager-heartbeat-cost.json").unwrap();
        let mut sim = parse(p.text).unwrap();
        sim.run_until(40_000);
        let view = sim.view();
        let l = check(p.file, &view, 980.0, 520.0, &Pages::new());
        let more = l.mores.iter().find(|m| m.list == "broker:0:topics").expect("a +N more row for broker 0's topics");
        assert!(more.hidden > 50, "{more:?}");
        let first: Vec<String> = l.rows.iter().map(|r| r.label.clone()).collect();
        let mut pages = Pages::new();
        pages.insert(more.list.clone(), more.shown);
        let next = check(p.file, &view, 980.0, 520.0, &pages);
        let second: Vec<String> = next.rows.iter().map(|r| r.label.clone()).collect();
        assert_ne!(first, second, "paging shows other topics");
    }

    #[test]
    fn producers_are_wide_enough_for_their_names_and_absent_when_narrow() {
        let p = PRESETS.iter().find(|p| p.file == "kafka-eager-join.json").unwrap();
        let sim = parse(p.text).unwrap();
        let view = sim.view();
        let name = &view.producers[0].name;
        assert_eq!(name, "orders-service");
        // At 574 px (the stage at 1280x800) and 774 px (800x600), "orders-service" was cut to
        // "orders-se…" in an 84 px box.
        for w in [574.0, 774.0, 1214.0] {
            let l = layout(&view, w, 320.0, &Pages::new());
            let r = l.producers[0].1;
            assert!(r.w - 12.0 >= name.chars().count() as f64 * l.font * 0.58, "{w}: {r:?} at font {}", l.font);
        }
        // A narrow canvas has no producer column: no box of no width with its label cut to nothing.
        assert!(layout(&view, 458.0, 260.0, &Pages::new()).producers.is_empty());
        // Pulsar's "payment-service" at 1280x800 (a 580 px stage) was cut at a fifth of it.
        let p = PRESETS.iter().find(|p| p.file == "pulsar-failover.json").unwrap();
        let view = parse(p.text).unwrap().view();
        let name = &view.producers[0].name;
        assert_eq!(name, "payment-service");
        let l = layout(&view, 580.0, 320.0, &Pages::new());
        let r = l.producers[0].1;
        assert!(r.w - 12.0 >= name.chars().count() as f64 * l.font * 0.58, "{r:?} at font {}", l.font);
    }
}
