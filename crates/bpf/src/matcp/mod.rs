//! MATCP (Dimopoulos, Zeephongsekul and Tari, "Multipath Aware TCP", ISCC 2006) on a stock
//! kernel: `cgroup/connect4` and `cgroup/connect6` programs place each new TCP connection
//! of a cgroup on one of the host's uplinks by binding its source address (IPv4 or IPv6),
//! and a `sockops` program keeps each path's statistics across connections
//! (`src/bpf/matcp.bpf.c`).
//!
//! - [`path`]: a path's source addresses (one IPv4, one IPv6, or one of each).
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
pub mod path;
pub mod selector;

pub use error::MatcpError;
pub use install::{Config, Installation, Matcp};
pub use layout::{PathStats, State};
pub use path::PathAddrs;
pub use selector::Selector;

/// Paths a selector chooses among at most (MATCP_MAX_PATHS).
pub const MAX_PATHS: usize = 8;
