//! A connection as two sans-I/O endpoints, in the shape of quinn-proto's `Connection`: each
//! takes packets and timeouts with the current time (`handle_packet`, `handle_timeout`) and
//! hands back the packets to send (`poll_transmit`) and its next deadline (`poll_timeout`).
//! All timers of an endpoint live in one table. The endpoints never see a clock, a link or
//! an event queue, so they can be driven packet by packet in tests.
//!
//! The client opens the connection and sends data (iperf3's default direction); the server
//! accepts subflows and receives. Plain TCP is the one-subflow case of the same code.

mod client;
#[cfg(feature = "data-timer-trace")]
mod data_timer_trace;
mod server;
mod subflow;
pub mod timers;

pub use client::Client;
pub use server::{Server, ServerEvent};
pub use subflow::{ClientSubflow, SubflowState};

use crate::tcp::receive_window::ReceiveBuffer;
use net::RouteId;
use scenario::spec::SchedulerKind;

/// The routes of one subflow: data from client to server, and ACKs back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path {
    pub fwd: RouteId,
    pub rev: RouteId,
}

/// What both endpoints of a connection are configured with.
#[derive(Clone, Debug)]
pub struct ConnConfig {
    /// MPTCP (subflows joined after the first), or plain TCP.
    pub mptcp: bool,
    pub sack: bool,
    pub delayed_ack: bool,
    /// The largest window the sender may use, segments (`u64::MAX`: none).
    pub cwnd_clamp: u64,
    pub scheduler: SchedulerKind,
    /// `net.mptcp.stale_loss_cnt`: see `mptcp::stale`.
    pub stale_loss_cnt: u8,
    /// The receiver's buffer: shared by all subflows of an MPTCP connection.
    pub rcv_buffer: ReceiveBuffer,
    /// Payload bytes the application writes; `u64::MAX` for a source that never stops.
    pub total_bytes: u64,
}
