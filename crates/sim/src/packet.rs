//! The simulated packet, and what the fabric carries of it.
//!
//! An endpoint makes a [`Packet`] (headers, sequence numbers, SACK blocks: 64 bytes, one cache
//! line) and hands it out with the route it takes (a [`Transmit`]); the world files it in a
//! [`PacketStore`] and hands the fabric an [`InFlight`] of 12 bytes (the routing header is
//! packed to six): the packet's place in the store, its routing header and its size, all a
//! link needs (a link's slot, with two times, is 32 bytes). Only
//! that moves from queue to queue, hop after hop; the packet itself is written once and
//! read once, by the endpoint it reaches. Freed places are reused, so a run in its steady
//! state allocates nothing per packet.

use crate::ids::{ConnId, SubflowId};
use net::{Nanos, RouteId, Routed, RoutingHeader};

/// TCP/IP headers on a data segment or a pure ACK; MSS 1460 makes a 1500-byte packet.
pub const HEADER_BYTES: u16 = 40;
/// A SYN or SYN-ACK with its options (MSS, SACK-permitted, timestamps, window scale,
/// MP_CAPABLE or MP_JOIN).
pub const SYN_BYTES: u16 = 60;
pub const MSS: u16 = 1460;

/// What a segment is. The client (the end that opens the connection) sends SYNs, the ACK
/// that completes an MP_JOIN, and data; the server answers with SYN-ACKs and ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Opens subflow 0 (MP_CAPABLE, or plain TCP) or joins another (MP_JOIN).
    Syn,
    SynAck,
    /// The third ACK of an MP_JOIN: the server acknowledges it, and only then may the
    /// client send data on that subflow (RFC 8684 section 3.2).
    JoinAck,
    /// A data segment; `push`: it carries PSH (the last of what the sender handed TCP in
    /// one go), which lets the receiver acknowledge it at once once the application has
    /// read everything (`tcp_measure_rcv_mss()`, `__tcp_cleanup_rbuf()`).
    Data {
        push: bool,
    },
    Ack,
}

impl Kind {
    /// Travels from the client to the server.
    pub fn to_server(self) -> bool {
        matches!(self, Kind::Syn | Kind::JoinAck | Kind::Data { .. })
    }

    pub fn is_data(self) -> bool {
        matches!(self, Kind::Data { .. })
    }
}

/// One cache line (the store's places are aligned to it): the endpoint a packet reaches
/// reads it in one miss, not two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(64))]
pub struct Packet {
    /// Connection and subflow this packet belongs to.
    pub conn: ConnId,
    pub subflow: SubflowId,
    pub kind: Kind,
    pub wire_bytes: u16,
    /// The TCP timestamp option's millisecond clock (`TCP_TS_HZ`), by which the receiver
    /// times its round trip (`tcp_rcv_rtt_measure_ts()`): an ACK's own TSval, and in data
    /// the TSecr, the TSval of the latest ACK its sender took (`tcp_replace_ts_recent()`:
    /// every ACK, the sender having no data of its own). 0: none yet.
    pub ack_tsval_ms: u32,
    /// Data: subflow segment number. ACK: the subflow's cumulative acknowledgement.
    pub seq: u64,
    /// Data: data sequence number (MPTCP's DSS; equal to `seq` for plain TCP).
    /// ACK: the connection's cumulative data acknowledgement.
    pub dsn: u64,
    /// Data and SYN: time sent, by which the sender times the round trip. ACK and SYN-ACK:
    /// that time echoed. (Linux times its RTT samples with each segment's microsecond send
    /// stamp; the timestamp option's echo, `ack_tsval_ms`, serves the receiver.)
    pub ts: u64,
    /// ACK: the connection's advertised receive window, segments beyond `dsn`.
    pub rwnd: u32,
    /// ACK: up to three SACK blocks as `[start, end)` offsets from `seq`; `(0, 0)` is empty.
    pub sack: [(u32, u32); 3],
}

impl Packet {
    /// A segment with no payload, acknowledgement or options beyond its kind.
    pub fn control(conn: ConnId, subflow: SubflowId, kind: Kind) -> Self {
        Packet {
            conn,
            subflow,
            kind,
            ack_tsval_ms: 0,
            wire_bytes: match kind {
                Kind::Syn | Kind::SynAck => SYN_BYTES,
                _ => HEADER_BYTES,
            },
            seq: 0,
            dsn: 0,
            ts: 0,
            rwnd: 0,
            sack: [(0, 0); 3],
        }
    }

    pub fn payload(&self) -> u64 {
        match self.kind {
            Kind::Data { .. } => (self.wire_bytes - HEADER_BYTES) as u64,
            _ => 0,
        }
    }
}

/// A packet an endpoint sends, and the route it takes (the endpoint's path for its
/// subflow, in its direction): the route is the fabric's business, so the packet itself
/// does not carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub route: RouteId,
    pub packet: Packet,
}

/// The timestamp option's clock at `now`: milliseconds (`TCP_TS_HZ`), wrapping as the
/// option's 32 bits do; never 0, which stands for no timestamp.
pub fn ts_clock_ms(now: Nanos) -> u32 {
    ((now / 1_000_000) as u32).max(1)
}

/// A packet's place in the [`PacketStore`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketId(pub u32);

/// What the fabric carries of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlight {
    pub id: PacketId,
    pub routing: RoutingHeader,
    pub wire_bytes: u16,
}

impl net::Packet for InFlight {
    fn wire_bytes(&self) -> u32 {
        self.wire_bytes as u32
    }
}

impl Routed for InFlight {
    fn routing(&self) -> RoutingHeader {
        self.routing
    }
    fn routing_mut(&mut self) -> &mut RoutingHeader {
        &mut self.routing
    }
}

/// The packets in the fabric, by place; places are reused once their packet arrives or is
/// dropped.
#[derive(Default)]
pub struct PacketStore {
    packets: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketStore {
    /// A place for `pkt` (filled with `fill`), and what the fabric carries of it.
    ///
    /// Apart from `fill` so that a packet just made can be copied in a little later: an
    /// endpoint writes it field by field, and copying it at once, in wide loads, would
    /// wait for those narrow stores (a failed store-to-load forwarding, a few percent of
    /// the time per hop).
    #[inline]
    pub fn reserve(&mut self, pkt: &Packet, route: RouteId) -> InFlight {
        let id = match self.free.pop() {
            Some(i) => i,
            None => {
                self.packets.push(*pkt);
                (self.packets.len() - 1) as u32
            }
        };
        InFlight {
            id: PacketId(id),
            routing: RoutingHeader { route, hop: 0 },
            wire_bytes: pkt.wire_bytes,
        }
    }

    /// Writes `pkt` in the place `reserve` gave it.
    #[inline]
    pub fn fill(&mut self, id: PacketId, pkt: Packet) {
        self.packets[id.0 as usize] = pkt;
    }

    /// The packet at `id`, whose place is freed.
    pub fn take(&mut self, id: PacketId) -> Packet {
        self.free.push(id.0);
        self.packets[id.0 as usize]
    }

    /// A packet in the store (to look at before it is taken).
    #[inline]
    pub fn get(&self, id: PacketId) -> Option<&Packet> {
        self.packets.get(id.0 as usize)
    }

    /// Frees the place of a packet that was dropped.
    pub fn discard(&mut self, id: PacketId) {
        self.free.push(id.0);
    }

    /// Packets in the fabric now.
    pub fn len(&self) -> usize {
        self.packets.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64);
const _: () = assert!(std::mem::size_of::<InFlight>() == 12);
