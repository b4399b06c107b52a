//! Pulsar on the stage, under the topology canvas: the segment DAG of a scalable topic, the
//! Key_Shared hash ring, and every subscription's cursor as a strip. Each follows the playhead
//! (the model is read on `ui_version`), and each canvas carries what it drew as JSON for the
//! browser tests (`data-dag`, `data-ring`).

use leptos::html::Canvas;
use leptos::prelude::*;

use super::cursor_strip::{strips, CursorStrip};
use super::dag::{self, SegmentDag};
use super::ring::{self, HashRing};
use super::{dag_canvas, ring_canvas};
use crate::ui::state::{esc, fmt_ms, Sim};
use mqviz_pulsar::subscription::SubscriptionType;
use mqviz_pulsar::world::World;

/// Strips shown on the stage (the rest are counted).
const STRIPS_SHOWN: usize = 12;
/// The ring's largest size, CSS pixels.
const RING_MAX: f64 = 280.0;

/// A counter bumped on window resizes, so canvases redraw at their new width. The listener goes
/// with the figure (presets come and go).
fn resize_counter() -> RwSignal<u32> {
    let resized = RwSignal::new(0u32);
    let handle = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n = n.wrapping_add(1)));
    on_cleanup(move || handle.remove());
    resized
}

/// A picker between several pictures of the same kind (several subscriptions or partitions).
fn picker(testid: &'static str, label: &'static str, options: Memo<Vec<String>>, pick: RwSignal<usize>) -> impl IntoView {
    view! {
        <Show when=move || options.with(|o| o.len() > 1)>
            <label class="pulsar-pick">
                <span>{label}</span>
                <select
                    data-testid=testid
                    aria-label=label
                    on:change=move |ev| pick.set(event_target_value(&ev).parse().unwrap_or(0))
                >
                    {move || {
                        options
                            .get()
                            .into_iter()
                            .enumerate()
                            .map(|(i, o)| view! { <option value=i.to_string() selected=move || pick.get() == i>{o}</option> })
                            .collect_view()
                    }}
                </select>
            </label>
        </Show>
    }
}

fn dag_caption(d: &SegmentDag) -> String {
    let poll = match (&d.subscription, d.next_poll) {
        (None, _) => " · no STREAM subscription yet, so nothing is withheld".to_string(),
        (Some(_), Some(at)) => format!(" · next drain poll at {}", fmt_ms(at)),
        (Some(_), None) => " · drain poller idle".to_string(),
    };
    let whose = d.subscription.as_ref().map(|s| format!(" as subscription {s} sees them")).unwrap_or_default();
    format!("Segments of {}{whose} · layout epoch {}{poll}", d.topic, d.epoch)
}

fn dag_words(d: &SegmentDag) -> String {
    let nodes: Vec<String> = d
        .nodes
        .iter()
        .map(|n| {
            let detail = n.detail_line();
            if detail.is_empty() {
                format!("{} {}", n.title(), n.state_line())
            } else {
                format!("{} {} {detail}", n.title(), n.state_line())
            }
        })
        .collect();
    format!("Segment DAG of {}: {}.", d.topic, nodes.join("; "))
}

/// The assignment in words and the upstream gaps, as HTML.
fn dag_notes_html(d: &SegmentDag) -> String {
    let mut h = String::new();
    if d.assignment.is_empty() && d.subscription.is_some() {
        h.push_str("<p class=\"dag-assignment\" data-testid=\"dag-assignment\">No consumer is registered.</p>");
    }
    for (c, segs) in &d.assignment {
        let list =
            if segs.is_empty() { "nothing".to_string() } else { segs.iter().map(u64::to_string).collect::<Vec<_>>().join(", ") };
        h.push_str(&format!(
            "<p class=\"dag-assignment\" data-testid=\"dag-assignment\" data-consumer=\"{c}\"><strong>{c}</strong> reads {list} \
             <span class=\"muted\">(computeAssignment: sorted by hash range, dealt round robin)</span></p>",
            c = esc(c)
        ));
    }
    let gaps: Vec<String> = d
        .nodes
        .iter()
        .filter_map(|n| n.gap.as_ref().map(|g| format!("{}: segment {} is {}", g.issue, n.id, g.text)))
        .chain(d.notes.iter().map(|g| format!("{}: {}", g.issue, g.text)))
        .collect();
    if !gaps.is_empty() {
        h.push_str("<ul class=\"dag-gaps\" data-testid=\"dag-gaps\">");
        for g in gaps {
            h.push_str(&format!("<li>⚠ upstream gap apache/pulsar{}</li>", esc(&g)));
        }
        h.push_str("</ul>");
    }
    h
}

#[component]
fn DagFigure() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let dags = Memo::new(move |_| sim.read_as::<World, _>(dag::dags).unwrap_or_default());
    let pick = RwSignal::new(0usize);
    let shown = Memo::new(move |_| dags.with(|d| d.get(pick.get()).or(d.first()).cloned()));
    let labels = Memo::new(move |_| dags.with(|d| d.iter().map(SegmentDag::label).collect::<Vec<_>>()));
    let canvas: NodeRef<Canvas> = NodeRef::new();
    let resized = resize_counter();
    Effect::new(move |_| {
        resized.track();
        let Some(d) = shown.get() else { return };
        let Some(el) = canvas.get() else { return };
        request_animation_frame(move || {
            dag_canvas::draw(&el, &d);
            let _ = el.set_attribute("data-dag", &dag::describe(&d));
            let _ = el.set_attribute("aria-label", &dag_words(&d));
        });
    });
    view! {
        <figure class="pulsar-fig dag-fig" data-testid="pulsar-dag">
            <figcaption>{move || shown.with(|d| d.as_ref().map(dag_caption).unwrap_or_default())}</figcaption>
            {picker("dag-pick", "Subscription", labels, pick)}
            <canvas class="dag-canvas" data-testid="dag-canvas" node_ref=canvas role="img"></canvas>
            <div class="dag-notes" inner_html=move || shown.with(|d| d.as_ref().map(dag_notes_html).unwrap_or_default())></div>
            <ul class="pulsar-key" aria-label="Segment states">
                <li><span class="sw active"></span>"active"</li>
                <li><span class="sw withheld"></span>"withheld from STREAM consumers (a parent not drained)"</li>
                <li><span class="sw sealed"></span>"sealed, backlog left"</li>
                <li><span class="sw drained"></span>"sealed and drained"</li>
                <li><span class="sw gap">"⚠#"</span>"upstream gap"</li>
            </ul>
        </figure>
    }
}

fn ring_legend_html(r: &HashRing) -> String {
    let mut h = format!("<p class=\"muted small\">{}</p><ol class=\"ring-tracks\" data-testid=\"ring-tracks\">", esc(&r.mode));
    for t in r.tracks.iter() {
        let blocked = if t.blocked { " <span class=\"badge blocked\">BLOCKED</span>" } else { "" };
        h.push_str(&format!(
            "<li data-consumer=\"{c}\" data-colour=\"{colour}\"><span class=\"track-sw\" style=\"background: {colour}\" \
             aria-hidden=\"true\"></span><strong style=\"color: {colour}\">{c}</strong> {ranges} ranges, {hashes} hashes · \
             permits {p} · unacked {u}{blocked}</li>",
            c = esc(&t.consumer),
            colour = t.colour,
            ranges = t.ranges.len(),
            hashes = t.hashes,
            p = t.permits,
            u = t.unacked,
        ));
    }
    h.push_str("</ol>");
    if r.tracks.len() > ring_canvas::TRACKS_DRAWN {
        h.push_str(&format!(
            "<p class=\"muted small\">Tracks of the first {} consumers are drawn.</p>",
            ring_canvas::TRACKS_DRAWN
        ));
    }
    if r.draining.is_empty() {
        let why = if r.draining_enabled { "no hash is draining" } else { "draining hashes do not apply to this selector" };
        h.push_str(&format!("<p class=\"small\" data-testid=\"ring-draining-none\">{why}.</p>"));
    } else {
        h.push_str("<ul class=\"ring-draining\" data-testid=\"ring-draining\">");
        for d in &r.draining {
            let key =
                d.key.as_deref().map(|k| format!("{} (hash {})", esc(k), d.hash)).unwrap_or_else(|| format!("hash {}", d.hash));
            let waits = d.waiting.as_deref().map(|c| format!("; {} waits for it", esc(c))).unwrap_or_default();
            h.push_str(&format!(
                "<li>draining: <strong>{key}</strong> stays with {at} until it acks its {n} pending message{s}{waits}</li>",
                at = esc(&d.at),
                n = d.pending,
                s = if d.pending == 1 { "" } else { "s" },
            ));
        }
        h.push_str("</ul>");
    }
    if r.more_keys {
        h.push_str(&format!("<p class=\"muted small\">The first {} keys are placed on the ring.</p>", ring::KEYS_SHOWN));
    }
    h
}

#[component]
fn RingFigure() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let rings = Memo::new(move |_| sim.read_as::<World, _>(ring::rings).unwrap_or_default());
    let pick = RwSignal::new(0usize);
    let shown = Memo::new(move |_| rings.with(|r| r.get(pick.get()).or(r.first()).cloned()));
    let labels = Memo::new(move |_| rings.with(|r| r.iter().map(|x| x.label.clone()).collect::<Vec<_>>()));
    let canvas: NodeRef<Canvas> = NodeRef::new();
    let resized = resize_counter();
    Effect::new(move |_| {
        resized.track();
        let Some(r) = shown.get() else { return };
        let Some(el) = canvas.get() else { return };
        request_animation_frame(move || {
            ring_canvas::draw(&el, &r, RING_MAX);
            let _ = el.set_attribute("data-ring", &ring::describe(&r));
            let owners: Vec<String> = r.tracks.iter().map(|t| format!("track {}", t.consumer)).collect();
            let _ = el.set_attribute(
                "aria-label",
                &format!(
                    "Hash ring of {}: one track per consumer ({}), {} hashes draining",
                    r.label,
                    owners.join(", "),
                    r.draining.len()
                ),
            );
        });
    });
    view! {
        <figure class="pulsar-fig ring-fig" data-testid="pulsar-ring">
            <figcaption>
                {move || {
                    shown
                        .with(|r| r.as_ref().map(|r| format!("Key_Shared hash ring of {} (0–65535, clockwise from the top)", r.label)))
                        .unwrap_or_else(|| "Key_Shared hash ring: no consumer connected yet".into())
                }}
            </figcaption>
            {picker("ring-pick", "Ring", labels, pick)}
            <div class="ring-body">
                <canvas class="ring-canvas" data-testid="ring-canvas" node_ref=canvas role="img"></canvas>
                <div class="ring-legend" inner_html=move || shown.with(|r| r.as_ref().map(ring_legend_html).unwrap_or_default())></div>
            </div>
            <ul class="pulsar-key" aria-label="Ring marks">
                <li><span class="sw owned"></span>"hashes a consumer owns (its numbered track, in its colour)"</li>
                <li><span class="sw key-dot"></span>"a key of the run, in its colour on the canvas"</li>
                <li><span class="sw drain-at"></span>"draining (ink, dashed) at the previous owner"</li>
                <li><span class="sw drain-wait"></span>"the new owner waits"</li>
            </ul>
        </figure>
    }
}

fn strips_html(list: &[CursorStrip]) -> String {
    let mut h = String::new();
    for s in list.iter().take(STRIPS_SHOWN) {
        h.push_str(&format!(
            "<li class=\"cursor-row\" data-testid=\"cursor-strip\" data-subscription=\"{sub}\" data-partition=\"{p}\" \
             data-mark-delete=\"{md}\" data-backlog=\"{b}\" data-holes=\"{holes}\"><span class=\"cursor-name\">{sub} · {p}</span>{svg}\
             <span class=\"cursor-words\">{words}</span></li>",
            sub = esc(&s.subscription),
            p = esc(&s.partition),
            md = s.mark_delete,
            b = s.backlog,
            holes = s.acked_above.len(),
            svg = s.svg(),
            words = esc(&s.sentence()),
        ));
    }
    if list.len() > STRIPS_SHOWN {
        h.push_str(&format!("<li class=\"muted small\">and {} more</li>", list.len() - STRIPS_SHOWN));
    }
    h
}

#[component]
fn CursorFigure() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let list = Memo::new(move |_| sim.read_as::<World, _>(strips).unwrap_or_default());
    view! {
        <figure class="pulsar-fig cursor-fig" data-testid="pulsar-cursors">
            <figcaption>"Cursors: each subscription's entries on each partition or segment"</figcaption>
            <ul class="cursor-strips" inner_html=move || list.with(|l| strips_html(l))></ul>
            <ul class="pulsar-key" aria-label="Cursor strip">
                <li><span class="sw c-acked"></span>"acked"</li>
                <li><span class="sw c-sent"></span>"sent, not acked"</li>
                <li><span class="sw c-unread"></span>"not read yet"</li>
                <li><span class="sw c-md"></span>"markDelete"</li>
                <li><span class="sw c-read"></span>"next read"</li>
            </ul>
        </figure>
    }
}

/// What the loaded scenario has: scalable topics, Key_Shared consumers, subscriptions.
fn contents(w: &World) -> (bool, bool, bool) {
    let scalable = w.topics.iter().any(|t| t.scalable.is_some());
    let key_shared = w.consumers.iter().any(|c| c.spec.subscription_type() == SubscriptionType::KeyShared);
    (scalable, key_shared, !w.groups.is_empty() || !w.consumers.is_empty())
}

/// The stage's Pulsar figures.
#[component]
pub fn Stage() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let has = Memo::new(move |_| sim.read_as::<World, _>(contents).unwrap_or_default());
    view! {
        <section class="pulsar-stage" data-testid="pulsar-stage" aria-label="Pulsar: segments, hash ring and cursors">
            <Show when=move || has.get().0>
                <DagFigure />
            </Show>
            <Show when=move || has.get().1>
                <RingFigure />
            </Show>
            <Show when=move || has.get().2>
                <CursorFigure />
            </Show>
        </section>
    }
}
