//! What an algorithm may read of a connection's subflows, and the sums coupled rules use.

/// One subflow as the algorithm sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubflowView {
    /// Congestion window, packets.
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Smoothed RTT in seconds; 0 while there is no sample yet.
    pub srtt_s: f64,
    /// Established and able to send (not being set up or torn down).
    pub established: bool,
    /// In fast recovery or loss recovery.
    pub in_recovery: bool,
}

impl SubflowView {
    /// A subflow takes part in the coupling once it is established and has an RTT sample.
    /// One in loss recovery still counts.
    pub fn is_coupled(&self) -> bool {
        self.established && self.srtt_s > 0.0 && self.cwnd > 0.0
    }

    /// x_r = w_r / tau_r, packets per second.
    pub fn rate(&self) -> f64 {
        self.cwnd / self.srtt_s
    }
}

/// Sums over the subflows that take part in the coupling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coupling {
    /// Subflows counted.
    pub n: usize,
    /// W = sum w_k.
    pub total_cwnd: f64,
    /// X = sum x_k.
    pub total_rate: f64,
    /// M = max x_k.
    pub max_rate: f64,
    /// max_k w_k / tau_k^2 (LIA's numerator).
    pub max_cwnd_over_rtt2: f64,
}

impl Coupling {
    pub fn of(subflows: &[SubflowView]) -> Coupling {
        let mut c = Coupling {
            n: 0,
            total_cwnd: 0.0,
            total_rate: 0.0,
            max_rate: 0.0,
            max_cwnd_over_rtt2: 0.0,
        };
        for s in subflows.iter().filter(|s| s.is_coupled()) {
            c.n += 1;
            c.total_cwnd += s.cwnd;
            c.total_rate += s.rate();
            c.max_rate = c.max_rate.max(s.rate());
            c.max_cwnd_over_rtt2 = c.max_cwnd_over_rtt2.max(s.cwnd / (s.srtt_s * s.srtt_s));
        }
        c
    }
}
