use crate::{
    CongestionControl, Coupling, CouplingState, SubflowView, coupled_increase, reno_ssthresh,
};

/// Balia (draft-walid-mptcp-congestion-control-04): balances the friendliness of
/// LIA with the responsiveness OLIA lacks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Balia;

/// alpha_r = M / x_r, kept as a fraction (the Linux code divides as integers, so that
/// min(alpha, 1.5) only takes the values 1 and 1.5).
pub fn balia_alpha(subflows: &[SubflowView], r: usize) -> f64 {
    Coupling::of(subflows).max_rate / subflows[r].rate()
}

/// Increase per acknowledged packet on `r`, in the draft's section-4 form:
/// (x_r + M)(4 x_r + M) / (10 w_r X^2).
pub fn balia_increase_per_packet(subflows: &[SubflowView], r: usize) -> f64 {
    let c = Coupling::of(subflows);
    let s = subflows[r];
    let x = s.rate();
    (x + c.max_rate) * (4.0 * x + c.max_rate) / (10.0 * s.cwnd * c.total_rate * c.total_rate)
}

/// The same increase in the draft's first form:
/// x_r / (tau_r X^2) * ((1 + alpha_r) / 2) * ((4 + alpha_r) / 5).
pub fn balia_increase_per_packet_alpha_form(subflows: &[SubflowView], r: usize) -> f64 {
    let c = Coupling::of(subflows);
    let s = subflows[r];
    let a = balia_alpha(subflows, r);
    s.rate() / (s.srtt_s * c.total_rate * c.total_rate) * ((1.0 + a) / 2.0) * ((4.0 + a) / 5.0)
}

/// The window of `r` after a loss: w_r - (w_r / 2) min(alpha_r, 1.5). The minimum is 1
/// packet when more than one path is in use, Reno's 2 otherwise.
pub fn balia_after_loss(subflows: &[SubflowView], r: usize) -> f64 {
    let c = Coupling::of(subflows);
    let s = subflows[r];
    if !s.is_coupled() || c.n <= 1 {
        return reno_ssthresh(s.cwnd);
    }
    let a = balia_alpha(subflows, r).min(1.5);
    (s.cwnd - s.cwnd / 2.0 * a).max(1.0)
}

impl CongestionControl for Balia {
    fn name(&self) -> &'static str {
        "balia"
    }
    fn increase(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64 {
        coupled_increase(subflows, r, acked, || {
            balia_increase_per_packet(subflows, r)
        })
    }
    fn ssthresh(&mut self, subflows: &[SubflowView], r: usize) -> f64 {
        balia_after_loss(subflows, r)
    }
    fn coupling_state(&self, subflows: &[SubflowView], r: usize) -> CouplingState {
        CouplingState {
            alpha: balia_alpha(subflows, r),
            ..CouplingState::default()
        }
    }
}
