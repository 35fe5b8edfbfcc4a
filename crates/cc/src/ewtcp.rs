use crate::{CongestionControl, Coupling, SubflowView, coupled_increase, reno_ssthresh};

/// EWTCP (Honda et al. 2009): each subflow is Reno with its increase scaled by a = 1/n^2,
/// so n subflows through one bottleneck take what one TCP would.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ewtcp;

/// Increase per acknowledged packet: a / w_r with a = 1 / n^2.
pub fn ewtcp_increase_per_packet(subflows: &[SubflowView], r: usize) -> f64 {
    let n = Coupling::of(subflows).n.max(1) as f64;
    1.0 / (n * n * subflows[r].cwnd.max(1.0))
}

impl CongestionControl for Ewtcp {
    fn name(&self) -> &'static str {
        "ewtcp"
    }
    fn increase(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64 {
        coupled_increase(subflows, r, acked, || {
            ewtcp_increase_per_packet(subflows, r)
        })
    }
    fn ssthresh(&mut self, subflows: &[SubflowView], r: usize) -> f64 {
        reno_ssthresh(subflows[r].cwnd)
    }
}
