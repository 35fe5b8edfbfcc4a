use crate::{
    Ack, CaState, CongestionControl, Coupling, CouplingState, SubflowView, coupled_increase,
    reno_ssthresh,
};

/// OLIA (Khalili et al., CoNEXT 2012): LIA's increase made Pareto-optimal by moving window
/// from the paths with the largest windows (M) to the best paths that do not have them yet
/// (the "collected" paths C = B \ M).
#[derive(Clone, Debug, Default)]
pub struct Olia {
    /// Per subflow: cumulative ACK (packets) at the loss before last, at the last loss, and
    /// now, as the Linux module's mptcp_loss1/2/3.
    losses: Vec<[u64; 3]>,
}

/// Membership of each subflow in OLIA's sets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OliaSets {
    /// Largest window (ssthresh while in recovery).
    pub max_window: Vec<bool>,
    /// Largest l_r / tau_r^2.
    pub best: Vec<bool>,
    /// best and not max_window.
    pub collected: Vec<bool>,
}

/// The window OLIA compares for M: in recovery the window the subflow will return to.
fn current_window(s: &SubflowView) -> f64 {
    if s.in_recovery {
        s.ssthresh.min(s.cwnd)
    } else {
        s.cwnd
    }
}

/// Equality up to rounding, for ties of computed keys.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// The sets M, B and C; `inter_loss[r]` is l_r, packets acknowledged between the last two
/// losses or since the last one, whichever is larger.
pub fn olia_sets(subflows: &[SubflowView], inter_loss: &[f64]) -> OliaSets {
    let n = subflows.len();
    let counted = |r: usize| subflows[r].is_coupled();
    let quality = |r: usize| inter_loss[r] / (subflows[r].srtt_s * subflows[r].srtt_s);
    let max_w = (0..n)
        .filter(|&r| counted(r))
        .map(|r| current_window(&subflows[r]))
        .fold(f64::NEG_INFINITY, f64::max);
    let best_q = (0..n)
        .filter(|&r| counted(r))
        .map(quality)
        .fold(f64::NEG_INFINITY, f64::max);
    let max_window: Vec<bool> = (0..n)
        .map(|r| counted(r) && same(current_window(&subflows[r]), max_w))
        .collect();
    let best: Vec<bool> = (0..n)
        .map(|r| counted(r) && same(quality(r), best_q))
        .collect();
    let collected = (0..n).map(|r| best[r] && !max_window[r]).collect();
    OliaSets {
        max_window,
        best,
        collected,
    }
}

/// alpha_r: +1/(n |C|) on collected paths, -1/(n |M|) on max-window paths when C is not
/// empty, 0 otherwise.
pub fn olia_alpha(subflows: &[SubflowView], inter_loss: &[f64], r: usize) -> f64 {
    let sets = olia_sets(subflows, inter_loss);
    let count = |v: &[bool]| v.iter().filter(|&&b| b).count() as f64;
    let (c, m) = (count(&sets.collected), count(&sets.max_window));
    if c == 0.0 {
        return 0.0;
    }
    let n = Coupling::of(subflows).n as f64;
    if sets.collected[r] {
        1.0 / (n * c)
    } else if sets.max_window[r] {
        -1.0 / (n * m)
    } else {
        0.0
    }
}

/// Increase per acknowledged packet on `r` (negative on max-window paths while others are
/// collected): (w_r / tau_r^2) / (sum_p w_p / tau_p)^2 + alpha_r / w_r.
pub fn olia_increase_per_packet(subflows: &[SubflowView], inter_loss: &[f64], r: usize) -> f64 {
    let c = Coupling::of(subflows);
    let s = subflows[r];
    let w = s.cwnd.max(1.0);
    w / (s.srtt_s * s.srtt_s) / (c.total_rate * c.total_rate)
        + olia_alpha(subflows, inter_loss, r) / w
}

impl Olia {
    fn slot(&mut self, r: usize) -> &mut [u64; 3] {
        if self.losses.len() <= r {
            self.losses.resize(r + 1, [0; 3]);
        }
        &mut self.losses[r]
    }

    /// l_r for every subflow, packets.
    pub fn inter_loss(&self, n: usize) -> Vec<f64> {
        (0..n)
            .map(|r| {
                let [l1, l2, l3] = self.losses.get(r).copied().unwrap_or([0; 3]);
                (l2 - l1).max(l3 - l2) as f64
            })
            .collect()
    }
}

impl CongestionControl for Olia {
    fn name(&self) -> &'static str {
        "olia"
    }
    fn increase(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64 {
        let grown = coupled_increase(subflows, r, acked, || {
            olia_increase_per_packet(subflows, &self.inter_loss(subflows.len()), r)
        });
        grown.max(1.0)
    }
    fn ssthresh(&mut self, subflows: &[SubflowView], r: usize) -> f64 {
        reno_ssthresh(subflows[r].cwnd)
    }
    fn pkts_acked(&mut self, r: usize, ack: &Ack) {
        let s = self.slot(r);
        s[2] = s[2].max(ack.snd_una);
    }
    fn set_state(&mut self, r: usize, state: CaState, snd_una: u64) {
        // Shift the interval on entering recovery, once per loss event (a repeated
        // entry with no progress in between is the same event).
        if state != CaState::Open {
            let s = self.slot(r);
            s[2] = s[2].max(snd_una);
            if s[2] != s[1] {
                *s = [s[1], s[2], s[2]];
            }
        }
    }
    fn coupling_state(&self, subflows: &[SubflowView], r: usize) -> CouplingState {
        let inter_loss = self.inter_loss(subflows.len());
        CouplingState {
            alpha: olia_alpha(subflows, &inter_loss, r),
            inter_loss_pkts: inter_loss[r],
        }
    }
}
