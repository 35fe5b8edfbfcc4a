//! Proportional Rate Reduction (RFC 6937), the window Linux uses in fast recovery:
//! `tcp_cwnd_reduction()` (net/ipv4/tcp_input.c).
//!
//! Fast recovery does not cut the window to the new threshold at once. From the window at
//! the loss (`prior_cwnd`) it lets the sender send, on each ACK that delivers data, in
//! proportion to what was delivered: `ssthresh / prior_cwnd` of it, so the flight shrinks to
//! the threshold over one round trip, at the rate of the ACKs, instead of the sender going
//! silent for half a round trip and then sending one segment per ACK. When losses have left
//! less in flight than the threshold (the slow-start reduction bound), it may send what was
//! delivered, one more if the ACK advanced the cumulative point without a new loss, but no
//! more than brings the flight up to the threshold. The first ACK of recovery always lets
//! one segment go (the fast retransmission). The window is set to what is in flight plus
//! what may be sent (`tcp_snd_cwnd_set(tp, tcp_packets_in_flight(tp) + sndcnt)`); at the end
//! of recovery it becomes the threshold (`tcp_end_cwnd_reduction()`, the sender's job).

/// One recovery episode's counts (`tp->prior_cwnd`, `tp->prr_delivered`, `tp->prr_out`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prr {
    prior_cwnd: u64,
    delivered: u64,
    out: u64,
}

/// What one ACK did, as `tcp_cwnd_reduction()` reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Segments newly delivered: cumulatively acknowledged and not SACKed before, or newly
    /// SACKed (`tcp_newly_delivered()`).
    pub segments: u64,
    /// The ACK marked segments lost (`rs->losses` > 0).
    pub newly_lost: bool,
    /// The ACK advanced the cumulative acknowledgement (`FLAG_SND_UNA_ADVANCED`).
    pub una_advanced: bool,
}

impl Delivery {
    /// RACK's reordering timer found a loss and starts recovery with no ACK: Linux counts
    /// one segment delivered (`tcp_rack_reo_timeout()`).
    pub fn reordering_timeout() -> Self {
        Delivery {
            segments: 1,
            newly_lost: true,
            una_advanced: false,
        }
    }
}

impl Prr {
    /// Recovery begins with the window at `prior_cwnd` (`tcp_init_cwnd_reduction()`).
    pub fn new(prior_cwnd: u64) -> Self {
        Prr {
            prior_cwnd: prior_cwnd.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// A segment, new or sent again, left during recovery (`tp->prr_out`).
    pub fn sent(&mut self) {
        self.out += 1;
    }

    /// The window after an ACK that delivered `delivery`, with `in_flight` segments in the
    /// network and the threshold `ssthresh`; `None` if it delivered nothing (the window
    /// stays as it is).
    pub fn window(&mut self, delivery: Delivery, ssthresh: u64, in_flight: u64) -> Option<u64> {
        if delivery.segments == 0 {
            return None;
        }
        self.delivered += delivery.segments;
        let sndcnt = if in_flight > ssthresh {
            // The proportional part: ceil(ssthresh * delivered / prior_cwnd) - out.
            let allowed = (ssthresh * self.delivered).div_ceil(self.prior_cwnd);
            allowed.saturating_sub(self.out)
        } else {
            let room = ssthresh - in_flight;
            let catch_up = self
                .delivered
                .saturating_sub(self.out)
                .max(delivery.segments);
            let bonus = (delivery.una_advanced && !delivery.newly_lost) as u64;
            (catch_up + bonus).min(room)
        };
        // Force a fast retransmission upon entering fast recovery.
        let sndcnt = if self.out == 0 { sndcnt.max(1) } else { sndcnt };
        Some(in_flight + sndcnt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivered(segments: u64, newly_lost: bool, una_advanced: bool) -> Delivery {
        Delivery {
            segments,
            newly_lost,
            una_advanced,
        }
    }

    fn one(una_advanced: bool) -> Delivery {
        delivered(1, false, una_advanced)
    }

    /// RFC 6937's first example: a window of 20, one segment lost, the threshold 10. Each
    /// ACK delivers one segment; the sender sends whenever the window allows, so the
    /// flight is the window. PRR sends one segment for every two delivered, from the first
    /// ACK on, and ends the round trip with 10 in flight.
    #[test]
    fn one_loss_sends_one_segment_for_every_two_delivered() {
        let mut prr = Prr::new(20);
        let mut in_flight = 19; // one of 20 lost
        let mut sent_on = Vec::new();
        for ack in 1..=19 {
            in_flight -= 1;
            let window = prr.window(one(false), 10, in_flight).unwrap();
            let sends = window - in_flight;
            for _ in 0..sends {
                prr.sent();
            }
            in_flight += sends;
            if sends > 0 {
                sent_on.push(ack);
            }
        }
        // ceil(10 * k / 20) segments after k deliveries: the first ACK sends the fast
        // retransmission, then every second one, while more than the threshold is in
        // flight. At the 17th the flight is down to 10: Linux's `delta < 0` test hands over
        // to the reduction bound, which sends nothing then (no room) and makes the
        // difference up on the next ACK, when the flight is 9.
        assert_eq!(sent_on, vec![1, 3, 5, 7, 9, 11, 13, 15, 18, 19]);
        assert_eq!(in_flight, 10);
    }

    #[test]
    fn the_first_ack_always_lets_the_retransmission_go() {
        // The flight is down to the threshold already (losses took the rest): the reduction
        // bound has no room, but recovery's first ACK lets one segment go, the fast
        // retransmission. The next ACK finds the same and lets none go.
        let mut prr = Prr::new(20);
        assert_eq!(prr.window(one(false), 10, 10), Some(11));
        prr.sent();
        assert_eq!(prr.window(one(false), 10, 10), Some(10));
    }

    #[test]
    fn an_ack_that_delivers_nothing_leaves_the_window() {
        let mut prr = Prr::new(20);
        let nothing = Delivery::default();
        assert_eq!(prr.window(nothing, 10, 15), None);
        // Nothing counted: the next ACK of one is still the first delivery.
        assert_eq!(prr.window(one(false), 10, 15), Some(16));
    }

    /// Below the threshold (many losses), the slow-start reduction bound: what was delivered
    /// and not yet matched by sends, one more when the cumulative point advanced without a
    /// new loss, up to the threshold.
    #[test]
    fn below_the_threshold_the_flight_grows_back_by_what_was_delivered_plus_one() {
        let mut prr = Prr::new(20);
        prr.sent(); // the fast retransmission went already
        // 4 in flight, threshold 10: 1 delivered, so 1, plus 1 as the ACK advanced.
        assert_eq!(prr.window(one(true), 10, 4), Some(6));
        // With a new loss on the ACK, no extra segment.
        let lost = delivered(1, true, true);
        let mut prr = Prr::new(20);
        prr.sent();
        assert_eq!(prr.window(lost, 10, 4), Some(5));
        // Never beyond the threshold: 9 delivered at once with 8 in flight.
        let many = delivered(9, false, true);
        let mut prr = Prr::new(20);
        prr.sent();
        assert_eq!(prr.window(many, 10, 8), Some(10));
    }

    #[test]
    fn delivered_data_not_yet_matched_by_sends_is_made_up_below_the_threshold() {
        let mut prr = Prr::new(20);
        // Two ACKs above the threshold: 1 may go after the first (sent), none after the
        // second (ceil(10 * 2 / 20) = 1 already out).
        assert_eq!(prr.window(one(false), 10, 14), Some(15));
        prr.sent();
        assert_eq!(prr.window(one(false), 10, 14), Some(14));
        // Then the flight falls below the threshold: 3 delivered, 1 out, so 2 may go
        // (and no extra, the cumulative point did not move).
        assert_eq!(prr.window(one(false), 10, 7), Some(9));
    }
}
