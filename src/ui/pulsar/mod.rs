//! Pulsar's panels (they downcast to the Pulsar World): on the stage, the segment DAG of a
//! scalable topic, the Key_Shared hash ring and the cursors as strips; in the inspector, flow
//! control, the segments in words and per-key order; on the left, the editor.
//!
//! The pictures are built by pure functions (`dag`, `ring`, `cursor_strip`, `flow`,
//! `key_order`, `feedback`) tested natively; the `*_canvas` modules only draw them.

mod cursor_strip;
mod dag;
mod dag_canvas;
mod editor;
mod editor_forms;
mod feedback;
mod flow;
mod key_order;
mod paint;
mod ring;
mod ring_canvas;
mod stage;
mod tables;

pub use editor::Editor;
pub use stage::Stage;
pub use tables::Tables;
