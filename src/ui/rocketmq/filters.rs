//! The filter panel: for a selected broker, its flags and both indexes of its
//! ConsumerFilterManager (the topic-keyed registry and the group-keyed index), and a plot of
//! heartbeat registration cost over time for every broker (topic scan vs group index).
//!
//! The tables can hold hundreds of rows and are read-only, so they are rendered as escaped HTML
//! strings behind memos (one DOM write when the text changes; small wasm).

use std::fmt::Write;

use leptos::prelude::*;

use super::cost_plot::CostPlot;
use crate::ui::state::{esc, fmt_ms, Sim};
use mqviz_engine::decimal::fixed;
use mqviz_rocketmq::world::World;

/// Registry rows rendered at most (the rest are counted).
const MAX_ROWS: usize = 400;

fn flags_html(w: &World, i: usize) -> (String, &'static str) {
    let Some(b) = w.brokers.get(i) else { return (String::new(), "") };
    let fm = &b.filter_manager;
    let n = b.filter_costs.len();
    let touched: u64 = b.filter_costs.iter().map(|s| s.cost.entries_touched).sum();
    let mean = if n == 0 { 0.0 } else { touched as f64 / n as f64 };
    let last = b.filter_costs.last().map(|s| s.cost.entries_touched).unwrap_or(0);
    let live = fm.entries().filter(|e| !e.is_dead()).count();
    let flag = |v: bool| if v { "<dd>true</dd>" } else { "<dd class=\"off\">false</dd>" };
    let html = format!(
        "<dt>design</dt><dd><code>{}</code></dd><dt>enablePropertyFilter</dt>{}<dt>enableCalcFilterBitMap</dt>{}\
         <dt>entries (live)</dt><dd>{} ({live})</dd><dt>heartbeat registrations</dt>\
         <dd>{n} · {} entries touched on average, {last} last</dd>",
        fm.design().name(),
        flag(b.enable_property_filter),
        flag(b.enable_calc_filter_bitmap),
        fm.entry_count(),
        fixed(mean, 1),
    );
    (html, fm.design().name())
}

fn registry_html(w: &World, i: usize) -> String {
    let Some(b) = w.brokers.get(i) else { return String::new() };
    let mut out = String::new();
    let mut total = 0usize;
    for (topic, gs) in b.filter_manager.by_topic() {
        for e in gs.values() {
            total += 1;
            if total > MAX_ROWS {
                continue;
            }
            let dead = e.is_dead();
            let state = if dead { format!("dead @{}", fmt_ms(e.dead_time)) } else { "alive".into() };
            let _ = write!(
                out,
                "<tr data-topic=\"{t}\" data-group=\"{g}\" data-dead=\"{dead}\"{cls}><td>{t}</td><td>{g}</td>\
                 <td><code>{x}</code></td><td class=\"num\">{v}</td><td>{state}</td></tr>",
                t = esc(topic),
                g = esc(&e.group),
                cls = if dead { " class=\"dead\"" } else { "" },
                x = esc(&e.expression),
                v = e.client_version,
            );
        }
    }
    if total > MAX_ROWS {
        let _ = write!(out, "<tr><td colspan=\"5\" class=\"muted\">… {} more</td></tr>", total - MAX_ROWS);
    }
    if total == 0 {
        out.push_str("<tr><td colspan=\"5\" class=\"muted\">(no SQL92 filter data registered yet)</td></tr>");
    }
    out
}

fn group_index_html(w: &World, i: usize) -> String {
    let Some(b) = w.brokers.get(i) else { return String::new() };
    let fm = &b.filter_manager;
    if fm.group_index().is_empty() {
        return format!(
            "<p class=\"muted small\">No group-keyed index on {} ({}): every heartbeat's getByGroup scans all {} topic maps \
             of the registry.</p>",
            esc(&b.name),
            fm.design().name(),
            fm.by_topic().len()
        );
    }
    let mut out = String::from(
        "<table class=\"grid\"><thead><tr><th>Group</th><th class=\"num\" title=\"live / all entries\">live</th>\
         <th>Topics</th></tr></thead><tbody>",
    );
    for (g, ts) in fm.group_index() {
        let live = ts.values().filter(|e| !e.is_dead()).count();
        let names: Vec<&str> = ts.keys().map(String::as_str).collect();
        let shown =
            if names.len() > 12 { format!("{} … (+{})", names[..12].join(", "), names.len() - 12) } else { names.join(", ") };
        let _ = write!(
            out,
            "<tr data-group=\"{g}\" data-topics=\"{n}\"><td>{g}</td><td class=\"num\">{live}/{n}</td><td class=\"small\">{s}</td></tr>",
            g = esc(g),
            n = ts.len(),
            s = esc(&shown),
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// The split point of the filter tab (see `ui::lazy`).
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(filters, fallible))]
pub fn filter_panel() -> Result<fn(Signal<bool>) -> AnyView, wasm_split_helpers::SplitLoaderError> {
    Ok(|visible| view! { <FilterPanel visible=visible /> }.into_any())
}

#[component]
fn FilterPanel(#[prop(into)] visible: Signal<bool>) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let broker = RwSignal::new(0usize);

    let options = Memo::new(move |_| {
        let sel = broker.get();
        sim.read_as::<World, _>(|w| {
            let mut s = String::new();
            for (i, b) in w.brokers.iter().enumerate() {
                let _ = write!(
                    s,
                    "<option value=\"{i}\"{}>{} ({})</option>",
                    if i == sel { " selected" } else { "" },
                    esc(&b.name),
                    b.filter_manager.design().name()
                );
            }
            s
        })
        .unwrap_or_default()
    });
    // Everything below reads the World only while the panel is shown.
    let tables = Memo::new(move |_| {
        if !visible.get() {
            return None;
        }
        let i = broker.get();
        sim.read_as::<World, _>(|w| {
            let i = if i < w.brokers.len() { i } else { 0 };
            let (flags, design) = flags_html(w, i);
            let name = w.brokers.get(i).map(|b| esc(&b.name)).unwrap_or_default();
            (flags, design, name, registry_html(w, i), group_index_html(w, i))
        })
    });

    let part = move |f: fn(&(String, &'static str, String, String, String)) -> String| {
        move || tables.with(|t| t.as_ref().map(f).unwrap_or_default())
    };
    view! {
        <section class="filters" data-testid="filter-panel">
            <div class="log-head">
                <h2>"Filter manager"</h2>
                <select
                    data-testid="filter-broker-select"
                    title="Broker"
                    inner_html=move || options.get()
                    on:change=move |ev| {
                        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                            broker.set(i);
                        }
                    }
                ></select>
            </div>
            <dl
                class="flags"
                data-testid="filter-broker-flags"
                data-design=move || tables.with(|t| t.as_ref().map(|t| t.1).unwrap_or_default())
                inner_html=part(|t| t.0.clone())
            ></dl>
            <CostPlot visible=visible testid="heartbeat-cost-plot" />
            <h3>"Topic-keyed registry (filterDataByTopic)"</h3>
            <div class="scroll-box" tabindex="0" role="region" aria-label="Topic-keyed registry">
                <table class="grid" data-testid="filter-registry">
                    <thead>
                        <tr>
                            <th>"Topic"</th>
                            <th>"Group"</th>
                            <th>"Expression"</th>
                            <th class="num" title="clientVersion">"ver"</th>
                            <th>"State"</th>
                        </tr>
                    </thead>
                    <tbody inner_html=part(|t| t.3.clone())></tbody>
                </table>
            </div>
            <h3>"Group-keyed index (subscriptionFilterData)"</h3>
            <div
                class="scroll-box"
                data-testid="filter-group-index"
                tabindex="0"
                role="region"
                aria-label="Group-keyed index"
                inner_html=part(|t| t.4.clone())
            ></div>
        </section>
    }
}
