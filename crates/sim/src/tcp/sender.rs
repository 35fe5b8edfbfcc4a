//! The sending side of one TCP subflow as Linux runs it: SACK scoreboard, RACK-TLP loss
//! detection (RFC 8985; `net.ipv4.tcp_recovery = 1` and `tcp_early_retrans = 3`, Linux's
//! defaults), NewReno when the peer does not SACK, recovery and loss states, and the one
//! transmission timer Linux multiplexes between the retransmission timeout (RFC 6298),
//! the tail loss probe and RACK's reordering timeout.
//!
//! Window growth and the threshold a loss reduces to are decided by the connection's
//! congestion control, which sees every subflow; this type reports what happened (packets
//! acked, a loss detected) and applies what it is told. In fast recovery it shrinks the
//! window to that threshold itself, ACK by ACK, as Linux does (`super::prr`). It also
//! keeps what Linux's `tcp_cwnd_validate()` keeps about how much of the window the last
//! flight used, for the cwnd-limited rule (growth only while the window is what limits the
//! flow). Its transmission timer's deadline lives in the
//! connection's timer table; this type says what the deadline is and what it is for.

use super::prr::{Delivery, Prr};
use super::rack::{self, Rack};
use super::rtt::{INITIAL_RTO, MIN_RTO, RttEstimator};
use crate::packet::Packet;
pub use mptcp_cc::{CaState, CwndUsage};
use net::Nanos;
use std::collections::VecDeque;

/// An outstanding segment on the scoreboard.
#[derive(Clone, Copy, Debug)]
struct Segment {
    flags: u8,
    /// The data sequence number it carries (MPTCP's DSS mapping; equal to the subflow
    /// sequence number for plain TCP).
    dsn: u64,
    /// When it was last sent (`skb->skb_mstamp_ns`).
    sent_at: Nanos,
}

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// A retransmission of it is in flight (Linux's `TCPCB_SACKED_RETRANS`).
const RETRANS: u8 = 4;
/// It was retransmitted at some time (`TCPCB_EVER_RETRANS`).
const EVER_RETRANS: u8 = 8;
/// It ends what the sender handed TCP in one go and carries PSH (`TCPHDR_PSH`, set by
/// `tcp_mark_push()`); a retransmission of it carries PSH again, as the skb keeps its
/// flags.
const PUSH: u8 = 16;
/// Segments SACKed above a hole before it counts as lost (RFC 6675 DupThresh, Linux's
/// `tcp_reordering`): NewReno's duplicate-ACK threshold, and where RACK stops waiting.
const DUP_THRESH: u64 = 3;
pub const INITIAL_CWND: f64 = 10.0;
/// The slack Linux adds to the probe and reordering timeouts (`TCP_TIMEOUT_MIN_US`).
pub const TIMEOUT_MIN: Nanos = 2_000_000;

/// What tagging one SACK block did.
struct SackTagged {
    /// Segments newly SACKed.
    sacked: u64,
    /// The earliest send time among them.
    earliest: Option<Nanos>,
    /// The highest of them never retransmitted, and when it was sent (`last_sackt`).
    last_original: Option<(u64, Nanos)>,
}

/// What the transmission timer is armed for (`icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XmitTimer {
    /// The retransmission timeout (`ICSK_TIME_RETRANS`).
    Retransmit,
    /// The tail loss probe (`ICSK_TIME_LOSS_PROBE`).
    LossProbe,
    /// RACK's reordering window ends for a segment not yet marked lost
    /// (`ICSK_TIME_REO_TIMEOUT`).
    ReorderTimeout,
}

/// What the transmission timer's expiry asks of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerAction {
    /// Nothing more than what the sender did itself.
    None,
    /// A retransmission timeout: reduce the window (`Sender::on_rto`).
    Timeout,
    /// RACK marked segments lost outside recovery: enter fast recovery.
    EnterRecovery,
    /// A tail loss probe is due: send it (`Sender::probe`).
    Probe,
}

/// The tail loss probe the timer asked for (`tcp_send_loss_probe()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// One new segment, whatever the congestion window.
    NewData,
    /// The last segment sent, again.
    Resend(u64),
}

/// A probe's episode (`tp->tlp_high_seq`, `tp->tlp_retrans`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ProbeEpisode {
    /// `snd_nxt` when the probe went.
    high_seq: u64,
    /// The probe re-sent a segment (rather than new data).
    resent: bool,
}

/// What one ACK did, for the connection to act on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckResult {
    /// Segments newly acknowledged cumulatively.
    pub acked: u64,
    /// What it delivered (`tcp_newly_delivered()`): what fast recovery's window and the
    /// congestion control's growth count, and what a recovery this ACK makes the caller
    /// enter starts from. `None` for an ACK below `snd_una`, which Linux reads for its
    /// SACK blocks only: `tcp_ack()`'s `old_ack` path skips `tcp_cong_control()`.
    pub delivery: Option<Delivery>,
    /// The RTT this ACK measured for the smoothed estimate, nanoseconds: from the echoed
    /// timestamp, as the oldest segment it acknowledged saw it.
    pub srtt_sample_ns: Option<u64>,
    /// The RTT the congestion control is given, nanoseconds (`ack_sample.rtt_us`, Linux's
    /// `ca_rtt_us`): since the most recently sent segment this ACK newly acknowledged or
    /// SACKed was sent, never one that was retransmitted (Karn), else from the timestamp.
    /// `tcp_clean_rtx_queue()` and `tcp_ack_update_rtt()`.
    pub ca_rtt_ns: Option<u64>,
    /// Loss was found outside recovery (or a retransmission was lost again after a
    /// timeout): enter fast recovery.
    pub loss_detected: bool,
    /// A tail loss probe's episode ended showing that it repaired a loss: reduce the window
    /// once, without recovery (`tcp_process_tlp_ack()`).
    pub probe_repaired_loss: bool,
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
    /// Fast recovery's window reduction (`tcp_cwnd_reduction()`): there exactly while the
    /// state is `Recovery`.
    prr: Option<Prr>,
    /// Segments `[snd_una, snd_nxt)`: flags, data sequence number, last send time.
    board: VecDeque<Segment>,
    /// Transmissions in the order they were made, each `(seq, sent_at)`: Linux's
    /// `tsorted_sent_queue`, which RACK walks oldest first. An entry is dropped once its
    /// segment is acknowledged, SACKed, marked lost or sent again (then it is entered anew).
    sent_order: VecDeque<(u64, Nanos)>,
    rack: Rack,
    /// The SACK blocks of the previous ACK, as applied (clipped to what was outstanding):
    /// everything in them is marked already, so a block an ACK repeats costs nothing
    /// (Linux's `recv_sack_cache` in `tcp_sacktag_write_queue()`).
    sack_cache: [(u64, u64); 3],
    sacked_out: u64,
    lost_out: u64,
    retrans_out: u64,
    /// Without SACK, duplicate ACKs stand for segments that left the network.
    dup_acks: u64,
    retx_scan: u64,
    /// The transmission timer: what for, and when.
    timer: Option<(XmitTimer, Nanos)>,
    /// The tail loss probe due to go out now.
    probe: Option<Probe>,
    /// The probe episode under way, if any (one at a time).
    episode: Option<ProbeEpisode>,
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
    /// Segments sent again (fast retransmissions, after timeouts, and probes that re-send):
    /// Linux's `tcpi_total_retrans`.
    pub retransmits: u64,
    /// Retransmission timeouts (`TcpExtTCPTimeouts`).
    pub timeouts: u64,
    /// Tail loss probes sent (`TcpExtTCPLossProbes`).
    pub loss_probes: u64,
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
            prr: None,
            board: VecDeque::new(),
            sent_order: VecDeque::new(),
            rack: Rack::default(),
            sack_cache: [(0, 0); 3],
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            dup_acks: 0,
            retx_scan: 0,
            timer: None,
            probe: None,
            episode: None,
            rtt: RttEstimator::default(),
            cwnd_clamp: cwnd_clamp.max(1),
            usage: CwndUsage::default(),
            usage_seq: 0,
            sack,
            retransmits: 0,
            timeouts: 0,
            loss_probes: 0,
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

    fn segment(&mut self, seq: u64) -> &mut Segment {
        &mut self.board[(seq - self.snd_una) as usize]
    }

    fn set(&mut self, seq: u64, flag: u8) {
        self.segment(seq).flags |= flag;
    }

    /// Whether outstanding segment `seq` carries PSH.
    pub fn pushed(&self, seq: u64) -> bool {
        self.flags(seq) & PUSH != 0
    }

    /// The data sequence number carried by outstanding segment `seq`.
    pub fn dsn_of(&self, seq: u64) -> u64 {
        self.board[(seq - self.snd_una) as usize].dsn
    }

    /// The window has room for one more segment in the network.
    pub fn has_room(&self) -> bool {
        self.pipe() < self.send_window()
    }

    /// When the transmission timer is due, if it is armed.
    pub fn timer_deadline(&self) -> Option<Nanos> {
        self.timer.map(|(_, at)| at)
    }

    /// What the transmission timer is armed for, if it is.
    pub fn timer_kind(&self) -> Option<XmitTimer> {
        self.timer.map(|(kind, _)| kind)
    }

    /// The tail loss probe the timer asked for, if one is due.
    pub fn probe(&self) -> Option<Probe> {
        self.probe
    }

    /// The next lost segment to retransmit at `now`, if the window allows one
    /// (`tcp_xmit_retransmit_queue()`): retransmitting the first unacknowledged segment
    /// restarts the retransmission timer, unless RACK's reordering timer is pending.
    pub fn next_retransmit(&mut self, now: Nanos) -> Option<u64> {
        if self.lost_out <= self.retrans_out || !self.has_room() {
            return None;
        }
        self.retx_scan = self.retx_scan.max(self.snd_una);
        while self.retx_scan < self.snd_nxt {
            let s = self.retx_scan;
            let f = self.flags(s);
            if f & LOST != 0 && f & (RETRANS | SACKED) == 0 {
                self.retrans_out += 1;
                self.resend(s, RETRANS, now);
                self.count_send();
                if s == self.snd_una && self.timer_kind() != Some(XmitTimer::ReorderTimeout) {
                    self.timer = Some((XmitTimer::Retransmit, now + self.rtt.rto()));
                }
                return Some(s);
            }
            self.retx_scan += 1;
        }
        None
    }

    /// Records segment `seq` sent again at `now`.
    fn resend(&mut self, seq: u64, flag: u8, now: Nanos) {
        let seg = self.segment(seq);
        seg.flags |= flag | EVER_RETRANS;
        seg.sent_at = now;
        self.sent_order.push_back((seq, now));
        self.retransmits += 1;
    }

    /// Sends a new segment carrying data sequence number `dsn` at `now`, with PSH if
    /// `push`; returns its subflow sequence number. The caller checked `has_room` (or sends
    /// a probe). The first segment in flight arms the retransmission timer, as does one
    /// sent while a probe is pending (`tcp_event_new_data_sent()`).
    pub fn send_new(&mut self, dsn: u64, push: bool, now: Nanos) -> u64 {
        let s = self.snd_nxt;
        let first_in_flight = self.outstanding() == 0;
        self.board.push_back(Segment {
            flags: if push { PUSH } else { 0 },
            dsn,
            sent_at: now,
        });
        self.sent_order.push_back((s, now));
        self.snd_nxt += 1;
        self.count_send();
        if first_in_flight || self.timer_kind() == Some(XmitTimer::LossProbe) {
            self.rearm_rto(now);
        }
        s
    }

    /// After a sending pass that sent new data: the tail loss probe is scheduled, or the
    /// retransmission timer stays (the end of `tcp_write_xmit()`).
    pub fn after_new_data(&mut self, now: Nanos) {
        self.schedule_loss_probe(now, false);
    }

    /// Data sequence numbers of the segments still in flight or lost (not SACKed):
    /// what MPTCP reinjects on other subflows when this one stalls.
    pub fn unsacked_dsns(&self) -> impl Iterator<Item = u64> + '_ {
        self.board
            .iter()
            .filter(|seg| seg.flags & SACKED == 0)
            .map(|seg| seg.dsn)
    }

    /// The retransmission timeout from `now`, or, while the probe or reordering timer
    /// stands in for it, from when the first unacknowledged segment was last sent
    /// (`tcp_rearm_rto()`, `tcp_rto_delta_us()`); stopped when nothing is outstanding.
    fn rearm_rto(&mut self, now: Nanos) {
        if self.outstanding() == 0 {
            self.timer = None;
            return;
        }
        let at = match self.timer_kind() {
            Some(XmitTimer::LossProbe | XmitTimer::ReorderTimeout) => {
                (self.board[0].sent_at + self.rtt.rto()).max(now + 1)
            }
            _ => now + self.rtt.rto(),
        };
        self.timer = Some((XmitTimer::Retransmit, at));
    }

    /// Arms the tail loss probe in place of the retransmission timer when the connection
    /// is SACK-capable, has data in flight and is not recovering (`tcp_schedule_loss_probe()`):
    /// two smoothed RTTs, plus the minimum RTO when a single segment is out (its ACK may be
    /// delayed), never later than the retransmission timeout would fire. `advancing_rto`:
    /// called on an ACK that restarts the retransmission timeout.
    fn schedule_loss_probe(&mut self, now: Nanos, advancing_rto: bool) -> bool {
        if !self.sack || self.outstanding() == 0 || self.state != CaState::Open {
            return false;
        }
        let mut timeout = if self.rtt.srtt > 0 {
            let slack = if self.outstanding() == 1 {
                MIN_RTO
            } else {
                TIMEOUT_MIN
            };
            2 * self.rtt.srtt + slack
        } else {
            INITIAL_RTO
        };
        let rto_delta = if advancing_rto {
            self.rtt.rto() as i64
        } else {
            (self.board[0].sent_at + self.rtt.rto()) as i64 - now as i64
        };
        if rto_delta > 0 {
            timeout = timeout.min(rto_delta as Nanos);
        }
        self.timer = Some((XmitTimer::LossProbe, now + timeout));
        true
    }

    /// After an ACK that acknowledged new data: the probe if it may go, else the
    /// retransmission timer (`tcp_set_xmit_timer()`).
    fn set_xmit_timer(&mut self, now: Nanos) {
        if !self.schedule_loss_probe(now, true) {
            self.rearm_rto(now);
        }
    }

    /// Processes one ACK at `now`.
    pub fn on_ack(&mut self, now: Nanos, ack: &Packet) -> AckResult {
        let mut res = AckResult::default();
        let old_ack = ack.seq < self.snd_una;
        let mut newly_lost = false;
        // Segments this ACK delivered (`tcp_newly_delivered()`), for fast recovery's window.
        let mut delivered = 0;
        // When the timers must be set again (Linux's FLAG_SET_XMIT_TIMER).
        let mut set_xmit_timer = false;
        if ack.seq > self.snd_una && ack.seq <= self.snd_nxt {
            let n = ack.seq - self.snd_una;
            let marked = self.sacked_out + self.lost_out + self.retrans_out > 0;
            let min_rtt = self.rtt.min_rtt;
            // `tcp_clean_rtx_queue()`: the send time of the last segment acknowledged that
            // was neither SACKed before nor ever retransmitted (`last_ackt`); any
            // retransmitted one (`FLAG_RETRANS_DATA_ACKED`) voids the sample.
            let mut last_ackt = None;
            let mut retrans_acked = false;
            if !self.sack {
                // `tcp_remove_reno_sacks()`: one ACK fills a hole, the rest were counted
                // as duplicate ACKs.
                delivered += n.saturating_sub(self.dup_acks).max(1);
            }
            for k in 0..n {
                let seg = self.board.pop_front().expect("outstanding");
                let f = seg.flags;
                delivered += (self.sack && f & SACKED == 0) as u64;
                if f & (RETRANS | EVER_RETRANS) != 0 {
                    retrans_acked = true;
                } else if f & SACKED == 0 {
                    last_ackt = Some(seg.sent_at);
                }
                if marked {
                    self.sacked_out -= (f & SACKED != 0) as u64;
                    self.lost_out -= (f & LOST != 0 && f & SACKED == 0) as u64;
                    self.retrans_out -= (f & RETRANS != 0 && f & SACKED == 0) as u64;
                }
                // `tcp_clean_rtx_queue()`: a delivery RACK learns from, unless SACKed
                // before or a retransmission the echoed timestamp shows was not needed.
                let spurious = f & EVER_RETRANS != 0 && ack.ts > 0 && ack.ts < seg.sent_at;
                if self.sack && f & SACKED == 0 && !spurious {
                    let end_seq = self.snd_una + k + 1;
                    let ever = f & EVER_RETRANS != 0;
                    self.rack.advance(now, ever, end_seq, seg.sent_at, min_rtt);
                }
            }
            self.snd_una = ack.seq;
            while self
                .sent_order
                .front()
                .is_some_and(|&(s, _)| s < self.snd_una)
            {
                self.sent_order.pop_front();
            }
            res.acked = n;
            set_xmit_timer = true;
            if ack.ts > 0 {
                let r = now.saturating_sub(ack.ts);
                self.rtt.sample(r);
                res.srtt_sample_ns = Some(r);
            }
            res.ca_rtt_ns = last_ackt
                .filter(|_| !retrans_acked)
                .map(|t| now.saturating_sub(t));
            self.rtt.backoff = 0;
            // `tcp_remove_reno_sacks()`: the rest of what it acknowledged were counted as
            // duplicate ACKs.
            self.dup_acks = self.dup_acks.saturating_sub(n - 1);
            if !self.sack && self.state == CaState::Open {
                self.dup_acks = 0;
            }
            // Without SACK, `tcp_try_undo_recovery()` holds the state while `snd_una` is
            // exactly `high_seq`, until something above it is acknowledged: duplicate ACKs
            // of data sent before the loss must not start a false fast retransmission
            // (RFC 6582). The ACK does nothing else (`tcp_fastretrans_alert()` returns).
            let held = !self.sack && self.snd_una == self.recovery_point;
            if self.state != CaState::Open && held {
                if self.state == CaState::Recovery {
                    // `tcp_reset_reno_sack()`.
                    self.dup_acks = 0;
                }
            } else if self.state != CaState::Open && self.snd_una >= self.recovery_point {
                if self.state == CaState::Recovery {
                    // `tcp_end_cwnd_reduction()`.
                    self.set_cwnd(self.ssthresh);
                }
                self.prr = None;
                self.state = CaState::Open;
                self.dup_acks = 0;
            } else if self.state == CaState::Recovery && !self.sack && self.outstanding() > 0 {
                // NewReno partial ACK: the next hole is lost too.
                newly_lost |= self.mark_lost(self.snd_una);
            } else if self.state == CaState::Loss && !self.sack {
                // `tcp_process_loss()`: a partial ACK after a timeout resets the count.
                self.dup_acks = 0;
            }
        } else if ack.seq == self.snd_una && self.outstanding() > 0 && !self.sack {
            // Whether the duplicate ACK counts (`tcp_fastretrans_alert()`): not while
            // recovery is held at its end (Recovery's count is reset), and after a timeout
            // only once data beyond its recovery point is out (`tcp_process_loss()`).
            let held = self.snd_una == self.recovery_point;
            let counts = match self.state {
                CaState::Open | CaState::Cwr => true,
                CaState::Recovery => !held,
                CaState::Loss => !held && self.snd_nxt > self.recovery_point,
            };
            if counts {
                let before = self.dup_acks;
                self.dup_acks = (self.dup_acks + 1).min(self.outstanding().saturating_sub(1));
                // `tcp_add_reno_sack()`: a duplicate ACK stands for a delivered segment.
                delivered += self.dup_acks - before;
                if self.dup_acks >= DUP_THRESH && self.state == CaState::Open {
                    newly_lost |= self.mark_lost(self.snd_una);
                }
            } else if self.state == CaState::Recovery {
                self.dup_acks = 0;
            }
        }
        let mut newly_sacked = false;
        if self.sack {
            // The earliest send time among the newly SACKed segments (`first_sackt`).
            let mut first_sacked_sent = Nanos::MAX;
            let mut last_sacked: Option<(u64, Nanos)> = None;
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
                let tagged = self.sack_range(now, start, end, &cache);
                delivered += tagged.sacked;
                if let Some(sent) = tagged.earliest {
                    newly_sacked = true;
                    first_sacked_sent = first_sacked_sent.min(sent);
                }
                // Linux tags the blocks in sequence order, so `last_sackt` is the send
                // time of the highest original segment newly SACKed.
                if tagged.last_original.map(|(q, _)| q) > last_sacked.map(|(q, _)| q) {
                    last_sacked = tagged.last_original;
                }
            }
            // `tcp_clean_rtx_queue()`: a SACK's sample (`last_sackt`) takes the place of
            // the cumulative one.
            if let Some((_, sent)) = last_sacked.filter(|_| !old_ack) {
                res.ca_rtt_ns = Some(now.saturating_sub(sent));
            }
            // A SACK of data sent before the first unacknowledged segment was last sent
            // restarts the timer too; a later one must not, or a timeout could keep moving
            // away during recovery.
            // Only on an ACK at or above `snd_una`: Linux sets it in `tcp_clean_rtx_queue()`,
            // which the `old_ack` path skips.
            if res.acked == 0 && newly_sacked && !old_ack && self.outstanding() > 0 {
                set_xmit_timer |= first_sacked_sent < self.board[0].sent_at;
            }
        }
        // `tcp_ack_update_rtt()`: with neither, the echoed timestamp, if the ACK advanced.
        if res.ca_rtt_ns.is_none() && res.acked > 0 {
            res.ca_rtt_ns = res.srtt_sample_ns;
        }
        if let Some(episode) = self.episode.filter(|_| !old_ack) {
            res.probe_repaired_loss =
                self.on_probe_ack(episode, ack.seq, res.acked > 0 || newly_sacked);
        }
        // `tcp_ack_is_dubious()`: not a plain advance in the Open state with nothing SACKed
        // (Linux is in its Disorder state while anything is).
        let dubious = res.acked == 0
            || newly_sacked
            || self.state != CaState::Open
            || self.sacked_out + self.lost_out > 0;
        let mut lost_retransmission = false;
        // The `old_ack` path reaches `tcp_fastretrans_alert()` only with SACK blocks.
        let alerts = !old_ack || ack.sack.iter().any(|&(a, b)| b > a);
        if self.sack && dubious && alerts && self.rack.advanced && self.outstanding() > 0 {
            // `tcp_rack_mark_lost()`.
            self.rack.advanced = false;
            let scan = self.rack_detect_loss(now);
            newly_lost |= scan.newly_lost;
            lost_retransmission = scan.lost_retransmission;
            if let Some(wait) = scan.reorder_wait {
                self.timer = Some((XmitTimer::ReorderTimeout, now + wait + TIMEOUT_MIN));
                set_xmit_timer = false;
            }
        }
        if set_xmit_timer {
            self.set_xmit_timer(now);
        } else if self.outstanding() == 0 {
            self.timer = None;
        }
        res.loss_detected = match self.state {
            CaState::Open => newly_lost && self.lost_out > 0,
            CaState::Loss => lost_retransmission,
            _ => false,
        };
        res.delivery = (!old_ack).then_some(Delivery {
            segments: delivered,
            newly_lost,
            una_advanced: res.acked > 0,
        });
        self.reduce_window(res.delivery);
        res
    }

    /// In fast recovery, the window after `delivery` (`tcp_cwnd_reduction()`, see `prr`);
    /// unchanged without one.
    fn reduce_window(&mut self, delivery: Option<Delivery>) {
        let (Some(mut prr), Some(delivery)) = (self.prr, delivery) else {
            return;
        };
        if let Some(window) = prr.window(delivery, self.ssthresh as u64, self.pipe()) {
            self.set_cwnd(window as f64);
        }
        self.prr = Some(prr);
    }

    /// A segment left: fast recovery counts what it sends (`tp->prr_out`).
    fn count_send(&mut self) {
        if let Some(prr) = self.prr.as_mut() {
            prr.sent();
        }
    }

    /// An ACK during a tail loss probe's episode (`tcp_process_tlp_ack()`). The episode
    /// ends when the ACK covers what was outstanding at the probe: a probe of new data
    /// tells nothing; a re-sent segment acknowledged beyond that point repaired a loss (the
    /// return value: the window is reduced once); a pure duplicate ACK at that point means
    /// both the original and the probe arrived. The simulated receiver sends no DSACK, so
    /// that duplicate ACK is the only proof of a needless probe.
    fn on_probe_ack(&mut self, episode: ProbeEpisode, ack: u64, progress: bool) -> bool {
        if ack < episode.high_seq {
            return false;
        }
        if !episode.resent {
            self.episode = None;
        } else if ack > episode.high_seq {
            self.episode = None;
            return true;
        } else if !progress {
            self.episode = None;
        }
        false
    }

    /// RACK's scan of the transmissions oldest first (`tcp_rack_detect_loss()`): every
    /// segment sent before the latest delivered one whose RTT plus the reordering window
    /// has passed is lost; a retransmission lost again is counted so. Stops at the first
    /// transmission made after the latest delivered one.
    fn rack_detect_loss(&mut self, now: Nanos) -> RackScan {
        let mut scan = RackScan::default();
        let loss_recovery = matches!(self.state, CaState::Recovery | CaState::Loss);
        let reo_wnd = rack::reo_wnd(
            loss_recovery,
            self.sacked_out,
            DUP_THRESH,
            self.rtt.min_rtt,
            self.rtt.srtt,
        );
        let mut wait: i64 = 0;
        let mut i = 0;
        while i < self.sent_order.len() {
            let (seq, sent_at) = self.sent_order[i];
            let current = seq >= self.snd_una && {
                let seg = self.board[(seq - self.snd_una) as usize];
                seg.sent_at == sent_at
                    && seg.flags & SACKED == 0
                    && (seg.flags & LOST == 0 || seg.flags & RETRANS != 0)
            };
            if !current {
                // Acknowledged, SACKed, sent again since, or marked lost and waiting to
                // be retransmitted: not a candidate (Linux unlinks it or skips it).
                if i == 0 {
                    self.sent_order.pop_front();
                } else {
                    i += 1;
                }
                continue;
            }
            if !rack::sent_after(self.rack.xmit_ts, sent_at, self.rack.end_seq, seq + 1) {
                break;
            }
            let remaining = self.rack.remaining(now, sent_at, reo_wnd);
            if remaining <= 0 {
                let f = self.flags(seq);
                if f & RETRANS != 0 {
                    // A retransmission lost again: it may be sent once more.
                    self.segment(seq).flags &= !RETRANS;
                    self.retrans_out -= 1;
                    self.retx_scan = self.retx_scan.min(seq);
                    scan.lost_retransmission = true;
                } else {
                    self.mark_lost(seq);
                }
                scan.newly_lost = true;
            } else {
                wait = wait.max(remaining);
            }
            i += 1;
        }
        scan.reorder_wait = (wait > 0).then_some(wait as Nanos);
        scan
    }

    /// Marks `[start, end)` SACKed at `now`, skipping what the previous ACK's blocks
    /// covered; RACK learns of each delivery (`tcp_sacktag_one()`). Returns the earliest send
    /// time among the segments newly SACKed, if any were.
    fn sack_range(
        &mut self,
        now: Nanos,
        start: u64,
        end: u64,
        cache: &[(u64, u64); 3],
    ) -> SackTagged {
        let mut earliest: Option<Nanos> = None;
        let mut last_original = None;
        let mut sacked = 0;
        let min_rtt = self.rtt.min_rtt;
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
                let seg = *self.segment(q);
                let f = seg.flags;
                if f & SACKED == 0 {
                    self.set(q, SACKED);
                    self.sacked_out += 1;
                    sacked += 1;
                    self.lost_out -= (f & LOST != 0) as u64;
                    self.retrans_out -= (f & RETRANS != 0) as u64;
                    let ever = f & EVER_RETRANS != 0;
                    self.rack.advance(now, ever, q + 1, seg.sent_at, min_rtt);
                    earliest = Some(earliest.map_or(seg.sent_at, |e| e.min(seg.sent_at)));
                    if !ever {
                        last_original = Some((q, seg.sent_at));
                    }
                }
            }
            s = stop;
        }
        SackTagged {
            sacked,
            earliest,
            last_original,
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

    /// Starts fast recovery with the threshold the congestion control chose; a probe
    /// episode under way ends (`tcp_init_cwnd_reduction()`). The window is not cut to the
    /// threshold: it shrinks towards it with Proportional Rate Reduction, from the window
    /// now, starting with `delivery`, what the ACK that showed the loss delivered
    /// (`AckResult::delivery`; none for an ACK below `snd_una`), or one segment after RACK's
    /// reordering timer (`tcp_rack_reo_timeout()` calls `tcp_cwnd_reduction(sk, 1, ...)`).
    pub fn enter_recovery(&mut self, ssthresh: f64, delivery: Option<Delivery>) {
        self.ssthresh = ssthresh.max(1.0);
        self.prr = Some(Prr::new(self.window));
        self.state = CaState::Recovery;
        self.recovery_point = self.snd_nxt;
        self.episode = None;
        self.reduce_window(delivery);
    }

    /// A tail loss probe repaired a loss: the window goes to the congestion control's
    /// threshold at once and the sender stays open (`tcp_process_tlp_ack()`: the CWR state
    /// entered and left in one step).
    pub fn reduce_after_probe(&mut self, ssthresh: f64) {
        self.ssthresh = ssthresh.max(1.0);
        self.set_cwnd(self.ssthresh);
    }

    /// The transmission timer fired at `now` (`tcp_write_timer_handler()`). `new_data`:
    /// whether the subflow has data it has not sent yet, which a probe sends in preference
    /// to a re-sent segment. The caller acts on the answer.
    pub fn on_timer(&mut self, now: Nanos, new_data: bool) -> TimerAction {
        let Some((kind, _)) = self.timer else {
            return TimerAction::None;
        };
        match kind {
            XmitTimer::Retransmit => TimerAction::Timeout,
            XmitTimer::ReorderTimeout => {
                // `tcp_rack_reo_timeout()`.
                let before = self.pipe();
                self.rack_detect_loss(now);
                let found = self.pipe() != before && self.state != CaState::Recovery;
                self.rearm_rto(now);
                if found {
                    TimerAction::EnterRecovery
                } else {
                    TimerAction::None
                }
            }
            XmitTimer::LossProbe => {
                // `tcp_send_loss_probe()`: at most one probe per episode.
                if self.episode.is_some() || self.outstanding() == 0 {
                    self.rearm_rto(now);
                    return TimerAction::None;
                }
                // The timer is not armed again until the probe goes (`send_probe`).
                self.timer = None;
                self.probe = Some(if new_data {
                    Probe::NewData
                } else {
                    Probe::Resend(self.snd_nxt - 1)
                });
                TimerAction::Probe
            }
        }
    }

    /// A probe due to carry new data finds none: it re-sends the last segment instead, as
    /// `tcp_send_loss_probe()` does when the send queue is empty.
    pub fn resend_instead_of_new_data(&mut self) {
        if self.probe == Some(Probe::NewData) && self.outstanding() > 0 {
            self.probe = Some(Probe::Resend(self.snd_nxt - 1));
        }
    }

    /// Sends the due probe again at `now` when it re-sends a segment; returns that
    /// segment's sequence number. For a probe of new data the caller sends it with
    /// `send_new` (whatever the window) and then calls this, which returns `None`.
    pub fn send_probe(&mut self, now: Nanos) -> Option<u64> {
        let probe = self.probe.take()?;
        let resent = match probe {
            Probe::Resend(seq) if seq >= self.snd_una && seq < self.snd_nxt => {
                // `__tcp_retransmit_skb()` directly: no retransmission is counted in flight.
                self.resend(seq, 0, now);
                Some(seq)
            }
            Probe::Resend(_) | Probe::NewData => None,
        };
        self.episode = Some(ProbeEpisode {
            high_seq: self.snd_nxt,
            resent: resent.is_some(),
        });
        self.loss_probes += 1;
        // The timer is the retransmission timeout again, from now.
        self.timer = None;
        self.rearm_rto(now);
        resent
    }

    /// The retransmission timer fired (`tcp_enter_loss()`). `ssthresh` is the congestion
    /// control's reduction, applied only when the timeout interrupts the Open state (as
    /// Linux does). The first unacknowledged segment, and every other one whose RTT has
    /// passed since it was sent, is marked lost (`tcp_timeout_mark_lost()`); the window is
    /// what remains in flight plus one. The timer runs again with the backed-off timeout.
    pub fn on_rto(&mut self, now: Nanos, ssthresh: f64) {
        if self.state == CaState::Open {
            self.ssthresh = ssthresh.max(1.0);
        }
        self.dup_acks = 0;
        for k in 0..self.board.len() {
            let seg = self.board[k];
            if seg.flags & SACKED != 0 || (k > 0 && self.rack.remaining(now, seg.sent_at, 0) > 0) {
                continue;
            }
            let seq = self.snd_una + k as u64;
            if seg.flags & LOST == 0 {
                self.set(seq, LOST);
                self.lost_out += 1;
            } else if seg.flags & RETRANS != 0 {
                self.segment(seq).flags &= !RETRANS;
                self.retrans_out -= 1;
            }
        }
        self.state = CaState::Loss;
        self.prr = None;
        self.recovery_point = self.snd_nxt;
        self.episode = None;
        self.probe = None;
        self.set_cwnd((self.pipe() + 1) as f64);
        self.retx_scan = self.snd_una;
        self.timeouts += 1;
        self.rtt.backoff += 1;
        self.timer = Some((XmitTimer::Retransmit, now + self.rtt.rto()));
    }
}

/// What one RACK scan found.
#[derive(Clone, Copy, Debug, Default)]
struct RackScan {
    newly_lost: bool,
    lost_retransmission: bool,
    /// How long until the next segment's reordering window ends, if one is waiting.
    reorder_wait: Option<Nanos>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use mptcp_cc::CongestionControl;

    const MS: Nanos = 1_000_000;

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
            )
        }
    }

    #[derive(Debug, PartialEq)]
    enum Next {
        Retransmit(u64),
        New(u64),
    }

    /// Sends at `now` what the window allows: retransmissions first, then new data; then
    /// ends the pass as the connection does.
    fn send_all_at(s: &mut Sender, now: Nanos) -> Vec<Next> {
        let mut out = Vec::new();
        loop {
            if let Some(q) = s.next_retransmit(now) {
                out.push(Next::Retransmit(q));
            } else if s.has_room() {
                let n = s.snd_nxt;
                out.push(Next::New(s.send_new(n, false, now)));
            } else {
                break;
            }
        }
        if out.iter().any(|n| matches!(n, Next::New(_))) {
            s.after_new_data(now);
        }
        out
    }

    fn send_all(s: &mut Sender) -> Vec<Next> {
        send_all_at(s, 0)
    }

    /// A sender that has measured a steady 100 ms RTT (SRTT and min RTT 100 ms, RTO
    /// 300 ms), with window `cwnd`, nothing outstanding, at 100 ms.
    fn measured(cwnd: f64) -> Sender {
        let mut s = Sender::new(true, u64::MAX);
        send_all(&mut s);
        s.on_ack(100 * MS, &ack(10, &[], 1));
        s.set_cwnd(cwnd);
        s.ssthresh = cwnd;
        assert_eq!((s.rtt.srtt, s.rtt.min_rtt), (100 * MS - 1, 100 * MS - 1));
        s
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
        s.send_new(10, false, 1);
        s.send_new(11, false, 1);
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
    fn one_later_delivery_marks_the_hole_lost_when_its_reordering_window_ends() {
        let mut s = measured(10.0);
        let t0 = 100 * MS;
        send_all_at(&mut s, t0); // segments 10..20
        // Segment 10 lost; 11 SACKed at 200 ms. Not lost yet: RACK waits a quarter of the
        // smallest RTT (`tcp_rack_reo_wnd()`) and arms its reordering timer for it.
        let r = s.on_ack(200 * MS, &ack(10, &[(11, 12)], t0));
        assert!(!r.loss_detected);
        assert_eq!(s.timer_kind(), Some(XmitTimer::ReorderTimeout));
        let due = s.timer_deadline().unwrap();
        assert_eq!(due, 200 * MS + (100 * MS - 1) / 4 + TIMEOUT_MIN);
        // The timer fires: lost, fast recovery; the retransmission timer stands again.
        assert_eq!(s.on_timer(due, false), TimerAction::EnterRecovery);
        assert_eq!(s.timer_kind(), Some(XmitTimer::Retransmit));
        // As the client does after the timer: one segment counted delivered. 8 in flight,
        // below the threshold of 9: the reduction bound lets one go.
        s.enter_recovery(9.0, Some(Delivery::reordering_timeout()));
        assert_eq!(s.cwnd, 9.0);
        assert_eq!(s.flags(10) & LOST, LOST);
        assert_eq!(s.next_retransmit(due), Some(10));
        assert_eq!(s.timeouts, 0);
    }

    #[test]
    fn dupthresh_sacked_segments_mark_the_hole_lost_at_once() {
        let mut s = measured(10.0);
        send_all_at(&mut s, 100 * MS);
        let r = s.on_ack(200 * MS, &ack(10, &[(11, 13)], 100 * MS));
        assert!(!r.loss_detected, "two SACKed: the reordering window holds");
        let r = s.on_ack(201 * MS, &ack(10, &[(11, 14)], 100 * MS));
        assert!(r.loss_detected, "three SACKed: no reordering window");
        s.enter_recovery(5.0, r.delivery);
        assert_eq!(s.state, CaState::Recovery);
        assert_eq!(s.pipe(), 10 - 3 - 1);
        // Proportional Rate Reduction: not cut to 5 at once. The ACK delivered one segment
        // and the first ACK of recovery lets one go: the fast retransmission leaves now,
        // with 6 still in flight.
        assert_eq!(s.cwnd, 7.0);
        assert_eq!(send_all_at(&mut s, 201 * MS), vec![Next::Retransmit(10)]);
        // Two more SACKed: 5 in flight, the threshold; nothing more may go.
        s.on_ack(202 * MS, &ack(10, &[(11, 16)], 100 * MS));
        assert_eq!(s.cwnd, 5.0);
        assert_eq!(send_all_at(&mut s, 202 * MS), vec![]);
        // The retransmission arrives: everything up to 16 is acknowledged, recovery goes
        // on until the recovery point (20).
        let r = s.on_ack(302 * MS, &ack(16, &[], 202 * MS));
        assert_eq!(r.acked, 6);
        let newly = |r: AckResult| r.delivery.map(|d| d.segments);
        assert_eq!(newly(r), Some(1), "the other five were counted when SACKed");
        assert_eq!(s.state, CaState::Recovery);
        let r = s.on_ack(303 * MS, &ack(20, &[], 100 * MS));
        assert_eq!(newly(r), Some(4));
        assert_eq!(s.state, CaState::Open);
        assert_eq!(s.cwnd, 5.0);
        assert_eq!(s.retransmits, 1);
    }

    #[test]
    fn an_ack_below_snd_una_marks_its_sack_blocks_and_leaves_the_window() {
        let mut s = measured(10.0);
        send_all_at(&mut s, 100 * MS);
        let r = s.on_ack(201 * MS, &ack(10, &[(11, 14)], 100 * MS));
        s.enter_recovery(5.0, r.delivery);
        send_all_at(&mut s, 201 * MS);
        s.on_ack(302 * MS, &ack(14, &[], 201 * MS));
        let (cwnd, sacked) = (s.cwnd, s.sacked_out);
        // An ACK overtaken by the one above, SACKing two more: `tcp_ack()`'s `old_ack`
        // path tags them and skips `tcp_cong_control()`, so the window is as it was.
        let r = s.on_ack(303 * MS, &ack(10, &[(11, 16)], 100 * MS));
        assert_eq!((r.acked, r.delivery), (0, None));
        assert_eq!((s.cwnd, s.sacked_out), (cwnd, sacked + 2));
    }

    #[test]
    fn a_retransmission_lost_again_is_found_without_a_timeout() {
        let mut s = measured(10.0);
        send_all_at(&mut s, 100 * MS);
        let r = s.on_ack(200 * MS, &ack(10, &[(11, 14)], 100 * MS));
        s.enter_recovery(5.0, r.delivery);
        s.on_ack(201 * MS, &ack(10, &[(11, 16)], 100 * MS));
        assert_eq!(s.next_retransmit(201 * MS), Some(10));
        // The retransmission is lost too. Segments 16..20 (sent at 100 ms) are SACKed
        // later, but they were sent before it: no proof yet.
        s.on_ack(250 * MS, &ack(10, &[(11, 20)], 100 * MS));
        assert_eq!(s.next_retransmit(250 * MS), None);
        // The recovery sends new data at 250 ms (1 in flight, the threshold 5: PRR's bound
        // lets 4 go); its SACK, one RTT later, shows the retransmission (sent 100 ms before
        // it) lost: it goes again.
        assert_eq!(send_all_at(&mut s, 250 * MS).first(), Some(&Next::New(20)));
        assert_eq!(s.cwnd, 5.0);
        s.on_ack(350 * MS, &ack(10, &[(11, 21)], 250 * MS));
        assert_eq!(s.next_retransmit(350 * MS), Some(10));
        assert_eq!((s.retransmits, s.timeouts), (2, 0));
    }

    #[test]
    fn a_tail_loss_probe_turns_a_lost_tail_into_fast_recovery() {
        let mut s = measured(10.0);
        send_all_at(&mut s, 100 * MS); // 10..20; 18 and 19 are lost
        assert_eq!(s.timer_kind(), Some(XmitTimer::LossProbe));
        s.on_ack(200 * MS, &ack(18, &[], 100 * MS));
        // Two SRTTs and 2 ms after the ACK (`tcp_schedule_loss_probe()`), before the RTO.
        let (kind, due) = (s.timer_kind(), s.timer_deadline().unwrap());
        assert_eq!(kind, Some(XmitTimer::LossProbe));
        assert_eq!(due, 200 * MS + 2 * s.rtt.srtt + TIMEOUT_MIN);
        assert!(due < 200 * MS + s.rtt.rto());
        // Nothing new to send: the probe re-sends the last segment.
        assert_eq!(s.on_timer(due, false), TimerAction::Probe);
        assert_eq!(s.probe(), Some(Probe::Resend(19)));
        assert_eq!(s.send_probe(due), Some(19));
        assert_eq!(s.timer_kind(), Some(XmitTimer::Retransmit));
        assert_eq!(s.pipe(), 2, "a probe is not a retransmission in flight");
        // Its SACK proves 18 lost: fast recovery, no timeout.
        let r = s.on_ack(due + 100 * MS, &ack(18, &[(19, 20)], due));
        assert!(r.loss_detected);
        s.enter_recovery(5.0, r.delivery);
        assert_eq!(s.next_retransmit(due + 100 * MS), Some(18));
        assert_eq!((s.loss_probes, s.timeouts), (1, 0));
    }

    #[test]
    fn a_probe_whose_original_arrived_ends_with_a_duplicate_ack_and_no_reduction() {
        let mut s = measured(10.0);
        send_all_at(&mut s, 100 * MS);
        // The last ACKs are delayed: the probe fires, then the originals' ACK arrives.
        let due = s.timer_deadline().unwrap();
        s.on_timer(due, false);
        s.send_probe(due);
        let r = s.on_ack(due + 1, &ack(20, &[], 100 * MS));
        assert!(!r.probe_repaired_loss);
        // The probe's duplicate ACK ends the episode.
        let r = s.on_ack(due + 100 * MS, &ack(20, &[], due));
        assert!(!r.probe_repaired_loss);
        assert_eq!(s.episode, None);
    }

    #[test]
    fn a_probe_that_repaired_the_last_segment_reduces_the_window_once() {
        let mut s = measured(10.0);
        send_all_at(&mut s, 100 * MS); // 10..20; 19 is lost
        s.on_ack(200 * MS, &ack(19, &[], 100 * MS));
        let due = s.timer_deadline().unwrap();
        s.on_timer(due, false);
        assert_eq!(s.send_probe(due), Some(19));
        // The probe repaired it: the ACK reaches the probe's point, not beyond.
        assert!(
            !s.on_ack(due + 100 * MS, &ack(20, &[], due))
                .probe_repaired_loss
        );
        // New data, and an ACK beyond: the episode ends with one reduction.
        send_all_at(&mut s, due + 100 * MS);
        let r = s.on_ack(due + 200 * MS, &ack(21, &[], due + 100 * MS));
        assert!(r.probe_repaired_loss && !r.loss_detected);
        let r = s.on_ack(due + 201 * MS, &ack(22, &[], due + 100 * MS));
        assert!(!r.probe_repaired_loss, "once only");
    }

    #[test]
    fn a_probe_sends_new_data_when_there_is_some() {
        let mut s = measured(2.0);
        send_all_at(&mut s, 100 * MS);
        let due = s.timer_deadline().unwrap();
        assert_eq!(s.on_timer(due, true), TimerAction::Probe);
        assert_eq!(s.probe(), Some(Probe::NewData));
        // The connection sends it whatever the window, then closes the probe.
        assert!(!s.has_room());
        s.send_new(12, false, due);
        assert_eq!(s.send_probe(due), None);
        assert_eq!((s.snd_nxt, s.loss_probes, s.retransmits), (13, 1, 0));
    }

    #[test]
    fn newreno_three_dupacks_then_partial_ack() {
        let mut s = Sender::new(false, u64::MAX);
        send_all(&mut s);
        // Segments 0 and 5 lost.
        assert!(!s.on_ack(1, &ack(0, &[], 0)).loss_detected);
        assert!(!s.on_ack(1, &ack(0, &[], 0)).loss_detected);
        let r = s.on_ack(1, &ack(0, &[], 0));
        assert!(r.loss_detected);
        s.enter_recovery(5.0, r.delivery);
        for _ in 0..4 {
            s.on_ack(2, &ack(0, &[], 0));
        }
        assert_eq!(s.next_retransmit(2), Some(0));
        assert_eq!(s.dup_acks, 7, "one short of the 8 segments after the hole");
        // Partial ACK up to the second hole: it is retransmitted at once.
        s.on_ack(3, &ack(5, &[], 2));
        assert_eq!(s.state, CaState::Recovery);
        // `tcp_remove_reno_sacks()`: one of the 5 filled the hole, the other 4 were
        // counted as duplicate ACKs.
        assert_eq!(s.dup_acks, 3);
        let sent = send_all_at(&mut s, 3);
        assert_eq!(sent.first(), Some(&Next::Retransmit(5)));
        assert_eq!(s.loss_probes, 0, "no probes without SACK");
        // The recovery point acknowledged exactly: recovery holds until something above it
        // is (`tcp_try_undo_recovery()`), its duplicate-ACK count reset.
        let sent_new = sent.iter().filter(|n| matches!(n, Next::New(_))).count() as u64;
        assert!(sent_new > 0, "new data above the recovery point is out");
        s.on_ack(4, &ack(10, &[], 3));
        assert_eq!((s.state, s.dup_acks), (CaState::Recovery, 0));
        // A duplicate ACK while held counts for nothing: `tcp_fastretrans_alert()` resets
        // the count and returns before `tcp_add_reno_sack()`.
        let r = s.on_ack(4, &ack(10, &[], 3));
        assert_eq!((r.delivery.map(|d| d.segments), s.dup_acks), (Some(0), 0));
        s.on_ack(5, &ack(10 + sent_new, &[], 4));
        assert_eq!(s.state, CaState::Open);
    }

    #[test]
    fn after_a_timeout_reno_counts_no_duplicate_ack_of_data_sent_before_it() {
        let mut s = Sender::new(false, u64::MAX);
        send_all(&mut s);
        s.on_rto(INITIAL_RTO, 5.0);
        assert_eq!(s.state, CaState::Loss);
        // Nothing beyond the timeout's recovery point is out: `tcp_process_loss()` adds no
        // Reno SACK for the duplicate ACK.
        let r = s.on_ack(INITIAL_RTO + 1, &ack(0, &[], 0));
        assert_eq!((r.delivery.map(|d| d.segments), s.dup_acks), (Some(0), 0));
    }

    #[test]
    fn timeout_resends_from_the_first_unacked_and_backs_off() {
        let mut s = Sender::new(false, u64::MAX);
        send_all(&mut s);
        assert_eq!(s.rtt.rto(), super::super::rtt::INITIAL_RTO);
        assert_eq!(
            s.timer_kind(),
            Some(XmitTimer::Retransmit),
            "no probe without SACK"
        );
        assert_eq!(s.on_timer(INITIAL_RTO, false), TimerAction::Timeout);
        s.on_rto(INITIAL_RTO, 5.0);
        assert_eq!((s.cwnd, s.ssthresh, s.state), (1.0, 5.0, CaState::Loss));
        assert_eq!(send_all(&mut s), vec![Next::Retransmit(0)]);
        s.cwnd_validate();
        assert_eq!(
            s.rtt.rto(),
            2 * super::super::rtt::INITIAL_RTO,
            "backed off"
        );
        // A second timeout in Loss keeps the first reduction.
        s.on_rto(3 * INITIAL_RTO, 1.0);
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
    fn a_timeout_leaves_recently_sent_segments_in_flight() {
        // `tcp_timeout_mark_lost()`: the head, and what RACK's RTT says has had time to
        // arrive; the window is what is left in flight plus one.
        let mut s = measured(10.0);
        send_all_at(&mut s, 100 * MS); // 10..20
        s.on_ack(200 * MS, &ack(10, &[(11, 12)], 100 * MS));
        s.set_cwnd(12.0);
        assert_eq!(send_all_at(&mut s, 390 * MS).len(), 3, "20..23");
        s.on_rto(400 * MS, 5.0);
        assert_eq!(s.lost_out, 9, "10 and 12..20");
        assert_eq!((s.pipe(), s.cwnd), (3, 4.0));
    }

    #[test]
    fn rtt_from_echoed_timestamps() {
        let mut s = Sender::new(true, u64::MAX);
        send_all(&mut s);
        s.on_ack(150_000_000, &ack(2, &[], 50_000_000));
        assert_eq!(s.rtt.srtt, 100_000_000);
    }

    /// Linux gives the congestion control (`ack_sample.rtt_us`) the RTT of the newest
    /// segment an ACK newly acknowledges (`ca_rtt_us`), while the smoothed RTT takes the
    /// echoed timestamp of the oldest: a delayed ACK's wait is in one and not the other.
    #[test]
    fn the_congestion_control_sees_the_newest_acknowledged_segment_s_rtt() {
        let mut s = Sender::new(true, u64::MAX);
        s.send_new(0, false, 0);
        s.send_new(1, false, 5 * MS);
        let res = s.on_ack(105 * MS, &ack(2, &[], 1));
        assert_eq!(
            res.srtt_sample_ns,
            Some(105 * MS - 1),
            "the timestamp of segment 0"
        );
        assert_eq!(res.ca_rtt_ns, Some(100 * MS), "segment 1, sent at 5 ms");
    }

    /// `tcp_sacktag_one()` records the newest original segment a SACK newly covers
    /// (`last_sackt`); its sample replaces the cumulative one.
    #[test]
    fn a_sack_gives_the_newest_newly_sacked_segment_s_rtt() {
        let mut s = Sender::new(true, u64::MAX);
        for (q, at) in [0, 1, 2, 3].into_iter().zip([0, MS, 2 * MS, 3 * MS]) {
            s.send_new(q, false, at);
        }
        let res = s.on_ack(103 * MS, &ack(0, &[(2, 4)], 1));
        assert_eq!((res.acked, res.srtt_sample_ns), (0, None));
        assert_eq!(res.ca_rtt_ns, Some(100 * MS), "segment 3, sent at 3 ms");
    }

    /// Karn: an ACK covering a retransmitted segment gives no sample from the send times
    /// (`FLAG_RETRANS_DATA_ACKED`); `tcp_ack_update_rtt()` falls back to the timestamp.
    #[test]
    fn an_ack_of_a_retransmission_samples_the_timestamp() {
        let mut s = Sender::new(true, u64::MAX);
        s.send_new(0, false, 0);
        s.send_new(1, false, MS);
        s.on_rto(INITIAL_RTO, 5.0);
        assert_eq!(s.next_retransmit(INITIAL_RTO), Some(0));
        let res = s.on_ack(INITIAL_RTO + 100 * MS, &ack(2, &[], INITIAL_RTO));
        assert_eq!(res.ca_rtt_ns, Some(100 * MS), "not segment 1's 1.099 s");
        assert_eq!(res.ca_rtt_ns, res.srtt_sample_ns);
    }
}
