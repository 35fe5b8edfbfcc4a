//! LIA, OLIA, Balia, wVegas, EWTCP and fully coupled as eBPF `struct_ops` congestion
//! controls for the stock Linux kernel's MPTCP, and the commands that manage them
//! (`mptcp-lab cc ...`).
//!
//! - `src/bpf/`: the programs. `mlab_math.h` holds all the arithmetic, shared with the host
//!   copy in [`host`] that tests check against the Rust reference (`mptcp-cc`).
//! - [`registry`]: install (register and pin, so the algorithm outlives the command), list,
//!   remove.
//! - [`state`]: the coupling state each program publishes per subflow, for `cc show`.
//! - [`system`]: what the kernel must offer, with a clear error when it does not.
//! - [`matcp`]: MATCP's path selection per TCP connection (`cgroup/connect4`,
//!   `cgroup/connect6` and `sockops`).

pub mod algorithm;
pub mod error;
pub mod host;
pub mod matcp;
pub mod registry;
pub mod state;
pub mod system;

pub use algorithm::Algorithm;
pub use error::CcError;
pub use registry::{Installed, Registry, Status};
pub use state::{Connection, SubflowInfo};
