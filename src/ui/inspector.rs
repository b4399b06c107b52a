//! Right panel: warnings, the model's own tables (`ui/<model>/`), the partition assignment, the
//! event log and provenance. Everything here reads the neutral `Simulation`.

use leptos::prelude::*;

use leptos::wasm_bindgen::JsCast;

use std::fmt::Write;

use super::parts;
use super::state::{esc, esc_ident, Sim};
use mqviz_model::log_line;

#[component]
pub fn Inspector() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let kind = RwSignal::new("all".to_string());
    let kinds = move || {
        sim.kind.track();
        parts::log_kinds(sim.peek(|m| m.log_kinds()).unwrap_or(&[]))
    };

    // The tables are read-only: rendered as escaped HTML strings behind memos (one DOM write
    // when the text changes, and a much smaller wasm than typed views per row).
    let assignment_rows = Memo::new(move |_| {
        sim.read(|m| {
            let view = m.view();
            let started = m.now() > 0;
            let mut h = String::new();
            for t in view.topics.iter().filter(|t| !t.internal) {
                for p in &t.partitions {
                    // With several brokers a queue is named by its broker too.
                    let name = match p.broker.filter(|_| view.brokers.len() > 1).and_then(|b| view.brokers.get(b)) {
                        Some(b) => format!("{}:{}:{}", t.name, b.name, p.label),
                        None => format!("{}:{}", t.name, p.label),
                    };
                    let key = esc(&name);
                    let key_text = esc_ident(&name);
                    let names: Vec<&str> =
                        p.owners.iter().filter_map(|&o| view.consumers.get(o as usize)).map(|c| c.name.as_str()).collect();
                    let groups: Vec<&str> =
                        p.owners.iter().filter_map(|&o| view.consumers.get(o as usize)).map(|c| c.group.as_str()).collect();
                    let owner_s = esc(&names.join(", "));
                    // The model gives a reason only when having no owner is a fault; without one
                    // the queue is simply not assigned (yet, or to a group that wants it).
                    // At t = 0 no member has joined or rebalanced yet: not an alarm.
                    let (cls, text) = if names.is_empty() && !started {
                        (" class=\"muted\"", "not started".to_string())
                    } else if names.is_empty() {
                        match p.unowned_reason.as_deref() {
                            Some(r) => (" class=\"unowned\"", format!("— unowned — ({})", esc(r))),
                            None => (" class=\"muted\"", "not assigned".to_string()),
                        }
                    } else {
                        ("", owner_s.clone())
                    };
                    let _ = write!(
                        h,
                        "<tr data-queue=\"{key}\" data-owner=\"{owner_s}\"{cls}><td>{key_text}</td><td>{text}</td>\
                         <td class=\"muted\">{}</td></tr>",
                        esc(&groups.join(", "))
                    );
                }
            }
            h
        })
        .unwrap_or_default()
    });

    let warnings = Memo::new(move |_| {
        sim.read(|m| {
            let mut h = String::new();
            for (_, t) in m.warnings() {
                let _ = write!(h, "<li class=\"warning\" data-testid=\"warning\">{}</li>", esc(&t));
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
    // A row is keyed by the run it belongs to as well as its id: after another scenario is loaded
    // (or the run is rewound), event #3 is a different event, and a row keyed by the id alone
    // would stay mounted with the old run's text.
    let log_ids = move || {
        let k = kind.get();
        let epoch = sim.epoch.get_value();
        sim.read(|m| {
            let mut ids: Vec<(u64, u32)> = (0..m.log_len())
                .rev()
                .filter(|&i| k == "all" || m.log_kind(i) == k)
                .take(200)
                .map(|i| (epoch, i as u32))
                .collect();
            ids.reverse();
            ids
        })
        .unwrap_or_default()
    };
    let log_ref: NodeRef<leptos::html::Div> = NodeRef::new();
    // The log follows the playhead: after every change it shows its newest rows, unless the
    // reader has scrolled up to look at older ones.
    let follow = StoredValue::new(true);
    Effect::new(move |_| {
        sim.ui_version.track();
        kind.track();
        let Some(el) = log_ref.get() else { return };
        if follow.get_value() {
            request_animation_frame(move || el.set_scroll_top(el.scroll_height()));
        }
    });
    let on_log_scroll = move |_| {
        if let Some(el) = log_ref.get_untracked() {
            follow.set_value(el.scroll_top() + el.client_height() + 24 >= el.scroll_height());
        }
    };
    // Arrow keys move between rows (focus), Enter shows the focused row's provenance.
    let on_log_key = move |ev: leptos::ev::KeyboardEvent| {
        let Some(el) = log_ref.get_untracked() else { return };
        let rows = el.query_selector_all(".log-row").ok();
        let Some(rows) = rows else { return };
        let n = rows.length();
        if n == 0 {
            return;
        }
        let active = document().active_element();
        let cur = (0..n).find(|&i| rows.item(i).zip(active.clone()).is_some_and(|(r, a)| r == web_sys::Node::from(a)));
        let target = match ev.key().as_str() {
            "ArrowDown" => Some(cur.map(|c| (c + 1).min(n - 1)).unwrap_or(n - 1)),
            "ArrowUp" => Some(cur.map(|c| c.saturating_sub(1)).unwrap_or(n - 1)),
            "Home" => Some(0),
            "End" => Some(n - 1),
            "Enter" | " " => {
                if let Some(id) = cur
                    .and_then(|c| rows.item(c))
                    .and_then(|r| r.dyn_into::<web_sys::Element>().ok())
                    .and_then(|e| e.get_attribute("data-event-id"))
                    .and_then(|v| v.parse::<u32>().ok())
                {
                    sim.selected.set(Some(id));
                }
                ev.prevent_default();
                return;
            }
            _ => None,
        };
        if let Some(t) = target {
            ev.prevent_default();
            if let Some(r) = rows.item(t).and_then(|r| r.dyn_into::<web_sys::HtmlElement>().ok()) {
                let _ = r.focus();
                follow.set_value(t + 1 == n);
            }
        }
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
        <section data-testid="warnings">
            <h2>"Warnings"</h2>
            <ul class="warnings" inner_html=move || warnings.get()></ul>
        </section>
        {move || parts::inspector_tables(sim.kind.get())}
        <section>
            <h2>"Assignment"</h2>
            <table class="grid" data-testid="assignment-table">
                <thead>
                    <tr>
                        // Tracks the model loaded: another model names its partitions otherwise.
                        <th>
                            {move || {
                                sim.kind.track();
                                sim.peek(|m| m.partition_noun()).unwrap_or("partition")
                            }}
                        </th>
                        <th>"Owner"</th>
                        <th>"Group"</th>
                    </tr>
                </thead>
                <tbody inner_html=move || assignment_rows.get()></tbody>
            </table>
        </section>
        <section>
            <div class="log-head">
                <h2>"Event log"</h2>
                <select data-testid="log-filter" aria-label="Show events of kind" on:change=move |ev| kind.set(event_target_value(&ev))>
                    {move || kinds().into_iter().map(|k| view! { <option value=k>{k}</option> }).collect_view()}
                </select>
            </div>
            <div
                class="log"
                data-testid="event-log"
                node_ref=log_ref
                role="list"
                tabindex="0"
                aria-label="Event log, newest last. Arrow keys move between rows; Enter shows a row's provenance."
                on:click=on_log_click
                on:keydown=on_log_key
                on:scroll=on_log_scroll
            >
                <For each=log_ids key=|row| *row let:row>
                    <LogRow id=row.1 />
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
    let line = sim.peek(|m| (id as usize) < m.log_len()).unwrap_or(false);
    let line = if line { sim.peek(|m| log_line(m, id as usize)).unwrap_or_default() } else { String::new() };
    view! {
        <div
            class="log-row"
            role="listitem"
            tabindex="-1"
            data-event-id=id.to_string()
            class:selected=move || sim.selected.get() == Some(id)
            aria-current=move || (sim.selected.get() == Some(id)).then_some("true")
        >
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
        sim.peek(|m| {
            let i = id as usize;
            if i >= m.log_len() {
                return None;
            }
            let mut chain = Vec::new();
            let mut cur = Some(i);
            while let Some(c) = cur {
                chain.push((c as u32, log_line(m, c)));
                cur = m.log_cause(c);
            }
            let msg = m.log_message(i);
            let msg_rows: Vec<(u32, String)> = match msg {
                Some(msg) => m.provenance(msg).into_iter().map(|e| (e as u32, log_line(m, e))).collect(),
                None => Vec::new(),
            };
            // What the message carried: its tag, keys and properties, as the filters saw them.
            let props = msg.and_then(|x| m.message(x)).map(|v| {
                let mut parts: Vec<String> = vec![format!("{} {}", v.topic, v.body)];
                parts.extend(v.properties.iter().map(|(k, val)| format!("{k}={val}")));
                parts.join(" · ")
            });
            Some((id, chain, msg, msg_rows, props))
        })
        .flatten()
    };
    let row = move |(eid, line): (u32, String)| {
        let label = format!("event {line}: show its provenance");
        view! {
            <li
                data-event-id=eid.to_string()
                tabindex="0"
                role="button"
                aria-label=label
                class:selected=move || sim.selected.get() == Some(eid)
                on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                    if ev.key() == "Enter" || ev.key() == " " {
                        ev.prevent_default();
                        sim.selected.set(Some(eid));
                    }
                }
            >
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
                    <button class="small-btn" aria-label="Clear the selection" on:click=move |_| sim.selected.set(None)>
                        "×"
                    </button>
                </Show>
            </div>
            {move || match body() {
                None => view! { <p class="muted small">"Click an event-log row or a message cell on the canvas."</p> }.into_any(),
                Some((id, chain, msg, msg_rows, props)) => {
                    view! {
                        <h3>{format!("Cause chain of #{id} (newest first)")}</h3>
                        <ol class="chain" data-testid="cause-chain">{chain.into_iter().map(row).collect_view()}</ol>
                        {msg
                            .map(|m| {
                                view! {
                                    <h3>{format!("Every event of message m{m}")}</h3>
                                    <p class="props" data-testid="message-properties">{props.clone()}</p>
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
