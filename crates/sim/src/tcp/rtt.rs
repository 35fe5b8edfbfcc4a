//! RFC 6298 RTT estimation and retransmission timeout as Linux computes it: the variation
//! term is at least `tcp_rto_min` (200 ms), so the timeout is at least SRTT + 200 ms
//! (`tcp_rtt_estimator()` keeps `rttvar_us >= tcp_rto_min_us()`, and `__tcp_set_rto()`
//! returns `srtt + rttvar`; net/ipv4/tcp_input.c).

pub const MIN_RTO: u64 = 200_000_000;
pub const MAX_RTO: u64 = 120_000_000_000;
pub const INITIAL_RTO: u64 = 1_000_000_000;

#[derive(Clone, Debug, Default)]
pub struct RttEstimator {
    /// Smoothed RTT and variation, nanoseconds; `srtt == 0` until the first sample.
    pub srtt: u64,
    pub rttvar: u64,
    pub min_rtt: u64,
    pub latest: u64,
    /// Exponential backoff shift after timeouts.
    pub backoff: u32,
}

impl RttEstimator {
    pub fn sample(&mut self, r: u64) {
        let r = r.max(1);
        self.latest = r;
        if self.srtt == 0 {
            self.srtt = r;
            self.rttvar = r / 2;
            self.min_rtt = r;
        } else {
            let diff = self.srtt.abs_diff(r);
            self.rttvar = (3 * self.rttvar + diff) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
            self.min_rtt = self.min_rtt.min(r);
        }
    }

    /// RTO = SRTT + max(4 RTTVAR, 200 ms), doubled per backoff, at most 120 s. (Linux
    /// also holds the variation term at its largest of the last round trip, `mdev_max_us`;
    /// the simulator uses the smoothed variation, which differs only while the RTT jumps.)
    pub fn rto(&self) -> u64 {
        let base = if self.srtt == 0 {
            INITIAL_RTO
        } else {
            self.srtt + (4 * self.rttvar).max(MIN_RTO)
        };
        base.saturating_mul(1 << self.backoff.min(16)).min(MAX_RTO)
    }

    pub fn srtt_s(&self) -> f64 {
        self.srtt as f64 / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_then_smoothing() {
        let mut e = RttEstimator::default();
        assert_eq!(e.rto(), INITIAL_RTO);
        e.sample(100_000_000);
        assert_eq!((e.srtt, e.rttvar), (100_000_000, 50_000_000));
        assert_eq!(e.rto(), 300_000_000);
        for _ in 0..100 {
            e.sample(100_000_000);
        }
        // A steady 100 ms path: the variation has decayed, the floor holds it at 200 ms
        // above the smoothed RTT (Linux: srtt 100 ms, rttvar_us = tcp_rto_min_us).
        assert_eq!(e.rto(), e.srtt + MIN_RTO);
        assert_eq!(e.rto(), 300_000_000);
        e.backoff = 3;
        assert_eq!(e.rto(), 8 * (e.srtt + MIN_RTO));
    }
}
