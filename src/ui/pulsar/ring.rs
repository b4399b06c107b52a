//! The Key_Shared hash ring as a picture model: for one Key_Shared subscription on one topic
//! (or partition), each consumer's hash ranges, the hashes draining at a previous owner
//! (PIP-379) with the key they belong to, and where each key of the run falls on the ring.
//! Pure, so the unit tests check what the canvas draws.

use mqviz_pulsar::hash::fold_sticky_hash;
use mqviz_pulsar::key_shared::KeySharedDispatcher;
use mqviz_pulsar::seam::key_colour;
use mqviz_pulsar::world::{Dispatcher, Partition, World};

/// The hash space every selector works in: `[0, 65535]`.
pub const HASH_SPACE: u32 = 65_536;
/// Entries scanned for key names per partition (a big run shows the keys of its start).
pub const KEYS_SCANNED: usize = 20_000;
/// Keys placed on the ring (more are counted, not drawn).
pub const KEYS_SHOWN: usize = 64;

/// The consumers' hues on the ring, by track (cycled past eight; the tracks are numbered too).
/// Dark enough for 3:1 against the white page and the light track under them (WCAG non-text
/// contrast), none of them a key hue (the key dots use Okabe–Ito), and ordered so the first
/// four stay apart for the common colour-vision deficiencies. The draining marks stay ink.
pub const CONSUMER_COLOURS: [&str; 8] = ["#1D4ED8", "#B35900", "#AA3377", "#117733", "#0E7490", "#332288", "#882255", "#7C2D12"];

/// The colour of the consumer on track `i` (0-based), in the canvas and in the legend alike.
pub fn consumer_colour(i: usize) -> &'static str {
    CONSUMER_COLOURS[i % CONSUMER_COLOURS.len()]
}

/// One consumer's track on the ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Track {
    pub consumer: String,
    /// Its ink on the ring and in the legend (`consumer_colour` of its place).
    pub colour: &'static str,
    pub ranges: Vec<(u32, u32)>,
    pub hashes: u64,
    pub permits: u32,
    pub unacked: u32,
    pub blocked: bool,
}

/// A hash that moved to a new owner while its previous owner still had unacked messages of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Draining {
    pub hash: u32,
    /// A key of the run with this hash, if one was seen.
    pub key: Option<String>,
    /// The previous owner, which must ack first.
    pub at: String,
    /// The owner now, which waits.
    pub waiting: Option<String>,
    pub pending: u32,
    /// Dispatch attempts it blocked so far.
    pub blocked: u32,
}

/// A key of the run at its place on the ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDot {
    pub key: String,
    pub hash: u32,
    /// The canvas's colour for it (a slice of the hash space).
    pub colour: u32,
    pub owner: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HashRing {
    /// `billing on orders`, or with the partition: `billing on orders-partition-1`.
    pub label: String,
    /// `AUTO_SPLIT (consistent hashing)`, `STICKY`...
    pub mode: String,
    pub draining_enabled: bool,
    pub tracks: Vec<Track>,
    pub draining: Vec<Draining>,
    pub keys: Vec<KeyDot>,
    /// More distinct keys than `KEYS_SHOWN` were seen.
    pub more_keys: bool,
}

impl HashRing {
    #[cfg(test)]
    pub fn owner_of(&self, hash: u32) -> Option<&str> {
        self.tracks.iter().find(|t| t.ranges.iter().any(|&(s, e)| (s..=e).contains(&hash))).map(|t| &*t.consumer)
    }
}

fn mode_text(d: &KeySharedDispatcher) -> String {
    use mqviz_pulsar::key_shared::StickyKeySelector as S;
    let selector = match d.selector {
        S::ConsistentHashing(_) => "AUTO_SPLIT · consistent hashing",
        S::RangeSplit(_) => "AUTO_SPLIT · range splitting",
        S::Sticky(_) => "STICKY",
    };
    let mut s = selector.to_string();
    if d.config.classic {
        s.push_str(" · classic (recently joined consumers)");
    }
    if d.config.allow_out_of_order_delivery {
        s.push_str(" · out of order allowed");
    }
    s
}

/// Distinct sticky keys of a partition's entries, with their hash in the selector's space.
fn keys_of(w: &World, part: &Partition, d: &KeySharedDispatcher) -> (Vec<(String, u32, u32)>, bool) {
    let (start, end) = d.selector.key_hash_range();
    let mut seen: Vec<(String, u32, u32)> = Vec::new();
    let mut more = false;
    for e in part.entries.iter().take(KEYS_SCANNED) {
        let Some(m) = w.messages.get(e.first_msg as usize) else { continue };
        let Some(key) = w.sticky_key_text(m) else { continue };
        if seen.iter().any(|(k, _, _)| k == key) {
            continue;
        }
        if seen.len() == KEYS_SHOWN {
            more = true;
            break;
        }
        seen.push((key.to_string(), fold_sticky_hash(e.key_make_hash, start, end), key_colour(e.key_make_hash)));
    }
    (seen, more)
}

fn ring_of(w: &World, part: &Partition, sub: usize, d: &KeySharedDispatcher) -> HashRing {
    let s = &part.subscriptions[sub];
    let name_of = |id: u64| d.consumer(id).map(|c| c.name.clone()).unwrap_or_else(|| format!("consumer id {id}"));
    let ranges = d.selector.ranges_by_consumer();
    let tracks = d
        .consumers()
        .enumerate()
        .map(|(i, c)| {
            let r = ranges.get(&c.consumer_id).cloned().unwrap_or_default();
            Track {
                consumer: c.name.clone(),
                colour: consumer_colour(i),
                hashes: r.iter().map(|&(a, b)| u64::from(b - a) + 1).sum(),
                ranges: r,
                permits: c.permits,
                unacked: c.unacked.unacked,
                blocked: c.unacked.blocked,
            }
        })
        .collect();
    let (keys, more_keys) = keys_of(w, part, d);
    let draining = d
        .draining
        .entries()
        .map(|(hash, e)| Draining {
            hash,
            key: keys.iter().find(|k| k.1 == hash).map(|k| k.0.clone()),
            at: name_of(e.consumer),
            waiting: d.selector.select(hash).filter(|&c| c != e.consumer).map(name_of),
            pending: e.ref_count,
            blocked: e.blocked,
        })
        .collect();
    let keys = keys
        .into_iter()
        .map(|(key, hash, colour)| KeyDot { owner: d.selector.select(hash).map(name_of), key, hash, colour })
        .collect();
    let topic = part.name.rsplit('/').next().unwrap_or(&part.name);
    HashRing {
        label: format!("{} on {topic}", s.name),
        mode: mode_text(d),
        draining_enabled: d.draining_enabled(),
        tracks,
        draining,
        keys,
        more_keys,
    }
}

/// Every Key_Shared subscription's ring (one per partition), in partition order.
pub fn rings(w: &World) -> Vec<HashRing> {
    let mut out = Vec::new();
    for part in w.partitions.iter().filter(|p| !p.deleted) {
        for (i, s) in part.subscriptions.iter().enumerate() {
            if let Some(Dispatcher::KeyShared(d)) = &s.dispatcher {
                out.push(ring_of(w, part, i, d));
            }
        }
    }
    out
}

/// The gap left at the top of the ring, where 65535 meets 0 and the tracks are numbered (radians).
pub const NOTCH: f64 = 0.22;

/// The angle of `hash` on the ring, in radians: clockwise from just right of the top.
pub fn angle(hash: u32) -> f64 {
    -std::f64::consts::FRAC_PI_2 + NOTCH / 2.0 + (std::f64::consts::TAU - NOTCH) * f64::from(hash) / f64::from(HASH_SPACE)
}

/// The ring as JSON for the canvas's `data-ring` attribute (read by the browser tests).
pub fn describe(r: &HashRing) -> String {
    use serde_json::json;
    json!({
        "label": r.label,
        "mode": r.mode,
        "tracks": r.tracks.iter().map(|t| json!({"consumer": t.consumer, "colour": t.colour, "ranges": t.ranges.len(), "hashes": t.hashes,
            "permits": t.permits, "unacked": t.unacked, "blocked": t.blocked})).collect::<Vec<_>>(),
        "draining": r.draining.iter().map(|d| json!({"hash": d.hash, "key": d.key, "at": d.at, "waiting": d.waiting,
            "pending": d.pending})).collect::<Vec<_>>(),
        "keys": r.keys.iter().map(|k| json!({"key": k.key, "hash": k.hash, "owner": k.owner})).collect::<Vec<_>>(),
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::pulsar::dag::tests::world_at;

    #[test]
    fn a_joining_consumer_takes_hashes_and_a_moved_key_drains_at_its_old_owner() {
        let before = world_at("pulsar-key-shared-join.json", 3_900);
        let r = &rings(&before)[0];
        assert_eq!(r.label, "billing on orders");
        assert_eq!(r.tracks.len(), 3);
        assert_eq!(r.tracks.iter().map(|t| t.hashes).sum::<u64>(), 65_535, "the ring covers 1..=65535 once");
        assert_eq!(r.keys.len(), 8);
        assert!(r.draining.is_empty());
        let after = world_at("pulsar-key-shared-join.json", 4_200);
        let r = &rings(&after)[0];
        assert_eq!(r.tracks.len(), 4);
        assert_eq!(r.draining.len(), 1, "{:?}", r.draining);
        let d = &r.draining[0];
        assert_eq!(d.at, "consumer-2");
        assert_eq!(d.waiting.as_deref(), Some("consumer-4"));
        assert!(d.key.as_deref().is_some_and(|k| k.starts_with("customer-")));
        assert_eq!(r.owner_of(d.hash), Some("consumer-4"));
        assert!(describe(r).contains("\"draining\":[{"));
        let done = world_at("pulsar-key-shared-join.json", 7_000);
        assert!(rings(&done)[0].draining.is_empty(), "drained once consumer-2 acked");
    }

    /// WCAG relative luminance of `#rrggbb`.
    fn luminance(hex: &str) -> f64 {
        let c = |i: usize| {
            let v = f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap()) / 255.0;
            if v <= 0.040_45 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * c(1) + 0.7152 * c(3) + 0.0722 * c(5)
    }

    fn contrast(a: &str, b: &str) -> f64 {
        let (x, y) = (luminance(a), luminance(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn consumer_colours_are_distinct_contrasting_and_not_key_hues() {
        let key_hues: Vec<String> = crate::ui::pulsar::paint::KEY_HUES.iter().map(|h| h.to_ascii_uppercase()).collect();
        for (i, c) in CONSUMER_COLOURS.iter().enumerate() {
            // The page and the unowned part of a track (paint::FILL_SEALED).
            for bg in ["#ffffff", "#e5e7eb"] {
                assert!(contrast(c, bg) >= 3.0, "{c} on {bg}: {:.2}", contrast(c, bg));
            }
            assert!(!key_hues.contains(&c.to_ascii_uppercase()), "{c} is a key hue");
            assert!(!CONSUMER_COLOURS[..i].contains(c), "{c} twice");
        }
        assert_eq!(consumer_colour(9), consumer_colour(1));
        let r = &rings(&world_at("pulsar-key-shared-join.json", 4_200))[0];
        let colours: Vec<&str> = r.tracks.iter().map(|t| t.colour).collect();
        assert_eq!(colours, CONSUMER_COLOURS[..4].to_vec(), "one colour per consumer, in track order");
    }

    #[test]
    fn angles_start_at_the_top_and_go_clockwise() {
        let top = -std::f64::consts::FRAC_PI_2;
        assert!((angle(0) - (top + NOTCH / 2.0)).abs() < 1e-9);
        assert!((angle(HASH_SPACE) - (top + std::f64::consts::TAU - NOTCH / 2.0)).abs() < 1e-9);
        assert!(angle(16_384) > top && angle(16_384) < 0.1);
    }
}
