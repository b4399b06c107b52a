//! Pulsar's inspector tables: flow control per consumer and per partition or segment (messages
//! received there, permits, unacked against the limit, blocked consumers marked), the segments of each scalable topic in words (the DAG's text
//! alternative), and per key of a Key_Shared subscription who received it and whether in order.

use std::fmt::Write;

use leptos::prelude::*;

use super::dag::dags;
use super::flow::flows;
use super::key_order::key_orders;
use crate::ui::state::{esc, esc_ident, Sim};
use mqviz_pulsar::world::World;

fn flow_html(w: &World) -> String {
    let mut h = String::new();
    for c in flows(w) {
        let name = esc(&c.name);
        let counts = format!(
            "received {} · acked {} · nacked {} · dead-lettered {} · in queue {}",
            c.received, c.acked, c.nacked, c.dead_lettered, c.queued
        );
        let rows = c.rows.len().max(1);
        let cls = if c.state != "running" { " class=\"stopped\"" } else { "" };
        let _ = write!(
            h,
            "<tr{cls} data-testid=\"flow-row\" data-consumer=\"{name}\" data-blocked=\"{b}\"><td rowspan=\"{rows}\">{id}\
             <div class=\"muted small\">{state} · {counts}</div></td>",
            b = c.blocked(),
            id = esc_ident(&c.name),
            state = c.state,
        );
        if c.rows.is_empty() {
            h.push_str("<td colspan=\"4\" class=\"muted\">not connected</td></tr>");
            continue;
        }
        for (i, r) in c.rows.iter().enumerate() {
            if i > 0 {
                let _ = write!(h, "<tr data-consumer=\"{name}\">");
            }
            let unacked = match r.unacked {
                Some((n, 0)) => n.to_string(),
                Some((n, limit)) => format!("{n} / {limit}"),
                None => "–".into(),
            };
            let blocked = if r.blocked { " <span class=\"badge blocked\" data-testid=\"blocked\">BLOCKED</span>" } else { "" };
            let _ = write!(
                h,
                "<td data-on=\"{on}\" data-role=\"{role}\" data-received=\"{n}\">{on} <span class=\"muted\">{role}</span>{blocked}</td>\
                 <td class=\"num\">{n}</td><td class=\"num\">{p}</td><td class=\"num\">{unacked}</td></tr>",
                on = esc(&r.on),
                role = r.role,
                n = r.received,
                p = r.permits,
            );
        }
    }
    h
}

fn segments_html(w: &World) -> String {
    let mut h = String::new();
    for d in dags(w) {
        let _ = write!(h, "<tr><th colspan=\"3\">{}</th></tr>", esc(&d.label()));
        for n in &d.nodes {
            let gap = n.gap.as_ref().map(|g| format!(" <span class=\"badge gap\">⚠ {}</span>", g.issue)).unwrap_or_default();
            let _ = write!(
                h,
                "<tr data-testid=\"segment-row\" data-segment=\"{id}\" data-state=\"{state}\"><td>{title}</td><td>{line}</td><td>{detail}{gap}</td></tr>",
                id = n.id,
                state = n.state.word(),
                title = esc(&n.title()),
                line = esc(&n.state_line()),
                detail = esc(&n.detail_line()),
            );
        }
    }
    h
}

fn keys_html(w: &World) -> String {
    let mut h = String::new();
    for s in key_orders(w) {
        let _ = write!(h, "<tr><th colspan=\"3\">{}</th></tr>", esc(&s.subscription));
        for k in &s.keys {
            let order = match &k.out_of_order {
                None => "in order".to_string(),
                Some(why) => format!("OUT OF ORDER: {}", esc(why)),
            };
            let _ = write!(
                h,
                "<tr data-testid=\"key-row\" data-key=\"{key}\" data-in-order=\"{ok}\"><td>{key}</td><td class=\"num\">{n}</td>\
                 <td>{by} <span class=\"muted\">· {order}</span></td></tr>",
                key = esc(&k.key),
                ok = k.out_of_order.is_none(),
                n = k.received,
                by = esc(&k.by.join(" → ")),
            );
        }
        if s.more > 0 {
            let _ = write!(h, "<tr><td colspan=\"3\" class=\"muted\">and {} more keys</td></tr>", s.more);
        }
    }
    h
}

#[component]
pub fn Tables() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let flow = Memo::new(move |_| sim.read_as::<World, _>(flow_html).unwrap_or_default());
    let segments = Memo::new(move |_| sim.read_as::<World, _>(segments_html).unwrap_or_default());
    let keys = Memo::new(move |_| sim.read_as::<World, _>(keys_html).unwrap_or_default());
    view! {
        <section>
            <h2>"Flow control"</h2>
            <table class="grid" data-testid="flow-table">
                <thead>
                    <tr>
                        <th>"Consumer"</th>
                        <th>"On"</th>
                        <th class="num" title="Messages the application received from this partition or segment">"received"</th>
                        <th class="num" title="FLOW permits: messages the broker may still send">"permits"</th>
                        <th class="num" title="Unacked messages / the per-consumer limit that blocks it (it unblocks at half)">"unacked"</th>
                    </tr>
                </thead>
                <tbody inner_html=move || flow.get()></tbody>
            </table>
        </section>
        <Show when=move || segments.with(|s| !s.is_empty())>
            <section>
                <h2>"Segments"</h2>
                <table class="grid" data-testid="segment-table">
                    <thead>
                        <tr>
                            <th>"Segment"</th>
                            <th>"State"</th>
                            <th>"Read by / why not"</th>
                        </tr>
                    </thead>
                    <tbody inner_html=move || segments.get()></tbody>
                </table>
            </section>
        </Show>
        <Show when=move || keys.with(|s| !s.is_empty())>
            <section>
                <h2>"Keys: who received them, in order?"</h2>
                <table class="grid" data-testid="key-table">
                    <thead>
                        <tr>
                            <th>"Key"</th>
                            <th class="num">"received"</th>
                            <th>"by (in succession)"</th>
                        </tr>
                    </thead>
                    <tbody inner_html=move || keys.get()></tbody>
                </table>
            </section>
        </Show>
    }
}
