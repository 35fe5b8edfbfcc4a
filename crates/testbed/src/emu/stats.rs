//! What the emulator reports about itself: per-link counters, how late packets left it,
//! and for RED links the drop tally by average queue length.

use measure::Measured;
use net::LinkStats;

/// How late packets were handed to their destination device, relative to the time the
/// link model gave them: a histogram in microseconds.
#[derive(Clone, Debug, Default)]
pub struct Lateness {
    /// `counts[us]`: packets late by `us` microseconds; the last bucket holds all later.
    pub counts: Vec<u64>,
}

impl Lateness {
    const BUCKETS: usize = 20_001;

    pub fn record(&mut self, late_ns: u64) {
        if self.counts.is_empty() {
            self.counts = vec![0; Self::BUCKETS];
        }
        let us = ((late_ns / 1000) as usize).min(Self::BUCKETS - 1);
        self.counts[us] += 1;
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The `q` quantile (0..=1) in microseconds; `None` before any packet.
    pub fn quantile_us(&self, q: f64) -> Option<u64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let want = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (us, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return Some(us as u64);
            }
        }
        None
    }
}

/// RED's decisions on one link direction, in order: the average queue length each
/// arrival saw and whether RED dropped it early. Kept for the first million arrivals.
#[derive(Clone, Debug, Default)]
pub struct RedLog {
    pub decisions: Vec<(f32, bool)>,
}

impl RedLog {
    const CAP: usize = 1 << 20;

    pub fn record(&mut self, avg: f64, dropped_early: bool) {
        if self.decisions.len() < Self::CAP {
            self.decisions.push((avg as f32, dropped_early));
        }
    }
}

pub struct EmuReport {
    /// Per link direction (`scenario::model::dir_id`).
    pub links: Vec<LinkStats>,
    /// Link metrics and queue series, named as the simulator names them.
    pub measured: Measured,
    pub lateness: Lateness,
    /// Per link direction; empty for drop-tail links.
    pub red: Vec<RedLog>,
    /// Packets read from the devices.
    pub read_pkts: u64,
    pub read_bytes: u64,
    /// Packets handed to a destination device.
    pub written_pkts: u64,
    pub written_bytes: u64,
    /// Packets with no route (not IPv4, or to an address of no host).
    pub unroutable: u64,
    /// Packets a destination device refused (its queue was full).
    pub device_drops: u64,
    /// Seconds the emulator ran.
    pub ran_s: f64,
    /// Whether it ran at real-time priority.
    pub realtime: bool,
}
