//! The simulated packet: small and `Copy`, so it moves through queues without allocation.

use crate::ids::{ConnId, SubflowId};
use net::{Routed, RoutingHeader};

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
    Data,
    Ack,
}

impl Kind {
    /// Travels from the client to the server.
    pub fn to_server(self) -> bool {
        matches!(self, Kind::Syn | Kind::JoinAck | Kind::Data)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Connection and subflow this packet belongs to.
    pub conn: ConnId,
    pub subflow: SubflowId,
    pub kind: Kind,
    /// The route it follows through the fabric and the hop it is on.
    pub routing: RoutingHeader,
    pub wire_bytes: u16,
    /// Data: subflow segment number. ACK: the subflow's cumulative acknowledgement.
    pub seq: u64,
    /// Data: data sequence number (MPTCP's DSS; equal to `seq` for plain TCP).
    /// ACK: the connection's cumulative data acknowledgement.
    pub dsn: u64,
    /// Data and SYN: time sent (TSval). ACK and SYN-ACK: the echoed TSval (TSecr).
    pub ts: u64,
    /// ACK: the connection's advertised receive window, segments beyond `dsn`.
    pub rwnd: u32,
    /// ACK: up to three SACK blocks as `[start, end)` offsets from `seq`; `(0, 0)` is empty.
    pub sack: [(u32, u32); 3],
}

impl Packet {
    /// A segment with no payload, acknowledgement or options beyond its kind.
    pub fn control(conn: ConnId, subflow: SubflowId, kind: Kind, route: net::RouteId) -> Self {
        Packet {
            conn,
            subflow,
            kind,
            routing: RoutingHeader { route, hop: 0 },
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
            Kind::Data => (self.wire_bytes - HEADER_BYTES) as u64,
            _ => 0,
        }
    }
}

impl net::Packet for Packet {
    fn wire_bytes(&self) -> u32 {
        self.wire_bytes as u32
    }
}

impl Routed for Packet {
    fn routing(&self) -> RoutingHeader {
        self.routing
    }
    fn routing_mut(&mut self) -> &mut RoutingHeader {
        &mut self.routing
    }
}
