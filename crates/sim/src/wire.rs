//! A simulated packet as Linux would put it on the wire, for captures (`--pcap`): its IPv4
//! and TCP headers with the options Linux sends on such a segment (timestamps, SACK blocks,
//! MPTCP's MP_CAPABLE, MP_JOIN and DSS, RFC 8684 section 3). The payload is not written:
//! a capture keeps the headers and says how long the packet was, as one taken with a snap
//! length does; the TCP checksum is the one of a payload of zeros.
//!
//! The simulator numbers segments, not bytes: segment n of a subflow carries the bytes from
//! n x MSS on. On the wire that is sequence number `1 + n x 1460` (the SYN takes 0, so
//! Wireshark's relative and raw numbers agree), and data sequence number `1 + dsn x 1460`;
//! acknowledgements of a connection's short last segment stop at its last byte (a plain TCP
//! connection's, and MPTCP's data ACK; a subflow-level ACK of it still counts a whole MSS).
//! Keys, nonces and HMACs are made up from the connection's number, and the MP_JOIN token
//! is not derived from the server's key by SHA-256 as RFC 8684 has it, so Wireshark does not
//! tie joined subflows to their connection.
//!
//! The lengths are the simulator's, not Linux's: its MSS is 1460 bytes with 40 bytes of
//! headers (`packet::HEADER_BYTES`, which the links serialise, with SACK blocks), while
//! Linux with timestamps sends 1448 in a 1500-byte packet. Here the options are written
//! too, so a captured data segment is 1512 bytes (TCP) or 1536 (MPTCP), and the link timed
//! 1500.

use crate::packet::{Kind, MSS, Packet};
use std::net::SocketAddrV4;

/// Option kinds (IANA "TCP Option Kind Numbers").
const NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WSCALE: u8 = 3;
const OPT_SACK_PERMITTED: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMP: u8 = 8;
const OPT_MPTCP: u8 = 30;

/// MPTCP option subtypes, in the high nibble of the option's third byte (RFC 8684 7.2).
const MP_CAPABLE: u8 = 0x00;
const MP_JOIN: u8 = 0x10;
const DSS: u8 = 0x20;
/// MP_CAPABLE version 1 (RFC 8684); flag H: HMAC-SHA256, no checksums (Linux's default,
/// `net.mptcp.checksum_enabled` = 0).
const MP_CAPABLE_V1: u8 = 0x01;
const MP_CAPABLE_SHA256: u8 = 0x01;
/// DSS flags: A (data ACK present), a (it has 8 octets), M (mapping present), m (its data
/// sequence number has 8 octets).
const DSS_ACK: u8 = 0x01;
const DSS_ACK64: u8 = 0x02;
const DSS_MAP: u8 = 0x04;
const DSS_DSN64: u8 = 0x08;

const FLAG_SYN: u8 = 0x02;
const FLAG_PSH: u8 = 0x08;
const FLAG_ACK: u8 = 0x10;

/// The window scale both ends announce (Linux's with a receive buffer of 6 MB).
const WINDOW_SCALE: u8 = 7;
/// The window a SYN offers, unscaled (`tcp_select_initial_window()`, 10 MSS rounded as
/// Linux does for a 1460-byte MSS).
const SYN_WINDOW: u16 = 64_240;
/// The window the client's segments offer, scaled: the simulator sends no data to the
/// client, so its receive window never moves from its first.
const CLIENT_WINDOW: u16 = SYN_WINDOW >> WINDOW_SCALE;
/// Options may take at most 40 bytes of a TCP header (RFC 9293 3.1).
const MAX_OPTIONS: usize = 40;
const IPV4_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
const IPPROTO_TCP: u8 = 6;
const TTL: u8 = 64;

/// The two ends of a subflow: the client opened it and sends the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubflowEnds {
    pub client: SocketAddrV4,
    pub server: SocketAddrV4,
}

/// What the headers of a packet say of its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnShape {
    /// MPTCP: its segments carry MPTCP options.
    pub mptcp: bool,
    /// SACK was negotiated (`sack` of the flow).
    pub sack: bool,
    /// Payload bytes the connection carries (`u64::MAX`: no end).
    pub total_bytes: u64,
}

/// The start of segment `segment` of a stream as a sequence number on the wire.
fn wire_seq(segment: u64) -> u64 {
    1 + segment * MSS as u64
}

/// An acknowledgement of everything before segment `segment` of a stream of
/// `total_bytes`: no further than its last byte.
fn wire_ack(segment: u64, total_bytes: u64) -> u64 {
    1 + (segment * MSS as u64).min(total_bytes)
}

/// The IPv4 identification of a packet: the same wherever it is captured, and different
/// for a retransmission (sent at another time).
fn ip_id(pkt: &Packet) -> u16 {
    let mut x = (pkt.conn.0 as u64) << 40 ^ (pkt.subflow.0 as u64) << 32 ^ pkt.seq;
    x ^= pkt.ts.rotate_left(17) ^ pkt.kind.to_server() as u64;
    (mix(x) >> 48) as u16
}

/// Writes `pkt`'s IPv4 and TCP headers into `out` (cleared first) and returns the length
/// of the whole packet, payload included.
pub fn encode(pkt: &Packet, ends: SubflowEnds, conn: ConnShape, out: &mut Vec<u8>) -> u32 {
    let mptcp = conn.mptcp;
    // Plain TCP numbers the subflow's bytes as the connection's.
    let subflow_total = if mptcp { u64::MAX } else { conn.total_bytes };
    let (src, dst) = if pkt.kind.to_server() {
        (ends.client, ends.server)
    } else {
        (ends.server, ends.client)
    };
    let mut options = Options::default();
    let (seq, ack, flags, window) = match pkt.kind {
        Kind::Syn => {
            options.syn(pkt, conn.sack);
            if mptcp {
                options.mptcp_syn(pkt, false);
            }
            (0, 0, FLAG_SYN, SYN_WINDOW)
        }
        Kind::SynAck => {
            options.syn(pkt, conn.sack);
            if mptcp {
                options.mptcp_syn(pkt, true);
            }
            (0, 1, FLAG_SYN | FLAG_ACK, SYN_WINDOW)
        }
        Kind::JoinAck => {
            options.timestamps(pkt);
            options.join_ack(pkt);
            (1, 1, FLAG_ACK, CLIENT_WINDOW)
        }
        Kind::Data { push } => {
            options.timestamps(pkt);
            if mptcp {
                options.dss_mapping(pkt);
            }
            let psh = if push { FLAG_PSH } else { 0 };
            (wire_seq(pkt.seq), 1, FLAG_ACK | psh, CLIENT_WINDOW)
        }
        Kind::Ack => {
            options.timestamps(pkt);
            // MPTCP's option is sized first and the SACK blocks take what room is left
            // (`tcp_established_options()`), but it is written last (`tcp_options_write()`).
            let mut dss = Options::default();
            if mptcp {
                dss.dss_ack(pkt, conn.total_bytes);
            }
            options.sack(pkt, dss.len, subflow_total);
            options.push(&dss.bytes[..dss.len]);
            let ack = wire_ack(pkt.seq, subflow_total);
            (1, ack, FLAG_ACK, scaled_window(pkt.rwnd))
        }
    };
    let options = options.padded();
    let tcp_len = TCP_HEADER + options.len();
    let total = (IPV4_HEADER + tcp_len) as u32 + pkt.payload() as u32;

    out.clear();
    // IPv4 (RFC 791), Don't Fragment set, as Linux's TCP sends.
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&(total as u16).to_be_bytes());
    out.extend_from_slice(&ip_id(pkt).to_be_bytes());
    out.extend_from_slice(&[0x40, 0, TTL, IPPROTO_TCP, 0, 0]);
    out.extend_from_slice(&src.ip().octets());
    out.extend_from_slice(&dst.ip().octets());
    let ip_sum = checksum(0, &out[..IPV4_HEADER]);
    out[10..12].copy_from_slice(&ip_sum.to_be_bytes());
    // TCP (RFC 9293 3.1).
    out.extend_from_slice(&src.port().to_be_bytes());
    out.extend_from_slice(&dst.port().to_be_bytes());
    out.extend_from_slice(&(seq as u32).to_be_bytes());
    out.extend_from_slice(&(ack as u32).to_be_bytes());
    out.extend_from_slice(&[((tcp_len / 4) as u8) << 4, flags]);
    out.extend_from_slice(&window.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(options);
    // The pseudo-header, then the segment; a payload of zeros adds nothing to the sum.
    let mut pseudo = [0u8; 12];
    pseudo[..4].copy_from_slice(&src.ip().octets());
    pseudo[4..8].copy_from_slice(&dst.ip().octets());
    pseudo[9] = IPPROTO_TCP;
    pseudo[10..].copy_from_slice(&((total as usize - IPV4_HEADER) as u16).to_be_bytes());
    let sum = checksum(sum_words(0, &pseudo), &out[IPV4_HEADER..]);
    out[IPV4_HEADER + 16..IPV4_HEADER + 18].copy_from_slice(&sum.to_be_bytes());
    total
}

/// The advertised window, `rwnd` segments, scaled down as the header carries it.
fn scaled_window(rwnd: u32) -> u16 {
    ((rwnd as u64 * MSS as u64) >> WINDOW_SCALE).min(u16::MAX as u64) as u16
}

/// The one's-complement sum of `bytes` in 16-bit words, added to `sum`.
fn sum_words(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        sum += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [last] = words.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

/// The Internet checksum (RFC 1071) of `bytes`, starting from the partial sum `sum`.
fn checksum(sum: u32, bytes: &[u8]) -> u16 {
    let mut sum = sum_words(sum, bytes);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A connection's made-up 64-bit key (`server`: the server's), from its number.
fn key(pkt: &Packet, server: bool) -> u64 {
    mix((pkt.conn.0 as u64) << 1 | server as u64) | 1
}

/// splitmix64's finaliser: close inputs give unrelated-looking outputs.
fn mix(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A TCP header's options, in the order Linux writes them (`tcp_options_write()`).
struct Options {
    bytes: [u8; MAX_OPTIONS],
    len: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            bytes: [0; MAX_OPTIONS],
            len: 0,
        }
    }
}

impl Options {
    fn push(&mut self, bytes: &[u8]) {
        self.bytes[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    fn room(&self) -> usize {
        MAX_OPTIONS - self.len
    }

    /// Aligned to 32 bits with NOPs, as the header's length counts words.
    fn padded(&mut self) -> &[u8] {
        while !self.len.is_multiple_of(4) {
            self.push(&[NOP]);
        }
        &self.bytes[..self.len]
    }

    /// MSS, SACK permitted (if `sack`) with the timestamps, window scale
    /// (`tcp_syn_options()`).
    fn syn(&mut self, pkt: &Packet, sack: bool) {
        self.push(&[OPT_MSS, 4]);
        self.push(&MSS.to_be_bytes());
        self.push(if sack {
            &[OPT_SACK_PERMITTED, 2]
        } else {
            &[NOP, NOP]
        });
        self.push_timestamps(pkt);
        self.push(&[NOP, OPT_WSCALE, 3, WINDOW_SCALE]);
    }

    /// NOP, NOP, timestamps: 12 bytes on every segment after the SYNs.
    fn timestamps(&mut self, pkt: &Packet) {
        self.push(&[NOP, NOP]);
        self.push_timestamps(pkt);
    }

    /// TSval and TSecr: a segment to the server stamps its send time (ms) and echoes the
    /// server's latest ACK; one to the client carries its own stamp and echoes the data's.
    fn push_timestamps(&mut self, pkt: &Packet) {
        let sent_ms = if pkt.ts == 0 {
            0
        } else {
            crate::packet::ts_clock_ms(pkt.ts)
        };
        let (tsval, tsecr) = if pkt.kind.to_server() {
            (sent_ms, pkt.ack_tsval_ms)
        } else {
            (pkt.ack_tsval_ms, sent_ms)
        };
        self.push(&[OPT_TIMESTAMP, 10]);
        self.push(&tsval.to_be_bytes());
        self.push(&tsecr.to_be_bytes());
    }

    /// MP_CAPABLE on subflow 0's SYN and SYN-ACK, MP_JOIN on the others' (RFC 8684 3.1,
    /// 3.2): the SYN-ACK of MP_CAPABLE carries the server's key, MP_JOIN's SYN the
    /// server's token and the client's nonce, its SYN-ACK a truncated HMAC and a nonce.
    fn mptcp_syn(&mut self, pkt: &Packet, syn_ack: bool) {
        let address_id = pkt.subflow.0;
        match (pkt.subflow.0, syn_ack) {
            (0, false) => self.push(&[OPT_MPTCP, 4, MP_CAPABLE | MP_CAPABLE_V1, MP_CAPABLE_SHA256]),
            (0, true) => {
                self.push(&[OPT_MPTCP, 12, MP_CAPABLE | MP_CAPABLE_V1, MP_CAPABLE_SHA256]);
                self.push(&key(pkt, true).to_be_bytes());
            }
            (_, false) => {
                self.push(&[OPT_MPTCP, 12, MP_JOIN, address_id]);
                self.push(&((key(pkt, true) >> 32) as u32).to_be_bytes());
                self.push(&(key(pkt, false) as u32 ^ address_id as u32).to_be_bytes());
            }
            (_, true) => {
                self.push(&[OPT_MPTCP, 16, MP_JOIN, address_id]);
                self.push(&(key(pkt, true) ^ address_id as u64).to_be_bytes());
                self.push(&(key(pkt, true) as u32 ^ address_id as u32).to_be_bytes());
            }
        }
    }

    /// The third ACK of an MP_JOIN: the client's full HMAC (20 bytes).
    fn join_ack(&mut self, pkt: &Packet) {
        self.push(&[OPT_MPTCP, 24, MP_JOIN, 0]);
        let k = key(pkt, false) ^ pkt.subflow.0 as u64;
        self.push(&k.to_be_bytes());
        self.push(&k.rotate_left(17).to_be_bytes());
        self.push(&((k >> 7) as u32).to_be_bytes());
    }

    /// A data segment's DSS: a 32-bit data ACK (the client has received no data) and the
    /// mapping of its payload, the 64-bit data sequence number Linux always sends
    /// (`mptcp_write_options()`), the relative subflow sequence number and the length.
    fn dss_mapping(&mut self, pkt: &Packet) {
        self.push(&[OPT_MPTCP, 22, DSS, DSS_ACK | DSS_MAP | DSS_DSN64]);
        self.push(&1u32.to_be_bytes());
        self.push(&wire_seq(pkt.dsn).to_be_bytes());
        self.push(&(wire_seq(pkt.seq) as u32).to_be_bytes());
        self.push(&(pkt.payload() as u16).to_be_bytes());
    }

    /// An ACK's DSS: the connection's 64-bit data ACK (Linux answers a peer whose mappings
    /// carry 64-bit numbers in kind), of a connection of `total_bytes`.
    fn dss_ack(&mut self, pkt: &Packet, total_bytes: u64) {
        self.push(&[OPT_MPTCP, 12, DSS, DSS_ACK | DSS_ACK64]);
        self.push(&wire_ack(pkt.dsn, total_bytes).to_be_bytes());
    }

    /// As many of the ACK's SACK blocks as fit after the other options and `reserved`
    /// bytes of MPTCP's, as `tcp_established_options()` cuts them (one beside MPTCP's DSS,
    /// three without), on a subflow stream of `total_bytes`.
    fn sack(&mut self, pkt: &Packet, reserved: usize, total_bytes: u64) {
        let blocks: Vec<(u32, u32)> = pkt.sack.iter().copied().filter(|b| b.1 > b.0).collect();
        let fit = self.room().saturating_sub(reserved + 4) / 8;
        let n = blocks.len().min(fit);
        if n == 0 {
            return;
        }
        self.push(&[NOP, NOP, OPT_SACK, 2 + 8 * n as u8]);
        for &(start, end) in &blocks[..n] {
            self.push(&(wire_ack(pkt.seq + start as u64, total_bytes) as u32).to_be_bytes());
            self.push(&(wire_ack(pkt.seq + end as u64, total_bytes) as u32).to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ConnId, SubflowId};
    use std::net::Ipv4Addr;

    fn ends() -> SubflowEnds {
        SubflowEnds {
            client: SocketAddrV4::new(Ipv4Addr::new(10, 0, 1, 2), 40000),
            server: SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 5001),
        }
    }

    fn shape(mptcp: bool) -> ConnShape {
        ConnShape {
            mptcp,
            sack: true,
            total_bytes: u64::MAX,
        }
    }

    fn data(seq: u64, dsn: u64) -> Packet {
        Packet {
            seq,
            dsn,
            ts: 2_000_000_000,
            ack_tsval_ms: 1_990,
            wire_bytes: crate::packet::HEADER_BYTES + MSS,
            ..Packet::control(ConnId(3), SubflowId(1), Kind::Data { push: false })
        }
    }

    fn field_u32(bytes: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn checksums_verify() {
        let mut out = Vec::new();
        let total = encode(&data(5, 9), ends(), shape(true), &mut out);
        // The IPv4 header sums to zero with its checksum in.
        assert_eq!(checksum(0, &out[..IPV4_HEADER]), 0);
        // So does the TCP segment with its payload of zeros and the pseudo-header.
        let mut pseudo = [0u8; 12];
        pseudo[..4].copy_from_slice(&[10, 0, 1, 2]);
        pseudo[4..8].copy_from_slice(&[10, 0, 0, 1]);
        pseudo[9] = IPPROTO_TCP;
        pseudo[10..].copy_from_slice(&((total as usize - IPV4_HEADER) as u16).to_be_bytes());
        let mut segment = out[IPV4_HEADER..].to_vec();
        segment.resize(total as usize - IPV4_HEADER, 0);
        assert_eq!(checksum(sum_words(0, &pseudo), &segment), 0);
    }

    #[test]
    fn data_segment_numbers_are_bytes() {
        let mut out = Vec::new();
        let total = encode(&data(5, 9), ends(), shape(true), &mut out);
        let tcp = &out[IPV4_HEADER..];
        assert_eq!(field_u32(tcp, 4), 1 + 5 * 1460);
        let header = (tcp[12] >> 4) as usize * 4;
        assert_eq!(total as usize, IPV4_HEADER + header + 1460);
        assert_eq!(u16::from_be_bytes([out[2], out[3]]) as u32, total);
        // NOP NOP TS (12 bytes), then the DSS: flags, data ACK, DSN, subflow seq, length.
        let dss = &tcp[TCP_HEADER + 12..];
        assert_eq!(
            dss[..4],
            [OPT_MPTCP, 22, DSS, DSS_ACK | DSS_MAP | DSS_DSN64]
        );
        assert_eq!(
            u64::from_be_bytes(dss[8..16].try_into().unwrap()),
            1 + 9 * 1460
        );
        assert_eq!(field_u32(dss, 16), 1 + 5 * 1460);
        assert_eq!(u16::from_be_bytes([dss[20], dss[21]]), 1460);
        // The timestamps: the send time in ms, and the ACK's stamp echoed.
        assert_eq!(field_u32(tcp, TCP_HEADER + 4), 2_000);
        assert_eq!(field_u32(tcp, TCP_HEADER + 8), 1_990);
    }

    #[test]
    fn sack_blocks_fit_beside_mptcp() {
        let ack = Packet {
            seq: 10,
            dsn: 12,
            rwnd: 100,
            sack: [(2, 4), (6, 7), (9, 12)],
            ..Packet::control(ConnId(0), SubflowId(0), Kind::Ack)
        };
        let mut out = Vec::new();
        for (mptcp, blocks) in [(false, 3), (true, 1)] {
            encode(&ack, ends(), shape(mptcp), &mut out);
            let tcp = &out[IPV4_HEADER..];
            let options = &tcp[TCP_HEADER..(tcp[12] >> 4) as usize * 4];
            let at = options
                .windows(2)
                .position(|w| w[0] == OPT_SACK && w[1] == 2 + 8 * blocks)
                .expect("a SACK option");
            assert_eq!(field_u32(options, at + 2), 1 + 12 * 1460);
            assert_eq!(field_u32(options, at + 6), 1 + 14 * 1460);
            assert!(options.len() <= MAX_OPTIONS);
            assert_eq!(field_u32(tcp, 8), 1 + 10 * 1460);
            // Linux writes MPTCP's option last.
            if mptcp {
                assert_eq!(
                    options[options.len() - 12..][..4],
                    [OPT_MPTCP, 12, DSS, 0x03]
                );
            }
        }
    }

    #[test]
    fn the_last_short_segment_is_acknowledged_to_its_last_byte() {
        let ack = Packet {
            seq: 3,
            dsn: 3,
            rwnd: 10,
            ..Packet::control(ConnId(0), SubflowId(0), Kind::Ack)
        };
        let mut out = Vec::new();
        let tcp = ConnShape {
            mptcp: false,
            sack: true,
            total_bytes: 2 * 1460 + 100,
        };
        encode(&ack, ends(), tcp, &mut out);
        assert_eq!(field_u32(&out[IPV4_HEADER..], 8), 1 + 2 * 1460 + 100);
        // A data segment offers the client's window, not none.
        encode(&data(0, 0), ends(), tcp, &mut out);
        assert_eq!(u16::from_be_bytes([out[34], out[35]]), CLIENT_WINDOW);
    }
}
