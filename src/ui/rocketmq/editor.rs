//! Left panel: the scenario editor. Topics and their queue counts, producers with a send form,
//! consumer groups (message model, allocation strategy) and their consumers (lifecycle buttons,
//! subscriptions validated live with the core's FilterAPI / SQL92 compiler). Every edit is a
//! `TimedAction` at the current time, so the run stays reproducible.

use leptos::prelude::*;

use crate::ui::state::{esc, Sim};
use mqviz_engine::Millis;
use mqviz_rocketmq::events::Event;
use mqviz_rocketmq::filterapi;
use mqviz_rocketmq::scenario::{action_value, Action, AllocationSpec, SendSpec, SubscriptionSpec};
use mqviz_rocketmq::sql92::{self, Sql92Version};
use mqviz_rocketmq::world::{is_system_topic, World};

/// Enters an edit as a timeline action at the current time. The editor validates its inputs
/// first, so a refusal here is a bug worth seeing in the console, not a user error.
fn enter(sim: Sim, a: Action) {
    if let Err(e) = sim.command(action_value(&a)) {
        leptos::logging::warn!("edit refused: {e}");
    }
}

/// An edit whose effect comes later: the editor says when, and then that it happened.
#[derive(Clone, Debug, PartialEq)]
enum Pending {
    Strategy { group: String, name: String, at: Millis },
    Subscription { client: String, topic: String, expression: String, at: Millis },
    Queues { topic: String, queues: u32, at: Millis },
    Lifecycle { client: String, what: &'static str, at: Millis },
}

/// When each consumer last ran a rebalance (log scanned backwards to `since`).
fn last_rebalance(w: &World, client: &str) -> Option<Millis> {
    w.log().entries().rev().find_map(|e| match &e.kind {
        Event::RebalanceRun { client: c } if &**c == client => Some(e.at),
        _ => None,
    })
}

fn secs(ms: Millis) -> String {
    format!("{} s", mqviz_engine::decimal::fixed(ms as f64 / 1000.0, 1))
}

/// What the editor says about a pending edit, now.
fn pending_text(w: &World, p: &Pending) -> String {
    let now = w.now;
    match p {
        Pending::Strategy { group, name, at } => {
            let members: Vec<&str> = w.consumers.iter().filter(|c| c.running && *c.group == **group).map(|c| &*c.client_id).collect();
            let waiting: Vec<(&str, Millis)> = members
                .iter()
                .filter_map(|&c| {
                    let last = last_rebalance(w, c).unwrap_or(0);
                    (last <= *at).then_some((c, last + mqviz_rocketmq::world::REBALANCE_INTERVAL))
                })
                .collect();
            match waiting.iter().map(|x| x.1).min() {
                None => format!("{name} applied: every member of {group} has rebalanced with it since {}.", secs(*at)),
                Some(next) => format!(
                    "{name} applies at each member's next rebalance; the next is in about {} ({} of {} members still use the old strategy).",
                    secs(next.saturating_sub(now)),
                    waiting.len(),
                    members.len()
                ),
            }
        }
        Pending::Subscription { client, topic, expression, at } => {
            let table = w.brokers.iter().find_map(|b| {
                let g = w.consumers.iter().find(|c| *c.client_id == **client)?.group.clone();
                b.groups.get(&*g)?.subscription_table.get(topic).map(|sd| (sd.sub_string.clone(), sd.sub_version))
            });
            match table {
                Some((e, v)) if *e == **expression && v >= *at => {
                    format!("{client}'s heartbeat reached the broker: the group's table entry for {topic} is now {expression:?} (subVersion {v}).")
                }
                Some((e, _)) => format!(
                    "{client} uses {expression:?} now and heartbeats it; the broker still applies {e:?} for the group until a newer heartbeat wins."
                ),
                None => format!("{client} uses {expression:?} now; the broker learns it with the next heartbeat."),
            }
        }
        Pending::Queues { topic, queues, at } => {
            let behind: Vec<Millis> = w
                .consumers
                .iter()
                .filter(|c| c.running && c.subs.contains_key(topic))
                .filter(|c| c.routes.get(topic).is_none_or(|r| r.len() as u32 != *queues))
                .map(|c| {
                    let period = mqviz_rocketmq::world::ROUTE_REFRESH_INTERVAL;
                    let since = now.saturating_sub(c.started_at);
                    c.started_at + since.div_ceil(period).max(1) * period
                })
                .collect();
            match behind.iter().min() {
                None => format!("{topic} has {queues} queues, and every consumer's route shows them (since {}).", secs(*at)),
                Some(next) => format!(
                    "{topic} has {queues} queues on the broker; consumers see them at their next route refresh, the next in about {}.",
                    secs(next.saturating_sub(now))
                ),
            }
        }
        Pending::Lifecycle { client, what, .. } => match *what {
            "crash" => format!(
                "{client} crashed: the broker forgets it only after 120 s without heartbeats, and its queues are not consumed until then."
            ),
            "stop" => format!("{client} unregistered: the broker notifies the group and the others rebalance at once."),
            _ => format!("{client} started: it heartbeats and rebalances now."),
        },
    }
}

/// Group names in the order their first consumer appears.
fn group_names(w: &World) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &w.consumers {
        if !out.iter().any(|g| **g == *c.group) {
            out.push(c.group.to_string());
        }
    }
    out
}

/// Largest queue count the editor accepts (the canvas draws every queue).
const MAX_UI_QUEUES: u32 = 256;
/// Largest send count / interval the producer form accepts.
const MAX_UI_SEND_COUNT: u32 = 100_000;
const MAX_UI_INTERVAL_MS: u64 = 600_000;

#[derive(Clone, PartialEq)]
struct Row {
    client_id: String,
    group: String,
    subs: Vec<SubscriptionSpec>,
}

/// Why an expression does not compile; `position` is a 0-based character offset (SQL92 only).
#[derive(Clone, Debug, PartialEq)]
struct ExprError {
    message: String,
    position: Option<usize>,
}

fn is_sql(t: Option<&str>) -> bool {
    matches!(t, Some(s) if !s.is_empty() && s != "TAG")
}

/// The SQL92 dialect of the (first) broker hosting `topic`; 5.x when none does.
fn sql_version(w: &World, topic: &str) -> Sql92Version {
    w.brokers.iter().find(|b| b.topics.contains_key(topic)).map(|b| b.filter_manager.config().sql92_version).unwrap_or_default()
}

fn validate(topic: &str, sql: bool, version: Sql92Version, text: &str) -> Result<(), ExprError> {
    if sql {
        if text.trim().is_empty() {
            return Err(ExprError { message: "an SQL92 expression cannot be empty".into(), position: Some(0) });
        }
        sql92::compile(text, version).map(|_| ()).map_err(|e| ExprError { message: e.message, position: Some(e.position) })
    } else {
        filterapi::build(topic, Some(text), None, 0).map(|_| ()).map_err(|e| ExprError { message: e.to_string(), position: None })
    }
}

/// The expression with a marker on the reported character (a space when it is past the end).
fn caret_html(text: &str, pos: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let p = pos.min(chars.len());
    let before: String = chars[..p].iter().collect();
    let at: String = chars.get(p).map(|c| c.to_string()).unwrap_or_else(|| " ".into());
    let after: String = chars.get(p + 1..).map(|s| s.iter().collect()).unwrap_or_default();
    format!(
        "<code class=\"sql-src\">{}<mark class=\"caret\" title=\"reported position\">{}</mark>{}</code>",
        esc(&before),
        esc(&at),
        esc(&after)
    )
}

#[component]
fn SubscriptionInput(client_id: String, spec: SubscriptionSpec) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = use_context::<RwSignal<Option<Pending>>>();
    let client_label = client_id.clone();
    let text = RwSignal::new(spec.expression.clone());
    let sql0 = is_sql(spec.expression_type.as_deref());
    let sql = RwSignal::new(sql0);
    let err = RwSignal::new(None::<ExprError>);
    let version = sim.peek_as::<World, _>(|w| sql_version(w, &spec.topic)).unwrap_or_default();
    let topic = spec.topic.clone();
    let check = {
        let topic = topic.clone();
        move || validate(&topic, sql.get_untracked(), version, &text.get_untracked()).err()
    };
    // What this field last entered: Enter and the change event that follows it are one action,
    // so the second finds its text entered already (the field is not re-rendered in between).
    let entered = StoredValue::new((spec.expression.clone(), sql0));
    let commit = {
        let check = check.clone();
        let spec = spec.clone();
        move || {
            if let Some(e) = check() {
                err.set(Some(e));
                return;
            }
            err.set(None);
            let t = text.get_untracked();
            let ty = sql.get_untracked().then(|| "SQL92".to_string());
            if entered.with_value(|(e, was_sql)| *e == t && *was_sql == is_sql(ty.as_deref())) {
                return;
            }
            entered.set_value((t.clone(), is_sql(ty.as_deref())));
            let at = sim.peek_as::<World, _>(|w| w.now).unwrap_or(0);
            enter(
                sim,
                Action::Subscribe {
                    consumer: client_id.clone(),
                    subscription: SubscriptionSpec { topic: spec.topic.clone(), expression: t.clone(), expression_type: ty },
                },
            );
            if let Some(p) = pending {
                p.set(Some(Pending::Subscription { client: client_id.clone(), topic: spec.topic.clone(), expression: t, at }));
            }
        }
    };
    let (commit_enter, commit_type) = (commit.clone(), commit.clone());
    let check_input = check.clone();
    let label = format!("{} = ", spec.topic);
    // What the consumer runs with while the text field holds an invalid edit.
    let holds = spec.expression.clone();
    let input_label = format!("{client_label}'s {} expression for {}", if sql0 { "SQL92" } else { "tag" }, spec.topic);
    let type_label = format!("{client_label}'s expression type for {}", spec.topic);
    view! {
        <div class="sub" data-topic=topic.clone()>
            <label>
                <span class="topic" title=topic.clone()>{label}</span>
                <select
                    class="sub-type"
                    data-testid="subscription-type"
                    aria-label=type_label
                    on:change=move |ev| {
                        let to_sql = event_target_value(&ev) == "SQL92";
                        sql.set(to_sql);
                        if !to_sql {
                            return commit_type();
                        }
                        // Checking and entering a SQL92 subscription takes the engine.
                        let commit = commit_type.clone();
                        let select: web_sys::HtmlSelectElement = event_target(&ev);
                        super::sql92::when_ready(move |ready| match ready {
                            Ok(()) => commit(),
                            Err(message) => {
                                // Nothing was entered: the select shows what still holds.
                                sql.set(false);
                                select.set_value("TAG");
                                err.set(Some(ExprError { message, position: None }));
                            }
                        });
                    }
                >
                    <option value="TAG" selected=!sql0>"TAG"</option>
                    <option value="SQL92" selected=sql0>"SQL92"</option>
                </select>
                <input
                    type="text"
                    data-testid="subscription-input"
                    aria-label=input_label
                    data-topic=spec.topic.clone()
                    spellcheck="false"
                    class:invalid=move || err.with(Option::is_some)
                    aria-invalid=move || err.with(Option::is_some).to_string()
                    value=spec.expression.clone()
                    on:input=move |ev| {
                        text.set(event_target_value(&ev));
                        err.set(check_input());
                    }
                    on:change=move |_| commit()
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" {
                            commit_enter();
                        }
                    }
                />
            </label>
            {move || {
                err.get()
                    .map(|e| {
                        let (testid, pos, cls, html) = match e.position.filter(|_| sql.get_untracked()) {
                            Some(p) => (
                                "sql-error",
                                Some(p.to_string()),
                                "inline-error sql-error",
                                format!(
                                    "{}<div>at {p}: {}</div><div>The previous expression {:?} still holds.</div>",
                                    caret_html(&text.get_untracked(), p),
                                    esc(&e.message),
                                    esc(&holds)
                                ),
                            ),
                            None => (
                                "subscription-error",
                                None,
                                "inline-error",
                                format!("{} The previous expression {:?} still holds.", esc(&e.message), esc(&holds)),
                            ),
                        };
                        view! { <div class=cls data-testid=testid data-position=pos role="alert" inner_html=html></div> }
                    })
            }}
        </div>
    }
}

/// The consumer's head (id, state badge, lifecycle buttons, start error) as HTML: it changes
/// only when the state does; the buttons are handled by one delegated click listener.
fn status_html(w: &World, client_id: &str) -> String {
    // Rows name consumers by their scenario name (unique, unlike the clientId).
    let Some(c) = w.consumers.iter().find(|c| *c.name == *client_id) else { return String::new() };
    let queues = c.pqs.keys().filter(|q| !is_system_topic(&q.topic)).count();
    let (cls, label) = if c.running {
        ("on", format!("running · {queues} q"))
    } else if c.start_error.is_some() {
        ("off", "start failed".to_string())
    } else if !c.incarnation.is_initial() && c.crashed {
        ("off", "crashed".to_string())
    } else if !c.incarnation.is_initial() {
        ("off", "stopped".to_string())
    } else {
        ("off", "not started".to_string())
    };
    let dis = |d: bool| if d { " disabled" } else { "" };
    let mut h = format!(
        "<div class=\"row-head\"><span class=\"cid\">{id}</span><span class=\"badge {cls}\" data-testid=\"consumer-state\" \
         data-running=\"{r}\">{label}</span></div><div class=\"lifecycle\">\
         <button class=\"small-btn\" data-testid=\"consumer-start\" data-action=\"start\" aria-label=\"{start} {id}\" \
         title=\"start() now (a restart after stop or crash)\"{d1}>{start}</button>\
         <button class=\"small-btn\" data-testid=\"consumer-stop\" data-action=\"stop\" aria-label=\"stop {id}\" \
         title=\"shutdown(): persist offsets, unregister (the broker notifies the group)\"{d2}>stop</button>\
         <button class=\"small-btn danger\" data-testid=\"consumer-crash\" data-action=\"crash\" aria-label=\"crash {id}\" \
         title=\"The process dies: no unregister; the broker forgets the channel after 120 s\"{d2}>crash</button></div>",
        id = esc(client_id),
        r = c.running,
        d1 = dis(c.running),
        d2 = dis(!c.running),
        start = if !c.incarnation.is_initial() || c.start_error.is_some() { "restart" } else { "start" },
    );
    if let Some(e) = &c.start_error {
        h.push_str(&format!("<div class=\"inline-error\" data-testid=\"start-error\" role=\"alert\">{}</div>", esc(e)));
    }
    h
}

/// The `data-action` of the button an event came from (delegated listeners).
fn action_of(ev: &leptos::ev::MouseEvent) -> Option<String> {
    use leptos::wasm_bindgen::JsCast;
    let el = ev.target()?.dyn_into::<web_sys::Element>().ok()?.closest("button[data-action]").ok()??;
    el.get_attribute("data-action")
}

#[component]
fn ConsumerRow(row: Row) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = use_context::<RwSignal<Option<Pending>>>();
    let cid = row.client_id.clone();
    let head = Memo::new(move |_| sim.read_as::<World, _>(|w| status_html(w, &cid)).unwrap_or_default());
    let id = row.client_id.clone();
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let client_id = id.clone();
        let (a, what) = match action_of(&ev).as_deref() {
            Some("start") => (Action::StartConsumer { consumer: client_id }, "start"),
            Some("stop") => (Action::StopConsumer { consumer: client_id }, "stop"),
            Some("crash") => (Action::CrashConsumer { consumer: client_id }, "crash"),
            _ => return,
        };
        let at = sim.peek_as::<World, _>(|w| w.now).unwrap_or(0);
        enter(sim, a);
        if let Some(p) = pending {
            p.set(Some(Pending::Lifecycle { client: id.clone(), what, at }));
        }
    };
    let n_subs = row.subs.len();
    let subs =
        row.subs.iter().map(|s| view! { <SubscriptionInput client_id=row.client_id.clone() spec=s.clone() /> }).collect_view();
    view! {
        <li class="consumer-row" data-testid="consumer-row" data-client-id=row.client_id.clone()>
            <div class="status" on:click=on_click inner_html=move || head.get()></div>
            {if n_subs > 4 {
                view! {
                    <details class="subs">
                        <summary>{format!("{n_subs} subscriptions")}</summary>
                        {subs}
                    </details>
                }
                    .into_any()
            } else {
                subs.into_any()
            }}
        </li>
    }
}

fn next_client_id(w: &World) -> Option<String> {
    ('A'..='Z').map(|c| format!("Consumer{c}")).find(|id| !w.consumers.iter().any(|c| *c.client_id == **id || *c.name == **id))
}

const STRATEGIES: [&str; 3] = ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"];

fn strategy_options(current: &str) -> String {
    let mut h = String::new();
    for s in STRATEGIES {
        h.push_str(&format!("<option value=\"{s}\"{}>{s}</option>", if s == current { " selected" } else { "" }));
    }
    if !STRATEGIES.contains(&current) {
        h.push_str(&format!("<option value=\"{c}\" selected disabled>{c}</option>", c = esc(current)));
    }
    h
}

/// One consumer group: message model, strategy select, its consumers and an add button.
#[component]
fn GroupBlock(group: String) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = use_context::<RwSignal<Option<Pending>>>();
    let g = group.clone();
    let info = Memo::new(move |_| {
        sim.read_as::<World, _>(|w| {
            let members: Vec<_> = w.consumers.iter().filter(|c| *c.group == *g).collect();
            let model = members.first().map(|c| c.model.name()).unwrap_or("?");
            let strategy = members.first().map(|c| c.strategy_name).unwrap_or("AVG");
            let rows: Vec<Row> = members
                .iter()
                .map(|c| Row { client_id: c.name.to_string(), group: c.group.to_string(), subs: c.spec.subscriptions.clone() })
                .collect();
            (model, strategy_options(strategy), rows)
        })
        .unwrap_or(("?", String::new(), Vec::new()))
    });
    let add_error = RwSignal::new(None::<String>);
    let g_add = group.clone();
    let add = move |_| {
        let plan = sim
            .peek_as::<World, _>(|w| {
                let first = w.consumers.iter().find(|c| *c.group == *g_add)?;
                let id = next_client_id(w)?;
                let mut spec = first.spec.clone();
                spec.name = id.clone();
                spec.client_id = id;
                spec.start_at = Some(w.now);
                Some(spec)
            })
            .flatten();
        match plan {
            Some(consumer) => {
                add_error.set(None);
                enter(sim, Action::AddConsumer { group: g_add.clone(), consumer });
            }
            None => add_error.set(Some("No free client id (ConsumerA–Z are taken).".into())),
        }
    };
    let g_set = group.clone();
    let set_strategy = move |ev: leptos::ev::Event| {
        let allocation = match event_target_value(&ev).as_str() {
            "AVG" => AllocationSpec::Avg,
            "AVG_BY_CIRCLE" => AllocationSpec::AvgByCircle,
            "CONSISTENT_HASH" => AllocationSpec::ConsistentHash { virtual_nodes: 10 },
            _ => return,
        };
        let at = sim.peek_as::<World, _>(|w| w.now).unwrap_or(0);
        let name = allocation.name().to_string();
        enter(sim, Action::SetAllocation { group: g_set.clone(), allocation });
        if let Some(p) = pending {
            p.set(Some(Pending::Strategy { group: g_set.clone(), name, at }));
        }
    };
    view! {
        <section class="group" data-testid="group" data-group=group.clone()>
            <div class="row-head">
                <span class="gname" title="Consumer group">{group.clone()}</span>
                <span class="badge model" data-testid="message-model">{move || info.with(|i| i.0)}</span>
            </div>
            <label class="field strategy">
                <span>"Strategy"</span>
                <select
                    data-testid="strategy-select"
                    data-group=group.clone()
                    on:change=set_strategy
                    inner_html=move || info.with(|i| i.1.clone())
                ></select>
            </label>
            <ul class="consumers">
                <For
                    each=move || info.with(|i| i.2.clone())
                    key=|r| (r.client_id.clone(), format!("{:?}", r.subs))
                    let:row
                >
                    <ConsumerRow row=row />
                </For>
            </ul>
            <button data-testid="add-consumer" data-group=group.clone() class="wide" on:click=add>
                "+ Add consumer"
            </button>
            {move || add_error.get().map(|e| view! { <div class="inline-error">{e}</div> })}
        </section>
    }
}

/// Topics with their queue counts per broker and an editable count (one delegated listener).
fn topics_html(w: &World, topics: &[String]) -> String {
    let mut h = String::new();
    for t in topics {
        let counts: Vec<(String, u32, u32)> =
            w.brokers.iter().filter_map(|b| b.topics.get(t).map(|&(r, wq)| (b.name.to_string(), r, wq))).collect();
        let detail = counts
            .iter()
            .map(|(b, r, w)| if r == w { format!("{b}: {r}") } else { format!("{b}: r{r}/w{w}") })
            .collect::<Vec<_>>()
            .join(", ");
        let v = counts.first().map(|x| x.2).unwrap_or(0);
        h.push_str(&format!(
            "<li class=\"topic-row\" data-testid=\"topic-row\" data-topic=\"{t}\"><div class=\"row-head\">\
             <span class=\"tname\" title=\"{t}\">{t}</span><input type=\"number\" min=\"1\" max=\"{MAX_UI_QUEUES}\" step=\"1\" \
             class=\"num-input\" data-testid=\"topic-queues\" data-topic=\"{t}\" aria-label=\"queue count of {t}\" value=\"{v}\" \
             title=\"Queue count (read = write) on every broker hosting the topic\"></div>\
             <div class=\"muted small\">{d}</div></li>",
            t = esc(t),
            d = esc(&detail),
        ));
    }
    h
}

/// One send form per producer; the fields are read when "Send" is clicked.
fn producers_html(producers: &[String], topics: &[String]) -> String {
    let opts: String = topics.iter().map(|t| format!("<option value=\"{t}\">{t}</option>", t = esc(t))).collect();
    let mut h = String::new();
    for p in producers {
        h.push_str(&format!(
            "<li class=\"producer-row\" data-testid=\"producer-row\" data-producer=\"{p}\"><div class=\"row-head\">\
             <span class=\"cid\">{p}</span></div><div class=\"send-form\">\
             <label class=\"span2\"><span>topic</span><select data-testid=\"send-topic\">{opts}</select></label>\
             <label><span>tag</span><input type=\"text\" data-testid=\"send-tag\" spellcheck=\"false\" value=\"TagA\"></label>\
             <label><span>keys</span><input type=\"text\" data-testid=\"send-keys\" spellcheck=\"false\" value=\"\"></label>\
             <label class=\"span2\"><span>properties</span><input type=\"text\" data-testid=\"send-properties\" spellcheck=\"false\" placeholder=\"a=5, region=eu\" value=\"\"></label>\
             <label><span>count</span><input type=\"text\" inputmode=\"numeric\" data-testid=\"send-count\" value=\"10\"></label>\
             <label><span>every ms</span><input type=\"text\" inputmode=\"numeric\" data-testid=\"send-interval\" value=\"100\"></label>\
             </div><button class=\"wide\" data-testid=\"send-button\" data-action=\"send\">Send from now</button></li>",
            p = esc(p),
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

/// The raw text of one producer's send form.
struct SendForm {
    topic: String,
    tag: String,
    keys: String,
    properties: String,
    count: String,
    interval: String,
}

impl SendForm {
    fn read(row: &web_sys::Element) -> SendForm {
        SendForm {
            topic: field(row, "send-topic"),
            tag: field(row, "send-tag"),
            keys: field(row, "send-keys"),
            properties: field(row, "send-properties"),
            count: field(row, "send-count"),
            interval: field(row, "send-interval"),
        }
    }
}

/// Validates a send form; `Err` lists every problem.
fn parse_send(at: u64, producer: &str, form: SendForm) -> Result<SendSpec, String> {
    let SendForm { topic, tag, keys, properties, count, interval } = form;
    let (tag, keys) = (tag.as_str(), keys.as_str());
    let mut problems = Vec::new();
    let n = match count.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_UI_SEND_COUNT).contains(&n) => n,
        _ => {
            problems.push(format!("count must be a whole number from 1 to {MAX_UI_SEND_COUNT}"));
            0
        }
    };
    let iv = match interval.trim().parse::<u64>() {
        Ok(v) if v <= MAX_UI_INTERVAL_MS => v,
        _ => {
            problems.push(format!("interval must be a whole number of ms from 0 to {MAX_UI_INTERVAL_MS}"));
            0
        }
    };
    if topic.is_empty() {
        problems.push("pick a topic".into());
    }
    let properties = mqviz_rocketmq::scenario::properties::parse_properties(&properties).unwrap_or_else(|e| {
        problems.push(e);
        Default::default()
    });
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let (tag, keys) = (tag.trim(), keys.trim());
    Ok(SendSpec {
        at,
        body: format!("{producer} {topic} {tag} {{i}}"),
        topic,
        tag: (!tag.is_empty()).then(|| tag.to_string()),
        keys: (!keys.is_empty()).then(|| keys.to_string()),
        properties,
        count: n,
        interval_ms: iv,
        times: Vec::new(),
    })
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
        pending.set(None);
    });
    let feedback = Memo::new(move |_| pending.with(|p| p.as_ref().and_then(|p| sim.read_as::<World, _>(|w| pending_text(w, p)))));
    // Structure (which topics / producers / groups exist) changes only on load or add-consumer.
    let topics = Memo::new(move |_| {
        sim.read_as::<World, _>(|w| {
            let mut ts: Vec<String> = w.scenario.topics.iter().map(|t| t.name.clone()).collect();
            for b in &w.brokers {
                for t in b.topics.keys() {
                    if !is_system_topic(t) && !ts.contains(t) {
                        ts.push(t.clone());
                    }
                }
            }
            ts
        })
        .unwrap_or_default()
    });
    let topics_view = Memo::new(move |_| topics.with(|ts| sim.read_as::<World, _>(|w| topics_html(w, ts))).unwrap_or_default());
    let producers = Memo::new(move |_| {
        let ps =
            sim.read_as::<World, _>(|w| w.producers.iter().map(|p| p.id.to_string()).collect::<Vec<_>>()).unwrap_or_default();
        topics.with(|ts| producers_html(&ps, ts))
    });
    let groups = Memo::new(move |_| sim.read_as::<World, _>(group_names).unwrap_or_default());
    let n_topics = move || topics.with(Vec::len);
    let topic_error = RwSignal::new(None::<String>);
    let on_queues = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        let Some(topic) = input.get_attribute("data-topic") else { return };
        match input.value().trim().parse::<u32>() {
            Ok(n) if (1..=MAX_UI_QUEUES).contains(&n) => {
                let _ = input.class_list().remove_1("invalid");
                let _ = input.set_attribute("aria-invalid", "false");
                topic_error.set(None);
                let cur = sim.peek_as::<World, _>(|w| w.brokers.iter().find_map(|b| b.topics.get(&topic).map(|x| x.1))).flatten();
                if cur != Some(n) {
                    let at = sim.peek_as::<World, _>(|w| w.now).unwrap_or(0);
                    enter(sim, Action::SetQueueCount { topic: topic.clone(), queues: n });
                    pending.set(Some(Pending::Queues { topic, queues: n, at }));
                }
            }
            _ => {
                let _ = input.class_list().add_1("invalid");
                let _ = input.set_attribute("aria-invalid", "true");
                topic_error.set(Some(format!("{topic}: queue count must be a whole number from 1 to {MAX_UI_QUEUES}")));
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
        let at = sim.peek_as::<World, _>(|w| w.now).unwrap_or(0);
        let r = parse_send(at, &producer, SendForm::read(&row));
        match r {
            Ok(send) => {
                send_error.set(None);
                last_send.set(Some(format!(
                    "{producer}: {} × {}{} every {} ms from now",
                    send.count,
                    send.topic,
                    send.tag.as_deref().map(|t| format!(":{t}")).unwrap_or_default(),
                    send.interval_ms
                )));
                enter(sim, Action::Produce { producer, send });
            }
            Err(e) => send_error.set(Some(format!("{producer}: {e}"))),
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
        <h2>{move || format!("Topics ({})", n_topics())}</h2>
        <ul class:scroll={move || n_topics() > 6} class="topics" on:change=on_queues inner_html=move || topics_view.get()></ul>
        {move || topic_error.get().map(|e| view! { <div class="inline-error" data-testid="topic-error" role="alert">{e}</div> })}
        <h2>"Producers"</h2>
        <ul class="producers" on:click=on_send inner_html=move || producers.get()></ul>
        {move || send_error.get().map(|e| view! { <div class="inline-error" data-testid="send-error" role="alert">{e}</div> })}
        {move || last_send.get().map(|m| view! { <div class="muted small" data-testid="send-last">{m}</div> })}
    }
}
