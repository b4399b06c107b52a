//! Left panel: consumers, their subscriptions (validated live with the core's FilterAPI), adding a
//! consumer and the group's allocation strategy. Every edit is a `TimedAction` at the current time.

use leptos::prelude::*;

use super::state::{group_members, Sim};
use crate::sim::rocketmq::filterapi;
use crate::sim::rocketmq::world::is_system_topic;
use crate::sim::scenario::{Action, AllocationSpec, SubscriptionSpec};

#[derive(Clone, PartialEq)]
struct Row {
    client_id: String,
    group: String,
    subs: Vec<SubscriptionSpec>,
}

fn validate(s: &SubscriptionSpec, text: &str) -> Result<(), String> {
    filterapi::build(&s.topic, Some(text), s.expression_type.as_deref(), 0).map(|_| ()).map_err(|e| e.to_string())
}

#[component]
fn SubscriptionInput(client_id: String, spec: SubscriptionSpec) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let text = RwSignal::new(spec.expression.clone());
    let err = RwSignal::new(None::<String>);
    let spec_c = spec.clone();
    let commit = move || {
        let t = text.get_untracked();
        if let Err(e) = validate(&spec_c, &t) {
            err.set(Some(e));
            return;
        }
        if t == spec_c.expression {
            return;
        }
        sim.command(Action::Subscribe {
            client_id: client_id.clone(),
            subscription: SubscriptionSpec { expression: t, ..spec_c.clone() },
        });
    };
    let commit2 = commit.clone();
    let spec_v = spec.clone();
    let label = format!("{} = ", spec.topic);
    view! {
        <div class="sub">
            <label>
                <span class="topic">{label}</span>
                <input
                    type="text"
                    data-testid="subscription-input"
                    data-topic=spec.topic.clone()
                    spellcheck="false"
                    class:invalid=move || err.with(Option::is_some)
                    aria-invalid=move || err.with(Option::is_some).to_string()
                    prop:value=move || text.get()
                    on:input=move |ev| {
                        let v = event_target_value(&ev);
                        err.set(validate(&spec_v, &v).err());
                        text.set(v);
                    }
                    on:change=move |_| commit()
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" {
                            commit2();
                        }
                    }
                />
            </label>
            {move || err.get().map(|e| view! { <div class="inline-error" data-testid="subscription-error" role="alert">{e}</div> })}
        </div>
    }
}

#[component]
fn ConsumerRow(row: Row) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let cid = row.client_id.clone();
    let status = move || {
        sim.read(|w| {
            w.consumers
                .iter()
                .find(|c| *c.client_id == *cid)
                .map(|c| (c.running, c.pqs.keys().filter(|q| !is_system_topic(&q.topic)).count(), c.consumed.len()))
        })
        .flatten()
    };
    view! {
        <li class="consumer-row" data-testid="consumer-row" data-client-id=row.client_id.clone()>
            <div class="row-head">
                <span class="cid">{row.client_id.clone()}</span>
                {move || match status() {
                    Some((true, q, _)) => view! { <span class="badge on">{format!("running · {q} q")}</span> }.into_any(),
                    Some((false, _, _)) => view! { <span class="badge off">"stopped"</span> }.into_any(),
                    None => view! { <span class="badge off">"?"</span> }.into_any(),
                }}
            </div>
            <div class="group-name">{row.group.clone()}</div>
            {row
                .subs
                .iter()
                .map(|s| view! { <SubscriptionInput client_id=row.client_id.clone() spec=s.clone() /> })
                .collect_view()}
        </li>
    }
}

fn next_client_id(w: &crate::sim::rocketmq::world::World) -> Option<String> {
    ('A'..='Z').map(|c| format!("Consumer{c}")).find(|id| !w.consumers.iter().any(|c| *c.client_id == **id))
}

#[component]
pub fn Editor() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let rows = Memo::new(move |_| {
        sim.read(|w| {
            w.consumers
                .iter()
                .map(|c| Row {
                    client_id: c.client_id.to_string(),
                    group: c.group.to_string(),
                    subs: c.spec.subscriptions.clone(),
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
    });
    let first_group = Memo::new(move |_| sim.read(|w| group_members(w).first().map(|(g, _)| g.clone())).flatten());
    let strategy =
        Memo::new(move |_| sim.read(|w| w.consumers.first().map(|c| c.strategy_name.to_string())).flatten().unwrap_or_default());
    let add_error = RwSignal::new(None::<String>);
    let add = move |_| {
        let plan = sim
            .peek(|w| {
                let first = w.consumers.first()?;
                let id = next_client_id(w)?;
                let mut spec = first.spec.clone();
                spec.client_id = id;
                spec.start_at = Some(w.now);
                Some((first.group.to_string(), spec))
            })
            .flatten();
        match plan {
            Some((group, consumer)) => {
                add_error.set(None);
                sim.command(Action::AddConsumer { group, consumer });
            }
            None => add_error.set(Some("No group to add a consumer to.".into())),
        }
    };
    let set_strategy = move |ev: leptos::ev::Event| {
        let Some(group) = first_group.get_untracked() else { return };
        let allocation = match event_target_value(&ev).as_str() {
            "AVG" => AllocationSpec::Avg,
            "AVG_BY_CIRCLE" => AllocationSpec::AvgByCircle,
            "CONSISTENT_HASH" => AllocationSpec::ConsistentHash { virtual_nodes: 10 },
            _ => return,
        };
        sim.command(Action::SetAllocation { group, allocation });
    };
    view! {
        <h2>"Consumers"</h2>
        <ul class="consumers">
            <For each=move || rows.get() key=|r| (r.client_id.clone(), format!("{:?}", r.subs)) let:row>
                <ConsumerRow row=row />
            </For>
        </ul>
        <button data-testid="add-consumer" class="wide" on:click=add>
            "+ Add consumer"
        </button>
        {move || add_error.get().map(|e| view! { <div class="inline-error">{e}</div> })}
        <h2>"Allocation"</h2>
        <label class="field stacked">
            <span>{move || format!("Strategy for {}", first_group.get().unwrap_or_default())}</span>
            <select data-testid="strategy-select" on:change=set_strategy>
                {["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"]
                    .into_iter()
                    .map(|s| view! { <option value=s selected=move || strategy.get() == s>{s}</option> })
                    .collect_view()}
            </select>
        </label>
        <p class="hint">"Edits take effect at the current simulated time; a new strategy applies at the next rebalance (every 20 s)."</p>
    }
}
