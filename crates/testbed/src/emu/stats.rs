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

/// Wake-ups that came late: the loop asked the kernel to return after a sleep (often of
/// zero) and got the CPU back more than [`Stalls::THRESHOLD_NS`] later. Lateness comes from
/// these, not from the emulator's own work (its writes take tens of microseconds): on a
/// virtual machine the hypervisor's steal time and the kernel's softirq work on the
/// emulator's CPU hold it off.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stalls {
    pub count: u64,
    /// Sum of the overshoots beyond the requested sleep.
    pub total_ns: u64,
}

impl Stalls {
    pub const THRESHOLD_NS: u64 = 100_000;

    pub fn record(&mut self, asked_ns: u64, took_ns: u64) {
        let over = took_ns.saturating_sub(asked_ns);
        if over > Self::THRESHOLD_NS {
            self.count += 1;
            self.total_ns += over;
        }
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
    pub stalls: Stalls,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_wakeups_beyond_the_threshold_count_and_early_ones_never() {
        let mut s = Stalls::default();
        s.record(50_000, 20_000); // woken early by a packet
        s.record(0, Stalls::THRESHOLD_NS); // at the threshold: not a stall
        s.record(40_000, 40_000 + 300_000);
        s.record(0, 1_200_000);
        assert_eq!(s.count, 2);
        assert_eq!(s.total_ns, 1_500_000);
    }

    #[test]
    fn lateness_quantiles_come_from_the_histogram() {
        let mut l = Lateness::default();
        assert_eq!(l.quantile_us(0.99), None);
        for us in 0..100 {
            l.record(us * 1000);
        }
        assert_eq!(l.quantile_us(0.5), Some(49));
        assert_eq!(l.quantile_us(0.99), Some(98));
    }
}
