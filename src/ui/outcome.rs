//! The run's outcome in words, beside the canvas and in the live region: how many messages were
//! sent, consumed, lost, duplicated, retried or dead-lettered by the playhead. A run that loses
//! messages says so with the counts ("14 of 20 messages sent were lost"), so the lesson does not
//! depend on noticing crosses on a log.

use leptos::prelude::*;

use super::state::Sim;
use mqviz_model::{Totals, LOST_TO_A_FILTER};

/// Logs longer than this are not counted while playing (counting reads every message's fate);
/// the sentence catches up when playback pauses.
pub const COUNT_WHILE_PLAYING_MAX_LOG: usize = 200_000;

fn messages(n: u64) -> String {
    if n == 1 {
        "1 message".to_string()
    } else {
        format!("{n} messages")
    }
}

/// The outcome so far, and whether it is an alarm (messages lost, duplicated or dead-lettered).
/// Every count is the model's own (`Simulation::totals`, which its report agrees with), and the
/// cause of a loss is in the model's words; "none lost or duplicated" is said only when every
/// message sent has been consumed exactly once so far.
pub fn sentence(t: &Totals) -> Option<(String, bool)> {
    if t.produced == 0 {
        return None;
    }
    let mut bad: Vec<String> = Vec::new();
    if t.lost > 0 {
        bad.push(format!(
            "{} of {} sent {} lost: {}",
            t.lost,
            messages(t.produced),
            if t.lost == 1 { "was" } else { "were" },
            if t.lost_cause.is_empty() { LOST_TO_A_FILTER } else { t.lost_cause }
        ));
    }
    if t.duplicated > 0 {
        bad.push(format!("{} consumed more than once", messages(t.duplicated)));
    }
    if t.dead_lettered > 0 {
        bad.push(format!("{} dead-lettered", messages(t.dead_lettered)));
    }
    let mut text = if bad.is_empty() {
        let mut s = format!("So far {} sent, {} consumed", messages(t.produced), t.consumed);
        if t.unconsumed == 0 && t.retrying == 0 {
            s.push_str("; none lost or duplicated");
        }
        s
    } else {
        format!("So far {}", bad.join("; "))
    };
    // Short: mid-run these are mostly the backlog, and the sentence must stay one line where it can.
    if t.unconsumed > 0 {
        text.push_str(&format!("; {} not consumed", t.unconsumed));
    }
    if t.retrying > 0 {
        text.push_str(&format!("; {} waiting to be retried", t.retrying));
    }
    text.push('.');
    Some((text, !bad.is_empty()))
}

/// The outcome of the run shown, kept current with the panels.
pub fn current(sim: Sim) -> Memo<Option<(String, bool)>> {
    Memo::new(move |prev: Option<&Option<(String, bool)>>| {
        sim.ui_version.track();
        let busy = sim.playing.get_untracked() || sim.seeking.get_untracked().is_some();
        if busy && sim.peek(|m| m.log_len()).unwrap_or(0) > COUNT_WHILE_PLAYING_MAX_LOG {
            return prev.cloned().flatten();
        }
        sim.peek(|m| sentence(&m.totals())).flatten()
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
    use super::*;

    #[test]
    fn a_loss_is_said_with_its_counts() {
        let t = Totals { produced: 20, consumed: 6, lost: 14, lost_cause: LOST_TO_A_FILTER, ..Totals::default() };
        let (text, alarm) = sentence(&t).unwrap();
        assert!(alarm);
        assert!(text.starts_with("So far 14 of 20 messages sent were lost"), "{text}");
    }

    #[test]
    fn a_clean_run_says_so_and_an_empty_one_says_nothing() {
        let t = Totals { produced: 240, consumed: 240, ..Totals::default() };
        assert_eq!(sentence(&t), Some(("So far 240 messages sent, 240 consumed; none lost or duplicated.".into(), false)));
        assert_eq!(sentence(&Totals::default()), None);
        let dup = Totals { produced: 10, consumed: 11, duplicated: 1, ..Totals::default() };
        assert!(sentence(&dup).unwrap().0.contains("1 message consumed more than once"));
        let waiting = Totals { produced: 20, consumed: 10, unconsumed: 10, ..Totals::default() };
        assert_eq!(sentence(&waiting), Some(("So far 20 messages sent, 10 consumed; 10 not consumed.".into(), false)));
    }

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
            let (text, _) = sentence(&t).unwrap_or_else(|| panic!("{}: no sentence", p.file));
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
