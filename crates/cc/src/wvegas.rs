use crate::{
    Ack, CaState, CongestionControl, SubflowView, Window, reno_increase, reno_ssthresh,
    slow_start_then,
};
use serde::{Deserialize, Serialize};

/// wVegas (Cao, Xu, Fu, ICNP 2012), as the out-of-tree Linux module runs it: delay-based,
/// one window step per round, each subflow's share of the total alpha weighted by its rate.
/// With one subflow it is Vegas, not Reno: the only algorithm here that does not reduce to
/// Reno.
#[derive(Clone, Debug, Default)]
pub struct Wvegas {
    pub params: WvegasParams,
    state: Vec<WvegasState>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WvegasParams {
    /// Packets queued per subflow before it is weighted (the module's initial alpha).
    pub initial_alpha: f64,
    /// Packets the whole connection may keep queued.
    pub total_alpha: f64,
    /// Slow-start exit threshold, packets.
    pub gamma: f64,
}

impl Default for WvegasParams {
    fn default() -> Self {
        WvegasParams {
            initial_alpha: 2.0,
            total_alpha: 10.0,
            gamma: 1.0,
        }
    }
}

/// Per-subflow state.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WvegasState {
    /// Off outside the Open state.
    pub enabled: bool,
    pub alpha: f64,
    /// Minimum RTT seen, seconds (0 before the first sample).
    pub base_rtt_s: f64,
    /// RTT samples of the current round.
    pub sampled_rtt_s: f64,
    pub samples: u32,
    /// The round ends when an ACK passes this packet.
    pub round_end: u64,
    /// Smallest queueing delay seen since the last drain, seconds (0: none).
    pub queue_delay_s: f64,
}

impl Default for WvegasState {
    fn default() -> Self {
        WvegasState {
            enabled: true,
            alpha: WvegasParams::default().initial_alpha,
            base_rtt_s: 0.0,
            sampled_rtt_s: 0.0,
            samples: 0,
            round_end: 0,
            queue_delay_s: 0.0,
        }
    }
}

/// The inputs of one end-of-round decision.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WvegasRound {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub base_rtt_s: f64,
    /// This round's mean RTT.
    pub rtt_s: f64,
    pub alpha: f64,
    pub queue_delay_s: f64,
    /// sum over the other coupled subflows of w_k / srtt_k, packets per second.
    pub others_rate: f64,
}

/// What a round decided. `slow_start` means: grow as TCP slow start for this ACK.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WvegasDecision {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub alpha: f64,
    pub queue_delay_s: f64,
    pub slow_start: bool,
}

/// Linux's tcp_current_ssthresh outside a window reduction: at least 3/4 of the window.
fn current_ssthresh(cwnd: f64, ssthresh: f64) -> f64 {
    ssthresh.max(0.75 * cwnd)
}

/// The end-of-round rules of wVegas (docs/algorithms.md).
pub fn wvegas_round(p: &WvegasParams, i: &WvegasRound) -> WvegasDecision {
    let mut d = WvegasDecision {
        cwnd: i.cwnd,
        ssthresh: i.ssthresh,
        alpha: i.alpha,
        queue_delay_s: i.queue_delay_s,
        slow_start: false,
    };
    let diff = i.cwnd * (i.rtt_s - i.base_rtt_s) / i.rtt_s;
    let in_slow_start = i.cwnd < i.ssthresh;
    if in_slow_start && diff > p.gamma {
        let target = i.cwnd * i.base_rtt_s / i.rtt_s;
        d.cwnd = i.cwnd.min(target + 1.0);
        d.ssthresh = i.ssthresh.min(d.cwnd - 1.0);
    } else if in_slow_start {
        d.slow_start = true;
        return d;
    } else {
        if diff >= d.alpha {
            let own = i.cwnd / i.rtt_s;
            let weight = own / (own + i.others_rate);
            d.alpha = (weight * p.total_alpha).max(2.0);
        }
        if diff > d.alpha {
            d.cwnd -= 1.0;
            d.ssthresh = i.ssthresh.min(d.cwnd - 1.0);
        } else if diff < d.alpha {
            d.cwnd += 1.0;
        }
        // Drain the queue when the delay has doubled since its smallest value. A zero
        // delay never counts as a minimum: the module's 0 means "none yet".
        let q = i.rtt_s - i.base_rtt_s;
        if q > 0.0 {
            if d.queue_delay_s == 0.0 || d.queue_delay_s > q {
                d.queue_delay_s = q;
            }
            if q >= 2.0 * d.queue_delay_s {
                d.cwnd *= i.base_rtt_s / (2.0 * i.rtt_s);
                d.queue_delay_s = 0.0;
            }
        }
    }
    d.cwnd = d.cwnd.max(2.0);
    d.ssthresh = current_ssthresh(d.cwnd, d.ssthresh.max(2.0));
    d
}

impl Wvegas {
    fn slot(&mut self, r: usize) -> &mut WvegasState {
        if self.state.len() <= r {
            let init = WvegasState {
                alpha: self.params.initial_alpha,
                ..WvegasState::default()
            };
            self.state.resize(r + 1, init);
        }
        &mut self.state[r]
    }

    pub fn state(&self, r: usize) -> Option<&WvegasState> {
        self.state.get(r)
    }
}

impl CongestionControl for Wvegas {
    fn name(&self) -> &'static str {
        "wvegas"
    }
    fn increase(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64 {
        reno_increase(subflows[r].cwnd, acked)
    }
    fn ssthresh(&mut self, subflows: &[SubflowView], r: usize) -> f64 {
        reno_ssthresh(subflows[r].cwnd)
    }
    fn pkts_acked(&mut self, r: usize, ack: &Ack) {
        if let Some(rtt) = ack.rtt_s.filter(|&t| t > 0.0) {
            let s = self.slot(r);
            if s.base_rtt_s == 0.0 || rtt < s.base_rtt_s {
                s.base_rtt_s = rtt;
            }
            s.sampled_rtt_s += rtt;
            s.samples += 1;
        }
    }
    fn set_state(&mut self, r: usize, state: CaState, _snd_una: u64) {
        let alpha = self.params.initial_alpha;
        let s = self.slot(r);
        if state == CaState::Open {
            if !s.enabled {
                *s = WvegasState {
                    enabled: true,
                    alpha,
                    base_rtt_s: s.base_rtt_s,
                    ..WvegasState::default()
                };
            }
        } else {
            s.enabled = false;
        }
    }
    fn cong_avoid(&mut self, subflows: &[SubflowView], r: usize, ack: &Ack) -> Window {
        let sf = subflows[r];
        let params = self.params;
        let s = *self.slot(r);
        // Reno's growth, and slow start within a round, only while cwnd-limited (as the
        // eBPF version's wvegas_reno); the once-per-round decision below is wVegas's own
        // and runs whatever the window's use, as in the out-of-tree module.
        let reno = |this: &mut Self| {
            if !ack.cwnd_limited {
                return Window {
                    cwnd: sf.cwnd,
                    ssthresh: sf.ssthresh,
                };
            }
            slow_start_then(subflows, r, ack.acked, |views, left| {
                this.increase(views, r, left)
            })
        };
        if !s.enabled {
            return reno(self);
        }
        if ack.snd_una <= s.round_end {
            if sf.cwnd < sf.ssthresh {
                return reno(self);
            }
            return Window {
                cwnd: sf.cwnd,
                ssthresh: sf.ssthresh,
            };
        }
        let st = self.slot(r);
        st.round_end = ack.snd_nxt;
        let (sum, n) = (st.sampled_rtt_s, st.samples);
        st.sampled_rtt_s = 0.0;
        st.samples = 0;
        if n <= 2 {
            return reno(self);
        }
        let others_rate = subflows
            .iter()
            .enumerate()
            .filter(|&(k, v)| k != r && v.is_coupled())
            .map(|(_, v)| v.rate())
            .sum();
        let d = wvegas_round(
            &params,
            &WvegasRound {
                cwnd: sf.cwnd,
                ssthresh: sf.ssthresh,
                base_rtt_s: s.base_rtt_s,
                rtt_s: sum / n as f64,
                alpha: s.alpha,
                queue_delay_s: s.queue_delay_s,
                others_rate,
            },
        );
        let st = self.slot(r);
        st.alpha = d.alpha;
        st.queue_delay_s = d.queue_delay_s;
        if d.slow_start {
            return reno(self);
        }
        Window {
            cwnd: d.cwnd,
            ssthresh: d.ssthresh,
        }
    }
}
