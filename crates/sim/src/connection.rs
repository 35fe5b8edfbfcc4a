//! A connection: one or more subflows sharing one congestion-control instance, one data
//! sequence space and one receive buffer. Plain TCP is the one-subflow case.

use crate::mptcp::{DataReceiver, DataSender};
use crate::tcp::{CaState, Receiver, Sender};
use mptcp_cc::{CongestionControl, SubflowView};
use scenario::spec::SchedulerKind;

pub struct Subflow {
    pub tx: Sender,
    pub rx: Receiver,
    /// Route ids of the data direction and the ACK direction.
    pub fwd: u32,
    pub rev: u32,
    /// MP_JOIN done (the first subflow is established when the connection opens).
    pub established: bool,
    /// Timed out and not heard from since: the scheduler avoids it and its data was
    /// reinjected on the other subflows.
    pub stale: bool,
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
            established: self.established,
            in_recovery: self.tx.state != CaState::Open,
        }
    }
}

pub struct Connection {
    /// The flow instance this connection serves.
    pub flow: u32,
    pub mptcp: bool,
    pub subflows: Vec<Subflow>,
    pub cc: Box<dyn CongestionControl>,
    pub data: DataSender,
    pub recv: DataReceiver,
    pub scheduler: SchedulerKind,
    /// Round-robin position.
    pub turn: usize,
    /// Total payload bytes the application will send (`u64::MAX` for bulk).
    pub total_bytes: u64,
    /// Payload bytes delivered in order to the receiving application.
    pub delivered_bytes: u64,
    /// Last time the data level advanced (for an application that gives up and reconnects).
    pub last_progress: u64,
    pub closed: bool,
}

impl Connection {
    pub fn views(&self, out: &mut Vec<SubflowView>) {
        out.clear();
        out.extend(self.subflows.iter().map(Subflow::view));
    }
}
