//! One consumer in the editor: its state and lifecycle buttons (start / restart, stop, crash),
//! its subscription (topics, a pattern, or assigned partitions) checked as it is typed, and
//! pause / resume / seek on one of the partitions it owns.

use leptos::prelude::*;

use super::feedback::{generation_of, Lifecycle, Pending};
use super::forms::{read_seek, read_subscription, subscription_text, SubKind};
use super::{action_of, enter};
use crate::ui::state::{esc, Sim};
use mqviz_kafka::scenario::{Action, PartitionRef, SeekTarget, SubscriptionSpec};
use mqviz_kafka::world::{Life, World};

/// The consumer's head (id, state badge, lifecycle buttons) as HTML: it changes only when the
/// state does; the buttons are handled by one delegated click listener.
fn status_html(w: &World, client: &str) -> String {
    let Some(c) = w.find_consumer(client).map(|i| &w.consumers[i]) else { return String::new() };
    let owned = c.subs.assigned_partitions().len();
    let (cls, label) = match c.life {
        Life::Running => ("on", format!("running · {owned} partition{}", if owned == 1 { "" } else { "s" })),
        Life::NotStarted => ("off", "not started".to_string()),
        Life::Stopped => ("off", "stopped".to_string()),
        Life::Crashed => ("off", "crashed".to_string()),
        Life::Failed => ("off", "failed".to_string()),
    };
    let running = c.running();
    let dis = |d: bool| if d { " disabled" } else { "" };
    let start = if c.life == Life::NotStarted { "start" } else { "restart" };
    let mut h = format!(
        "<div class=\"row-head\"><span class=\"cid\">{id}</span><span class=\"badge {cls}\" data-testid=\"consumer-state\" \
         data-running=\"{running}\">{label}</span></div><div class=\"lifecycle\">\
         <button class=\"small-btn\" data-testid=\"consumer-start\" data-action=\"start\" aria-label=\"{start} {id}\" \
         title=\"start the consumer now (it joins its group)\"{d1}>{start}</button>\
         <button class=\"small-btn\" data-testid=\"consumer-stop\" data-action=\"stop\" aria-label=\"stop {id}\" \
         title=\"close(): commit, revoke, leave the group (static members do not leave)\"{d2}>stop</button>\
         <button class=\"small-btn danger\" data-testid=\"consumer-crash\" data-action=\"crash\" aria-label=\"crash {id}\" \
         title=\"the process dies: nothing committed, no LeaveGroup; the coordinator notices at the session timeout\"{d2}>crash</button></div>",
        id = esc(client),
        d1 = dis(running),
        d2 = dis(!running),
    );
    if let Some(e) = c.failure.as_deref().filter(|_| c.life == Life::Failed) {
        h.push_str(&format!("<div class=\"inline-error\" data-testid=\"consumer-failure\" role=\"alert\">{}</div>", esc(e)));
    }
    h
}

/// The partitions a consumer owns now, as `<option>`s.
fn owned_options(w: &World, client: &str) -> String {
    let Some(c) = w.find_consumer(client).map(|i| &w.consumers[i]) else { return String::new() };
    if !c.running() || c.subs.assigned_partitions().is_empty() {
        return "<option value=\"\">(owns none)</option>".into();
    }
    c.subs
        .assigned_partitions()
        .iter()
        .map(|tp| {
            let name = format!("{}-{}", tp.topic, tp.partition);
            let paused = c.subs.is_paused(tp);
            format!("<option value=\"{n}\">{n}{}</option>", if paused { " (paused)" } else { "" }, n = esc(&name))
        })
        .collect()
}

#[component]
fn SubscriptionEditor(client: String, spec: Option<SubscriptionSpec>) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = expect_context::<RwSignal<Option<Pending>>>();
    let kind0 = SubKind::of(spec.as_ref());
    let kind = RwSignal::new(kind0);
    let text = RwSignal::new(subscription_text(spec.as_ref()));
    let err = RwSignal::new(None::<String>);
    let holds = spec.as_ref().map(|s| s.describe()).unwrap_or_else(|| "no subscription".into());
    let check = move || {
        sim.peek_as::<World, _>(|w| read_subscription(w, kind.get_untracked(), &text.get_untracked()))
            .unwrap_or(Err("no Kafka model".into()))
    };
    let id = client.clone();
    // What this field last entered: Enter and the change event that follows it are one action.
    let entered = StoredValue::new(spec.clone());
    let commit = move || match check() {
        Err(e) => err.set(Some(e)),
        Ok(s) => {
            err.set(None);
            if entered.with_value(|e| e.as_ref() == Some(&s)) {
                return;
            }
            let before = entered.get_value();
            entered.set_value(Some(s.clone()));
            let generation =
                sim.peek_as::<World, _>(|w| w.find_consumer(&id).map(|c| generation_of(&w.consumers[c]))).flatten().unwrap_or(-1);
            let what = s.describe();
            match enter(sim, Action::Subscribe { consumer: id.clone(), subscription: s }) {
                Ok(()) => pending.set(Some(Pending::Subscription { client: id.clone(), what, generation })),
                Err(e) => {
                    entered.set_value(before);
                    err.set(Some(e));
                }
            }
        }
    };
    let (commit_key, commit_kind) = (commit.clone(), commit.clone());
    let placeholder = move || match kind.get() {
        SubKind::Topics => "orders, payments",
        SubKind::Pattern => "orders.*",
        SubKind::Assign => "orders-0, orders-1",
    };
    let holds_text = holds.clone();
    view! {
        <div class="sub ksub">
            <label>
                <span class="topic">"gets partitions by"</span>
                <select
                    class="sub-type"
                    data-testid="subscription-type"
                    aria-label=format!("how {client} gets its partitions")
                    on:change=move |ev| {
                        kind.set(SubKind::from_value(&event_target_value(&ev)));
                        commit_kind();
                    }
                >
                    <option value=SubKind::Topics.value() selected=kind0 == SubKind::Topics>"subscribe(topics)"</option>
                    <option value=SubKind::Pattern.value() selected=kind0 == SubKind::Pattern>"subscribe(pattern)"</option>
                    <option value=SubKind::Assign.value() selected=kind0 == SubKind::Assign>"assign(partitions)"</option>
                </select>
                <input
                    type="text"
                    data-testid="subscription-input"
                    aria-label=format!("{client}'s topics, pattern or partitions")
                    spellcheck="false"
                    placeholder=placeholder
                    class:invalid=move || err.with(Option::is_some)
                    aria-invalid=move || err.with(Option::is_some).to_string()
                    prop:value=move || text.get()
                    on:input=move |ev| {
                        text.set(event_target_value(&ev));
                        if err.get_untracked().is_some() {
                            err.set(check().err());
                        }
                    }
                    on:change=move |_| commit()
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" {
                            commit_key();
                        }
                    }
                />
            </label>
            {move || {
                err.get()
                    .map(|e| {
                        view! {
                            <div class="inline-error" data-testid="subscription-error" role="alert">
                                {format!("{e}. Nothing changed: {} still holds.", holds_text)}
                            </div>
                        }
                    })
            }}
        </div>
    }
}

#[component]
fn PartitionOps(client: String) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = expect_context::<RwSignal<Option<Pending>>>();
    let cid = client.clone();
    let options = Memo::new(move |_| sim.read_as::<World, _>(|w| owned_options(w, &cid)).unwrap_or_default());
    let chosen: NodeRef<leptos::html::Select> = NodeRef::new();
    let seek_text = RwSignal::new("0".to_string());
    let err = RwSignal::new(None::<String>);
    let id = client.clone();
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let Some(what) = action_of(&ev) else { return };
        let part = chosen.get_untracked().map(|s| s.value()).unwrap_or_default();
        let Some(partition) = mqviz_kafka::scenario::parse_partition_ref(&part) else {
            err.set(Some(format!("{id} owns no partition to {what}. Nothing changed.")));
            return;
        };
        let consumer = id.clone();
        let (action, p) = match what.as_str() {
            "pause" | "resume" => {
                let paused = what == "pause";
                let partitions: Vec<PartitionRef> = vec![partition.clone()];
                let a = if paused { Action::Pause { consumer, partitions } } else { Action::Resume { consumer, partitions } };
                (a, Pending::Pause { client: id.clone(), partition: part.clone(), paused })
            }
            "seek" => match read_seek(&seek_text.get_untracked()) {
                Ok(to) => {
                    let call = match to {
                        SeekTarget::Offset(o) => format!("seek({part}, {o})"),
                        SeekTarget::Beginning => format!("seekToBeginning({part})"),
                        SeekTarget::End => format!("seekToEnd({part})"),
                    };
                    (
                        Action::Seek { consumer, partition, to },
                        Pending::Seek { client: id.clone(), partition: part.clone(), call },
                    )
                }
                Err(e) => {
                    err.set(Some(format!("{e}. Nothing changed.")));
                    return;
                }
            },
            _ => return,
        };
        match enter(sim, action) {
            Ok(()) => {
                err.set(None);
                pending.set(Some(p));
            }
            Err(e) => err.set(Some(format!("{e}. Nothing changed."))),
        }
    };
    view! {
        <details class="kpart-ops">
            <summary>"pause · resume · seek"</summary>
            <div class="kpart-form" on:click=on_click>
                <label>
                    <span>"partition"</span>
                    <select
                        data-testid="partition-select"
                        aria-label=format!("{client}'s partition")
                        node_ref=chosen
                        inner_html=move || options.get()
                    ></select>
                </label>
                <button class="small-btn" data-action="pause" data-testid="pause-button" aria-label=format!("pause {client}")>
                    "pause"
                </button>
                <button class="small-btn" data-action="resume" data-testid="resume-button" aria-label=format!("resume {client}")>
                    "resume"
                </button>
                <label>
                    <span>"seek to"</span>
                    <input
                        type="text"
                        inputmode="numeric"
                        data-testid="seek-input"
                        aria-label=format!("{client} seeks to: an offset, beginning or end")
                        class:invalid=move || err.with(Option::is_some)
                        prop:value=move || seek_text.get()
                        on:input=move |ev| seek_text.set(event_target_value(&ev))
                    />
                </label>
                <button class="small-btn" data-action="seek" data-testid="seek-button" aria-label=format!("seek {client}")>
                    "seek"
                </button>
            </div>
            {move || err.get().map(|e| view! { <div class="inline-error" data-testid="partition-error" role="alert">{e}</div> })}
        </details>
    }
}

#[component]
pub fn ConsumerRow(client: String, spec: Option<SubscriptionSpec>) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = expect_context::<RwSignal<Option<Pending>>>();
    let error = RwSignal::new(None::<String>);
    let cid = client.clone();
    let head = Memo::new(move |_| sim.read_as::<World, _>(|w| status_html(w, &cid)).unwrap_or_default());
    let id = client.clone();
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let consumer = id.clone();
        let (a, what) = match action_of(&ev).as_deref() {
            Some("start") => (Action::StartConsumer { consumer }, Lifecycle::Start),
            Some("stop") => (Action::StopConsumer { consumer }, Lifecycle::Stop),
            Some("crash") => (Action::CrashConsumer { consumer }, Lifecycle::Crash),
            _ => return,
        };
        let at = sim.peek_as::<World, _>(|w| w.now).unwrap_or(0);
        match enter(sim, a) {
            Ok(()) => {
                error.set(None);
                pending.set(Some(Pending::Lifecycle { client: id.clone(), what, at }));
            }
            Err(e) => error.set(Some(format!("{e}. Nothing changed."))),
        }
    };
    view! {
        <li class="consumer-row" data-testid="consumer-row" data-client-id=client.clone()>
            <div class="status" on:click=on_click inner_html=move || head.get()></div>
            {move || error.get().map(|e| view! { <div class="inline-error" role="alert">{e}</div> })}
            <SubscriptionEditor client=client.clone() spec=spec />
            <PartitionOps client=client.clone() />
        </li>
    }
}
