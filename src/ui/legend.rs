//! The canvas's legend, as text and small drawings the screen reader and the eye both get: what
//! each cell style, dot shape and mark means. Colours are explained by the tag key drawn on the
//! canvas itself; here nothing is told apart by colour.
//!
//! Each model's legend lists only what its canvas draws, in its own words: filters, overwritten
//! tables and retry topics are RocketMQ's; a Kafka record is lost to an offset reset, not a
//! filter; a Pulsar cursor has a markDelete position, not a committed offset, and no heartbeat.

use leptos::prelude::*;

use super::state::Sim;
use mqviz_model::BrokerKind;

#[component]
pub fn Legend() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let kind = move || sim.kind.get().unwrap_or(BrokerKind::RocketMq);
    let is = move |k: BrokerKind| move || kind() == k;
    let not_pulsar = move || kind() != BrokerKind::Pulsar;
    let not_kafka = move || kind() != BrokerKind::Kafka;
    let lost_by = move || match kind() {
        BrokerKind::Kafka => " (skipped by an offset reset or truncation, never consumed)",
        _ => " (skipped by a filter, never consumed)",
    };
    let committed = move || match kind() {
        BrokerKind::Pulsar => "markDelete (acknowledged up to)",
        _ => "committed offset",
    };
    let crossed = move || match kind() {
        BrokerKind::Kafka => " skipped by an offset reset",
        BrokerKind::Pulsar => " moved to the dead-letter topic",
        BrokerKind::RocketMq => " dropped by a filter",
    };
    view! {
        <details class="legend" data-testid="legend" open>
            <summary>"Legend"</summary>
            <ul>
                <li><i class="cell consumed" aria-hidden="true"></i>"consumed"</li>
                <li><i class="cell pending" aria-hidden="true"></i>"waiting"</li>
                <Show when=not_pulsar>
                    <li class="lost"><i class="cell skipped" aria-hidden="true"></i><strong>"lost"</strong>{lost_by}</li>
                </Show>
                <Show when=not_kafka>
                    <li><i class="cell retrying" aria-hidden="true"></i>"retrying"</li>
                    <li><i class="cell dlq" aria-hidden="true"></i>"dead-lettered"</li>
                </Show>
                <Show when=is(BrokerKind::RocketMq)>
                    <li><b class="letter">"F N E"</b>" SQL92 FALSE / NULL / error"</li>
                </Show>
                <li><i class="mark-commit" aria-hidden="true"></i>{committed}</li>
                <li><i class="dot" aria-hidden="true"></i>"message moving"</li>
                <li><b class="glyph">"✕"</b>{crossed}</li>
                <Show when=not_pulsar>
                    <li><i class="ring" aria-hidden="true"></i>"heartbeat"</li>
                </Show>
                <Show when=is(BrokerKind::RocketMq)>
                    <li><b class="glyph">"◆"</b>" heartbeat that overwrote"</li>
                    <li><b class="glyph">"⚠"</b>" differs from the broker"</li>
                </Show>
                <li><i class="edge" aria-hidden="true"></i>"assignment"</li>
                <li><i class="unowned" aria-hidden="true"></i>"no owner"</li>
            </ul>
        </details>
    }
}
