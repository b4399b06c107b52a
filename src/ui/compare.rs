//! Side by side: the same scenario under two configurations (two allocation strategies, two
//! assignors, eager vs cooperative, or an earlier branch of the run), advancing in lockstep. The
//! second canvas is drawn by the frame loop in slot 1; this module adds the diff: what each side
//! consumed, lost and duplicated, and which partitions moved, when.

use std::collections::BTreeMap;

use leptos::prelude::*;

use super::state::{fmt_ms, Sim};
use crate::sim::engine::Millis;
use crate::sim::model::{Simulation, Totals, View};

/// Who owns each partition, by a label that reads the same on both sides.
fn owners(view: &View) -> BTreeMap<String, String> {
    let multi = view.topics.iter().filter(|t| !t.internal).count() > 1;
    let mut out = BTreeMap::new();
    for t in view.topics.iter().filter(|t| !t.internal) {
        for p in &t.partitions {
            let label = if multi { format!("{} {}", t.name, p.label) } else { p.label.clone() };
            let who: Vec<&str> =
                p.owners.iter().filter_map(|&o| view.consumers.get(o as usize)).map(|c| c.name.as_str()).collect();
            out.insert(label, if who.is_empty() { "nobody".to_string() } else { who.join("+") });
        }
    }
    out
}

/// One recorded move of a partition on one side.
#[derive(Clone, Debug, PartialEq)]
struct Move {
    at: Millis,
    side: usize,
    partition: String,
    from: String,
    to: String,
}

fn side_totals(m: &dyn Simulation) -> (Totals, BTreeMap<String, String>) {
    (m.totals(), owners(&m.view()))
}

/// The split point of the comparison's view (see `ui::lazy`).
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(compare, fallible))]
pub fn part() -> Result<fn(NodeRef<leptos::html::Canvas>) -> AnyView, wasm_split_helpers::SplitLoaderError> {
    Ok(|canvas| view! { <CompareStage canvas=canvas /> }.into_any())
}

#[component]
fn CompareStage(canvas: NodeRef<leptos::html::Canvas>) -> impl IntoView {
    let sim = expect_context::<Sim>();
    // Moves seen so far, and the owners they were measured against (per side).
    let moves = StoredValue::new(Vec::<Move>::new());
    let last: StoredValue<[BTreeMap<String, String>; 2]> = StoredValue::new([BTreeMap::new(), BTreeMap::new()]);
    let seen_epoch = StoredValue::new(u64::MAX);
    let data = Memo::new(move |_| {
        sim.ui_version.track();
        let epoch = sim.epoch.get_value();
        if seen_epoch.get_value() != epoch {
            seen_epoch.set_value(epoch);
            moves.set_value(Vec::new());
            last.set_value([BTreeMap::new(), BTreeMap::new()]);
        }
        let left = sim.peek(side_totals)?;
        let right = sim.peek_compare(side_totals)?;
        let now = sim.peek(|m| m.now()).unwrap_or(0);
        for (side, (_, owners)) in [&left, &right].into_iter().enumerate() {
            let before = last.with_value(|l| l[side].clone());
            if !before.is_empty() {
                for (p, o) in owners {
                    if before.get(p).is_some_and(|b| b != o) {
                        let m = Move { at: now, side, partition: p.clone(), from: before[p].clone(), to: o.clone() };
                        moves.update_value(|v| v.push(m));
                    }
                }
            }
            last.update_value(|l| l[side] = owners.clone());
        }
        let label = sim.compare.with_value(|c| c.as_ref().map(|c| c.label.clone())).unwrap_or_default();
        Some((label, left, right, moves.get_value()))
    });
    let row = |name: &'static str, a: u64, b: u64| {
        view! {
            <tr class:differs=a != b>
                <th scope="row">{name}</th>
                <td class="num">{a}</td>
                <td class="num">{b}</td>
            </tr>
        }
    };
    view! {
        <div class="canvas-wrap compare-right">
            <canvas data-testid="canvas-compare" node_ref=canvas tabindex="-1" aria-label="The compared run's topology"></canvas>
        </div>
        {move || {
            data.get()
                .map(|(label, (ta, oa), (tb, ob), moves)| {
                    let differ: Vec<(String, String, String)> = oa
                        .iter()
                        .filter_map(|(p, a)| ob.get(p).filter(|b| *b != a).map(|b| (p.clone(), a.clone(), b.clone())))
                        .collect();
                    view! {
                        <section class="diff" data-testid="compare-diff" aria-label="Differences between the two runs">
                            <table class="grid">
                                <thead>
                                    <tr>
                                        <th></th>
                                        <th scope="col">"this run"</th>
                                        <th scope="col" data-testid="compare-label">{label}</th>
                                    </tr>
                                </thead>
                                <tbody data-testid="compare-totals">
                                    {row("consumed", ta.consumed, tb.consumed)}
                                    {row("lost", ta.lost, tb.lost)}
                                    {row("duplicated", ta.duplicated, tb.duplicated)}
                                    {row("retrying", ta.retrying, tb.retrying)}
                                    {row("dead-lettered", ta.dead_lettered, tb.dead_lettered)}
                                </tbody>
                            </table>
                            <h3>{format!("Owned differently now ({})", differ.len())}</h3>
                            <ul class="moves" data-testid="compare-owners">
                                {differ
                                    .into_iter()
                                    .map(|(p, a, b)| view! { <li>{format!("{p}: {a} here, {b} there")}</li> })
                                    .collect_view()}
                            </ul>
                            <h3>{format!("Moves ({})", moves.len())}</h3>
                            <ul class="moves" data-testid="compare-moves" tabindex="0" aria-label="Partition moves, oldest first">
                                {moves
                                    .into_iter()
                                    .rev()
                                    .take(60)
                                    .map(|m| {
                                        let side = if m.side == 0 { "this run" } else { "other" };
                                        view! { <li>{format!("{} {side}: {} {} → {}", fmt_ms(m.at), m.partition, m.from, m.to)}</li> }
                                    })
                                    .collect_view()}
                            </ul>
                        </section>
                    }
                })
        }}
    }
}
