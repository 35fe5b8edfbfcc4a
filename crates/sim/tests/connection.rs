//! The connection's endpoints driven packet by packet, with no event loop, fabric or
//! scenario: a test wire carries each packet at 10 Mbit/s per path and direction, behind at
//! most 100 packets (drop-tail), after its path's one-way delay, and drops the packets a
//! test chooses.

mod wire;

use net::Nanos;
use scenario::spec::SchedulerKind;
use sim::connection::{ConnConfig, Server, ServerEvent, SubflowState};
use sim::ids::{ConnId, SubflowId};
use sim::packet::{HEADER_BYTES, Kind, MSS, Packet, SYN_BYTES};
use sim::tcp::receive_window::ReceiveBuffer;
use wire::{MS, Wire, config, path, tx};

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
    let first_data = w.data_sent(0).next().expect("data sent").0;
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
    let first_data = w.data_sent(1).next().expect("data on subflow 1").0;
    assert_eq!(first_data, third_ack + 60 * MS + 2 * tx(HEADER_BYTES));
    let sfs = w.client.subflows();
    assert!(sfs.iter().all(|s| s.state == SubflowState::Established));
    assert!(sfs[1].tx.rtt.min_rtt >= 60 * MS);
    assert!(w.data_sent(1).count() > 100, "subflow 1 carries data");
}

#[test]
fn a_slow_path_fills_the_shared_receive_buffer_and_blocks_the_fast_one() {
    let goodput = |buffer: u64| {
        // Round robin puts every other segment on the slow path whenever it has room.
        let cfg = ConnConfig {
            rcv_buffer: ReceiveBuffer::Fixed { segments: buffer },
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
            .data_sent(0)
            .chain(w.data_sent(1))
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
        ..Packet::control(ConnId(0), SubflowId(subflow), Kind::Data { push: false })
    };
    for s in [0, 1] {
        let mut syn = Packet::control(ConnId(0), SubflowId(s), Kind::Syn);
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
        .map(|t| t.packet)
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

/// A Reno flow clamped to a window of 16 segments, run for 5 s (its window at the clamp,
/// `max_cwnd` the largest it had), then set to lose the next data segment it sends, once.
fn clamped_flow_about_to_lose_one() -> (Wire, f64) {
    let cfg = ConnConfig {
        cwnd_clamp: 16,
        ..config(false, u64::MAX)
    };
    let mut w = Wire::new(cfg, &[10], Box::new(mptcp_cc::Reno));
    let mut max_cwnd: f64 = 0.0;
    w.run_until(5000 * MS, |w| {
        max_cwnd = max_cwnd.max(w.client.subflows()[0].tx.cwnd())
    });
    let lost_seq = w.client.subflows()[0].tx.snd_nxt;
    let mut once = true;
    w.drop = Box::new(move |_, p| {
        let hit = once && p.kind.is_data() && p.seq == lost_seq;
        once &= !hit;
        hit
    });
    (w, max_cwnd)
}

#[test]
fn a_window_limited_flow_stops_at_its_limit_and_a_loss_halves_what_it_used() {
    let (mut w, max_cwnd) = clamped_flow_about_to_lose_one();
    assert_eq!(max_cwnd, 16.0, "cwnd grows to the limit and no further");
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
fn the_ack_that_ends_recovery_grows_the_window_by_what_it_newly_delivered() {
    // One loss in a window of 16: the retransmission's ACK covers the hole and the 15
    // segments SACKed behind it. Linux grows the window by what the ACK newly delivered
    // (`tcp_cong_control()` passes `acked_sacked`), the one segment: Reno's 1/8 at a
    // window of 8, not the 15/8 of everything the ACK covered.
    let (mut w, _) = clamped_flow_about_to_lose_one();
    let mut in_recovery = false;
    let mut after_recovery = None;
    w.run_until(5500 * MS, |w| {
        let tx = &w.client.subflows()[0].tx;
        if tx.state == mptcp_cc::CaState::Recovery {
            in_recovery = true;
        } else if in_recovery && after_recovery.is_none() {
            after_recovery = Some((tx.cwnd(), tx.ssthresh, tx.cwnd_limited()));
        }
    });
    let (cwnd, ssthresh, cwnd_limited) = after_recovery.expect("recovery ended");
    assert_eq!(ssthresh, 8.0);
    assert!(cwnd_limited, "the window may grow on this ACK");
    assert_eq!(cwnd, 8.125, "ssthresh + 1/8");
}

#[test]
fn a_receive_window_limited_flow_does_not_grow_its_window_unseen() {
    let cfg = ConnConfig {
        rcv_buffer: ReceiveBuffer::Fixed { segments: 8 },
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

/// Data sequence numbers of the data segments sent on `subflow` with PSH, first
/// transmissions only.
fn pushed_dsns(w: &Wire, subflow: u8) -> Vec<u64> {
    let mut seen = std::collections::BTreeSet::new();
    w.data_sent(subflow)
        .filter(|(_, p)| seen.insert(p.seq) && p.kind == Kind::Data { push: true })
        .map(|(_, p)| p.dsn)
        .collect()
}

#[test]
fn tcp_pushes_where_each_64_kib_write_ends_and_at_the_end_of_the_data() {
    // 200,000 bytes in segments of 1,460: the writes end in segments 44 (byte 65,535),
    // 89 and 134; the data in segment 136. A window of one segment sends no skb of
    // several, so no other segment is pushed (they are, below).
    let cfg = ConnConfig {
        cwnd_clamp: 1,
        ..config(false, 200_000)
    };
    let mut w = Wire::new(cfg, &[10], Box::new(mptcp_cc::Reno));
    w.run_until(20_000 * MS, |_| {});
    assert_eq!(w.delivered, 200_000);
    assert_eq!(pushed_dsns(&w, 0), [44, 89, 134, 136]);
}

#[test]
fn the_last_segment_of_each_skb_of_several_is_pushed() {
    // After the handshake (20 ms) the pacing rate is 2 x 10 segments per 20 ms, 1.46 MB/s:
    // under 1,460 bytes a millisecond, so an skb is `tcp_min_tso_segs`, 2 segments, and the
    // initial window of 10 leaves as five of them (`__tcp_transmit_skb()` pushes each).
    let mut w = Wire::new(config(false, u64::MAX), &[10], Box::new(mptcp_cc::Reno));
    w.run_until(30 * MS, |_| {});
    let first_window: Vec<(u64, bool)> = w
        .data_sent(0)
        .map(|(_, p)| (p.dsn, p.kind == Kind::Data { push: true }))
        .collect();
    let expected: Vec<(u64, bool)> = (0..10).map(|dsn| (dsn, dsn % 2 == 1)).collect();
    assert_eq!(first_window, expected);
    // In the steady state about every second segment leaves pushed, as in the kernel
    // backend's captures at these rates (43 % in E5.3's).
    w.run_until(5000 * MS, |_| {});
    let sent = w.data_sent(0).count();
    let share = pushed_dsns(&w, 0).len() as f64 / sent as f64;
    assert!((0.35..=0.5).contains(&share), "{share:.2} of {sent} pushed");
}

#[test]
fn linux_mptcp_pushes_where_a_subflows_queued_data_ends() {
    // A window of one segment sends no skb of several, so only the scheduler's pushes
    // show: the end of each burst that found its subflow's queue empty (a burst that
    // follows queued data takes the queued tail's push away), and the last data segment.
    let cfg = ConnConfig {
        scheduler: SchedulerKind::LinuxDefault,
        cwnd_clamp: 1,
        ..config(true, 200_000)
    };
    let mut w = Wire::new(cfg, &[10, 30], Box::new(mptcp_cc::Lia));
    w.run_until(60_000 * MS, |_| {});
    assert_eq!(w.delivered, 200_000);
    let last = 200_000u64.div_ceil(MSS as u64) - 1;
    let mut all: Vec<u64> = vec![];
    for s in [0, 1] {
        let sent = w.data_sent(s).count();
        let pushed = pushed_dsns(&w, s);
        // The scheduler keeps each queue fed, so its bursts mostly join queued data: under
        // one push in five segments, where a push at every burst's end would be one in
        // one (each ACK frees one segment of send buffer for the next burst). A window of
        // one never grows the send buffers past their first 46 kB, 31 segments each, so
        // the faster subflow's queue drains while the connection waits for the slower
        // one's data to be acknowledged, and the burst after that pushes.
        assert!(
            !pushed.is_empty() && pushed.len() * 5 <= sent,
            "subflow {s}: {} pushes in {sent} segments",
            pushed.len()
        );
        all.extend(pushed);
    }
    assert!(all.contains(&last), "the last data segment is pushed");
}
