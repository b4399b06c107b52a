//! Right panel: assignment, subscription table and history, warnings, counters and the event log.

use leptos::prelude::*;

use super::state::{fmt_ms, group_members, Sim};
use crate::sim::engine::EventLog;
use crate::sim::rocketmq::events::Event;
use crate::sim::rocketmq::report::{assignment, group_warnings};

const KINDS: [&str; 12] = [
    "all",
    "command",
    "lifecycle",
    "subscription",
    "heartbeat",
    "rebalance",
    "store",
    "pull",
    "filter",
    "consume",
    "retry",
    "offset",
];

#[component]
pub fn Inspector() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let kind = RwSignal::new("all".to_string());

    let counters = move || {
        sim.read(|w| {
            w.consumers
                .iter()
                .map(|c| {
                    let id = c.client_id.to_string();
                    view! {
                        <tr class:stopped=!c.running>
                            <td>{id.clone()}</td>
                            <td class="num" data-testid="consumed-count" data-client-id=id>{c.consumed.len()}</td>
                            <td class="num">{c.stats.pulled}</td>
                            <td class="num">{c.stats.client_filtered}</td>
                        </tr>
                    }
                })
                .collect_view()
        })
    };

    let assignment_rows = move || {
        sim.read(|w| {
            group_members(w)
                .into_iter()
                .flat_map(|(group, ms)| {
                    assignment(w, &ms).into_iter().flat_map(move |(topic, qs)| {
                        let group = group.clone();
                        qs.into_iter().map(move |(mq, owner)| {
                            let key = format!("{topic}:{}:{}", mq.broker, mq.queue_id);
                            let owner_s = owner.clone().unwrap_or_default();
                            let unowned = owner.is_none();
                            let (key_attr, owner_attr) = (key.clone(), owner_s.clone());
                            let owner_text = if unowned { "— unowned —".to_string() } else { owner_s };
                            view! {
                                <tr data-queue=key_attr data-owner=owner_attr class:unowned=unowned>
                                    <td>{key}</td>
                                    <td>{owner_text}</td>
                                    <td class="muted">{group.clone()}</td>
                                </tr>
                            }
                        })
                    })
                })
                .collect::<Vec<_>>()
        })
    };

    let sub_table = move || {
        sim.read(|w| {
            let mut rows = Vec::new();
            for b in &w.brokers {
                for (group, info) in &b.groups {
                    for (topic, sd) in &info.subscription_table {
                        let writer =
                            b.table_writer.get(&(group.clone(), topic.clone())).map(|n| n.to_string()).unwrap_or_default();
                        rows.push(view! {
                            <tr>
                                <td>
                                    {topic.clone()}
                                    <div class="muted small">{format!("{} / {group}", b.name)}</div>
                                </td>
                                <td><code>{sd.sub_string.clone()}</code></td>
                                <td class="num">{sd.sub_version}</td>
                                <td>{writer}</td>
                            </tr>
                        });
                    }
                }
            }
            rows
        })
    };

    let history = move || {
        sim.read(|w| {
            w.history
                .iter()
                .flat_map(|(group, hs)| {
                    hs.iter().rev().take(30).map(move |h| {
                        let old = h.old_expression.clone().unwrap_or_else(|| "∅".into());
                        let new = h.new_expression.clone().unwrap_or_else(|| "∅".into());
                        view! {
                            <li>
                                <span class="muted">{fmt_ms(h.at)}</span>
                                " "
                                <span class=format!("chg {}", h.change)>{h.change}</span>
                                {format!(" {group} {}: {old} → {new} by {}", h.topic, h.by_client)}
                            </li>
                        }
                    })
                })
                .collect::<Vec<_>>()
        })
    };

    let warnings = move || {
        sim.read(|w| {
            group_members(w)
                .into_iter()
                .flat_map(|(g, ms)| group_warnings(w, &g, &ms))
                .map(|t| view! { <li class="warning" data-testid="warning">{t}</li> })
                .collect::<Vec<_>>()
        })
    };

    let log_text = move || {
        let k = kind.get();
        sim.read(|w| {
            let es = w.log.entries();
            let picked: Vec<_> = es.iter().rev().filter(|e| k == "all" || e.kind.kind() == k).take(200).collect();
            let mut s = String::new();
            for e in picked.into_iter().rev() {
                s.push_str(&EventLog::<Event>::line(e));
                s.push('\n');
            }
            if s.is_empty() {
                s.push_str("(no events yet)");
            }
            s
        })
        .unwrap_or_default()
    };

    view! {
        <section>
            <h2>"Warnings"</h2>
            <ul class="warnings">
                {move || {
                    let ws = warnings().unwrap_or_default();
                    if ws.is_empty() { view! { <li class="ok">"No warnings."</li> }.into_any() } else { ws.into_any() }
                }}
            </ul>
        </section>
        <section>
            <h2>"Consumed"</h2>
            <table class="grid">
                <thead>
                    <tr>
                        <th>"Consumer"</th>
                        <th class="num">"consumed"</th>
                        <th class="num">"pulled"</th>
                        <th class="num">"dropped"</th>
                    </tr>
                </thead>
                <tbody>{counters}</tbody>
            </table>
        </section>
        <section>
            <h2>"Queue assignment"</h2>
            <table class="grid" data-testid="assignment-table">
                <thead>
                    <tr>
                        <th>"Queue"</th>
                        <th>"Owner"</th>
                        <th>"Group"</th>
                    </tr>
                </thead>
                <tbody>{assignment_rows}</tbody>
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
                <tbody>{sub_table}</tbody>
            </table>
            <h3>"History (newest first)"</h3>
            <ul class="history" data-testid="subscription-history">{history}</ul>
        </section>
        <section>
            <div class="log-head">
                <h2>"Event log"</h2>
                <select data-testid="log-filter" title="Filter by kind" on:change=move |ev| kind.set(event_target_value(&ev))>
                    {KINDS.into_iter().map(|k| view! { <option value=k>{k}</option> }).collect_view()}
                </select>
            </div>
            <pre class="log" data-testid="event-log">{log_text}</pre>
        </section>
    }
}
