//! Congestion-control algorithms as pure functions of the state of a connection's subflows.
//! No I/O, no clock, no packets: the simulator, the tests and (through shared vectors) the
//! eBPF C code all check against the same rules.
//!
//! The hooks mirror Linux's `tcp_congestion_ops` (`cong_avoid`, `ssthresh`, `set_state`,
//! `pkts_acked`), so the kernel ports map one to one. Fast retransmit, recovery and RTO
//! belong to the TCP machinery that calls them. Windows are in packets, as `f64`: the
//! reference has no precision traps, and the integer versions are checked against it.

pub mod balia;
pub mod coupled;
mod cwnd_limited;
pub mod ewtcp;
pub mod lia;
pub mod olia;
mod registry;
mod reno;
pub mod vectors;
mod view;
pub mod wvegas;

pub use balia::Balia;
pub use coupled::FullyCoupled;
pub use cwnd_limited::{CwndUsage, is_cwnd_limited};
pub use ewtcp::Ewtcp;
pub use lia::Lia;
pub use olia::Olia;
pub use registry::{AlgorithmId, AlgorithmInfo, REGISTRY, accepted_names, by_name};
pub use reno::Reno;
pub use view::{Coupling, SubflowView};
pub use wvegas::{Wvegas, WvegasParams, WvegasRound, WvegasState};

/// Congestion-avoidance state of a subflow, as Linux names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    Open,
    /// The window reduced without retransmissions (`TCP_CA_CWR`): here, after a tail loss
    /// probe showed it repaired a loss; the sender returns to Open at once.
    Cwr,
    /// Fast recovery after a loss found by SACK or duplicate ACKs.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// What one ACK of new data tells the algorithm.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ack {
    /// Packets this ACK newly delivered: cumulatively acknowledged and not SACKed before,
    /// plus newly SACKed (Linux's `acked_sacked`, what `tcp_cong_avoid()` grows by).
    pub acked: f64,
    /// The cumulative acknowledgement (packets) and the next packet to send, for
    /// once-per-round rules.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// RTT measured by this ACK, seconds.
    pub rtt_s: Option<f64>,
    /// The subflow may grow its window: it is cwnd-limited (`is_cwnd_limited`). When false,
    /// `cong_avoid` leaves the window as it is.
    pub cwnd_limited: bool,
}

/// An algorithm's coupling state on one subflow, for traces (the simulator's
/// `[measure] trace_cc`; `mptcp-lab cc show` reads the same from the eBPF programs). NaN
/// where the algorithm has no such quantity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CouplingState {
    /// LIA: the connection's alpha; OLIA: alpha_r, signed; Balia: M / x_r.
    pub alpha: f64,
    /// OLIA's l_r: packets acknowledged between the subflow's last two losses or since the
    /// last one, whichever is larger.
    pub inter_loss_pkts: f64,
}

impl Default for CouplingState {
    fn default() -> Self {
        CouplingState {
            alpha: f64::NAN,
            inter_loss_pkts: f64::NAN,
        }
    }
}

/// A subflow's window after an algorithm acted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
}

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;

    /// Congestion-avoidance increase on subflow `r` for `acked` packets: the new window.
    fn increase(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64;

    /// A loss event on subflow `r`: the new slow-start threshold, which is also the window
    /// once fast recovery ends.
    fn ssthresh(&mut self, subflows: &[SubflowView], r: usize) -> f64;

    /// An ACK of new data on `r` outside fast recovery. The default is slow start up to
    /// ssthresh, then `increase` for what is left, as Linux's `tcp_reno_cong_avoid`, and
    /// nothing at all while the subflow is not cwnd-limited.
    fn cong_avoid(&mut self, subflows: &[SubflowView], r: usize, ack: &Ack) -> Window {
        if !ack.cwnd_limited {
            return Window {
                cwnd: subflows[r].cwnd,
                ssthresh: subflows[r].ssthresh,
            };
        }
        slow_start_then(subflows, r, ack.acked, |views, left| {
            self.increase(views, r, left)
        })
    }

    /// Every ACK of new data on `r`, in any state (Linux `pkts_acked`).
    fn pkts_acked(&mut self, _r: usize, _ack: &Ack) {}

    /// Subflow `r` changed state; `snd_una` is its cumulative ACK at that moment.
    fn set_state(&mut self, _r: usize, _state: CaState, _snd_una: u64) {}

    /// The coupling state on subflow `r` now, for traces; none by default.
    fn coupling_state(&self, _subflows: &[SubflowView], _r: usize) -> CouplingState {
        CouplingState::default()
    }
}

/// Slow start by the acknowledged packets up to ssthresh, then `increase(views, left)` for
/// what is left, as Linux's `tcp_reno_cong_avoid`. The views are copied only in the rare
/// ACK that crosses ssthresh, where `increase` must see the grown window.
pub(crate) fn slow_start_then(
    subflows: &[SubflowView],
    r: usize,
    acked: f64,
    increase: impl FnOnce(&[SubflowView], f64) -> f64,
) -> Window {
    let sf = subflows[r];
    let grow = acked.min((sf.ssthresh - sf.cwnd).max(0.0));
    let left = acked - grow;
    let cwnd = match (grow > 0.0, left > 0.0) {
        (_, false) => sf.cwnd + grow,
        (false, true) => increase(subflows, left),
        (true, true) => {
            let mut views = subflows.to_vec();
            views[r].cwnd = sf.cwnd + grow;
            increase(&views, left)
        }
    };
    Window {
        cwnd: cwnd.max(1.0),
        ssthresh: sf.ssthresh,
    }
}

/// The increase of a coupled algorithm on `r`: `per_packet` for each acknowledged packet,
/// or Reno's while `r` itself is not yet part of the coupling (no RTT sample).
pub(crate) fn coupled_increase(
    subflows: &[SubflowView],
    r: usize,
    acked: f64,
    per_packet: impl FnOnce() -> f64,
) -> f64 {
    if subflows[r].is_coupled() {
        subflows[r].cwnd + acked * per_packet()
    } else {
        reno_increase(subflows[r].cwnd, acked)
    }
}

/// Reno's increase per acknowledged packet: one packet per window per RTT.
pub(crate) fn reno_increase(cwnd: f64, acked: f64) -> f64 {
    let w = cwnd.max(1.0);
    w + acked / w
}

/// Reno's threshold after a loss: half the window, at least two packets.
pub(crate) fn reno_ssthresh(cwnd: f64) -> f64 {
    (cwnd / 2.0).max(2.0)
}
