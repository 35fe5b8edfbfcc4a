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
