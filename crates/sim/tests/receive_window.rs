//! An autotuned receive buffer, segment in, ACK out, on the server alone: the window
//! starts at Linux's 64 KB and grows with what the application reads (`tcp_rcv_space_adjust()`,
//! `tcp_rcvbuf_grow()`, net/ipv4/tcp_input.c; MPTCP's `mptcp_rcv_space_adjust()`,
//! net/mptcp/protocol.c), and every segment that raises a subflow's `rcv_ssthresh` is
//! acknowledged at once (`tcp_grow_window()`).

mod wire;

use net::Nanos;
use sim::connection::{ConnConfig, Server};
use sim::ids::{ConnId, SubflowId};
use sim::packet::{HEADER_BYTES, Kind, MSS, Packet, ts_clock_ms};
use sim::tcp::receive_window::{RMEM_MAX, ReceiveBuffer, SEGMENT_SCALING_RATIO, win_from_space};
use wire::{MS, config, server_with_subflows};

/// The round trip the data segments' timestamps echo.
const RTT: Nanos = 20 * MS;

fn autotuned(mptcp: bool) -> ConnConfig {
    ConnConfig {
        rcv_buffer: ReceiveBuffer::Autotuned {
            max_bytes: RMEM_MAX,
        },
        ..config(mptcp, u64::MAX)
    }
}

/// A server whose subflows are open, and the data each has sent.
struct Receiving {
    server: Server,
    next_seq: Vec<u64>,
    next_dsn: u64,
}

impl Receiving {
    fn new(cfg: &ConnConfig, subflows: u8) -> Self {
        Receiving {
            server: server_with_subflows(cfg, subflows),
            next_seq: vec![0; subflows as usize],
            next_dsn: 0,
        }
    }

    /// Subflow `s`'s next segment, in order, at `now`, echoing the ACK sent one RTT ago;
    /// the ACKs sent at once, as (subflow, window in segments).
    fn segment(&mut self, s: u8, now: Nanos) -> Vec<(u8, u32)> {
        let (seq, dsn) = (self.next_seq[s as usize], self.next_dsn);
        self.next_seq[s as usize] += 1;
        self.next_dsn += 1;
        self.segment_at(s, seq, dsn, now)
    }

    /// Segment `seq` of subflow `s` with data sequence number `dsn`, at `now`.
    fn segment_at(&mut self, s: u8, seq: u64, dsn: u64, now: Nanos) -> Vec<(u8, u32)> {
        let pkt = Packet {
            seq,
            dsn,
            ts: now,
            ack_tsval_ms: ts_clock_ms(now - RTT),
            wire_bytes: MSS + HEADER_BYTES,
            ..Packet::control(ConnId(0), SubflowId(s), Kind::Data { push: false })
        };
        self.server.handle_packet(now, &pkt);
        std::iter::from_fn(|| self.server.poll_transmit(now))
            .map(|t| (t.packet.subflow.0, t.packet.rwnd))
            .collect()
    }
}

#[test]
fn the_window_starts_at_64_kb_and_grows_with_what_the_application_reads() {
    // Four segments a millisecond (47 Mbit/s of payload) for a second.
    let mut r = Receiving::new(&autotuned(false), 1);
    let windows: Vec<u32> = (0..4000)
        .flat_map(|k| r.segment(0, 30 * MS + k * MS / 4))
        .map(|(_, w)| w)
        .collect();
    assert!(windows[0] <= 44, "64 KB at first, got {}", windows[0]);
    // Twice the 80 segments read per RTT at least, and no more than tcp_rmem[2] holds.
    let last = *windows.last().unwrap() as u64;
    let most = win_from_space(SEGMENT_SCALING_RATIO, RMEM_MAX) / MSS as u64;
    assert!((160..=most).contains(&last), "window {last}");
    assert!(windows.windows(2).all(|w| w[1] >= w[0]), "never shrinks");
}

#[test]
fn a_fixed_buffer_offers_its_free_space_from_the_start() {
    let cfg = ConnConfig {
        rcv_buffer: ReceiveBuffer::Fixed { segments: 4096 },
        ..config(false, u64::MAX)
    };
    let mut r = Receiving::new(&cfg, 1);
    assert_eq!(r.segment(0, 30 * MS), [(0, 4096)]);
}

/// The segments of subflow 1, one every 5 ms beside subflow 0's four a millisecond, that
/// were acknowledged at once, after its first 16 (quick-ACK mode's).
fn lone_subflow_acks(rcv_buffer: ReceiveBuffer) -> usize {
    let cfg = ConnConfig {
        rcv_buffer,
        ..config(true, u64::MAX)
    };
    let mut r = Receiving::new(&cfg, 2);
    let mut at_once = 0;
    for k in 0..4000u64 {
        let now = 30 * MS + k * MS / 4;
        r.segment(0, now);
        if k % 20 == 0 {
            let acks = r.segment(1, now + 1);
            if k / 20 >= 16 && acks.iter().any(|&(s, _)| s == 1) {
                at_once += 1;
            }
        }
    }
    at_once
}

#[test]
fn a_subflow_below_its_rcv_ssthresh_ceiling_acknowledges_every_segment() {
    // 184 segments after the quick ACKs: with an autotuned buffer, each raises
    // rcv_ssthresh, which chases a clamp the busy subflow's reading keeps raising.
    let autotuned = lone_subflow_acks(ReceiveBuffer::Autotuned {
        max_bytes: RMEM_MAX,
    });
    assert_eq!(autotuned, 184);
    // A fixed buffer has no rcv_ssthresh: every second segment, by the delayed-ACK rule
    // (the other waits for its partner, 5 ms later).
    let fixed = lone_subflow_acks(ReceiveBuffer::Fixed { segments: 4096 });
    assert_eq!(fixed, 92);
}

#[test]
fn data_held_out_of_order_grows_the_buffer_at_once() {
    // `tcp_data_queue_ofo()` ends with `tcp_rcvbuf_grow()`: room for twice the last
    // measure (10 segments at first) beyond everything held out of order.
    let mut r = Receiving::new(&autotuned(false), 1);
    r.segment(0, 30 * MS);
    let (_, clamp_before) = r.server.receive_window(0).unwrap();
    for k in 2..102 {
        r.segment_at(0, k, k, 31 * MS);
    }
    let (_, clamp) = r.server.receive_window(0).unwrap();
    let span = 101 * MSS as u64;
    assert!(clamp_before < span, "{clamp_before}");
    assert!(
        clamp >= span + 20 * MSS as u64 - MSS as u64,
        "clamp {clamp}"
    );
}
