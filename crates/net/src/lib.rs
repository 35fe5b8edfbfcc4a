//! The network shared by the simulator and the real-time emulator. The link model
//! (`link`, `aqm`): serialisation at the link rate, propagation delay, a queue (drop-tail or
//! RED), random loss, and scheduled changes (down/up, rate, delay, loss). The fabric
//! (`fabric`): every link of a scenario, the route table and the routing header. And what
//! both backends must agree on to give the same run for the same seed: one derivation of
//! random streams (`seeds`), one layout of flow start times (`layout`) and one ordering of
//! events due at the same time (`queue`). It knows nothing of TCP and never reads a clock:
//! callers pass the current time in nanoseconds, from a simulated or a monotonic clock.

mod aqm;
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
