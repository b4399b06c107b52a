//! Left panel: the Pulsar editor. Subscriptions with their consumers (start / close / crash, ack
//! behaviour, add a consumer), the segments of scalable topics (split, merge) and the producers
//! (send from now). Every edit is a timeline action entered at the playhead through
//! `Sim::command`, so the run stays reproducible; the model checks it against the state, and a
//! refused edit changes nothing and says why next to the control. The note at the top says when
//! the last edit takes effect.

use leptos::prelude::*;

use super::editor_forms::{ProduceForm, SegmentForm};
use super::feedback::{self, Lifecycle, Pending};
use crate::ui::state::Sim;
use mqviz_engine::Millis;
use mqviz_pulsar::scenario::{action_value, AckMode, AckSpec, Action, ConsumerKind};
use mqviz_pulsar::world::{ClientState, World};

/// Longest processing time per message the editor accepts.
const MAX_PROCESS_MS: u64 = 600_000;

/// Enters an edit at the playhead. `Err` is the model's refusal, with JSON paths.
pub(super) fn enter(sim: Sim, a: &Action) -> Result<(), String> {
    sim.command(action_value(a))
}

pub(super) fn refused(e: &str) -> String {
    format!("Refused, nothing changed: {e}")
}

pub(super) fn now(sim: Sim) -> Millis {
    sim.peek_as::<World, _>(|w| w.now).unwrap_or(0)
}

/// One subscription and the consumers that use it, in the order they appear.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Group {
    topic: String,
    subscription: String,
    kind: String,
    members: Vec<String>,
}

fn kind_text(kind: &ConsumerKind) -> String {
    match kind {
        ConsumerKind::Subscription { subscription_type, key_shared: Some(ks) } => {
            format!("{} {}", subscription_type.name(), ks.mode.name())
        }
        ConsumerKind::Subscription { subscription_type, key_shared: None } => subscription_type.name().to_string(),
        ConsumerKind::Scalable(t) => t.name().to_string(),
    }
}

fn groups(w: &World) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for c in &w.consumers {
        let (topic, sub) = (&c.spec.topic, &c.spec.subscription);
        match out.iter_mut().find(|g| g.topic == *topic && g.subscription == *sub) {
            Some(g) => g.members.push(c.name.to_string()),
            None => out.push(Group {
                topic: topic.clone(),
                subscription: sub.clone(),
                kind: kind_text(&c.spec.kind),
                members: vec![c.name.to_string()],
            }),
        }
    }
    out
}

/// Whether a consumer has `name` now or the scenario's timeline adds one by that name later.
fn name_taken(w: &World, name: &str) -> bool {
    w.consumer_index(name).is_some()
        || w.scenario.timeline.iter().any(|a| matches!(&a.action, Action::AddConsumer { consumer } if consumer.name == name))
}

/// A free name for the next consumer: the last member's name with its number raised
/// (`consumer-3` → `consumer-4`), or `<name>-2`.
fn next_name(w: &World, members: &[String]) -> String {
    let last = members.last().map(String::as_str).unwrap_or("consumer");
    let stem = last.trim_end_matches(|c: char| c.is_ascii_digit());
    let (stem, mut n) = match last[stem.len()..].parse::<u64>() {
        Ok(n) => (stem.to_string(), n + 1),
        Err(_) => (format!("{last}-"), 2),
    };
    while name_taken(w, &format!("{stem}{n}")) {
        n += 1;
    }
    format!("{stem}{n}")
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct RowState {
    state: &'static str,
    running: bool,
    /// Started before (the start button says "restart").
    started: bool,
    mode: &'static str,
    process_ms: u64,
    failure: Option<String>,
}

fn row_state(w: &World, name: &str) -> Option<RowState> {
    let c = w.consumer_index(name)?;
    let con = &w.consumers[c];
    Some(RowState {
        state: w.consumer_state(c).label(),
        running: con.running(),
        started: con.incarnation > 0 || con.state != ClientState::NotStarted,
        mode: con.ack.mode.name(),
        process_ms: con.ack.process_ms,
        failure: con.failure.clone(),
    })
}

const ACK_MODES: [(&str, &str); 5] = [
    ("individual", "individual ack"),
    ("cumulative", "cumulative ack"),
    ("never", "never ack"),
    ("nack", "negative ack"),
    ("retry", "reconsumeLater"),
];

#[component]
fn ConsumerRow(name: String) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = expect_context::<RwSignal<Option<Pending>>>();
    let n = name.clone();
    let st = Memo::new(move |_| sim.read_as::<World, _>(|w| row_state(w, &n)).flatten());
    // What the select and the field show: the consumer's behaviour, put back after a refusal.
    let shown_mode = RwSignal::new(String::new());
    let shown_ms = RwSignal::new(String::new());
    Effect::new(move |_| {
        if let Some(s) = st.get() {
            shown_mode.set(s.mode.to_string());
            shown_ms.set(s.process_ms.to_string());
        }
    });
    let ack_error = RwSignal::new(None::<String>);
    let life_error = RwSignal::new(None::<String>);
    let life_name = name.clone();
    let lifecycle = move |what: Lifecycle| {
        let consumer = life_name.clone();
        let action = match what {
            Lifecycle::Start => Action::StartConsumer { consumer: consumer.clone() },
            Lifecycle::Close => Action::CloseConsumer { consumer: consumer.clone() },
            Lifecycle::Crash => Action::CrashConsumer { consumer: consumer.clone() },
        };
        let at = now(sim);
        match enter(sim, &action) {
            Ok(()) => {
                life_error.set(None);
                pending.set(Some(Pending::Lifecycle { consumer, what, at }));
            }
            Err(e) => life_error.set(Some(refused(&e))),
        }
    };
    let ack_name = name.clone();
    // Applies the select and the field together; bad numbers and refused modes change nothing.
    let apply_ack = move |mode: String, ms: String| {
        let Some(cur) = st.get_untracked() else { return };
        let restore = || {
            shown_mode.set(cur.mode.to_string());
            shown_ms.set(cur.process_ms.to_string());
        };
        let process_ms = match ms.trim().parse::<u64>() {
            Ok(v) if v <= MAX_PROCESS_MS => v,
            _ => {
                ack_error.set(Some(format!(
                    "Processing time must be a whole number of ms from 0 to {MAX_PROCESS_MS}; {ack_name} keeps {} ms.",
                    cur.process_ms
                )));
                restore();
                return;
            }
        };
        let Some(mode_parsed) = AckMode::parse(&mode) else { return };
        if mode == cur.mode && process_ms == cur.process_ms {
            ack_error.set(None);
            return;
        }
        let ack = sim
            .peek_as::<World, _>(|w| w.consumer_index(&ack_name).map(|c| w.consumers[c].ack.clone()))
            .flatten()
            .unwrap_or_default();
        let ack = AckSpec { mode: mode_parsed, process_ms, ..ack };
        let at = now(sim);
        match enter(sim, &Action::SetAck { consumer: ack_name.clone(), ack }) {
            Ok(()) => {
                ack_error.set(None);
                pending.set(Some(Pending::Ack { consumer: ack_name.clone(), mode, at }));
            }
            Err(e) => {
                ack_error.set(Some(format!("{} {ack_name} keeps {:?}.", refused(&e), cur.mode)));
                restore();
            }
        }
    };
    let apply_mode = apply_ack.clone();
    let (n1, n2, n3, n4, n5) = (name.clone(), name.clone(), name.clone(), name.clone(), name.clone());
    let (start, close, crash) = (lifecycle.clone(), lifecycle.clone(), lifecycle);
    view! {
        <li class="consumer-row" data-testid="consumer-row" data-consumer=name.clone()>
            <div class="row-head">
                <span class="cid">{name.clone()}</span>
                <span
                    class="badge"
                    class:on=move || st.with(|s| s.as_ref().is_some_and(|s| s.running))
                    class:off=move || st.with(|s| !s.as_ref().is_some_and(|s| s.running))
                    data-testid="consumer-state"
                    data-running=move || st.with(|s| s.as_ref().is_some_and(|s| s.running)).to_string()
                >
                    {move || st.with(|s| s.as_ref().map_or("?", |s| s.state))}
                </span>
            </div>
            <div class="lifecycle">
                <button
                    class="small-btn"
                    data-testid="consumer-start"
                    aria-label=move || {
                        format!("{} {n1}", if st.with(|s| s.as_ref().is_some_and(|s| s.started)) { "restart" } else { "start" })
                    }
                    title="Start the consumer now (a restart after close or crash subscribes again)"
                    disabled=move || st.with(|s| s.as_ref().is_none_or(|s| s.running))
                    on:click=move |_| start(Lifecycle::Start)
                >
                    {move || if st.with(|s| s.as_ref().is_some_and(|s| s.started)) { "restart" } else { "start" }}
                </button>
                <button
                    class="small-btn"
                    data-testid="consumer-close"
                    aria-label=format!("close {n2}")
                    title="close(): pending acks are flushed; the broker redelivers what it had not acked"
                    disabled=move || st.with(|s| !s.as_ref().is_some_and(|s| s.running))
                    on:click=move |_| close(Lifecycle::Close)
                >
                    "close"
                </button>
                <button
                    class="small-btn danger"
                    data-testid="consumer-crash"
                    aria-label=format!("crash {n3}")
                    title="The process dies: grouped acks not yet sent are lost, the connection drops"
                    disabled=move || st.with(|s| !s.as_ref().is_some_and(|s| s.running))
                    on:click=move |_| crash(Lifecycle::Crash)
                >
                    "crash"
                </button>
            </div>
            {move || life_error.get().map(|e| view! { <div class="inline-error" data-testid="lifecycle-error" role="alert">{e}</div> })}
            {move || {
                st.with(|s| s.as_ref().and_then(|s| s.failure.clone()))
                    .map(|f| view! { <div class="inline-error" data-testid="consumer-failure">{f}</div> })
            }}
            <div class="ack-form">
                <label>
                    <span>"acks"</span>
                    <select
                        data-testid="ack-mode"
                        aria-label=format!("{n4}'s ack behaviour")
                        prop:value=move || shown_mode.get()
                        on:change=move |ev| apply_mode(event_target_value(&ev), shown_ms.get_untracked())
                    >
                        {ACK_MODES
                            .iter()
                            .map(|(v, label)| view! { <option value=*v>{*label}</option> })
                            .collect_view()}
                    </select>
                </label>
                <label>
                    <span>"ms per message"</span>
                    <input
                        type="text"
                        inputmode="numeric"
                        data-testid="ack-process"
                        aria-label=format!("{n5}'s processing time per message, in ms")
                        class:invalid=move || ack_error.with(Option::is_some)
                        prop:value=move || shown_ms.get()
                        on:change=move |ev| apply_ack(shown_mode.get_untracked(), event_target_value(&ev))
                    />
                </label>
            </div>
            {move || ack_error.get().map(|e| view! { <div class="inline-error" data-testid="ack-error" role="alert">{e}</div> })}
        </li>
    }
}

#[component]
fn GroupBlock(group: Group) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = expect_context::<RwSignal<Option<Pending>>>();
    let members = group.members.clone();
    let suggested = sim.peek_as::<World, _>(|w| next_name(w, &members)).unwrap_or_default();
    let new_name = RwSignal::new(suggested.clone());
    let add_error = RwSignal::new(None::<String>);
    let first = group.members.first().cloned().unwrap_or_default();
    let add = move |_| {
        let name = new_name.get_untracked().trim().to_string();
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            add_error.set(Some("Give the new consumer a name without spaces; nothing changed.".into()));
            return;
        }
        let spec = sim.peek_as::<World, _>(|w| {
            if name_taken(w, &name) {
                return Err(format!("A consumer named {name} exists already (or joins later in the scenario); nothing changed."));
            }
            let c = w.consumer_index(&first).ok_or_else(|| "No consumer to copy.".to_string())?;
            let mut spec = (*w.consumers[c].spec).clone();
            spec.name = name.clone();
            Ok(spec)
        });
        let at = now(sim);
        match spec {
            Some(Ok(consumer)) => match enter(sim, &Action::AddConsumer { consumer }) {
                Ok(()) => {
                    add_error.set(None);
                    pending.set(Some(Pending::Added { consumer: name, at }));
                }
                Err(e) => add_error.set(Some(refused(&e))),
            },
            Some(Err(e)) => add_error.set(Some(e)),
            None => {}
        }
    };
    let label = format!("name of the consumer to add to {}", group.subscription);
    let button_label = format!("add a consumer to {}", group.subscription);
    view! {
        <section class="group" data-testid="subscription" data-subscription=group.subscription.clone()>
            <div class="row-head">
                <span class="gname" title="Subscription">{group.subscription.clone()}</span>
                <span class="badge model" data-testid="subscription-type">{group.kind.clone()}</span>
            </div>
            <div class="muted small">{format!("on {}", group.topic)}</div>
            <ul class="consumers">
                {group.members.iter().map(|m| view! { <ConsumerRow name=m.clone() /> }).collect_view()}
            </ul>
            <div class="add-consumer">
                <input
                    type="text"
                    data-testid="new-consumer-name"
                    aria-label=label
                    spellcheck="false"
                    prop:value=move || new_name.get()
                    on:input=move |ev| new_name.set(event_target_value(&ev))
                />
                <button data-testid="add-consumer" aria-label=button_label on:click=add>
                    "+ Add"
                </button>
            </div>
            {move || add_error.get().map(|e| view! { <div class="inline-error" data-testid="add-error" role="alert">{e}</div> })}
        </section>
    }
}

#[component]
pub fn Editor() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = RwSignal::new(None::<Pending>);
    provide_context(pending);
    // A new scenario forgets the last edit.
    Effect::new(move |_| {
        sim.preset.track();
        sim.source.track();
        pending.set(None);
    });
    let note = Memo::new(move |_| pending.with(|p| p.as_ref().and_then(|p| sim.read_as::<World, _>(|w| feedback::text(w, p)))));
    let groups = Memo::new(move |_| sim.read_as::<World, _>(groups).unwrap_or_default());
    let topics = Memo::new(move |_| {
        sim.read_as::<World, _>(|w| {
            w.topics.iter().filter(|t| t.scalable.is_some()).map(|t| t.written.clone()).collect::<Vec<_>>()
        })
        .unwrap_or_default()
    });
    let producers = Memo::new(move |_| {
        sim.read_as::<World, _>(|w| w.producers.iter().map(|p| p.name.to_string()).collect::<Vec<_>>()).unwrap_or_default()
    });
    view! {
        {move || {
            note.get()
                .filter(|t| !t.is_empty())
                .map(|t| view! { <p class="note feedback" data-testid="edit-feedback" role="status" aria-live="polite">{t}</p> })
        }}
        <h2>"Subscriptions"</h2>
        <For each=move || groups.get() key=|g| g.clone() let:group>
            <GroupBlock group=group />
        </For>
        <Show when=move || topics.with(|t| !t.is_empty())>
            <h2>"Segments"</h2>
            <For each=move || topics.get() key=|t| t.clone() let:topic>
                <SegmentForm topic=topic />
            </For>
        </Show>
        <h2>"Producers"</h2>
        <ul class="producers">
            <For each=move || producers.get() key=|p| p.clone() let:producer>
                <ProduceForm producer=producer />
            </For>
        </ul>
        <p class="hint">"Edits are entered at the current simulated time; the note at the top says when each one takes effect."</p>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::pulsar::dag::tests::world_at;

    #[test]
    fn subscriptions_group_their_consumers_and_new_names_are_free() {
        let w = world_at("pulsar-key-shared-join.json", 0);
        let g = groups(&w);
        assert_eq!(g.len(), 1);
        assert_eq!((g[0].subscription.as_str(), g[0].kind.as_str()), ("billing", "Key_Shared AUTO_SPLIT"));
        assert_eq!(next_name(&w, &g[0].members), "consumer-5", "consumer-4 is the timeline's");
        let w = world_at("pulsar-scalable-sealed-not-redelivered.json", 0);
        assert_eq!(next_name(&w, &groups(&w)[0].members), "consumer-B-2");
    }
}
