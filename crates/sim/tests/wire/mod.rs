//! The test wire: both endpoints of one connection driven packet by packet, with no event
//! loop, fabric or scenario. It carries each packet at 10 Mbit/s per path and direction,
//! behind at most 100 packets (drop-tail), after its path's one-way delay, and drops the
//! packets a test chooses.

// Each test file uses a different part of the wire.
#![allow(dead_code)]

use mptcp_cc::CongestionControl;
use net::{Nanos, RouteId};
use scenario::spec::SchedulerKind;
use sim::connection::{Client, ConnConfig, Path, Server, ServerEvent};
use sim::ids::{ConnId, SubflowId};
use sim::packet::{Kind, Packet, Transmit};
use sim::tcp::receive_window::ReceiveBuffer;

pub const MS: Nanos = 1_000_000;
pub const RATE_BPS: u64 = 10_000_000;
pub const QUEUE_PACKETS: u64 = 100;

/// Path `k` sends data on route `2k` and ACKs on route `2k + 1`.
pub fn path(k: u32) -> Path {
    Path {
        fwd: RouteId(2 * k),
        rev: RouteId(2 * k + 1),
    }
}

pub fn config(mptcp: bool, total_bytes: u64) -> ConnConfig {
    ConnConfig {
        mptcp,
        sack: true,
        delayed_ack: true,
        cwnd_clamp: u64::MAX,
        scheduler: SchedulerKind::LowestRtt,
        stale_loss_cnt: scenario::spec::DEFAULT_STALE_LOSS_CNT,
        rcv_buffer: ReceiveBuffer::Fixed { segments: 4096 },
        total_bytes,
    }
}

/// A server listening over `subflows` paths, every subflow's SYN received at time 0 and
/// its SYN-ACK sent.
pub fn server_with_subflows(cfg: &ConnConfig, subflows: u8) -> Server {
    let paths: Vec<Path> = (0..subflows as u32).map(path).collect();
    let mut server = Server::new(ConnId(0), cfg, &paths);
    for s in 0..subflows {
        let mut syn = Packet::control(ConnId(0), SubflowId(s), Kind::Syn);
        syn.ts = 1;
        server.handle_packet(0, &syn);
    }
    while server.poll_transmit(0).is_some() {}
    server
}

/// Serialisation time of a packet of `bytes` on the test wire.
pub fn tx(bytes: u16) -> Nanos {
    net::tx_time(bytes as u32, RATE_BPS)
}

pub type DropRule = Box<dyn FnMut(Nanos, &Packet) -> bool>;

/// Both endpoints and what is on the wire between them.
pub struct Wire {
    pub now: Nanos,
    pub client: Client,
    pub server: Server,
    /// One-way delay of each path, both directions.
    pub delay: Vec<Nanos>,
    /// Per route: when its transmitter is free again.
    pub busy_until: Vec<Nanos>,
    /// (arrival time, order sent, packet).
    pub in_flight: Vec<(Nanos, u64, Packet)>,
    pub sent_count: u64,
    /// Every packet sent, with the time it left.
    pub log: Vec<(Nanos, Packet)>,
    pub drop: DropRule,
    pub delivered: u64,
    /// The packet the last step delivered, if it delivered one, with its arrival time.
    pub last_arrival: Option<(Nanos, Packet)>,
}

impl Wire {
    pub fn new(cfg: ConnConfig, delays_ms: &[u64], cc: Box<dyn CongestionControl>) -> Wire {
        let paths: Vec<Path> = (0..delays_ms.len() as u32).map(path).collect();
        let mut w = Wire {
            now: 0,
            client: Client::open(ConnId(0), &cfg, &paths, cc, 0),
            server: Server::new(ConnId(0), &cfg, &paths),
            delay: delays_ms.iter().map(|d| d * MS).collect(),
            busy_until: vec![0; 2 * delays_ms.len()],
            in_flight: Vec::new(),
            sent_count: 0,
            log: Vec::new(),
            drop: Box::new(|_, _| false),
            delivered: 0,
            last_arrival: None,
        };
        w.collect();
        w
    }

    pub fn collect(&mut self) {
        let mut out = Vec::new();
        while let Some(t) = self.client.poll_transmit(self.now) {
            out.push(t);
        }
        while let Some(t) = self.server.poll_transmit(self.now) {
            out.push(t);
        }
        for Transmit { route, packet: p } in out {
            self.log.push((self.now, p));
            if (self.drop)(self.now, &p) {
                continue;
            }
            let route = route.0 as usize;
            let tx = net::tx_time(p.wire_bytes as u32, RATE_BPS);
            let start = self.busy_until[route].max(self.now);
            if start - self.now > QUEUE_PACKETS * net::tx_time(1500, RATE_BPS) {
                continue; // the queue is full
            }
            self.busy_until[route] = start + tx;
            let arrival = start + tx + self.delay[route / 2];
            self.in_flight.push((arrival, self.sent_count, p));
            self.sent_count += 1;
        }
        while let Some(ev) = self.server.poll_event() {
            if let ServerEvent::Delivered { bytes } = ev {
                self.delivered += bytes;
            }
        }
    }

    /// Runs every arrival and timeout up to `until`, calling `check` after each step.
    pub fn run_until(&mut self, until: Nanos, mut check: impl FnMut(&Wire)) {
        loop {
            let next_packet = self.in_flight.iter().map(|&(t, n, _)| (t, n)).min();
            let next_timer = [self.client.poll_timeout(), self.server.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            let t = match (next_packet, next_timer) {
                (Some((p, _)), Some(q)) => p.min(q),
                (Some((p, _)), None) => p,
                (None, Some(q)) => q,
                (None, None) => break,
            };
            if t > until {
                break;
            }
            self.now = t;
            self.last_arrival = None;
            if let Some((pt, n)) = next_packet
                && pt == t
            {
                let i = self
                    .in_flight
                    .iter()
                    .position(|&(a, m, _)| (a, m) == (pt, n))
                    .expect("present");
                let (_, _, p) = self.in_flight.remove(i);
                self.last_arrival = Some((t, p));
                if p.kind.to_server() {
                    self.server.handle_packet(t, &p);
                } else {
                    self.client.handle_packet(t, &p);
                }
            } else {
                self.client.handle_timeout(t);
                self.server.handle_timeout(t);
            }
            self.collect();
            check(self);
        }
        self.now = until;
    }

    pub fn sent(&self, kind: Kind, subflow: u8) -> impl Iterator<Item = &(Nanos, Packet)> {
        self.log
            .iter()
            .filter(move |(_, p)| p.kind == kind && p.subflow == SubflowId(subflow))
    }

    /// Data segments sent on `subflow`, with PSH or without.
    pub fn data_sent(&self, subflow: u8) -> impl Iterator<Item = &(Nanos, Packet)> {
        self.log
            .iter()
            .filter(move |(_, p)| p.kind.is_data() && p.subflow == SubflowId(subflow))
    }
}
