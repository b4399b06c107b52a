//! RocketMQ's own panels: the scenario editor, the inspector tables and the filter-manager tab.
//! They read the RocketMQ `World` (downcast from the neutral model) and enter edits as timeline
//! actions; the shared shell finds them through `ui::parts`.

mod cost_plot;
mod editor;
mod filters;
pub mod sql92;
mod tables;

pub use cost_plot::StagePlot;
pub use editor::Editor;
pub use filters::filter_panel;
pub use tables::Tables;
