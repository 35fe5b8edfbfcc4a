//! RTT-variation selection: the path with the least queueing. The paper calls the queueing
//! part of the RTT its "variation" ("the RTT is made up of two main components: propagation
//! delay and RTT variation (queuing delay)"), so by default the measure is the connection's
//! smoothed RTT less the smallest RTT the source has seen on that path. TCP's own RTTVAR
//! (the mean deviation of the samples), which the name also suggests, is the other reading.

use crate::{Measure, Observation};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VariationReading {
    /// SRTT minus the path's smallest RTT: the queueing delay (the paper's text).
    #[default]
    Queueing,
    /// RFC 6298 RTTVAR.
    Rttvar,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct RttVariation {
    pub reading: VariationReading,
}

impl Measure for RttVariation {
    fn measure(&self, observed: &Observation, path_min_rtt_ns: u64) -> Option<f64> {
        let rtt = observed.rtt_ns()?;
        Some(match self.reading {
            // A connection that timed everything out has no samples: its RTO stands for the
            // RTT, and all of it counts as waiting.
            VariationReading::Queueing if path_min_rtt_ns == 0 => rtt as f64,
            VariationReading::Queueing => rtt.saturating_sub(path_min_rtt_ns) as f64,
            VariationReading::Rttvar if observed.srtt_ns == 0 => rtt as f64,
            VariationReading::Rttvar => observed.rttvar_ns as f64,
        })
    }
}
