//! MATCP's selection arithmetic (`src/bpf/matcp_select.h`) compiled for the host: the
//! same header and integer code as in the `cgroup/connect4`, `cgroup/connect6` and `sockops`
//! programs, for tests against the Rust selectors of `crates/matcp`.

use super::layout::{Observation, Selection};

unsafe extern "C" {
    fn matcp_host_choose(s: *mut Selection, draw: u32) -> u32;
    fn matcp_host_observe(s: *mut Selection, path: u32, o: *const Observation);
    fn matcp_host_weighted_threshold(s: *const Selection, x: u32) -> u64;
    fn matcp_host_state_layout(out: *mut u32, n: u32) -> u32;
}

/// The path of a new connection for the uniform draw `draw` / 2^32.
pub fn choose(s: &mut Selection, draw: u32) -> u32 {
    // SAFETY: a live, exclusively borrowed value of the C layout.
    unsafe { matcp_host_choose(s, draw) }
}

/// What a connection on `path` measured.
pub fn observe(s: &mut Selection, path: u32, o: &Observation) {
    // SAFETY: as in `choose`; `o` is only read.
    unsafe { matcp_host_observe(s, path, o) }
}

/// Weighted RTT: the draw chooses the first path whose threshold it is below.
pub fn weighted_threshold(s: &Selection, x: u32) -> u64 {
    // SAFETY: only read.
    unsafe { matcp_host_weighted_threshold(s, x) }
}

/// sizeof(struct matcp_state), then the offsets and sizes listed in matcp_host.c.
pub fn state_layout() -> Vec<u32> {
    let mut out = vec![0u32; 32];
    // SAFETY: the C code writes at most `n` entries.
    let len = unsafe { matcp_host_state_layout(out.as_mut_ptr(), out.len() as u32) };
    out.truncate(len as usize);
    out
}
