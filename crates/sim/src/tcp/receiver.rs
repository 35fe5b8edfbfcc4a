//! The receiving side of one TCP subflow: cumulative and selective acknowledgement,
//! delayed ACKs (every second segment or after 40 ms, immediately when out of order),
//! timestamps echo (RFC 7323). The advertised window belongs to the connection (MPTCP's
//! receive buffer is shared by all subflows), so it is not kept here, and neither is the
//! delayed-ACK timer: it lives in the connection's timer table.

use crate::ranges::RangeSet;

/// Linux's minimum delayed-ACK timeout.
pub const DELACK_TIMEOUT: u64 = 40_000_000;

pub struct Receiver {
    pub rcv_nxt: u64,
    ooo: RangeSet,
    /// The range holding the most recent out-of-order arrival (first SACK block).
    recent: Option<u64>,
    pending: u32,
    ts_recent: u64,
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

impl Receiver {
    pub fn new(delayed_ack: bool, sack: bool) -> Self {
        Receiver {
            rcv_nxt: 0,
            ooo: RangeSet::default(),
            recent: None,
            pending: 0,
            ts_recent: 0,
            delayed_ack,
            sack,
        }
    }

    pub fn on_data(&mut self, seq: u64, ts: u64) -> DataResult {
        // Everything held out of order lies above `rcv_nxt`: the next in-order segment
        // need not look there.
        if seq < self.rcv_nxt || (seq > self.rcv_nxt && self.ooo.contains(seq)) {
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
        // In order. Echo the oldest unacknowledged segment's timestamp (RFC 7323).
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
        let ack_now = !self.delayed_ack || filled_hole || self.pending >= 2;
        DataResult {
            delivered,
            fresh: true,
            ack_now,
        }
    }

    /// Segments held out of order.
    pub fn ooo_segments(&self) -> u64 {
        self.ooo.len()
    }

    /// Fields of the ACK to send now: (cumulative ack, TSecr, SACK blocks). Resets the
    /// delayed-ACK count (the caller stops the timer).
    pub fn make_ack(&mut self) -> (u64, u64, [(u32, u32); 3]) {
        self.pending = 0;
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

    #[test]
    fn delayed_ack_every_second_segment() {
        let mut r = Receiver::new(true, true);
        assert!(!r.on_data(0, 1).ack_now);
        assert!(r.on_data(1, 2).ack_now);
        let (ack, tsecr, sack) = r.make_ack();
        assert_eq!((ack, tsecr, sack[0]), (2, 1, (0, 0)));
    }

    #[test]
    fn sack_blocks_most_recent_first_and_hole_fill() {
        let mut r = Receiver::new(true, true);
        r.on_data(0, 1);
        assert!(r.on_data(2, 1).ack_now);
        assert!(r.on_data(5, 1).ack_now);
        r.on_data(6, 1);
        let (ack, _, sack) = r.make_ack();
        assert_eq!(ack, 1);
        assert_eq!(sack, [(4, 6), (1, 2), (0, 0)]);
        assert_eq!(r.ooo_segments(), 3);
        let res = r.on_data(1, 9);
        assert_eq!(
            res,
            DataResult {
                delivered: 2,
                fresh: true,
                ack_now: true
            }
        );
        let (ack, tsecr, sack) = r.make_ack();
        assert_eq!((ack, tsecr), (3, 9));
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
                delivered += r.on_data(s, 1).delivered;
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
