//! The end that accepts subflows and receives: each subflow's receiver (reassembly, SACK,
//! delayed ACKs), and the data level's reassembly into one shared receive buffer.
//!
//! The application reads in-order data as it arrives, and each read may release ACKs
//! that subflows hold: Linux's `tcp_recvmsg()` ends with `__tcp_cleanup_rbuf()`
//! (net/ipv4/tcp.c), MPTCP's `mptcp_recvmsg()` with `mptcp_cleanup_rbuf()`
//! (net/mptcp/protocol.c), which runs it on each subflow that
//! `mptcp_subflow_could_cleanup()` picks, or on all when the read doubled the space last
//! advertised. See `acknowledge_after_read`.

use super::timers::{Timer, TimerTable};
use super::{ConnConfig, Path};
use crate::ids::{ConnId, SubflowId};
use crate::mptcp::DataReceiver;
use crate::packet::{HEADER_BYTES, Kind, MSS, Packet};
use crate::tcp::Receiver;
use crate::tcp::receiver::DELACK_TIMEOUT;
use crate::tcp::receiver::Segment;
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
    /// The window its last ACK advertised, segments (`tp->rcv_wnd`).
    advertised: u32,
    rx: Option<Receiver>,
}

pub struct Server {
    id: ConnId,
    mptcp: bool,
    delayed_ack: bool,
    sack: bool,
    subflows: Vec<ServerSubflow>,
    data: DataReceiver,
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
                    rx: None,
                })
                .collect(),
            data: DataReceiver::new(cfg.rcv_buffer_segs.max(1)),
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

    /// The next packet to send: SYN-ACKs, then ACKs, lowest subflow first. (`_now` keeps
    /// the drivers' call the same for both ends; an ACK carries nothing time-dependent.)
    pub fn poll_transmit(&mut self, _now: Nanos) -> Option<Packet> {
        if self.syn_ack_due != 0 {
            let s = self.syn_ack_due.trailing_zeros() as usize;
            self.syn_ack_due &= !(1 << s);
            let window = self.data.window();
            let sf = &mut self.subflows[s];
            sf.advertised = window;
            self.advertised = window;
            let mut syn_ack =
                Packet::control(self.id, SubflowId(s as u8), Kind::SynAck, sf.path.rev);
            syn_ack.ts = sf.syn_ts;
            return Some(syn_ack);
        }
        while self.ack_due != 0 {
            let s = self.ack_due.trailing_zeros() as usize;
            self.ack_due &= !(1 << s);
            if let Some(ack) = self.make_ack(s) {
                return Some(ack);
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

    /// Payload bytes delivered in order to the application so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
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
        let rx = self.subflows[s].rx.as_mut().expect("checked by the caller");
        let res = rx.on_data(segment, now, window);
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
                self.delivered_bytes = in_order;
                self.acknowledge_after_read();
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
            let window_opens = space > 0
                && 2 * left as u64 <= self.data.buffer_segs
                && space >= left.saturating_mul(2);
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

    fn make_ack(&mut self, s: usize) -> Option<Packet> {
        let (data_ack, rwnd) = (self.data.rcv_nxt, self.data.window());
        let sf = &mut self.subflows[s];
        sf.advertised = rwnd;
        self.advertised = rwnd;
        let rev = sf.path.rev;
        let (ack, tsecr, sack) = sf.rx.as_mut()?.make_ack();
        let blocks = sack.iter().filter(|b| b.1 > b.0).count() as u16;
        Some(Packet {
            seq: ack,
            dsn: data_ack,
            ts: tsecr,
            rwnd,
            sack,
            wire_bytes: HEADER_BYTES + if blocks > 0 { 4 + 8 * blocks } else { 0 },
            ..Packet::control(self.id, SubflowId(s as u8), Kind::Ack, rev)
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
