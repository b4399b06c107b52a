//! Every native integration test, linked into one binary: each file under `tests/` used to be its
//! own ~100 MB test executable, linked twice per CI run (two feature sets). One binary links once.
//! `tests/web.rs` and `tests/wasm_determinism.rs` stay separate: they run in headless Chromium.

mod common;

mod bad_input;
mod bad_input_kafka;
mod bad_input_pulsar;
mod determinism_golden;
mod filters;
mod kafka_behaviours;
mod kafka_presets;
mod pulsar_behaviours;
mod pulsar_presets;
mod review;
mod rocketmq_behaviours;
mod rocketmq_fidelity;
mod seed_experiments;
mod simulation;
