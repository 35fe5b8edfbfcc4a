//! Congestion-control algorithms as pure functions of the state of a connection's subflows.
//! No I/O, no clock, no packets: the simulator, the tests and (through shared vectors) the
//! eBPF C code all call the same rules.
//!
//! Slow start, fast retransmit and RTO belong to the TCP machinery that calls this; an
//! algorithm decides only the congestion-avoidance increase and the decrease on loss, which
//! is where coupled algorithms differ from Reno.

mod reno;

pub use reno::Reno;

/// What an algorithm may read of one subflow of the connection.
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
    pub fn is_coupled(&self) -> bool {
        self.established && self.srtt_s > 0.0
    }
}

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// Congestion-avoidance increase on subflow `r` for `acked` newly acknowledged packets.
    /// Returns the new window of `r`.
    fn on_ack(&mut self, subflows: &[SubflowView], r: usize, acked: f64) -> f64;
    /// A loss event on subflow `r`: returns the new slow-start threshold (the window once
    /// recovery ends).
    fn on_loss(&mut self, subflows: &[SubflowView], r: usize) -> f64;
}

/// The names the simulator accepts in a scenario's `cc` field.
pub const ALGORITHMS: &[&str] = &["reno"];

pub fn by_name(name: &str) -> Option<Box<dyn CongestionControl>> {
    match name {
        "reno" => Some(Box::new(Reno)),
        _ => None,
    }
}
