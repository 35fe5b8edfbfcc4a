//! How much memory a run of a scenario holds at its largest, estimated from the terms that
//! grow with its size: the connections' state, the goodput bins (flows x measurement
//! intervals) and the traces (subflows and link directions x trace samples). A run that
//! would not fit is refused before it starts, with this estimate, rather than aborting on
//! an allocation of hundreds of gigabytes or growing until the machine kills it.
//!
//! The per-connection figures are a little above what `mptcp-lab bench` measures (about
//! 2.7 KB per TCP connection and 3.6 KB per two-subflow MPTCP connection at 100,000
//! flows; the test below holds the estimate to within 1.6 times those measurements); the
//! series figures are the bytes of their samples.

use crate::model::Scenario;
use crate::spec::{Protocol, TrafficSpec};
use std::fmt;

/// Bytes of state per open connection (both endpoints, data level, congestion control,
/// meter), and per subflow of it (sender, receiver, timers).
const BYTES_PER_CONNECTION: u128 = 2048;
const BYTES_PER_SUBFLOW: u128 = 1536;
/// Bytes a closed connection keeps (its slot), for sources that reconnect every burst.
const BYTES_PER_CLOSED_CONNECTION: u128 = 600;
/// One goodput bin (bytes delivered in an interval).
const BYTES_PER_BIN: u128 = 8;
/// One trace sample of a subflow (window and RTT) or of a link direction (queue, drops).
const BYTES_PER_SAMPLE: u128 = 8;
/// Everything that does not grow with the scenario (program, tables, buffers).
const BASE_BYTES: u128 = 32 << 20;

/// A run's estimated peak memory, and its largest term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    pub bytes: u64,
    /// What most of it is, in words: e.g. "goodput bins: 10 flows x 70000000000 intervals".
    pub largest: String,
}

impl fmt::Display for Footprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "about {} (mostly {})", human(self.bytes), self.largest)
    }
}

/// Bytes as a short figure: `12 MiB`, `3.4 GiB`, `1.2 TiB`.
pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    if v >= 10.0 || unit == 0 {
        format!("{v:.0} {}", units[unit])
    } else {
        format!("{v:.1} {}", units[unit])
    }
}

impl Scenario {
    /// Estimated peak memory of one run of this variant.
    pub fn footprint(&self) -> Footprint {
        let duration = self.duration.nanos() as u128;
        let intervals = duration.div_ceil(self.measure.interval.nanos().max(1) as u128);
        let trace = self
            .measure
            .trace_interval
            .unwrap_or(self.measure.interval)
            .nanos()
            .max(1) as u128;
        let samples = duration.div_ceil(trace);
        // Window and RTT per subflow, and two more for each of the receiver and the
        // coupling state when traced.
        let per_sample =
            1 + u128::from(self.measure.trace_receiver) + u128::from(self.measure.trace_cc);
        let (mut flows, mut subflows, mut closed) = (0u128, 0u128, 0u128);
        for g in &self.flows {
            // The most flows a draw can give.
            let n = g.count as u128 + g.count_spread as u128;
            let per_flow = match g.protocol {
                Protocol::Tcp => 1,
                Protocol::Mptcp => g.subflows.map_or(g.paths.len(), |s| s as usize).max(1) as u128,
            };
            flows += n;
            subflows += n * per_flow;
            if let TrafficSpec::Onoff { burst, idle } = g.traffic {
                let cycle = (burst.nanos() + idle.nanos()).max(1) as u128;
                closed += n * duration.div_ceil(cycle);
            }
        }
        let directions = 2 * self.links.len() as u128;
        let terms = [
            (
                flows * BYTES_PER_CONNECTION
                    + subflows * BYTES_PER_SUBFLOW
                    + closed * BYTES_PER_CLOSED_CONNECTION,
                format!("connection state: {flows} flows, {subflows} subflows"),
            ),
            (
                flows * intervals * BYTES_PER_BIN,
                format!(
                    "goodput bins: {flows} flows x {intervals} intervals of {}",
                    self.measure.interval
                ),
            ),
            (
                (per_sample * subflows + directions) * samples * BYTES_PER_SAMPLE,
                format!(
                    "traces: {} subflows and link directions x {samples} samples",
                    subflows + directions
                ),
            ),
        ];
        let total: u128 = BASE_BYTES + terms.iter().map(|(b, _)| b).sum::<u128>();
        let largest = terms
            .into_iter()
            .max_by_key(|(b, _)| *b)
            .map(|(_, what)| what)
            .unwrap_or_default();
        Footprint {
            bytes: u64::try_from(total).unwrap_or(u64::MAX),
            largest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LoadOptions, load_str};
    use std::path::Path;

    fn scenario(flows: &str, measure: &str) -> Scenario {
        let text = format!(
            "[scenario]\nname = \"f\"\nduration = \"10s\"\n\
             [[node]]\nname = \"a\"\nkind = \"host\"\n[[node]]\nname = \"b\"\nkind = \"host\"\n\
             [[link]]\nname = \"x\"\na = \"a:x\"\nb = \"b:x\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
             [[link]]\nname = \"y\"\na = \"a:y\"\nb = \"b:y\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
             [[flow]]\nname = \"g\"\nfrom = \"a\"\nto = \"b\"\nstagger = \"1s\"\n{flows}\n\
             [measure]\n{measure}\n"
        );
        load_str(&text, Path::new("f.toml"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0)
    }

    /// Against `mptcp-lab bench` at 100,000 flows (10 s, measure.interval 1 s): 287 MiB
    /// for TCP, 386 MiB for MPTCP over two paths, measured as peak resident memory.
    #[test]
    fn near_what_bench_measures() {
        let per_flow = "interval = \"1s\"\nper_flow = false";
        for (flows, measured_mib) in [
            ("count = 100000", 287.0),
            ("count = 100000\nprotocol = \"mptcp\"", 386.0),
        ] {
            let f = scenario(flows, per_flow).footprint();
            let ratio = f.bytes as f64 / (measured_mib * 1024.0 * 1024.0);
            assert!(
                (1.0..1.6).contains(&ratio),
                "{flows}: {f} ({ratio:.2} x measured)"
            );
            assert!(f.largest.starts_with("connection state"), "{f}");
        }
    }

    #[test]
    fn the_largest_term_is_named() {
        let f = scenario("count = 10", "interval = \"1us\"\ntrace_interval = \"1s\"").footprint();
        assert!(
            f.largest
                .starts_with("goodput bins: 10 flows x 10000000 intervals"),
            "{f}"
        );
        assert!(f.bytes > 10 * 10_000_000 * 8, "{f}");
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 << 20), "3.0 MiB");
        assert_eq!(human(40 << 30), "40 GiB");
    }
}
