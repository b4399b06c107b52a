//! Client-side redelivery (spec §2.2, §2.3, §6 item 6): the negative-ack tracker and its
//! delay/3 timer, the ack-timeout tracker and its 1 s tick, the broker's per-position redelivery
//! count, the dead-letter decision, and the default DLQ/RETRY topic names.
//!
//! Timers are returned as deadlines; the simulation schedules them on its event queue.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

use super::super::defaults::{ACK_TIMEOUT_MIN_MS, ACK_TIMEOUT_TICK_MS, MIN_NACK_DELAY_MS, NEGATIVE_ACK_REDELIVERY_DELAY_MS};
use super::super::routing::partition_topic_name;
use mqviz_engine::Millis;

/// How long a negatively acked message waits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NackDelay {
    /// `negativeAckRedeliveryDelay` (default 60 s, at least 100 ms).
    Fixed(Millis),
    /// `MultiplierRedeliveryBackoff`: `min(max, min_delay * multiplier^redeliveryCount)`.
    Multiplier { min_delay: Millis, max_delay: Millis, multiplier: f64 },
}

impl Default for NackDelay {
    fn default() -> Self {
        NackDelay::Fixed(NEGATIVE_ACK_REDELIVERY_DELAY_MS)
    }
}

impl NackDelay {
    /// The delay for a message delivered `redelivery_count` times before.
    pub fn delay_for(&self, redelivery_count: u32) -> Millis {
        match *self {
            NackDelay::Fixed(ms) => ms.max(MIN_NACK_DELAY_MS),
            NackDelay::Multiplier { min_delay, max_delay, multiplier } => {
                let scaled = min_delay as f64 * multiplier.powi(redelivery_count.min(1_000) as i32);
                if scaled.is_finite() {
                    (scaled as Millis).min(max_delay)
                } else {
                    max_delay
                }
            }
        }
    }

    /// The tracker's timer period: a third of the (fixed or minimum) delay.
    pub fn timer_interval(&self) -> Millis {
        let base = match *self {
            NackDelay::Fixed(ms) => ms.max(MIN_NACK_DELAY_MS),
            NackDelay::Multiplier { min_delay, .. } => min_delay.max(1),
        };
        (base / 3).max(1)
    }
}

/// `NegativeAcksTracker`: nacked messages wait for their deadline; one timer, re-armed every
/// `delay / 3` while anything waits, sends one redeliver request for everything due. A message
/// therefore returns between `delay` and about `delay + delay / 3` after the nack.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NegativeAcksTracker {
    pub delay: NackDelay,
    /// Position → deadline.
    waiting: BTreeMap<i64, Millis>,
    /// When the timer fires next, if armed.
    pub timer_at: Option<Millis>,
}

impl NegativeAcksTracker {
    pub fn new(delay: NackDelay) -> NegativeAcksTracker {
        NegativeAcksTracker { delay, waiting: BTreeMap::new(), timer_at: None }
    }

    /// Records a nack at `now`; returns the timer deadline to schedule if the timer was idle.
    pub fn nack(&mut self, position: i64, redelivery_count: u32, now: Millis) -> Option<Millis> {
        self.waiting.insert(position, now + self.delay.delay_for(redelivery_count));
        if self.timer_at.is_some() {
            return None;
        }
        let at = now + self.delay.timer_interval();
        self.timer_at = Some(at);
        Some(at)
    }

    /// The timer fired: the positions to request redelivery for, and the next timer deadline.
    pub fn on_timer(&mut self, now: Millis) -> (Vec<i64>, Option<Millis>) {
        let due: Vec<i64> = self.waiting.iter().filter(|(_, &d)| d <= now).map(|(&p, _)| p).collect();
        for p in &due {
            self.waiting.remove(p);
        }
        self.timer_at = (!self.waiting.is_empty()).then(|| now + self.delay.timer_interval());
        (due, self.timer_at)
    }

    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

/// Why an ack timeout could not be configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckTimeoutTooShort(pub Millis);

impl fmt::Display for AckTimeoutTooShort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IllegalArgumentException: Ack timeout should be greater than 1000 ms (got {} ms)", self.0)
    }
}

/// `UnAckedMessageTracker`: received messages go into the newest time slot; every tick the oldest
/// slot is redelivered, so a message comes back between `timeout` and `timeout + tick` after receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckTimeoutTracker {
    pub timeout_ms: Millis,
    pub tick_ms: Millis,
    slots: VecDeque<BTreeSet<i64>>,
}

impl AckTimeoutTracker {
    /// `timeout_ms` must be 0 (off, then `Ok(None)`) or at least 1000 ms.
    pub fn new(timeout_ms: Millis) -> Result<Option<AckTimeoutTracker>, AckTimeoutTooShort> {
        if timeout_ms == 0 {
            return Ok(None);
        }
        if timeout_ms < ACK_TIMEOUT_MIN_MS {
            return Err(AckTimeoutTooShort(timeout_ms));
        }
        let tick_ms = ACK_TIMEOUT_TICK_MS.min(timeout_ms);
        let slots = (timeout_ms.div_ceil(tick_ms) + 1) as usize;
        Ok(Some(AckTimeoutTracker { timeout_ms, tick_ms, slots: (0..slots).map(|_| BTreeSet::new()).collect() }))
    }

    pub fn add(&mut self, position: i64) {
        if let Some(newest) = self.slots.back_mut() {
            newest.insert(position);
        }
    }

    pub fn remove(&mut self, position: i64) {
        for slot in &mut self.slots {
            slot.remove(&position);
        }
    }

    /// A cumulative ack covered everything up to `position` (`removeMessagesTill`).
    pub fn remove_up_to(&mut self, position: i64) {
        for slot in &mut self.slots {
            slot.retain(|&p| p > position);
        }
    }

    /// One tick: returns the positions whose ack timed out.
    pub fn on_tick(&mut self) -> Vec<i64> {
        let expired = self.slots.pop_front().unwrap_or_default();
        self.slots.push_back(BTreeSet::new());
        expired.into_iter().collect()
    }
}

/// The broker's per-position redelivery count (`subscriptionRedeliveryTrackerEnabled`), sent
/// with each delivery.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedeliveryCounts {
    counts: BTreeMap<i64, u32>,
}

impl RedeliveryCounts {
    pub fn count(&self, position: i64) -> u32 {
        self.counts.get(&position).copied().unwrap_or(0)
    }

    /// The position goes back for redelivery.
    pub fn increment(&mut self, position: i64) -> u32 {
        let c = self.counts.entry(position).or_insert(0);
        *c += 1;
        *c
    }

    /// The position was acked.
    pub fn forget(&mut self, position: i64) {
        self.counts.remove(&position);
    }

    /// Everything at or below the mark-delete position was acked.
    pub fn forget_up_to(&mut self, position: i64) {
        self.counts.retain(|&p, _| p > position);
    }
}

/// `DeadLetterPolicy` with the default names resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadLetterPolicy {
    pub max_redeliver_count: u32,
    pub dead_letter_topic: String,
    pub retry_letter_topic: String,
}

/// Why a dead-letter policy was refused by the client builder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaxRedeliverCountNotPositive;

impl fmt::Display for MaxRedeliverCountNotPositive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IllegalArgumentException: MaxRedeliverCount must be > 0.")
    }
}

/// Default dead-letter topic of a consumer of `topic` (its own topic: a partition consumer uses the partition's name).
pub fn default_dead_letter_topic(topic: &str, subscription: &str) -> String {
    format!("{topic}-{subscription}-DLQ")
}

/// Default retry topic of a consumer of `topic`.
pub fn default_retry_letter_topic(topic: &str, subscription: &str) -> String {
    format!("{topic}-{subscription}-RETRY")
}

/// The DLQ name the consumer of partition `index` of `topic` derives.
pub fn partition_dead_letter_topic(topic: &str, index: u32, subscription: &str) -> String {
    default_dead_letter_topic(&partition_topic_name(topic, index), subscription)
}

/// What the client does with one delivery under a dead-letter policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryVerdict {
    /// Shown to the application; a candidate is dead-lettered if it is nacked or times out again.
    ShowToApp { dead_letter_candidate: bool },
    /// Beyond the limit: published to the DLQ and acked without reaching the application.
    DeadLetter,
}

/// What a nack or ack timeout of a delivery leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedeliverVerdict {
    RequestRedelivery,
    PublishToDeadLetterAndAck,
}

impl DeadLetterPolicy {
    pub fn new(
        max_redeliver_count: u32,
        topic: &str,
        subscription: &str,
    ) -> Result<DeadLetterPolicy, MaxRedeliverCountNotPositive> {
        if max_redeliver_count == 0 {
            return Err(MaxRedeliverCountNotPositive);
        }
        Ok(DeadLetterPolicy {
            max_redeliver_count,
            dead_letter_topic: default_dead_letter_topic(topic, subscription),
            retry_letter_topic: default_retry_letter_topic(topic, subscription),
        })
    }

    pub fn on_delivery(&self, redelivery_count: u32) -> DeliveryVerdict {
        if redelivery_count > self.max_redeliver_count {
            DeliveryVerdict::DeadLetter
        } else {
            DeliveryVerdict::ShowToApp { dead_letter_candidate: redelivery_count >= self.max_redeliver_count }
        }
    }

    pub fn on_nack_or_timeout(&self, redelivery_count: u32) -> RedeliverVerdict {
        if redelivery_count >= self.max_redeliver_count {
            RedeliverVerdict::PublishToDeadLetterAndAck
        } else {
            RedeliverVerdict::RequestRedelivery
        }
    }

    /// The redelivery counts the application sees when it nacks every delivery of one message:
    /// `0..=maxRedeliverCount`, then the message goes to the DLQ.
    pub fn counts_seen_when_always_nacked(&self) -> Vec<u32> {
        let mut seen = Vec::new();
        let mut count = 0;
        loop {
            if let DeliveryVerdict::ShowToApp { .. } = self.on_delivery(count) {
                seen.push(count);
            }
            match self.on_nack_or_timeout(count) {
                RedeliverVerdict::PublishToDeadLetterAndAck => return seen,
                RedeliverVerdict::RequestRedelivery => count += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nack_returns_within_delay_and_a_third() {
        let mut t = NegativeAcksTracker::new(NackDelay::default());
        assert_eq!(t.nack(7, 0, 1_000), Some(21_000));
        assert_eq!(t.nack(8, 0, 5_000), None);
        assert_eq!(t.on_timer(21_000), (vec![], Some(41_000)));
        assert_eq!(t.on_timer(41_000), (vec![], Some(61_000)));
        assert_eq!(t.on_timer(61_000), (vec![7], Some(81_000)));
        assert_eq!(t.on_timer(81_000), (vec![8], None));
        assert_eq!(NackDelay::Fixed(10).delay_for(0), 100);
    }

    #[test]
    fn multiplier_backoff_grows_and_caps() {
        let d = NackDelay::Multiplier { min_delay: 1_000, max_delay: 60_000, multiplier: 2.0 };
        assert_eq!([0, 1, 2, 10].map(|c| d.delay_for(c)), [1_000, 2_000, 4_000, 60_000]);
    }

    #[test]
    fn ack_timeout_redelivers_between_timeout_and_timeout_plus_tick() {
        assert_eq!(AckTimeoutTracker::new(0), Ok(None));
        assert!(AckTimeoutTracker::new(999).is_err());
        let mut t = AckTimeoutTracker::new(3_000).unwrap().unwrap();
        t.add(1);
        let mut ticks = 0;
        while t.on_tick().is_empty() {
            ticks += 1;
        }
        // Added just after a tick: expires on the 4th tick, 3 to 4 s later.
        assert_eq!(ticks, 3);
        t.add(2);
        t.remove(2);
        assert!((0..10).all(|_| t.on_tick().is_empty()));
    }

    #[test]
    fn dead_letter_after_max_plus_one_deliveries() {
        let p = DeadLetterPolicy::new(3, "persistent://public/default/t", "s").unwrap();
        assert_eq!(p.counts_seen_when_always_nacked(), vec![0, 1, 2, 3]);
        assert_eq!(p.dead_letter_topic, "persistent://public/default/t-s-DLQ");
        assert_eq!(p.on_delivery(4), DeliveryVerdict::DeadLetter);
        assert_eq!(DeadLetterPolicy::new(0, "t", "s"), Err(MaxRedeliverCountNotPositive));
        assert_eq!(partition_dead_letter_topic("t", 2, "s"), "t-partition-2-s-DLQ");
    }

    #[test]
    fn redelivery_counts() {
        let mut r = RedeliveryCounts::default();
        assert_eq!(r.increment(3), 1);
        assert_eq!(r.increment(3), 2);
        r.increment(9);
        r.forget_up_to(5);
        assert_eq!((r.count(3), r.count(9)), (0, 1));
        r.forget(9);
        assert_eq!(r.count(9), 0);
    }
}
