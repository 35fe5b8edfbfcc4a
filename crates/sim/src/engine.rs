//! The simulator's events. The queue is the fabric's (`net::EventQueue`): integer
//! nanosecond time, events due at the same time in the order they were scheduled, so a run
//! is a pure function of its inputs and seed.

use crate::ids::{ConnId, FlowId};
use net::LinkWake;

/// Which endpoint of a connection a timer belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Client = 0,
    Server = 1,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A link direction's transmission ends or its pipe delivers.
    Link(LinkWake),
    /// The earliest timer of a connection's endpoint may be due.
    Timeout(ConnId, End),
    /// A flow starts (or starts its next burst).
    FlowStart(FlowId),
    /// An on/off flow's burst ends.
    BurstEnd(FlowId),
    /// A flow's stop time.
    FlowStop(FlowId),
    /// A scenario event (index into the scenario's events).
    Scenario(u32),
    /// Periodic measurement: goodput bins, reconnect checks.
    Sample,
    /// Periodic window, RTT and queue traces.
    Trace,
    /// End of the warm-up: counters are snapshotted.
    Warmup,
}

pub type EventQueue = net::EventQueue<Ev>;
