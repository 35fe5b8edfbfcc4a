//! What one connection tells its source about the path it used.

/// The TCP sender's own estimates at the end of a connection (Linux keeps them in
/// `tcp_sock`: `srtt_us`, `mdev_us`, `rtt_min`, `total_retrans`, `segs_out`). Laid out as
/// `struct matcp_observation` of the eBPF version (crates/bpf/src/bpf/matcp_select.h), which
/// takes it as it is in the host tests.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Observation {
    /// Smoothed RTT (RFC 6298 SRTT), nanoseconds; 0 if no segment was ever timed.
    pub srtt_ns: u64,
    /// RFC 6298 RTTVAR, nanoseconds.
    pub rttvar_ns: u64,
    /// Smallest RTT sample, nanoseconds; 0 if none.
    pub min_rtt_ns: u64,
    /// The retransmission timeout at the end, backoff included, nanoseconds: what the
    /// connection waited for when nothing came back.
    pub rto_ns: u64,
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
}

impl Observation {
    /// The RTT this connection saw: its smoothed RTT, or, if nothing was ever timed (every
    /// segment timed out, the path may be down), its retransmission timeout, so that a dead
    /// path looks as slow as the waiting it caused.
    pub fn rtt_ns(&self) -> Option<u64> {
        match (self.srtt_ns, self.timeouts) {
            (0, 0) => None,
            (0, _) => Some(self.rto_ns.max(1)),
            (srtt, _) => Some(srtt),
        }
    }
}
