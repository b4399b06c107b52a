//! Left panel: the Kafka scenario editor. Per group its protocol, its assignors (classic) or its
//! server assignor (KIP-848), its consumers and an add button; topics with their partition counts;
//! a send form per producer. Every edit is a timeline action entered at the current time through
//! `Sim::command`, so the run stays reproducible; every field is checked first and a bad value
//! gets an inline error (nothing is entered), and the note at the top says when the last edit
//! takes effect.

mod consumer;
mod feedback;
mod forms;

use leptos::prelude::*;

use consumer::ConsumerRow;
use feedback::{group_protocol, pending_text, Pending};
use forms::{assignor_list, next_consumer_name, read_partition_count, read_send, SendForm, ASSIGNOR_CHOICES};

use crate::ui::state::{esc, Sim};
use mqviz_kafka::assignor::ClientAssignor;
use mqviz_kafka::scenario::{action_value, Action, ConfigOverrides, ConsumerSpec, GroupProtocol, SubscriptionSpec};
use mqviz_kafka::server_assignor::ServerAssignor;
use mqviz_kafka::world::World;

/// Enters an edit as a timeline action at the current time; a refusal (the model's check against
/// the current state) comes back as text for an inline error.
fn enter(sim: Sim, a: Action) -> Result<(), String> {
    sim.command(action_value(&a))
}

/// The `data-action` of the button an event came from (delegated listeners).
fn action_of(ev: &leptos::ev::MouseEvent) -> Option<String> {
    use leptos::wasm_bindgen::JsCast;
    let el = ev.target()?.dyn_into::<web_sys::Element>().ok()?.closest("button[data-action]").ok()??;
    el.get_attribute("data-action")
}

fn rebalance_word(list: &[ClientAssignor]) -> &'static str {
    match mqviz_kafka::classic_group::rebalance_protocol(list) {
        mqviz_kafka::classic_group::RebalanceProtocol::Eager => "EAGER",
        mqviz_kafka::classic_group::RebalanceProtocol::Cooperative => "COOPERATIVE",
    }
}

fn assignor_options(current: &[ClientAssignor]) -> String {
    let mut h = String::new();
    let mut found = false;
    for (i, list) in ASSIGNOR_CHOICES.iter().enumerate() {
        let selected = *list == current;
        found |= selected;
        h.push_str(&format!(
            "<option value=\"{i}\"{}>{} ({})</option>",
            if selected { " selected" } else { "" },
            esc(&assignor_list(list)),
            rebalance_word(list)
        ));
    }
    if !found {
        h.push_str(&format!("<option value=\"\" selected disabled>{}</option>", esc(&assignor_list(current))));
    }
    h
}

/// What a group block shows: protocol, assignors, consumers (with the subscription each row starts from).
#[derive(Clone, PartialEq)]
struct GroupInfo {
    protocol: GroupProtocol,
    assignors: Vec<ClientAssignor>,
    remote: Option<ServerAssignor>,
    consumers: Vec<(String, Option<SubscriptionSpec>)>,
}

fn group_info(w: &World, group: &str) -> Option<GroupInfo> {
    let g = w.find_group(group)?;
    let members: Vec<_> = w.consumers.iter().filter(|c| c.group == g).collect();
    Some(GroupInfo {
        protocol: group_protocol(w, g),
        assignors: members.first().map(|c| c.config.assignors.clone()).unwrap_or_default(),
        remote: members.first().and_then(|c| c.config.remote_assignor),
        consumers: members.iter().map(|c| (c.name.to_string(), c.subscription.clone())).collect(),
    })
}

#[component]
fn GroupBlock(group: String) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = expect_context::<RwSignal<Option<Pending>>>();
    let g = group.clone();
    let info = Memo::new(move |_| sim.read_as::<World, _>(|w| group_info(w, &g)).flatten());
    let error = RwSignal::new(None::<String>);
    let report = move |r: Result<(), String>, p: Pending| match r {
        Ok(()) => {
            error.set(None);
            pending.set(Some(p));
        }
        Err(e) => error.set(Some(format!("{e}. Nothing changed."))),
    };
    let g_proto = group.clone();
    let set_protocol = move |ev: leptos::ev::Event| {
        let Some(protocol) = GroupProtocol::from_name(&event_target_value(&ev)) else { return };
        let r = enter(sim, Action::SetProtocol { group: g_proto.clone(), protocol });
        report(r, Pending::Protocol { group: g_proto.clone(), protocol });
    };
    let g_assign = group.clone();
    let set_assignors = move |ev: leptos::ev::Event| {
        let Some(list) = event_target_value(&ev).parse::<usize>().ok().and_then(|i| ASSIGNOR_CHOICES.get(i)) else { return };
        let generation =
            sim.peek_as::<World, _>(|w| w.find_group(&g_assign).map(|g| w.groups[g].classic.generation)).flatten().unwrap_or(0);
        let r = enter(sim, Action::SetAssignors { group: g_assign.clone(), assignors: list.to_vec() });
        let names = list.iter().map(|a| a.name().to_string()).collect();
        report(r, Pending::Assignors { group: g_assign.clone(), names, generation });
    };
    let g_remote = group.clone();
    let set_remote = move |ev: leptos::ev::Event| {
        let Some(assignor) = ServerAssignor::from_name(&event_target_value(&ev)) else { return };
        let target_epoch =
            sim.peek_as::<World, _>(|w| w.find_group(&g_remote).map(|g| w.groups[g].modern.target.epoch)).flatten().unwrap_or(0);
        let r = enter(sim, Action::SetRemoteAssignor { group: g_remote.clone(), assignor });
        report(r, Pending::RemoteAssignor { group: g_remote.clone(), name: assignor.name().to_string(), target_epoch });
    };
    let g_add = group.clone();
    let add = move |_| {
        let plan = sim
            .peek_as::<World, _>(|w| {
                let g = w.find_group(&g_add)?;
                let first = w.consumers.iter().find(|c| c.group == g)?;
                let name = next_consumer_name(w, &first.name)?;
                // The newcomer inherits the group's settings, not another member's overrides.
                Some(ConsumerSpec {
                    client_id: name.clone(),
                    name,
                    instance_id: None,
                    subscription: first.subscription.clone(),
                    overrides: ConfigOverrides::default(),
                    start_at: Some(w.now),
                    latency_ms: None,
                })
            })
            .flatten();
        match plan {
            Some(consumer) => {
                let client = consumer.name.clone();
                let r = enter(sim, Action::AddConsumer { group: g_add.clone(), consumer });
                report(r, Pending::Added { group: g_add.clone(), client });
            }
            None => error.set(Some(format!("No consumer can be added to {g_add}: no free consumer name. Nothing changed."))),
        }
    };
    let protocol = move || info.with(|i| i.as_ref().map(|i| i.protocol).unwrap_or(GroupProtocol::Classic));
    let assignor_html = move || info.with(|i| i.as_ref().map(|i| assignor_options(&i.assignors)).unwrap_or_default());
    let remote = move || info.with(|i| i.as_ref().and_then(|i| i.remote).map(|a| a.name()).unwrap_or("uniform"));
    let rows = move || info.with(|i| i.as_ref().map(|i| i.consumers.clone()).unwrap_or_default());
    let protocol_label = format!("group.protocol of {group}");
    let assignors_label = format!("partition.assignment.strategy of {group}");
    let remote_label = format!("group.remote.assignor of {group}");
    let add_label = format!("add a consumer to {group}");
    view! {
        <section class="group" data-testid="group" data-group=group.clone()>
            <div class="row-head">
                <span class="gname" title="Consumer group">{group.clone()}</span>
                <span class="badge model" data-testid="group-protocol">{move || format!("group.protocol={}", protocol().name())}</span>
            </div>
            <label class="field strategy">
                <span>"Protocol"</span>
                <select data-testid="protocol-select" aria-label=protocol_label on:change=set_protocol>
                    <option value="classic" selected=move || protocol() == GroupProtocol::Classic>"classic"</option>
                    <option value="consumer" selected=move || protocol() == GroupProtocol::Consumer>"consumer (KIP-848)"</option>
                </select>
            </label>
            <Show
                when=move || protocol() == GroupProtocol::Classic
                fallback=move || {
                        view! {
                            <label class="field strategy">
                                <span>"Server assignor"</span>
                                <select
                                    data-testid="remote-assignor-select"
                                    aria-label=remote_label.clone()
                                    on:change=set_remote.clone()
                                >
                                    <option value="uniform" selected=move || remote() == "uniform">"uniform"</option>
                                    <option value="range" selected=move || remote() == "range">"range"</option>
                                </select>
                            </label>
                        }
                }
            >
                <label class="field strategy">
                    <span>"Assignors"</span>
                    <select
                        data-testid="assignor-select"
                        aria-label=assignors_label.clone()
                        on:change=set_assignors.clone()
                        inner_html=assignor_html
                    ></select>
                </label>
            </Show>
            <ul class="consumers">
                <For
                    each=rows
                    key=|(client, spec)| (client.clone(), format!("{spec:?}"))
                    let:row
                >
                    <ConsumerRow client=row.0 spec=row.1 />
                </For>
            </ul>
            <button data-testid="add-consumer" data-group=group.clone() class="wide" on:click=add aria-label=add_label>
                "+ Add consumer"
            </button>
            {move || error.get().map(|e| view! { <div class="inline-error" data-testid="group-error" role="alert">{e}</div> })}
        </section>
    }
}

/// Topics with their partition counts; a count can only grow (`addPartitions`).
fn topics_html(w: &World) -> String {
    let mut h = String::new();
    for t in &w.topics {
        let n = t.pids.len();
        h.push_str(&format!(
            "<li class=\"topic-row\" data-testid=\"topic-row\" data-topic=\"{name}\"><div class=\"row-head\">\
             <span class=\"tname\" title=\"{name}\">{name}</span><input type=\"number\" min=\"{n}\" max=\"{max}\" step=\"1\" \
             class=\"num-input\" data-testid=\"topic-partitions\" data-topic=\"{name}\" data-count=\"{n}\" \
             aria-label=\"partition count of {name}\" value=\"{n}\" title=\"Partition count (it can only grow)\"></div></li>",
            name = esc(&t.name),
            max = forms::MAX_UI_PARTITIONS,
        ));
    }
    h
}

/// One send form per producer; the fields are read when "Send" is clicked.
fn producers_html(w: &World) -> String {
    let opts: String = w.topics.iter().map(|t| format!("<option value=\"{t}\">{t}</option>", t = esc(&t.name))).collect();
    let mut h = String::new();
    for p in &w.producers {
        h.push_str(&format!(
            "<li class=\"producer-row\" data-testid=\"producer-row\" data-producer=\"{p}\"><div class=\"row-head\">\
             <span class=\"cid\">{p}</span></div><div class=\"send-form\">\
             <label><span>topic</span><select data-testid=\"send-topic\">{opts}</select></label>\
             <label><span>partition</span><input type=\"text\" inputmode=\"numeric\" data-testid=\"send-partition\" placeholder=\"partitioner\" value=\"\"></label>\
             <label><span>key</span><input type=\"text\" data-testid=\"send-key\" spellcheck=\"false\" placeholder=\"none\" value=\"key-{{i}}\"></label>\
             <label><span>value</span><input type=\"text\" data-testid=\"send-value\" spellcheck=\"false\" value=\"value {{i}}\"></label>\
             <label><span>count</span><input type=\"text\" inputmode=\"numeric\" data-testid=\"send-count\" value=\"10\"></label>\
             <label><span>every ms</span><input type=\"text\" inputmode=\"numeric\" data-testid=\"send-interval\" value=\"100\"></label>\
             </div><button class=\"wide\" data-testid=\"send-button\" data-action=\"send\" aria-label=\"send from {p}\">Send from now</button></li>",
            p = esc(&p.id),
        ));
    }
    h
}

/// The value of the field `testid` inside `row` (an input or a select).
fn field(row: &web_sys::Element, testid: &str) -> String {
    use leptos::wasm_bindgen::JsCast;
    let Some(el) = row.query_selector(&format!("[data-testid={testid}]")).ok().flatten() else { return String::new() };
    if let Some(i) = el.dyn_ref::<web_sys::HtmlInputElement>() {
        return i.value();
    }
    el.dyn_ref::<web_sys::HtmlSelectElement>().map(|s| s.value()).unwrap_or_default()
}

#[component]
pub fn Editor() -> impl IntoView {
    use leptos::wasm_bindgen::JsCast;
    let sim = expect_context::<Sim>();
    let pending = RwSignal::new(None::<Pending>);
    provide_context(pending);
    // A new scenario forgets the last edit.
    Effect::new(move |_| {
        sim.preset.track();
        sim.source.track();
        pending.set(None);
    });
    let feedback = Memo::new(move |_| pending.with(|p| p.as_ref().and_then(|p| sim.read_as::<World, _>(|w| pending_text(w, p)))));
    let groups = Memo::new(move |_| {
        sim.read_as::<World, _>(|w| w.groups.iter().map(|g| g.name.to_string()).collect::<Vec<_>>()).unwrap_or_default()
    });
    let topics = Memo::new(move |_| sim.read_as::<World, _>(topics_html).unwrap_or_default());
    // Only the producers' names and counters change: the form's fields are kept while typing.
    let producer_names = Memo::new(move |_| {
        sim.read_as::<World, _>(|w| w.producers.iter().map(|p| p.id.to_string()).collect::<Vec<_>>()).unwrap_or_default()
    });
    let producers = Memo::new(move |_| {
        producer_names.track();
        sim.peek_as::<World, _>(producers_html).unwrap_or_default()
    });
    let topic_error = RwSignal::new(None::<String>);
    let on_partitions = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        let Some(topic) = input.get_attribute("data-topic") else { return };
        let current =
            sim.peek_as::<World, _>(|w| w.topic_index(&topic).map(|t| w.topics[t].pids.len() as u32)).flatten().unwrap_or(0);
        let mark = |bad: bool| {
            let _ = if bad { input.class_list().add_1("invalid") } else { input.class_list().remove_1("invalid") };
            let _ = input.set_attribute("aria-invalid", &bad.to_string());
        };
        match read_partition_count(current, &input.value()) {
            Ok(n) => match enter(sim, Action::AddPartitions { topic: topic.clone(), partitions: n }) {
                Ok(()) => {
                    mark(false);
                    topic_error.set(None);
                    pending.set(Some(Pending::Partitions { topic, count: n }));
                }
                Err(e) => {
                    mark(true);
                    topic_error.set(Some(format!("{topic}: {e}. Nothing changed.")));
                }
            },
            Err(e) => {
                mark(true);
                topic_error.set(Some(format!("{topic}: {e}. Nothing changed: it keeps {current}.")));
            }
        }
    };
    let send_error = RwSignal::new(None::<String>);
    let last_send = RwSignal::new(None::<String>);
    let on_send = move |ev: leptos::ev::MouseEvent| {
        if action_of(&ev).as_deref() != Some("send") {
            return;
        }
        let row = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("li[data-producer]").ok().flatten());
        let Some(row) = row else { return };
        let producer = row.get_attribute("data-producer").unwrap_or_default();
        let form = SendForm {
            topic: field(&row, "send-topic"),
            key: field(&row, "send-key"),
            value: field(&row, "send-value"),
            partition: field(&row, "send-partition"),
            count: field(&row, "send-count"),
            interval: field(&row, "send-interval"),
        };
        let parsed = sim.peek_as::<World, _>(|w| read_send(w, w.now, &form)).unwrap_or(Err("no Kafka model".into()));
        match parsed {
            Ok(send) => {
                let text = format!(
                    "{producer}: {} × {}{} every {} ms from now",
                    send.count,
                    send.topic,
                    send.partition.map(|p| format!("-{p}")).unwrap_or_default(),
                    send.interval_ms
                );
                match enter(sim, Action::Produce { producer: producer.clone(), send }) {
                    Ok(()) => {
                        send_error.set(None);
                        last_send.set(Some(text));
                    }
                    Err(e) => send_error.set(Some(format!("{producer}: {e}. Nothing was sent."))),
                }
            }
            Err(e) => send_error.set(Some(format!("{producer}: {e}. Nothing was sent."))),
        }
    };
    view! {
        {move || {
            feedback
                .get()
                .map(|t| view! { <p class="note feedback" data-testid="edit-feedback" role="status" aria-live="polite">{t}</p> })
        }}
        <h2>"Consumer groups"</h2>
        <For each=move || groups.get() key=|g| g.clone() let:group>
            <GroupBlock group=group />
        </For>
        <p class="hint">"Edits are entered at the current simulated time; the note at the top says when each one takes effect."</p>
        <h2>"Topics"</h2>
        <ul class="topics" on:change=on_partitions inner_html=move || topics.get()></ul>
        {move || topic_error.get().map(|e| view! { <div class="inline-error" data-testid="topic-error" role="alert">{e}</div> })}
        <h2>"Producers"</h2>
        <ul class="producers" on:click=on_send inner_html=move || producers.get()></ul>
        {move || send_error.get().map(|e| view! { <div class="inline-error" data-testid="send-error" role="alert">{e}</div> })}
        {move || last_send.get().map(|m| view! { <div class="muted small" data-testid="send-last">{m}</div> })}
    }
}
