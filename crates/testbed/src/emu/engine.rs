//! The forwarding loop.
//!
//! Every packet read from a host's device gets the route of its (source, destination)
//! address pair and enters the first link at the time it was read. The links, routes and
//! routing header are the simulator's fabric (`net::Fabric`), with the same random streams
//! per link for the same seed, and wake-ups are kept in the same event queue
//! (`net::EventQueue`, equal times in scheduling order). Each wake-up is handled at the
//! time the link model gave, not the (slightly later) time the loop got to it, so lateness
//! never accumulates along a path. Only the final write into the destination's device
//! happens "now"; how late that is, is the emulator's timing error.
//!
//! The loop sleeps in ppoll(2) until the next wake-up or a readable device, with the
//! thread's timer slack set to 1 ns (the default 50 us would be most of our error budget).
//! Readable devices are drained in batches.

use super::clock::Clock;
use super::frame::{Frame, MAX_FRAME, Pool, ipv4_endpoints};
use super::stats::{EmuReport, LATE_BOUND_NS, Lateness, RedLog, Stalls};
use super::tun::{DeviceDrops, Tun, truncated};
use crate::plan::Plan;
use anyhow::{Context, Result};
use measure::LinkMeter;
use net::capture::Capture;
use net::{AqmParams, Arrival, DropReason, EventQueue, Fabric, Forwarded, Nanos, RouteId};
use scenario::Scenario;
use scenario::model::{DirId, NodeId};
use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Packets read from one device before the loop looks at the others and the clock.
const READ_BATCH: usize = 64;
/// Longest sleep, so that a stop request is seen promptly.
const MAX_SLEEP: Nanos = 5_000_000;
/// A sleeping thread wakes up late: tens of microseconds at real-time priority, hundreds
/// without (more on a busy virtual machine). The loop sleeps until this long before the
/// next wake-up and polls the devices without sleeping from there. Spinning at real-time
/// priority takes a core from the hosts' own threads, so the window is kept short there.
const SPIN_REALTIME: Nanos = 50_000;
const SPIN_NORMAL: Nanos = 300_000;

pub struct EmuConfig {
    pub seed: u64,
    /// Links to capture, and where.
    pub captures: Vec<(usize, PathBuf)>,
    /// Stop by itself at this time (ns from the start); `None`: run until asked to stop.
    pub until: Option<Nanos>,
    /// Queue-length sampling period.
    pub trace_interval: Nanos,
    /// Reads nothing from the devices from the first time to the second (ns from the
    /// start), as if the loop were held off its CPU, while links and events go on. Tests
    /// use it to make the emulator lose packets itself, deterministically (the devices'
    /// rings overflow); `None` in every real run.
    pub hold_reads: Option<(Nanos, Nanos)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wake {
    /// The head of a link direction's pipe reaches the far end.
    Link(DirId),
    Event(u32),
    Warmup,
    Trace,
}

pub struct Emulator {
    sc: Scenario,
    fabric: Fabric<Frame>,
    ports: Vec<Tun>,
    /// Per route id: the port it leaves the emulator by, and the host it starts at.
    route_exit: Vec<usize>,
    route_source: Vec<NodeId>,
    by_pair: HashMap<(u32, u32), RouteId>,
    /// The fabric's id of each plan route.
    plan_routes: Vec<RouteId>,
    /// What the receiving applications read per route, when every flow is counted so.
    received: Option<std::sync::Arc<crate::received::ReceivedPerRoute>>,
    /// The host of each port: a packet takes its pair's route if it came from the route's
    /// host, through whichever of its devices (the host chose the device by its own
    /// routing, the scenario's path is the route).
    port_node: Vec<NodeId>,
    wakes: EventQueue<Wake>,
    pool: Pool,
    clock: Clock,
    config: EmuConfig,
    captures: Vec<Option<Capture>>,
    meter: LinkMeter,
    red: Vec<RedLog>,
    /// One per device, in port order, for ppoll.
    pollfds: Vec<libc::pollfd>,
    lateness: Lateness,
    stalls: Stalls,
    counters: Counters,
    /// Per port: its device's loss counters when the emulator started, and the writes it
    /// refused since (some kernels count those in `rx_dropped` too).
    drops_at_start: Vec<DeviceDrops>,
    refused: Vec<u64>,
    realtime: bool,
}

#[derive(Default)]
struct Counters {
    read_pkts: u64,
    read_bytes: u64,
    written_pkts: u64,
    written_bytes: u64,
    unroutable: u64,
    device_drops: u64,
    truncated_reads: u64,
    late_beyond_bound: u64,
}

/// Lets the loop sleep as precisely as the kernel can wake it, and run as soon as it
/// wakes: a real-time priority (SCHED_FIFO) so that the agents' threads, which compete for
/// the same two cores, do not hold it off for a scheduler slice of several milliseconds.
/// The loop sleeps between packets, so it leaves the CPU to them. Without the privilege
/// for it, the loop runs at normal priority (and is later, under load).
fn tighten_scheduling() -> bool {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    let param = libc::sched_param { sched_priority: 50 };
    // SAFETY: changes the calling thread's policy only.
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) == 0 }
}

impl Emulator {
    /// `ports[i]` is the device of `plan.ports[i]`. The clock starts now.
    pub fn new(sc: &Scenario, plan: &Plan, mut ports: Vec<Tun>, config: EmuConfig) -> Result<Self> {
        let mut fabric = Self::fabric(sc, config.seed);
        // The plan's routes by index; identical hop lists share an id, and so do their
        // exit and source, which the hops determine.
        let ids: Vec<RouteId> = plan
            .routes
            .iter()
            .map(|r| fabric.routes.intern(&r.hops))
            .collect();
        let mut route_exit = vec![0; fabric.routes.len()];
        let mut route_source = vec![NodeId::default(); fabric.routes.len()];
        for (i, id) in ids.iter().enumerate() {
            route_exit[id.0 as usize] = plan.route_exit[i];
            route_source[id.0 as usize] = plan.route_source[i];
        }
        let by_pair: HashMap<(u32, u32), RouteId> = plan
            .by_pair
            .iter()
            .map(|(&pair, &r)| (pair, ids[r as usize]))
            .collect();
        let pollfds = ports
            .iter()
            .map(|t| libc::pollfd {
                fd: t.as_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let red = fabric.links.iter().map(|_| RedLog::default()).collect();
        let clock = Clock::starting_now();
        let mut captures: Vec<Option<Capture>> = (0..sc.links.len()).map(|_| None).collect();
        for (l, path) in &config.captures {
            captures[*l] = Some(Capture::create(path, clock.wall_origin())?);
        }
        let mut wakes = EventQueue::with_keys(sc.links.len() * 2);
        for (i, e) in sc.events.iter().enumerate() {
            wakes.push(e.at.nanos(), Wake::Event(i as u32));
        }
        wakes.push(sc.measure.warmup.nanos(), Wake::Warmup);
        wakes.push(config.trace_interval, Wake::Trace);
        // New devices count from zero, but whatever a host sent before the loop runs is
        // not the loop's to answer for.
        let drops_at_start = ports
            .iter_mut()
            .map(Tun::drops)
            .collect::<Result<Vec<_>>>()?;
        Ok(Emulator {
            refused: vec![0; ports.len()],
            drops_at_start,
            sc: sc.clone(),
            fabric,
            ports,
            route_exit,
            route_source,
            by_pair,
            plan_routes: ids,
            received: None,
            port_node: plan.ports.iter().map(|p| p.node).collect(),
            wakes,
            pool: Pool::default(),
            clock,
            meter: LinkMeter::new(sc),
            red,
            pollfds,
            lateness: Lateness::default(),
            stalls: Stalls::default(),
            counters: Counters::default(),
            realtime: false,
            captures,
            config,
        })
    }

    /// Takes the per-route payload the receivers count, for per-link goodput.
    pub fn count_received(&mut self, received: std::sync::Arc<crate::received::ReceivedPerRoute>) {
        self.received = Some(received);
    }

    /// The fabric the emulator runs `sc` on with `seed`: the simulator's, link for link and
    /// random stream for random stream.
    pub fn fabric(sc: &Scenario, seed: u64) -> Fabric<Frame> {
        Fabric::new(sc, seed)
    }

    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Runs until `stop` is set or the configured end; then reports.
    pub fn run(mut self, stop: Arc<AtomicBool>) -> Result<EmuReport> {
        self.realtime = tighten_scheduling();
        let spin = if self.realtime {
            SPIN_REALTIME
        } else {
            SPIN_NORMAL
        };
        let mut buf = self.pool.take();
        loop {
            let now = self.clock.now();
            if stop.load(Ordering::Relaxed) || self.config.until.is_some_and(|u| now >= u) {
                break;
            }
            self.fire_due(now)?;
            let next = self.wakes.peek_time();
            let now = self.clock.now();
            let sleep = match next {
                Some(t) if t <= now + spin => 0,
                Some(t) => (t - now - spin).min(MAX_SLEEP),
                None => MAX_SLEEP,
            };
            let asleep = self.clock.now();
            if let Some(until) = self.holding(asleep) {
                self.clock
                    .sleep_until(next.unwrap_or(until).min(until).min(asleep + MAX_SLEEP));
                continue;
            }
            self.wait(sleep)?;
            self.stalls.record(sleep, self.clock.now() - asleep);
            for p in 0..self.pollfds.len() {
                if self.pollfds[p].revents & libc::POLLIN != 0 {
                    buf = self.drain(p, buf)?;
                }
            }
        }
        let end = self.clock.now();
        self.finish(end)
    }

    /// While reads are held (`EmuConfig::hold_reads`), until when.
    fn holding(&self, now: Nanos) -> Option<Nanos> {
        self.config
            .hold_reads
            .filter(|&(from, until)| (from..until).contains(&now))
            .map(|(_, until)| until)
    }

    /// ppoll on every device for at most `sleep` ns; `pollfds[i].revents` says which are
    /// readable. The array lives as long as the loop: nothing is allocated per wait.
    fn wait(&mut self, sleep: Nanos) -> Result<()> {
        let timeout = libc::timespec {
            tv_sec: (sleep / 1_000_000_000) as libc::time_t,
            tv_nsec: (sleep % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: `pollfds` holds one valid pollfd per device, which outlive the call.
        let rc = unsafe {
            libc::ppoll(
                self.pollfds.as_mut_ptr(),
                self.pollfds.len() as libc::nfds_t,
                &timeout,
                std::ptr::null(),
            )
        };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e).context("waiting for packets");
            }
            self.pollfds.iter_mut().for_each(|f| f.revents = 0);
        }
        Ok(())
    }

    /// Reads up to a batch from device `p`; each packet enters its route's first link.
    fn drain(&mut self, p: usize, mut buf: Vec<u8>) -> Result<Vec<u8>> {
        for _ in 0..READ_BATCH {
            let Some(n) = self.ports[p]
                .recv(&mut buf[..MAX_FRAME])
                .with_context(|| format!("reading device {}", self.ports[p].name))?
            else {
                break;
            };
            let now = self.clock.now();
            self.counters.read_pkts += 1;
            self.counters.read_bytes += n as u64;
            if truncated(&buf[..n.min(MAX_FRAME)], n, MAX_FRAME) {
                // Own loss: the host sent it whole; what we have is not the packet.
                self.counters.truncated_reads += 1;
                continue;
            }
            let route = ipv4_endpoints(&buf[..n])
                .and_then(|pair| self.by_pair.get(&pair).copied())
                .filter(|&r| self.route_source[r.0 as usize] == self.port_node[p]);
            let Some(route) = route else {
                self.counters.unroutable += 1;
                continue;
            };
            let frame = Frame {
                data: std::mem::replace(&mut buf, self.pool.take()),
                len: n as u32,
                routing: net::RoutingHeader { route, hop: 0 },
            };
            self.enter(now, frame);
        }
        Ok(buf)
    }

    /// `frame` reaches the link of its current hop at `t`.
    fn enter(&mut self, t: Nanos, frame: Frame) {
        let wakes = &mut self.wakes;
        let entered = self.fabric.enter(t, frame, &mut link_wake(wakes));
        self.after_entry(entered);
    }

    /// Logs RED's decision and recycles a dropped frame's buffer.
    fn after_entry(&mut self, entered: net::fabric::Entered<Frame>) {
        let link = &self.fabric.links[entered.dir.index()];
        if matches!(link.params().aqm, AqmParams::Red { .. }) {
            let early = matches!(entered.dropped, Some((_, DropReason::Early)));
            self.red[entered.dir.index()].record(link.red_average().unwrap_or(0.0), early);
        }
        if let Some((f, _)) = entered.dropped {
            self.pool.give(f.data);
        }
    }

    /// Handles every wake-up due by `now`, each at its own time.
    fn fire_due(&mut self, now: Nanos) -> Result<()> {
        while let Some((t, w)) = self.wakes.pop_due(now) {
            match w {
                Wake::Link(d) => self.arrivals(d, t, now)?,
                Wake::Event(i) => self.apply_event(i as usize, t),
                Wake::Warmup => {
                    self.fabric.sync_stats(t);
                    self.meter.warmup(t, &self.fabric.links)
                }
                Wake::Trace => {
                    self.fabric.sync_stats(t);
                    self.meter.trace(t, &self.fabric.links);
                    self.wakes.push(t + self.config.trace_interval, Wake::Trace);
                }
            }
        }
        Ok(())
    }

    /// Every packet of direction `d`'s pipe that has arrived by `now`, from `t` on.
    fn arrivals(&mut self, d: DirId, mut t: Nanos, now: Nanos) -> Result<()> {
        loop {
            let wakes = &mut self.wakes;
            let Some((arrival, next)) = self.fabric.arrive(d, t, Some(now), &mut link_wake(wakes))
            else {
                return Ok(());
            };
            match arrival {
                Arrival::Delivered(frame) => {
                    if let Some(cap) = &mut self.captures[d.link().index()] {
                        cap.write(t, frame.bytes())?;
                    }
                    self.forward(t, frame)?;
                }
                Arrival::Lost(frame) => self.pool.give(frame.data),
            }
            match next {
                Some(n) => t = n,
                None => return Ok(()),
            }
        }
    }

    /// `frame` has crossed its current hop at `t`: on to the next link, or out.
    fn forward(&mut self, t: Nanos, frame: Frame) -> Result<()> {
        let forwarded = self
            .fabric
            .forward(t, frame, &mut link_wake(&mut self.wakes));
        let frame = match forwarded {
            Forwarded::Entered(entered) => {
                self.after_entry(entered);
                return Ok(());
            }
            Forwarded::Arrived(frame) => frame,
        };
        let port = self.route_exit[frame.routing.route.0 as usize];
        let late = self.clock.now().saturating_sub(t);
        let sent = self.ports[port]
            .send(frame.bytes())
            .with_context(|| format!("writing to device {}", self.ports[port].name))?;
        if sent {
            self.lateness.record(late);
            self.counters.written_pkts += 1;
            self.counters.written_bytes += frame.len as u64;
            // Not a loss, but not the model's delay either: its TCP sees a spike.
            if late > LATE_BOUND_NS {
                self.counters.late_beyond_bound += 1;
            }
        } else {
            // Own loss: the link model delivered it; the hand-over failed.
            self.counters.device_drops += 1;
            self.refused[port] += 1;
        }
        self.pool.give(frame.data);
        Ok(())
    }

    fn apply_event(&mut self, i: usize, t: Nanos) {
        let (meter, pool, wakes) = (&mut self.meter, &mut self.pool, &mut self.wakes);
        self.fabric.apply(
            t,
            &self.sc.events[i],
            |d, link| meter.capacity_changes(t, d, link),
            |f| pool.give(f.data),
            &mut link_wake(wakes),
        );
    }

    fn finish(mut self, end: Nanos) -> Result<EmuReport> {
        self.fabric.sync_stats(end);
        let links = self.fabric.links.iter().map(|l| l.stats.clone()).collect();
        // Received payload per route, as the receiving applications counted it (only when
        // every flow could be: see `ReceivedPerRoute`); otherwise no per-link goodput
        // rather than zeros.
        let routes = self.received.as_ref().map(|r| {
            for (i, bytes) in r.totals().into_iter().enumerate() {
                self.meter.received(end, self.plan_routes[i], bytes);
            }
            &self.fabric.routes
        });
        let measured = self.meter.finish(&self.sc, &self.fabric.links, routes);
        // Read before the devices close with the emulator.
        let mut not_read = 0;
        let mut dropped_on_arrival = 0;
        for (p, tun) in self.ports.iter_mut().enumerate() {
            let d = tun.drops()?.since(self.drops_at_start[p]);
            not_read += d.not_read;
            dropped_on_arrival += d.rx_dropped.saturating_sub(self.refused[p]);
        }
        let red = self.red;
        let c = self.counters;
        Ok(EmuReport {
            not_read,
            truncated_reads: c.truncated_reads,
            dropped_on_arrival,
            late_beyond_bound: c.late_beyond_bound,
            links,
            measured,
            lateness: self.lateness,
            stalls: self.stalls,
            red,
            read_pkts: c.read_pkts,
            read_bytes: c.read_bytes,
            written_pkts: c.written_pkts,
            written_bytes: c.written_bytes,
            unroutable: c.unroutable,
            device_drops: c.device_drops,
            ran_s: end as f64 / 1e9,
            realtime: self.realtime,
        })
    }
}

/// Schedules a link direction's wake-up: its one keyed event in the queue.
fn link_wake(wakes: &mut EventQueue<Wake>) -> impl FnMut(Nanos, DirId) + '_ {
    |t, d| wakes.push_keyed(d.index(), t, Wake::Link(d))
}
