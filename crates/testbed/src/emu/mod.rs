//! The real-time emulator: packets read from the hosts' TUN devices cross the scenario's
//! links (the `net` link model: serialisation, propagation, queue, loss, scheduled changes)
//! hop by hop, routers being nodes of the emulator, and are written into the destination
//! host's device when they reach it. One thread, one monotonic clock in nanoseconds.

pub mod clock;
mod engine;
pub mod frame;
mod stats;
pub mod tun;

pub use clock::Clock;
pub use engine::{EmuConfig, Emulator};
pub use stats::{
    EmuReport, LATE_BOUND_NS, LATE_FRACTION_BOUND, Lateness, OWN_LOSS_BOUND, OwnLoss, RedLog,
    assess,
};
