//! The simulated packet: small and `Copy`, so it moves through queues without allocation.

/// TCP/IP headers on a data segment; MSS 1460 makes a 1500-byte packet.
pub const HEADER_BYTES: u16 = 40;
pub const MSS: u16 = 1460;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Connection and subflow this packet belongs to.
    pub conn: u32,
    pub subflow: u8,
    pub is_ack: bool,
    /// Index into the simulator's route table, and the hop being crossed.
    pub route: u32,
    pub hop: u16,
    pub wire_bytes: u16,
    /// Data: subflow segment number. ACK: the subflow's cumulative acknowledgement.
    pub seq: u64,
    /// Data: data sequence number (MPTCP's DSS; equal to `seq` for plain TCP).
    /// ACK: the connection's cumulative data acknowledgement.
    pub dsn: u64,
    /// Data: time sent (TSval). ACK: the echoed TSval (TSecr).
    pub ts: u64,
    /// ACK: the connection's advertised receive window, segments beyond `dsn`.
    pub rwnd: u32,
    /// ACK: up to three SACK blocks as `[start, end)` offsets from `seq`; `(0, 0)` is empty.
    pub sack: [(u32, u32); 3],
}

impl net::Packet for Packet {
    fn wire_bytes(&self) -> u32 {
        self.wire_bytes as u32
    }
}
