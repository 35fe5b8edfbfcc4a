//! What one run of one variant produces, whichever backend made it. Reports read only this.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One time series: `name` is the quantity (`goodput_mbps`, `cwnd_pkts`, `rtt_ms`,
/// `queue_pkts`), `entity` what it belongs to (`group.web`, `flow.web#3`, `link.core.ab`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Series {
    pub name: String,
    pub entity: String,
    pub times_s: Vec<f64>,
    pub values: Vec<f64>,
}

/// Counters about the run itself (not about the network).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunStats {
    pub events: u64,
    pub packet_hops: u64,
    pub simulated_s: f64,
    pub wall_s: f64,
}

/// The emulator's own figures for one kernel run: what it lost or delayed itself, as opposed
/// to what the link model did (queue overflow, RED, random loss, a link down: the
/// experiment), and whether that makes the run unreliable. Counted by `testbed::emu`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EmulatorHealth {
    pub seed: u64,
    /// Own losses above `own_loss_bound` or late packets above `late_fraction_bound`.
    pub unreliable: bool,
    /// Why, in words (empty when reliable).
    #[serde(default)]
    pub why: Vec<String>,
    /// Packets the hosts sent into their devices: read by the emulator, or dropped at the
    /// device because it did not read them in time.
    pub offered_pkts: u64,
    /// `not_read + truncated + refused + dropped_on_arrival`.
    pub own_losses: u64,
    /// `own_losses / offered_pkts`.
    pub own_loss_fraction: f64,
    pub own_loss_bound: f64,
    /// Dropped by the kernel at a source device whose ring the emulator did not drain in
    /// time (the device's `tx_dropped`).
    pub not_read: u64,
    /// Read into a buffer too short for them, and discarded.
    pub truncated: u64,
    /// Writes a destination device refused.
    pub refused: u64,
    /// Written, then dropped by the destination's stack before IP (the device's
    /// `rx_dropped`, refusals it also counts taken out).
    pub dropped_on_arrival: u64,
    /// Packets written to their destination device.
    pub handed_over: u64,
    /// Handed over more than `late_bound_ms` after the time the link model gave them.
    pub late_beyond_bound: u64,
    pub late_bound_ms: f64,
    /// `late_beyond_bound / handed_over`.
    pub late_fraction: f64,
    pub late_fraction_bound: f64,
    /// For comparison: the link model's drops (overflow, RED, random loss, down), all links.
    pub link_drops: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub scenario: String,
    pub variant: String,
    pub backend: String,
    pub seed: u64,
    pub params: BTreeMap<String, toml::Value>,
    /// Summary metrics, named `group.<g>.goodput_mbps`, `link.<l>.ab.utilisation`, `all.jain`, ...
    pub metrics: BTreeMap<String, f64>,
    /// Mean goodput of each flow of each group over the measured window, Mbps.
    pub flow_goodput_mbps: BTreeMap<String, Vec<f64>>,
    pub series: Vec<Series>,
    pub stats: RunStats,
    /// Kernel backend: the emulator's own losses and lateness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulator: Option<EmulatorHealth>,
}

/// Jain's fairness index: (sum x)^2 / (n sum x^2); 1 when all equal, 1/n when one takes all.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn jain_bounds() {
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
