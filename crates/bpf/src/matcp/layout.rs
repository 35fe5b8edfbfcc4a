//! `#[repr(C)]` mirrors of matcp_select.h's and matcp_state.h's structs: the value of the
//! pinned `matcp_state` map, written at install and read by `matcp status`. Plain integers
//! only, so any bytes decode; a test compares the layout with the C compiler's
//! (`host::state_layout`).

use super::MAX_PATHS;
use super::path::{FAMILY_IPV4, FAMILY_IPV6, PathAddrs};
use super::selector::Selector;
use std::net::{Ipv4Addr, Ipv6Addr};

/// `struct matcp_observation`: the Rust selectors' own, `#[repr(C)]`.
pub use matcp::Observation;

/// `struct matcp_path_state`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathState {
    pub measure: u64,
    pub measure_den: u64,
    pub min_rtt_ns: u64,
    pub rtt_ns: u64,
    pub measured: u32,
    pub pad: u32,
}

impl PathState {
    /// The measure the lowest-measure selectors compare (`None`: zero, not measured since
    /// the last refresh).
    pub fn measure(&self) -> Option<f64> {
        (self.measured != 0).then(|| self.measure as f64 / self.measure_den.max(1) as f64)
    }
}

/// `struct matcp_selection`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub selector: u32,
    pub n_paths: u32,
    pub refresh: u32,
    pub last: u32,
    pub in_a_row: u32,
    pub pad: u32,
    pub path: [PathState; MAX_PATHS],
}

/// No previous choice (MATCP_NO_PATH).
pub const NO_PATH: u32 = u32::MAX;

impl Selection {
    /// A fresh selector over `n_paths` paths; `refresh` R, `None` never.
    pub fn new(selector: Selector, n_paths: usize, refresh: Option<u32>) -> Selection {
        Selection {
            selector: selector.id(),
            n_paths: n_paths as u32,
            refresh: refresh.unwrap_or(0),
            last: NO_PATH,
            ..Selection::default()
        }
    }
}

/// `struct matcp_path_stats`: counts since install.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathStats {
    pub choices: u64,
    pub connections: u64,
    pub retransmits: u64,
    pub segments_sent: u64,
    pub timeouts: u64,
    pub last_srtt_us: u64,
    pub last_rttvar_us: u64,
    pub last_ended_ns: u64,
}

/// `struct matcp_state`, the one value of the `matcp_state` map.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct State {
    /// struct bpf_spin_lock; the kernel zeroes it in copies to and from user space.
    pub lock: u32,
    /// IPv4 addresses in network order, as the programs compare them with the socket's.
    pub addr4: [u32; MAX_PATHS],
    pub bind_errors: u32,
    /// SO_NETNS_COOKIE of the namespace the paths' addresses belong to; 0: any.
    pub netns_cookie: u64,
    pub sel: Selection,
    pub stats: [PathStats; MAX_PATHS],
    /// snd_cwnd_clamp of every placed connection, in segments; 0: none.
    pub cwnd_clamp: u32,
    /// `path::FAMILY_*` bits: which of `addr4` and `addr6` the paths have.
    pub families: u32,
    /// IPv6 addresses, network order (`u32 addr6[8][4]` in C).
    pub addr6: [[u8; 16]; MAX_PATHS],
}

impl State {
    /// A fresh state over `paths`, which have the same families (`Config::validate`).
    pub fn new(
        selector: Selector,
        paths: &[PathAddrs],
        refresh: Option<u32>,
        netns_cookie: u64,
    ) -> State {
        let mut s = State {
            netns_cookie,
            sel: Selection::new(selector, paths.len(), refresh),
            families: paths.first().map_or(0, PathAddrs::families),
            ..State::default()
        };
        for (i, path) in paths.iter().take(MAX_PATHS).enumerate() {
            if let Some(a) = path.v4 {
                s.addr4[i] = u32::from_ne_bytes(a.octets());
            }
            if let Some(a) = path.v6 {
                s.addr6[i] = a.octets();
            }
        }
        s
    }

    pub fn selector(&self) -> Option<Selector> {
        Selector::from_id(self.sel.selector)
    }

    /// The configured paths' addresses, in order.
    pub fn paths(&self) -> Vec<PathAddrs> {
        let has = |family: u32| self.families & family != 0;
        (0..(self.sel.n_paths as usize).min(MAX_PATHS))
            .map(|i| PathAddrs {
                v4: has(FAMILY_IPV4).then(|| Ipv4Addr::from(self.addr4[i].to_ne_bytes())),
                v6: has(FAMILY_IPV6).then(|| Ipv6Addr::from(self.addr6[i])),
            })
            .collect()
    }

    pub fn refresh(&self) -> Option<u32> {
        (self.sel.refresh != 0).then_some(self.sel.refresh)
    }

    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: a repr(C) struct of integers without padding holes the compiler could
        // leave uninitialised (every field is u32, u64 or bytes, and the u32s come in pairs
        // or before a u32; `host::state_layout` checks the size), viewed for its own
        // lifetime.
        unsafe {
            std::slice::from_raw_parts(
                (self as *const State).cast::<u8>(),
                std::mem::size_of::<State>(),
            )
        }
    }

    /// The map value as the kernel returns it; `None` if the size is not ours.
    pub fn from_bytes(bytes: &[u8]) -> Option<State> {
        (bytes.len() == std::mem::size_of::<State>()).then(|| {
            // SAFETY: the length is checked, every bit pattern is a valid State (integers
            // only), and read_unaligned makes no assumption about the buffer's alignment.
            unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<State>()) }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_come_back_with_their_families() {
        let paths: Vec<PathAddrs> = ["10.7.1.1+fd00:7:1::1", "10.7.2.1+fd00:7:2::1"]
            .iter()
            .map(|p| p.parse().unwrap())
            .collect();
        let state = State::new(Selector::Rtt, &paths, None, 0);
        assert_eq!(state.families, FAMILY_IPV4 | FAMILY_IPV6);
        assert_eq!(State::from_bytes(state.as_bytes()).unwrap().paths(), paths);
        // Network order, as the programs compare them with the sockets' addresses.
        assert_eq!(state.addr4[1].to_ne_bytes(), [10, 7, 2, 1]);
        assert_eq!(state.addr6[0][..2], [0xfd, 0x00]);
        let only6 = [PathAddrs::from("fd00:7:1::1".parse::<Ipv6Addr>().unwrap())];
        let state = State::new(Selector::Rtt, &only6, None, 0);
        assert_eq!(
            (state.families, state.paths()),
            (FAMILY_IPV6, only6.to_vec())
        );
    }
}
