//! Data-level sequence space. A plain TCP connection uses the same code with one subflow,
//! where data and subflow sequence numbers coincide.

use crate::ranges::RangeSet;
use std::collections::{BTreeSet, VecDeque};

/// The sender's data level: what the application wrote, what the peer acknowledged at the
/// data level, its window, and segments to send again on another subflow.
pub struct DataSender {
    /// First data segment not yet acknowledged at the data level (DATA_ACK).
    pub una: u64,
    /// Next new data segment.
    pub nxt: u64,
    /// Segments the application has written (`u64::MAX` for a bulk source).
    pub app_limit: u64,
    /// The peer's receive window, segments beyond `una`.
    pub peer_window: u64,
    reinject: VecDeque<u64>,
    /// Reinjected once already: not queued again.
    reinjected: BTreeSet<u64>,
    /// The smallest of `reinjected` (`u64::MAX`: none), kept here so that a data ACK
    /// learns whether it covers any without reading the set's nodes (a cache miss per
    /// ACK at thousands of connections).
    reinjected_min: u64,
}

impl DataSender {
    pub fn new(app_limit: u64, peer_window: u64) -> Self {
        DataSender {
            una: 0,
            nxt: 0,
            app_limit,
            peer_window,
            reinject: VecDeque::new(),
            reinjected: BTreeSet::new(),
            reinjected_min: u64::MAX,
        }
    }

    fn drop_acked_reinjections(&mut self) {
        while self.reinject.front().is_some_and(|&d| d < self.una) {
            self.reinject.pop_front();
        }
    }

    /// Whether a segment could go now (a reinjection, or new data inside the window).
    pub fn has_data(&mut self) -> bool {
        self.drop_acked_reinjections();
        !self.reinject.is_empty()
            || (self.nxt < self.app_limit
                && self.nxt < self.una.saturating_add(self.peer_window.max(1)))
    }

    /// The data sequence number of the next segment to send. The caller checked `has_data`.
    pub fn take(&mut self) -> u64 {
        if let Some(d) = self.reinject.pop_front() {
            return d;
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
        // Forget the reinjections now acknowledged (usually there are none: no set is
        // split, nothing allocated, per data ACK).
        if self.reinjected_min < self.una {
            self.reinjected = self.reinjected.split_off(&self.una);
            self.reinjected_min = self.reinjected.first().copied().unwrap_or(u64::MAX);
        }
        n
    }

    /// Queues segments of a stalled subflow for other subflows (each at most once).
    pub fn reinject(&mut self, dsns: impl IntoIterator<Item = u64>) {
        let una = self.una;
        let reinjected = &mut self.reinjected;
        let min = &mut self.reinjected_min;
        self.reinject.extend(dsns.into_iter().filter(|&d| {
            let new = d >= una && reinjected.insert(d);
            if new {
                *min = (*min).min(d);
            }
            new
        }));
        self.reinject.make_contiguous().sort_unstable();
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

    #[test]
    fn flow_control_and_reinjection() {
        let mut tx = DataSender::new(100, 4);
        let sent: Vec<u64> = std::iter::from_fn(|| tx.has_data().then(|| tx.take())).collect();
        assert_eq!(sent, vec![0, 1, 2, 3], "the peer's window caps new data");
        tx.reinject([2, 1, 1]);
        tx.reinject([1]);
        assert!(tx.has_data());
        assert_eq!((tx.take(), tx.take()), (1, 2), "each once, in order");
        assert!(!tx.has_data());
        assert_eq!(tx.on_data_ack(2, 4), 2);
        assert_eq!(tx.on_data_ack(1, 4), 0, "an older DATA_ACK is ignored");
        assert_eq!(tx.take(), 4);
        tx.reinject([0, 1, 3]);
        assert_eq!(tx.take(), 3, "acknowledged segments are not reinjected");
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
