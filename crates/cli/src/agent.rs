//! `mptcp-lab agent send|recv`: the traffic agents of `testbed`, run inside namespaces.

use anyhow::Result;
use clap::Subcommand;
use std::net::SocketAddr;
use std::time::Duration;
use testbed::agent::{self, SendOptions};

#[derive(Subcommand)]
pub enum Role {
    /// Accept connections and count what arrives, sampled over time.
    Recv {
        #[arg(long)]
        listen: SocketAddr,
        #[arg(long)]
        mptcp: bool,
        /// Connections to serve before exiting.
        #[arg(long, default_value_t = 1)]
        connections: usize,
        /// Byte-count sampling period.
        #[arg(long, default_value_t = 100)]
        sample_ms: u64,
    },
    /// Connect and send as fast as the connection takes it.
    Send {
        #[arg(long)]
        to: SocketAddr,
        #[arg(long)]
        mptcp: bool,
        /// Congestion control (TCP_CONGESTION).
        #[arg(long)]
        cc: Option<String>,
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// Local address to send from.
        #[arg(long)]
        bind: Option<std::net::IpAddr>,
        /// TCP_INFO sampling period (0: none).
        #[arg(long, default_value_t = 0)]
        trace_ms: u64,
    },
}

pub fn run(role: Role) -> Result<bool> {
    let report = match role {
        Role::Recv {
            listen,
            mptcp,
            connections,
            sample_ms,
        } => agent::recv(listen, mptcp, connections, Duration::from_millis(sample_ms))?,
        Role::Send {
            to,
            mptcp,
            cc,
            seconds,
            bind,
            trace_ms,
        } => agent::send(&SendOptions {
            to,
            mptcp,
            cc,
            seconds,
            bind,
            trace_ms,
        })?,
    };
    println!("{report}");
    Ok(true)
}
