//! The end that accepts subflows and receives: each subflow's receiver (reassembly, SACK,
//! delayed ACKs), and the data level's reassembly into one shared receive buffer.
//!
//! The application reads in-order data as it arrives, and each read may release ACKs
//! that subflows hold: Linux's `tcp_recvmsg()` ends with `__tcp_cleanup_rbuf()`
//! (net/ipv4/tcp.c), MPTCP's `mptcp_recvmsg()` with `mptcp_cleanup_rbuf()`
//! (net/mptcp/protocol.c), which runs it on each subflow that
//! `mptcp_subflow_could_cleanup()` picks, or on all when the read doubled the space last
//! advertised. See `acknowledge_after_read`.
//!
//! With an autotuned buffer (`ReceiveBuffer::Autotuned`) the window follows Linux's
//! `rcv_ssthresh` and the buffer grows by Dynamic Right-Sizing (`tcp::receive_window`):
//! each subflow has its own `rcv_ssthresh`, clamp and buffer, an MPTCP connection its own
//! buffer (`mptcp_rcv_space_adjust()`), and the right edge of the window never moves back
//! (`tcp_select_window()`; MPTCP: `mptcp_set_rwin()` shares the largest edge any subflow
//! advertised).

use super::timers::{Timer, TimerTable};
use super::{ConnConfig, Path};
use crate::ids::{ConnId, SubflowId};
use crate::mptcp::DataReceiver;
use crate::packet::{HEADER_BYTES, Kind, MSS, Packet, Transmit, ts_clock_ms};
use crate::tcp::Receiver;
use crate::tcp::receive_window::{ConnectionBuffer, Measure, ReceiveBuffer, SocketWindow};
use crate::tcp::receiver::DELACK_TIMEOUT;
use crate::tcp::receiver::{DataResult, Segment};
use net::Nanos;
use std::collections::VecDeque;

/// What the receiving application and the measurements learn from a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerEvent {
    /// Payload bytes that arrived on a subflow for the first time (not a duplicate of that
    /// subflow; possibly a duplicate at the data level).
    Received { subflow: SubflowId, bytes: u64 },
    /// Payload bytes newly delivered in order to the application.
    Delivered { bytes: u64 },
}

/// One subflow as the server knows it: its routes, the TSval of its SYN, and its receiver
/// once the SYN arrived. Together, since a segment on the subflow reads them all.
struct ServerSubflow {
    path: Path,
    syn_ts: u64,
    /// When its SYN arrived, until the handshake's RTT is taken.
    syn_at: Option<Nanos>,
    /// The window its last ACK advertised, segments (`tp->rcv_wnd`), and its `rcv_nxt`
    /// then (`tp->rcv_wup`).
    advertised: u32,
    rcv_wup: u64,
    rx: Option<Receiver>,
    /// Its `rcv_ssthresh`, clamp and buffer, with an autotuned buffer, once established.
    window: Option<SocketWindow>,
}

pub struct Server {
    id: ConnId,
    mptcp: bool,
    delayed_ack: bool,
    sack: bool,
    subflows: Vec<ServerSubflow>,
    data: DataReceiver,
    buffer: ReceiveBuffer,
    /// With an autotuned buffer, once the first subflow is established: the connection's
    /// buffer and read measure.
    autotune: Option<ConnectionBuffer>,
    /// With an autotuned buffer: the right edge of the window advertised so far, data
    /// segments (MPTCP's `msk->rcv_wnd_sent`; TCP's `rcv_wup + rcv_wnd`).
    right_edge: u64,
    /// The window the last ACK on any subflow advertised (MPTCP's `msk->old_wspace`).
    advertised: u32,
    /// The data sequence number and size of a segment shorter than the MSS: the last of
    /// a finite transfer.
    short_segment: Option<(u64, u64)>,
    delivered_bytes: u64,
    timers: TimerTable,
    /// Subflows owed a SYN-ACK (with the TSval to echo) or an ACK, a bit each: the packets
    /// are made when polled, from the state then.
    syn_ack_due: u32,
    ack_due: u32,
    events: Events,
}

impl Server {
    /// The path subflow `k` takes (`None` past the connection's paths).
    pub fn path(&self, k: usize) -> Option<Path> {
        self.subflows.get(k).map(|sf| sf.path)
    }

    /// Listens for the connection's subflows over `paths` (ACKs go back on `rev`).
    pub fn new(id: ConnId, cfg: &ConnConfig, paths: &[Path]) -> Self {
        Server {
            id,
            mptcp: cfg.mptcp,
            delayed_ack: cfg.delayed_ack,
            sack: cfg.sack,
            subflows: paths
                .iter()
                .map(|&path| ServerSubflow {
                    path,
                    syn_ts: 0,
                    syn_at: None,
                    advertised: 0,
                    rcv_wup: 0,
                    rx: None,
                    window: None,
                })
                .collect(),
            data: DataReceiver::new(cfg.rcv_buffer.initial_window_segs()),
            buffer: cfg.rcv_buffer,
            autotune: None,
            right_edge: 0,
            advertised: 0,
            short_segment: None,
            delivered_bytes: 0,
            timers: TimerTable::default(),
            syn_ack_due: 0,
            ack_due: 0,
            events: Events::default(),
        }
    }

    pub fn handle_packet(&mut self, now: Nanos, pkt: &Packet) {
        let s = pkt.subflow.index();
        if s >= self.subflows.len() {
            return;
        }
        match pkt.kind {
            Kind::Syn => {
                let sf = &mut self.subflows[s];
                if sf.rx.is_none() {
                    sf.rx = Some(Receiver::new(self.delayed_ack, self.sack));
                }
                // A retransmitted SYN gets the SYN-ACK again, and the RTT is timed from it.
                self.syn_ack_due |= 1 << s;
                sf.syn_ts = pkt.ts;
                sf.syn_at = Some(now);
            }
            Kind::JoinAck if self.subflows[s].rx.is_some() => {
                self.complete_handshake(now, s);
                self.send_ack(s);
            }
            Kind::Data { push } if self.subflows[s].rx.is_some() => {
                self.complete_handshake(now, s);
                self.on_data(now, s, pkt, push);
            }
            _ => {}
        }
    }

    /// Sends the delayed ACKs due by `now`.
    pub fn handle_timeout(&mut self, now: Nanos) {
        // The server arms only its subflows' delayed-ACK timers.
        while let Some(Timer::Subflow(s)) = self.timers.take_expired(now) {
            self.send_ack(s);
        }
    }

    /// The next packet to send: SYN-ACKs, then ACKs, lowest subflow first; `now` stamps
    /// their TSval.
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Transmit> {
        if self.syn_ack_due != 0 {
            let s = self.syn_ack_due.trailing_zeros() as usize;
            self.syn_ack_due &= !(1 << s);
            let window = self.data.window();
            let sf = &mut self.subflows[s];
            sf.advertised = window;
            self.advertised = window;
            let mut syn_ack = Packet::control(self.id, SubflowId(s as u8), Kind::SynAck);
            syn_ack.ts = sf.syn_ts;
            syn_ack.ack_tsval_ms = ts_clock_ms(now);
            let route = sf.path.rev;
            return Some(Transmit {
                route,
                packet: syn_ack,
            });
        }
        while self.ack_due != 0 {
            let s = self.ack_due.trailing_zeros() as usize;
            self.ack_due &= !(1 << s);
            if let Some(ack) = self.make_ack(s, now) {
                let route = self.subflows[s].path.rev;
                return Some(Transmit { route, packet: ack });
            }
        }
        None
    }

    /// Starts loading the state a segment on subflow `s` reads (see `World::prefetch_pipe`).
    #[inline]
    pub fn prefetch(&self, s: usize) {
        // The place, not what is in it: reading it would wait for the very load asked for.
        if let Some(sf) = self.subflows.get(s) {
            net::prefetch_lines(sf);
        }
    }

    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.timers.next()
    }

    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    /// What the connection's receivers sent and received so far, over its subflows.
    pub fn receiver_segments(&self) -> measure::ReceiverSegments {
        let mut counts = measure::ReceiverSegments::default();
        for rx in self.subflows.iter().filter_map(|sf| sf.rx.as_ref()) {
            counts += measure::ReceiverSegments {
                sent: rx.acks_out,
                data_received: rx.data_segments_in,
            };
        }
        counts
    }

    /// Payload bytes delivered in order to the application so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }

    /// Subflow `k`'s `rcv_ssthresh` and `window_clamp`, bytes, with an autotuned buffer
    /// once the subflow is established.
    pub fn receive_window(&self, k: usize) -> Option<(u64, u64)> {
        let w = self.subflows.get(k)?.window?;
        Some((w.rcv_ssthresh, w.window_clamp))
    }

    /// The advertised window: free space in the shared buffer, segments.
    pub fn window(&self) -> u32 {
        self.data.window()
    }

    /// The first segment after the SYN-ACK (an MP_JOIN's third ACK, or data) gives the
    /// receiver its RTT sample (`tcp_synack_rtt_meas()`).
    fn complete_handshake(&mut self, now: Nanos, s: usize) {
        let sf = &mut self.subflows[s];
        if let (Some(at), Some(rx)) = (sf.syn_at.take(), sf.rx.as_mut()) {
            rx.on_handshake_rtt(now - at);
            // Once: a SYN received again on an established subflow changes nothing.
            if let (ReceiveBuffer::Autotuned { max_bytes }, None) = (self.buffer, sf.window) {
                sf.window = Some(SocketWindow::established(max_bytes));
                self.autotune
                    .get_or_insert_with(|| ConnectionBuffer::new(max_bytes, now));
            }
        }
    }

    fn on_data(&mut self, now: Nanos, s: usize, pkt: &Packet, push: bool) {
        let bytes = pkt.payload();
        let segment = Segment {
            seq: pkt.seq,
            ts: pkt.ts,
            push: push || bytes < MSS as u64,
        };
        let window = self.data.window() as u64;
        let sf = &mut self.subflows[s];
        let rx = sf.rx.as_mut().expect("checked by the caller");
        let mut res = rx.on_data(segment, now, window);
        if sf.window.is_some() {
            self.grow_window(now, s, pkt, &mut res);
        }
        // The subflow's own check runs first (`__tcp_ack_snd_check()` as the segment is
        // processed); the application reads after it.
        if res.ack_now {
            self.send_ack(s);
        } else {
            self.timers.arm(s, now + DELACK_TIMEOUT);
        }
        // Segments go up to the data level as they arrive: out-of-order data of a subflow
        // takes buffer space either way.
        if res.fresh {
            self.events.push_back(ServerEvent::Received {
                subflow: pkt.subflow,
                bytes,
            });
            if bytes < MSS as u64 {
                self.short_segment = Some((pkt.dsn, bytes));
            }
            if self.data.on_data(pkt.dsn) > 0 {
                let in_order = self.bytes_before(self.data.rcv_nxt);
                self.events.push_back(ServerEvent::Delivered {
                    bytes: in_order - self.delivered_bytes,
                });
                let read = in_order - self.delivered_bytes;
                self.delivered_bytes = in_order;
                self.adjust_buffer(now, read);
                self.acknowledge_after_read();
            }
        }
    }

    /// What a data segment on subflow `s` does to its receive window, with an autotuned
    /// buffer: the receiver's RTT measures, the payload share (`tcp_measure_rcv_mss()`),
    /// `tcp_grow_window()` (an ACK at once if it grew) and, for data held out of order,
    /// `tcp_rcvbuf_grow()` at the end of `tcp_data_queue_ofo()`.
    fn grow_window(&mut self, now: Nanos, s: usize, pkt: &Packet, res: &mut DataResult) {
        let (bytes, mss) = (pkt.payload(), MSS as u64);
        let sf = &mut self.subflows[s];
        let (Some(w), Some(rx)) = (sf.window.as_mut(), sf.rx.as_mut()) else {
            return;
        };
        w.rtt.on_segment(now, pkt.ack_tsval_ms, bytes >= mss);
        let in_order = res.delivered > 0;
        if !in_order && !res.fresh {
            return; // a duplicate
        }
        if bytes >= mss {
            w.on_full_segment(sf.advertised as u64 * mss);
        }
        if in_order {
            w.rtt.on_in_order(now, rx.rcv_nxt, sf.advertised as u64);
        }
        // `tcp_space()`: a TCP connection's buffer; an MPTCP subflow's own, which keeps
        // only what it holds out of order (in-order data moves on to the connection). An
        // in-order segment is in it when the window grows; one out of order is queued
        // after (`skb_set_owner_r()`), and the receiver already counts it.
        let free = if self.mptcp {
            let held = if in_order {
                rx.ooo_segments() + 1
            } else {
                rx.ooo_segments().saturating_sub(1)
            };
            w.payload_room().saturating_sub(held * mss)
        } else {
            let free = self.data.window() as u64 * mss;
            if in_order {
                free.saturating_sub(mss)
            } else {
                free
            }
        };
        // In order, segments of 128 bytes or more (`tcp_event_data_recv()`); out of order,
        // with SACK only ("to force DUPACK" without).
        let grows = if in_order { bytes >= 128 } else { self.sack };
        if grows && w.grow(bytes, free) {
            rx.quickack_for_growth();
            res.ack_now = true;
        }
        if !in_order {
            let space = w.space;
            w.rcvbuf_grow(space, rx.ooo_span() * mss);
            if !self.mptcp {
                self.data.buffer_segs = w.payload_room() / mss;
            }
        }
    }

    /// The application has read new data: the ACKs Linux sends then.
    ///
    /// A plain TCP socket runs `__tcp_cleanup_rbuf()`: its held ACK goes if more than one
    /// full segment is unacknowledged, or if a pushed segment is and the read emptied the
    /// buffer; and an ACK goes if the window it can advertise now is at least twice what
    /// is left of the last one. MPTCP's `mptcp_cleanup_rbuf()` runs the same on every
    /// subflow if the connection's space is at least twice the window last advertised on
    /// any subflow, otherwise only on subflows whose held ACK is due by the first rule,
    /// the buffer being the connection's. The subflow's own buffer is empty after a read
    /// unless it holds data out of order.
    fn acknowledge_after_read(&mut self) {
        let space = self.data.window();
        let connection_empty = !self.data.holds_data();
        let space_doubled = space > 0 && space >= self.advertised.saturating_mul(2);
        for j in 0..self.subflows.len() {
            let sf = &self.subflows[j];
            let Some(rx) = sf.rx.as_ref() else {
                continue;
            };
            let visited = !self.mptcp || space_doubled || rx.ack_due_after_read(connection_empty);
            if !visited {
                continue;
            }
            let left = sf.advertised.saturating_sub(rx.pending_segments());
            let (new_window, clamp) = match sf.window {
                Some(w) => (
                    self.selected_window(&w).unwrap_or_else(|w| w) / MSS as u64,
                    w.window_clamp / MSS as u64,
                ),
                None => (space as u64, self.data.buffer_segs),
            };
            let window_opens =
                new_window > 0 && 2 * left as u64 <= clamp && new_window >= 2 * left as u64;
            if rx.ack_due_after_read(rx.ooo_segments() == 0) || window_opens {
                self.send_ack(j);
            }
        }
    }

    /// Payload bytes in data segments `[0, dsn)`: full segments but for a short last one.
    fn bytes_before(&self, dsn: u64) -> u64 {
        match self.short_segment {
            Some((last, bytes)) if last < dsn => last * MSS as u64 + bytes,
            _ => dsn * MSS as u64,
        }
    }

    /// Owes subflow `s` an ACK now (its delayed-ACK timer stops).
    fn send_ack(&mut self, s: usize) {
        self.timers.stop(s);
        self.ack_due |= 1 << s;
    }

    /// `__tcp_select_window()` for a subflow with `window`: bytes (see
    /// `SocketWindow::select`), against the connection's buffer.
    fn selected_window(&self, window: &SocketWindow) -> Result<u64, u64> {
        let mss = MSS as u64;
        window.select(self.data.window() as u64 * mss, self.data.buffer_segs * mss)
    }

    /// The window subflow `s` advertises now, segments beyond the data-level ACK.
    ///
    /// With an autotuned buffer, `tcp_select_window()`: never less than what is left of
    /// the subflow's last window, counted in its own sequence space; then MPTCP's
    /// `mptcp_set_rwin()`: the connection's right edge is the furthest any subflow
    /// advertised, and a subflow whose own edge falls short advertises that one (and
    /// takes it as its window). So a subflow's window slides with the data the others
    /// deliver, beyond the free space. For TCP both rules are the same.
    fn advertise(&mut self, s: usize) -> u32 {
        let Some(w) = self.subflows[s].window else {
            return self.data.window();
        };
        let selected = match self.selected_window(&w) {
            Ok(bytes) => bytes,
            Err(bytes) => {
                if let Some(rx) = self.subflows[s].rx.as_mut() {
                    rx.end_quickacks();
                }
                bytes
            }
        } / MSS as u64;
        let sf = &mut self.subflows[s];
        let rcv_nxt = sf.rx.as_ref().map_or(0, |rx| rx.rcv_nxt);
        let left = (sf.rcv_wup + sf.advertised as u64).saturating_sub(rcv_nxt);
        sf.rcv_wup = rcv_nxt;
        let edge = self.data.rcv_nxt + selected.max(left);
        self.right_edge = self.right_edge.max(edge);
        (self.right_edge - self.data.rcv_nxt).min(u32::MAX as u64) as u32
    }

    /// The application read `read` bytes at `now`: Dynamic Right-Sizing's measure
    /// (`tcp_rcv_space_adjust()`; MPTCP: `mptcp_rcv_space_adjust()`, over the largest of
    /// the subflows' receiver RTTs, and each subflow's buffer following the connection's).
    fn adjust_buffer(&mut self, now: Nanos, read: u64) {
        let Some(conn) = self.autotune.as_mut() else {
            return;
        };
        if !self.mptcp {
            let sf = &mut self.subflows[0];
            let (Some(w), Some(rx)) = (sf.window.as_mut(), sf.rx.as_ref()) else {
                return;
            };
            if let Measure::Grew { copied } = conn.on_read(now, read, w.rtt.rtt_us8(), w.space) {
                w.rcvbuf_grow(copied, rx.ooo_span() * MSS as u64);
            }
            self.data.buffer_segs = w.payload_room() / MSS as u64;
            return;
        }
        let subflows = &self.subflows;
        let measure = conn.on_read_mptcp(now, read, || {
            subflows
                .iter()
                .filter_map(|sf| sf.window.map(|w| w.rtt.rtt_us8()))
                .max()
                .unwrap_or(0)
        });
        if let Some(ratio) = self
            .subflows
            .iter()
            .filter_map(|sf| sf.window.map(|w| w.scaling_ratio))
            .min()
        {
            conn.scaling_ratio = ratio;
        }
        if let Measure::Grew { copied } = measure
            && conn.grow(copied)
        {
            for sf in &mut self.subflows {
                if let (Some(w), Some(rx)) = (sf.window.as_mut(), sf.rx.as_ref()) {
                    w.rcvbuf_grow(copied, rx.ooo_span() * MSS as u64);
                }
            }
        }
        self.data.buffer_segs = conn.payload_room() / MSS as u64;
    }

    fn make_ack(&mut self, s: usize, now: Nanos) -> Option<Packet> {
        let (data_ack, rwnd) = (self.data.rcv_nxt, self.advertise(s));
        let sf = &mut self.subflows[s];
        sf.advertised = rwnd;
        self.advertised = rwnd;
        let (ack, tsecr, sack) = sf.rx.as_mut()?.make_ack();
        let blocks = sack.iter().filter(|b| b.1 > b.0).count() as u16;
        Some(Packet {
            seq: ack,
            dsn: data_ack,
            ts: tsecr,
            rwnd,
            sack,
            ack_tsval_ms: ts_clock_ms(now),
            wire_bytes: HEADER_BYTES + if blocks > 0 { 4 + 8 * blocks } else { 0 },
            ..Packet::control(self.id, SubflowId(s as u8), Kind::Ack)
        })
    }
}

/// The events not yet polled, in order. A driver that polls after every packet finds at
/// most two (a segment's `Received` and `Delivered`): those are kept inline, in the server
/// itself, where a queue on the heap was one more cache miss per segment at thousands of
/// connections. More wait in `overflow`, for a driver that lets them pile up.
#[derive(Default)]
struct Events {
    inline: [Option<ServerEvent>; 2],
    overflow: VecDeque<ServerEvent>,
}

impl Events {
    fn push_back(&mut self, ev: ServerEvent) {
        // Inline only while nothing overflowed: every inline event is older than those.
        let free = self.inline.iter_mut().find(|e| e.is_none());
        match free {
            Some(slot) if self.overflow.is_empty() => *slot = Some(ev),
            _ => self.overflow.push_back(ev),
        }
    }

    fn pop_front(&mut self) -> Option<ServerEvent> {
        match self.inline[0].take() {
            Some(ev) => {
                self.inline[0] = self.inline[1].take();
                Some(ev)
            }
            None => self.overflow.pop_front(),
        }
    }
}
