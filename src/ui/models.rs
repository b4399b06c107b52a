//! The one place where the shared UI meets the model-specific panels: each broker model lists its
//! editor, its inspector tables, its extra tabs and its log categories here. Adding a model means
//! adding its arms below and its `ui/<model>/` folder; the shell, canvas, tracker and plots stay
//! as they are.

use leptos::prelude::*;

use crate::sim::model::BrokerKind;

/// An extra tab of the right panel.
pub struct ModelTab {
    pub label: &'static str,
    pub testid: &'static str,
}

/// The extra tabs a model adds next to "Inspector".
pub fn tabs(kind: Option<BrokerKind>) -> &'static [ModelTab] {
    match kind {
        Some(BrokerKind::RocketMq) => &[ModelTab { label: "Filters", testid: "tab-filters" }],
        Some(BrokerKind::Kafka) => &[ModelTab { label: "Lag", testid: "tab-lag" }],
        Some(BrokerKind::Pulsar) | None => &[],
    }
}

/// The body of extra tab `index`; it should read the model only while `visible`.
pub fn tab_body(kind: Option<BrokerKind>, index: usize, visible: Signal<bool>) -> AnyView {
    match (kind, index) {
        (Some(BrokerKind::RocketMq), 0) => view! { <super::rocketmq::FilterPanel visible=visible /> }.into_any(),
        (Some(BrokerKind::Kafka), 0) => view! { <super::kafka::LagPanel visible=visible /> }.into_any(),
        _ => ().into_any(),
    }
}

/// The left panel's editor.
pub fn editor(kind: Option<BrokerKind>) -> AnyView {
    match kind {
        Some(BrokerKind::RocketMq) => view! { <super::rocketmq::Editor /> }.into_any(),
        Some(BrokerKind::Pulsar) => view! { <super::pulsar::Editor /> }.into_any(),
        Some(BrokerKind::Kafka) => view! { <super::kafka::Editor /> }.into_any(),
        None => ().into_any(),
    }
}

/// Model tables shown in the inspector between the warnings and the assignment.
pub fn inspector_tables(kind: Option<BrokerKind>) -> AnyView {
    match kind {
        Some(BrokerKind::RocketMq) => view! { <super::rocketmq::Tables /> }.into_any(),
        Some(BrokerKind::Pulsar) => view! { <super::pulsar::Tables /> }.into_any(),
        Some(BrokerKind::Kafka) => view! { <super::kafka::Tables /> }.into_any(),
        None => ().into_any(),
    }
}

/// Something the model adds to the stage under the canvas (a plot that is the point of a preset).
pub fn stage_extra(kind: Option<BrokerKind>) -> AnyView {
    match kind {
        Some(BrokerKind::RocketMq) => view! { <super::rocketmq::StagePlot /> }.into_any(),
        Some(BrokerKind::Pulsar) => view! { <super::pulsar::Stage /> }.into_any(),
        Some(BrokerKind::Kafka) => view! { <super::kafka::Gantt /> }.into_any(),
        None => ().into_any(),
    }
}

/// The event-log categories for the filter select (`"all"` first), as the model names them.
pub fn log_kinds(kinds: &[&'static str]) -> Vec<&'static str> {
    std::iter::once("all").chain(kinds.iter().copied()).collect()
}
