//! When the receiving end acknowledges, segment in, ACKs out, on the server alone: Linux's
//! delayed ACKs with quick-ACK mode (`__tcp_ack_snd_check()`, `tcp_event_data_recv()`,
//! net/ipv4/tcp_input.c), and the ACKs a read releases (`__tcp_cleanup_rbuf()`,
//! net/ipv4/tcp.c; MPTCP's `mptcp_cleanup_rbuf()`, net/mptcp/protocol.c).

mod wire;

use net::Nanos;
use sim::connection::{ConnConfig, Server};
use sim::ids::{ConnId, SubflowId};
use sim::packet::{HEADER_BYTES, Kind, MSS, Packet};
use sim::tcp::receive_window::ReceiveBuffer;
use wire::{MS, config, server_with_subflows};

/// A server whose subflows are past their first 16 segments (each acknowledged at once,
/// quick-ACK mode) and hold no ACK: subflow `k` received data segments
/// `16k .. 16k + 16` as its segments `0 .. 16`, in data order, by 20 ms.
struct Receiving {
    server: Server,
    now: Nanos,
}

impl Receiving {
    fn new(cfg: &ConnConfig, subflows: u8) -> Self {
        let mut r = Receiving {
            server: server_with_subflows(cfg, subflows),
            now: 0,
        };
        for s in 0..subflows {
            for k in 0..16 {
                r.now = 10 * MS + (s as u64 * 16 + k) * 100_000;
                r.data(s, k, s as u64 * 16 + k, false);
                assert_eq!(r.acks(), [(s, k + 1)], "quick ACK of segment {k}");
            }
        }
        r.now = 20 * MS;
        r
    }

    /// Data segment `seq` of subflow `s` carrying data sequence number `dsn`, full-sized.
    fn data(&mut self, s: u8, seq: u64, dsn: u64, push: bool) {
        self.data_of(s, seq, dsn, push, MSS);
    }

    fn data_of(&mut self, s: u8, seq: u64, dsn: u64, push: bool, payload: u16) {
        let pkt = Packet {
            seq,
            dsn,
            ts: 1,
            wire_bytes: payload + HEADER_BYTES,
            ..Packet::control(ConnId(0), SubflowId(s), Kind::Data { push })
        };
        self.server.handle_packet(self.now, &pkt);
    }

    /// The ACKs sent now, as (subflow, cumulative acknowledgement).
    fn acks(&mut self) -> Vec<(u8, u64)> {
        std::iter::from_fn(|| self.server.poll_transmit(self.now))
            .map(|t| t.packet)
            .filter(|p| p.kind == Kind::Ack)
            .map(|p| (p.subflow.0, p.seq))
            .collect()
    }

    /// The ACKs the delayed-ACK timer sends when it expires, and when that is.
    fn delayed_acks(&mut self) -> (Nanos, Vec<(u8, u64)>) {
        let due = self.server.poll_timeout().expect("a delayed-ACK timer");
        self.now = due;
        self.server.handle_timeout(due);
        (due, self.acks())
    }
}

#[test]
fn after_the_quick_acks_every_second_segment_is_acknowledged_and_a_lone_one_waits_40_ms() {
    let mut r = Receiving::new(&config(false, u64::MAX), 1);
    r.data(0, 16, 16, false);
    assert_eq!(r.acks(), []);
    r.data(0, 17, 17, false);
    assert_eq!(r.acks(), [(0, 18)]);
    r.data(0, 18, 18, false);
    assert_eq!(r.acks(), []);
    assert_eq!(r.delayed_acks(), (20 * MS + 40 * MS, vec![(0, 19)]));
}

#[test]
fn tcp_acknowledges_a_pushed_or_short_segment_once_the_application_has_read_it() {
    let mut r = Receiving::new(&config(false, u64::MAX), 1);
    r.data(0, 16, 16, true);
    assert_eq!(r.acks(), [(0, 17)], "PSH: ICSK_ACK_PUSHED");
    r.data_of(0, 17, 17, false, 100);
    assert_eq!(r.acks(), [(0, 18)], "shorter than the MSS");
}

#[test]
fn tcp_acknowledges_out_of_order_data_and_a_filled_hole_at_once() {
    let mut r = Receiving::new(&config(false, u64::MAX), 1);
    r.data(0, 17, 17, false);
    assert_eq!(r.acks(), [(0, 16)], "out of order: at once");
    // Segment 16 fills the hole (an ACK at once), then 18 comes pushed with 20 missing.
    r.data(0, 16, 16, false);
    assert_eq!(r.acks(), [(0, 18)]);
    r.data(0, 20, 20, false);
    assert_eq!(r.acks(), [(0, 18)]);
    r.data(0, 18, 18, false);
    assert_eq!(
        r.acks(),
        [(0, 19)],
        "the hole before 20 still SACKed at once"
    );
}

#[test]
fn mptcp_releases_a_subflows_pushed_ack_when_another_subflow_completes_the_data() {
    let mut r = Receiving::new(&config(true, u64::MAX), 2);
    // Subflow 1's segment 16 (data 33, pushed) is in order on its subflow, but data 32 is
    // missing: the connection holds data 33, and subflow 1's ACK waits.
    r.data(1, 16, 33, true);
    assert_eq!(r.acks(), []);
    // Subflow 0 brings data 32 (not pushed): the application reads 32 and 33, the buffer
    // is empty, and subflow 1's pushed ACK goes (`mptcp_subflow_could_cleanup()`);
    // subflow 0's own lone segment waits for its timer.
    r.data(0, 16, 32, false);
    assert_eq!(r.acks(), [(1, 17)]);
    assert_eq!(r.delayed_acks().1, [(0, 17)]);
}

#[test]
fn mptcp_holds_a_subflows_ack_without_psh_until_its_timer() {
    let mut r = Receiving::new(&config(true, u64::MAX), 2);
    r.data(1, 16, 33, false);
    r.data(0, 16, 32, false);
    assert_eq!(r.acks(), []);
    assert_eq!(
        r.delayed_acks(),
        (20 * MS + 40 * MS, vec![(0, 17), (1, 17)])
    );
}

#[test]
fn mptcp_announces_a_window_the_read_doubled() {
    // A 40-segment buffer: subflow 1 brings data 33..57 while data 32 is missing, so its
    // ACKs advertise a window shrinking to 16 segments. When subflow 0 brings data 32,
    // the read frees all 40, at least twice the window last advertised: every subflow
    // runs `__tcp_cleanup_rbuf()`. Subflow 1, with nothing newly received, announces the
    // window, at least twice what is left of its last one; subflow 0 (last window 40, 39
    // left) holds its lone segment's ACK for its timer.
    let cfg = ConnConfig {
        rcv_buffer: ReceiveBuffer::Fixed { segments: 40 },
        ..config(true, u64::MAX)
    };
    let mut r = Receiving::new(&cfg, 2);
    let mut windows = vec![];
    for k in 0..24 {
        r.data(1, 16 + k, 33 + k, false);
        windows.extend(std::iter::from_fn(|| r.server.poll_transmit(r.now)).map(|t| t.packet.rwnd));
    }
    assert_eq!(windows.len(), 12, "every second segment");
    assert_eq!(windows.last(), Some(&16));
    r.data(0, 16, 32, false);
    let after: Vec<(u8, u64, u32)> = std::iter::from_fn(|| r.server.poll_transmit(r.now))
        .map(|t| (t.packet.subflow.0, t.packet.seq, t.packet.rwnd))
        .collect();
    assert_eq!(after, [(1, 40, 40)]);
    assert_eq!(r.delayed_acks().1, [(0, 17)]);
}
