//! Real hosts on this machine: the kernel backend (a scenario's hosts as network
//! namespaces, joined by the real-time emulator, with traffic agents on real TCP and MPTCP
//! sockets), and the namespaces, veth links and agents of the kernel tests and benchmarks.
//!
//! Everything created here carries the prefix `mlab-<pid>-`: a namespace, a bpffs
//! directory of a private congestion-control registry. [`cleanup::remove_leftovers`]
//! removes what a dead process left behind.

pub mod agent;
pub mod backend;
pub mod cgroup;
pub mod cleanup;
pub mod emu;
pub mod hosts;
pub mod ndiffports;
pub mod netlink;
pub mod netns;
pub mod network;
pub mod nstat;
pub mod plan;
pub mod received;
pub mod sockinfo;

pub use netns::{Netns, tbf, veth};
