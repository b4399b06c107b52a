//! Side by side: the same scenario under two configurations (two allocation strategies, two
//! assignors, eager vs cooperative, two subscription types, the run without its edits, or an
//! earlier branch of the run), advancing in lockstep. The second canvas is drawn by the frame
//! loop in slot 1; this module adds what each side is and the diff: what each side consumed,
//! lost and duplicated, and which partitions moved at which rebalance.
//!
//! Moves are read from each run's own log (`mqviz_app::moves`, on a run ahead from the start), never
//! from the owners seen at the playhead, so the list is the same however the playhead got there.

use std::collections::BTreeMap;

use leptos::prelude::*;

use super::share::{this_label, WITHOUT_EDITS};
use super::state::{fmt_ms, Sim};
use mqviz_app::moves::{self, Gap, Move, Moves};
use mqviz_engine::sort::StableSort;
use mqviz_engine::Millis;
use mqviz_model::{Simulation, Totals};

/// The moves of both runs, to their ends.
fn both_moves(sim: Sim) -> [Moves; 2] {
    let this = sim.history.with_value(|h| {
        h.as_ref().and_then(|h| {
            let start = h.start()?;
            let until = start.until().max(h.commands().last().map(|c| c.at).unwrap_or(0));
            Some(moves::compute(start, h.commands(), until))
        })
    });
    let other = sim.compare.with_value(|c| {
        c.as_ref().and_then(|c| {
            let start = c.history.start()?;
            let until = start.until().max(c.history.commands().last().map(|c| c.at).unwrap_or(0));
            Some(moves::compute(start, c.history.commands(), until))
        })
    });
    [this.unwrap_or_default(), other.unwrap_or_default()]
}

/// The review of the run's edits (the change) as the comparison shows it above both sides.
#[derive(Clone, Debug, PartialEq)]
struct Verdict {
    headline: String,
    risky: bool,
    /// The rest of what `mqviz review` prints, line by line.
    lines: Vec<String>,
}

/// Lines of the review shown before "… more": the whole text is `mqviz review`'s.
const VERDICT_LINES: usize = 30;

/// Reviews the run with its edits against the run without them: the same verdict `mqviz review`
/// gives a scenario whose timeline holds those edits.
fn review_edits(sim: Sim) -> Option<Verdict> {
    sim.history.with_value(|h| {
        let h = h.as_ref()?;
        let start = h.start()?;
        let commands = h.commands();
        let until = start.until().max(commands.last().map(|c| c.at).unwrap_or(0));
        let mut r = mqviz_app::review::review_with(
            start,
            commands,
            until,
            commands.first().map(|c| c.at),
            &mqviz_app::registry::report_of,
        );
        r.change_label = "your first edit";
        let text = r.text();
        // The text's first lines are its title and the verdict, shown as the headline.
        let lines: Vec<String> = text.lines().skip(2).map(str::to_string).collect();
        Some(Verdict { headline: r.verdict(), risky: r.risky(), lines })
    })
}

fn side_totals(m: &dyn Simulation) -> (Totals, BTreeMap<String, String>) {
    (m.totals(), moves::owners(&m.view()))
}

/// The split point of the comparison's view (see `ui::lazy`).
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(compare, fallible))]
pub fn part() -> Result<fn(NodeRef<leptos::html::Canvas>) -> AnyView, wasm_split_helpers::SplitLoaderError> {
    Ok(|canvas| view! { <CompareStage canvas=canvas /> }.into_any())
}

fn move_text(m: &Move) -> String {
    match m.unowned_since {
        Some(since) if m.to == "nobody" => format!("{} {} → nobody since {}", m.partition, m.from, fmt_ms(since)),
        Some(since) => format!("{} {} → {} (no owner for {})", m.partition, m.from, m.to, fmt_ms(m.at - since)),
        None => format!("{} {} → {}", m.partition, m.from, m.to),
    }
}

/// The run's word for a partition ("queue" in RocketMQ).
fn noun(sim: Sim) -> &'static str {
    sim.peek(|m| m.partition_noun()).unwrap_or("partition")
}

/// The comparison's row of ownership moves, in the model's noun.
fn moves_label(sim: Sim) -> String {
    format!("{} moves", noun(sim))
}

/// "3 partitions, the longest 1.998 s" (in the model's noun) for the times without an owner so far.
fn gaps_text(gaps: &[Gap], now: Millis, noun: &str) -> String {
    // A partition may have been without an owner more than once: count it once.
    let mut parts: Vec<&str> = gaps.iter().map(|g| g.partition.as_str()).collect();
    parts.stable_sort();
    parts.dedup();
    let longest = gaps.iter().map(|g| g.to.unwrap_or(now) - g.from).max().unwrap_or(0);
    match gaps.len() {
        0 => "none".to_string(),
        _ => format!("{} {noun}{}, the longest {}", parts.len(), if parts.len() == 1 { "" } else { "s" }, fmt_ms(longest)),
    }
}

#[component]
fn CompareStage(canvas: NodeRef<leptos::html::Canvas>) -> impl IntoView {
    let sim = expect_context::<Sim>();
    // Both runs' moves, read once per comparison and again after every edit.
    let all_moves = Memo::new(move |_| {
        sim.edits_version.track();
        sim.comparing.track();
        both_moves(sim)
    });
    let data = Memo::new(move |_| {
        sim.ui_version.track();
        let left = sim.peek(side_totals)?;
        let right = sim.peek_compare(side_totals)?;
        let now = sim.peek(|m| m.now()).unwrap_or(0);
        let label = sim.compare.with_value(|c| c.as_ref().map(|c| c.label.clone())).unwrap_or_default();
        Some((label, left, right, now))
    });
    let row = |name: String, a: u64, b: u64| {
        view! {
            <tr class:differs=a != b>
                <th scope="row">{name}</th>
                <td class="num">{a}</td>
                <td class="num">{b}</td>
            </tr>
        }
    };
    let other_label = move || sim.compare.with_value(|c| c.as_ref().map(|c| c.label.clone())).unwrap_or_default();
    // Compared with the run without its edits, the edits are a change under review.
    let verdict = Memo::new(move |_| {
        sim.edits_version.track();
        sim.comparing.track();
        (other_label() == WITHOUT_EDITS).then(|| review_edits(sim)).flatten()
    });
    view! {
        {move || {
            verdict
                .get()
                .map(|v| {
                    let shown = v.lines.len().min(VERDICT_LINES);
                    let more = v.lines.len() - shown;
                    view! {
                        <section class="verdict" class:risky=v.risky data-testid="review-verdict" data-risky=v.risky.to_string() aria-label="Review of your edits">
                            <h3>"Review of your edits, run to the end"</h3>
                            <p class="headline" data-testid="review-headline">{v.headline}</p>
                            <details>
                                <summary>"What moved, what was lost or duplicated, and why"</summary>
                                <pre data-testid="review-text">{v.lines[..shown].join("\n")}</pre>
                                {(more > 0).then(|| view! { <p class="small muted">{format!("… {more} more lines: export the run and run mqviz review on it for all of them.")}</p> })}
                            </details>
                        </section>
                    }
                })
        }}
        <div class="canvas-wrap compare-right">
            <p class="side-label" data-testid="side-label-other">
                <span class="side-tag">"B"</span>
                {other_label}
            </p>
            <canvas data-testid="canvas-compare" node_ref=canvas tabindex="-1" aria-label=move || format!("The compared run's topology: {}", other_label())></canvas>
        </div>
        {move || {
            data.get()
                .map(|(label, (ta, oa), (tb, ob), now)| {
                    let differ: Vec<(String, String, String)> = oa
                        .iter()
                        .filter_map(|(p, a)| ob.get(p).filter(|b| *b != a).map(|b| (p.clone(), a.clone(), b.clone())))
                        .collect();
                    let [(ma, ga), (mb, gb)] = all_moves.with(|[a, b]| [a.at(now), b.at(now)]);
                    let (na, nb) = (ma.len(), mb.len());
                    let (idle_a, idle_b) = (gaps_text(&ga, now, noun(sim)), gaps_text(&gb, now, noun(sim)));
                    let rebalances = rebalance_rows(&ma, &mb);
                    view! {
                        <section class="diff" data-testid="compare-diff" aria-label="Differences between the two runs">
                            <table class="grid">
                                <thead>
                                    <tr>
                                        <th></th>
                                        <th scope="col" data-testid="compare-this-label">{format!("A: {}", this_label(sim))}</th>
                                        <th scope="col" data-testid="compare-label">{format!("B: {label}")}</th>
                                    </tr>
                                </thead>
                                <tbody data-testid="compare-totals">
                                    {row("consumed".into(), ta.consumed, tb.consumed)}
                                    {row("lost".into(), ta.lost, tb.lost)}
                                    {row("not consumed".into(), ta.unconsumed, tb.unconsumed)}
                                    {row("duplicated".into(), ta.duplicated, tb.duplicated)}
                                    {row("retrying".into(), ta.retrying, tb.retrying)}
                                    {row("dead-lettered".into(), ta.dead_lettered, tb.dead_lettered)}
                                    {row(moves_label(sim), na as u64, nb as u64)}
                                    <tr data-testid="compare-idle">
                                        <th scope="row">"without an owner"</th>
                                        <td class="num">{idle_a}</td>
                                        <td class="num">{idle_b}</td>
                                    </tr>
                                </tbody>
                            </table>
                            <h3>{format!("Owned differently now ({})", differ.len())}</h3>
                            <ul class="moves" data-testid="compare-owners">
                                {differ
                                    .into_iter()
                                    .map(|(p, a, b)| view! { <li>{format!("{p}: {a} in A, {b} in B")}</li> })
                                    .collect_view()}
                            </ul>
                            <h3 data-testid="compare-moves-title">
                                {format!("Moves by rebalance, so far (A {na}, B {nb})")}
                            </h3>
                            <ul class="moves" data-testid="compare-moves" tabindex="0" aria-label="Partition moves by rebalance, oldest first">
                                {rebalances
                                    .into_iter()
                                    .map(|(at, side, n, text)| {
                                        view! {
                                            <li data-at=at.to_string() data-side=side data-count=n.to_string()>
                                                {format!("{} {side}: {n} moved: {text}", fmt_ms(at))}
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        </section>
                    }
                })
        }}
    }
}

/// One row per instant and side at which partitions moved: (at, "A" or "B", moves, their text),
/// oldest first, A before B at the same instant.
fn rebalance_rows(a: &[Move], b: &[Move]) -> Vec<(Millis, &'static str, usize, String)> {
    let mut rows = Vec::new();
    for (side, moves) in [("A", a), ("B", b)] {
        for chunk in moves.chunk_by(|x, y| x.at == y.at) {
            let text = chunk.iter().map(move_text).collect::<Vec<_>>().join(", ");
            rows.push((chunk[0].at, side, chunk.len(), text));
        }
    }
    rows.stable_sort_by_key(|r| r.0);
    rows
}
