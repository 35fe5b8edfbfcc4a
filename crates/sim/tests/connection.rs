//! The connection's endpoints driven packet by packet, with no event loop, fabric or
//! scenario: a test wire carries each packet at 10 Mbit/s per path and direction, behind at
//! most 100 packets (drop-tail), after its path's one-way delay, and drops the packets a
//! test chooses.

use mptcp_cc::CongestionControl;
use net::{Nanos, RouteId};
use scenario::spec::SchedulerKind;
use sim::connection::{Client, ConnConfig, Path, Server, ServerEvent, SubflowState};
use sim::ids::{ConnId, SubflowId};
use sim::packet::{HEADER_BYTES, Kind, MSS, Packet, SYN_BYTES};

const MS: Nanos = 1_000_000;
const RATE_BPS: u64 = 10_000_000;
const QUEUE_PACKETS: u64 = 100;

/// Path `k` sends data on route `2k` and ACKs on route `2k + 1`.
fn path(k: u32) -> Path {
    Path {
        fwd: RouteId(2 * k),
        rev: RouteId(2 * k + 1),
    }
}

fn config(mptcp: bool, total_bytes: u64) -> ConnConfig {
    ConnConfig {
        mptcp,
        sack: true,
        delayed_ack: true,
        cwnd_clamp: u64::MAX,
        scheduler: SchedulerKind::LowestRtt,
        rcv_buffer_segs: 4096,
        total_bytes,
    }
}

/// Serialisation time of a packet of `bytes` on the test wire.
fn tx(bytes: u16) -> Nanos {
    net::tx_time(bytes as u32, RATE_BPS)
}

type DropRule = Box<dyn FnMut(Nanos, &Packet) -> bool>;

/// Both endpoints and what is on the wire between them.
struct Wire {
    now: Nanos,
    client: Client,
    server: Server,
    /// One-way delay of each path, both directions.
    delay: Vec<Nanos>,
    /// Per route: when its transmitter is free again.
    busy_until: Vec<Nanos>,
    /// (arrival time, order sent, packet).
    in_flight: Vec<(Nanos, u64, Packet)>,
    sent_count: u64,
    /// Every packet sent, with the time it left.
    log: Vec<(Nanos, Packet)>,
    drop: DropRule,
    delivered: u64,
}

impl Wire {
    fn new(cfg: ConnConfig, delays_ms: &[u64], cc: Box<dyn CongestionControl>) -> Wire {
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
        };
        w.collect();
        w
    }

    fn collect(&mut self) {
        let mut out = Vec::new();
        while let Some(p) = self.client.poll_transmit(self.now) {
            out.push(p);
        }
        while let Some(p) = self.server.poll_transmit(self.now) {
            out.push(p);
        }
        for p in out {
            self.log.push((self.now, p));
            if (self.drop)(self.now, &p) {
                continue;
            }
            let route = p.route.0 as usize;
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
    fn run_until(&mut self, until: Nanos, mut check: impl FnMut(&Wire)) {
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
            if let Some((pt, n)) = next_packet
                && pt == t
            {
                let i = self
                    .in_flight
                    .iter()
                    .position(|&(a, m, _)| (a, m) == (pt, n))
                    .expect("present");
                let (_, _, p) = self.in_flight.remove(i);
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

    fn sent(&self, kind: Kind, subflow: u8) -> impl Iterator<Item = &(Nanos, Packet)> {
        self.log
            .iter()
            .filter(move |(_, p)| p.kind == kind && p.subflow == SubflowId(subflow))
    }
}

#[test]
fn tcp_handshake_then_data() {
    let mut w = Wire::new(
        config(false, 10 * MSS as u64),
        &[10],
        Box::new(mptcp_cc::Reno),
    );
    assert_eq!(w.log.len(), 1, "only the SYN leaves at first");
    assert_eq!(w.log[0].1.kind, Kind::Syn);
    w.run_until(1000 * MS, |_| {});
    let first_data = w.sent(Kind::Data, 0).next().expect("data sent").0;
    let handshake = 20 * MS + 2 * tx(SYN_BYTES);
    assert_eq!(
        first_data, handshake,
        "data leaves when the SYN-ACK arrives"
    );
    assert_eq!(w.delivered, 10 * MSS as u64);
    assert!(w.client.all_acked());
    let sf = &w.client.subflows()[0];
    // The SYN's timestamp is 1 ns, not 0 (which means "none").
    assert_eq!(
        sf.tx.rtt.min_rtt,
        handshake - 1,
        "the handshake's RTT sample"
    );
}

#[test]
fn lost_syn_is_sent_again_after_the_initial_timeout() {
    let mut w = Wire::new(
        config(false, 4 * MSS as u64),
        &[10],
        Box::new(mptcp_cc::Reno),
    );
    // The first SYN was lost (dropped before the rule existed: take it off the wire).
    w.in_flight.clear();
    w.run_until(5000 * MS, |_| {});
    let syns: Vec<Nanos> = w.sent(Kind::Syn, 0).map(|(t, _)| *t).collect();
    assert_eq!(syns, vec![0, 1000 * MS], "RFC 6298's initial RTO of 1 s");
    assert_eq!(w.delivered, 4 * MSS as u64);
}

#[test]
fn mp_join_after_the_first_data_ack_and_data_only_once_fully_established() {
    let mut w = Wire::new(config(true, u64::MAX), &[10, 30], Box::new(mptcp_cc::Lia));
    w.run_until(2000 * MS, |_| {});
    // The path manager joins subflow 1 when subflow 0's first data ACK reaches the client.
    let join_syn = w.sent(Kind::Syn, 1).next().expect("an MP_JOIN").0;
    let first_data_ack =
        w.sent(Kind::Ack, 0).next().expect("an ACK").0 + 10 * MS + tx(HEADER_BYTES);
    assert_eq!(join_syn, first_data_ack);
    assert_eq!(w.sent(Kind::Syn, 1).count(), 1);
    // The SYN-ACK after one round trip of path 1, the third ACK at once, its
    // acknowledgement one round trip later: only then does data flow on subflow 1.
    let third_ack = w.sent(Kind::JoinAck, 1).next().expect("third ACK").0;
    assert_eq!(third_ack, join_syn + 60 * MS + 2 * tx(SYN_BYTES));
    let first_data = w.sent(Kind::Data, 1).next().expect("data on subflow 1").0;
    assert_eq!(first_data, third_ack + 60 * MS + 2 * tx(HEADER_BYTES));
    let sfs = w.client.subflows();
    assert!(sfs.iter().all(|s| s.state == SubflowState::Established));
    assert!(sfs[1].tx.rtt.min_rtt >= 60 * MS);
    assert!(
        w.sent(Kind::Data, 1).count() > 100,
        "subflow 1 carries data"
    );
}

#[test]
fn a_dead_subflow_goes_stale_and_its_data_is_reinjected() {
    let total = 3000 * MSS as u64;
    let mut w = Wire::new(config(true, total), &[10, 10], Box::new(mptcp_cc::Lia));
    w.run_until(300 * MS, |_| {});
    assert!(w.sent(Kind::Data, 1).count() > 0, "both subflows in use");
    // Path 1 dies at 300 ms: nothing crosses it any more, either way.
    w.drop = Box::new(|now, p| now >= 300 * MS && p.route.0 / 2 == 1);
    w.in_flight.retain(|(_, _, p)| p.route.0 / 2 != 1);
    let mut stale_seen = false;
    w.run_until(20_000 * MS, |w| stale_seen |= w.client.subflows()[1].stale);
    assert!(stale_seen, "the timed-out subflow was marked stale");
    // Data first sent on subflow 1 and never acknowledged there went again on subflow 0.
    let on_dead: Vec<u64> = w
        .sent(Kind::Data, 1)
        .filter(|(t, _)| (290 * MS..300 * MS).contains(t))
        .map(|(_, p)| p.dsn)
        .collect();
    assert!(!on_dead.is_empty());
    for dsn in on_dead {
        assert!(
            w.sent(Kind::Data, 0)
                .any(|(t, p)| p.dsn == dsn && *t > 300 * MS),
            "segment {dsn} was reinjected on subflow 0"
        );
    }
    assert_eq!(
        w.delivered, total,
        "the transfer completed over the live path"
    );
    assert!(w.client.all_acked());
}

#[test]
fn a_slow_path_fills_the_shared_receive_buffer_and_blocks_the_fast_one() {
    let goodput = |buffer: u64| {
        // Round robin puts every other segment on the slow path whenever it has room.
        let cfg = ConnConfig {
            rcv_buffer_segs: buffer,
            scheduler: SchedulerKind::RoundRobin,
            ..config(true, u64::MAX)
        };
        let mut w = Wire::new(cfg, &[5, 200], Box::new(mptcp_cc::Reno));
        // A moment when the fast subflow had room in its window but the receiver's window,
        // full of data that overtook the slow path's, allowed nothing new.
        let mut fast_blocked = false;
        w.run_until(3000 * MS, |w| {
            let d = w.client.data();
            fast_blocked |= w.client.subflows()[0].tx.has_room() && d.nxt >= d.una + d.peer_window;
        });
        // Never more new data in flight than the buffer allows beyond the data ACK.
        let max_ahead = w
            .sent(Kind::Data, 0)
            .chain(w.sent(Kind::Data, 1))
            .map(|(_, p)| p.dsn)
            .max()
            .unwrap();
        assert!(max_ahead < w.client.data().una + buffer + 1);
        (w.delivered, fast_blocked)
    };
    let (small, blocked) = goodput(64);
    let (large, _) = goodput(100_000);
    assert!(blocked, "the shared buffer held the fast path back");
    assert!(
        small * 2 < large,
        "the fast path is held back by the slow one: {small} vs {large} bytes"
    );
}

#[test]
fn out_of_order_data_is_reassembled_and_delivered_once() {
    let cfg = config(true, u64::MAX);
    let paths = [path(0), path(1)];
    let mut server = Server::new(ConnId(0), &cfg, &paths);
    let data = |subflow: u8, seq: u64, dsn: u64| Packet {
        seq,
        dsn,
        ts: 1,
        wire_bytes: MSS + HEADER_BYTES,
        ..Packet::control(
            ConnId(0),
            SubflowId(subflow),
            Kind::Data,
            path(subflow as u32).fwd,
        )
    };
    for s in [0, 1] {
        let mut syn = Packet::control(ConnId(0), SubflowId(s), Kind::Syn, path(s as u32).fwd);
        syn.ts = 1;
        server.handle_packet(0, &syn);
    }
    while server.poll_transmit(0).is_some() {}
    // Data segments 2 and 3 over subflow 1, 1 over subflow 0 with a hole before it, then 0.
    server.handle_packet(1, &data(1, 0, 2));
    server.handle_packet(2, &data(1, 1, 3));
    server.handle_packet(3, &data(0, 1, 1));
    assert_eq!(server.delivered_bytes(), 0);
    assert_eq!(
        server.window(),
        4096 - 3,
        "held out of order in the shared buffer"
    );
    // Subflow 0's hole is acknowledged at once with a SACK block.
    let ack = std::iter::from_fn(|| server.poll_transmit(3))
        .filter(|p| p.subflow == SubflowId(0))
        .last()
        .expect("an immediate ACK");
    assert_eq!((ack.seq, ack.sack[0]), (0, (1, 2)));
    server.handle_packet(4, &data(0, 0, 0));
    assert_eq!(server.delivered_bytes(), 4 * MSS as u64);
    assert_eq!(server.window(), 4096);
    // A copy of segment 2 over subflow 0 (a reinjection) delivers nothing more.
    server.handle_packet(5, &data(0, 2, 2));
    assert_eq!(server.delivered_bytes(), 4 * MSS as u64);
    let delivered: u64 = std::iter::from_fn(|| server.poll_event())
        .filter_map(|e| match e {
            ServerEvent::Delivered { bytes } => Some(bytes),
            _ => None,
        })
        .sum();
    assert_eq!(delivered, 4 * MSS as u64);
}

#[test]
fn a_window_limited_flow_stops_at_its_limit_and_a_loss_halves_what_it_used() {
    let cfg = ConnConfig {
        cwnd_clamp: 16,
        ..config(false, u64::MAX)
    };
    let mut w = Wire::new(cfg, &[10], Box::new(mptcp_cc::Reno));
    let mut max_cwnd: f64 = 0.0;
    w.run_until(5000 * MS, |w| {
        max_cwnd = max_cwnd.max(w.client.subflows()[0].tx.cwnd())
    });
    assert_eq!(max_cwnd, 16.0, "cwnd grows to the limit and no further");
    let lost_seq = w.client.subflows()[0].tx.snd_nxt;
    let mut once = true;
    w.drop = Box::new(move |_, p| {
        let hit = once && p.kind == Kind::Data && p.seq == lost_seq;
        once &= !hit;
        hit
    });
    let mut after_loss = f64::INFINITY;
    w.run_until(5200 * MS, |w| {
        let tx = &w.client.subflows()[0].tx;
        if tx.state == mptcp_cc::CaState::Recovery {
            after_loss = after_loss.min(tx.cwnd());
        }
    });
    assert_eq!(after_loss, 8.0, "half of the 16 packets it used");
}

#[test]
fn a_receive_window_limited_flow_does_not_grow_its_window_unseen() {
    let cfg = ConnConfig {
        rcv_buffer_segs: 8,
        ..config(false, u64::MAX)
    };
    let mut w = Wire::new(cfg, &[10], Box::new(mptcp_cc::Reno));
    let mut max_cwnd: f64 = 0.0;
    w.run_until(20_000 * MS, |w| {
        max_cwnd = max_cwnd.max(w.client.subflows()[0].tx.cwnd())
    });
    // Never more than 8 segments in flight, so the window may grow only in slow start and
    // to no more than twice that (tcp_is_cwnd_limited).
    assert!(max_cwnd <= 16.0, "cwnd grew to {max_cwnd}");
    assert!(w.delivered > 0);
}
