//! Right panel: assignment, subscription table and history, warnings, counters and the event log.

use leptos::prelude::*;

use leptos::wasm_bindgen::JsCast;

use std::fmt::Write;

use super::state::{esc, fmt_ms, group_members, Sim};
use crate::sim::engine::{EventId, EventLog};
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

    // The tables are read-only: rendered as escaped HTML strings behind memos (one DOM write
    // when the text changes, and a much smaller wasm than typed views per row).
    let counters = Memo::new(move |_| {
        sim.read(|w| {
            let mut h = String::new();
            for c in &w.consumers {
                let id = esc(&c.client_id);
                let _ = write!(
                    h,
                    "<tr{cls}><td>{id}</td><td class=\"num\" data-testid=\"consumed-count\" data-client-id=\"{id}\">{}</td>\
                     <td class=\"num\">{}</td><td class=\"num\">{}</td>\
                     <td class=\"num\" data-testid=\"retried-count\" data-client-id=\"{id}\">{}</td>\
                     <td class=\"num\" data-testid=\"failed-count\" data-client-id=\"{id}\">{}</td></tr>",
                    c.consumed.len(),
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

    let assignment_rows = Memo::new(move |_| {
        sim.read(|w| {
            let mut h = String::new();
            for (group, ms) in group_members(w) {
                for (topic, qs) in assignment(w, &ms) {
                    for (mq, owner) in qs {
                        let key = esc(&format!("{topic}:{}:{}", mq.broker, mq.queue_id));
                        let owner_s = esc(owner.as_deref().unwrap_or_default());
                        let (cls, text) = if owner.is_none() {
                            (" class=\"unowned\"", "— unowned —".to_string())
                        } else {
                            ("", owner_s.clone())
                        };
                        let _ = write!(
                            h,
                            "<tr data-queue=\"{key}\" data-owner=\"{owner_s}\"{cls}><td>{key}</td><td>{text}</td>\
                             <td class=\"muted\">{}</td></tr>",
                            esc(&group)
                        );
                    }
                }
            }
            h
        })
        .unwrap_or_default()
    });

    let sub_table = Memo::new(move |_| {
        sim.read(|w| {
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
                            esc(topic),
                            esc(&b.name),
                            esc(group),
                            esc(&sd.sub_string),
                            sd.sub_version,
                            esc(&writer)
                        );
                    }
                }
            }
            h
        })
        .unwrap_or_default()
    });

    let history = Memo::new(move |_| {
        sim.read(|w| {
            let mut h = String::new();
            for (group, hs) in &w.history {
                for e in hs.iter().rev().take(30) {
                    let old = e.old_expression.clone().unwrap_or_else(|| "∅".into());
                    let new = e.new_expression.clone().unwrap_or_else(|| "∅".into());
                    let _ = write!(
                        h,
                        "<li><span class=\"muted\">{}</span> <span class=\"chg {c}\">{c}</span>{}</li>",
                        fmt_ms(e.at),
                        esc(&format!(" {group} {}: {old} → {new} by {}", e.topic, e.by_client)),
                        c = e.change,
                    );
                }
            }
            h
        })
        .unwrap_or_default()
    });

    let warnings = Memo::new(move |_| {
        sim.read(|w| {
            let mut h = String::new();
            for (g, ms) in group_members(w) {
                for t in group_warnings(w, &g, &ms) {
                    let _ = write!(h, "<li class=\"warning\" data-testid=\"warning\">{}</li>", esc(&t));
                }
            }
            if h.is_empty() {
                h.push_str("<li class=\"ok\">No warnings.</li>");
            }
            h
        })
        .unwrap_or_default()
    });

    // The newest 200 entries of the chosen kind; rows are keyed by event id, so a frame only
    // creates the rows that are new.
    let log_ids = move || {
        let k = kind.get();
        sim.read(|w| {
            let mut ids: Vec<u32> =
                w.log.entries().iter().rev().filter(|e| k == "all" || e.kind.kind() == k).take(200).map(|e| e.id.0).collect();
            ids.reverse();
            ids
        })
        .unwrap_or_default()
    };
    let on_log_click = move |ev: leptos::ev::MouseEvent| {
        let id = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("[data-event-id]").ok().flatten())
            .and_then(|e| e.get_attribute("data-event-id"))
            .and_then(|v| v.parse::<u32>().ok());
        if let Some(id) = id {
            sim.selected.set(Some(id));
        }
    };

    view! {
        <section>
            <h2>"Warnings"</h2>
            <ul class="warnings" inner_html=move || warnings.get()></ul>
        </section>
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
            <h2>"Queue assignment"</h2>
            <table class="grid" data-testid="assignment-table">
                <thead>
                    <tr>
                        <th>"Queue"</th>
                        <th>"Owner"</th>
                        <th>"Group"</th>
                    </tr>
                </thead>
                <tbody inner_html=move || assignment_rows.get()></tbody>
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
            <ul class="history" data-testid="subscription-history" inner_html=move || history.get()></ul>
        </section>
        <section>
            <div class="log-head">
                <h2>"Event log"</h2>
                <select data-testid="log-filter" title="Filter by kind" on:change=move |ev| kind.set(event_target_value(&ev))>
                    {KINDS.into_iter().map(|k| view! { <option value=k>{k}</option> }).collect_view()}
                </select>
            </div>
            <div class="log" data-testid="event-log" on:click=on_log_click title="Click a row to see its provenance">
                <For each=log_ids key=|id| *id let:id>
                    <LogRow id=id />
                </For>
                {move || log_ids().is_empty().then(|| view! { <div class="muted">"(no events yet)"</div> })}
            </div>
        </section>
        <Provenance />
    }
}

/// One event-log row; its text is rendered once, when the row is created.
#[component]
fn LogRow(id: u32) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let line = sim.peek(|w| w.log.get(EventId(id)).map(EventLog::<Event>::line)).flatten().unwrap_or_default();
    view! {
        <div class="log-row" data-event-id=id.to_string() class:selected=move || sim.selected.get() == Some(id)>
            {line}
        </div>
    }
}

/// The selected event's cause chain (newest first, back to a scenario action) and, for a message
/// event, every event of that message and its retry copies.
#[component]
pub fn Provenance() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let body = move || {
        let id = sim.selected.get()?;
        // While playing the chain cannot change; re-read only when paused (keeps frames cheap).
        if !sim.playing.get() {
            sim.ui_version.track();
        }
        sim.peek(|w| {
            let e = w.log.get(EventId(id))?;
            let chain: Vec<(u32, String)> =
                w.log.cause_chain(EventId(id)).into_iter().map(|c| (c.id.0, EventLog::<Event>::line(c))).collect();
            let msg = e.kind.message().map(|m| w.messages.get(m as usize).map(|x| x.root()).unwrap_or(m));
            let msg_rows: Vec<(u32, String)> = match msg {
                Some(root) => w
                    .msg_events
                    .iter()
                    .filter(|(m, _)| w.messages.get(*m as usize).map(|x| x.root()) == Some(root))
                    .filter_map(|(_, ev)| w.log.get(*ev))
                    .map(|c| (c.id.0, EventLog::<Event>::line(c)))
                    .collect(),
                None => Vec::new(),
            };
            Some((id, chain, msg, msg_rows))
        })
        .flatten()
    };
    let row = move |(eid, line): (u32, String)| {
        view! {
            <li data-event-id=eid.to_string() class:selected=move || sim.selected.get() == Some(eid)>
                <code>{line}</code>
            </li>
        }
    };
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let id = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("li[data-event-id]").ok().flatten())
            .and_then(|e| e.get_attribute("data-event-id"))
            .and_then(|v| v.parse::<u32>().ok());
        if let Some(id) = id {
            sim.selected.set(Some(id));
        }
    };
    view! {
        <section class="provenance" data-testid="provenance" on:click=on_click>
            <div class="log-head">
                <h2>"Provenance"</h2>
                <Show when=move || sim.selected.get().is_some()>
                    <button class="small-btn" title="Clear the selection" on:click=move |_| sim.selected.set(None)>
                        "×"
                    </button>
                </Show>
            </div>
            {move || match body() {
                None => view! { <p class="muted small">"Click an event-log row or a message cell on the canvas."</p> }.into_any(),
                Some((id, chain, msg, msg_rows)) => {
                    view! {
                        <h3>{format!("Cause chain of #{id} (newest first)")}</h3>
                        <ol class="chain" data-testid="cause-chain">{chain.into_iter().map(row).collect_view()}</ol>
                        {msg
                            .map(|m| {
                                view! {
                                    <h3>{format!("Every event of message m{m}")}</h3>
                                    <ol class="chain" data-testid="message-events" data-msg=m.to_string()>
                                        {msg_rows.into_iter().map(row).collect_view()}
                                    </ol>
                                }
                            })}
                    }
                        .into_any()
                }
            }}
        </section>
    }
}
