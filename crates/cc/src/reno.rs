use crate::{CongestionControl, SubflowView, reno_increase, reno_ssthresh};

/// RFC 5681 congestion avoidance: one packet per window per RTT; halve on loss. On an
/// MPTCP connection each subflow runs it independently ("uncoupled"): the baseline that
/// takes more than its share at a shared bottleneck.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn increase(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64 {
        reno_increase(subflows[r].cwnd, acked)
    }
    fn ssthresh(&mut self, subflows: &[SubflowView], r: usize) -> f64 {
        reno_ssthresh(subflows[r].cwnd)
    }
}
