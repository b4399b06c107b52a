//! The editor's forms for topics and producers: split or merge a segment of a scalable topic, and
//! send messages from a producer. Numbers are checked here (an inline error, nothing entered);
//! the layout rules (split an active segment, merge adjacent active ones) are the model's, whose
//! refusal is shown the same way.

use leptos::prelude::*;

use super::editor::{enter, now, refused};
use super::feedback::Pending;
use crate::ui::state::Sim;
use mqviz_pulsar::scenario::{Action, SendSpec};
use mqviz_pulsar::world::World;

const MAX_SEND_COUNT: u32 = 100_000;
const MAX_INTERVAL_MS: u64 = 600_000;

fn segment_id(text: &str, what: &str) -> Result<u64, String> {
    text.trim().parse::<u64>().map_err(|_| format!("{what} must be a segment id (a whole number); nothing changed."))
}

/// The active and sealed segments of a scalable topic, in words.
fn segments_text(w: &World, topic: &str) -> (String, String) {
    let Some(s) = w.topic_index(topic).and_then(|t| w.topics[t].scalable.as_ref()) else { return Default::default() };
    let list = |active: bool| {
        s.layout
            .all_segments()
            .filter(|x| x.is_active() == active)
            .map(|x| x.segment_id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    (list(true), list(false))
}

#[component]
pub fn SegmentForm(topic: String) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = expect_context::<RwSignal<Option<Pending>>>();
    let t = topic.clone();
    let lists = Memo::new(move |_| sim.read_as::<World, _>(|w| segments_text(w, &t)).unwrap_or_default());
    let split_text = RwSignal::new(String::new());
    let (merge_a, merge_b) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    let error = RwSignal::new(None::<String>);
    let t_split = topic.clone();
    let split = move |_| {
        let segment = match segment_id(&split_text.get_untracked(), "The segment to split") {
            Ok(s) => s,
            Err(e) => return error.set(Some(e)),
        };
        let at = now(sim);
        match enter(sim, &Action::SplitSegment { topic: t_split.clone(), segment }) {
            Ok(()) => {
                error.set(None);
                split_text.set(String::new());
                pending.set(Some(Pending::Split { topic: t_split.clone(), segment, at }));
            }
            Err(e) => error.set(Some(refused(&e))),
        }
    };
    let t_merge = topic.clone();
    let merge = move |_| {
        let ids = segment_id(&merge_a.get_untracked(), "The first segment to merge")
            .and_then(|a| segment_id(&merge_b.get_untracked(), "The second segment to merge").map(|b| (a, b)));
        let segments = match ids {
            Ok(x) => x,
            Err(e) => return error.set(Some(e)),
        };
        let at = now(sim);
        match enter(sim, &Action::MergeSegments { topic: t_merge.clone(), segments }) {
            Ok(()) => {
                error.set(None);
                merge_a.set(String::new());
                merge_b.set(String::new());
                pending.set(Some(Pending::Merge { topic: t_merge.clone(), segments, at }));
            }
            Err(e) => error.set(Some(refused(&e))),
        }
    };
    let input = |sig: RwSignal<String>, testid: &'static str, label: String| {
        view! {
            <input
                type="text"
                inputmode="numeric"
                class="num-input"
                data-testid=testid
                aria-label=label
                class:invalid=move || error.with(Option::is_some)
                prop:value=move || sig.get()
                on:input=move |ev| sig.set(event_target_value(&ev))
            />
        }
    };
    view! {
        <section class="group segment-form" data-testid="segment-form" data-topic=topic.clone()>
            <div class="row-head">
                <span class="gname">{topic.clone()}</span>
            </div>
            <div class="muted small" data-testid="segment-lists">
                {move || lists.with(|(a, s)| format!("active: {a}{}", if s.is_empty() { String::new() } else { format!(" · sealed: {s}") }))}
            </div>
            <div class="inline-form">
                <span>"split"</span>
                {input(split_text, "split-segment", format!("segment of {topic} to split"))}
                <button class="small-btn" data-testid="split-button" aria-label=format!("split the segment of {topic}") on:click=split>
                    "Split"
                </button>
            </div>
            <div class="inline-form">
                <span>"merge"</span>
                {input(merge_a, "merge-a", format!("first segment of {topic} to merge"))}
                <span>"+"</span>
                {input(merge_b, "merge-b", format!("second segment of {topic} to merge"))}
                <button class="small-btn" data-testid="merge-button" aria-label=format!("merge two segments of {topic}") on:click=merge>
                    "Merge"
                </button>
            </div>
            {move || error.get().map(|e| view! { <div class="inline-error" data-testid="segment-error" role="alert">{e}</div> })}
        </section>
    }
}

/// The raw text of a producer's send form.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SendForm {
    pub count: String,
    pub interval: String,
    pub key: String,
}

/// Validates a send form; `Err` lists every problem.
pub fn parse_send(at: u64, producer: &str, form: &SendForm) -> Result<SendSpec, String> {
    let mut problems = Vec::new();
    let count = match form.count.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_SEND_COUNT).contains(&n) => n,
        _ => {
            problems.push(format!("count must be a whole number from 1 to {MAX_SEND_COUNT}"));
            0
        }
    };
    let interval_ms = match form.interval.trim().parse::<u64>() {
        Ok(v) if v <= MAX_INTERVAL_MS => v,
        _ => {
            problems.push(format!("the interval must be a whole number of ms from 0 to {MAX_INTERVAL_MS}"));
            0
        }
    };
    if !problems.is_empty() {
        return Err(format!("{}; nothing sent.", problems.join("; ")));
    }
    let key = form.key.trim();
    Ok(SendSpec {
        at,
        count,
        interval_ms,
        burst: 1,
        times: Vec::new(),
        key: (!key.is_empty()).then(|| key.to_string()),
        ordering_key: None,
        body: format!("{producer} (edit) {{i}}"),
    })
}

#[component]
pub fn ProduceForm(producer: String) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let pending = expect_context::<RwSignal<Option<Pending>>>();
    let p = producer.clone();
    // Start from the producer's own key template, so new messages look like the scenario's.
    let key0 = sim
        .peek_as::<World, _>(|w| {
            w.producers.iter().find(|x| *x.name == *p).and_then(|x| x.spec.sends.iter().find_map(|s| s.key.clone()))
        })
        .flatten()
        .unwrap_or_default();
    let form = RwSignal::new(SendForm { count: "10".into(), interval: "100".into(), key: key0 });
    let error = RwSignal::new(None::<String>);
    let name = producer.clone();
    let send = move |_| {
        let at = now(sim);
        let spec = match parse_send(at, &name, &form.get_untracked()) {
            Ok(s) => s,
            Err(e) => return error.set(Some(format!("{name}: {e}"))),
        };
        let (count, interval_ms) = (spec.count, spec.interval_ms);
        match enter(sim, &Action::Produce { producer: name.clone(), send: spec }) {
            Ok(()) => {
                error.set(None);
                pending.set(Some(Pending::Produce { producer: name.clone(), count, interval_ms, at }));
            }
            Err(e) => error.set(Some(refused(&e))),
        }
    };
    let field = move |label: &'static str, testid: &'static str, get: fn(&SendForm) -> String, set: fn(&mut SendForm, String)| {
        view! {
            <label>
                <span>{label}</span>
                <input
                    type="text"
                    data-testid=testid
                    spellcheck="false"
                    prop:value=move || form.with(get)
                    on:input=move |ev| form.update(|f| set(f, event_target_value(&ev)))
                />
            </label>
        }
    };
    view! {
        <li class="producer-row" data-testid="producer-row" data-producer=producer.clone()>
            <div class="row-head">
                <span class="cid">{producer.clone()}</span>
            </div>
            <div class="send-form">
                {field("count", "send-count", |f| f.count.clone(), |f, v| f.count = v)}
                {field("every ms", "send-interval", |f| f.interval.clone(), |f, v| f.interval = v)}
                <div class="span2">{field("key ({i} = message number)", "send-key", |f| f.key.clone(), |f, v| f.key = v)}</div>
            </div>
            <button class="wide" data-testid="send-button" aria-label=format!("send from {producer}, from now") on:click=send>
                "Send from now"
            </button>
            {move || error.get().map(|e| view! { <div class="inline-error" data-testid="send-error" role="alert">{e}</div> })}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_forms_are_checked_before_anything_is_entered() {
        let ok = parse_send(5, "p", &SendForm { count: "3".into(), interval: "0".into(), key: "k-{i%2}".into() }).unwrap();
        assert_eq!((ok.at, ok.count, ok.key.as_deref()), (5, 3, Some("k-{i%2}")));
        let e = parse_send(5, "p", &SendForm { count: "many".into(), interval: "-1".into(), key: String::new() }).unwrap_err();
        assert!(e.contains("count must be") && e.contains("interval must be") && e.ends_with("nothing sent."), "{e}");
        assert!(segment_id("x", "The segment").is_err());
    }
}
