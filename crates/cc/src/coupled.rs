use crate::{CongestionControl, Coupling, SubflowView, coupled_increase, reno_ssthresh};

/// Fully coupled (Kelly and Voice 2005; Han et al. 2004; "Coupled" in Table 2 of the Balia
/// draft): the connection behaves as one TCP over the sum of its paths. It moves all traffic
/// to the least congested path and is slow to come back to a path that recovers.
#[derive(Clone, Copy, Debug, Default)]
pub struct FullyCoupled;

/// Increase per acknowledged packet on `r`: x_r / (tau_r X^2).
pub fn fully_coupled_increase_per_packet(subflows: &[SubflowView], r: usize) -> f64 {
    let c = Coupling::of(subflows);
    let s = subflows[r];
    s.rate() / (s.srtt_s * c.total_rate * c.total_rate)
}

/// The window of `r` after a loss: w_r - tau_r X / 2, at least 1 packet (2 with one subflow,
/// as Reno).
pub fn fully_coupled_after_loss(subflows: &[SubflowView], r: usize) -> f64 {
    let c = Coupling::of(subflows);
    let s = subflows[r];
    if !s.is_coupled() || c.n <= 1 {
        return reno_ssthresh(s.cwnd);
    }
    (s.cwnd - s.srtt_s * c.total_rate / 2.0).max(1.0)
}

impl CongestionControl for FullyCoupled {
    fn name(&self) -> &'static str {
        "fullycoupled"
    }
    fn increase(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64 {
        coupled_increase(subflows, r, acked, || {
            fully_coupled_increase_per_packet(subflows, r)
        })
    }
    fn ssthresh(&mut self, subflows: &[SubflowView], r: usize) -> f64 {
        fully_coupled_after_loss(subflows, r)
    }
}
