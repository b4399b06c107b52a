use leptos::prelude::*;

use crate::sim::model::run_rocketmq;
use crate::sim::rocketmq::report::report_json;

const DEFAULT_PRESET: &str = include_str!("../../static/scenarios/seed-same-topic-different-tags.json");

#[component]
pub fn App() -> impl IntoView {
    let summary = match run_rocketmq(DEFAULT_PRESET) {
        Ok(w) => {
            let r = report_json(&w);
            let consumers: Vec<(String, usize)> = r["consumers"]
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v["consumed"].as_array().map(Vec::len).unwrap_or(0))).collect())
                .unwrap_or_default();
            consumers
        }
        Err(_) => Vec::new(),
    };
    view! {
        <main>
            <h1>"mqviz"</h1>
            <p>"Same topic, different tags: consumed messages per consumer after the run."</p>
            <ul>
                {summary.into_iter().map(|(c, n)| view! { <li data-testid="consumed-count" data-client-id=c.clone()>{format!("{c}: {n}")}</li> }).collect_view()}
            </ul>
        </main>
    }
}
