//! One direction of a link: queue, transmitter, and the pipe of packets in propagation.
//!
//! The caller owns time. It schedules a wake-up at every time this type returns (the end of
//! a transmission, the arrival of the pipe's head) and calls back then. Wake-ups made stale by
//! a link going down, or by a change of rate, are recognised and ignored here, so callers need
//! no cancellation.

use crate::aqm::{Aqm, AqmParams};
use crate::{Nanos, Packet, tx_time};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::model::{DirConfig, EventKind};
use scenario::spec::QueueSpec;
use scenario::units::Size;
use std::collections::VecDeque;

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

pub enum Enqueued<P> {
    /// Dropped on arrival; the packet is handed back (for statistics or pcap).
    Dropped(P, DropReason),
    /// Waiting behind others.
    Queued,
    /// The transmitter was idle: call `tx_done` at this time.
    Transmitting(Nanos),
}

/// What the end of a transmission asks of the caller.
#[derive(Debug, Default, PartialEq)]
pub struct TxDone<P> {
    /// Call `tx_done` again at this time (the next packet's transmission ends).
    pub next_tx: Option<Nanos>,
    /// Call `deliver` at this time (the pipe was empty, this packet is its head).
    pub arrival: Option<Nanos>,
    /// A packet lost on the wire, handed back.
    pub lost: Option<P>,
}

pub struct LinkDir<P> {
    params: LinkParams,
    queue: VecDeque<P>,
    queued_bytes: u64,
    in_service: Option<(P, Nanos)>,
    pipe: VecDeque<(Nanos, P)>,
    up: bool,
    aqm: Aqm,
    rng: Xoshiro256PlusPlus,
    last_change: Nanos,
    typical_tx: Nanos,
    pub stats: LinkStats,
}

impl<P: Packet> LinkDir<P> {
    pub fn new(params: LinkParams, seed: u64) -> Self {
        let typical_tx = tx_time(1500, params.rate_bps);
        LinkDir {
            aqm: Aqm::new(&params.aqm),
            params,
            queue: VecDeque::new(),
            queued_bytes: 0,
            in_service: None,
            pipe: VecDeque::new(),
            up: true,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            last_change: 0,
            typical_tx,
            stats: LinkStats::default(),
        }
    }

    pub fn params(&self) -> &LinkParams {
        &self.params
    }
    pub fn is_up(&self) -> bool {
        self.up
    }
    /// Packets waiting, not counting the one being transmitted.
    pub fn queue_pkts(&self) -> usize {
        self.queue.len()
    }
    pub fn queue_bytes(&self) -> u64 {
        self.queued_bytes
    }
    pub fn red_average(&self) -> Option<f64> {
        self.aqm.average()
    }

    fn account_queue(&mut self, now: Nanos) {
        let dt = now.saturating_sub(self.last_change);
        self.stats.queue_area += self.queue.len() as u128 * dt as u128;
        self.last_change = now;
    }

    /// Flushes the queue-length integral up to `now` (call before reading `stats`).
    pub fn sync_stats(&mut self, now: Nanos) {
        self.account_queue(now);
    }

    pub fn enqueue(&mut self, now: Nanos, pkt: P) -> Enqueued<P> {
        self.stats.arrived_pkts += 1;
        if !self.up {
            self.stats.drops_down += 1;
            return Enqueued::Dropped(pkt, DropReason::Down);
        }
        let bytes = pkt.wire_bytes() as u64;
        if self.in_service.is_none() {
            debug_assert!(self.queue.is_empty());
            // RED still sees the (empty) queue so that its average decays.
            let done = now + tx_time(pkt.wire_bytes(), self.params.rate_bps);
            self.aqm
                .early_drop(now, 0.0, self.typical_tx, &mut self.rng);
            self.in_service = Some((pkt, done));
            return Enqueued::Transmitting(done);
        }
        let (len, full) = if self.params.limit_in_bytes {
            (
                self.queued_bytes as f64,
                self.queued_bytes + bytes > self.params.limit,
            )
        } else {
            (
                self.queue.len() as f64,
                self.queue.len() as u64 >= self.params.limit,
            )
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
        self.queued_bytes += bytes;
        self.queue.push_back(pkt);
        self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(self.queue.len() as u64);
        Enqueued::Queued
    }

    /// The wake-up scheduled for the end of a transmission.
    pub fn tx_done(&mut self, now: Nanos) -> TxDone<P> {
        let mut out = TxDone {
            next_tx: None,
            arrival: None,
            lost: None,
        };
        match &self.in_service {
            Some((_, done)) if *done == now => {}
            _ => return out, // stale: the link went down or the packet was replaced
        }
        let (pkt, _) = self.in_service.take().expect("checked above");
        self.stats.tx_pkts += 1;
        self.stats.tx_bytes += pkt.wire_bytes() as u64;
        if self.params.loss > 0.0 && self.rng.random::<f64>() < self.params.loss {
            self.stats.drops_loss += 1;
            out.lost = Some(pkt);
        } else {
            if self.pipe.is_empty() {
                out.arrival = Some(now + self.params.delay);
            }
            self.pipe.push_back((now + self.params.delay, pkt));
        }
        if let Some(next) = self.queue.pop_front() {
            self.account_queue(now);
            self.queued_bytes -= next.wire_bytes() as u64;
            let done = now + tx_time(next.wire_bytes(), self.params.rate_bps);
            self.in_service = Some((next, done));
            out.next_tx = Some(done);
            if self.queue.is_empty() {
                self.aqm.on_empty(now);
            }
        } else {
            self.aqm.on_empty(now);
        }
        out
    }

    /// The wake-up scheduled for a pipe arrival. Returns the packet that reached the far end
    /// and, if another follows, when to call again.
    pub fn deliver(&mut self, now: Nanos) -> Option<(P, Option<Nanos>)> {
        match self.pipe.front() {
            Some((t, _)) if *t <= now => {}
            _ => return None, // stale
        }
        let (_, pkt) = self.pipe.pop_front().expect("checked above");
        self.stats.delivered_pkts += 1;
        Some((pkt, self.pipe.front().map(|(t, _)| *t)))
    }

    /// Takes the link down (everything queued, in transmission or in flight is lost) or up.
    /// Returns the packets lost.
    pub fn set_up(&mut self, now: Nanos, up: bool) -> Vec<P> {
        let mut lost = Vec::new();
        if self.up && !up {
            self.account_queue(now);
            lost.extend(self.in_service.take().map(|(p, _)| p));
            lost.extend(self.queue.drain(..));
            lost.extend(self.pipe.drain(..).map(|(_, p)| p));
            self.queued_bytes = 0;
            self.stats.drops_down += lost.len() as u64;
            self.aqm.on_empty(now);
        }
        self.up = up;
        lost
    }

    /// A new rate applies from the next packet on; the one in transmission finishes at the old.
    pub fn set_rate(&mut self, rate_bps: u64) {
        self.params.rate_bps = rate_bps;
        self.typical_tx = tx_time(1500, rate_bps);
    }

    /// A new delay applies to packets that finish transmission from now on. A shorter delay
    /// never lets a packet overtake one already in flight (the pipe is FIFO).
    pub fn set_delay(&mut self, delay: Nanos) {
        self.params.delay = delay;
    }

    pub fn set_loss(&mut self, loss: f64) {
        self.params.loss = loss;
    }

    /// Applies a scenario event to this direction at `now`; returns the packets a link
    /// going down lost.
    pub fn apply(&mut self, now: Nanos, kind: &EventKind) -> Vec<P> {
        match kind {
            EventKind::Down => self.set_up(now, false),
            EventKind::Up => self.set_up(now, true),
            EventKind::Set { rate, delay, loss } => {
                if let Some(r) = rate {
                    self.set_rate(r.bps());
                }
                if let Some(dl) = delay {
                    self.set_delay(dl.nanos());
                }
                if let Some(p) = loss {
                    self.set_loss(p.0);
                }
                Vec::new()
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
        let mut wakeups: Vec<(Nanos, bool)> = Vec::new(); // (time, is_tx)
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            wakeups.sort_by_key(|w| std::cmp::Reverse(*w));
            let next_wake = wakeups.last().copied();
            let next_arr = arrivals.get(i).copied();
            match (next_arr, next_wake) {
                (Some((t, b)), w) if w.is_none_or(|w| t <= w.0) => {
                    i += 1;
                    if let Enqueued::Transmitting(d) = link.enqueue(t, Pkt(b)) {
                        wakeups.push((d, true));
                    }
                }
                (_, Some((t, is_tx))) => {
                    wakeups.pop();
                    if is_tx {
                        let r = link.tx_done(t);
                        wakeups.extend(r.next_tx.map(|d| (d, true)));
                        wakeups.extend(r.arrival.map(|d| (d, false)));
                    } else if let Some((p, next)) = link.deliver(t) {
                        out.push((t, p.0));
                        wakeups.extend(next.map(|d| (d, false)));
                    }
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
    }

    #[test]
    fn droptail_drops_only_when_full() {
        let mut l = LinkDir::new(params(3, false), 1);
        let burst: Vec<(Nanos, u32)> = (0..10).map(|_| (0, 1500)).collect();
        let out = run(&mut l, &burst);
        // One in service and three queued survive.
        assert_eq!(out.len(), 4);
        assert_eq!(l.stats.drops_overflow, 6);
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
    }

    #[test]
    fn down_loses_everything_and_stale_wakeups_are_ignored() {
        let mut l = LinkDir::new(params(10, false), 1);
        let Enqueued::Transmitting(done) = l.enqueue(0, Pkt(1500)) else {
            panic!()
        };
        l.enqueue(0, Pkt(1500));
        assert_eq!(l.set_up(500_000, false).len(), 2);
        assert!(matches!(
            l.enqueue(600_000, Pkt(1500)),
            Enqueued::Dropped(_, DropReason::Down)
        ));
        assert_eq!(
            l.tx_done(done),
            TxDone {
                next_tx: None,
                arrival: None,
                lost: None
            }
        );
        l.set_up(700_000, true);
        assert!(matches!(
            l.enqueue(800_000, Pkt(1500)),
            Enqueued::Transmitting(1_800_000)
        ));
    }
}
