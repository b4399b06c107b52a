//! The run's outcome in words (`Totals::sentence`, the same words `mqviz run` prints), beside the
//! canvas and in the live region: how many messages were
//! sent, consumed, lost, duplicated, retried or dead-lettered by the playhead. A run that loses
//! messages says so with the counts ("14 of 20 messages sent were lost"), so the lesson does not
//! depend on noticing crosses on a log.

use leptos::prelude::*;

use super::state::Sim;

/// Logs longer than this are not counted while playing (counting reads every message's fate);
/// the sentence catches up when playback pauses.
pub const COUNT_WHILE_PLAYING_MAX_LOG: usize = 200_000;

/// The outcome of the run shown, kept current with the panels. A long run's is counted in the
/// frame after the panels catch up (their rendering is that task's work; the two together went
/// over a frame's 50 ms at the end of a million messages); meanwhile the page is not ready and
/// the sentence shows as being counted.
pub fn current(sim: Sim) -> Memo<Option<(String, bool)>> {
    let counted = ArcTrigger::new();
    Memo::new(move |prev: Option<&Option<(String, bool)>>| {
        sim.ui_version.track();
        counted.track();
        let long = sim.peek(|m| m.log_len()).unwrap_or(0) > COUNT_WHILE_PLAYING_MAX_LOG;
        let busy = sim.playing.get_untracked() || sim.seeking.get_untracked().is_some();
        if !long {
            return sim.outcome();
        }
        if busy {
            return prev.cloned().flatten();
        }
        if let Some(said) = sim.counted_outcome() {
            return said;
        }
        if !sim.outcome_pending.get_untracked() {
            sim.outcome_pending.set(true);
            let counted = counted.clone();
            request_animation_frame(move || {
                sim.outcome();
                sim.outcome_pending.set(false);
                counted.notify();
            });
        }
        prev.cloned().flatten()
    })
}

/// The sentence over the canvas.
#[component]
pub fn Outcome() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let outcome = current(sim);
    move || {
        outcome.get().map(|(text, alarm)| {
            view! {
                <p
                    class="outcome"
                    class:alarm=alarm
                    class:pending=move || sim.outcome_pending.get()
                    data-testid="outcome"
                    data-alarm=alarm.to_string()
                >
                    // While comparing, the sentence is side A's.
                    <Show when=move || sim.comparing.get()>
                        <span class="side-tag" title="Side A">"A"</span>
                        <span class="sr-only">"Side A: "</span>
                    </Show>
                    {text}
                </p>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use mqviz_app::history::History;
    use mqviz_app::presets::PRESETS;
    use mqviz_app::registry::load;
    use mqviz_app::story::Story;
    use mqviz_model::{BrokerKind, MomentKind, Simulation};
    use serde_json::Value;

    /// The sentence of `sim` as it stands states the counts its report (what `mqviz run --json`
    /// lists for the same run to the same instant) lists, names only a cause the model has, and
    /// says "none lost or duplicated" only when the report lists nothing lost, unconsumed,
    /// duplicated or dead-lettered.
    fn says_what_its_report_lists(sim: &dyn Simulation, what: &str) {
        let len = |v: &Value| v.as_array().map_or(0, Vec::len) as u64;
        let t = sim.totals();
        let r = sim.report();
        let Some((text, _)) = t.sentence() else {
            assert_eq!(t.produced, 0, "{what}: no sentence");
            return;
        };
        let what = format!("{what}: {text}\n{t:?}");
        let (listed_unconsumed, listed_duplicated, listed_dead) = match sim.kind() {
            BrokerKind::Kafka => {
                assert!(!text.contains("filter"), "Kafka has no filter here: {what}");
                (r["unconsumedCount"].as_u64().unwrap(), r["duplicateCount"].as_u64().unwrap(), 0)
            }
            BrokerKind::Pulsar => {
                let m = &r["messages"];
                let twice =
                    m["redelivered"].as_array().unwrap().iter().filter(|x| x["deliveries"].as_u64().unwrap_or(0) > 1).count()
                        as u64;
                (len(&m["neverDelivered"]), twice, len(&m["deadLettered"]))
            }
            BrokerKind::RocketMq => {
                // One entry per message a group consumed more than once, with every consumption.
                let extra = r["duplicates"].as_array().unwrap().iter().map(|d| len(&d["consumers"]).saturating_sub(1)).sum();
                (len(&r["unconsumed"]), extra, t.dead_lettered)
            }
        };
        assert_eq!(t.duplicated, listed_duplicated, "duplicated: {what}");
        assert_eq!(t.dead_lettered, listed_dead, "dead-lettered: {what}");
        if t.retrying == 0 && t.dead_lettered == 0 {
            assert_eq!(t.lost + t.unconsumed, listed_unconsumed, "lost + unconsumed: {what}");
        } else {
            assert!(t.lost + t.unconsumed <= listed_unconsumed, "lost + unconsumed: {what}");
        }
        let clean = listed_unconsumed == 0 && listed_duplicated == 0 && listed_dead == 0 && t.retrying == 0;
        assert_eq!(text.contains("none lost or duplicated"), clean, "{what}");
        for n in [t.lost, t.unconsumed, t.duplicated, t.dead_lettered] {
            if n > 0 {
                assert!(text.contains(&n.to_string()), "{n} not said: {what}");
            }
        }
    }

    /// At every chapter mark of every preset and at its end, the sentence states what the report
    /// lists; what it counts as lost or dead-lettered has its mark by then; and every preset has
    /// a mark for its lesson, not only its sends.
    #[test]
    fn every_preset_says_at_each_mark_and_its_end_what_its_report_lists() {
        let mut checked = 0;
        for p in PRESETS {
            let loaded = load(p.text).unwrap_or_else(|e| panic!("{}: {e:?}", p.file));
            let story = Story::compute_with(&*loaded.sim, &loaded.edits);
            assert!(story.marks.iter().any(|m| m.kind != MomentKind::Send), "{}: no mark but sends: {:?}", p.file, story.marks);
            let mut sim = loaded.sim;
            let end = loaded.edits.last().map(|c| c.at).unwrap_or(0).max(sim.until());
            let mut history = History::replay(loaded.edits);
            // Each mark where its last moment has happened (a mark merges moments close together).
            let mut stops: Vec<u64> = story.marks.iter().map(|m| m.last).chain([end]).collect();
            stops.sort_unstable();
            for at in stops {
                history.advance(&mut sim, at).unwrap();
                let what = format!("{} at {at} ms", p.file);
                says_what_its_report_lists(&*sim, &what);
                // A loss or a dead letter so far has its mark by now.
                let marked = |k: MomentKind| story.marks.iter().any(|m| m.kind == k && m.at <= at);
                let t = sim.totals();
                assert!(t.lost == 0 || marked(MomentKind::Loss), "no loss mark: {what}: {:?}", story.marks);
                assert!(t.dead_lettered == 0 || marked(MomentKind::DeadLetter), "no dead-letter mark: {what}: {:?}", story.marks);
            }
            checked += 1;
        }
        assert_eq!(checked, PRESETS.len());
    }
}
