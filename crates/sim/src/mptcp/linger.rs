//! Linux's default MPTCP packet scheduler (`mptcp_subflow_get_send()` in
//! net/mptcp/protocol.c, the only built-in one since Linux 6.0; `net.mptcp.scheduler =
//! "default"`), driven as `__mptcp_push_pending()` and `__subflow_push_pending()` drive it.
//!
//! - Among the usable subflows it picks the one whose queued bytes drain soonest at its
//!   pacing rate: the least `sk_wmem_queued / avg_pacing_rate` (the "linger time", after
//!   BLEST). Window space is not asked: the chosen subflow only needs room in its send
//!   buffer (`sk_stream_memory_free()`); when it has none nothing is sent, even if another
//!   subflow has room.
//! - It gives that subflow a burst of up to `MPTCP_SEND_BURST_SIZE` bytes, cut to the
//!   peer's data-level window, copied into the subflow's write queue ahead of its
//!   congestion window; the burst stops early when the send buffer fills. The subflow sends
//!   from its queue as its window opens, so a slow subflow can hold data the fast one
//!   could have sent.
//! - `avg_pacing_rate` is the subflow's pacing rate averaged over what it was given,
//!   weighted by bytes: `(avg * wmem + rate * burst) / (burst + wmem)`.
//!
//! The send buffer is what Linux's autotuning gives a TCP socket: room for twice the
//! initial window (`TCP_INIT_CWND` segments) at a worst-case truesize per segment when the
//! subflow is set up (`tcp_init_transfer()`), then room for twice the current window each
//! time `tcp_check_space()` finds the application waiting for room and the window not full
//! (`tcp_new_space()` → `tcp_sndbuf_expand()`); never shrinking, at most `tcp_wmem[2]`.
//! Linux asks after each skb of new data sent and after an ACK's push (the connection calls
//! `expand_sndbuf` at both), so in slow start, where an ACK opens more room than an skb
//! takes, the buffer follows the window while data waits in the queue, and in congestion
//! avoidance it grows only when an ACK opens more room than an skb or the queue drains.
//! Queued bytes are counted as payload, which is what they cost in Linux's large GSO
//! buffers (`mptcp_sendmsg_frag()` appends page fragments; the per-buffer overhead is
//! under 2 % of 64 KB).

use super::stale::is_active;
use crate::connection::ClientSubflow;
use crate::packet::MSS;
use crate::tcp::pacing::pacing_rate;

/// `MPTCP_SEND_BURST_SIZE`: 64 KB less a TCP header, the TCP option space, an IPv6 header
/// and a fragment header (20 + 40 + 40 + 8 bytes).
pub const SEND_BURST_BYTES: u64 = 65_428;
/// `TCP_INIT_CWND`: the send buffer is sized for at least this many segments.
const TCP_INIT_CWND: u64 = 10;
/// `tcp_sndbuf_expand()`'s worst-case memory per segment: `roundup_pow_of_two(mss +
/// MAX_TCP_HEADER + SKB_DATA_ALIGN(sizeof(struct skb_shared_info)))` plus
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))`. It depends on the kernel's build: on the
/// kernel the kernel backend runs on here (no tunnel drivers and no wireless, so
/// `MAX_HEADER` is `LL_MAX_HEADER`, 32, and `MAX_TCP_HEADER` is `L1_CACHE_ALIGN(128 +
/// 32)`, 192; `skb_shared_info` 320 bytes, `sk_buff` 224, 256 aligned) a 1460-byte MSS
/// gives 1,972, rounded up to 2,048, plus 256. A kernel with IP tunnels or wireless
/// (`MAX_TCP_HEADER` 320, most distributions' builds) gives 4,096 + 256, a buffer about
/// twice as large for the same window.
const PER_SEGMENT_TRUESIZE: u64 = 2048 + 256;
/// `net.ipv4.tcp_wmem[2]`'s default: the largest send buffer autotuning gives.
const TCP_WMEM_MAX: u64 = 4 << 20;

/// The bytes a subflow holds until they are acknowledged (`sk_wmem_queued`): those sent
/// and not yet acknowledged at its level, SACKed ones included, and those queued unsent.
pub fn wmem_queued(sf: &ClientSubflow) -> u64 {
    (sf.tx.outstanding() + sf.queue.len()) * MSS as u64
}

/// The send buffer `tcp_sndbuf_expand()` gives the subflow at its current window.
fn sndbuf_for(sf: &ClientSubflow) -> u64 {
    let segments = sf.tx.send_window().max(TCP_INIT_CWND);
    (2 * segments * PER_SEGMENT_TRUESIZE).min(TCP_WMEM_MAX)
}

/// The send buffer a subflow starts with: `tcp_init_transfer()` sizes it for the initial
/// window (`tcp_init_buffer_space()` → `tcp_sndbuf_expand()`).
pub const INITIAL_SNDBUF: u64 = 2 * TCP_INIT_CWND * PER_SEGMENT_TRUESIZE;

/// `tcp_check_space()` with the application waiting for room (after an skb of new data,
/// `tcp_event_new_data_sent()`, or an ACK's push, `tcp_data_snd_check()`):
/// `tcp_new_space()` grows the send buffer to what the current window needs, unless the
/// window is full (`tcp_should_expand_sndbuf()`: "if we filled the congestion window, do
/// not expand").
pub fn expand_sndbuf(sf: &mut ClientSubflow) {
    if sf.tx.has_room() {
        sf.sndbuf = sf.sndbuf.max(sndbuf_for(sf));
    }
}

/// Whether the subflow's send buffer takes more data (`sk_stream_memory_free()`).
pub fn memory_free(sf: &ClientSubflow) -> bool {
    wmem_queued(sf) < sf.sndbuf
}

/// The subflow to give the next burst of `burst` bytes to, if any: the usable one with
/// the shortest linger time, provided it has send-buffer room. Updates the chosen one's
/// average pacing rate for the burst.
pub fn pick(subflows: &mut [ClientSubflow], burst: u64) -> Option<usize> {
    let mut best: Option<(u128, usize)> = None;
    for (s, sf) in subflows.iter_mut().enumerate() {
        if !is_active(sf) {
            continue;
        }
        if sf.sndbuf == 0 {
            sf.sndbuf = INITIAL_SNDBUF;
        }
        if sf.avg_pacing_rate == 0 {
            // Initialised from the socket's rate the first time it is looked at.
            sf.avg_pacing_rate = pacing_rate(&sf.tx);
            if sf.avg_pacing_rate == 0 {
                continue;
            }
        }
        let linger = ((wmem_queued(sf) as u128) << 32) / sf.avg_pacing_rate as u128;
        if best.is_none_or(|(l, _)| linger < l) {
            best = Some((linger, s));
        }
    }
    let (_, s) = best?;
    let sf = &mut subflows[s];
    if !memory_free(sf) {
        return None;
    }
    if burst > 0 {
        let wmem = wmem_queued(sf) as u128;
        let blended = (sf.avg_pacing_rate as u128 * wmem
            + pacing_rate(&sf.tx) as u128 * burst as u128)
            / (burst as u128 + wmem);
        sf.avg_pacing_rate = blended as u64;
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::{Path, SubflowState};
    use crate::tcp::Sender;
    use net::RouteId;

    /// An established subflow with window `cwnd` in congestion avoidance, SRTT `srtt_ms`,
    /// `in_flight` segments sent and unacknowledged and `queued` more in its queue.
    fn subflow(cwnd: f64, srtt_ms: u64, in_flight: u64, queued: u64) -> ClientSubflow {
        let mut tx = Sender::new(true, 10_000);
        tx.set_cwnd(cwnd);
        tx.ssthresh = cwnd;
        tx.rtt.srtt = srtt_ms * 1_000_000;
        for dsn in 0..in_flight {
            tx.send_new(dsn, false, 0);
        }
        let path = Path {
            fwd: RouteId(0),
            rev: RouteId(0),
        };
        let mut sf = ClientSubflow::new(tx, path);
        sf.state = SubflowState::Established;
        for dsn in 0..queued {
            sf.queue.push(1000 + dsn);
        }
        sf
    }

    #[test]
    fn picks_the_subflow_whose_queue_drains_first_even_without_window_space() {
        // A: 20 segments at 20 per 10 ms drain in 8.3 ms (pacing 1.2x); B: 10 segments at
        // 10 per 100 ms in 83 ms. A's window is full; Linux does not look at it.
        let mut sfs = [subflow(20.0, 10, 20, 0), subflow(10.0, 100, 10, 0)];
        assert!(!sfs[0].tx.has_room());
        assert_eq!(pick(&mut sfs, SEND_BURST_BYTES), Some(0));
        // With 200 more queued, A drains in 92 ms: B is sooner.
        let mut sfs = [subflow(20.0, 10, 20, 200), subflow(10.0, 100, 10, 0)];
        assert_eq!(pick(&mut sfs, SEND_BURST_BYTES), Some(1));
    }

    #[test]
    fn a_chosen_subflow_with_a_full_send_buffer_stops_the_scheduler() {
        // A drains soonest, but its buffer (2 x 10 x 2304 bytes, 32 segments) is full; B has
        // room. `mptcp_subflow_get_send()` returns no subflow rather than B.
        let mut sfs = [subflow(10.0, 1, 10, 22), subflow(10.0, 100, 10, 0)];
        assert_eq!(pick(&mut sfs, SEND_BURST_BYTES), None);
        sfs[0].queue.pop();
        assert_eq!(pick(&mut sfs, SEND_BURST_BYTES), Some(0));
    }

    #[test]
    fn only_usable_subflows_are_considered() {
        // `mptcp_subflow_active()`: an MP_JOIN not yet fully established is not (nor is a
        // stale subflow; see the stale-subflow tests).
        let mut sfs = [subflow(10.0, 10, 0, 0), subflow(10.0, 100, 0, 0)];
        sfs[0].state = SubflowState::PreEstablished;
        assert_eq!(pick(&mut sfs, SEND_BURST_BYTES), Some(1));
    }

    #[test]
    fn the_average_pacing_rate_is_weighted_by_bytes_queued_and_given() {
        let mut sfs = [subflow(10.0, 100, 10, 0)];
        sfs[0].avg_pacing_rate = 100_000;
        // Now 175,200 B/s (10 x 1460 x 1.2 per 100 ms); 14,600 bytes queued, 65,428 given.
        assert_eq!(pick(&mut sfs, SEND_BURST_BYTES), Some(0));
        let expected = (100_000u64 * 14_600 + 175_200 * 65_428) / (65_428 + 14_600);
        assert_eq!(sfs[0].avg_pacing_rate, expected);
        // A burst of nothing (the peer's window is full) leaves it alone.
        assert_eq!(pick(&mut sfs, 0), Some(0));
        assert_eq!(sfs[0].avg_pacing_rate, expected);
    }

    #[test]
    fn a_new_subflow_s_send_buffer_holds_twice_the_initial_window() {
        // 2 x 10 x 2,304 bytes: the 46 kB each subflow of the kernel backend's kernel starts
        // with (`scripts/data-timer-trace` reads it at `mptcp_subflow_get_send`).
        let mut sfs = [subflow(30.0, 10, 0, 0)];
        pick(&mut sfs, SEND_BURST_BYTES);
        assert_eq!(sfs[0].sndbuf, 46_080);
    }

    #[test]
    fn the_send_buffer_grows_to_the_window_only_while_the_window_has_room() {
        // 30 segments out of a window of 30: `tcp_should_expand_sndbuf()` says no.
        let mut sfs = [subflow(30.0, 10, 30, 0)];
        sfs[0].sndbuf = INITIAL_SNDBUF;
        expand_sndbuf(&mut sfs[0]);
        assert_eq!(sfs[0].sndbuf, INITIAL_SNDBUF);
        // With 29 out there is room: twice the window.
        let mut sfs = [subflow(30.0, 10, 29, 0)];
        sfs[0].sndbuf = INITIAL_SNDBUF;
        expand_sndbuf(&mut sfs[0]);
        assert_eq!(sfs[0].sndbuf, 2 * 30 * 2304);
        // It never shrinks with the window.
        sfs[0].tx.set_cwnd(2.0);
        expand_sndbuf(&mut sfs[0]);
        assert_eq!(sfs[0].sndbuf, 2 * 30 * 2304);
    }
}
