//! MATCP (Dimopoulos, Zeephongsekul and Tari, "Multipath Aware TCP", ISCC 2006) on a stock
//! kernel: a `cgroup/connect4` program places each new TCP connection of a cgroup on one of
//! the host's uplinks by binding its source address, and a `sockops` program keeps each
//! path's statistics across connections (`src/bpf/matcp.bpf.c`).
//!
//! - [`selector`]: the selectors by name, as the scenarios and `crates/matcp` have them.
//! - [`layout`]: the pinned state map's value, mirrored from `matcp_state.h`.
//! - [`host`]: the selection arithmetic (`matcp_select.h`) compiled for the host, for tests
//!   against `crates/matcp`.
//! - [`install`]: load, attach to a cgroup and pin (so the programs outlive the command);
//!   read the state; remove.

pub mod error;
pub mod host;
pub mod install;
pub mod layout;
pub mod selector;

pub use error::MatcpError;
pub use install::{Config, Installation, Matcp};
pub use layout::{PathStats, State};
pub use selector::Selector;

/// Paths a selector chooses among at most (MATCP_MAX_PATHS).
pub const MAX_PATHS: usize = 8;
