//! A diagnostic build's trace of the data-level retransmission timer (the
//! `data-timer-trace` feature), one line on standard error per event, in the form
//! scripts/data-timer-trace gets from the kernel through tracepoints, so that the two
//! backends' timers can be set side by side: each expiry (`mptcp_retransmit_timer()`,
//! net/mptcp/protocol.c), and each subflow's stale state whenever the scheduler is
//! consulted (the kernel's `mptcp_subflow_get_send` tracepoint), which is where the stale
//! checks' effects can be read on the kernel.
//!
//! `data-timer,<kind>,<ns>,<jiffies>,<connection>,<interval>,<subflow>,<stale_count>,<stale>,
//! <cwnd>,<packets_out>,<srtt_us>,<inflight_kb>,<sndbuf_kb>,<window_kb>`: kind 0 is an
//! expiry, with the interval in force (the one it re-arms the timer with,
//! `msk->timer_ival`) and the data level's state (in flight, `snd_nxt - snd_una`; the send
//! buffer; the peer's window from `snd_una`), kind 1 a subflow's state (numbered from 1,
//! as Linux's `subflow_id`) with its own send buffer. One run per process: the last states
//! seen are kept per thread, by connection number.

use super::ClientSubflow;
use crate::ids::ConnId;
use crate::jiffies::Jiffies;
use crate::mptcp::DataSender;
use crate::packet::MSS;
use net::Nanos;
use std::cell::RefCell;
use std::collections::HashMap;

const EXPIRY: u8 = 0;
const SUBFLOW_SEEN: u8 = 1;

/// The timer ran, its interval `interval`; the data level as it found it, and the
/// connection's send buffer (`sndbuf` bytes: the sum of its subflows').
pub fn expiry(now: Nanos, conn: ConnId, interval: Jiffies, data: &DataSender, sndbuf: u64) {
    let kb = |segments: u64| segments.saturating_mul(MSS as u64) / 1000;
    eprintln!(
        "data-timer,{EXPIRY},{now},{},{},{},0,0,0,0,0,0,{},{},{}",
        Jiffies::at(now).0,
        conn.0,
        interval.0,
        kb(data.nxt - data.una),
        sndbuf / 1000,
        kb(data.peer_window),
    );
}

thread_local! {
    /// Per connection and subflow, the stale state the last line gave; a line goes out at
    /// the first sighting and when it differs, as the kernel side's BPF program does
    /// (`last_seen`). Runs on other threads (`--jobs`) keep their own.
    static LAST_SEEN: RefCell<HashMap<(u32, usize), (u8, bool)>> = RefCell::new(HashMap::new());
}

/// Subflow `s` as the scheduler sees it, if its stale state changed since the last line.
pub fn subflow_seen(now: Nanos, conn: ConnId, s: usize, sf: &ClientSubflow) {
    let state = (sf.watch.count(), sf.watch.is_stale());
    // The first sighting goes out whatever the state, as on the kernel side.
    let changed =
        LAST_SEEN.with(|seen| seen.borrow_mut().insert((conn.0, s), state) != Some(state));
    if !changed {
        return;
    }
    eprintln!(
        "data-timer,{SUBFLOW_SEEN},{now},{},{},0,{},{},{},{},{},{},{},{},{}",
        Jiffies::at(now).0,
        conn.0,
        s + 1,
        state.0,
        u8::from(state.1),
        sf.tx.cwnd() as u64,
        sf.tx.outstanding(),
        sf.tx.rtt.srtt / 1000,
        0,
        sf.sndbuf / 1000,
        0
    );
}
