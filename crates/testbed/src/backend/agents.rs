//! The traffic of one flow on real sockets: a sender in the source host's namespace that
//! follows the flow's traffic model, and a receiver in the destination's that counts what
//! the application reads. Both are threads of this process, so a run leaves no processes
//! behind, and they share counters with the sampler instead of printing reports.

use crate::agent::{is_transient, socket_for};
use crate::emu::Clock;
use crate::netns::Netns;
use anyhow::{Context, Result};
use measure::FlowSlot;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::spec::TrafficSpec;
use scenario::units::Size;
use socket2::SockAddr;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a blocked agent looks at the clock and the stop flag.
const POLL: Duration = Duration::from_millis(50);
/// Payload bytes of a packet, for sizes given in packets (as the simulator counts them).
const MSS: u64 = 1460;

#[derive(Clone, Debug)]
pub struct FlowPlan {
    pub slot: FlowSlot,
    pub to: SocketAddr,
    /// Local address of each subflow's path, in subflow order.
    pub sources: Vec<Ipv4Addr>,
    /// ndiffports: the server port of each subflow, in subflow order (its subflows share
    /// their addresses); empty otherwise, where a subflow is known by its local address.
    pub server_ports: Vec<u16>,
    /// Local address of each of the group's paths, best first (reconnects move along).
    pub paths: Vec<Ipv4Addr>,
    /// As registered with the kernel.
    pub cc: String,
    pub mptcp: bool,
    pub traffic: TrafficSpec,
    pub rcv_buffer: Option<Size>,
    pub reconnect_after: Option<u64>,
    /// The flow's own random stream from the layout every backend shares (after its start
    /// jitter): the on/off burst and idle times are drawn from it, as in the simulator.
    pub rng: Xoshiro256PlusPlus,
    /// MATCP: the threaded cgroup the sender joins, whose programs bind each of its
    /// connections to a path's address (the sender binds none itself).
    pub placed_by: Option<std::path::PathBuf>,
    /// Where the receiver counts what it reads per route (per-link goodput).
    pub received: Option<Arc<crate::received::ReceivedPerRoute>>,
}

/// What the agents of one flow share with the sampler.
#[derive(Default)]
pub struct FlowShared {
    /// Bytes the receiving application has read, over all connections of the flow.
    pub delivered: AtomicU64,
    /// Completion time of a finite transfer, ns after the flow's start (0: not yet).
    fct_ns: AtomicU64,
    /// The connection the receiver reads now, and the one the sender writes.
    pub receiving: Mutex<Option<Arc<TcpStream>>>,
    pub sending: Mutex<Option<Arc<TcpStream>>>,
}

/// Replaces what a shared slot holds (a poisoned lock only means another agent panicked).
fn set_slot(slot: &Mutex<Option<Arc<TcpStream>>>, value: Option<Arc<TcpStream>>) {
    *slot.lock().unwrap_or_else(|e| e.into_inner()) = value;
}

/// The connection in `slot` now (`FlowShared::sending` or `receiving`), if any.
pub fn current(slot: &Mutex<Option<Arc<TcpStream>>>) -> Option<Arc<TcpStream>> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

impl FlowShared {
    pub fn fct_s(&self) -> Option<f64> {
        match self.fct_ns.load(Ordering::Relaxed) {
            0 => None,
            ns => Some(ns as f64 / 1e9),
        }
    }
}

/// Closes with a reset (SO_LINGER 0) when the last handle goes, however it goes (the end of
/// a run, an error, the process exiting): an orphaned socket with unsent data would
/// otherwise retransmit for minutes into a network that is gone, holding its namespace and
/// its congestion control. Transfers that end on purpose shut down first (`finish`), so no
/// data is lost to the reset.
fn abort_on_close(stream: &TcpStream) {
    let _ = socket2::SockRef::from(stream).set_linger(Some(Duration::ZERO));
}

/// Listens on the flow's port and reads every connection the sender opens, to the end.
pub fn start_receiver(
    ns: &Netns,
    plan: FlowPlan,
    shared: Arc<FlowShared>,
    clock: Clock,
    stop: Arc<AtomicBool>,
) -> Result<JoinHandle<Result<()>>> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let handle = ns.thread(move || {
        let socket = socket_for(&plan.to, plan.mptcp)?;
        socket.set_reuse_address(true)?;
        if let Some(b) = plan.rcv_buffer {
            // The kernel doubles it for its own overhead: what is left is about the window.
            socket.set_recv_buffer_size((b.bytes(MSS) / 2).max(1) as usize)?;
        }
        socket
            .bind(&SockAddr::from(plan.to))
            .with_context(|| format!("binding {}", plan.to))?;
        socket.listen(64)?;
        // An MPTCP listener ignores SO_RCVTIMEO: wait for connections in poll(2) instead.
        socket.set_nonblocking(true)?;
        let listener: TcpListener = socket.into();
        let _ = ready_tx.send(());
        let file_size = match plan.traffic {
            TrafficSpec::File { size } => Some(size.bytes(MSS)),
            _ => None,
        };
        let mut readers = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
            let _ = poll(&mut fds, PollTimeout::from(POLL.as_millis() as u16));
            let (stream, peer) = match listener.accept() {
                Ok(c) => c,
                Err(e) if is_transient(&e) => continue,
                Err(e) => return Err(e).context("accepting a connection"),
            };
            abort_on_close(&stream);
            stream.set_nonblocking(false)?;
            stream.set_read_timeout(Some(POLL))?;
            let stream = Arc::new(stream);
            set_slot(&shared.receiving, Some(stream.clone()));
            let (shared, stop, start) = (shared.clone(), stop.clone(), plan.slot.start);
            let per_route = match (&plan.received, peer.ip(), stream.local_addr()?.ip()) {
                (Some(r), std::net::IpAddr::V4(p), std::net::IpAddr::V4(l)) => {
                    r.route(p, l).map(|route| (r.clone(), route))
                }
                _ => None,
            };
            readers.push(std::thread::spawn(move || {
                let count = Counting {
                    shared: &shared,
                    per_route,
                    clock,
                    start,
                    file_size,
                };
                read_all(&stream, &count, &stop)
            }));
        }
        for r in readers {
            let _ = r.join();
        }
        set_slot(&shared.receiving, None);
        Ok(())
    })?;
    ready_rx
        .recv_timeout(Duration::from_secs(10))
        .context("the receiver did not start listening")?;
    Ok(handle)
}

/// Where the bytes one connection delivers are counted.
struct Counting<'a> {
    shared: &'a FlowShared,
    /// The route of the connection, when the run counts per route.
    per_route: Option<(Arc<crate::received::ReceivedPerRoute>, u32)>,
    clock: Clock,
    start: u64,
    file_size: Option<u64>,
}

fn read_all(mut stream: &TcpStream, count: &Counting, stop: &AtomicBool) {
    let Counting {
        shared,
        clock,
        start,
        file_size,
        ..
    } = *count;
    let mut buf = vec![0u8; 1 << 17];
    while !stop.load(Ordering::Relaxed) {
        match stream.read(&mut buf) {
            Ok(0) => {
                // The sender's FIN: close our side too, which its `finish` waits for
                // before its next connection (the shared slot keeps this socket open
                // until the next one is accepted).
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return;
            }
            Ok(n) => {
                let total = shared.delivered.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
                if let Some((r, route)) = &count.per_route {
                    r.add(*route, clock.now(), n as u64);
                }
                if file_size.is_some_and(|s| total >= s) {
                    let _ = shared.fct_ns.compare_exchange(
                        0,
                        clock.now().saturating_sub(start).max(1),
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                }
            }
            Err(e) if is_transient(&e) => {}
            Err(_) => return,
        }
    }
}

/// Opens a connection from `from` with the flow's algorithm (unbound: MATCP's program binds
/// it in connect()).
fn connect(plan: &FlowPlan, from: Option<Ipv4Addr>, clock: Clock, until: u64) -> Result<TcpStream> {
    loop {
        let socket = socket_for(&plan.to, plan.mptcp)?;
        socket
            .set_tcp_congestion(plan.cc.as_bytes())
            .with_context(|| format!("TCP_CONGESTION {} (is it installed?)", plan.cc))?;
        if let Some(from) = from {
            socket
                .bind(&SockAddr::from(SocketAddr::new(from.into(), 0)))
                .with_context(|| format!("binding {from}"))?;
        }
        match socket.connect_timeout(&SockAddr::from(plan.to), Duration::from_secs(3)) {
            Ok(()) => {
                socket.set_write_timeout(Some(POLL))?;
                let stream: TcpStream = socket.into();
                abort_on_close(&stream);
                return Ok(stream);
            }
            // The receiver is up before any sender starts; a refusal or a timeout is the
            // network's (a link that is down): try again while the flow should run.
            Err(e) if clock.now() < until => {
                let _ = e;
                std::thread::sleep(POLL);
            }
            Err(e) => return Err(e).with_context(|| format!("connecting to {}", plan.to)),
        }
    }
}

/// Sleeps until `at`, waking to look at the stop flag; false if the run stopped first.
fn wait_until(clock: Clock, at: u64, stop: &AtomicBool) -> bool {
    while clock.now() < at {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        clock.sleep_until(at.min(clock.now() + POLL.as_nanos() as u64));
    }
    !stop.load(Ordering::Relaxed)
}

/// The end of a transfer: the receiver reads what is in flight and closes, or the run ends.
fn finish(mut stream: &TcpStream, stop: &AtomicBool) {
    if stream.shutdown(std::net::Shutdown::Write).is_err() {
        return;
    }
    let _ = stream.set_read_timeout(Some(POLL));
    let mut sink = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        match stream.read(&mut sink) {
            Ok(0) => return,
            Err(e) if !is_transient(&e) => return,
            _ => {}
        }
    }
}

/// Sends per the flow's traffic model, from its start to its stop.
pub fn start_sender(
    ns: &Netns,
    plan: FlowPlan,
    shared: Arc<FlowShared>,
    clock: Clock,
    stop: Arc<AtomicBool>,
) -> Result<JoinHandle<Result<()>>> {
    ns.thread(move || {
        if let Some(cgroup) = &plan.placed_by {
            crate::cgroup::join_thread(cgroup)?;
        }
        if !wait_until(clock, plan.slot.start, &stop) {
            return Ok(());
        }
        let end = plan.slot.stop;
        let running = || !stop.load(Ordering::Relaxed) && clock.now() < end;
        let mut rng = plan.rng.clone();
        let mut remaining = match plan.traffic {
            TrafficSpec::File { size } => size.bytes(MSS),
            _ => u64::MAX,
        };
        let mut path = 0usize;
        let chunk = vec![0x5au8; 1 << 16];
        while running() && remaining > 0 {
            // A burst of an on/off source ends at its own time; other sources at the stop.
            let burst_end = match plan.traffic {
                TrafficSpec::Onoff { burst, .. } => {
                    let d = Exp::new(1.0 / burst.secs().max(1e-9))?.sample(&mut rng);
                    clock.now() + (d * 1e9) as u64
                }
                _ => u64::MAX,
            };
            // MPTCP's initial subflow leaves by its first path; the path manager adds the
            // others. A TCP connection takes the path the application is on.
            let from = if plan.placed_by.is_some() {
                None
            } else if plan.mptcp {
                Some(plan.sources[0])
            } else {
                Some(plan.paths.get(path).copied().unwrap_or(plan.sources[0]))
            };
            let stream = match connect(&plan, from, clock, end) {
                Ok(s) => Arc::new(s),
                Err(_) if !running() => break,
                Err(e) => return Err(e),
            };
            set_slot(&shared.sending, Some(stream.clone()));
            let mut last_progress = clock.now();
            let mut gave_up = false;
            while running() && remaining > 0 && clock.now() < burst_end {
                let n = chunk.len().min(remaining.min(usize::MAX as u64) as usize);
                match (&*stream).write(&chunk[..n]) {
                    Ok(w) => {
                        remaining = remaining.saturating_sub(w as u64);
                        if w > 0 {
                            last_progress = clock.now();
                        }
                    }
                    Err(e) if is_transient(&e) => {}
                    Err(_) => break,
                }
                if plan
                    .reconnect_after
                    .is_some_and(|after| clock.now() - last_progress >= after)
                {
                    gave_up = true;
                    break;
                }
            }
            if !gave_up {
                finish(&stream, &stop);
            }
            set_slot(&shared.sending, None);
            drop(stream);
            if gave_up {
                // The application gives up on this connection and tries the next path.
                path = (path + 1) % plan.paths.len().max(1);
                continue;
            }
            if let TrafficSpec::Onoff { idle, .. } = plan.traffic {
                let d = Exp::new(1.0 / idle.secs().max(1e-9))?.sample(&mut rng);
                wait_until(clock, (clock.now() + (d * 1e9) as u64).min(end), &stop);
            }
        }
        Ok(())
    })
}
