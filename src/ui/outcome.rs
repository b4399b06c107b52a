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

/// The outcome of the run shown, kept current with the panels.
pub fn current(sim: Sim) -> Memo<Option<(String, bool)>> {
    Memo::new(move |prev: Option<&Option<(String, bool)>>| {
        sim.ui_version.track();
        let busy = sim.playing.get_untracked() || sim.seeking.get_untracked().is_some();
        if busy && sim.peek(|m| m.log_len()).unwrap_or(0) > COUNT_WHILE_PLAYING_MAX_LOG {
            return prev.cloned().flatten();
        }
        sim.peek(|m| m.totals().sentence()).flatten()
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
                <p class="outcome" class:alarm=alarm data-testid="outcome" data-alarm=alarm.to_string()>
                    {text}
                </p>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    /// At the end of every preset, the sentence states the counts `mqviz run --json` lists for
    /// the same run, names only a cause the model has, and says "none lost or duplicated" only
    /// when the report lists nothing lost, unconsumed, duplicated or dead-lettered.
    #[test]
    fn every_preset_says_at_its_end_what_its_report_lists() {
        use mqviz_app::presets::PRESETS;
        use mqviz_app::registry::run;
        use serde_json::Value;
        let len = |v: &Value| v.as_array().map_or(0, Vec::len) as u64;
        let mut checked = 0;
        for p in PRESETS {
            let sim = run(p.text).unwrap_or_else(|e| panic!("{}: {e:?}", p.file));
            let t = sim.totals();
            let r = sim.report();
            let (text, _) = t.sentence().unwrap_or_else(|| panic!("{}: no sentence", p.file));
            let what = format!("{}: {text}\n{t:?}", p.file);
            let (listed_unconsumed, listed_duplicated, listed_dead) = match sim.kind() {
                mqviz_model::BrokerKind::Kafka => {
                    assert!(!text.contains("filter"), "Kafka has no filter here: {what}");
                    (r["unconsumedCount"].as_u64().unwrap(), r["duplicateCount"].as_u64().unwrap(), 0)
                }
                mqviz_model::BrokerKind::Pulsar => {
                    let m = &r["messages"];
                    let twice =
                        m["redelivered"].as_array().unwrap().iter().filter(|x| x["deliveries"].as_u64().unwrap_or(0) > 1).count()
                            as u64;
                    (len(&m["neverDelivered"]), twice, len(&m["deadLettered"]))
                }
                mqviz_model::BrokerKind::RocketMq => {
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
            checked += 1;
        }
        assert_eq!(checked, PRESETS.len());
    }
}
