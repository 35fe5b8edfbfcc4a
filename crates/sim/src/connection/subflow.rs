//! The client's side of one subflow: its TCP sender, its routes, and where it is in its
//! handshake.

use super::Path;
use crate::mptcp::{SendQueue, StaleWatch};
use crate::tcp::gso::{self, GsoBatch};
use crate::tcp::{CaState, Sender};
use mptcp_cc::SubflowView;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubflowState {
    /// Planned; the path manager has not opened it yet.
    Idle,
    /// SYN sent (MP_CAPABLE or MP_JOIN), no SYN-ACK yet.
    SynSent,
    /// MP_JOIN: SYN-ACK received and the third ACK sent; data may flow only once the
    /// server acknowledges that ACK (RFC 8684 section 3.2; Linux's subflow is
    /// "pre-established" until then).
    PreEstablished,
    Established,
    /// The handshake was given up after `MAX_SYN_RETRIES` retransmissions.
    Failed,
}

pub struct ClientSubflow {
    pub tx: Sender,
    pub path: Path,
    pub state: SubflowState,
    /// Whether it has gone silent at the data level (stale), and the count towards it.
    pub watch: StaleWatch,
    /// Retransmissions of this subflow's SYN (or of an MP_JOIN's third ACK).
    pub handshake_retries: u32,
    /// Data given to the subflow ahead of its window (Linux's default scheduler only).
    pub queue: SendQueue,
    /// The pacing rate averaged over the bursts it was given, bytes per second
    /// (`subflow->avg_pacing_rate`); 0 until the scheduler first looks at it.
    pub avg_pacing_rate: u64,
    /// Its send buffer, bytes (`sk_sndbuf`); autotuned (`mptcp::linger`), never shrinks.
    pub sndbuf: u64,
    /// The TSval of the latest ACK (or SYN-ACK) it took, echoed in its segments.
    pub ack_tsval_ms: u32,
    /// The skb of new data it is sending (see `tcp::gso`).
    skb: GsoBatch,
}

impl ClientSubflow {
    pub fn new(tx: Sender, path: Path) -> Self {
        ClientSubflow {
            tx,
            path,
            state: SubflowState::Idle,
            watch: StaleWatch::default(),
            handshake_retries: 0,
            queue: SendQueue::default(),
            avg_pacing_rate: 0,
            sndbuf: 0,
            ack_tsval_ms: 0,
            skb: GsoBatch::default(),
        }
    }

    pub fn is_established(&self) -> bool {
        self.state == SubflowState::Established
    }

    /// Holds data: sent and not acknowledged, or queued (Linux's
    /// `!tcp_rtx_and_write_queues_empty()`).
    pub fn is_busy(&self) -> bool {
        self.tx.outstanding() > 0 || !self.queue.is_empty()
    }

    /// Established with room for one more segment in its window.
    pub fn can_send(&self) -> bool {
        self.is_established() && self.tx.has_room()
    }

    /// Takes its next segment of new data (called once per segment sent, retransmissions
    /// aside) and says whether it ends an skb of several, which `__tcp_transmit_skb()`
    /// pushes. A segment that starts an skb sizes it from the `available` segments that
    /// could go (`gso::skb_segments`); later ones follow it.
    pub fn take_skb_segment(&mut self, available: u64) -> bool {
        if self.skb.is_done() {
            self.skb.start(gso::skb_segments(&self.tx, available));
        }
        self.skb.take()
    }

    /// Whether its last segment of new data completed an skb: `tcp_write_xmit()` has
    /// handed that skb to `tcp_event_new_data_sent()`.
    pub fn skb_sent(&self) -> bool {
        self.skb.is_done()
    }

    /// The sending pass ended, and with it any skb still being sent.
    pub fn end_skb(&mut self) {
        self.skb.end();
    }

    /// What the congestion control sees of this subflow.
    pub fn view(&self) -> SubflowView {
        SubflowView {
            cwnd: self.tx.cwnd(),
            ssthresh: self.tx.ssthresh,
            srtt_s: self.tx.rtt.srtt_s(),
            established: self.is_established(),
            in_recovery: self.tx.state != CaState::Open,
        }
    }
}
