//! The run's outcome in words, beside the canvas and in the live region: how many messages were
//! sent, consumed, lost, duplicated, retried or dead-lettered by the playhead. A run that loses
//! messages says so with the counts ("14 of 20 messages sent were lost"), so the lesson does not
//! depend on noticing crosses on a log.

use leptos::prelude::*;

use super::state::Sim;
use mqviz_model::Totals;

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
pub fn sentence(t: &Totals) -> Option<(String, bool)> {
    if t.produced == 0 {
        return None;
    }
    let mut bad: Vec<String> = Vec::new();
    if t.lost > 0 {
        bad.push(format!(
            "{} of {} sent {} lost: a filter dropped them and no member of the group will consume them",
            t.lost,
            messages(t.produced),
            if t.lost == 1 { "was" } else { "were" }
        ));
    }
    if t.duplicated > 0 {
        bad.push(format!("{} consumed more than once", messages(t.duplicated)));
    }
    if t.dead_lettered > 0 {
        bad.push(format!("{} dead-lettered", messages(t.dead_lettered)));
    }
    let mut text = if bad.is_empty() {
        format!("So far {} sent, {} consumed; none lost or duplicated", messages(t.produced), t.consumed)
    } else {
        format!("So far {}", bad.join("; "))
    };
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
        let t = Totals { produced: 20, consumed: 6, lost: 14, ..Totals::default() };
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
    }
}
