//! The forwarding loop.
//!
//! Every packet read from a host's device gets the route of its (source, destination)
//! address pair and enters the first link at the time it was read. Link events (end of a
//! transmission, arrival at the far end) are kept in a heap of wake-ups; each is handled at
//! the time the link model gave, not the (slightly later) time the loop got to it, so
//! lateness never accumulates along a path. Only the final write into the destination's
//! device happens "now"; how late that is, is the emulator's timing error.
//!
//! The loop sleeps in ppoll(2) until the next wake-up or a readable device, with the
//! thread's timer slack set to 1 ns (the default 50 us would be most of our error budget).
//! Readable devices are drained in batches.

use super::clock::Clock;
use super::frame::{Frame, MAX_FRAME, Pool, ipv4_endpoints};
use super::pcap::Capture;
use super::stats::{EmuReport, Lateness, RedLog, Stalls};
use super::tun::Tun;
use crate::plan::Plan;
use anyhow::{Context, Result};
use measure::LinkMeter;
use net::{AqmParams, DropReason, Enqueued, LinkDir, LinkParams, Nanos};
use scenario::Scenario;
use scenario::model::{DirId, NodeId, dir_id, dir_link};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Wake {
    TxDone(u32),
    Arrival(u32),
    Event(u32),
    Warmup,
    Trace,
}

pub struct Emulator {
    sc: Scenario,
    links: Vec<LinkDir<Frame>>,
    ports: Vec<Tun>,
    routes: Vec<Box<[DirId]>>,
    route_exit: Vec<usize>,
    by_pair: HashMap<(u32, u32), u32>,
    /// The host of each port and the host each route starts at: a packet takes its pair's
    /// route if it came from that host, through whichever of its devices (the host chose
    /// the device by its own routing, the scenario's path is the route).
    port_node: Vec<NodeId>,
    route_source: Vec<NodeId>,
    wakes: BinaryHeap<Reverse<(Nanos, Wake)>>,
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
    pub fn new(sc: &Scenario, plan: &Plan, ports: Vec<Tun>, config: EmuConfig) -> Result<Self> {
        let mut links = Vec::with_capacity(sc.links.len() * 2);
        for (l, link) in sc.links.iter().enumerate() {
            for side in [false, true] {
                let d = dir_id(l, side);
                let params = LinkParams::from_config(&link.dirs[side as usize]);
                links.push(LinkDir::new(
                    params,
                    config.seed ^ (d as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                ));
            }
        }
        let pollfds = ports
            .iter()
            .map(|t| libc::pollfd {
                fd: t.as_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let red = links.iter().map(|_| RedLog::default()).collect();
        let mut captures: Vec<Option<Capture>> = (0..sc.links.len()).map(|_| None).collect();
        for (l, path) in &config.captures {
            captures[*l] = Some(Capture::create(path)?);
        }
        let mut wakes = BinaryHeap::new();
        for (i, e) in sc.events.iter().enumerate() {
            wakes.push(Reverse((e.at.nanos(), Wake::Event(i as u32))));
        }
        wakes.push(Reverse((sc.measure.warmup.nanos(), Wake::Warmup)));
        wakes.push(Reverse((config.trace_interval, Wake::Trace)));
        Ok(Emulator {
            sc: sc.clone(),
            links,
            ports,
            routes: plan
                .routes
                .iter()
                .map(|r| r.hops.clone().into_boxed_slice())
                .collect(),
            route_exit: plan.route_exit.clone(),
            by_pair: plan.by_pair.clone(),
            port_node: plan.ports.iter().map(|p| p.node).collect(),
            route_source: plan.route_source.clone(),
            wakes,
            pool: Pool::default(),
            clock: Clock::starting_now(),
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
            let next = self.wakes.peek().map(|Reverse((t, _))| *t);
            let now = self.clock.now();
            let sleep = match next {
                Some(t) if t <= now + spin => 0,
                Some(t) => (t - now - spin).min(MAX_SLEEP),
                None => MAX_SLEEP,
            };
            let asleep = self.clock.now();
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
            let route = ipv4_endpoints(&buf[..n])
                .and_then(|pair| self.by_pair.get(&pair).copied())
                .filter(|&r| self.route_source[r as usize] == self.port_node[p]);
            let Some(route) = route else {
                self.counters.unroutable += 1;
                continue;
            };
            let frame = Frame {
                data: std::mem::replace(&mut buf, self.pool.take()),
                len: n as u32,
                route,
                hop: 0,
            };
            self.enter(now, frame);
        }
        Ok(buf)
    }

    /// `frame` reaches the link of its current hop at `t`.
    fn enter(&mut self, t: Nanos, frame: Frame) {
        let d = self.routes[frame.route as usize][frame.hop as usize];
        let link = &mut self.links[d];
        let result = link.enqueue(t, frame);
        if matches!(link.params().aqm, AqmParams::Red { .. }) {
            let early = matches!(result, Enqueued::Dropped(_, DropReason::Early));
            let avg = link.red_average().unwrap_or(0.0);
            self.red[d].record(avg, early);
        }
        match result {
            Enqueued::Dropped(f, _) => self.pool.give(f.data),
            Enqueued::Queued => {}
            Enqueued::Transmitting(done) => {
                self.wakes.push(Reverse((done, Wake::TxDone(d as u32))))
            }
        }
    }

    /// Handles every wake-up due by `now`, each at its own time.
    fn fire_due(&mut self, now: Nanos) -> Result<()> {
        while let Some(&Reverse((t, w))) = self.wakes.peek() {
            if t > now {
                break;
            }
            self.wakes.pop();
            match w {
                Wake::TxDone(d) => {
                    let d = d as usize;
                    let r = self.links[d].tx_done(t);
                    if let Some(n) = r.next_tx {
                        self.wakes.push(Reverse((n, Wake::TxDone(d as u32))));
                    }
                    if let Some(a) = r.arrival {
                        self.wakes.push(Reverse((a, Wake::Arrival(d as u32))));
                    }
                    if let Some(lost) = r.lost {
                        self.pool.give(lost.data);
                    }
                }
                Wake::Arrival(d) => self.arrivals(d as usize, t, now)?,
                Wake::Event(i) => self.apply_event(i as usize, t),
                Wake::Warmup => self.meter.warmup(t, &self.links),
                Wake::Trace => {
                    self.meter.trace(t, &self.links);
                    self.wakes
                        .push(Reverse((t + self.config.trace_interval, Wake::Trace)));
                }
            }
        }
        Ok(())
    }

    /// Every packet of direction `d`'s pipe that has arrived by `now`, from `t` on.
    fn arrivals(&mut self, d: usize, mut t: Nanos, now: Nanos) -> Result<()> {
        while let Some((frame, next)) = self.links[d].deliver(t) {
            if let Some(cap) = &mut self.captures[dir_link(d)] {
                cap.write(t, frame.bytes())?;
            }
            self.forward(t, frame)?;
            match next {
                Some(n) if n <= now => t = n,
                Some(n) => {
                    self.wakes.push(Reverse((n, Wake::Arrival(d as u32))));
                    break;
                }
                None => break,
            }
        }
        Ok(())
    }

    /// `frame` has crossed its current hop at `t`: on to the next link, or out.
    fn forward(&mut self, t: Nanos, mut frame: Frame) -> Result<()> {
        frame.hop += 1;
        let route = frame.route as usize;
        if (frame.hop as usize) < self.routes[route].len() {
            self.enter(t, frame);
            return Ok(());
        }
        let port = self.route_exit[route];
        let late = self.clock.now().saturating_sub(t);
        let sent = self.ports[port]
            .send(frame.bytes())
            .with_context(|| format!("writing to device {}", self.ports[port].name))?;
        if sent {
            self.lateness.record(late);
            self.counters.written_pkts += 1;
            self.counters.written_bytes += frame.len as u64;
        } else {
            self.counters.device_drops += 1;
        }
        self.pool.give(frame.data);
        Ok(())
    }

    fn apply_event(&mut self, i: usize, t: Nanos) {
        let e = &self.sc.events[i];
        for d in [dir_id(e.link, false), dir_id(e.link, true)] {
            self.meter.capacity_changes(t, d, &self.links[d]);
            for f in self.links[d].apply(t, &e.kind) {
                self.pool.give(f.data);
            }
        }
    }

    fn finish(mut self, end: Nanos) -> Result<EmuReport> {
        for l in &mut self.links {
            l.sync_stats(end);
        }
        let links = self.links.iter().map(|l| l.stats.clone()).collect();
        let measured = self.meter.finish(&self.sc, &self.links);
        let red = self.red;
        let c = self.counters;
        Ok(EmuReport {
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
