//! The generators' draws from a scenario's SplitMix64.

use mqviz_engine::SplitMix64;

pub fn pick<'a>(rng: &mut SplitMix64, items: &[&'a str]) -> &'a str {
    items[rng.index(items.len())]
}

pub fn chance(rng: &mut SplitMix64, percent: u64) -> bool {
    rng.below(100) < percent
}

/// A number in `lo..=hi`.
pub fn between(rng: &mut SplitMix64, lo: u64, hi: u64) -> u64 {
    lo + rng.below(hi - lo + 1)
}
