//! The sending side of one TCP subflow: SACK scoreboard (RFC 6675 with FACK loss marking),
//! NewReno when the peer does not SACK, recovery and loss states, RTO (RFC 6298).
//!
//! Window growth and reduction are decided by the connection's congestion control, which
//! sees every subflow; this type reports what happened (packets acked, a loss detected) and
//! applies what it is told. It also keeps what Linux's `tcp_cwnd_validate()` keeps about how
//! much of the window the last flight used, for the cwnd-limited rule (growth only while the
//! window is what limits the flow). Its retransmission timer lives in the connection's timer
//! table: this type says when to restart or stop it.

use super::rtt::RttEstimator;
use crate::packet::Packet;
pub use mptcp_cc::{CaState, CwndUsage};
use std::collections::VecDeque;

/// An outstanding segment on the scoreboard.
#[derive(Clone, Copy, Debug)]
struct Segment {
    flags: u8,
    /// The data sequence number it carries (MPTCP's DSS mapping; equal to the subflow
    /// sequence number for plain TCP).
    dsn: u64,
}

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;
/// Segments SACKed above a hole before it counts as lost (RFC 6675 DupThresh).
const DUP_THRESH: u64 = 3;
pub const INITIAL_CWND: f64 = 10.0;

/// What one ACK did, for the connection to act on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckResult {
    /// Segments newly acknowledged cumulatively.
    pub acked: u64,
    /// The RTT this ACK measured, nanoseconds.
    pub rtt_ns: Option<u64>,
    /// A new loss was found while in the Open state: the window must be reduced.
    pub loss_detected: bool,
    /// What the ACK means for the retransmission timer.
    pub rto: RtoUpdate,
}

/// The retransmission timer after an ACK (RFC 6298 section 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoUpdate {
    /// New data was acknowledged and more is outstanding: restart it.
    Restart,
    /// Keep it as it is (armed if it is not).
    #[default]
    Keep,
    /// Nothing is outstanding: stop it.
    Stop,
}

pub struct Sender {
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Segments; changed only through `set_cwnd` (and a timeout), which keep `window`.
    cwnd: f64,
    /// `cwnd` in whole segments, at least one: the send window, read several times per
    /// packet (a saturating float-to-integer conversion is a dozen instructions).
    window: u64,
    pub ssthresh: f64,
    pub state: CaState,
    recovery_point: u64,
    /// Segments `[snd_una, snd_nxt)`: flags and data sequence number.
    board: VecDeque<Segment>,
    /// The SACK blocks of the previous ACK, as applied (clipped to what was outstanding):
    /// everything in them is marked already, so a block an ACK repeats costs nothing
    /// (Linux's `recv_sack_cache` in `tcp_sacktag_write_queue()`).
    sack_cache: [(u64, u64); 3],
    sacked_out: u64,
    lost_out: u64,
    retrans_out: u64,
    /// Without SACK, duplicate ACKs stand for segments that left the network.
    dup_acks: u64,
    /// One past the highest SACKed segment.
    fack: u64,
    lost_scan: u64,
    retx_scan: u64,
    pub rtt: RttEstimator,
    /// The largest window the sender may use, segments: Linux's `snd_cwnd_clamp`, and the
    /// window cap of ns-2's TCP (`window_`). cwnd never exceeds it, so a loss halves the
    /// window actually in use.
    pub cwnd_clamp: u64,
    /// How much of the window the last flights used (Linux's `is_cwnd_limited`,
    /// `max_packets_out`), and the sequence that ends the current measurement window
    /// (`cwnd_usage_seq`).
    pub usage: CwndUsage,
    usage_seq: u64,
    pub sack: bool,
    pub retransmits: u64,
    pub timeouts: u64,
}

impl Sender {
    pub fn new(sack: bool, cwnd_clamp: u64) -> Self {
        let mut s = Sender {
            snd_una: 0,
            snd_nxt: 0,
            cwnd: 0.0,
            window: 1,
            ssthresh: f64::INFINITY,
            state: CaState::Open,
            recovery_point: 0,
            board: VecDeque::new(),
            sack_cache: [(0, 0); 3],
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            dup_acks: 0,
            fack: 0,
            lost_scan: 0,
            retx_scan: 0,
            rtt: RttEstimator::default(),
            cwnd_clamp: cwnd_clamp.max(1),
            usage: CwndUsage::default(),
            usage_seq: 0,
            sack,
            retransmits: 0,
            timeouts: 0,
        };
        s.set_cwnd(INITIAL_CWND.min(cwnd_clamp.max(1) as f64));
        s
    }

    /// The congestion window, segments.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    pub fn outstanding(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Segments believed to be in the network (RFC 6675 "pipe", Linux packets_in_flight).
    pub fn pipe(&self) -> u64 {
        (self.outstanding() + self.retrans_out)
            .saturating_sub(self.sacked_out + self.lost_out + self.dup_acks)
    }

    /// The window the sender may fill, whole segments.
    pub fn send_window(&self) -> u64 {
        self.window
    }

    /// Sets the congestion window, never below one segment nor above the clamp (as Linux's
    /// `tcp_snd_cwnd_set` callers apply `snd_cwnd_clamp`).
    pub fn set_cwnd(&mut self, cwnd: f64) {
        self.cwnd = cwnd.max(1.0).min(self.cwnd_clamp as f64);
        self.window = (self.cwnd as u64).max(1);
    }

    /// Whether the window may grow now: Linux's `tcp_is_cwnd_limited()`.
    pub fn cwnd_limited(&self) -> bool {
        mptcp_cc::is_cwnd_limited(self.cwnd, self.ssthresh, self.usage)
    }

    /// After a sending pass that sent something or stopped at the window: records whether
    /// the window was the limit, as Linux's `tcp_cwnd_validate()` called from
    /// `tcp_write_xmit()` with `is_cwnd_limited = packets in flight >= cwnd`. The record
    /// holds for a window of data; within it, a cwnd-limited pass or a larger flight
    /// replaces it.
    pub fn cwnd_validate(&mut self) {
        let is_cwnd_limited = self.pipe() >= self.send_window();
        let packets_out = self.outstanding();
        if self.snd_una >= self.usage_seq
            || is_cwnd_limited
            || (!self.usage.is_cwnd_limited && packets_out > self.usage.max_packets_out)
        {
            self.usage = CwndUsage {
                is_cwnd_limited,
                max_packets_out: packets_out,
            };
            self.usage_seq = self.snd_nxt;
        }
    }

    pub fn all_acked(&self) -> bool {
        self.snd_una == self.snd_nxt
    }

    pub fn flags(&self, seq: u64) -> u8 {
        self.board[(seq - self.snd_una) as usize].flags
    }

    fn set(&mut self, seq: u64, flag: u8) {
        self.board[(seq - self.snd_una) as usize].flags |= flag;
    }

    /// The data sequence number carried by outstanding segment `seq`.
    pub fn dsn_of(&self, seq: u64) -> u64 {
        self.board[(seq - self.snd_una) as usize].dsn
    }

    /// The window has room for one more segment in the network.
    pub fn has_room(&self) -> bool {
        self.pipe() < self.send_window()
    }

    /// The next lost segment to retransmit, if the window allows one.
    pub fn next_retransmit(&mut self) -> Option<u64> {
        if self.lost_out <= self.retrans_out || !self.has_room() {
            return None;
        }
        self.retx_scan = self.retx_scan.max(self.snd_una);
        while self.retx_scan < self.snd_nxt {
            let s = self.retx_scan;
            let f = self.flags(s);
            if f & LOST != 0 && f & (RETRANS | SACKED) == 0 {
                self.set(s, RETRANS);
                self.retrans_out += 1;
                self.retransmits += 1;
                return Some(s);
            }
            self.retx_scan += 1;
        }
        None
    }

    /// Sends a new segment carrying data sequence number `dsn`; returns its subflow
    /// sequence number. The caller checked `has_room`.
    pub fn send_new(&mut self, dsn: u64) -> u64 {
        let s = self.snd_nxt;
        self.board.push_back(Segment { flags: 0, dsn });
        self.snd_nxt += 1;
        s
    }

    /// Data sequence numbers of the segments still in flight or lost (not SACKed):
    /// what MPTCP reinjects on other subflows when this one stalls.
    pub fn unsacked_dsns(&self) -> impl Iterator<Item = u64> + '_ {
        self.board
            .iter()
            .filter(|seg| seg.flags & SACKED == 0)
            .map(|seg| seg.dsn)
    }

    /// Processes one ACK.
    pub fn on_ack(&mut self, now: u64, ack: &Packet) -> AckResult {
        let mut res = AckResult::default();
        let mut newly_lost = false;
        if ack.seq > self.snd_una && ack.seq <= self.snd_nxt {
            let n = ack.seq - self.snd_una;
            let marked = self.sacked_out + self.lost_out + self.retrans_out > 0;
            for _ in 0..n {
                let f = self.board.pop_front().expect("outstanding").flags;
                if marked {
                    self.sacked_out -= (f & SACKED != 0) as u64;
                    self.lost_out -= (f & LOST != 0 && f & SACKED == 0) as u64;
                    self.retrans_out -= (f & RETRANS != 0 && f & SACKED == 0) as u64;
                }
            }
            self.snd_una = ack.seq;
            res.acked = n;
            if ack.ts > 0 {
                let r = now.saturating_sub(ack.ts);
                self.rtt.sample(r);
                res.rtt_ns = Some(r);
            }
            self.rtt.backoff = 0;
            self.dup_acks = self.dup_acks.saturating_sub(n);
            if !self.sack && self.state == CaState::Open {
                self.dup_acks = 0;
            }
            if self.state != CaState::Open && self.snd_una >= self.recovery_point {
                if self.state == CaState::Recovery {
                    self.set_cwnd(self.ssthresh);
                }
                self.state = CaState::Open;
                self.dup_acks = 0;
            } else if self.state == CaState::Recovery && !self.sack && self.outstanding() > 0 {
                // NewReno partial ACK: the next hole is lost too.
                newly_lost |= self.mark_lost(self.snd_una);
            }
        } else if ack.seq == self.snd_una && self.outstanding() > 0 && !self.sack {
            self.dup_acks = (self.dup_acks + 1).min(self.outstanding().saturating_sub(1));
            if self.dup_acks >= DUP_THRESH && self.state == CaState::Open {
                newly_lost |= self.mark_lost(self.snd_una);
            }
        }
        if self.sack {
            let cache = self.sack_cache;
            for (k, &(a, b)) in ack.sack.iter().enumerate() {
                self.sack_cache[k] = (0, 0);
                if b <= a {
                    continue;
                }
                let start = (ack.seq + a as u64).max(self.snd_una);
                let end = (ack.seq + b as u64).min(self.snd_nxt);
                if start >= end {
                    continue;
                }
                self.sack_cache[k] = (start, end);
                self.sack_range(start, end, &cache);
                self.fack = self.fack.max(end);
            }
            // FACK: a segment with DupThresh SACKed segments' worth above it is lost.
            let limit = self.fack.saturating_sub(DUP_THRESH);
            self.lost_scan = self.lost_scan.max(self.snd_una);
            while self.lost_scan < limit {
                newly_lost |= self.mark_lost(self.lost_scan);
                self.lost_scan += 1;
            }
        }
        res.rto = match (self.outstanding() > 0, res.acked > 0) {
            (false, _) => RtoUpdate::Stop,
            (true, true) => RtoUpdate::Restart,
            (true, false) => RtoUpdate::Keep,
        };
        res.loss_detected = newly_lost && self.state == CaState::Open;
        res
    }

    /// Marks `[start, end)` SACKed, skipping what the previous ACK's blocks covered.
    fn sack_range(&mut self, start: u64, end: u64, cache: &[(u64, u64); 3]) {
        let mut s = start;
        while s < end {
            if let Some(&(_, e)) = cache.iter().find(|&&(a, e)| a <= s && s < e) {
                s = e;
                continue;
            }
            let stop = cache
                .iter()
                .filter(|&&(a, _)| a > s && a < end)
                .map(|&(a, _)| a)
                .min()
                .unwrap_or(end);
            for q in s..stop {
                let f = self.flags(q);
                if f & SACKED == 0 {
                    self.set(q, SACKED);
                    self.sacked_out += 1;
                    self.lost_out -= (f & LOST != 0) as u64;
                    self.retrans_out -= (f & RETRANS != 0) as u64;
                }
            }
            s = stop;
        }
    }

    fn mark_lost(&mut self, seq: u64) -> bool {
        let f = self.flags(seq);
        if f & (SACKED | LOST) != 0 {
            return false;
        }
        self.set(seq, LOST);
        self.lost_out += 1;
        self.retx_scan = self.retx_scan.min(seq);
        true
    }

    /// Starts fast recovery with the threshold the congestion control chose.
    pub fn enter_recovery(&mut self, ssthresh: f64) {
        self.ssthresh = ssthresh.max(1.0);
        self.set_cwnd(self.ssthresh);
        self.state = CaState::Recovery;
        self.recovery_point = self.snd_nxt;
    }

    /// The retransmission timer fired. `ssthresh` is the congestion control's reduction,
    /// applied only when the timeout interrupts the Open state (as Linux does). The caller
    /// restarts the timer with the backed-off `rtt.rto()`.
    pub fn on_rto(&mut self, ssthresh: f64) {
        if self.state == CaState::Open {
            self.ssthresh = ssthresh.max(1.0);
        }
        self.cwnd = 1.0;
        self.window = 1;
        self.state = CaState::Loss;
        self.recovery_point = self.snd_nxt;
        self.lost_out = 0;
        self.retrans_out = 0;
        self.dup_acks = 0;
        for seg in self.board.iter_mut() {
            seg.flags &= SACKED;
            if seg.flags == 0 {
                seg.flags = LOST;
                self.lost_out += 1;
            }
        }
        self.retx_scan = self.snd_una;
        self.timeouts += 1;
        self.rtt.backoff += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mptcp_cc::CongestionControl;

    fn ack(seq: u64, sack: &[(u64, u64)], ts: u64) -> Packet {
        let mut blocks = [(0u32, 0u32); 3];
        for (i, &(a, b)) in sack.iter().enumerate() {
            blocks[i] = ((a - seq) as u32, (b - seq) as u32);
        }
        Packet {
            seq,
            dsn: seq,
            ts,
            rwnd: 1000,
            sack: blocks,
            ..Packet::control(
                crate::ids::ConnId(0),
                crate::ids::SubflowId(0),
                crate::packet::Kind::Ack,
                net::RouteId(0),
            )
        }
    }

    #[derive(Debug, PartialEq)]
    enum Next {
        Retransmit(u64),
        New(u64),
    }

    /// Sends what the window allows: retransmissions first, then new data.
    fn send_all(s: &mut Sender) -> Vec<Next> {
        let mut out = Vec::new();
        loop {
            if let Some(q) = s.next_retransmit() {
                out.push(Next::Retransmit(q));
            } else if s.has_room() {
                let n = s.snd_nxt;
                out.push(Next::New(s.send_new(n)));
            } else {
                return out;
            }
        }
    }

    #[test]
    fn initial_window_and_window_limit() {
        let mut s = Sender::new(true, u64::MAX);
        assert_eq!(send_all(&mut s).len(), 10);
        let mut s = Sender::new(true, 3);
        assert_eq!(
            send_all(&mut s).len(),
            3,
            "the window limit caps the flight"
        );
        s.set_cwnd(100.0);
        assert_eq!(s.cwnd, 3.0, "and the window itself");
    }

    #[test]
    fn cwnd_limited_as_tcp_cwnd_validate_records_it() {
        // A full window in flight: cwnd-limited.
        let mut s = Sender::new(true, u64::MAX);
        send_all(&mut s);
        s.cwnd_validate();
        assert!(s.usage.is_cwnd_limited && s.cwnd_limited());
        // Everything acknowledged and only 2 segments sent in the next window (an
        // application or receive-window limit): not cwnd-limited once that window began,
        // and in avoidance the window may not grow.
        s.ssthresh = 5.0;
        s.on_ack(1, &ack(10, &[], 0));
        s.send_new(10);
        s.send_new(11);
        s.cwnd_validate();
        assert_eq!(
            s.usage,
            CwndUsage {
                is_cwnd_limited: false,
                max_packets_out: 2
            }
        );
        assert!(!s.cwnd_limited());
        // In slow start it may, up to twice the largest flight of the window.
        s.ssthresh = f64::INFINITY;
        s.set_cwnd(3.0);
        assert!(s.cwnd_limited());
        s.set_cwnd(4.0);
        assert!(!s.cwnd_limited());
    }

    #[test]
    fn sack_marks_the_hole_lost_and_retransmits_it_first() {
        let mut s = Sender::new(true, u64::MAX);
        send_all(&mut s);
        // Segment 0 lost; 1, 2 SACKed: not yet three above it.
        let r = s.on_ack(1, &ack(0, &[(1, 3)], 0));
        assert!(!r.loss_detected);
        let r = s.on_ack(2, &ack(0, &[(1, 4)], 0));
        assert!(r.loss_detected, "three SACKed above the hole");
        s.enter_recovery(5.0);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(s.pipe(), 10 - 3 - 1);
        // pipe 6 >= cwnd 5: nothing may go until more leaves the network.
        assert_eq!(send_all(&mut s), vec![]);
        s.on_ack(3, &ack(0, &[(1, 6)], 0));
        assert_eq!(s.next_retransmit(), Some(0));
        // The retransmission arrives: everything up to 6 is acknowledged, recovery goes on
        // until the recovery point (10).
        let r = s.on_ack(4, &ack(6, &[], 3));
        assert_eq!(r.acked, 6);
        assert_eq!(s.state, CaState::Recovery);
        s.on_ack(5, &ack(10, &[], 4));
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.cwnd, 5.0);
        assert_eq!(s.retransmits, 1);
    }

    #[test]
    fn newreno_three_dupacks_then_partial_ack() {
        let mut s = Sender::new(false, u64::MAX);
        send_all(&mut s);
        // Segments 0 and 5 lost.
        assert!(!s.on_ack(1, &ack(0, &[], 0)).loss_detected);
        assert!(!s.on_ack(1, &ack(0, &[], 0)).loss_detected);
        assert!(s.on_ack(1, &ack(0, &[], 0)).loss_detected);
        s.enter_recovery(5.0);
        for _ in 0..4 {
            s.on_ack(2, &ack(0, &[], 0));
        }
        assert_eq!(s.next_retransmit(), Some(0));
        // Partial ACK up to the second hole: it is retransmitted at once.
        s.on_ack(3, &ack(5, &[], 2));
        assert_eq!(s.state, CaState::Recovery);
        let sent = send_all(&mut s);
        assert_eq!(sent.first(), Some(&Next::Retransmit(5)));
    }

    #[test]
    fn timeout_resends_from_the_first_unacked_and_backs_off() {
        let mut s = Sender::new(true, u64::MAX);
        send_all(&mut s);
        assert_eq!(s.rtt.rto(), super::super::rtt::INITIAL_RTO);
        s.on_rto(5.0);
        assert_eq!((s.cwnd, s.ssthresh, s.state), (1.0, 5.0, CaState::Loss));
        assert_eq!(send_all(&mut s), vec![Next::Retransmit(0)]);
        s.cwnd_validate();
        assert_eq!(
            s.rtt.rto(),
            2 * super::super::rtt::INITIAL_RTO,
            "backed off"
        );
        // A second timeout in Loss keeps the first reduction.
        s.on_rto(1.0);
        assert_eq!(s.ssthresh, 5.0);
        // Slow start back towards ssthresh after the timeout (the congestion control's
        // cong_avoid, as the connection calls it).
        s.on_ack(10, &ack(1, &[], 1));
        let view = mptcp_cc::SubflowView {
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            srtt_s: s.rtt.srtt_s(),
            established: true,
            in_recovery: true,
        };
        let w = mptcp_cc::Reno.cong_avoid(
            &[view],
            0,
            &mptcp_cc::Ack {
                acked: 1.0,
                cwnd_limited: s.cwnd_limited(),
                ..Default::default()
            },
        );
        let left = 1.0 - (w.cwnd - s.cwnd);
        assert_eq!((w.cwnd, left), (2.0, 0.0));
    }

    #[test]
    fn rtt_from_echoed_timestamps() {
        let mut s = Sender::new(true, u64::MAX);
        send_all(&mut s);
        s.on_ack(150_000_000, &ack(2, &[], 50_000_000));
        assert_eq!(s.rtt.srtt, 100_000_000);
    }
}
