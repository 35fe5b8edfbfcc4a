//! The event queue: integer nanosecond time, ties broken by insertion order, so a run is a
//! pure function of its inputs and seed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A link direction finished transmitting a packet.
    LinkTx(u32),
    /// The head of a link direction's pipe reached the far end.
    LinkArrive(u32),
    /// Retransmission timer of a connection's subflow.
    Rto(u32, u8),
    /// Delayed-ACK timer of a connection's subflow.
    DelAck(u32, u8),
    /// An MPTCP subflow's MP_JOIN handshake completes.
    Join(u32, u8),
    /// A flow instance starts (or starts its next burst).
    FlowStart(u32),
    /// An on/off flow's burst ends.
    BurstEnd(u32),
    /// A flow instance's stop time.
    FlowStop(u32),
    /// A scenario event (index into the scenario's events).
    Scenario(u32),
    /// Periodic measurement: goodput bins, reconnect checks.
    Sample,
    /// Periodic window, RTT and queue traces.
    Trace,
    /// End of the warm-up: counters are snapshotted.
    Warmup,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    pub popped: u64,
}

impl EventQueue {
    pub fn push(&mut self, time: u64, ev: Ev) {
        self.heap.push(Entry {
            time,
            seq: self.next_seq,
            ev,
        });
        self.next_seq += 1;
    }
    pub fn pop(&mut self) -> Option<(u64, Ev)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((e.time, e.ev))
    }
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, Ev::Sample);
        q.push(3, Ev::LinkTx(1));
        q.push(3, Ev::LinkTx(2));
        assert_eq!(q.pop(), Some((3, Ev::LinkTx(1))));
        assert_eq!(q.pop(), Some((3, Ev::LinkTx(2))));
        assert_eq!(q.pop(), Some((5, Ev::Sample)));
        assert_eq!(q.pop(), None);
    }
}
