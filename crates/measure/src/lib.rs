//! Measurement shared by both backends: goodput per flow in bins and over the measured
//! window, window and RTT traces, queue lengths, link utilisation; and the summary metrics
//! of a run. A backend reports what it observed, when it observed it; this crate decides
//! what that means, so the simulator and the kernel backend name and compute every metric
//! the same way.

mod convergence;
mod flows;
mod links;
mod pair_trace;

pub use convergence::{BAND, Convergence, HOLD_S, convergence};
pub use flows::{FlowMeter, FlowSlot, LossRecovery, ReceiverSegments};
pub use links::LinkMeter;

use scenario::results::Series;
use std::collections::BTreeMap;

/// What a run measured, ready for `RunResult`.
#[derive(Default)]
pub struct Measured {
    pub metrics: BTreeMap<String, f64>,
    pub flow_goodput_mbps: BTreeMap<String, Vec<f64>>,
    pub series: Vec<Series>,
}

impl Measured {
    /// Adds another part's metrics and series (after this one's).
    pub fn extend(&mut self, other: Measured) {
        self.metrics.extend(other.metrics);
        self.flow_goodput_mbps.extend(other.flow_goodput_mbps);
        self.series.extend(other.series);
    }
}

/// Mbit/s of `bytes` over `secs` (0 for an empty span).
pub(crate) fn mbps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs / 1e6
    } else {
        0.0
    }
}
