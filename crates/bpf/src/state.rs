//! The coupling state the programs publish per socket (`struct mlab_subflow_info` in
//! mlab_kern.h), read back from the pinned maps for `cc show`.

use crate::algorithm::Algorithm;
use crate::registry::Registry;
use libbpf_rs::{MapCore, MapFlags, MapHandle};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `struct mlab_subflow_info` (src/bpf/mlab_info.h), field for field. Its layout is checked
/// here at compile time and against the C compiler's in a test (`host::info_layout`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawInfo {
    pub updated_ns: u64,
    pub srtt_us: u64,
    pub inter_loss: u64,
    /// The algorithm's alpha for this subflow: alpha_m * 2^alpha_e.
    pub alpha_m: u64,
    /// x_r in packets per microsecond: rate_m * 2^rate_e.
    pub rate_m: u64,
    /// Increase per acknowledged packet, Q40.
    pub inc_q: i64,
    pub alpha_e: i32,
    pub rate_e: i32,
    pub token: u32,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub n_subflows: u32,
    pub n_coupled: u32,
    pub sets: u32,
    /// IPv4 addresses in network byte order, as the kernel has them.
    pub saddr4: u32,
    pub daddr4: u32,
    pub saddr6: [u8; 16],
    pub daddr6: [u8; 16],
    /// Ports in host order.
    pub sport: u16,
    pub dport: u16,
    pub family: u16,
    pub ca_state: u8,
    pub algorithm: u8,
    pub alpha_sign: i32,
    pub self_index: u32,
    /// Thresholds and windows the program restored after a skipped callback.
    pub repairs: u32,
    pub pad: u32,
}

/// Size of `struct mlab_subflow_info`; checked against the map's value size.
pub const INFO_SIZE: usize = 144;

/// The offsets of `RawInfo`'s fields, in declaration order (what the C test compares).
pub const INFO_OFFSETS: [usize; 27] = [
    std::mem::offset_of!(RawInfo, updated_ns),
    std::mem::offset_of!(RawInfo, srtt_us),
    std::mem::offset_of!(RawInfo, inter_loss),
    std::mem::offset_of!(RawInfo, alpha_m),
    std::mem::offset_of!(RawInfo, rate_m),
    std::mem::offset_of!(RawInfo, inc_q),
    std::mem::offset_of!(RawInfo, alpha_e),
    std::mem::offset_of!(RawInfo, rate_e),
    std::mem::offset_of!(RawInfo, token),
    std::mem::offset_of!(RawInfo, cwnd),
    std::mem::offset_of!(RawInfo, ssthresh),
    std::mem::offset_of!(RawInfo, n_subflows),
    std::mem::offset_of!(RawInfo, n_coupled),
    std::mem::offset_of!(RawInfo, sets),
    std::mem::offset_of!(RawInfo, saddr4),
    std::mem::offset_of!(RawInfo, daddr4),
    std::mem::offset_of!(RawInfo, saddr6),
    std::mem::offset_of!(RawInfo, daddr6),
    std::mem::offset_of!(RawInfo, sport),
    std::mem::offset_of!(RawInfo, dport),
    std::mem::offset_of!(RawInfo, family),
    std::mem::offset_of!(RawInfo, ca_state),
    std::mem::offset_of!(RawInfo, algorithm),
    std::mem::offset_of!(RawInfo, alpha_sign),
    std::mem::offset_of!(RawInfo, self_index),
    std::mem::offset_of!(RawInfo, repairs),
    std::mem::offset_of!(RawInfo, pad),
];

// The layout the programs write: no padding the C compiler would place elsewhere.
const _: () = {
    assert!(std::mem::size_of::<RawInfo>() == INFO_SIZE);
    let expected = [
        0, 8, 16, 24, 32, 40, 48, 52, 56, 60, 64, 68, 72, 76, 80, 84, 88, 104, 120, 122, 124, 126,
        127, 128, 132, 136, 140,
    ];
    let mut i = 0;
    while i < expected.len() {
        assert!(INFO_OFFSETS[i] == expected[i]);
        i += 1;
    }
};

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
    /// signed; Balia: M / x_r; wVegas: its queue target in packets; EWTCP: its weight
    /// 1/n^2; fully coupled: 1, it has none).
    pub alpha: f64,
    /// x_r, packets per second.
    pub rate_pps: f64,
    /// Window increase per acknowledged packet in congestion avoidance.
    pub increase_per_packet: f64,
    /// OLIA: member of M (largest window), B (best path), C (collected).
    pub sets: String,
    pub inter_loss_bytes: u64,
    /// How often the program restored a threshold or window that a callback the kernel
    /// skipped left unset (docs/kernel-cc.md, "Skipped callbacks").
    pub repairs: u32,
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

impl RawInfo {
    /// The map value's bytes as the struct; None if it is not the struct's size.
    pub fn from_bytes(b: &[u8]) -> Option<RawInfo> {
        if b.len() != INFO_SIZE {
            return None;
        }
        // SAFETY: `b` holds exactly size_of::<RawInfo>() bytes, read unaligned; every field
        // is a plain integer or byte array, for which any bit pattern is a valid value.
        Some(unsafe { std::ptr::read_unaligned(b.as_ptr().cast::<RawInfo>()) })
    }

    pub fn to_bytes(&self) -> [u8; INFO_SIZE] {
        // SAFETY: RawInfo is plain data of exactly INFO_SIZE bytes with no padding (checked
        // at compile time above), so each of its bytes is initialised.
        unsafe { std::mem::transmute::<RawInfo, [u8; INFO_SIZE]>(*self) }
    }
}

/// Decodes one map value; None if it is not the expected size.
pub fn decode(b: &[u8]) -> Option<SubflowInfo> {
    let r = RawInfo::from_bytes(b)?;
    let mantissa = |m: u64, e: i32| m as f64 * 2f64.powi(e);
    let (local, remote) = if r.family == AF_INET6 {
        (
            IpAddr::V6(Ipv6Addr::from(r.saddr6)),
            IpAddr::V6(Ipv6Addr::from(r.daddr6)),
        )
    } else {
        // Stored as the kernel has them: network byte order.
        (
            IpAddr::V4(Ipv4Addr::from(r.saddr4.to_ne_bytes())),
            IpAddr::V4(Ipv4Addr::from(r.daddr4.to_ne_bytes())),
        )
    };
    let endpoint = |ip: IpAddr, port: u16| match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    };
    let algorithm = Algorithm::from_id(r.algorithm)
        .map(Algorithm::name)
        .unwrap_or("?");
    Some(SubflowInfo {
        algorithm,
        token: r.token,
        local: endpoint(local, r.sport),
        remote: endpoint(remote, r.dport),
        cwnd: r.cwnd,
        ssthresh: r.ssthresh,
        srtt_us: r.srtt_us,
        ca_state: ca_state_name(r.ca_state),
        subflows: r.n_subflows,
        coupled: r.n_coupled,
        alpha: mantissa(r.alpha_m, r.alpha_e) * if r.alpha_sign < 0 { -1.0 } else { 1.0 },
        rate_pps: mantissa(r.rate_m, r.rate_e) * 1e6,
        increase_per_packet: r.inc_q as f64 / INC_ONE,
        sets: sets_text(r.sets, r.self_index),
        inter_loss_bytes: r.inter_loss,
        repairs: r.repairs,
        updated_ns: r.updated_ns,
    })
}

/// The key of the entry that holds an algorithm's totals rather than a socket's state
/// (`MLAB_TOTALS_KEY` in mlab_kern.h: no socket has address 0).
const TOTALS_KEY: u64 = 0;

/// Whether a state map key is a socket's (every key but the totals').
pub(crate) fn is_socket_key(key: &[u8]) -> bool {
    key != TOTALS_KEY.to_ne_bytes()
}

/// An installed algorithm's state map, if it has the layout this build reads.
fn state_map(registry: &Registry, a: Algorithm) -> Option<MapHandle> {
    let map = MapHandle::from_pinned_path(registry.state_map_path(a)).ok()?;
    (map.value_size() as usize == INFO_SIZE).then_some(map)
}

/// Every socket's published state for one installed algorithm.
pub fn read(registry: &Registry, a: Algorithm) -> Vec<SubflowInfo> {
    let Some(map) = state_map(registry, a) else {
        return Vec::new();
    };
    map.keys()
        .filter(|k| is_socket_key(k))
        .filter_map(|k| map.lookup(&k, MapFlags::ANY).ok().flatten())
        .filter_map(|v| decode(&v))
        .collect()
}

/// How many thresholds and windows the installed algorithm has repaired since it was
/// loaded, over all sockets, closed ones included (0 if it is not installed).
pub fn repairs_total(registry: &Registry, a: Algorithm) -> u64 {
    state_map(registry, a)
        .and_then(|map| {
            map.lookup(&TOTALS_KEY.to_ne_bytes(), MapFlags::ANY)
                .ok()
                .flatten()
        })
        .and_then(|v| RawInfo::from_bytes(&v))
        .map_or(0, |r| u64::from(r.repairs))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rust_mirror_has_the_c_compilers_layout() {
        let c = crate::host::info_layout();
        assert_eq!(c[0] as usize, INFO_SIZE, "sizeof");
        let offsets: Vec<usize> = c[1..].iter().map(|&o| o as usize).collect();
        assert_eq!(offsets, INFO_OFFSETS.to_vec());
    }

    #[test]
    fn a_published_entry_decodes() {
        let raw = RawInfo {
            updated_ns: 7,
            srtt_us: 25_000,
            inter_loss: 3000,
            alpha_m: 3,
            alpha_e: -1,
            rate_m: 1,
            rate_e: -3,
            inc_q: -(1 << 38),
            token: 0xdead_beef,
            cwnd: 12,
            ssthresh: 6,
            n_subflows: 2,
            n_coupled: 2,
            sets: 0b0101 << 4,
            saddr4: u32::from_ne_bytes([10, 0, 0, 1]),
            daddr4: u32::from_ne_bytes([10, 0, 1, 2]),
            sport: 40000,
            dport: 5001,
            family: 2,
            ca_state: 3,
            algorithm: Algorithm::Olia.id(),
            alpha_sign: -1,
            self_index: 1,
            repairs: 2,
            ..RawInfo::default()
        };
        let bytes = raw.to_bytes();
        assert_eq!(RawInfo::from_bytes(&bytes), Some(raw));
        let info = decode(&bytes).expect("right size");
        assert_eq!(info.algorithm, "olia");
        assert_eq!(
            (info.local.as_str(), info.remote.as_str()),
            ("10.0.0.1:40000", "10.0.1.2:5001")
        );
        assert_eq!(
            (info.cwnd, info.ssthresh, info.ca_state),
            (12, 6, "recovery")
        );
        assert_eq!(info.alpha, -1.5);
        assert_eq!(info.rate_pps, 125_000.0);
        assert_eq!(info.increase_per_packet, -0.25);
        assert_eq!(info.sets, "MC");
        assert_eq!(info.repairs, 2);
        assert_eq!(decode(&bytes[1..]), None, "a value of another size");
    }
}
