//! The drain poller's backoff (`Backoff`, builder form; spec §4.5, §8 drain poll): 2 s doubling
//! to 15 min, each delay shortened by a random 0-10 % but never below the initial delay.

use crate::defaults::{DRAIN_INITIAL_DELAY_MS, DRAIN_MAX_DELAY_MS};
use mqviz_engine::{Millis, SplitMix64};

/// Exponential backoff state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    pub initial_ms: Millis,
    pub max_ms: Millis,
    next_ms: Millis,
}

/// The range one delay can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayBounds {
    /// The delay before jitter.
    pub nominal_ms: Millis,
    pub min_ms: Millis,
    pub max_ms: Millis,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new(DRAIN_INITIAL_DELAY_MS, DRAIN_MAX_DELAY_MS)
    }
}

impl Backoff {
    pub fn new(initial_ms: Millis, max_ms: Millis) -> Backoff {
        let initial_ms = initial_ms.max(1);
        Backoff { initial_ms, max_ms: max_ms.max(1), next_ms: initial_ms }
    }

    /// Back to the initial delay.
    pub fn reset(&mut self) {
        self.next_ms = self.initial_ms;
    }

    /// Advances the nominal delay (doubling up to the cap) and returns this call's bounds.
    pub fn next_bounds(&mut self) -> DelayBounds {
        let nominal = self.next_ms;
        if nominal < self.max_ms {
            self.next_ms = nominal.saturating_mul(2).min(self.max_ms);
        }
        // Upstream subtracts `nextInt(nominal / 10)` only above 10 ms (the bound must be positive).
        let max_cut = if nominal > 10 { nominal / 10 - 1 } else { 0 };
        DelayBounds {
            nominal_ms: nominal,
            min_ms: (nominal - max_cut).max(self.initial_ms),
            max_ms: nominal.max(self.initial_ms),
        }
    }

    /// The next delay, jittered with `rng`.
    pub fn next_delay(&mut self, rng: &mut SplitMix64) -> Millis {
        let b = self.next_bounds();
        let cut = if b.nominal_ms > 10 { rng.below(b.nominal_ms / 10) } else { 0 };
        (b.nominal_ms - cut).max(self.initial_ms)
    }

    /// The bounds of `calls` consecutive delays without a reset.
    pub fn bounds_sequence(initial_ms: Millis, max_ms: Millis, calls: usize) -> Vec<DelayBounds> {
        let mut b = Backoff::new(initial_ms, max_ms);
        (0..calls).map(|_| b.next_bounds()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_to_the_cap_with_bounded_jitter() {
        let seq = Backoff::bounds_sequence(2_000, 900_000, 11);
        let nominal: Vec<Millis> = seq.iter().map(|b| b.nominal_ms).collect();
        assert_eq!(nominal, vec![2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 900_000, 900_000]);
        assert_eq!((seq[0].min_ms, seq[1].min_ms, seq[9].min_ms), (2_000, 3_601, 810_001));
        let mut b = Backoff::default();
        let mut rng = SplitMix64::new(1);
        for bounds in Backoff::bounds_sequence(2_000, 900_000, 20) {
            let d = b.next_delay(&mut rng);
            assert!(bounds.min_ms <= d && d <= bounds.max_ms);
        }
        b.reset();
        assert_eq!(b.next_delay(&mut rng), 2_000);
    }

    #[test]
    fn tiny_delays_have_no_jitter() {
        let mut b = Backoff::new(3, 40);
        let mut rng = SplitMix64::new(0);
        // 3 and 6 are not above 10; 12 / 10 = 1 allows a cut of 0 only.
        assert_eq!([0; 3].map(|_| b.next_delay(&mut rng)), [3, 6, 12]);
        let d = b.next_delay(&mut rng);
        assert!((23..=24).contains(&d));
    }
}
