//! Right panel: assignment, subscription table and history, warnings, counters and the event log.

use leptos::prelude::*;

use leptos::wasm_bindgen::JsCast;

use super::state::{fmt_ms, group_members, Sim};
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
