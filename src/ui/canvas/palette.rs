//! Colours of the canvas. One meaning per colour: hues are for tags and keys only (the Okabe–Ito
//! palette, safe for the common colour-vision deficiencies); everything else is ink and greys, and
//! states are told apart by shape, fill and dash, never by hue alone. The one exception is loss,
//! the lesson most runs teach: a lost message is a thick red cross, loud in shape and in colour.

use mqviz_model::NO_KEY;

/// Okabe & Ito (2008), without black: one hue per tag or key, in order of first use.
const TAGS: [&str; 7] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"];
/// A message without a tag or key.
pub const UNTAGGED: &str = "#6b7280";

pub const BG: &str = "#ffffff";
pub const INK: &str = "#111827";
pub const MUTED: &str = "#4b5563";
pub const FAINT: &str = "#9ca3af";
pub const LINE: &str = "#d1d5db";
pub const BOX: &str = "#f9fafb";
pub const BOX_OFF: &str = "#f3f4f6";
/// Assignment edges and heartbeats: ink, lighter.
pub const EDGE: &str = "#64748b";
/// A lost message (skipped by a filter, never consumed by its group): the one hue that is not
/// a tag's, and only ever drawn as a thick cross, so shape tells it apart where colour cannot.
pub const LOST: &str = "#b91c1c";
/// The fill behind a lost message's cross.
pub const LOST_TINT: &str = "#fde2e2";
/// Tour highlight and keyboard focus.
pub const FOCUS: &str = "#111827";

/// The colour of a tag's key.
pub fn tag(key: u32) -> &'static str {
    if key == NO_KEY {
        UNTAGGED
    } else {
        TAGS[key as usize % TAGS.len()]
    }
}
