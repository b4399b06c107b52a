//! Kafka's own panels: the scenario editor, the group panel (inspector tables), the Gantt of
//! member and FetchState lanes under the canvas, and the lag plot tab. They read the Kafka `World`
//! (downcast from the neutral model) and enter edits as timeline actions; the shared shell finds
//! them through `ui::parts`. The logic that decides what they show (lanes, stop-the-world windows,
//! Gantt geometry, lag series, form checks, edit feedback) is pure and tested natively.

mod editor;
mod gantt;
mod gantt_layout;
mod group_panel;
mod lag;
mod lag_plot;
mod lanes;

pub use editor::Editor;
pub use gantt::Gantt;
pub use group_panel::Tables;
pub use lag_plot::LagPanel;
