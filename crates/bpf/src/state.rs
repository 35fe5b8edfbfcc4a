//! The coupling state the programs publish per socket (`struct mlab_subflow_info` in
//! mlab_kern.h), read back from the pinned maps for `cc show`.

use crate::algorithm::Algorithm;
use crate::registry::Registry;
use libbpf_rs::{MapCore, MapFlags, MapHandle};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Size of `struct mlab_subflow_info`; checked against the map's value size.
pub const INFO_SIZE: usize = 136;
const AF_INET6: u16 = 10;
/// Q40, the scale of the published increase.
const INC_ONE: f64 = (1u64 << 40) as f64;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SubflowInfo {
    pub algorithm: &'static str,
    /// MPTCP connection token; 0 for plain TCP.
    pub token: u32,
    pub local: String,
    pub remote: String,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt_us: u64,
    pub ca_state: &'static str,
    /// Subflows of the connection seen by the program, and how many are in the coupling.
    pub subflows: u32,
    pub coupled: u32,
    /// The algorithm's alpha for this subflow (LIA: the connection's alpha; OLIA: alpha_r,
    /// signed; Balia: M / x_r; wVegas: its queue target in packets).
    pub alpha: f64,
    /// x_r, packets per second.
    pub rate_pps: f64,
    /// Window increase per acknowledged packet in congestion avoidance.
    pub increase_per_packet: f64,
    /// OLIA: member of M (largest window), B (best path), C (collected).
    pub sets: String,
    pub inter_loss_bytes: u64,
    /// Nanoseconds since boot of the last update.
    pub updated_ns: u64,
}

/// Subflows grouped by MPTCP connection, plain TCP sockets last.
#[derive(Clone, Debug, Serialize)]
pub struct Connection {
    pub token: u32,
    pub algorithm: &'static str,
    pub subflows: Vec<SubflowInfo>,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

fn ca_state_name(s: u8) -> &'static str {
    match s {
        0 => "open",
        1 => "disorder",
        2 => "cwr",
        3 => "recovery",
        4 => "loss",
        _ => "?",
    }
}

fn sets_text(sets: u32, index: u32) -> String {
    let bits = (sets >> (index.min(7) * 4)) & 7;
    [(1, 'M'), (2, 'B'), (4, 'C')]
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, c)| *c)
        .collect()
}

/// Decodes one map value; None if it is not the expected size.
pub fn decode(b: &[u8]) -> Option<SubflowInfo> {
    if b.len() != INFO_SIZE {
        return None;
    }
    let mantissa = |m: usize, e: usize| u64_at(b, m) as f64 * 2f64.powi(i32_at(b, e));
    let family = u16_at(b, 124);
    let (local, remote) = if family == AF_INET6 {
        let a: [u8; 16] = b[88..104].try_into().ok()?;
        let d: [u8; 16] = b[104..120].try_into().ok()?;
        (IpAddr::V6(Ipv6Addr::from(a)), IpAddr::V6(Ipv6Addr::from(d)))
    } else {
        // Stored as the kernel has them: network byte order.
        let a = u32_at(b, 80).to_ne_bytes();
        let d = u32_at(b, 84).to_ne_bytes();
        (IpAddr::V4(Ipv4Addr::from(a)), IpAddr::V4(Ipv4Addr::from(d)))
    };
    let endpoint = |ip: IpAddr, port: u16| match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    };
    let alpha_sign = i32_at(b, 128);
    let algorithm = Algorithm::from_id(b[127])
        .map(Algorithm::name)
        .unwrap_or("?");
    Some(SubflowInfo {
        algorithm,
        token: u32_at(b, 56),
        local: endpoint(local, u16_at(b, 120)),
        remote: endpoint(remote, u16_at(b, 122)),
        cwnd: u32_at(b, 60),
        ssthresh: u32_at(b, 64),
        srtt_us: u64_at(b, 8),
        ca_state: ca_state_name(b[126]),
        subflows: u32_at(b, 68),
        coupled: u32_at(b, 72),
        alpha: mantissa(24, 48) * if alpha_sign < 0 { -1.0 } else { 1.0 },
        rate_pps: mantissa(32, 52) * 1e6,
        increase_per_packet: (u64_at(b, 40) as i64) as f64 / INC_ONE,
        sets: sets_text(u32_at(b, 76), u32_at(b, 132)),
        inter_loss_bytes: u64_at(b, 16),
        updated_ns: u64_at(b, 0),
    })
}

/// Every socket's published state for one installed algorithm.
pub fn read(registry: &Registry, a: Algorithm) -> Vec<SubflowInfo> {
    let Ok(map) = MapHandle::from_pinned_path(registry.state_map_path(a)) else {
        return Vec::new();
    };
    if map.value_size() as usize != INFO_SIZE {
        return Vec::new();
    }
    map.keys()
        .filter_map(|k| map.lookup(&k, MapFlags::ANY).ok().flatten())
        .filter_map(|v| decode(&v))
        .collect()
}

/// All installed algorithms' sockets, grouped by MPTCP connection.
pub fn connections(registry: &Registry) -> Vec<Connection> {
    let mut by_token: BTreeMap<(bool, u32, &'static str), Vec<SubflowInfo>> = BTreeMap::new();
    let mut plain = Vec::new();
    for a in Algorithm::ALL {
        for s in read(registry, a) {
            if s.token == 0 {
                plain.push(s);
            } else {
                by_token
                    .entry((false, s.token, s.algorithm))
                    .or_default()
                    .push(s);
            }
        }
    }
    let mut out: Vec<Connection> = by_token
        .into_iter()
        .map(|((_, token, algorithm), mut subflows)| {
            subflows.sort_by(|a, b| (&a.local, &a.remote).cmp(&(&b.local, &b.remote)));
            Connection {
                token,
                algorithm,
                subflows,
            }
        })
        .collect();
    plain.sort_by(|a, b| (a.algorithm, &a.local).cmp(&(b.algorithm, &b.local)));
    for s in plain {
        out.push(Connection {
            token: 0,
            algorithm: s.algorithm,
            subflows: vec![s],
        });
    }
    out
}
