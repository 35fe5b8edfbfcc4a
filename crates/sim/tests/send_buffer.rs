//! An MPTCP subflow's send buffer under Linux's default scheduler, packet by packet on the
//! test wire. Linux sizes it when the subflow is set up (`tcp_init_transfer()`: twice the
//! initial window) and grows it only in `tcp_new_space()`, when the application waits for
//! room (`SOCK_NOSPACE`) and the window is not full (`tcp_should_expand_sndbuf()`), to
//! twice the current window (`tcp_sndbuf_expand()`, net/ipv4/tcp_input.c).
//! `tcp_check_space()` asks after each skb of new data sent (`tcp_event_new_data_sent()`,
//! net/ipv4/tcp_output.c) and after an ACK's push (`tcp_data_snd_check()`). The connection
//! takes from the application what the sum of its subflows' buffers holds
//! (docs/linux-fidelity.md, "The packet scheduler").

mod wire;

use scenario::spec::SchedulerKind;
use sim::mptcp::linger::INITIAL_SNDBUF;
use sim::packet::MSS;
use wire::{MS, Wire, config};

/// The kernel backend's kernel's worst-case memory per segment (see `mptcp::linger`).
const PER_SEGMENT_TRUESIZE: u64 = 2304;

fn linux_default_wire(total_bytes: u64) -> Wire {
    let mut cfg = config(true, total_bytes);
    cfg.scheduler = SchedulerKind::LinuxDefault;
    Wire::new(cfg, &[10, 40], Box::new(mptcp_cc::Lia))
}

#[test]
fn a_bulk_senders_buffer_follows_its_window_in_slow_start_with_data_queued() {
    // A bulk transfer: the application always waits for room. The scheduler queues bursts
    // ahead of each subflow's window, so after an ACK's push the window is full; but in
    // slow start an ACK opens more room than one skb takes, so after the push's first skb
    // the window still has room and the buffer grows, while data waits in the queue (as
    // the kernel backend's subflows do: `sk_sndbuf` at each ACK, docs/kernel-backend.md).
    let mut w = linux_default_wire(u64::MAX);
    let mut last = [0u64; 2];
    let mut growths = 0;
    let mut growths_with_data_queued = 0;
    w.run_until(3_000 * MS, |w| {
        for (s, sf) in w.client.subflows().iter().enumerate() {
            if last[s] != 0 && sf.sndbuf > last[s] {
                growths += 1;
                if !sf.queue.is_empty() {
                    growths_with_data_queued += 1;
                }
                // Twice a window the subflow has had, at 2,304 bytes a segment (or
                // `tcp_wmem[2]`, 4 MB, which caps it).
                assert!(sf.sndbuf % (2 * PER_SEGMENT_TRUESIZE) == 0 || sf.sndbuf == 4 << 20);
                let window = sf.tx.send_window().max(10);
                assert!(
                    sf.sndbuf <= 2 * window * PER_SEGMENT_TRUESIZE,
                    "subflow {s}'s buffer {} is more than twice its window {window}",
                    sf.sndbuf
                );
            }
            last[s] = sf.sndbuf;
        }
    });
    assert!(growths > 0, "the buffers never grew");
    assert!(
        growths_with_data_queued * 2 > growths,
        "{growths_with_data_queued} of {growths} growths with data queued"
    );
    assert!(last.iter().all(|&b| b >= INITIAL_SNDBUF));
}

#[test]
fn a_send_buffer_the_application_never_fills_does_not_grow() {
    // 20 segments fit in the first subflow's initial buffer (31 segments): the application
    // never waits, so no ACK expands it, though the window grows past the 10 segments the
    // buffer was sized for and has room at the ACKs once everything is out.
    let mut w = linux_default_wire(20 * MSS as u64);
    let mut widest = 0;
    w.run_until(2_000 * MS, |w| {
        for sf in w.client.subflows() {
            assert!(sf.sndbuf <= INITIAL_SNDBUF, "grew to {}", sf.sndbuf);
            widest = widest.max(sf.tx.send_window());
        }
    });
    assert!(widest > 10, "the window never grew past the initial one");
    assert_eq!(w.delivered, 20 * MSS as u64);
}
