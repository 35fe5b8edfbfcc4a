//! How Linux groups a sender's segments into one transmission, and the PSH flag that
//! grouping sets.
//!
//! `tcp_write_xmit()` (net/ipv4/tcp_output.c) hands the device one skb of several
//! segments at a time (TSO/GSO), as many as `tcp_tso_segs()` allows: `tcp_tso_autosize()`
//! sizes it to about a millisecond at the pacing rate (`sk_pacing_rate >> sk_pacing_shift`),
//! plus a share of 64 KB that shrinks as the minimum RTT grows (`tcp_tso_rtt_log`), and
//! never fewer than `tcp_min_tso_segs` (2). The congestion window bounds it too: no more
//! than the room left in it, nor half of it (`tcp_cwnd_test()`), and the data there is.
//!
//! `__tcp_transmit_skb()` sets PSH on every skb of more than one segment ("to expedite
//! GRO flush at receiver"), on the clone it transmits only, and GSO keeps it on the last
//! segment (`tcp_gso_segment()`). A receiver acknowledges a pushed segment as soon as its
//! application has read the data (see `tcp::receiver`), so these flags set how often a
//! Linux receiver acknowledges: up to about 10 Mbit/s a subflow (E1, E3, E5, RFC 6356's
//! topologies), one skb is 2 segments and close to half of all data segments leave with
//! PSH; at 100 Mbit/s (E4) an skb is about 9.
//!
//! Not modelled: `tcp_tso_should_defer()`, which holds back an skb smaller than a full one
//! for the next ACK when less than a third of the window is free (`tcp_tso_win_divisor`),
//! but only if the socket last sent less than 1 ms ago and the ACK of its oldest segment
//! is due within min(1 ms, SRTT / 2). With ACKs milliseconds apart (a few Mbit/s) that
//! rarely holds; at 20 Mbit/s a sender left one free segment holds it a quarter of the
//! time or more (`scripts/send-decisions` traces it on the kernel), and in E4's 100 Mbit/s
//! paths often, where the connection's buffers, not its packets' grouping, set the result.
//! Nor where Linux puts a write's PSH (`tcp_mark_push()` flags the queued skb holding the
//! write's last byte, so it leaves on that skb's last segment): the simulator sets it on
//! the segment holding that byte (`mptcp::data::DataSender::ends_write`). Nor skbs of
//! several segments sent again: a retransmission or a probe here is one segment, without
//! the skb's PSH. (docs/kernel-backend.md, do no harm: what both would change.)

use super::{Sender, pacing};
use crate::packet::MSS;
use net::Nanos;

/// `GSO_LEGACY_MAX_SIZE`, the devices' limit (Linux's `sk_gso_max_size` takes the headers'
/// room off it, about 300 bytes, which changes no skb at the sizes that matter here).
const GSO_MAX_SIZE: u64 = 65_536;
/// Segments an skb holds at most: the write queue's skbs grow to this size goal
/// (`tcp_xmit_size_goal()`; MPTCP's `MPTCP_MAX_GSO_SIZE`), 44 of 1460 bytes.
pub const SKB_MAX_SEGMENTS: u64 = GSO_MAX_SIZE / MSS as u64;
/// `sk_pacing_shift` unless a qdisc changes it: an skb holds about 1 ms at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `net.ipv4.tcp_tso_rtt_log`: 64 KB is added to the skb size for a minimum RTT under
/// 512 µs, halved for each doubling of it.
const TSO_RTT_LOG: u32 = 9;
/// `net.ipv4.tcp_min_tso_segs`.
const MIN_TSO_SEGS: u64 = 2;

/// Segments of one skb at `pacing_rate` (bytes per second) with minimum RTT `min_rtt`
/// (0 before the first sample: Linux's `tcp_min_rtt()` is then `~0U` and adds nothing).
pub fn tso_segs(pacing_rate: u64, min_rtt: Nanos) -> u64 {
    let mut bytes = pacing_rate >> PACING_SHIFT;
    if min_rtt > 0 {
        let rtt_shift = (min_rtt / 1_000) >> TSO_RTT_LOG;
        if rtt_shift < u64::from(u32::BITS) {
            bytes += GSO_MAX_SIZE >> rtt_shift;
        }
    }
    (bytes.min(GSO_MAX_SIZE) / MSS as u64).max(MIN_TSO_SEGS)
}

/// Segments of the skb `tx` starts now, `available` segments being ready to go: the pacing
/// rate's share, the window's quota and what there is, at least one.
pub fn skb_segments(tx: &Sender, available: u64) -> u64 {
    tso_segs(pacing::pacing_rate(tx), tx.rtt.min_rtt)
        .min(cwnd_quota(tx.send_window(), tx.pipe()))
        .min(available)
        .max(1)
}

/// Segments one skb may take from a congestion window of `cwnd` segments with `pipe` in
/// flight (`tcp_cwnd_test()`: at most half the window, so that at least two skbs are in
/// flight).
pub fn cwnd_quota(cwnd: u64, pipe: u64) -> u64 {
    cwnd.saturating_sub(pipe).min((cwnd / 2).max(1))
}

/// The skb a subflow is sending, segment by segment: the simulator makes one segment per
/// poll, so it remembers how many of the skb's segments are still to come.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GsoBatch {
    left: u64,
    /// The skb holds more than one segment: its last carries PSH.
    multi: bool,
}

impl GsoBatch {
    /// Whether no skb is being sent (the next segment starts one).
    pub fn is_done(&self) -> bool {
        self.left == 0
    }

    /// Starts an skb of `segments`, at least one.
    pub fn start(&mut self, segments: u64) {
        debug_assert!(segments >= 1, "an skb holds at least one segment");
        self.left = segments;
        self.multi = segments > 1;
    }

    /// Takes the skb's next segment: whether it is the last of an skb of several, which
    /// `__tcp_transmit_skb()` pushes.
    pub fn take(&mut self) -> bool {
        self.left = self.left.saturating_sub(1);
        self.left == 0 && self.multi
    }

    /// The sending pass ended: an skb never spans two calls of `tcp_write_xmit()`.
    pub fn end(&mut self) {
        self.left = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn two_segments_at_ten_megabits_and_tens_of_milliseconds() {
        // 1.2 × 10 Mbit/s is 1.5 MB/s: 1464 bytes a millisecond, one segment; the RTT's
        // term, 64 KB >> (µs >> 9), is under a segment from about 3 ms and 0 from 8.7 ms.
        assert_eq!(tso_segs(1_500_000, 40 * MS), 2);
        assert_eq!(tso_segs(1_500_000, 17 * MS), 2);
    }

    #[test]
    fn the_skb_grows_with_the_rate_and_for_short_rtts() {
        // 100 MB/s: 97,656 bytes a millisecond, held to 64 KB = 44 segments of 1460.
        assert_eq!(tso_segs(100_000_000, 40 * MS), 44);
        // 12 MB/s: 11,718 bytes, 8 segments.
        assert_eq!(tso_segs(12_000_000, 40 * MS), 8);
        // A 1 ms minimum RTT adds 64 KB >> (1000 >> 9 = 1) = 32 KB: 22 more segments.
        assert_eq!(tso_segs(1_500_000, MS), (1_464 + 32_768) / 1_460);
        // Under 512 µs all of 64 KB.
        assert_eq!(tso_segs(1_500_000, MS / 4), 44);
        // No RTT sample yet: the rate alone.
        assert_eq!(tso_segs(1_500_000, 0), 2);
    }

    #[test]
    fn one_skb_takes_at_most_half_the_window_and_what_is_left() {
        assert_eq!(cwnd_quota(10, 0), 5);
        assert_eq!(cwnd_quota(10, 7), 3);
        assert_eq!(cwnd_quota(10, 10), 0);
        assert_eq!(cwnd_quota(1, 0), 1);
        assert_eq!(cwnd_quota(4, 9), 0);
    }

    #[test]
    fn an_skb_takes_the_least_of_the_rate_the_window_and_the_data() {
        let mut tx = Sender::new(true, 10_000);
        tx.set_cwnd(40.0);
        tx.ssthresh = 20.0;
        tx.rtt.srtt = 40 * MS;
        tx.rtt.min_rtt = 40 * MS;
        // 1.2 × 40 segments per 40 ms is 1.75 MB/s: 2 segments an skb.
        assert_eq!(skb_segments(&tx, 100), 2);
        assert_eq!(skb_segments(&tx, 1), 1, "the data there is");
        // A fast path: 40 segments per 1 ms is 70 MB/s, 44 segments; the window's
        // quota is half of it, 20.
        tx.rtt.srtt = MS;
        assert_eq!(skb_segments(&tx, 100), 20);
        assert_eq!(skb_segments(&tx, 7), 7);
    }

    #[test]
    fn only_the_last_segment_of_an_skb_of_several_is_pushed() {
        let mut skb = GsoBatch::default();
        assert!(skb.is_done());
        skb.start(3);
        let pushed: Vec<bool> = (0..3).map(|_| skb.take()).collect();
        assert_eq!(pushed, [false, false, true]);
        assert!(skb.is_done());
        skb.start(1);
        assert!(!skb.take(), "a one-segment skb is not pushed");
        skb.start(2);
        assert!(!skb.take());
        skb.end();
        assert!(
            skb.is_done(),
            "the pass ended before the skb's last segment"
        );
    }
}
