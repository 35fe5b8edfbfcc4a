//! A connection: one or more subflows sharing one congestion-control instance. Plain TCP is
//! the one-subflow case; MPTCP adds subflows, data-level sequencing and a shared buffer.

use crate::tcp::{CaState, Receiver, Sender};
use mptcp_cc::{CongestionControl, SubflowView};

pub struct Subflow {
    pub tx: Sender,
    pub rx: Receiver,
    /// Route ids of the data direction and the ACK direction.
    pub fwd: u32,
    pub rev: u32,
    /// Times of the timer events already in the event queue (to avoid duplicates).
    pub rto_event: Option<u64>,
    pub delack_event: Option<u64>,
}

impl Subflow {
    pub fn view(&self) -> SubflowView {
        SubflowView {
            cwnd: self.tx.cwnd,
            ssthresh: self.tx.ssthresh,
            srtt_s: self.tx.rtt.srtt_s(),
            established: true,
            in_recovery: self.tx.state != CaState::Open,
        }
    }
}

pub struct Connection {
    /// The flow instance this connection serves.
    pub flow: u32,
    pub subflows: Vec<Subflow>,
    pub cc: Box<dyn CongestionControl>,
    /// Total payload bytes the application will send (`u64::MAX` for bulk).
    pub total_bytes: u64,
    /// Payload bytes delivered in order to the receiving application.
    pub delivered_bytes: u64,
    pub opened_at: u64,
    pub closed: bool,
}

impl Connection {
    pub fn views(&self, out: &mut Vec<SubflowView>) {
        out.clear();
        out.extend(self.subflows.iter().map(Subflow::view));
    }
}
