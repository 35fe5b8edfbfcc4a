//! RACK, the time-based loss detection of RFC 8985, as Linux runs it by default
//! (`net.ipv4.tcp_recovery = 1`; net/ipv4/tcp_recovery.c).
//!
//! A segment is lost once a segment sent after it has been delivered (acknowledged or
//! SACKed) and more than the delivery's RTT plus a reordering window has passed since it
//! was sent. Unlike a count of duplicate ACKs it needs a single later delivery, and it
//! applies to retransmissions too: a window of two or three segments, or a retransmission
//! lost again, is recovered in about one RTT rather than by the retransmission timer.

use net::Nanos;

/// Whether a transmission at `t1` of the segment ending at `seq1` came after one at `t2`
/// of the segment ending at `seq2` (`tcp_skb_sent_after()`: segments sent at the same
/// instant are ordered by sequence).
pub fn sent_after(t1: Nanos, t2: Nanos, seq1: u64, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// The most recent delivery RACK knows of (`tp->rack`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rack {
    /// When the most recently sent delivered segment was (last) sent (`rack.mstamp`).
    pub xmit_ts: Nanos,
    /// One past its sequence (`rack.end_seq`).
    pub end_seq: u64,
    /// The RTT that delivery measured (`rack.rtt_us`).
    pub rtt: Nanos,
    /// A delivery was recorded since the last loss scan (`rack.advanced`).
    pub advanced: bool,
}

impl Rack {
    /// A segment sent at `xmit_ts` and ending at `end_seq` was delivered at `now`
    /// (`tcp_rack_advance()`). A retransmitted segment delivered sooner than the path's
    /// smallest RTT after its last transmission was the original's delivery, not the
    /// retransmission's, and tells nothing of when the retransmission left.
    pub fn advance(
        &mut self,
        now: Nanos,
        ever_retransmitted: bool,
        end_seq: u64,
        xmit_ts: Nanos,
        min_rtt: Nanos,
    ) {
        let rtt = now.saturating_sub(xmit_ts);
        if rtt < min_rtt && ever_retransmitted {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if sent_after(xmit_ts, self.xmit_ts, end_seq, self.end_seq) {
            self.xmit_ts = xmit_ts;
            self.end_seq = end_seq;
        }
    }

    /// How long past `now` a segment sent at `sent_at` still has before it counts as lost;
    /// zero or less: lost now (`tcp_rack_skb_timeout()`).
    pub fn remaining(&self, now: Nanos, sent_at: Nanos, reo_wnd: Nanos) -> i64 {
        (self.rtt + reo_wnd) as i64 - now.saturating_sub(sent_at) as i64
    }
}

/// The reordering window (`tcp_rack_reo_wnd()`). The simulated links never reorder, so
/// Linux's `reord_seen` stays zero: no window in recovery, after a timeout, or once as many
/// segments are SACKed as the duplicate-ACK threshold; otherwise a quarter of the smallest
/// RTT, at most the smoothed RTT (DSACK-driven growth of the window needs reordering).
pub fn reo_wnd(
    loss_recovery: bool,
    sacked_out: u64,
    dup_thresh: u64,
    min_rtt: Nanos,
    srtt: Nanos,
) -> Nanos {
    if loss_recovery || sacked_out >= dup_thresh {
        0
    } else {
        (min_rtt / 4).min(srtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn the_latest_sent_delivery_is_kept_and_its_rtt_is_the_last_measured() {
        let mut r = Rack::default();
        r.advance(150 * MS, false, 5, 50 * MS, 100 * MS);
        assert_eq!(
            (r.xmit_ts, r.end_seq, r.rtt, r.advanced),
            (50 * MS, 5, 100 * MS, true)
        );
        // An older segment's later delivery (a SACK of a segment sent earlier) updates the
        // RTT but not which segment is the latest sent.
        r.advance(160 * MS, false, 3, 40 * MS, 100 * MS);
        assert_eq!((r.xmit_ts, r.end_seq, r.rtt), (50 * MS, 5, 120 * MS));
        // Same send time: the higher sequence is the later.
        r.advance(170 * MS, false, 6, 50 * MS, 100 * MS);
        assert_eq!(r.end_seq, 6);
    }

    #[test]
    fn a_retransmission_delivered_too_soon_is_ambiguous_and_ignored() {
        let mut r = Rack::default();
        r.advance(130 * MS, true, 5, 100 * MS, 100 * MS);
        assert_eq!(
            r,
            Rack::default(),
            "30 ms after the retransmission, on a 100 ms path"
        );
        r.advance(200 * MS, true, 5, 100 * MS, 100 * MS);
        assert!(r.advanced && r.rtt == 100 * MS);
    }

    #[test]
    fn reordering_window_as_tcp_rack_reo_wnd() {
        assert_eq!(reo_wnd(false, 0, 3, 40 * MS, 60 * MS), 10 * MS);
        assert_eq!(
            reo_wnd(false, 2, 3, 40 * MS, 5 * MS),
            5 * MS,
            "at most srtt"
        );
        assert_eq!(
            reo_wnd(false, 3, 3, 40 * MS, 60 * MS),
            0,
            "dupthresh SACKed"
        );
        assert_eq!(reo_wnd(true, 0, 3, 40 * MS, 60 * MS), 0, "in recovery");
        let r = Rack {
            rtt: 100 * MS,
            ..Rack::default()
        };
        assert_eq!(r.remaining(300 * MS, 190 * MS, 10 * MS), 0);
        assert_eq!(r.remaining(300 * MS, 195 * MS, 10 * MS), 5 * MS as i64);
    }
}
