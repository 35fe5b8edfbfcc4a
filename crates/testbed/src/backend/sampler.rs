//! The run's measuring loop: at every tick, the bytes each receiving application read since
//! the last tick and those that arrived on each subflow; at every trace time, each
//! subflow's window and RTT as the sending kernel has them.

use super::agents::{FlowPlan, FlowShared, current};
use crate::emu::Clock;
use crate::network::Network;
use crate::sockinfo::{mptcp_subflows, tcp_info};
use anyhow::{Result, bail};
use measure::{FlowMeter, ReceiverSegments};
use net::Nanos;
use scenario::Scenario;
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::ops::Add;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The sampling tick: goodput bins are whole multiples of it.
const TICK: Nanos = 100_000_000;
/// TCP_INFO's state of an established connection.
const TCP_ESTABLISHED: u8 = 1;

/// The window/RTT trace period (the goodput interval if the scenario names none), a whole
/// number of ticks.
pub fn trace_interval(sc: &Scenario) -> Nanos {
    let t = sc
        .measure
        .trace_interval
        .unwrap_or(sc.measure.interval)
        .nanos();
    (t / TICK).max(1) * TICK
}

/// Per flow, what the previous tick saw.
#[derive(Default)]
struct Seen {
    delivered: u64,
    /// The receiving connection, and the bytes each of its subflows (by the sender's
    /// address and port: a subflow that is replaced starts again from zero) had received.
    receiving: usize,
    subflow_bytes: HashMap<SocketAddrV4, u64>,
    /// An MPTCP connection of this flow was seen running as plain TCP.
    fallen_back: bool,
    /// What the flow's sending connections sent again.
    resent: OverConnections<Resent>,
    /// The most subflows a receiving connection of this flow had at once.
    most_subflows: usize,
    /// What the flow's receiving connections sent and received, and all of it when the
    /// warm-up ended.
    received: OverConnections<ReceiverSegments>,
    received_at_warmup: Option<ReceiverSegments>,
}

/// Counters the kernel keeps per socket, read again and again.
trait Counts: Copy + Default + Add<Output = Self> {
    /// Each count at its larger of two readings.
    fn highest(self, o: Self) -> Self;
}

/// Counts kept over a flow's successive connections: the one read last, at its highest
/// readings (a subflow that closes takes its counts with it), and the earlier ones as
/// last read (what a connection did in its last tick is missed).
#[derive(Default)]
struct OverConnections<T> {
    conn: usize,
    current: T,
    earlier: T,
}

impl<T: Counts> OverConnections<T> {
    /// Connection `conn` (its address: a new one means the source reconnected) reads `now`.
    fn read(&mut self, conn: usize, now: T) {
        if self.conn != conn {
            self.conn = conn;
            self.earlier = self.earlier + std::mem::take(&mut self.current);
        }
        self.current = self.current.highest(now);
    }

    fn total(&self) -> T {
        self.earlier + self.current
    }
}

/// What a flow's sending connection sent again.
#[derive(Clone, Copy, Default)]
struct Resent {
    /// Payload bytes sent again at the data level (MPTCP only).
    reinjected: u64,
    /// Segments sent again at the TCP level, over all subflows (`tcpi_total_retrans`).
    segments: u64,
}

impl Add for Resent {
    type Output = Resent;
    fn add(self, o: Resent) -> Resent {
        Resent {
            reinjected: self.reinjected + o.reinjected,
            segments: self.segments + o.segments,
        }
    }
}

impl Counts for Resent {
    fn highest(self, o: Resent) -> Resent {
        Resent {
            reinjected: self.reinjected.max(o.reinjected),
            segments: self.segments.max(o.segments),
        }
    }
}

impl Counts for ReceiverSegments {
    fn highest(self, o: ReceiverSegments) -> ReceiverSegments {
        ReceiverSegments::highest(self, o)
    }
}

/// What sampling found besides the measurements: the MPTCP flows (by index) one of whose
/// connections fell back to TCP, and the ndiffports flows (by index) that never had all
/// their subflows, with the most they had.
pub struct Sampled {
    pub fallen_back: Vec<usize>,
    pub short_of_subflows: Vec<(usize, usize)>,
}

#[allow(clippy::too_many_arguments)]
pub fn sample(
    sc: &Scenario,
    plans: &[FlowPlan],
    shared: &[Arc<FlowShared>],
    meter: &mut FlowMeter,
    clock: Clock,
    interrupted: &AtomicBool,
    net: &Network,
    progress: &mut impl FnMut(f64),
) -> Result<Sampled> {
    if !sc.measure.interval.nanos().is_multiple_of(TICK) {
        bail!(
            "the kernel backend samples every {} ms: measure.interval must be a multiple of it (it is {})",
            TICK / 1_000_000,
            sc.measure.interval
        );
    }
    let end = sc.duration.nanos();
    let warmup = sc.measure.warmup.nanos();
    let trace = trace_interval(sc);
    let mut seen: Vec<Seen> = plans.iter().map(|_| Seen::default()).collect();
    let mut tick = TICK;
    while tick <= end {
        clock.sleep_until(tick);
        if interrupted.load(Ordering::Relaxed) {
            bail!("interrupted");
        }
        if !net.running() {
            bail!("the emulator stopped early");
        }
        // Bytes read since the last tick belong to the interval that ends now.
        let at = tick - 1;
        for (i, (p, s)) in plans.iter().zip(shared).enumerate() {
            let d = s.delivered.load(Ordering::Relaxed);
            meter.delivered(at, i, d - seen[i].delivered);
            seen[i].delivered = d;
            if p.mptcp {
                subflow_deliveries(meter, at, i, p, s, &mut seen[i]);
            }
            resends(p, s, &mut seen[i]);
            receiver_segments(p, s, &mut seen[i]);
            if tick >= warmup {
                let received = seen[i].received.total();
                seen[i].received_at_warmup.get_or_insert(received);
            }
        }
        if tick.is_multiple_of(trace) {
            let table: Vec<Vec<(f32, f32)>> = plans
                .iter()
                .zip(shared)
                .zip(&mut seen)
                .map(|((p, s), seen)| windows(p, s, seen))
                .collect();
            meter.trace(tick, |i, k| {
                table[i].get(k).copied().unwrap_or((f32::NAN, f32::NAN))
            });
        }
        progress(tick as f64 / end as f64);
        tick += TICK;
    }
    for (i, p) in plans.iter().enumerate() {
        let resent = seen[i].resent.total();
        if p.mptcp {
            meter.reinjected(i, resent.reinjected);
        }
        meter.retransmitted_segments(i, resent.segments);
        if let Some(warm) = seen[i].received_at_warmup {
            meter.receiver_segments(i, seen[i].received.total().since(warm));
        }
    }
    Ok(Sampled {
        fallen_back: (0..plans.len()).filter(|&i| seen[i].fallen_back).collect(),
        short_of_subflows: (0..plans.len())
            .filter(|&i| {
                let most = seen[i].most_subflows;
                !seen[i].fallen_back && most > 0 && most < plans[i].server_ports.len()
            })
            .map(|i| (i, seen[i].most_subflows))
            .collect(),
    })
}

/// Reads what the flow's sending connection has sent again so far, at the TCP level and
/// (MPTCP) at the data level.
fn resends(plan: &FlowPlan, shared: &FlowShared, seen: &mut Seen) {
    let Some(conn) = current(&shared.sending) else {
        return;
    };
    let now = if plan.mptcp {
        let subflows = mptcp_subflows(conn.as_raw_fd());
        Resent {
            reinjected: subflows.reinjected_bytes().unwrap_or(0),
            segments: subflows
                .subflows
                .iter()
                .map(|sf| u64::from(sf.info.tcpi_total_retrans))
                .sum(),
        }
    } else {
        let Some(info) = tcp_info(conn.as_raw_fd()) else {
            return;
        };
        Resent {
            reinjected: 0,
            segments: u64::from(info.tcpi_total_retrans),
        }
    };
    seen.resent.read(Arc::as_ptr(&conn) as usize, now);
}

/// Reads what the flow's receiving connection has sent (ACKs) and received (data segments)
/// so far, over its subflows.
fn receiver_segments(plan: &FlowPlan, shared: &FlowShared, seen: &mut Seen) {
    let of = |i: &libc::tcp_info| ReceiverSegments {
        sent: u64::from(i.tcpi_segs_out),
        data_received: u64::from(i.tcpi_data_segs_in),
    };
    let Some(conn) = current(&shared.receiving) else {
        return;
    };
    let now = if plan.mptcp {
        let mut sum = ReceiverSegments::default();
        for sf in mptcp_subflows(conn.as_raw_fd()).subflows {
            sum += of(&sf.info);
        }
        sum
    } else {
        tcp_info(conn.as_raw_fd())
            .map(|i| of(&i))
            .unwrap_or_default()
    };
    seen.received.read(Arc::as_ptr(&conn) as usize, now);
}

/// Bytes that arrived on each subflow of the flow's receiving connection since last time.
fn subflow_deliveries(
    meter: &mut FlowMeter,
    at: Nanos,
    flow: usize,
    plan: &FlowPlan,
    shared: &FlowShared,
    seen: &mut Seen,
) {
    let conn = current(&shared.receiving);
    let Some(conn) = conn else { return };
    let id = Arc::as_ptr(&conn) as usize;
    if seen.receiving != id {
        seen.receiving = id;
        seen.subflow_bytes.clear();
    }
    let now = mptcp_subflows(conn.as_raw_fd());
    seen.fallen_back |= now.fallen_back;
    seen.most_subflows = seen.most_subflows.max(now.subflows.len());
    // A connection that fell back is its first subflow, whose bytes count as such.
    for sf in now.subflows {
        // At the receiver, a subflow's remote address is the sender's interface, and its
        // local port the server port it joined.
        let (Some(remote), Some(local)) = (sf.remote, sf.local) else {
            continue;
        };
        let Some(k) = subflow_index(plan, *remote.ip(), local.port()) else {
            continue;
        };
        let now = sf.info.tcpi_bytes_received;
        let before = seen.subflow_bytes.entry(remote).or_insert(0);
        if now > *before {
            meter.subflow_received(at, flow, k, now - *before);
            *before = now;
        }
    }
}

/// The subflow of `plan` with this client address and server port: by the port for
/// ndiffports (whose subflows share their addresses), by the address otherwise.
fn subflow_index(plan: &FlowPlan, client: Ipv4Addr, server_port: u16) -> Option<usize> {
    if plan.server_ports.is_empty() {
        plan.sources.iter().position(|&a| a == client)
    } else {
        plan.server_ports.iter().position(|&p| p == server_port)
    }
}

/// (window in packets, smoothed RTT in ms) of each subflow of the flow's sending
/// connection; NaN where a subflow is not established.
fn windows(plan: &FlowPlan, shared: &FlowShared, seen: &mut Seen) -> Vec<(f32, f32)> {
    let mut out = vec![(f32::NAN, f32::NAN); plan.sources.len()];
    let conn = current(&shared.sending);
    let Some(conn) = conn else { return out };
    let sample = |i: &libc::tcp_info| (i.tcpi_snd_cwnd as f32, i.tcpi_rtt as f32 / 1000.0);
    if plan.mptcp {
        let now = mptcp_subflows(conn.as_raw_fd());
        seen.fallen_back |= now.fallen_back;
        for sf in now.subflows {
            if sf.info.tcpi_state != TCP_ESTABLISHED {
                continue;
            }
            let (Some(local), Some(remote)) = (sf.local, sf.remote) else {
                continue;
            };
            if let Some(k) = subflow_index(plan, *local.ip(), remote.port()) {
                out[k] = sample(&sf.info);
            }
        }
    } else if let Some(i) = tcp_info(conn.as_raw_fd())
        && i.tcpi_state == TCP_ESTABLISHED
        && let Some(first) = out.first_mut()
    {
        *first = sample(&i);
    }
    out
}
