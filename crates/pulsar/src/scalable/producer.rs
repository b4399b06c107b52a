//! Producer routing on a scalable topic (`SegmentRouter`, spec §4.3): a keyed message goes to the
//! active segment containing its segment hash (era-dependent bits), a key-less one round robin
//! over the active segments in hash-range order.

use super::layout::{LayoutError, SegmentLayout};
use crate::hash::{segment_hash, SegmentHashEra};
use mqviz_engine::sort::StableSort;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentRouter {
    pub era: SegmentHashEra,
    next_keyless: u64,
}

impl SegmentRouter {
    pub fn new(era: SegmentHashEra) -> SegmentRouter {
        SegmentRouter { era, next_keyless: 0 }
    }

    /// The segment id for one message under the current layout.
    pub fn route(&mut self, layout: &SegmentLayout, key: Option<&[u8]>) -> Result<u64, LayoutError> {
        match key {
            Some(k) => Ok(layout.find_active_segment(u32::from(segment_hash(k, self.era)))?.segment_id),
            None => {
                let mut active: Vec<_> = layout.active_segments().map(|s| (s.hash_range, s.segment_id)).collect();
                if active.is_empty() {
                    return Err(LayoutError::NoActiveSegmentCovers(0));
                }
                active.stable_sort();
                let pick = active[(self.next_keyless % active.len() as u64) as usize].1;
                self.next_keyless = self.next_keyless.wrapping_add(1);
                Ok(pick)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_and_keyless_routing() {
        let layout = SegmentLayout::parse("initial(1).split(0)", 0).unwrap();
        let mut low = SegmentRouter::new(SegmentHashEra::Pip468LowBits);
        assert_eq!(low.route(&layout, Some(b"kk-0")).unwrap(), 2);
        assert_eq!(low.route(&layout, Some(b"kk-2")).unwrap(), 1);
        let mut high = SegmentRouter::new(SegmentHashEra::Pip486HighBits);
        assert_eq!(high.route(&layout, Some(b"kk-0")).unwrap(), 1);
        let keyless: Vec<u64> = (0..4).map(|_| low.route(&layout, None).unwrap()).collect();
        assert_eq!(keyless, vec![1, 2, 1, 2]);
    }
}
