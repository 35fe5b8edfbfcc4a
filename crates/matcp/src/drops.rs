//! Drop selection: the path whose latest connection lost the smallest share of what it
//! sent. The paper counts "packets that have been dropped"; a count would punish a path for
//! carrying a long transfer, so the share (retransmitted segments over segments sent) is
//! used: the same count for connections of the same length.

use crate::{Measure, Observation};

#[derive(Clone, Copy, Debug, Default)]
pub struct Drops;

impl Measure for Drops {
    fn measure(&self, observed: &Observation, _path_min_rtt_ns: u64) -> Option<f64> {
        (observed.segments_sent > 0)
            .then(|| observed.retransmits as f64 / observed.segments_sent as f64)
    }
}
