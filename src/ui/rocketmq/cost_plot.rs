//! The heartbeat-registration cost plot: entries touched by each `ConsumerFilterManager.register`
//! (one per group heartbeat) over time, one series per broker. It is the point of the
//! filter-registry preset, so that preset shows it on the stage as well as in the Filters tab.

use leptos::prelude::*;

use crate::ui::plots::draw_filter_cost;
use crate::ui::state::Sim;
use mqviz_rocketmq::world::World;

/// Whether the brokers run different filter-registry designs: then the cost plot is the story.
pub fn compares_designs(w: &World) -> bool {
    let mut designs = w.brokers.iter().map(|b| b.filter_manager.design().name());
    let first = designs.next();
    designs.any(|d| Some(d) != first)
}

/// The plot, redrawn when the World changes (at most every 100 ms while playing) or the canvas
/// becomes visible; drawn after layout so the canvas has a size.
#[component]
pub fn CostPlot(#[prop(into)] visible: Signal<bool>, testid: &'static str) -> impl IntoView {
    let sim = expect_context::<Sim>();
    let plot: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let resized = RwSignal::new(0u32);
    let _resize = window_event_listener(leptos::ev::resize, move |_| resized.update(|n| *n = n.wrapping_add(1)));
    Effect::new(move |_| {
        sim.ui_version.track();
        resized.track();
        crate::ui::plot::version();
        if !visible.get() {
            return;
        }
        let Some(el) = plot.get() else { return };
        request_animation_frame(move || {
            let data = sim.peek_as::<World, _>(|w| {
                let series: Vec<(String, Vec<(f64, f64)>)> = w
                    .brokers
                    .iter()
                    .map(|b| {
                        let pts = b.filter_costs.iter().map(|s| (s.at as f64 / 1000.0, s.cost.entries_touched as f64)).collect();
                        (format!("{} ({})", b.name, b.filter_manager.design().name()), pts)
                    })
                    .collect();
                (w.scenario.until, w.now, series)
            });
            if let Some((until, now, series)) = data {
                draw_filter_cost(&el, until, now, series);
            }
        });
    });
    view! {
        <canvas
            class="cost-plot"
            data-testid=testid
            node_ref=plot
            on:click=move |ev| crate::ui::plot::seek_on_click(sim, ev)
            aria-label="Entries touched per heartbeat registration over time, one line per broker; click to go to a time"
        ></canvas>
    }
}

/// On the stage: the cost plot, when the scenario compares registry designs.
#[component]
pub fn StagePlot() -> impl IntoView {
    let sim = expect_context::<Sim>();
    let shown = Signal::derive(move || sim.read_as::<World, _>(compares_designs).unwrap_or(false));
    view! {
        <Show when=move || shown.get()>
            <figure class="stage-plot">
                <figcaption>"Heartbeat cost: entries the broker's filter registry touches per heartbeat (topic scan vs group index)"</figcaption>
                <CostPlot visible=shown testid="stage-cost-plot" />
            </figure>
        </Show>
    }
}
