//! The network shared by the simulator and the real-time emulator. The link model
//! (`link`, `aqm`): serialisation at the link rate, propagation delay, a queue (drop-tail or
//! RED), random loss, and scheduled changes (down/up, rate, delay, loss). The fabric
//! (`fabric`): every link of a scenario, the route table and the routing header. And what
//! both backends must agree on to give the same run for the same seed: one derivation of
//! random streams (`seeds`), one layout of flow start times (`layout`) and one ordering of
//! events due at the same time (`queue`), one addressing of hosts and one form of link
//! captures (`capture`). It knows nothing of TCP and never reads a clock:
//! callers pass the current time in nanoseconds, from a simulated or a monotonic clock.

mod aqm;
pub mod capture;
pub mod draws;
pub mod fabric;
pub mod layout;
mod link;
pub mod paths;
pub mod queue;
pub mod seeds;

pub use aqm::{Aqm, AqmParams};
pub use fabric::{Fabric, Forwarded, RouteId, Routed, RoutingHeader};
pub use link::{Arrival, DropReason, Enqueued, LinkDir, LinkParams, LinkStats};
pub use queue::EventQueue;

/// Asks the CPU to start loading `value`'s cache line, to be read a few events later: a
/// hint that changes no result. (Each packet-hop reads state, the next packet in a pipe
/// and its connection, that was last touched thousands of packets ago.)
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    prefetch_address((value as *const T).cast());
}

/// [`prefetch`] for every cache line `value` spans: a struct of several lines whose
/// fields are read together.
#[inline(always)]
pub fn prefetch_lines<T>(value: &T) {
    const LINE: usize = 64;
    let start = (value as *const T).cast::<u8>();
    let offset = start as usize % LINE;
    let first_line = start.wrapping_sub(offset);
    for k in 0..(offset + std::mem::size_of::<T>()).div_ceil(LINE) {
        prefetch_address(first_line.wrapping_add(k * LINE));
    }
}

#[inline(always)]
fn prefetch_address(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Time in nanoseconds; the caller's clock.
pub type Nanos = u64;

/// What the link needs to know about a packet.
pub trait Packet {
    /// Bytes on the wire (headers included): what serialisation and byte limits count.
    fn wire_bytes(&self) -> u32;
}

/// Serialisation time of `bytes` at `rate_bps`, rounded up to whole nanoseconds.
pub fn tx_time(bytes: u32, rate_bps: u64) -> Nanos {
    (bytes as u64 * 8 * 1_000_000_000).div_ceil(rate_bps)
}
