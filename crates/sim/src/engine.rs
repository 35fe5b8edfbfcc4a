//! The simulator's events. The queue is the fabric's (`net::EventQueue`): integer
//! nanosecond time, events due at the same time in the order they were scheduled, so a run
//! is a pure function of its inputs and seed.

use crate::ids::{ConnId, FlowId};

/// Which endpoint of a connection a timer belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Client = 0,
    Server = 1,
}

/// Kept to 8 bytes (queue entries of 24), since every packet-hop pushes and pops one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// The head of a link direction's pipe reaches the far end (in `Lane::Links`).
    LinkArrive(u32),
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
    /// A host with jitter lets its next packet on an interface go (the direction leaving
    /// it): see `jitter`.
    HostSend(u32),
}

pub type EventQueue = net::EventQueue<Ev>;

const _: () = assert!(std::mem::size_of::<Ev>() == 8);
