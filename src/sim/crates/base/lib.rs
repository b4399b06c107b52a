//! The engine and the broker-neutral seam every model builds on. The sources live beside the
//! models in `src/sim/`; this crate only gives them a package of their own (see
//! `src/sim/Cargo.toml` for why the core is split by package).

#[path = "../../decimal.rs"]
pub mod decimal;
#[path = "../../engine/mod.rs"]
pub mod engine;
#[path = "../../hash/mod.rs"]
pub mod hash;
#[path = "../../json_path.rs"]
pub mod json_path;
#[path = "../../model/mod.rs"]
pub mod model;
#[path = "../../presets.rs"]
pub mod presets;
#[path = "../../scenario/mod.rs"]
pub mod scenario;
#[path = "../../sort.rs"]
pub mod sort;
#[path = "../../vec_map.rs"]
pub mod vec_map;
