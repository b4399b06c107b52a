//! The top bar (preset, playback, speed, pacing, clock) and the timeline: a scrubber with the
//! story's chapter marks (sends, table overwrites, rebalances, stops, losses), each a button.

use leptos::prelude::*;

use super::share::edit_marks;
use super::state::{fmt_ms, SeekJob, Sim, Source};
use mqviz_app::presets::CATALOGUE;
use mqviz_app::story::Mark;
use mqviz_engine::decimal;
use mqviz_engine::Millis;
use mqviz_model::MomentKind;

fn speed_label(log: f64) -> String {
    let s = super::math::pow10(log);
    if s >= 1.0 {
        format!("{}×", decimal::trimmed(s, 1))
    } else {
        format!("1/{}×", decimal::fixed(1.0 / s, 0))
    }
}

/// The glyph of a chapter mark (shape, not colour, tells the kinds apart).
fn glyph(kind: MomentKind) -> &'static str {
    match kind {
        MomentKind::Send => "▲",
        MomentKind::Overwrite => "◆",
        MomentKind::Rebalance => "⇄",
        MomentKind::Stop => "■",
        MomentKind::Crash => "↯",
        MomentKind::Loss => "✕",
        MomentKind::DeadLetter => "☠",
    }
}

#[component]
pub fn TopBar(toggle_play: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let sim = expect_context::<Sim>();
    // The clock follows every frame (one text node).
    let sim_now = move || {
        sim.version.track();
        sim.peek(|m| m.now()).unwrap_or(0)
    };
    let until_ms = move || {
        sim.version.track();
        sim.until()
    };
    let confirm_reset = RwSignal::new(false);
    // Reset reloads what was loaded: the preset, or the own scenario without its edits.
    let reset = move || match sim.source.get_untracked() {
        Source::Preset(i) => sim.load(i),
        Source::Own { name } => {
            if let Some(v) = sim.scenario.get_value() {
                let _ = sim.load_value(v, &name);
            }
        }
    };
    let next_mark = move || {
        sim.version.track();
        sim.story_version.track();
        let now = sim.peek(|m| m.now()).unwrap_or(0);
        sim.story.with_value(|s| s.as_ref().and_then(|s| s.next_mark(now)).map(|m| (m.at, m.label())))
    };
    view! {
        <header class="topbar">
            // What the page is, for a first-time viewer: the name alone says nothing.
            <span class="brand">
                "mqviz"
                <span class="tagline" data-testid="tagline">"message-broker simulator"</span>
            </span>
            <label class="field">
                <span class="sr-only">"Scenario"</span>
                <select
                    data-testid="preset-select"
                    aria-label="Scenario preset"
                    // What is loaded, once it is: a Kafka or Pulsar preset loads after its code arrives.
                    data-loaded=move || match sim.source.get() {
                        Source::Preset(i) => CATALOGUE.get(i).map_or("", |p| p.file),
                        Source::Own { .. } => "own",
                    }
                    // Back to what is loaded when a choice could not be (its model's code failed
                    // to arrive): the error changes, the source does not.
                    prop:value=move || {
                        sim.load_error.track();
                        match sim.source.get() {
                            Source::Preset(i) => i.to_string(),
                            Source::Own { .. } => "own".to_string(),
                        }
                    }
                    on:change=move |ev| {
                        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                            // Another choice: the faulty link is no longer what is shown.
                            sim.link_error.set(None);
                            sim.load(i);
                        }
                    }
                >
                    {CATALOGUE
                        .iter()
                        .enumerate()
                        .map(|(i, p)| {
                            view! {
                                <option
                                    value=i.to_string()
                                    data-file=p.file
                                    selected=move || sim.source.get() == Source::Preset(i)
                                >
                                    {p.label}
                                </option>
                            }
                        })
                        .collect_view()}
                    {move || match sim.source.get() {
                        Source::Own { name } => {
                            Some(view! { <option value="own" selected data-testid="own-scenario">{format!("Your scenario: {name}")}</option> })
                        }
                        Source::Preset(_) => None,
                    }}
                </select>
            </label>
            <div class="buttons">
                {move || {
                    if sim.playing.get() {
                        view! {
                            <button data-testid="pause" class="primary" aria-keyshortcuts="Space" on:click=move |_| toggle_play()>
                                "❚❚ Pause"
                            </button>
                        }
                            .into_any()
                    } else {
                        view! {
                            <button
                                data-testid="play"
                                class="primary"
                                aria-keyshortcuts="Space"
                                title=move || if sim.at_end() { "The story has ended: play on past it" } else { "Play" }
                                on:click=move |_| toggle_play()
                            >
                                {move || if sim.at_end() { "▶ Play on" } else { "▶ Play" }}
                            </button>
                        }
                            .into_any()
                    }
                }}
                <button
                    data-testid="step-back"
                    title="Back to the previous instant (←): restores a checkpoint and replays"
                    aria-keyshortcuts="ArrowLeft"
                    disabled=move || sim.now() == 0
                    on:click=move |_| sim.step_back()
                >
                    "◂ Back"
                </button>
                <button
                    data-testid="step"
                    title="Run the next event (→)"
                    aria-keyshortcuts="ArrowRight"
                    on:click=move |_| {
                        sim.playing.set(false);
                        sim.step();
                    }
                >
                    "Step ▸"
                </button>
                <button
                    data-testid="next-moment"
                    aria-keyshortcuts="N"
                    title=move || match next_mark() {
                        Some((at, label)) => format!("Run to the next key moment (N): {label} at {}", fmt_ms(at)),
                        None => "No key moment ahead".to_string(),
                    }
                    disabled=move || next_mark().is_none()
                    on:click=move |_| sim.next_moment()
                >
                    "Next moment »"
                </button>
                <button
                    data-testid="replay"
                    title="Back to t=0 and play again, keeping every edit"
                    disabled=move || sim.now() == 0
                    on:click=move |_| {
                        sim.seek(0);
                        sim.playing.set(true);
                    }
                >
                    "↻ Replay"
                </button>
                <button
                    data-testid="undo"
                    title="Take back the latest edit (Ctrl+Z)"
                    aria-keyshortcuts="Control+Z"
                    disabled=move || !sim.can_undo()
                    on:click=move |_| sim.undo()
                >
                    "↶ Undo"
                </button>
                <button
                    data-testid="redo"
                    title="Enter the edit taken back again (Ctrl+Shift+Z)"
                    aria-keyshortcuts="Control+Shift+Z"
                    disabled=move || !sim.can_redo()
                    on:click=move |_| sim.redo()
                >
                    "↷ Redo"
                </button>
                {move || {
                    if confirm_reset.get() {
                        view! {
                            <span class="confirm" role="group" aria-label="Confirm reset">
                                <button data-testid="reset-confirm" class="btn-danger" on:click=move |_| {
                                    confirm_reset.set(false);
                                    reset();
                                }>{move || format!("Discard {} edits", sim.edit_count())}</button>
                                <button data-testid="reset-cancel" on:click=move |_| confirm_reset.set(false)>"Keep"</button>
                            </span>
                        }
                            .into_any()
                    } else {
                        view! {
                            <button
                                data-testid="reset"
                                title="Reload the scenario at t=0, without the edits"
                                on:click=move |_| {
                                    if sim.edit_count() > 0 {
                                        confirm_reset.set(true);
                                    } else {
                                        reset();
                                    }
                                }
                            >
                                "↺ Reset"
                            </button>
                        }
                            .into_any()
                    }
                }}
            </div>
            <label class="speed field">
                <span>"Speed"</span>
                <input
                    type="range"
                    data-testid="speed"
                    aria-label="Simulation speed (log scale)"
                    aria-valuetext=move || speed_label(sim.speed_log.get())
                    min="-2"
                    max="2"
                    step="0.1"
                    prop:value=move || decimal::trimmed(sim.speed_log.get(), 3)
                    on:input=move |ev| {
                        if let Some(v) = decimal::parse(&event_target_value(&ev)) {
                            sim.speed_log.set(decimal::clamp(v, -2.0, 2.0));
                        }
                    }
                />
                <output class="speed-label" data-testid="speed-label">
                    {move || speed_label(sim.speed_log.get())}
                    {move || {
                        sim.paced_log.get().map(|p| {
                            let why = if p < sim.speed_log.get_untracked() { "around a key moment" } else { "over an idle stretch" };
                            view! { <span class="paced" data-testid="pace-note">{format!(" · Pace: {} {why}", speed_label(p))}</span> }
                        })
                    }}
                </output>
            </label>
            <label class="field pacing" title="Slow down around key moments and skip stretches where nothing moves">
                <input
                    type="checkbox"
                    data-testid="pacing"
                    prop:checked=move || sim.pacing.get()
                    on:change=move |ev| sim.pacing.set(event_target_checked(&ev))
                />
                <span>"Pace"</span>
            </label>
            <span
                class="clock"
                data-testid="sim-time"
                role="timer"
                aria-live="off"
                data-ms=move || sim_now().to_string()
                data-until=move || until_ms().to_string()
                data-at-end=move || (sim_now() >= until_ms()).to_string()
                data-run=move || sim.run_id()
                data-ready=move || sim.ready()
            >
                {move || format!("t = {} / {}", fmt_ms(sim_now()), fmt_ms(until_ms()))}
            </span>
            {move || sim.seeking.get().map(|job| view! { <SeekProgress sim job /> })}
            <button class="help-btn" aria-label="Keyboard shortcuts" aria-keyshortcuts="?" on:click=move |_| sim.show_help.update(|h| *h = !*h)>
                "?"
            </button>
        </header>
    }
}

/// Marks drawn as one button when they would overlap, or when there are too many to read.
struct Cluster {
    at: Millis,
    kinds: Vec<String>,
    glyphs: String,
    labels: Vec<String>,
    /// The word under the mark: its most telling kind, with how many such moments it holds.
    word: String,
}

/// At most this many marks on the time bar: each gets a word under it.
const MAX_MARKS: usize = 12;

/// How telling a kind of moment is, for the word under a merged mark (higher first).
fn weight(kind: MomentKind) -> u8 {
    match kind {
        MomentKind::Loss => 5,
        MomentKind::DeadLetter => 4,
        MomentKind::Overwrite => 3,
        MomentKind::Stop | MomentKind::Crash => 2,
        MomentKind::Rebalance => 1,
        MomentKind::Send => 0,
    }
}

/// A short word for a kind of moment.
fn word(kind: MomentKind) -> &'static str {
    match kind {
        MomentKind::Loss => "loss",
        MomentKind::DeadLetter => "dead letter",
        MomentKind::Overwrite => "overwrite",
        MomentKind::Stop => "stop",
        MomentKind::Crash => "crash",
        MomentKind::Rebalance => "rebalance",
        MomentKind::Send => "sends",
    }
}

fn clusters_within(marks: &[Mark], near: Millis) -> Vec<Cluster> {
    let mut out: Vec<(Cluster, MomentKind, u32)> = Vec::new();
    for m in marks {
        let label = format!("{} at {}", m.label(), fmt_ms(m.at));
        let kind = format!("{:?}", m.kind).to_ascii_lowercase();
        match out.last_mut() {
            Some((c, top, n)) if m.at.saturating_sub(c.at) <= near => {
                if !c.kinds.contains(&kind) {
                    c.kinds.push(kind);
                    if c.glyphs.chars().count() < 2 {
                        c.glyphs.push_str(glyph(m.kind));
                    }
                }
                c.labels.push(label);
                if m.kind == *top {
                    *n += m.count;
                } else if weight(m.kind) > weight(*top) {
                    (*top, *n) = (m.kind, m.count);
                }
            }
            _ => out.push((
                Cluster {
                    at: m.at,
                    kinds: vec![kind],
                    glyphs: glyph(m.kind).to_string(),
                    labels: vec![label],
                    word: String::new(),
                },
                m.kind,
                m.count,
            )),
        }
    }
    out.into_iter()
        .map(|(mut c, top, n)| {
            c.word = if n > 1 && top.says_count() { format!("{} ×{n}", word(top)) } else { word(top).to_string() };
            c
        })
        .collect()
}

/// The marks as drawn: merged when closer than 1.6 % of the run or than a mark's width on a bar
/// `bar_px` wide, and further until at most `max` remain, so each can carry its word.
fn clusters(marks: &[Mark], until: Millis, max: usize, bar_px: f64) -> Vec<Cluster> {
    // Never closer than a mark's width (20 px and a gap): two marks apart by less would overlap.
    let apart = (until as f64 * MARK_PX / bar_px.max(MARK_PX)) as Millis;
    let mut near = ((until as f64 * 0.016) as Millis).max(apart).max(1);
    loop {
        let c = clusters_within(marks, near);
        if c.len() <= max || near >= until {
            return c;
        }
        near = near * 3 / 2 + 1;
    }
}

/// The time bar: drag to any instant (backwards by checkpoint and replay). The handle shows where
/// a seek under way is going, not where it has got to (the progress bar says that), so it stays
/// under the pointer however long the seek takes; each position is only a new target for the
/// frame loop's sliced seek (`Sim::seek_toward`).
#[component]
pub fn Scrub() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let handle_at = move || {
        sim.version.track();
        match sim.seeking.get() {
            Some(job) => job.to,
            None => sim.peek(|m| m.now()).unwrap_or(0),
        }
    };
    let until_ms = move || {
        sim.version.track();
        sim.until().max(sim.peek(|m| m.now()).unwrap_or(0))
    };
    view! {
        <input
                class="scrub"
                type="range"
                data-testid="scrub"
                aria-label="Simulated time"
                aria-valuetext=move || fmt_ms(handle_at())
                min="0"
                max=move || until_ms().to_string()
                step="100"
                prop:value=move || handle_at().to_string()
                on:pointerdown=move |_| sim.hold_scrub(true)
                on:pointerup=move |_| sim.hold_scrub(false)
                on:pointercancel=move |_| sim.hold_scrub(false)
                on:change=move |_| sim.hold_scrub(false)
                on:input=move |ev| {
                    if let Ok(t) = event_target_value(&ev).parse::<u64>() {
                        sim.seek_toward(t);
                    }
                }
            />
    }
}

/// The run's key moments on the time bar, each with its word; a click goes there.
#[component]
pub fn ChapterMarks() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let marks = move || {
        sim.story_version.track();
        sim.story.with_value(|s| s.as_ref().map(|s| (s.until.max(1), s.marks.clone())).unwrap_or((1, Vec::new())))
    };
    // The bar's width in px: how many marks it can hold with their words, and which words fit.
    let bar: NodeRef<leptos::html::Div> = NodeRef::new();
    let width = RwSignal::new(0.0f64);
    let measure = move || {
        if let Some(el) = bar.get_untracked() {
            let w = el.client_width() as f64;
            if w != width.get_untracked() {
                width.set(w);
            }
        }
    };
    Effect::new(move |_| {
        bar.track();
        request_animation_frame(measure);
    });
    let _ = window_event_listener(leptos::ev::resize, move |_| measure());
    // An embed too short for a row of words under the marks writes each word beside its mark.
    let inline = move || {
        width.track();
        let short = window().inner_height().ok().and_then(|h| h.as_f64()).is_some_and(|h| h < INLINE_WORDS_BELOW_PX);
        sim.embed.get() && short
    };
    view! {
        <div class="marks" class:inline=inline data-testid="chapter-marks" role="group" aria-label="Key moments" node_ref=bar>
            {move || {
                let (until, marks) = marks();
                let px = width.get().max(200.0);
                let inline = inline();
                // A mark and its word take about 80 px, beside each other about 110.
                let per_mark = if inline { 110.0 } else { 80.0 };
                let cs = clusters(&marks, until, ((px / per_mark) as usize).clamp(4, MAX_MARKS), px);
                let pct = |at: Millis| (at as f64 / until as f64 * 100.0).min(100.0);
                // Each word may take the room up to the next mark; one that does not fit whole
                // is left out (the mark's tooltip and label still say it).
                let room: Vec<f64> =
                    (0..cs.len()).map(|i| cs.get(i + 1).map(|n| pct(n.at)).unwrap_or(100.0) - pct(cs[i].at)).collect();
                cs.into_iter()
                    .zip(room)
                    .map(|(c, room)| {
                        let left = format!("left: {}%", decimal::fixed(pct(c.at), 3));
                        let room_px = room / 100.0 * px + if pct(c.at) > 95.0 { 0.0 } else { 4.0 };
                        // Beside its mark, the word also clears the mark's own half width.
                        let beside = if inline { 14.0 } else { 0.0 };
                        let fits = (c.word.chars().count() as f64) * WORD_CHAR_PX + 8.0 + beside <= room_px.max(0.0);
                        let label = c.labels.join("; ");
                        let at = c.at;
                        let past = move || {
                            sim.version.track();
                            sim.peek(|m| m.now()).unwrap_or(0) >= at
                        };
                        // The last mark's word ends at the bar's end rather than running past it.
                        let at_end = pct(c.at) > 90.0;
                        let word_style = if at_end {
                            format!("right: {}%", decimal::fixed(100.0 - pct(c.at), 3))
                        } else {
                            left.clone()
                        };
                        // Routine sends are one quiet mark with no word: the lesson's marks stand out.
                        let quiet = c.kinds == ["send"];
                        let fits = fits && !quiet;
                        view! {
                            <button
                                class="mark"
                                class:quiet=quiet
                                class:past=past
                                data-kind=c.kinds.join(" ")
                                data-at=at.to_string()
                                data-word=c.word.clone()
                                style=left
                                title=label.clone()
                                aria-label=label
                                on:click=move |_| sim.seek(at)
                            >
                                {c.glyphs}
                            </button>
                            {fits.then(|| {
                                view! { <span class="mark-word" class:end=at_end aria-hidden="true" style=word_style>{c.word}</span> }
                            })}
                        }
                    })
                    .collect_view()
            }}
        </div>
    }
}

/// The window height (an embed's) under which the marks' words stand beside them (as the CSS
/// `@media (max-height: 330px)` of `.embed .marks.inline`).
const INLINE_WORDS_BELOW_PX: f64 = 330.0;

/// A mark's width and the least gap beside it, in px (`.mark` is 20 px wide).
const MARK_PX: f64 = 24.0;

/// About how wide a character of a mark's word is (11 px system-ui), in px.
const WORD_CHAR_PX: f64 = 6.4;

#[component]
pub fn Timeline() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let until_ms = move || {
        sim.version.track();
        sim.until().max(sim.peek(|m| m.now()).unwrap_or(0))
    };
    let branches = move || {
        sim.edits_version.track();
        sim.history
            .with_value(|h| h.as_ref().map(|h| h.branches().iter().map(|b| b.forked_at).collect::<Vec<_>>()).unwrap_or_default())
    };
    view! {
        <section class="timeline" aria-label="Timeline">
            <Scrub />
            <div class="marks edits" data-testid="edit-marks" role="group" aria-label="Edits">
                {move || {
                    let until = until_ms().max(1);
                    edit_marks(sim)
                        .into_iter()
                        .map(|(at, label)| {
                            let left = format!("left: {}%", decimal::fixed((at as f64 / until as f64 * 100.0).min(100.0), 3));
                            view! {
                                <button class="mark edit" data-at=at.to_string() style=left title=label.clone() aria-label=label on:click=move |_| sim.seek(at)>
                                    "✎"
                                </button>
                            }
                        })
                        .collect_view()
                }}
            </div>
            {move || {
                sim.notice.get().map(|n| view! { <p class="notice small" role="status" data-testid="edit-notice">{n}</p> })
            }}
            {move || {
                let b = branches();
                (!b.is_empty())
                    .then(|| {
                        view! {
                            <label class="field branches small">
                                <span>"Earlier branches"</span>
                                <select
                                    data-testid="branch-select"
                                    aria-label="Switch to an earlier branch of this run"
                                    on:change=move |ev| {
                                        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                                            sim.switch_branch(i);
                                        }
                                    }
                                >
                                    <option value="" selected>"current"</option>
                                    {b.into_iter()
                                        .enumerate()
                                        .map(|(i, at)| view! { <option value=i.to_string()>{format!("forked at {}", fmt_ms(at))}</option> })
                                        .collect_view()}
                                </select>
                            </label>
                        }
                    })
            }}
            <ChapterMarks />
        </section>
    }
}

/// A long seek under way: how far it got, and a way to stop it there (also Escape).
#[component]
fn SeekProgress(sim: Sim, job: SeekJob) -> impl IntoView {
    let span = job.to.saturating_sub(job.from).max(1);
    let pct = move || {
        sim.version.track();
        let now = sim.peek(|m| m.now()).unwrap_or(job.from);
        (now.saturating_sub(job.from) * 100 / span).min(100)
    };
    view! {
        <span class="seek-progress" data-testid="seek-progress">
            <span
                class="seek-bar"
                role="progressbar"
                aria-label=format!("Seeking to {}", fmt_ms(job.to))
                aria-valuemin="0"
                aria-valuemax="100"
                aria-valuenow=move || pct().to_string()
            >
                <span class="seek-fill" style=move || format!("width: {}%", pct())></span>
            </span>
            {move || format!("seeking to {}: {}%", fmt_ms(job.to), pct())}
            <button data-testid="seek-cancel" aria-keyshortcuts="Escape" on:click=move |_| sim.cancel_seek()>
                "Cancel"
            </button>
        </span>
    }
}
