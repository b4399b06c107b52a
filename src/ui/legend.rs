//! The canvas's legend, as text and small drawings the screen reader and the eye both get: what
//! each cell style, dot shape and mark means. Colours are explained by the tag key drawn on the
//! canvas itself; here nothing is told apart by colour.

use leptos::prelude::*;

use super::state::Sim;
use mqviz_model::BrokerKind;

#[component]
pub fn Legend() -> impl IntoView {
    let sim = expect_context::<Sim>();
    // Only RocketMQ filters messages (tags, SQL92): the other models never draw these marks.
    let filters = move || sim.kind.get().is_none_or(|k| k == BrokerKind::RocketMq);
    view! {
        <details class="legend" data-testid="legend" open>
            <summary>"Legend"</summary>
            <ul>
                <li><i class="cell consumed" aria-hidden="true"></i>"consumed"</li>
                <li><i class="cell pending" aria-hidden="true"></i>"waiting"</li>
                <li class="lost"><i class="cell skipped" aria-hidden="true"></i><strong>"lost"</strong>" (skipped, never consumed)"</li>
                <li><i class="cell retrying" aria-hidden="true"></i>"retrying"</li>
                <li><i class="cell dlq" aria-hidden="true"></i>"dead-lettered"</li>
                <Show when=filters>
                    <li><b class="letter">"F N E"</b>" SQL92 FALSE / NULL / error"</li>
                </Show>
                <li><i class="mark-commit" aria-hidden="true"></i>"committed offset"</li>
                <li><i class="dot" aria-hidden="true"></i>"message moving"</li>
                <Show when=filters>
                    <li><b class="glyph">"✕"</b>" dropped by a filter"</li>
                </Show>
                <li><i class="ring" aria-hidden="true"></i>"heartbeat"</li>
                <li><b class="glyph">"◆"</b>" heartbeat that overwrote"</li>
                <li><b class="glyph">"⚠"</b>" differs from the broker"</li>
                <li><i class="edge" aria-hidden="true"></i>"assignment"</li>
                <li><i class="unowned" aria-hidden="true"></i>"no owner"</li>
            </ul>
        </details>
    }
}
