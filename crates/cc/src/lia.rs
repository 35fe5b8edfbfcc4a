use crate::{
    CongestionControl, Coupling, CouplingState, SubflowView, coupled_increase, reno_ssthresh,
};

/// LIA, RFC 6356 (the "coupled" module of the out-of-tree Linux MPTCP).
#[derive(Clone, Copy, Debug, Default)]
pub struct Lia;

/// alpha = W * max_r (w_r / tau_r^2) / (sum_r w_r / tau_r)^2  (RFC 6356 section 3).
pub fn lia_alpha(subflows: &[SubflowView]) -> f64 {
    alpha_of(&Coupling::of(subflows))
}

fn alpha_of(c: &Coupling) -> f64 {
    if c.n == 0 {
        return 1.0;
    }
    c.total_cwnd * c.max_cwnd_over_rtt2 / (c.total_rate * c.total_rate)
}

/// Increase per acknowledged packet on `r`: min(alpha / W, 1 / w_r). The out-of-tree
/// kernel's alpha, scaled by 2^12, floors to 0 once W^2 / w_best exceeds 4096; in f64 it
/// stays exact for any window a kernel can hold.
pub fn lia_increase_per_packet(subflows: &[SubflowView], r: usize) -> f64 {
    let c = Coupling::of(subflows);
    let w = subflows[r].cwnd.max(1.0);
    // The coupling once (its divisions per subflow are most of an ACK's cost here).
    (alpha_of(&c) / c.total_cwnd).min(1.0 / w)
}

impl CongestionControl for Lia {
    fn name(&self) -> &'static str {
        "lia"
    }
    fn increase(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64 {
        coupled_increase(subflows, r, acked, || lia_increase_per_packet(subflows, r))
    }
    fn ssthresh(&mut self, subflows: &[SubflowView], r: usize) -> f64 {
        reno_ssthresh(subflows[r].cwnd)
    }
    fn coupling_state(&self, subflows: &[SubflowView], _r: usize) -> CouplingState {
        CouplingState {
            alpha: lia_alpha(subflows),
            ..CouplingState::default()
        }
    }
}
