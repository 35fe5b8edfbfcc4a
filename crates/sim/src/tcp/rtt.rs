//! RFC 6298 RTT estimation and retransmission timeout, with Linux's 200 ms floor.

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

    /// RTO = max(SRTT + 4 RTTVAR, 200 ms), doubled per backoff, at most 120 s.
    pub fn rto(&self) -> u64 {
        let base = if self.srtt == 0 {
            INITIAL_RTO
        } else {
            (self.srtt + 4 * self.rttvar).max(MIN_RTO)
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
        assert_eq!(e.rto(), MIN_RTO.max(e.srtt + 4 * e.rttvar));
        assert!(e.rto() >= MIN_RTO);
        e.backoff = 3;
        assert_eq!(e.rto(), 8 * MIN_RTO.max(e.srtt + 4 * e.rttvar));
    }
}
