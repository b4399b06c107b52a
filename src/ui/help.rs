//! The keyboard shortcuts panel ("?"), a part of the page fetched when first shown (`ui::lazy`).

use leptos::prelude::*;

use super::state::Sim;

/// The split point of the shortcuts panel.
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(help, fallible))]
pub fn part() -> Result<fn(Sim) -> AnyView, wasm_split_helpers::SplitLoaderError> {
    Ok(|sim| shortcuts(sim).into_any())
}

fn shortcuts(sim: Sim) -> impl IntoView {
    view! {
        <div class="help" role="dialog" aria-label="Keyboard shortcuts" data-testid="shortcuts">
            <h2>"Keyboard shortcuts"</h2>
            <dl>
                <dt><kbd>"Space"</kbd></dt>
                <dd>"Play / pause"</dd>
                <dt><kbd>"→"</kbd></dt>
                <dd>"Run the next event"</dd>
                <dt><kbd>"←"</kbd></dt>
                <dd>"Back to the previous instant (checkpoint + replay)"</dd>
                <dt><kbd>"N"</kbd></dt>
                <dd>"Run to the next key moment"</dd>
                <dt><kbd>"End"</kbd></dt>
                <dd>"Run to the end of the scenario (a long run seeks in slices; Escape stops it)"</dd>
                <dt><kbd>"Home"</kbd></dt>
                <dd>"Back to the start"</dd>
                <dt><kbd>"Tab"</kbd>" to the canvas, then arrows"</dt>
                <dd>"Move between brokers, partitions and consumers; Enter opens a message's provenance"</dd>
                <dt><kbd>"?"</kbd></dt>
                <dd>"Show / hide this panel"</dd>
            </dl>
            <button on:click=move |_| sim.show_help.set(false)>"Close"</button>
        </div>
    }
}
