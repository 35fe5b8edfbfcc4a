//! Data-level sequence space. A plain TCP connection uses the same code with one subflow,
//! where data and subflow sequence numbers coincide.

use crate::packet::MSS;
use crate::ranges::RangeSet;
use std::ops::Range;

/// Segments in one of Linux's data fragments (`struct mptcp_data_frag`): `mptcp_sendmsg()`
/// copies the application's data into 32 KB page fragments (`SKB_FRAG_PAGE_ORDER`), so an
/// application that writes in large chunks fills fragments of about 32 KB, and the
/// data-level timer re-sends at most one of them (`__mptcp_retrans()`).
pub const DFRAG_SEGMENTS: u64 = 32 * 1024 / MSS as u64;

/// How much the application hands the socket per write: the kernel backend's sending
/// agent writes 64 KiB at a time, and `tcp_sendmsg()` ends each write with `tcp_push()`,
/// which flags PSH on the queued skb holding the write's last byte, so it leaves on that
/// skb's last segment. The simulator sets it on the segment holding the byte (see
/// `tcp::gso`).
pub const APP_WRITE_BYTES: u64 = 64 * 1024;

/// The sender's data level: what the application wrote, what the peer acknowledged at the
/// data level, its window, and what is to be sent again.
pub struct DataSender {
    /// First data segment not yet acknowledged at the data level (DATA_ACK).
    pub una: u64,
    /// Next new data segment.
    pub nxt: u64,
    /// Segments the application has written (`u64::MAX` for a bulk source).
    pub app_limit: u64,
    /// The peer's receive window, segments beyond `una`.
    pub peer_window: u64,
    /// Rewound data still to be sent again through the scheduler, from its start (Linux's
    /// recovery after `__mptcp_retransmit_pending_data()`); empty when none.
    resend: Range<u64>,
    /// Segments handed to the subflows again at the data level (rewound, or re-sent by
    /// the data-level timer): data the peer may already hold.
    pub resent: u64,
}

impl DataSender {
    pub fn new(app_limit: u64, peer_window: u64) -> Self {
        DataSender {
            una: 0,
            nxt: 0,
            app_limit,
            peer_window,
            resend: 0..0,
            resent: 0,
        }
    }

    /// Whether a segment could go now (rewound data, or new data inside the window).
    pub fn has_data(&mut self) -> bool {
        self.has_data_within(u64::MAX)
    }

    /// Whether a segment could go now with at most `write_limit` segments written and not
    /// yet acknowledged at the data level (the connection's send buffer: Linux's
    /// `mptcp_sendmsg()` takes no more from the application beyond it). Rewound data was
    /// written already and goes whatever the limit.
    pub fn has_data_within(&mut self, write_limit: u64) -> bool {
        self.resend.start = self.resend.start.max(self.una);
        self.has_send_head(self.peer_window.max(1).min(write_limit))
    }

    /// Whether the application has written data, within the connection's send buffer of
    /// `write_limit` segments, that no subflow has been given yet, whatever the peer's
    /// window: Linux's send head (`mptcp_send_head()`), with which the scheduler is
    /// consulted even if nothing can go.
    pub fn has_send_head(&self, write_limit: u64) -> bool {
        let rewound = self.resend.start.max(self.una) < self.resend.end;
        rewound || (self.nxt < self.app_limit && self.nxt < self.una.saturating_add(write_limit))
    }

    /// Segments the peer's window takes beyond what goes next: Linux's `mptcp_wnd_end()`
    /// less the data sequence number of the data being sent (`mptcp_check_allowed_size()`),
    /// so rewound data is measured from where it starts.
    pub fn window_room(&self) -> u64 {
        // Rewound data the DATA_ACK has since covered is not waiting any more.
        let rewound_from = self.resend.start.max(self.una);
        let sent_to = if rewound_from < self.resend.end {
            rewound_from
        } else {
            self.nxt
        };
        self.una
            .saturating_add(self.peer_window.max(1))
            .saturating_sub(sent_to)
    }

    /// Whether the peer's window reaches beyond the highest data sent
    /// (`after64(msk->wnd_end, msk->snd_nxt)` in `ack_update_msk()`; since Linux 5.16 a
    /// rewind leaves `snd_nxt` where it was).
    pub fn window_open(&self) -> bool {
        self.una.saturating_add(self.peer_window.max(1)) > self.nxt
    }

    /// Segments that could go now, one after another: what is rewound, or else new data
    /// within the peer's window (the data an skb can take, see `tcp::gso`).
    pub fn sendable(&self) -> u64 {
        let rewound = self
            .resend
            .end
            .saturating_sub(self.resend.start.max(self.una));
        if rewound > 0 {
            return rewound;
        }
        self.app_limit
            .saturating_sub(self.nxt)
            .min(self.window_room())
    }

    /// Whether the application has written data not yet sent once, whatever the window
    /// and the send buffer (see `has_send_head` for Linux's send head).
    pub fn has_unsent(&self) -> bool {
        self.nxt < self.app_limit
    }

    /// Whether the next segment `take` gives is rewound data, sent before.
    pub fn is_resending(&self) -> bool {
        !self.resend.is_empty()
    }

    /// The data sequence number of the next segment to send. The caller checked `has_data`.
    pub fn take(&mut self) -> u64 {
        if !self.resend.is_empty() {
            self.resent += 1;
            self.resend.start += 1;
            return self.resend.start - 1;
        }
        self.nxt += 1;
        self.nxt - 1
    }

    /// A data-level acknowledgement with the peer's window. Returns the segments newly
    /// acknowledged.
    pub fn on_data_ack(&mut self, ack: u64, window: u64) -> u64 {
        // An ACK from a slow subflow can be older than one already seen on a fast one.
        if ack < self.una {
            return 0;
        }
        let n = ack - self.una;
        self.una = ack.min(self.nxt);
        self.peer_window = window;
        n
    }

    /// Sends everything not yet acknowledged at the data level again, from the first
    /// unacknowledged segment: Linux's `__mptcp_retransmit_pending_data()` rewinds the
    /// send queue to `snd_una` when a subflow goes stale, whichever subflow carried the
    /// data and whether or not the peer already holds it.
    pub fn rewind(&mut self) {
        self.resend = self.una..self.nxt;
    }

    /// What the data-level timer re-sends (Linux's `__mptcp_retrans()`): the segments of
    /// the first unacknowledged data fragment that were sent once already, from the first
    /// unacknowledged one. Rewound data not yet sent again is not re-sent here.
    pub fn head_fragment(&self) -> Range<u64> {
        let fragment_end = (self.una / DFRAG_SEGMENTS + 1) * DFRAG_SEGMENTS;
        let mut end = fragment_end.min(self.nxt);
        if !self.resend.is_empty() {
            end = end.min(self.resend.start);
        }
        self.una..end.max(self.una)
    }

    /// Whether new data segment `dsn` holds the end of one of the application's writes:
    /// every `APP_WRITE_BYTES`, and the last byte it has written (`tcp_push()` at the end
    /// of `tcp_sendmsg()`, PSH on the segment). Plain TCP, and MPTCP's schedulers other
    /// than Linux's, push there; Linux's MPTCP scheduler pushes at the end of each burst.
    pub fn ends_write(&self, dsn: u64) -> bool {
        let (start, end) = (dsn * MSS as u64, (dsn + 1) * MSS as u64);
        // A write ends in (start, end].
        dsn + 1 == self.app_limit || end / APP_WRITE_BYTES != start / APP_WRITE_BYTES
    }

    /// Counts a segment the caller sent again at the data level.
    pub fn count_resent(&mut self) {
        self.resent += 1;
    }

    pub fn all_acked(&self) -> bool {
        self.una >= self.app_limit
    }
}

/// The receiver's data level: reassembly in data-sequence order and the shared buffer.
/// The application reads in-order data at once, so the buffer holds what is out of order.
pub struct DataReceiver {
    pub rcv_nxt: u64,
    ooo: RangeSet,
    pub buffer_segs: u64,
}

impl DataReceiver {
    pub fn new(buffer_segs: u64) -> Self {
        DataReceiver {
            rcv_nxt: 0,
            ooo: RangeSet::default(),
            buffer_segs,
        }
    }

    /// A data segment arrived on some subflow: segments newly delivered in order.
    pub fn on_data(&mut self, dsn: u64) -> u64 {
        if dsn < self.rcv_nxt {
            return 0;
        }
        if dsn > self.rcv_nxt {
            self.ooo.insert(dsn);
            return 0;
        }
        let before = self.rcv_nxt;
        self.rcv_nxt += 1;
        if let Some(end) = self.ooo.pop_front_at(self.rcv_nxt) {
            self.rcv_nxt = end;
        }
        self.rcv_nxt - before
    }

    /// Whether the buffer holds anything (out-of-order data; in-order data is read at
    /// once): Linux's `sk_rmem_alloc` of the connection after a read.
    pub fn holds_data(&self) -> bool {
        !self.ooo.is_empty()
    }

    /// The advertised window: buffer space not taken by out-of-order data.
    pub fn window(&self) -> u32 {
        self.buffer_segs
            .saturating_sub(self.ooo.len())
            .min(u32::MAX as u64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(tx: &mut DataSender) -> Vec<u64> {
        std::iter::from_fn(|| tx.has_data().then(|| tx.take())).collect()
    }

    #[test]
    fn the_window_is_open_beyond_the_highest_data_sent_whatever_a_rewind() {
        let mut tx = DataSender::new(100, 4);
        drain(&mut tx);
        assert!(!tx.window_open());
        tx.rewind();
        assert!(
            !tx.window_open(),
            "a rewind leaves snd_nxt where it was (Linux 5.16 on)"
        );
        assert_eq!(
            tx.window_room(),
            4,
            "rewound data is measured from where it starts"
        );
        assert_eq!(tx.on_data_ack(4, 4), 4);
        assert!(tx.window_open());
        assert_eq!(
            tx.window_room(),
            4,
            "rewound data the DATA_ACK covered waits no more"
        );
    }

    #[test]
    fn flow_control_and_rewind() {
        let mut tx = DataSender::new(100, 4);
        assert_eq!(
            drain(&mut tx),
            vec![0, 1, 2, 3],
            "the peer's window caps new data"
        );
        assert_eq!(tx.on_data_ack(1, 4), 1);
        tx.rewind();
        assert_eq!(
            tx.take(),
            1,
            "a rewind starts at the first unacknowledged segment"
        );
        assert_eq!(tx.on_data_ack(3, 4), 2);
        assert_eq!(tx.on_data_ack(2, 4), 0, "an older DATA_ACK is ignored");
        assert_eq!(
            drain(&mut tx),
            vec![3, 4, 5, 6],
            "acknowledged segments are skipped, then new data follows"
        );
        assert_eq!(tx.resent, 2);
        tx.rewind();
        tx.rewind();
        assert_eq!(
            drain(&mut tx),
            vec![3, 4, 5, 6],
            "a second rewind starts over"
        );
        assert_eq!(tx.resent, 6);
    }

    #[test]
    fn the_data_level_timer_resends_the_sent_part_of_the_head_fragment() {
        let mut tx = DataSender::new(u64::MAX, 1000);
        for _ in 0..DFRAG_SEGMENTS + 5 {
            tx.take();
        }
        assert_eq!(tx.head_fragment(), 0..DFRAG_SEGMENTS);
        tx.on_data_ack(DFRAG_SEGMENTS - 3, 1000);
        assert_eq!(tx.head_fragment(), DFRAG_SEGMENTS - 3..DFRAG_SEGMENTS);
        tx.on_data_ack(DFRAG_SEGMENTS + 1, 1000);
        assert_eq!(
            tx.head_fragment(),
            DFRAG_SEGMENTS + 1..DFRAG_SEGMENTS + 5,
            "only what was sent once"
        );
        tx.rewind();
        assert!(
            tx.head_fragment().is_empty(),
            "rewound and not yet sent again: nothing for the timer"
        );
        tx.take();
        tx.on_data_ack(DFRAG_SEGMENTS + 5, 1000);
        assert!(tx.head_fragment().is_empty(), "everything acknowledged");
    }

    #[test]
    fn shared_buffer_fills_with_out_of_order_data() {
        let mut rx = DataReceiver::new(10);
        assert_eq!(rx.on_data(1), 0);
        assert_eq!(rx.on_data(2), 0);
        assert_eq!(rx.on_data(2), 0, "a duplicate from another subflow");
        assert_eq!(rx.window(), 8);
        assert_eq!(rx.on_data(0), 3);
        assert_eq!(rx.window(), 10);
    }
}
