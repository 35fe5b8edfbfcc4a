//! One direction of a link: a FIFO queue, a transmitter at the link's rate, and the pipe of
//! packets in propagation.
//!
//! A FIFO link at a known rate knows, when a packet is queued, when its transmission will
//! start and end and when it will reach the far end. So each packet is put in one deque
//! with the end of its transmission and its arrival (it starts when the one ahead ends, or
//! at once on an idle link), and the direction asks its caller for one wake-up only: the
//! arrival of the deque's head at the far end. Everything that happens in between
//! (transmissions ending, the next packet starting, random loss on the wire, the queue
//! emptying for RED's idle decay, the queue-length integral) is played back in time order
//! by [`LinkDir::advance`] whenever the direction is next touched: before an arrival is
//! admitted, before a packet is delivered, before a scheduled change or a read of the
//! statistics. Drop-tail and RED read the queue's occupancy after that playback.
//!
//! Events due at the same time: a transmission that ends at `t` has ended for a packet
//! that arrives at `t` (it finds the next packet in service), and a change of the link at
//! `t` applies after the transmissions that end at `t`.
//!
//! The caller owns time. It schedules the wake-up this type asks for and calls
//! [`LinkDir::deliver`] then; a wake-up made stale by a change (the link going down, a new
//! delay) is recognised and ignored here, so callers need no cancellation.

use crate::aqm::{Aqm, AqmParams};
use crate::{Nanos, Packet, tx_time};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::model::{DirConfig, EventKind};
use scenario::spec::QueueSpec;
use scenario::units::Size;

#[derive(Clone, Debug, PartialEq)]
pub struct LinkParams {
    pub rate_bps: u64,
    pub delay: Nanos,
    /// Queue limit: packets when `limit_in_bytes` is false, else bytes.
    pub limit: u64,
    pub limit_in_bytes: bool,
    pub aqm: AqmParams,
    pub loss: f64,
}

impl LinkParams {
    /// The link model for one direction of a scenario link. RED thresholds keep the unit of
    /// the queue's limit (packets or bytes).
    pub fn from_config(c: &DirConfig) -> Self {
        let (size, aqm) = match &c.queue {
            QueueSpec::Droptail { size } => (*size, AqmParams::DropTail),
            QueueSpec::Red {
                size,
                min_th,
                max_th,
                max_p,
                weight,
                gentle,
            } => (
                *size,
                AqmParams::Red {
                    min_th: *min_th,
                    max_th: *max_th,
                    max_p: *max_p,
                    weight: *weight,
                    gentle: *gentle,
                },
            ),
        };
        let (limit, limit_in_bytes) = match size {
            Size::Packets(p) => (p, false),
            Size::Bytes(b) => (b, true),
        };
        LinkParams {
            rate_bps: c.rate.bps(),
            delay: c.delay.nanos(),
            limit,
            limit_in_bytes,
            aqm,
            loss: c.loss.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The queue was full.
    Overflow,
    /// RED chose to drop it.
    Early,
    /// Random loss on the wire.
    Loss,
    /// The link was down.
    Down,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkStats {
    pub arrived_pkts: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub delivered_pkts: u64,
    pub drops_overflow: u64,
    pub drops_early: u64,
    pub drops_loss: u64,
    pub drops_down: u64,
    /// Integral of the queue length in packets over time (packet-nanoseconds).
    pub queue_area: u128,
    pub max_queue_pkts: u64,
}

impl LinkStats {
    pub fn drops(&self) -> u64 {
        self.drops_overflow + self.drops_early + self.drops_loss + self.drops_down
    }
}

/// What became of a packet offered to the link.
pub enum Enqueued<P> {
    /// Dropped on arrival; the packet is handed back (for statistics or pcap).
    Dropped(P, DropReason),
    /// Taken. `wake`: the direction was empty, so call [`LinkDir::deliver`] at this time
    /// (this packet's arrival at the far end).
    Accepted { wake: Option<Nanos> },
}

/// The head of the pipe at its arrival time.
#[derive(Debug, PartialEq)]
pub enum Arrival<P> {
    /// It reached the far end.
    Delivered(P),
    /// It was lost on the wire (handed back for its buffer; already counted as a drop).
    Lost(P),
}

/// How many packets ahead of the head of a pipe `deliver` asks the CPU to load.
const PREFETCH_AHEAD: usize = 4;

/// A packet in the direction, with the times the FIFO discipline fixed when it was queued.
/// 32 bytes for the simulator's 12-byte packet: two to a cache line.
struct Slot<P> {
    pkt: P,
    tx_end: Nanos,
    arrival: Nanos,
    lost: bool,
}

/// The packets of a direction by their count: packet `n` (counting every packet ever
/// accepted) is in `buf[n & mask]`. The direction's counts index it directly, where a
/// `VecDeque` took each count relative to its head and wrapped it, a few instructions per
/// access and a dozen accesses per packet and hop. The length is a power of two, doubled
/// when full.
struct Ring<P> {
    buf: Vec<Option<Slot<P>>>,
    mask: usize,
}

impl<P> Ring<P> {
    fn new() -> Self {
        Ring {
            buf: Vec::new(),
            mask: 0,
        }
    }

    fn capacity(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    fn get(&self, n: usize) -> &Slot<P> {
        self.buf[n & self.mask]
            .as_ref()
            .expect("a packet in the direction")
    }

    #[inline]
    fn get_mut(&mut self, n: usize) -> &mut Slot<P> {
        self.buf[n & self.mask]
            .as_mut()
            .expect("a packet in the direction")
    }

    /// Puts packet `n` in; `[front, n)` are the packets held.
    #[inline]
    fn put(&mut self, front: usize, n: usize, slot: Slot<P>) {
        if n - front == self.capacity() {
            self.grow(front, n);
        }
        self.buf[n & self.mask] = Some(slot);
    }

    #[inline]
    fn take(&mut self, n: usize) -> Slot<P> {
        self.buf[n & self.mask]
            .take()
            .expect("a packet in the direction")
    }

    /// The place of packet `n` (to prefetch it; it may be empty).
    #[inline]
    fn place(&self, n: usize) -> Option<&Option<Slot<P>>> {
        self.buf.get(n & self.mask)
    }

    #[cold]
    fn grow(&mut self, front: usize, end: usize) {
        let capacity = (2 * self.capacity()).max(16);
        let mut buf: Vec<Option<Slot<P>>> = (0..capacity).map(|_| None).collect();
        for n in front..end {
            buf[n & (capacity - 1)] = self.buf[n & self.mask].take();
        }
        self.buf = buf;
        self.mask = capacity - 1;
    }
}

pub struct LinkDir<P> {
    params: LinkParams,
    /// Every packet not yet delivered, in order. Counting every packet ever accepted, the
    /// first `front` were delivered, `[front..departed]` have left the transmitter (in the
    /// pipe, or lost on the wire), `[departed..started]` is the one in transmission (if
    /// any), `[started..end]` wait in the queue. (Counts that only grow: taking a packet
    /// out changes one of them, not all.)
    slots: Ring<P>,
    front: usize,
    departed: usize,
    started: usize,
    end: usize,
    /// Bytes of the waiting packets.
    queued_bytes: u64,
    /// The wake-up asked of the caller and not yet taken: the head's arrival.
    wake: Option<Nanos>,
    up: bool,
    aqm: Aqm,
    rng: Xoshiro256PlusPlus,
    /// Time up to which the queue-length integral is accounted.
    last_change: Nanos,
    typical_tx: Nanos,
    /// The serialisation times of the last two packet sizes seen: almost every packet is a
    /// full segment or a pure ACK, and a 64-bit division per packet and hop is dear.
    tx_times: [(u32, Nanos); 2],
    pub stats: LinkStats,
}

impl<P: Packet> LinkDir<P> {
    pub fn new(params: LinkParams, seed: u64) -> Self {
        let typical_tx = tx_time(1500, params.rate_bps);
        LinkDir {
            aqm: Aqm::new(&params.aqm),
            params,
            slots: Ring::new(),
            front: 0,
            departed: 0,
            started: 0,
            end: 0,
            queued_bytes: 0,
            wake: None,
            up: true,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            last_change: 0,
            typical_tx,
            tx_times: [(u32::MAX, 0); 2],
            stats: LinkStats::default(),
        }
    }

    pub fn params(&self) -> &LinkParams {
        &self.params
    }
    pub fn is_up(&self) -> bool {
        self.up
    }
    /// Packets waiting, not counting the one being transmitted, as of the last time the
    /// direction was advanced (see [`LinkDir::sync_stats`]).
    pub fn queue_pkts(&self) -> usize {
        self.end() - self.started
    }
    pub fn queue_bytes(&self) -> u64 {
        self.queued_bytes
    }
    pub fn red_average(&self) -> Option<f64> {
        self.aqm.average()
    }

    /// The serialisation time of a packet of `bytes` at the current rate.
    #[inline]
    fn tx_time(&mut self, bytes: u32) -> Nanos {
        match self.tx_times {
            [(b, t), _] | [_, (b, t)] if b == bytes => t,
            [first, _] => {
                let t = tx_time(bytes, self.params.rate_bps);
                self.tx_times = [(bytes, t), first];
                t
            }
        }
    }

    /// One past the last packet accepted.
    #[inline]
    fn end(&self) -> usize {
        self.end
    }

    fn account_queue(&mut self, now: Nanos) {
        let dt = now.saturating_sub(self.last_change);
        self.stats.queue_area += self.queue_pkts() as u128 * dt as u128;
        self.last_change = now;
    }

    /// Plays back, in time order, every end of transmission due by `now`: the packet
    /// leaves the transmitter (or is lost on the wire), the next waiting packet starts, and
    /// an empty queue starts RED's idle time.
    #[inline]
    fn advance(&mut self, now: Nanos) {
        // Called twice per packet and hop; usually nothing is due.
        if self.departed < self.started && self.slots.get(self.departed).tx_end <= now {
            self.play_back(now);
        }
    }

    #[inline(never)]
    fn play_back(&mut self, now: Nanos) {
        while self.departed < self.started {
            let slot = self.slots.get(self.departed);
            let t = slot.tx_end;
            if t > now {
                return;
            }
            self.stats.tx_pkts += 1;
            self.stats.tx_bytes += slot.pkt.wire_bytes() as u64;
            if self.params.loss > 0.0 && self.rng.random::<f64>() < self.params.loss {
                self.stats.drops_loss += 1;
                self.slots.get_mut(self.departed).lost = true;
            }
            self.departed += 1;
            if self.started < self.end() {
                // The next one was waiting behind: its transmission starts at `t`.
                self.account_queue(t);
                self.queued_bytes -= self.slots.get(self.started).pkt.wire_bytes() as u64;
                self.started += 1;
            }
            if self.started == self.end() {
                self.aqm.on_empty(t);
            }
        }
    }

    /// Flushes the statistics and the queue length up to `now` (call before reading them).
    pub fn sync_stats(&mut self, now: Nanos) {
        self.advance(now);
        self.account_queue(now);
    }

    /// A packet arrives at the queue at `now`.
    #[inline]
    pub fn enqueue(&mut self, now: Nanos, pkt: P) -> Enqueued<P> {
        self.stats.arrived_pkts += 1;
        if !self.up {
            self.stats.drops_down += 1;
            return Enqueued::Dropped(pkt, DropReason::Down);
        }
        self.advance(now);
        let bytes = pkt.wire_bytes();
        let tx_start = if self.departed == self.started {
            // The transmitter is idle: RED still sees the (empty) queue so that its average
            // decays, and the packet goes straight on the wire.
            self.aqm
                .early_drop(now, 0.0, self.typical_tx, &mut self.rng);
            self.started += 1;
            now
        } else {
            let (len, full) = if self.params.limit_in_bytes {
                (
                    self.queued_bytes as f64,
                    self.queued_bytes + bytes as u64 > self.params.limit,
                )
            } else {
                let waiting = self.queue_pkts() as u64;
                (waiting as f64, waiting >= self.params.limit)
            };
            if self
                .aqm
                .early_drop(now, len, self.typical_tx, &mut self.rng)
            {
                self.stats.drops_early += 1;
                return Enqueued::Dropped(pkt, DropReason::Early);
            }
            if full {
                self.stats.drops_overflow += 1;
                return Enqueued::Dropped(pkt, DropReason::Overflow);
            }
            self.account_queue(now);
            self.queued_bytes += bytes as u64;
            let waiting = self.queue_pkts() as u64 + 1;
            self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(waiting);
            self.slots.get(self.end - 1).tx_end
        };
        let tx_end = tx_start + self.tx_time(bytes);
        // The pipe is FIFO: a packet never overtakes the one ahead, even after the delay
        // was shortened.
        let empty = self.front == self.end;
        let ahead = if empty {
            0
        } else {
            self.slots.get(self.end - 1).arrival
        };
        let arrival = (tx_end + self.params.delay).max(ahead);
        self.slots.put(
            self.front,
            self.end,
            Slot {
                pkt,
                tx_end,
                arrival,
                lost: false,
            },
        );
        self.end += 1;
        let wake = empty.then_some(arrival);
        if wake.is_some() {
            self.wake = wake;
        }
        Enqueued::Accepted { wake }
    }

    /// The wake-up asked for: the head of the pipe at the far end. Returns it (delivered, or
    /// lost on the wire) and, if another packet follows, the time of the next wake-up, which
    /// the caller must schedule (or take at once, calling again with that time). `None`
    /// for a stale wake-up.
    #[inline]
    pub fn deliver(&mut self, now: Nanos) -> Option<(Arrival<P>, Option<Nanos>)> {
        if self.wake != Some(now) {
            return None;
        }
        self.advance(now);
        debug_assert!(
            self.front < self.end,
            "a wake-up is asked only for a packet"
        );
        let slot = self.slots.take(self.front);
        debug_assert!(slot.arrival <= now && self.departed > self.front);
        self.front += 1;
        self.wake = (self.front < self.end).then(|| self.slots.get(self.front).arrival);
        if let Some(later) = self.slots.place(self.front + PREFETCH_AHEAD) {
            crate::prefetch(later);
        }
        let arrival = if slot.lost {
            Arrival::Lost(slot.pkt)
        } else {
            self.stats.delivered_pkts += 1;
            Arrival::Delivered(slot.pkt)
        };
        Some((arrival, self.wake))
    }

    /// The packet `n` places behind the head of the pipe (0: the next to arrive).
    #[inline]
    pub fn ahead(&self, n: usize) -> Option<&P> {
        (self.front + n < self.end).then(|| &self.slots.get(self.front + n).pkt)
    }

    /// Takes the link down (everything queued, in transmission or in flight is lost) or up.
    /// Returns the packets lost.
    fn set_up(&mut self, now: Nanos, up: bool) -> Vec<P> {
        let mut lost = Vec::new();
        if self.up && !up {
            self.account_queue(now);
            for n in self.front..self.end {
                let slot = self.slots.take(n);
                // Those lost on the wire were counted then.
                self.stats.drops_down += !slot.lost as u64;
                lost.push(slot.pkt);
            }
            self.front = 0;
            self.departed = 0;
            self.started = 0;
            self.end = 0;
            self.queued_bytes = 0;
            self.wake = None;
            self.aqm.on_empty(now);
        }
        self.up = up;
        lost
    }

    /// A new rate applies from the next packet on; the one in transmission finishes at the
    /// old. The waiting packets' times are recomputed.
    fn set_rate(&mut self, rate_bps: u64) {
        self.params.rate_bps = rate_bps;
        self.typical_tx = tx_time(1500, rate_bps);
        self.tx_times = [(u32::MAX, 0); 2];
        for n in self.started..self.end {
            let start = self.slots.get(n - 1).tx_end;
            let slot = self.slots.get_mut(n);
            slot.tx_end = start + tx_time(slot.pkt.wire_bytes(), rate_bps);
        }
    }

    /// A new delay applies to packets that finish transmission from now on. A shorter delay
    /// never lets a packet overtake one already in flight (the pipe is FIFO).
    fn set_delay(&mut self, delay: Nanos) {
        self.params.delay = delay;
    }

    /// Recomputes the arrival times of packets still to leave the transmitter (after a
    /// change of rate or delay); returns the head's arrival if the wake-up must move.
    fn retime_arrivals(&mut self) -> Option<Nanos> {
        let delay = self.params.delay;
        for n in self.departed..self.end {
            let ahead = if n == self.front {
                0
            } else {
                self.slots.get(n - 1).arrival
            };
            let slot = self.slots.get_mut(n);
            slot.arrival = (slot.tx_end + delay).max(ahead);
        }
        let head = (self.front < self.end).then(|| self.slots.get(self.front).arrival);
        if head != self.wake {
            self.wake = head;
            return head;
        }
        None
    }

    /// Applies a scenario event to this direction at `now` (after the transmissions that
    /// end at `now`). Returns the packets a link going down lost, and a wake-up to schedule
    /// if the head's arrival moved (the earlier one becomes stale).
    pub fn apply(&mut self, now: Nanos, kind: &EventKind) -> (Vec<P>, Option<Nanos>) {
        self.advance(now);
        match kind {
            EventKind::Down => (self.set_up(now, false), None),
            EventKind::Up => (self.set_up(now, true), None),
            EventKind::Set { rate, delay, loss } => {
                if let Some(r) = rate {
                    self.set_rate(r.bps());
                }
                if let Some(dl) = delay {
                    self.set_delay(dl.nanos());
                }
                if let Some(p) = loss {
                    self.params.loss = p.0;
                }
                (Vec::new(), self.retime_arrivals())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Pkt(u32);
    impl Packet for Pkt {
        fn wire_bytes(&self) -> u32 {
            self.0
        }
    }

    fn params(limit: u64, bytes: bool) -> LinkParams {
        LinkParams {
            rate_bps: 12_000_000,
            delay: 1_000_000,
            limit,
            limit_in_bytes: bytes,
            aqm: AqmParams::DropTail,
            loss: 0.0,
        }
    }

    /// Drives a link like a caller would, returning arrival times at the far end.
    fn run(link: &mut LinkDir<Pkt>, arrivals: &[(Nanos, u32)]) -> Vec<(Nanos, u32)> {
        let mut wake: Option<Nanos> = None;
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            match (arrivals.get(i).copied(), wake) {
                // An arrival at the wake-up's time is admitted first (as the event queue
                // would if it was scheduled first).
                (Some((t, b)), w) if w.is_none_or(|w| t <= w) => {
                    i += 1;
                    if let Enqueued::Accepted { wake: Some(w) } = link.enqueue(t, Pkt(b)) {
                        wake = Some(w);
                    }
                }
                (_, Some(t)) => {
                    let (a, next) = link.deliver(t).expect("not stale");
                    if let Arrival::Delivered(p) = a {
                        out.push((t, p.0));
                    }
                    wake = next;
                }
                _ => return out,
            }
        }
    }

    #[test]
    fn serialisation_then_delay() {
        let mut l = LinkDir::new(params(10, false), 1);
        // 1500 B at 12 Mbps is 1 ms; three back to back leave at 1, 2, 3 ms, arrive 1 ms later.
        let out = run(&mut l, &[(0, 1500), (0, 1500), (0, 1500)]);
        assert_eq!(
            out,
            vec![(2_000_000, 1500), (3_000_000, 1500), (4_000_000, 1500)]
        );
        l.sync_stats(5_000_000);
        assert_eq!((l.stats.tx_pkts, l.stats.delivered_pkts), (3, 3));
        // The second waited 1 ms, the third 2 ms.
        assert_eq!(l.stats.queue_area, 3_000_000);
    }

    #[test]
    fn a_transmission_ending_now_has_ended_for_an_arrival_now() {
        let mut l = LinkDir::new(params(1, false), 1);
        l.enqueue(0, Pkt(1500));
        l.enqueue(0, Pkt(1500));
        // At 1 ms the first leaves and the second starts: the queue has room again.
        assert!(matches!(
            l.enqueue(1_000_000, Pkt(1500)),
            Enqueued::Accepted { wake: None }
        ));
        assert!(matches!(
            l.enqueue(1_000_000, Pkt(1500)),
            Enqueued::Dropped(_, DropReason::Overflow)
        ));
    }

    #[test]
    fn droptail_drops_only_when_full() {
        let mut l = LinkDir::new(params(3, false), 1);
        let burst: Vec<(Nanos, u32)> = (0..10).map(|_| (0, 1500)).collect();
        let out = run(&mut l, &burst);
        // One in service and three queued survive.
        assert_eq!(out.len(), 4);
        assert_eq!(l.stats.drops_overflow, 6);
        assert_eq!(l.stats.max_queue_pkts, 3);
        // Spaced arrivals never fill the queue, so nothing is dropped.
        let mut l = LinkDir::new(params(3, false), 1);
        let spaced: Vec<(Nanos, u32)> = (0..10).map(|i| (i * 1_000_000, 1500)).collect();
        assert_eq!(run(&mut l, &spaced).len(), 10);
        assert_eq!(l.stats.drops(), 0);
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let mut l = LinkDir::new(params(3000, true), 1);
        let burst: Vec<(Nanos, u32)> = (0..6).map(|_| (0, 1000)).collect();
        assert_eq!(run(&mut l, &burst).len(), 4);
    }

    #[test]
    fn random_loss_within_statistical_bounds() {
        let mut p = params(100_000, false);
        p.loss = 0.05;
        let mut l = LinkDir::new(p, 42);
        let n = 20_000u64;
        let arrivals: Vec<(Nanos, u32)> = (0..n).map(|i| (i * 1_000_000, 1500)).collect();
        let got = run(&mut l, &arrivals).len() as f64;
        let lost = n as f64 - got;
        let sd = (n as f64 * 0.05 * 0.95).sqrt();
        assert!((lost - 0.05 * n as f64).abs() < 4.0 * sd, "lost {lost}");
        assert_eq!(l.stats.drops_loss as f64, lost);
    }

    #[test]
    fn down_loses_everything_and_stale_wakeups_are_ignored() {
        let mut l = LinkDir::new(params(10, false), 1);
        let Enqueued::Accepted {
            wake: Some(arrival),
        } = l.enqueue(0, Pkt(1500))
        else {
            panic!()
        };
        assert_eq!(arrival, 2_000_000);
        l.enqueue(0, Pkt(1500));
        let (lost, _) = l.apply(500_000, &EventKind::Down);
        assert_eq!(lost.len(), 2);
        assert!(matches!(
            l.enqueue(600_000, Pkt(1500)),
            Enqueued::Dropped(_, DropReason::Down)
        ));
        assert_eq!(l.deliver(arrival), None, "stale");
        l.apply(700_000, &EventKind::Up);
        assert!(matches!(
            l.enqueue(800_000, Pkt(1500)),
            Enqueued::Accepted {
                wake: Some(2_800_000)
            }
        ));
        assert_eq!(l.stats.drops_down, 3);
    }

    #[test]
    fn a_new_delay_moves_the_wakeup_and_keeps_fifo_order() {
        let mut l = LinkDir::new(params(10, false), 1);
        l.enqueue(0, Pkt(1500));
        l.enqueue(0, Pkt(1500));
        // At 1.5 ms the first is in flight (arrives at 2 ms); the second is in service and
        // gets the new, shorter delay, but may not overtake the first.
        let delay = scenario::units::Duration(100_000);
        let (_, moved) = l.apply(
            1_500_000,
            &EventKind::Set {
                rate: None,
                delay: Some(delay),
                loss: None,
            },
        );
        assert_eq!(moved, None, "the head already left");
        let (_, next) = l.deliver(2_000_000).unwrap();
        assert_eq!(next, Some(2_100_000));
    }
}
