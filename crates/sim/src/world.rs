//! The simulated network and its dispatcher: the fabric (links and routes), the
//! connections' endpoints, the traffic sources and the measurements, driven by one event
//! queue. The protocol itself lives in `connection` and `mptcp`; this file only moves
//! packets, timeouts and application events between them.

use crate::capture::{LinkCaptures, Sender};
use crate::connection::{Client, ConnConfig, Path, Server, ServerEvent};
use crate::engine::{End, Ev, EventQueue};
use crate::ids::{ConnId, FlowId};
use crate::jitter::HostJitter;
use crate::packet::{HEADER_BYTES, InFlight, MSS, Packet, PacketStore, Transmit};
use crate::tcp::receive_window::{RMEM_MAX, ReceiveBuffer};
use crate::traffic::FlowSource;
use crate::wire::ConnShape;
use measure::{FlowMeter, FlowSlot, LinkMeter};
use net::layout::flow_layout;
use net::seeds::{Stream, sub_seed};
use net::{Arrival, Fabric, Forwarded, Nanos};
use scenario::Scenario;
use scenario::model::DirId;
use scenario::spec::Protocol;

/// From this many connections on, `World::prefetch_pipe` loads every line of an endpoint
/// and its timers and counters ahead; below, their state mostly stays in cache and those
/// extra loads cost more than they save (measured: TCP at 100 flows 7 % faster without).
const WIDE_PREFETCH_CONNECTIONS: usize = 1000;

fn trace_interval(sc: &Scenario) -> Nanos {
    sc.measure
        .trace_interval
        .unwrap_or(sc.measure.interval)
        .nanos()
}

/// Both endpoints of a connection while it is open.
struct ConnSlot {
    flow: FlowId,
    /// Payload bytes the connection carries (`u64::MAX`: until the source stops).
    total_bytes: u64,
    /// Which of the group's numbered paths a TCP connection took (its selector learns
    /// from the connection when it closes).
    path: u16,
    client: Option<Client>,
    server: Option<Server>,
}

/// One endpoint's timeout as the event queue sees it. Kept apart from the endpoints (a
/// connection's two fit in one cache line) so that a queue entry that finds nothing due,
/// its deadline having moved later since it was pushed, touches nothing else.
#[derive(Clone, Copy, Debug, Default)]
struct EndTimer {
    /// The time of the endpoint's entry in the event queue, if one is pending (so that a
    /// timer re-armed later costs nothing until that entry comes up).
    scheduled: Option<Nanos>,
    /// The endpoint's earliest deadline (`poll_timeout`) as of the last time it acted:
    /// only acting changes it. `None` once the connection is closed.
    deadline: Option<Nanos>,
}

/// A connection's two `EndTimer`s (indexed by `End`), in one cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct ConnTimers([EndTimer; 2]);

/// Which endpoints of a connection acted (and may have packets, events or a new deadline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Acted {
    Client,
    Server,
    Both,
}

impl Acted {
    fn client(self) -> bool {
        self != Acted::Server
    }
    fn server(self) -> bool {
        self != Acted::Client
    }
}

pub struct World<'s> {
    pub sc: &'s Scenario,
    pub now: Nanos,
    pub end: Nanos,
    pub queue: EventQueue,
    pub fabric: Fabric<InFlight>,
    /// The packets the fabric carries.
    packets: PacketStore,
    conns: Vec<ConnSlot>,
    /// Per connection, the timeouts of its client and server.
    timers: Vec<ConnTimers>,
    pub flows: Vec<FlowSource>,
    pub meter: FlowMeter,
    pub link_meter: LinkMeter,
    pub packet_hops: u64,
    /// What each flow's receivers had sent and received when the warm-up ended.
    receivers_at_warmup: Option<Vec<measure::ReceiverSegments>>,
    /// The links captured (`--pcap`), if any.
    captures: Option<Box<LinkCaptures>>,
    /// The hosts' processing jitter, if any host has one.
    jitter: Option<Box<HostJitter>>,
}

impl<'s> World<'s> {
    pub fn new(sc: &'s Scenario, seed: u64) -> Self {
        let flows: Vec<FlowSource> = flow_layout(sc, seed)
            .into_iter()
            .enumerate()
            .map(|(position, f)| {
                let group = &sc.flows[f.slot.group];
                let select_seed = sub_seed(seed, Stream::Select, position as u64);
                FlowSource::new(f, group, select_seed)
            })
            .collect();
        let mut queue = EventQueue::with_keys(sc.links.len() * 2);
        for (f, fl) in flows.iter().enumerate() {
            queue.push(fl.slot.start, Ev::FlowStart(FlowId(f as u32)));
            queue.push(fl.slot.stop, Ev::FlowStop(FlowId(f as u32)));
        }
        for (i, e) in sc.events.iter().enumerate() {
            queue.push(e.at.nanos(), Ev::Scenario(i as u32));
        }
        queue.push(sc.measure.warmup.nanos(), Ev::Warmup);
        queue.push(sc.measure.interval.nanos(), Ev::Sample);
        queue.push(trace_interval(sc), Ev::Trace);
        let meter = FlowMeter::new(sc, &slots(&flows));
        World {
            sc,
            now: 0,
            end: sc.duration.nanos(),
            queue,
            fabric: crate::fabric(sc, seed),
            packets: PacketStore::default(),
            conns: Vec::new(),
            timers: Vec::new(),
            flows,
            meter,
            link_meter: LinkMeter::new(sc),
            packet_hops: 0,
            receivers_at_warmup: None,
            captures: None,
            jitter: HostJitter::new(sc, seed).map(Box::new),
        }
    }

    /// Writes every packet that crosses a link of `captures` to its file.
    pub fn capture(&mut self, captures: LinkCaptures) {
        self.captures = Some(Box::new(captures));
    }

    /// The captures, to be closed once the run is over.
    pub fn take_captures(&mut self) -> Option<LinkCaptures> {
        self.captures.take().map(|c| *c)
    }

    /// Runs until the scenario's end; `progress` is called with the simulated time now and
    /// then (about once per simulated second).
    pub fn run(&mut self, mut progress: impl FnMut(Nanos)) {
        let mut next_report = 0;
        while let Some((t, ev)) = self.queue.pop_due(self.end) {
            self.now = t;
            if t >= next_report {
                progress(t);
                next_report = t + 1_000_000_000;
            }
            self.dispatch(ev);
        }
        self.now = self.end;
        self.fabric.sync_stats(self.end);
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::LinkArrive(d) => {
                let queue = &mut self.queue;
                let dir = DirId(d as usize);
                let arrived = self
                    .fabric
                    .arrive(dir, self.now, None, &mut link_wake(queue));
                self.prefetch_pipe(dir);
                match arrived {
                    Some((Arrival::Delivered(pkt), _)) => {
                        if self.captures.is_some() {
                            self.write_capture(dir, &pkt);
                        }
                        self.forward(pkt)
                    }
                    Some((Arrival::Lost(pkt), _)) => self.packets.discard(pkt.id),
                    None => {}
                }
            }
            Ev::Timeout(c, end) => self.on_timeout(c, end),
            Ev::FlowStart(f) => self.start_flow(f),
            Ev::BurstEnd(f) => self.end_burst(f),
            Ev::FlowStop(f) => {
                self.flows[f.index()].stopped = true;
                self.end_burst(f);
            }
            Ev::Scenario(i) => {
                let (meter, now, queue) = (&mut self.link_meter, self.now, &mut self.queue);
                let packets = &mut self.packets;
                self.fabric.apply(
                    now,
                    &self.sc.events[i as usize],
                    |d, link| meter.capacity_changes(now, d, link),
                    |lost| packets.discard(lost.id),
                    &mut link_wake(queue),
                );
            }
            Ev::Sample => {
                self.check_reconnects();
                self.queue
                    .push(self.now + self.sc.measure.interval.nanos(), Ev::Sample);
            }
            Ev::Trace => {
                self.trace();
                self.queue
                    .push(self.now + trace_interval(self.sc), Ev::Trace);
            }
            Ev::HostSend(dir) => {
                let released = self
                    .jitter
                    .as_mut()
                    .and_then(|j| j.release(DirId(dir as usize)));
                if let Some(in_flight) = released {
                    self.enter_first_hop(in_flight);
                }
            }
            Ev::Warmup => {
                self.fabric.sync_stats(self.now);
                self.link_meter.warmup(self.now, &self.fabric.links);
                self.receivers_at_warmup = Some(self.receiver_segments());
            }
        }
    }

    /// Starts loading what the next packets out of a pipe will need, one step per packet
    /// further ahead (each step reads only what an earlier call asked for): the third
    /// packet itself; the second's endpoint (beyond `WIDE_PREFETCH_CONNECTIONS`: all of it,
    /// its connection's timers and flow); the first's subflow (and its flow's counters).
    /// At tens of thousands of connections these are cache misses, and waiting for each in
    /// turn was a third of the time per hop.
    #[inline]
    fn prefetch_pipe(&self, dir: DirId) {
        if let Some(third) = self
            .fabric
            .ahead(dir, 2)
            .and_then(|p| self.packets.get(p.id))
        {
            net::prefetch(third);
        }
        for (ahead, deep) in [(1, false), (0, true)] {
            let Some(&next) = self.fabric.ahead(dir, ahead) else {
                continue;
            };
            if !self.fabric.is_last_hop(next.routing) {
                continue;
            }
            let Some(pkt) = self.packets.get(next.id) else {
                continue;
            };
            let c = pkt.conn.index();
            let Some(slot) = self.conns.get(c) else {
                continue;
            };
            let subflow = pkt.subflow.index();
            let wide = self.conns.len() >= WIDE_PREFETCH_CONNECTIONS;
            match (pkt.kind.to_server(), deep) {
                (to_server, false) if wide => {
                    if to_server {
                        net::prefetch_lines(&slot.server);
                    } else {
                        net::prefetch_lines(&slot.client);
                    }
                    net::prefetch(&slot.flow);
                    if let Some(timers) = self.timers.get(c) {
                        net::prefetch(timers);
                    }
                }
                (true, false) => net::prefetch(&slot.server),
                (false, false) => net::prefetch(&slot.client),
                (true, true) => {
                    slot.server.iter().for_each(|e| e.prefetch(subflow));
                    if wide {
                        self.meter.prefetch(slot.flow.index());
                    }
                }
                (false, true) => slot.client.iter().for_each(|e| e.prefetch(subflow)),
            }
        }
    }

    /// `pkt` reached the end of `dir`: into the link's capture, if it has one.
    #[cold]
    fn write_capture(&mut self, dir: DirId, pkt: &InFlight) {
        let Some(captures) = &mut self.captures else {
            return;
        };
        let Some(packet) = self.packets.get(pkt.id) else {
            return;
        };
        if !captures.captures(dir) {
            return;
        }
        let slot = &self.conns[packet.conn.index()];
        let flow = slot.flow.index();
        let group = self.flows[flow].slot.group;
        let spec = &self.sc.flows[group];
        let from = Sender {
            conn: packet.conn,
            subflow: packet.subflow,
            flow,
            group,
            shape: ConnShape {
                mptcp: spec.protocol == Protocol::Mptcp,
                sack: spec.sack,
                total_bytes: slot.total_bytes,
            },
        };
        let hops = self.fabric.routes.hops(pkt.routing.route);
        captures.write(self.now, dir, hops, packet, from);
    }

    /// Samples every subflow's window and RTT and every link's queue.
    fn trace(&mut self) {
        let (conns, flows) = (&self.conns, &self.flows);
        self.meter.trace(self.now, |i, k| {
            let client = flows[i].conn.and_then(|c| conns[c.index()].client.as_ref());
            match client.and_then(|c| c.subflows().get(k)) {
                Some(sf) if sf.is_established() => (
                    sf.tx.cwnd() as f32,
                    if sf.tx.rtt.srtt > 0 {
                        sf.tx.rtt.srtt as f32 / 1e6
                    } else {
                        f32::NAN
                    },
                ),
                _ => (f32::NAN, f32::NAN),
            }
        });
        if self.meter.traces_receivers() {
            self.meter.trace_receivers(|i, k| {
                let server = flows[i].conn.and_then(|c| conns[c.index()].server.as_ref());
                match server.and_then(|s| s.receive_window(k)) {
                    Some((ssthresh, clamp)) => [ssthresh as f32, clamp as f32],
                    None => [f32::NAN; 2],
                }
            });
        }
        if self.meter.traces_coupling() {
            let (conns, flows) = (&mut self.conns, &self.flows);
            self.meter.trace_coupling(|i, k| {
                let client = flows[i].conn.and_then(|c| conns[c.index()].client.as_mut());
                match client {
                    Some(c) if c.subflows().get(k).is_some_and(|sf| sf.is_established()) => {
                        let state = c.coupling_state(k);
                        [state.alpha as f32, state.inter_loss_pkts as f32]
                    }
                    _ => [f32::NAN; 2],
                }
            });
        }
        self.fabric.sync_stats(self.now);
        self.link_meter.trace(self.now, &self.fabric.links);
    }

    /// Puts a packet on the first hop of its route (after its host's jitter, if it has one).
    fn inject(&mut self, out: Transmit) {
        if self.jitter.is_some() {
            return self.inject_after_jitter(out);
        }
        let pkt = out.packet;
        // The packet is copied into the store after the link's work (see `reserve`).
        let in_flight = self.packets.reserve(&pkt, out.route);
        self.enter_first_hop(in_flight);
        self.packets.fill(in_flight.id, pkt);
    }

    /// `inject` when some host has a jitter: a packet from such a host waits there until
    /// its departure (`Ev::HostSend`); the others go at once. Apart, so that the usual path
    /// stays as short as it was.
    #[cold]
    fn inject_after_jitter(&mut self, out: Transmit) {
        let pkt = out.packet;
        let in_flight = self.packets.reserve(&pkt, out.route);
        self.packets.fill(in_flight.id, pkt);
        let dir = self.fabric.routes.hops(out.route)[0];
        let departure = self
            .jitter
            .as_mut()
            .and_then(|jitter| jitter.hold(dir, self.now, in_flight));
        match departure {
            Some(t) => self.queue.push(t, Ev::HostSend(dir.index() as u32)),
            None => self.enter_first_hop(in_flight),
        }
    }

    /// A packet leaves its host (after its jitter, if it has one): onto the first link of
    /// its route.
    #[inline]
    fn enter_first_hop(&mut self, in_flight: InFlight) {
        self.packet_hops += 1;
        let entered = self
            .fabric
            .enter(self.now, in_flight, &mut link_wake(&mut self.queue));
        if let Some((dropped, _)) = entered.dropped {
            self.packets.discard(dropped.id);
        }
    }

    /// A packet reached the end of a hop: on to the next, or to its endpoint.
    fn forward(&mut self, pkt: InFlight) {
        let forwarded = self
            .fabric
            .forward(self.now, pkt, &mut link_wake(&mut self.queue));
        match forwarded {
            Forwarded::Entered(entered) => {
                self.packet_hops += 1;
                if let Some((dropped, _)) = entered.dropped {
                    self.packets.discard(dropped.id);
                }
            }
            Forwarded::Arrived(pkt) => {
                let pkt = self.packets.take(pkt.id);
                self.deliver(pkt)
            }
        }
    }

    /// A packet reached its endpoint (late packets of a closed connection are dropped).
    fn deliver(&mut self, pkt: Packet) {
        let c = pkt.conn;
        let slot = &mut self.conns[c.index()];
        let acted = match (pkt.kind.to_server(), &mut slot.client, &mut slot.server) {
            (true, _, Some(server)) => {
                server.handle_packet(self.now, &pkt);
                Acted::Server
            }
            (false, Some(client), _) => {
                client.handle_packet(self.now, &pkt);
                Acted::Client
            }
            _ => return,
        };
        self.flush(c, acted);
    }

    fn on_timeout(&mut self, c: ConnId, end: End) {
        let timer = &mut self.timers[c.index()].0[end as usize];
        if timer.scheduled == Some(self.now) {
            timer.scheduled = None;
        }
        if timer.deadline.is_none_or(|d| d > self.now) {
            // Nothing is due (the deadline moved later, or the connection closed). The
            // endpoint is as its last flush left it, so handling the timeout and flushing
            // again would change nothing but the queue entry, renewed here.
            self.push_timeout(c, end);
            return;
        }
        let slot = &mut self.conns[c.index()];
        let acted = match (end, &mut slot.client, &mut slot.server) {
            (End::Client, Some(client), _) => {
                client.handle_timeout(self.now);
                Acted::Client
            }
            (End::Server, _, Some(server)) => {
                server.handle_timeout(self.now);
                Acted::Server
            }
            _ => return,
        };
        self.flush(c, acted);
    }

    /// After an endpoint acted: its packets go out, the application learns what arrived,
    /// a connection whose data is all acknowledged closes, and the next deadline of the
    /// endpoint that acted is scheduled. The other endpoint's state did not change, so it
    /// has nothing to send and the same deadline.
    fn flush(&mut self, c: ConnId, acted: Acted) {
        let (i, now) = (c.index(), self.now);
        if acted.server() {
            while let Some(p) = self.conns[i]
                .server
                .as_mut()
                .and_then(|e| e.poll_transmit(now))
            {
                self.inject(p);
            }
        }
        if acted.client() {
            while let Some(p) = self.conns[i]
                .client
                .as_mut()
                .and_then(|e| e.poll_transmit(now))
            {
                self.inject(p);
            }
        }
        if acted.server() {
            self.pass_server_events(c);
        }
        if acted.client() {
            if self.conns[i].client.as_ref().is_some_and(Client::all_acked) {
                self.close(c);
                return;
            }
            self.schedule_timeout(c, End::Client);
        }
        if acted.server() {
            self.schedule_timeout(c, End::Server);
        }
    }

    /// The server's events to the meters and sources: bytes received per subflow, bytes
    /// delivered in order (and a finite transfer's completion).
    fn pass_server_events(&mut self, c: ConnId) {
        let (i, flow) = (c.index(), self.conns[c.index()].flow);
        while let Some(ev) = self.conns[i].server.as_mut().and_then(Server::poll_event) {
            match ev {
                ServerEvent::Received { subflow, bytes } => {
                    self.meter
                        .subflow_received(self.now, flow.index(), subflow.index(), bytes);
                    if let Some(path) = self.conns[i]
                        .server
                        .as_ref()
                        .and_then(|s| s.path(subflow.index()))
                    {
                        self.link_meter.received(self.now, path.fwd, bytes);
                    }
                }
                ServerEvent::Delivered { bytes } => {
                    self.meter.delivered(self.now, flow.index(), bytes);
                    let slot = &self.conns[i];
                    let delivered = slot.server.as_ref().map_or(0, Server::delivered_bytes);
                    if delivered == slot.total_bytes {
                        self.flows[flow.index()].completed(self.now);
                    }
                }
            }
        }
    }

    /// Records the endpoint's earliest deadline after it acted, and schedules it.
    fn schedule_timeout(&mut self, c: ConnId, end: End) {
        let slot = &self.conns[c.index()];
        let deadline = match end {
            End::Client => slot.client.as_ref().and_then(Client::poll_timeout),
            End::Server => slot.server.as_ref().and_then(Server::poll_timeout),
        };
        self.timers[c.index()].0[end as usize].deadline = deadline;
        self.push_timeout(c, end);
    }

    /// Schedules the endpoint's recorded deadline unless an event at or before it is
    /// already in the queue (a later one finds the deadline moved and schedules again).
    fn push_timeout(&mut self, c: ConnId, end: End) {
        let timer = &mut self.timers[c.index()].0[end as usize];
        if let Some(d) = timer.deadline
            && timer.scheduled.is_none_or(|t| t > d)
        {
            timer.scheduled = Some(d);
            self.queue.push(d, Ev::Timeout(c, end));
        }
    }

    fn start_flow(&mut self, f: FlowId) {
        let source = &mut self.flows[f.index()];
        if !source.wants_connection() {
            return;
        }
        let group = &self.sc.flows[source.slot.group];
        let mut path = 0;
        let routes = match group.protocol {
            // A selector picks the path; without one, a reconnecting application moves on
            // through the candidate paths.
            Protocol::Tcp => {
                path = source.next_path(group.paths.len());
                vec![group.paths[path].clone()]
            }
            Protocol::Mptcp => net::paths::subflow_routes(group),
        };
        let source = &self.flows[f.index()];
        let paths: Vec<Path> = routes
            .iter()
            .map(|r| Path {
                fwd: self.fabric.routes.intern(&r.hops),
                rev: self.fabric.routes.intern(&r.reversed().hops),
            })
            .collect();
        // A flow that sets no buffer gets Linux's: autotuned up to `tcp_rmem[2]`.
        let rcv_buffer = match net::paths::rcv_buffer(group, &self.sc.links) {
            Some(size) => ReceiveBuffer::Fixed {
                segments: (size.bytes(MSS as u64) / MSS as u64).max(1),
            },
            None => ReceiveBuffer::Autotuned {
                max_bytes: RMEM_MAX,
            },
        };
        let cfg = ConnConfig {
            mptcp: group.protocol == Protocol::Mptcp,
            sack: group.sack,
            delayed_ack: group.delayed_ack,
            cwnd_clamp: group
                .window_limit
                .map(|w| w.packets(MSS as u64 + HEADER_BYTES as u64))
                .unwrap_or(u64::MAX),
            scheduler: group.scheduler,
            stale_loss_cnt: group.stale_loss_cnt,
            rcv_buffer,
            total_bytes: source.remaining,
        };
        let cc = group.cc.instantiate();
        let c = ConnId(self.conns.len() as u32);
        self.conns.push(ConnSlot {
            flow: f,
            total_bytes: cfg.total_bytes,
            path: path as u16,
            client: Some(Client::open(c, &cfg, &paths, cc, self.now)),
            server: Some(Server::new(c, &cfg, &paths)),
        });
        self.timers.push(Default::default());
        let source = &mut self.flows[f.index()];
        source.conn = Some(c);
        if let Some(t) = source.burst_length(group) {
            self.queue.push(self.now + t, Ev::BurstEnd(f));
        }
        self.flush(c, Acted::Both);
    }

    /// An application that has seen no progress for its `reconnect_after` gives up and
    /// opens a new connection over its next path.
    fn check_reconnects(&mut self) {
        for f in 0..self.flows.len() {
            let source = &self.flows[f];
            let group = &self.sc.flows[source.slot.group];
            let (Some(after), Some(c)) = (group.reconnect_after, source.conn) else {
                continue;
            };
            let slot = &self.conns[c.index()];
            let Some(client) = &slot.client else {
                continue;
            };
            if self.now < client.last_progress() + after.nanos() {
                continue;
            }
            let delivered = slot.server.as_ref().map_or(0, Server::delivered_bytes);
            self.close(c);
            self.flows[f].reconnect(delivered);
            self.start_flow(FlowId(f as u32));
        }
    }

    /// The source stops writing; the connection drains what it has. An on/off source
    /// schedules its next burst.
    fn end_burst(&mut self, f: FlowId) {
        if let Some(c) = self.flows[f.index()].conn.take() {
            if let Some(client) = self.conns[c.index()].client.as_mut() {
                client.stop_writing();
            }
            self.flush(c, Acted::Client);
        }
        let source = &mut self.flows[f.index()];
        if let Some(t) = source.idle_length(&self.sc.flows[source.slot.group]) {
            self.queue.push(self.now + t, Ev::FlowStart(f));
        }
    }

    /// Frees the connection's memory (late packets for it are ignored); the source's path
    /// selector learns what the connection measured.
    fn close(&mut self, c: ConnId) {
        let slot = &mut self.conns[c.index()];
        let flow = &mut self.flows[slot.flow.index()];
        if let Some(client) = &slot.client {
            flow.reinjected_bytes += client.reinjected_bytes();
            flow.loss_recovery += client.loss_recovery();
        }
        if let Some(server) = &slot.server {
            flow.receiver_segments += server.receiver_segments();
        }
        if let (Some(selection), Some(client)) =
            (&mut self.flows[slot.flow.index()].selection, &slot.client)
        {
            selection.observe(matcp::PathId(slot.path), client);
        }
        slot.client = None;
        slot.server = None;
        for timer in &mut self.timers[c.index()].0 {
            timer.deadline = None;
        }
    }

    /// Per flow, what its closed connections counted (`closed`, kept by the source) plus
    /// what each of its open ones counts (`open`).
    fn per_flow<T: Copy + std::ops::AddAssign>(
        &self,
        closed: impl Fn(&FlowSource) -> T,
        open: impl Fn(&ConnSlot) -> Option<T>,
    ) -> Vec<T> {
        let mut counts: Vec<T> = self.flows.iter().map(closed).collect();
        for slot in &self.conns {
            if let Some(count) = open(slot) {
                counts[slot.flow.index()] += count;
            }
        }
        counts
    }

    /// Each flow's payload bytes sent again at the data level.
    pub fn reinjected_bytes(&self) -> Vec<u64> {
        self.per_flow(
            |f| f.reinjected_bytes,
            |c| c.client.as_ref().map(Client::reinjected_bytes),
        )
    }

    /// How each flow's TCP senders recovered losses.
    pub fn loss_recovery(&self) -> Vec<measure::LossRecovery> {
        self.per_flow(
            |f| f.loss_recovery,
            |c| c.client.as_ref().map(Client::loss_recovery),
        )
    }

    /// What each flow's receivers sent and received.
    pub fn receiver_segments(&self) -> Vec<measure::ReceiverSegments> {
        self.per_flow(
            |f| f.receiver_segments,
            |c| c.server.as_ref().map(Server::receiver_segments),
        )
    }

    /// What each flow's receivers sent and received after the warm-up (nothing if the run
    /// ended before the warm-up did).
    pub fn receiver_segments_measured(&self) -> Vec<measure::ReceiverSegments> {
        let now = self.receiver_segments();
        match &self.receivers_at_warmup {
            Some(warm) => now.iter().zip(warm).map(|(n, w)| n.since(*w)).collect(),
            None => vec![measure::ReceiverSegments::default(); now.len()],
        }
    }

    /// Each flow's completion time, seconds (finite transfers that finished).
    pub fn completion_times(&self) -> Vec<Option<f64>> {
        self.flows.iter().map(|f| f.fct_s).collect()
    }
}

/// Schedules a link direction's wake-up: its one keyed event in the queue.
fn link_wake(queue: &mut EventQueue) -> impl FnMut(Nanos, DirId) + '_ {
    |t, d| queue.push_keyed(d.index(), t, Ev::LinkArrive(d.index() as u32))
}

/// The meter's view of the flows.
pub fn slots(flows: &[FlowSource]) -> Vec<FlowSlot> {
    flows.iter().map(|f| f.slot.clone()).collect()
}
