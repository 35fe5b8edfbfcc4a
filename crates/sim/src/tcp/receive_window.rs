//! How far a Linux receiver opens its window, and how it sizes its receive buffer
//! (net/ipv4/tcp_input.c, "Tuning advertised window" and "Receiver autotuning"):
//!
//! - `rcv_ssthresh`, the window's slow start (`tcp_grow_window()`): it starts at about
//!   64 KB and each in-order segment raises it by two segments, up to the smaller of
//!   `window_clamp` and the free space; every segment that raises it asks for one ACK at
//!   once (`icsk_ack.quick |= 1`). A subflow that carries little therefore acknowledges
//!   every segment for as long as the buffer keeps growing ahead of it.
//! - The receive buffer (`sk_rcvbuf`) starts at `tcp_rmem[1]` (128 KiB) and grows, never
//!   shrinks, by Dynamic Right-Sizing (`tcp_rcv_space_adjust()`, `tcp_rcvbuf_grow()`):
//!   once per receiver RTT, twice what the application read in the last one plus room for
//!   the sender to double, up to `tcp_rmem[2]`. `window_clamp` follows it.
//! - The receiver's RTT (`tcp_rcv_rtt_measure_ts()`, `tcp_rcv_rtt_update()`): from the
//!   ACK a segment's timestamp echoes to that segment; lower samples are taken at once,
//!   higher ones smoothed by 1/8, so a subflow idle for a while reports a long RTT.
//!
//! Sizes are bytes as in Linux. A buffer holds `len / truesize` of its size as payload
//! (`tcp_win_from_space()`, the `scaling_ratio` out of 256): 128 until the first full
//! segment is measured, then [`SEGMENT_SCALING_RATIO`].

use crate::packet::MSS;
use net::Nanos;

/// `tcp_rmem[1]`: every socket's receive buffer to begin with.
pub const RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]` of Linux 6.18 on a host with more than a few GB: autotuning's ceiling.
pub const RMEM_MAX: u64 = 32 << 20;
/// `TCP_DEFAULT_SCALING_RATIO`: a buffer assumed half payload until measured.
const DEFAULT_SCALING_RATIO: u64 = 128;
/// A full segment's payload over its `truesize`, out of 256, as the kernel backend's
/// receivers measure it (`ss -tmi`: a `window_clamp` of 13,665,913 bytes from a buffer of
/// 22,142,240, 0.617).
pub const SEGMENT_SCALING_RATIO: u64 = 158;
/// `TCP_INIT_CWND`: the first DRS measure expects ten segments.
const INIT_CWND: u64 = 10;
/// `tcp_rcvbuf_low_rtt`: below this receiver RTT the buffer grows in proportion to the
/// RTT, not to the sender's slow start.
const RCVBUF_LOW_RTT_US: u64 = 1000;

/// The receive buffer a connection is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiveBuffer {
    /// A fixed buffer (`SO_RCVBUF`, which locks it): the window is its free space,
    /// segments.
    Fixed { segments: u64 },
    /// Linux's autotuning up to `max_bytes` (`tcp_rmem[2]`), with `rcv_ssthresh`.
    Autotuned { max_bytes: u64 },
}

impl ReceiveBuffer {
    /// The window the SYN-ACK offers, segments.
    pub fn initial_window_segs(&self) -> u64 {
        match *self {
            ReceiveBuffer::Fixed { segments } => segments.max(1),
            ReceiveBuffer::Autotuned { .. } => initial_rcv_wnd() / MSS as u64,
        }
    }
}

/// `tcp_win_from_space()`: the payload a buffer of `space` bytes holds.
pub fn win_from_space(scaling_ratio: u64, space: u64) -> u64 {
    (space * scaling_ratio) >> 8
}

/// `tcp_space_from_win()`: the buffer that holds `win` bytes of payload.
pub fn space_from_win(scaling_ratio: u64, win: u64) -> u64 {
    (win << 8) / scaling_ratio
}

/// `tcp_select_initial_window()` on a listener's default buffer: its payload share,
/// rounded down to whole segments.
fn initial_rcv_wnd() -> u64 {
    let space = win_from_space(DEFAULT_SCALING_RATIO, RMEM_DEFAULT);
    space - space % MSS as u64
}

/// The receiver's RTT estimate (`tp->rcv_rtt_est`), microseconds times 8.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RcvRtt {
    rtt_us8: u64,
    /// The TSecr last sampled: one sample per ACK echoed (`rcv_rtt_last_tsecr`).
    last_tsecr: u32,
    /// The measure by windows (`rcv_rtt_est.seq`, `.time`): when the segment one window
    /// beyond `rcv_nxt` arrives, a window's worth took about one RTT.
    window_end: u64,
    window_since: Option<Nanos>,
}

impl RcvRtt {
    /// Microseconds times 8; 0 before the first sample.
    pub fn rtt_us8(&self) -> u64 {
        self.rtt_us8
    }

    /// `tcp_rcv_rtt_measure_ts()`: a segment echoing `tsecr` arrived at `now`; only
    /// segments of at least the receiver's MSS estimate are timed, and a sample of 0 ms
    /// (the option's resolution) is none.
    pub fn on_segment(&mut self, now: Nanos, tsecr: u32, full_segment: bool) {
        if tsecr == 0 || tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = tsecr;
        if !full_segment {
            return;
        }
        let delta_ms = crate::packet::ts_clock_ms(now).wrapping_sub(tsecr);
        // A TSecr from the future (a wrapped or bogus clock) is no sample.
        if delta_ms > 0 && delta_ms < i32::MAX as u32 {
            self.update(delta_ms as u64 * 1000);
        }
    }

    /// `tcp_rcv_rtt_measure()`, for each segment in order: `rcv_nxt` after it and the
    /// window last advertised, segments. Its samples only ever lower the estimate
    /// (`tcp_rcv_rtt_update()` with `win_dep`), since a sender that does not fill the
    /// window makes them too long.
    pub fn on_in_order(&mut self, now: Nanos, rcv_nxt: u64, rcv_wnd: u64) {
        if let Some(since) = self.window_since {
            if rcv_nxt < self.window_end {
                return;
            }
            let m = ((now - since) / 1000).max(1) << 3;
            if self.rtt_us8 == 0 || m < self.rtt_us8 {
                self.rtt_us8 = m;
            }
        }
        self.window_end = rcv_nxt + rcv_wnd;
        self.window_since = Some(now);
    }

    /// `tcp_rcv_rtt_update()` for a timestamp sample (`win_dep` 0): a lower sample is
    /// taken as it is, a higher one with a gain of 1/8.
    fn update(&mut self, sample_us: u64) {
        let m = sample_us << 3;
        self.rtt_us8 = if self.rtt_us8 == 0 || m < self.rtt_us8 {
            m
        } else {
            self.rtt_us8 - (self.rtt_us8 >> 3) + sample_us
        };
    }
}

/// One socket's side of autotuning: a TCP connection's, or one MPTCP subflow's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocketWindow {
    /// `tp->rcv_ssthresh`, bytes.
    pub rcv_ssthresh: u64,
    /// `tp->window_clamp`, bytes: the largest window it will advertise.
    pub window_clamp: u64,
    /// `sk_rcvbuf`, bytes.
    pub rcvbuf: u64,
    /// `tp->scaling_ratio`, out of 256.
    pub scaling_ratio: u64,
    /// `tp->rcvq_space.space`: the most read in one receiver RTT so far, bytes.
    pub space: u64,
    pub rtt: RcvRtt,
    max_bytes: u64,
}

impl SocketWindow {
    /// The state once the handshake completes: `tcp_openreq_init_rwin()` then
    /// `tcp_init_buffer_space()` on a buffer of `tcp_rmem[1]`.
    pub fn established(max_bytes: u64) -> Self {
        let mss = MSS as u64;
        let rcv_wnd = initial_rcv_wnd();
        let maxwin = win_from_space(DEFAULT_SCALING_RATIO, RMEM_DEFAULT);
        // `tcp_app_win`'s reservation of one segment.
        let window_clamp = (maxwin - mss).max(2 * mss);
        let rcv_ssthresh = rcv_wnd.min(window_clamp);
        SocketWindow {
            rcv_ssthresh,
            window_clamp,
            rcvbuf: RMEM_DEFAULT,
            scaling_ratio: DEFAULT_SCALING_RATIO,
            space: rcv_ssthresh.min(rcv_wnd).min(INIT_CWND * mss),
            rtt: RcvRtt::default(),
            max_bytes,
        }
    }

    /// The payload its whole buffer holds, bytes (`tcp_full_space()`).
    pub fn payload_room(&self) -> u64 {
        win_from_space(self.scaling_ratio, self.rcvbuf)
    }

    /// `tcp_measure_rcv_mss()` on a full segment: the first one measures the buffer's
    /// payload share, and the clamp follows (`tcp_set_window_clamp()`); `rcv_wnd` is the
    /// window last advertised, bytes.
    pub fn on_full_segment(&mut self, rcv_wnd: u64) {
        if self.scaling_ratio == SEGMENT_SCALING_RATIO {
            return;
        }
        self.scaling_ratio = SEGMENT_SCALING_RATIO;
        self.set_window_clamp(self.payload_room(), rcv_wnd);
        self.space = self.space.min(self.window_clamp);
    }

    /// `tcp_set_window_clamp()`.
    fn set_window_clamp(&mut self, clamp: u64, rcv_wnd: u64) {
        // SOCK_MIN_RCVBUF / 2.
        let clamp = clamp.max(1152);
        if clamp < self.window_clamp {
            self.rcv_ssthresh = self.rcv_ssthresh.min(clamp);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(rcv_wnd.min(clamp));
        }
        self.window_clamp = clamp;
    }

    /// `tcp_grow_window()` for a segment of `len` payload bytes, with `free` bytes of the
    /// socket's buffer free (`tcp_space()`). True if `rcv_ssthresh` grew: the caller owes
    /// one quick ACK. (In-order segments under 128 bytes do not get here:
    /// `tcp_event_data_recv()`.)
    ///
    /// The growth is two segments, as for any segment whose payload is its buffer share
    /// or more (`tcp_win_from_space(truesize) <= len`, which holds for every segment once
    /// the share is measured from segments of the same size).
    pub fn grow(&mut self, len: u64, free: u64) -> bool {
        let room = self
            .window_clamp
            .min(free)
            .saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        let incr = (2 * MSS as u64).max(2 * len);
        self.rcv_ssthresh += room.min(incr);
        true
    }

    /// `tcp_rcvbuf_grow()`: the application read `copied` bytes in the last receiver RTT
    /// (`newval`), `ooo_span` bytes lie out of order beyond what was read. Grows the
    /// buffer and the clamp; never shrinks them.
    pub fn rcvbuf_grow(&mut self, copied: u64, ooo_span: u64) {
        let old = self.space.max(1);
        self.space = copied;
        let rcvwin = drs_window(copied, old, self.rtt.rtt_us8() >> 3) + ooo_span;
        let rcvbuf = space_from_win(self.scaling_ratio, rcvwin).min(self.max_bytes);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = self.payload_room();
        }
    }

    /// `__tcp_select_window()`: the window to advertise, bytes, given the free and the
    /// total payload room of the buffer the window is about (the connection's, for an
    /// MPTCP subflow: `mptcp_space()`). `None` when the free space is under half of what
    /// it could be, which also ends quick-ACK mode (`icsk_ack.quick = 0`), with the
    /// window itself in the `Err`.
    pub fn select(&self, free: u64, allowed: u64) -> Result<u64, u64> {
        let full = self.window_clamp.min(allowed);
        let mss = (MSS as u64).min(full);
        if free < full / 2 {
            // Rather a zero window than one the buffer cannot back.
            if free < allowed / 16 || free < mss {
                return Err(0);
            }
            return Err(free.min(self.rcv_ssthresh));
        }
        Ok(free.min(self.rcv_ssthresh))
    }
}

/// Dynamic Right-Sizing's window (`tcp_rcvbuf_grow()`, `mptcp_rcvbuf_grow()`): twice the
/// bytes read in the last receiver RTT ("DRS is always one RTT late"), plus twice that
/// again scaled by how much the reading grew since the last measure (room for a sender in
/// slow start), or, under `tcp_rcvbuf_low_rtt`, in proportion to the RTT.
fn drs_window(copied: u64, old: u64, rtt_us: u64) -> u64 {
    let rcvwin = copied << 1;
    let grow = if rtt_us < RCVBUF_LOW_RTT_US {
        rcvwin * rtt_us / RCVBUF_LOW_RTT_US
    } else {
        (rcvwin << 1) * copied.saturating_sub(old) / old
    };
    rcvwin + grow
}

/// The connection's side of autotuning for MPTCP (`msk->rcvq_space`, the msk's
/// `sk_rcvbuf`), and the measure both TCP and MPTCP take after each read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionBuffer {
    /// `sk_rcvbuf` of the connection, bytes.
    pub rcvbuf: u64,
    /// The smallest of its subflows' `scaling_ratio`.
    pub scaling_ratio: u64,
    /// The most read in one measure so far (MPTCP's `rcvq_space.space`).
    space: u64,
    /// Bytes read since the measure began, and when it began.
    copied: u64,
    since: Nanos,
    /// The receiver RTT the measure waits for (MPTCP: the largest of its subflows').
    rtt_us8: u64,
    max_bytes: u64,
}

/// What a read's measure concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Less than a receiver RTT since the measure began, or no RTT yet.
    Waiting,
    /// A measure ended without a new high: a new one begins.
    Restarted,
    /// The application read `copied` bytes in the last RTT, more than ever before: the
    /// buffers grow.
    Grew { copied: u64 },
}

impl ConnectionBuffer {
    /// At the first subflow's establishment, at `now` (`mptcp_rcv_space_init()`).
    pub fn new(max_bytes: u64, now: Nanos) -> Self {
        ConnectionBuffer {
            rcvbuf: RMEM_DEFAULT,
            scaling_ratio: DEFAULT_SCALING_RATIO,
            space: initial_rcv_wnd().min(INIT_CWND * MSS as u64),
            copied: 0,
            since: now,
            rtt_us8: 0,
            max_bytes,
        }
    }

    /// `tcp_rcv_space_adjust()`: the application read `copied` bytes at `now`; the
    /// measure ends once the socket's receiver RTT (`rtt_us8`) has passed since it began.
    /// `space` is the socket's record so far.
    pub fn on_read(&mut self, now: Nanos, copied: u64, rtt_us8: u64, space: u64) -> Measure {
        self.copied += copied;
        self.rtt_us8 = rtt_us8;
        self.conclude(now, space)
    }

    /// `mptcp_rcv_space_adjust()`: as `on_read`, over the largest of the subflows'
    /// receiver RTTs (`subflows_rtt_us8`), which MPTCP reads again only once the one it
    /// read last has passed.
    pub fn on_read_mptcp(
        &mut self,
        now: Nanos,
        copied: u64,
        subflows_rtt_us8: impl FnOnce() -> u64,
    ) -> Measure {
        self.copied += copied;
        let elapsed_us = (now - self.since) / 1000;
        if self.rtt_us8 != 0 && elapsed_us < self.rtt_us8 >> 3 {
            return Measure::Waiting;
        }
        self.rtt_us8 = subflows_rtt_us8();
        self.conclude(now, self.space)
    }

    /// Ends the measure if a receiver RTT has passed: a new high of bytes read, or not.
    fn conclude(&mut self, now: Nanos, space: u64) -> Measure {
        let elapsed_us = (now - self.since) / 1000;
        if self.rtt_us8 == 0 || elapsed_us < self.rtt_us8 >> 3 {
            return Measure::Waiting;
        }
        let read = self.copied;
        self.copied = 0;
        self.since = now;
        if read <= space {
            Measure::Restarted
        } else {
            Measure::Grew { copied: read }
        }
    }

    /// MPTCP's record of the most read in one measure.
    pub fn space(&self) -> u64 {
        self.space
    }

    /// `mptcp_rcvbuf_grow()`: true if the connection's buffer grew (its subflows then
    /// follow with `tcp_rcvbuf_grow()`).
    pub fn grow(&mut self, copied: u64) -> bool {
        let old = self.space.max(1);
        self.space = copied;
        // MPTCP grows as TCP does above the low-RTT threshold, whatever the RTT.
        let rcvwin = drs_window(copied, old, RCVBUF_LOW_RTT_US);
        let rcvbuf = space_from_win(self.scaling_ratio, rcvwin).min(self.max_bytes);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            return true;
        }
        false
    }

    /// The payload the whole buffer holds, bytes (`mptcp_win_from_space(sk_rcvbuf)`).
    pub fn payload_room(&self) -> u64 {
        win_from_space(self.scaling_ratio, self.rcvbuf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const SEG: u64 = MSS as u64;

    #[test]
    fn a_new_socket_offers_about_64_kb_and_reserves_a_segment() {
        // 131072 / 2 = 65536, rounded down to 44 segments of 1460; the clamp leaves one
        // segment of 65536 for the application.
        let w = SocketWindow::established(RMEM_MAX);
        assert_eq!(initial_rcv_wnd(), 44 * SEG);
        assert_eq!(w.window_clamp, 65536 - SEG);
        assert_eq!(w.rcv_ssthresh, 65536 - SEG);
        assert_eq!(w.space, 10 * SEG);
    }

    #[test]
    fn each_segment_raises_rcv_ssthresh_by_two_segments_up_to_the_clamp() {
        let mut w = SocketWindow::established(RMEM_MAX);
        w.on_full_segment(44 * SEG);
        // 131072 * 158 / 256 = 80896.
        assert_eq!(w.window_clamp, 80896);
        let start = w.rcv_ssthresh;
        assert!(w.grow(SEG, u64::MAX));
        assert_eq!(w.rcv_ssthresh, start + 2 * SEG);
        while w.grow(SEG, u64::MAX) {}
        assert_eq!(w.rcv_ssthresh, 80896);
        assert!(!w.grow(SEG, u64::MAX), "no room: no quick ACK");
        let mut w = SocketWindow::established(RMEM_MAX);
        assert!(!w.grow(SEG, w.rcv_ssthresh), "none when the buffer is full");
    }

    #[test]
    fn drs_doubles_what_was_read_and_leaves_room_for_slow_start() {
        let mut w = SocketWindow::established(RMEM_MAX);
        w.on_full_segment(44 * SEG);
        w.rtt.update(20_000);
        // Read 20 segments in an RTT after 10: rcvwin = 2 * 20 + 4 * 20 * (20 - 10) / 10.
        w.rcvbuf_grow(20 * SEG, 0);
        let rcvwin = 40 * SEG + 80 * SEG;
        assert_eq!(w.rcvbuf, space_from_win(SEGMENT_SCALING_RATIO, rcvwin));
        assert_eq!(
            w.window_clamp,
            win_from_space(SEGMENT_SCALING_RATIO, w.rcvbuf)
        );
        // Never beyond tcp_rmem[2], never smaller.
        w.rcvbuf_grow(100 << 20, 0);
        assert_eq!(w.rcvbuf, RMEM_MAX);
        w.rcvbuf_grow(SEG, 0);
        assert_eq!(w.rcvbuf, RMEM_MAX);
    }

    #[test]
    fn the_receiver_rtt_drops_at_once_and_rises_by_an_eighth() {
        let mut r = RcvRtt::default();
        let at = |ms: u64| ms * MS + 500_000;
        r.on_segment(at(130), 100, true);
        assert_eq!(r.rtt_us8(), 30_000 << 3);
        r.on_segment(at(150), 100, true);
        assert_eq!(r.rtt_us8(), 30_000 << 3, "one sample per TSecr");
        r.on_segment(at(150), 130, true);
        assert_eq!(r.rtt_us8(), 20_000 << 3);
        // An idle subflow's next segment echoes an ACK of a second ago.
        r.on_segment(at(1150), 150, true);
        assert_eq!(r.rtt_us8(), (20_000 << 3) - (20_000 << 3 >> 3) + 1_000_000);
        r.on_segment(at(1150), 1150, true);
        assert_eq!(r.rtt_us8(), (20_000 << 3) - (20_000 << 3 >> 3) + 1_000_000);
        r.on_segment(at(1200), 1160, false);
        assert_eq!(r.rtt_us8(), (20_000 << 3) - (20_000 << 3 >> 3) + 1_000_000);
        // A window of 10 segments took 15 ms: lower, taken.
        r.on_in_order(2000 * MS, 100, 10);
        r.on_in_order(2010 * MS, 109, 10);
        assert_eq!(r.rtt_us8(), (20_000 << 3) - (20_000 << 3 >> 3) + 1_000_000);
        r.on_in_order(2015 * MS, 110, 10);
        assert_eq!(r.rtt_us8(), 15_000 << 3);
        // The next window took 40 ms: higher, not taken.
        r.on_in_order(2055 * MS, 120, 10);
        assert_eq!(r.rtt_us8(), 15_000 << 3);
    }

    #[test]
    fn a_measure_ends_after_one_receiver_rtt() {
        let mut b = ConnectionBuffer::new(RMEM_MAX, 0);
        let space = 10 * SEG;
        assert_eq!(
            b.on_read(MS, 5 * SEG, 0, space),
            Measure::Waiting,
            "no RTT yet"
        );
        let rtt = 10_000 << 3;
        assert_eq!(b.on_read(5 * MS, 5 * SEG, rtt, space), Measure::Waiting);
        assert_eq!(
            b.on_read(11 * MS, 20 * SEG, rtt, space),
            Measure::Grew { copied: 30 * SEG }
        );
        assert_eq!(b.on_read(22 * MS, 5 * SEG, rtt, space), Measure::Restarted);
    }

    #[test]
    fn mptcp_measures_over_the_rtt_it_read_last() {
        let mut b = ConnectionBuffer::new(RMEM_MAX, 0);
        assert_eq!(
            b.on_read_mptcp(11 * MS, 30 * SEG, || 10_000 << 3),
            Measure::Grew { copied: 30 * SEG }
        );
        assert!(b.grow(30 * SEG));
        assert_eq!(b.space(), 30 * SEG);
        // The subflows' RTT fell to 2 ms, but MPTCP waits out the 10 ms it read last.
        let read_again = std::cell::Cell::new(false);
        let rtt = || {
            read_again.set(true);
            2_000 << 3
        };
        assert_eq!(b.on_read_mptcp(15 * MS, 40 * SEG, rtt), Measure::Waiting);
        assert!(!read_again.get());
        assert_eq!(
            b.on_read_mptcp(21 * MS, 0, || 2_000 << 3),
            Measure::Grew { copied: 40 * SEG }
        );
    }

    #[test]
    fn the_window_is_at_most_rcv_ssthresh_and_zero_when_the_buffer_is_nearly_full() {
        let w = SocketWindow::established(RMEM_MAX);
        assert_eq!(w.select(1 << 20, 1 << 20), Ok(w.rcv_ssthresh));
        assert_eq!(w.select(20_000, 65536), Err(20_000));
        assert_eq!(w.select(1000, 65536), Err(0));
    }
}
