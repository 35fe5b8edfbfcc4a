//! RTT selection: the path with the smallest RTT, propagation and queueing together, so a
//! shorter path is preferred until its queue makes it slower than a longer one.

use crate::{Measure, Observation};

#[derive(Clone, Copy, Debug, Default)]
pub struct Rtt;

impl Measure for Rtt {
    fn measure(&self, observed: &Observation, _path_min_rtt_ns: u64) -> Option<f64> {
        observed.rtt_ns().map(|r| r as f64)
    }
}
