//! Real hosts on this machine for the kernel tests, benchmarks and (next) the kernel
//! backend: network namespaces joined by veth links, traffic agents with real TCP and
//! MPTCP sockets, and clean-up that survives crashes.
//!
//! Everything created here carries the prefix `mlab-<pid>-`: a namespace, a bpffs
//! directory of a private congestion-control registry. [`cleanup::remove_leftovers`]
//! removes what a dead process left behind.

pub mod agent;
pub mod backend;
pub mod cleanup;
pub mod netns;

pub use netns::{Netns, tbf, veth};
pub mod emu;
pub mod hosts;
pub mod netlink;
pub mod network;
pub mod plan;
pub mod sockinfo;
