//! RocketMQ's own inspector tables: per-consumer counters (pulled, dropped by the client filter,
//! retried, failed), the broker's subscription table and its history (who overwrote what).

use std::fmt::Write;

use leptos::prelude::*;

use crate::ui::state::{esc, esc_ident, fmt_ms, Sim};
use mqviz_rocketmq::world::World;

#[component]
pub fn Tables() -> impl IntoView {
    let sim = expect_context::<Sim>();

    let counters = Memo::new(move |_| {
        sim.read_as::<World, _>(|w| {
            let mut h = String::new();
            for c in &w.consumers {
                let id = esc(&c.client_id);
                let _ = write!(
                    h,
                    "<tr{cls}><td>{id}</td><td class=\"num\" data-testid=\"consumed-count\" data-client-id=\"{id}\">{}</td>\
                     <td class=\"num\">{}</td><td class=\"num\">{}</td>\
                     <td class=\"num\" data-testid=\"retried-count\" data-client-id=\"{id}\">{}</td>\
                     <td class=\"num\" data-testid=\"failed-count\" data-client-id=\"{id}\">{}</td></tr>",
                    c.stats.consumed,
                    c.stats.pulled,
                    c.stats.client_filtered,
                    c.stats.retried,
                    c.stats.failed,
                    cls = if c.running { "" } else { " class=\"stopped\"" },
                );
            }
            h
        })
        .unwrap_or_default()
    });

    let sub_table = Memo::new(move |_| {
        sim.read_as::<World, _>(|w| {
            let mut h = String::new();
            for b in &w.brokers {
                for (group, info) in &b.groups {
                    for (topic, sd) in &info.subscription_table {
                        let writer =
                            b.table_writer.get(&(group.clone(), topic.clone())).map(|n| n.to_string()).unwrap_or_default();
                        let _ = write!(
                            h,
                            "<tr><td>{}<div class=\"muted small\">{} / {}</div></td><td><code>{}</code></td>\
                             <td class=\"num\">{}</td><td>{}</td></tr>",
                            esc_ident(topic),
                            esc_ident(&b.name),
                            esc_ident(group),
                            esc(&sd.sub_string),
                            sd.sub_version,
                            esc_ident(&writer)
                        );
                    }
                }
            }
            h
        })
        .unwrap_or_default()
    });

    let history = Memo::new(move |_| {
        sim.read_as::<World, _>(|w| {
            let mut h = String::new();
            for (group, hs) in &w.history {
                for e in hs.iter().rev().take(30) {
                    let old = e.old_expression.clone().unwrap_or_else(|| "∅".into());
                    let new = e.new_expression.clone().unwrap_or_else(|| "∅".into());
                    // A newer subVersion with the same expression changes nothing the group sees:
                    // not an alarm.
                    let (class, word) = match e.change {
                        "overwritten" if old == new => ("same", "rewritten, unchanged"),
                        c => (c, c),
                    };
                    let _ = write!(
                        h,
                        "<li><span class=\"muted\">{}</span> <span class=\"chg {class}\">{word}</span>{}</li>",
                        fmt_ms(e.at),
                        esc(&format!(" {group} {}: {old} → {new} by {}", e.topic, e.by_client)),
                    );
                }
            }
            h
        })
        .unwrap_or_default()
    });

    view! {
        <section>
            <h2>"Consumed"</h2>
            <table class="grid">
                <thead>
                    <tr>
                        <th>"Consumer"</th>
                        <th class="num">"consumed"</th>
                        <th class="num">"pulled"</th>
                        <th class="num" title="dropped by the client tag filter">"dropped"</th>
                        <th class="num" title="sent back for retry (RECONSUME_LATER)">"retried"</th>
                        <th class="num" title="consume attempts that failed">"failed"</th>
                    </tr>
                </thead>
                <tbody inner_html=move || counters.get()></tbody>
            </table>
        </section>
        <section>
            <h2>"Broker subscription table"</h2>
            <table class="grid" data-testid="subscription-table">
                <thead>
                    <tr>
                        <th>"Topic"</th>
                        <th>"Expression"</th>
                        <th class="num">"subVer"</th>
                        <th>"By"</th>
                    </tr>
                </thead>
                <tbody inner_html=move || sub_table.get()></tbody>
            </table>
            <h3>"History (newest first)"</h3>
            <ul
                class="history"
                data-testid="subscription-history"
                tabindex="0"
                aria-label="Subscription table history, newest first"
                inner_html=move || history.get()
            ></ul>
        </section>
    }
}
