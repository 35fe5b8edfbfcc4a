//! The receiving side of one TCP subflow: cumulative and selective acknowledgement,
//! timestamps echo (RFC 7323), and Linux's acknowledgement policy (net/ipv4/tcp_input.c):
//!
//! - `__tcp_ack_snd_check()`: at once when more than one full segment is unacknowledged,
//!   in quick-ACK mode, for out-of-order data or when a hole is filled; otherwise the
//!   delayed-ACK timer (40 ms, `TCP_DELACK_MIN`).
//! - Quick-ACK mode (`tcp_incr_quickack()`, `tcp_event_data_recv()`): the first data of a
//!   connection, data after a silence longer than the receiver's RTO, and data received
//!   twice (`tcp_data_queue()`) each grant up to 16 ACKs sent at once
//!   (`TCP_MAX_QUICKACKS`, no more than half the advertised window in segments); each ACK
//!   sent with one scheduled uses one (`tcp_dec_quickack_mode()`).
//! - A segment with PSH, in order, marks the pending ACK as pushed (`ICSK_ACK_PUSHED`,
//!   `tcp_measure_rcv_mss()`): once the application has read everything, the connection
//!   sends it without waiting (`__tcp_cleanup_rbuf()`, MPTCP's `mptcp_cleanup_rbuf()`;
//!   see `connection::server`).
//!
//! The advertised window belongs to the connection (MPTCP's receive buffer is shared by
//! all subflows), so it is not kept here, and neither is the delayed-ACK timer: it lives
//! in the connection's timer table.

use super::rtt::{INITIAL_RTO, RttEstimator};
use crate::ranges::RangeSet;
use net::Nanos;

/// Linux's minimum delayed-ACK timeout.
pub const DELACK_TIMEOUT: u64 = 40_000_000;
/// Quick ACKs granted at most at a time (`TCP_MAX_QUICKACKS`).
const MAX_QUICKACKS: u32 = 16;

pub struct Receiver {
    pub rcv_nxt: u64,
    ooo: RangeSet,
    /// The range holding the most recent out-of-order arrival (first SACK block).
    recent: Option<u64>,
    /// In-order segments received since the last ACK.
    pending: u32,
    /// Data arrived since the last ACK (`ICSK_ACK_SCHED`).
    scheduled: bool,
    /// An in-order segment with PSH arrived since the last ACK (`ICSK_ACK_PUSHED`).
    pushed: bool,
    /// ACKs still to send at once (`icsk_ack.quick`).
    quick: u32,
    /// When in-order data last arrived (`icsk_ack.lrcvtime`); `None` before the first.
    last_data_at: Option<Nanos>,
    /// The receiver's own RTO (`icsk_rto`): a silence longer than this restarts quick ACKs.
    rto: Nanos,
    ts_recent: u64,
    /// Data segments received, duplicates included (Linux's `tcpi_data_segs_in`), and
    /// ACKs made (a receiver's `tcpi_segs_out`).
    pub data_segments_in: u64,
    pub acks_out: u64,
    pub delayed_ack: bool,
    pub sack: bool,
}

/// What an arriving segment did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataResult {
    /// Segments newly delivered in order at the subflow level.
    pub delivered: u64,
    /// The segment was not held already (not a duplicate at the subflow level).
    pub fresh: bool,
    /// Acknowledge at once; otherwise the delayed-ACK timer must run.
    pub ack_now: bool,
}

/// One data segment as the receiver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    /// Its TSval.
    pub ts: u64,
    /// PSH set, or shorter than the MSS (`tcp_measure_rcv_mss()` treats both as the end
    /// of a write).
    pub push: bool,
}

impl Receiver {
    pub fn new(delayed_ack: bool, sack: bool) -> Self {
        Receiver {
            rcv_nxt: 0,
            ooo: RangeSet::default(),
            recent: None,
            pending: 0,
            scheduled: false,
            pushed: false,
            quick: 0,
            last_data_at: None,
            rto: INITIAL_RTO,
            ts_recent: 0,
            data_segments_in: 0,
            acks_out: 0,
            delayed_ack,
            sack,
        }
    }

    /// The handshake's RTT sample sets the receiver's RTO as a first sample sets any
    /// sender's (`tcp_synack_rtt_meas()` feeds `tcp_rtt_estimator()`): the receiver takes
    /// no other sample, so it keeps that RTO.
    pub fn on_handshake_rtt(&mut self, rtt: Nanos) {
        let mut estimator = RttEstimator::default();
        estimator.sample(rtt);
        self.rto = estimator.rto();
    }

    /// A data segment arrives at `now`; `window` is the connection's advertised window in
    /// segments (it bounds the quick ACKs granted).
    pub fn on_data(&mut self, seg: Segment, now: Nanos, window: u64) -> DataResult {
        let Segment { seq, ts, push } = seg;
        self.data_segments_in += 1;
        self.scheduled = true;
        if seq < self.rcv_nxt {
            // `tcp_data_queue()`: "a retransmit, 2nd most common case": the sender did not
            // hear our ACK; quick-ACK mode.
            self.grant_quickacks(window);
            return DataResult {
                delivered: 0,
                fresh: false,
                ack_now: true,
            };
        }
        // Everything held out of order lies above `rcv_nxt`: the next in-order segment
        // need not look there.
        if seq > self.rcv_nxt && self.ooo.contains(seq) {
            return DataResult {
                delivered: 0,
                fresh: false,
                ack_now: true,
            };
        }
        if seq > self.rcv_nxt {
            self.ooo.insert(seq);
            self.recent = Some(seq);
            return DataResult {
                delivered: 0,
                fresh: true,
                ack_now: true,
            };
        }
        // In order: `tcp_event_data_recv()`.
        self.pushed |= push;
        let silent_too_long = self
            .last_data_at
            .is_none_or(|last| now.saturating_sub(last) > self.rto);
        if silent_too_long {
            self.grant_quickacks(window);
        }
        self.last_data_at = Some(now);
        // Echo the oldest unacknowledged segment's timestamp (RFC 7323).
        if self.pending == 0 {
            self.ts_recent = ts;
        }
        let before = self.rcv_nxt;
        self.rcv_nxt += 1;
        let filled_hole = !self.ooo.is_empty();
        if let Some(end) = self.ooo.pop_front_at(self.rcv_nxt) {
            self.rcv_nxt = end;
        }
        if filled_hole {
            self.ts_recent = ts;
        }
        let delivered = self.rcv_nxt - before;
        self.pending += 1;
        let ack_now = !self.delayed_ack || filled_hole || self.pending >= 2 || self.quick > 0;
        DataResult {
            delivered,
            fresh: true,
            ack_now,
        }
    }

    /// `tcp_incr_quickack()`: half the advertised window in segments, at least 2, at most
    /// 16; never fewer than are left.
    fn grant_quickacks(&mut self, window: u64) {
        let granted = (window / 2).clamp(2, MAX_QUICKACKS as u64) as u32;
        self.quick = self.quick.max(granted);
    }

    /// An ACK is scheduled and `__tcp_cleanup_rbuf()` sends it after a read that left
    /// the receive buffer empty (`buffer_empty`): more than one full segment is
    /// unacknowledged, or a pushed segment is.
    pub fn ack_due_after_read(&self, buffer_empty: bool) -> bool {
        self.scheduled && (self.pending >= 2 || (buffer_empty && self.pushed))
    }

    /// `tcp_grow_window()` raised the window: one ACK at once (`icsk_ack.quick |= 1`).
    pub fn quickack_for_growth(&mut self) {
        self.quick |= 1;
    }

    /// `__tcp_select_window()` found the buffer more than half full: quick-ACK mode ends.
    pub fn end_quickacks(&mut self) {
        self.quick = 0;
    }

    /// Segments from `rcv_nxt` to the end of the last held out of order (`ooo_last_skb`).
    pub fn ooo_span(&self) -> u64 {
        self.ooo
            .iter_rev()
            .next()
            .map_or(0, |(_, end)| end - self.rcv_nxt)
    }

    /// In-order segments received since the last ACK (`rcv_nxt - rcv_wup`).
    pub fn pending_segments(&self) -> u32 {
        self.pending
    }

    /// Segments held out of order.
    pub fn ooo_segments(&self) -> u64 {
        self.ooo.len()
    }

    /// Fields of the ACK to send now: (cumulative ack, TSecr, SACK blocks). Resets the
    /// delayed-ACK count (the caller stops the timer).
    pub fn make_ack(&mut self) -> (u64, u64, [(u32, u32); 3]) {
        // `tcp_event_ack_sent()`: one quick ACK used if one was scheduled, and the
        // pending state cleared.
        if self.scheduled {
            self.quick = self.quick.saturating_sub(1);
        }
        self.acks_out += 1;
        self.pending = 0;
        self.scheduled = false;
        self.pushed = false;
        let mut sack = [(0u32, 0u32); 3];
        if self.sack && !self.ooo.is_empty() {
            let rel = |(a, b): (u64, u64)| ((a - self.rcv_nxt) as u32, (b - self.rcv_nxt) as u32);
            let mut n = 0;
            // RFC 2018: the block with the most recent arrival first, then the others.
            let first = self.recent.and_then(|s| self.ooo.range_of(s));
            if let Some(r) = first {
                sack[0] = rel(r);
                n = 1;
            }
            for r in self.ooo.iter_rev() {
                if n == 3 {
                    break;
                }
                if Some(r) != first {
                    sack[n] = rel(r);
                    n += 1;
                }
            }
        }
        (self.rcv_nxt, self.ts_recent, sack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    /// A window wide enough for the most quick ACKs (16).
    const WIDE: u64 = 1000;

    fn seg(seq: u64, ts: u64) -> Segment {
        Segment {
            seq,
            ts,
            push: false,
        }
    }

    fn pushed(seq: u64) -> Segment {
        Segment {
            seq,
            ts: 1,
            push: true,
        }
    }

    /// A receiver past its first 16 segments (each acknowledged at once), at 1 ms apart;
    /// the next segment is 16, due at 16 ms.
    fn past_quick_acks() -> Receiver {
        let mut r = Receiver::new(true, true);
        r.on_handshake_rtt(10 * MS);
        for k in 0..16 {
            assert!(r.on_data(seg(k, 1), k * MS, WIDE).ack_now, "quick ACK {k}");
            r.make_ack();
        }
        r
    }

    #[test]
    fn the_first_sixteen_segments_are_acknowledged_at_once_then_every_second() {
        let mut r = past_quick_acks();
        assert!(!r.on_data(seg(16, 1), 16 * MS, WIDE).ack_now);
        assert!(r.on_data(seg(17, 2), 17 * MS, WIDE).ack_now);
        let (ack, tsecr, sack) = r.make_ack();
        assert_eq!((ack, tsecr, sack[0]), (18, 1, (0, 0)));
    }

    #[test]
    fn quick_acks_are_at_most_half_the_window() {
        let mut r = Receiver::new(true, true);
        for k in 0..3 {
            assert!(r.on_data(seg(k, 1), k, 6).ack_now);
            r.make_ack();
        }
        assert!(!r.on_data(seg(3, 1), 3, 6).ack_now);
    }

    #[test]
    fn a_silence_longer_than_the_receivers_rto_restarts_quick_acks() {
        // RTO from a 10 ms handshake: 10 + max(20, 200) = 210 ms. The last segment came
        // at 15 ms.
        let mut r = past_quick_acks();
        assert!(!r.on_data(seg(16, 1), 225 * MS, WIDE).ack_now);
        r.make_ack();
        assert!(r.on_data(seg(17, 1), 436 * MS, WIDE).ack_now);
    }

    #[test]
    fn data_received_twice_restarts_quick_acks() {
        let mut r = past_quick_acks();
        let dup = r.on_data(seg(3, 1), 16 * MS, WIDE);
        assert!(dup.ack_now && !dup.fresh);
        r.make_ack();
        assert!(r.on_data(seg(16, 1), 17 * MS, WIDE).ack_now);
    }

    #[test]
    fn a_pushed_segment_is_due_after_a_read_that_empties_the_buffer() {
        let mut r = past_quick_acks();
        assert!(!r.on_data(seg(16, 1), 16 * MS, WIDE).ack_now);
        assert!(!r.ack_due_after_read(true), "no PSH: the timer decides");
        r.make_ack();
        assert!(!r.on_data(pushed(17), 17 * MS, WIDE).ack_now);
        assert!(r.ack_due_after_read(true));
        assert!(!r.ack_due_after_read(false), "the buffer still holds data");
        r.make_ack();
        assert!(!r.ack_due_after_read(true), "an ACK clears the mark");
    }

    #[test]
    fn an_out_of_order_segment_with_psh_does_not_mark_the_ack_pushed() {
        // `tcp_measure_rcv_mss()` runs for in-order data only.
        let mut r = past_quick_acks();
        assert!(r.on_data(pushed(18), 16 * MS, WIDE).ack_now);
        assert!(!r.ack_due_after_read(true));
    }

    #[test]
    fn sack_blocks_most_recent_first_and_hole_fill() {
        let mut r = past_quick_acks();
        r.on_data(seg(16, 1), 16 * MS, WIDE);
        assert!(r.on_data(seg(18, 1), 16 * MS, WIDE).ack_now);
        assert!(r.on_data(seg(21, 1), 16 * MS, WIDE).ack_now);
        r.on_data(seg(22, 1), 16 * MS, WIDE);
        let (ack, _, sack) = r.make_ack();
        assert_eq!(ack, 17);
        assert_eq!(sack, [(4, 6), (1, 2), (0, 0)]);
        assert_eq!(r.ooo_segments(), 3);
        let res = r.on_data(seg(17, 9), 17 * MS, WIDE);
        assert_eq!(
            res,
            DataResult {
                delivered: 2,
                fresh: true,
                ack_now: true
            }
        );
        let (ack, tsecr, sack) = r.make_ack();
        assert_eq!((ack, tsecr), (19, 9));
        assert_eq!(sack[0], (2, 4));
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the arrival order and duplicates, every segment is delivered exactly once
        /// and the buffer is empty at the end.
        #[test]
        fn reassembles_any_order(order in Just((0u64..60).collect::<Vec<_>>()).prop_shuffle(), dups in prop::collection::vec(0u64..60, 0..20)) {
            let mut r = Receiver::new(true, true);
            let mut delivered = 0;
            for &s in order.iter().chain(&dups) {
                delivered += r.on_data(Segment { seq: s, ts: 1, push: false }, 0, 100).delivered;
                let (ack, _, sack) = r.make_ack();
                prop_assert_eq!(ack, r.rcv_nxt);
                prop_assert!(sack.iter().all(|&(a, b)| a <= b && (a == b || a >= 1)));
                prop_assert!(sack.iter().all(|&(a, b)| a <= b));
            }
            prop_assert_eq!(delivered, 60);
            prop_assert_eq!(r.rcv_nxt, 60);
            prop_assert_eq!(r.ooo_segments(), 0);
        }
    }
}
