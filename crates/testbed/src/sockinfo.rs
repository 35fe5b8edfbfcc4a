//! Socket statistics from the kernel: TCP_INFO of a TCP socket, and for an MPTCP socket
//! the TCP_INFO and addresses of each subflow (MPTCP_TCPINFO and MPTCP_SUBFLOW_ADDRS,
//! Linux 5.16+), which is what `ss -tiM` shows. An MPTCP connection that fell back to TCP
//! (RFC 8684 3.7: its handshake's options were lost, e.g. the third ACK dropped by a full
//! queue) refuses SOL_MPTCP options with EOPNOTSUPP and passes SOL_TCP ones to its one
//! subflow.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::RawFd;

const SOL_MPTCP: libc::c_int = 284;
const MPTCP_INFO: libc::c_int = 1;
const MPTCP_TCPINFO: libc::c_int = 2;
const MPTCP_SUBFLOW_ADDRS: libc::c_int = 3;
/// struct mptcp_subflow_data: four u32, 8-byte aligned.
const SUBFLOW_DATA: usize = 16;
/// struct mptcp_subflow_addrs: a local and a remote sockaddr_storage.
const SUBFLOW_ADDRS: usize = 256;
/// Most subflows a connection has (Linux allows 8, plus the initial one).
const MAX_SUBFLOWS: usize = 9;

/// One subflow now.
#[derive(Clone)]
pub struct SubflowInfo {
    pub local: Option<SocketAddrV4>,
    pub remote: Option<SocketAddrV4>,
    pub info: libc::tcp_info,
}

pub fn tcp_info(fd: RawFd) -> Option<libc::tcp_info> {
    // SAFETY: tcp_info is plain data; getsockopt fills at most `len` bytes of it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(info)
}

/// What the kernel says of an MPTCP connection's subflows now.
pub struct Connection {
    pub subflows: Vec<SubflowInfo>,
    /// The connection fell back to plain TCP; `subflows` is its one TCP connection.
    pub fallen_back: bool,
    /// The data level's byte counters (`struct mptcp_info`, Linux 6.7+), when the kernel
    /// has them and the connection did not fall back.
    pub data_level: Option<DataLevel>,
}

/// Byte counters of an MPTCP connection's data level (`mptcpi_bytes_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataLevel {
    /// Data handed to the subflows for the first time (`msk->bytes_sent`, which
    /// `mptcp_update_post_push()` advances only past the highest data sent before).
    pub bytes_sent: u64,
    /// Data the data-level retransmission timer sent again (`msk->bytes_retrans`,
    /// `__mptcp_retrans()`); a rewind's re-sends are not counted here.
    pub bytes_retrans: u64,
}

impl Connection {
    /// Payload the connection sent again at the data level, rewinds and data-level
    /// retransmissions together: what its live subflows sent for the first time at the TCP
    /// level, less what the data level sent for the first time. Subflows that were closed
    /// take their bytes with them, so this is a lower bound after one closes.
    pub fn reinjected_bytes(&self) -> Option<u64> {
        let data = self.data_level?;
        let first_sends: u64 = self
            .subflows
            .iter()
            .map(|sf| {
                sf.info
                    .tcpi_bytes_sent
                    .saturating_sub(sf.info.tcpi_bytes_retrans)
            })
            .sum();
        Some(first_sends.saturating_sub(data.bytes_sent))
    }
}

/// Offsets in `struct mptcp_info` (include/uapi/linux/mptcp.h, Linux 6.7 and later; the
/// kernel copies no more than the caller asks for and says how much it wrote).
const INFO_BYTES_RETRANS: usize = 48;
const INFO_BYTES_SENT: usize = 56;

/// MPTCP_INFO of MPTCP socket `fd`, if the kernel is new enough to count bytes.
pub fn data_level(fd: RawFd) -> Option<DataLevel> {
    let mut buf = [0u8; 96];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into the buffer we own.
    let rc =
        unsafe { libc::getsockopt(fd, SOL_MPTCP, MPTCP_INFO, buf.as_mut_ptr().cast(), &mut len) };
    if rc != 0 || (len as usize) < INFO_BYTES_SENT + 8 {
        return None;
    }
    let u64_at = |at: usize| u64::from_ne_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
    Some(DataLevel {
        bytes_sent: u64_at(INFO_BYTES_SENT),
        bytes_retrans: u64_at(INFO_BYTES_RETRANS),
    })
}

/// Why a per-subflow query gave nothing.
enum Refused {
    /// EOPNOTSUPP: the socket runs plain TCP (an MPTCP socket after fallback).
    NotMptcp,
    Other,
}

/// An MPTCP getsockopt returning per-subflow records of `size` bytes: the records.
fn per_subflow(fd: RawFd, opt: libc::c_int, size: usize) -> Result<Vec<Vec<u8>>, Refused> {
    let mut buf = vec![0u8; SUBFLOW_DATA + MAX_SUBFLOWS * size];
    buf[0..4].copy_from_slice(&(SUBFLOW_DATA as u32).to_ne_bytes());
    buf[12..16].copy_from_slice(&(size as u32).to_ne_bytes());
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into the buffer we own.
    let rc = unsafe { libc::getsockopt(fd, SOL_MPTCP, opt, buf.as_mut_ptr().cast(), &mut len) };
    if rc != 0 {
        return Err(match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EOPNOTSUPP) => Refused::NotMptcp,
            _ => Refused::Other,
        });
    }
    let field = |at: usize| u32::from_ne_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
    let (num, user) = (field(4) as usize, field(12) as usize);
    let got = num
        .min(MAX_SUBFLOWS)
        .min((len as usize).saturating_sub(SUBFLOW_DATA) / user.max(1));
    Ok((0..got)
        .map(|i| buf[SUBFLOW_DATA + i * user..SUBFLOW_DATA + (i + 1) * user].to_vec())
        .collect())
}

/// getsockname(2) or getpeername(2) of an IPv4 socket.
fn socket_addr(fd: RawFd, peer: bool) -> Option<SocketAddrV4> {
    let mut storage = [0u8; 128];
    let mut len = storage.len() as libc::socklen_t;
    let query = if peer {
        libc::getpeername
    } else {
        libc::getsockname
    };
    // SAFETY: the kernel writes at most `len` bytes of address into the buffer we own.
    let rc = unsafe { query(fd, storage.as_mut_ptr().cast(), &mut len) };
    (rc == 0).then(|| sockaddr_v4(&storage)).flatten()
}

fn sockaddr_v4(b: &[u8]) -> Option<SocketAddrV4> {
    let family = u16::from_ne_bytes([b[0], b[1]]);
    if family != libc::AF_INET as u16 {
        return None;
    }
    let port = u16::from_be_bytes([b[2], b[3]]);
    Some(SocketAddrV4::new(
        Ipv4Addr::new(b[4], b[5], b[6], b[7]),
        port,
    ))
}

/// Every subflow of MPTCP socket `fd`. Empty when the kernel answers nothing usable (the
/// socket is closing, or a subflow joined between the two queries).
pub fn mptcp_subflows(fd: RawFd) -> Connection {
    let size = std::mem::size_of::<libc::tcp_info>();
    let nothing = Connection {
        subflows: Vec::new(),
        fallen_back: false,
        data_level: None,
    };
    let infos = match per_subflow(fd, MPTCP_TCPINFO, size) {
        Ok(infos) => infos,
        Err(Refused::NotMptcp) => return fallen_back(fd).unwrap_or(nothing),
        Err(Refused::Other) => return nothing,
    };
    let Ok(addrs) = per_subflow(fd, MPTCP_SUBFLOW_ADDRS, SUBFLOW_ADDRS) else {
        return nothing;
    };
    // Both lists walk the connection's subflow list; one that joined or left between the
    // two calls shifts them, which the addresses reveal: pair them only if counts agree.
    if infos.len() != addrs.len() {
        return nothing;
    }
    let subflows = infos
        .iter()
        .zip(&addrs)
        .map(|(i, a)| {
            // SAFETY: tcp_info is plain data and the record holds at least its size.
            let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
            let n = i.len().min(size);
            unsafe {
                std::ptr::copy_nonoverlapping(
                    i.as_ptr(),
                    (&mut info as *mut libc::tcp_info).cast::<u8>(),
                    n,
                )
            };
            SubflowInfo {
                local: sockaddr_v4(&a[0..128]),
                remote: sockaddr_v4(&a[128..256]),
                info,
            }
        })
        .collect();
    Connection {
        subflows,
        fallen_back: false,
        data_level: data_level(fd),
    }
}

/// A connection that fell back to TCP, as its one subflow.
fn fallen_back(fd: RawFd) -> Option<Connection> {
    Some(Connection {
        subflows: vec![SubflowInfo {
            local: socket_addr(fd, false),
            remote: socket_addr(fd, true),
            info: tcp_info(fd)?,
        }],
        fallen_back: true,
        data_level: None,
    })
}
