//! The simulated network and its event loop: links, routes, connections and flow sources.

use crate::connection::{Connection, Subflow};
use crate::engine::{Ev, EventQueue};
use crate::mptcp::{DataReceiver, DataSender, pick_subflow};
use crate::packet::{HEADER_BYTES, MSS, Packet};
use crate::tcp::{CaState, Receiver, Sender};
use measure::{FlowMeter, FlowSlot, LinkMeter};
use mptcp_cc::{Ack, SubflowView};
use net::{Enqueued, LinkDir, LinkParams};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::Scenario;
use scenario::model::dir_id;
use scenario::spec::{Protocol, TrafficSpec};
use std::collections::HashMap;

/// Receive buffer when a flow sets none: Linux's default tcp_rmem maximum (6 MiB).
const DEFAULT_RCV_BUFFER: u64 = 6 * 1024 * 1024;
/// Size of a SYN or MP_JOIN segment on the wire, for the handshake's RTT sample.
const SYN_BYTES: u64 = 60;

/// Derives independent seeds for links and flows from the run's seed.
pub fn sub_seed(seed: u64, kind: u64, index: u64) -> u64 {
    let mut z =
        seed ^ kind.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn trace_interval(sc: &Scenario) -> u64 {
    sc.measure
        .trace_interval
        .unwrap_or(sc.measure.interval)
        .nanos()
}

/// One flow of a group: a traffic source and the connection currently serving it.
pub struct FlowInst {
    pub group: usize,
    pub index: u32,
    pub start: u64,
    pub stop: u64,
    pub conn: Option<u32>,
    /// The source has stopped writing (stop time reached).
    pub stopped: bool,
    rng: Xoshiro256PlusPlus,
    /// Flow completion time of a finite transfer, seconds.
    pub fct_s: Option<f64>,
    /// Which of the group's paths the next TCP connection uses (moves on a reconnect).
    path: usize,
    /// Payload bytes still to deliver for a finite transfer (across reconnects).
    remaining: u64,
}

/// The meter's view of the flows.
pub fn slots(flows: &[FlowInst]) -> Vec<FlowSlot> {
    flows
        .iter()
        .map(|f| FlowSlot {
            group: f.group,
            index: f.index,
            start: f.start,
            stop: f.stop,
        })
        .collect()
}

pub struct World<'s> {
    pub sc: &'s Scenario,
    pub now: u64,
    pub end: u64,
    pub queue: EventQueue,
    pub links: Vec<LinkDir<Packet>>,
    routes: Vec<Box<[u32]>>,
    route_ids: HashMap<Vec<usize>, u32>,
    pub conns: Vec<Connection>,
    pub flows: Vec<FlowInst>,
    pub meter: FlowMeter,
    pub link_meter: LinkMeter,
    pub packet_hops: u64,
    views: Vec<SubflowView>,
    out: Vec<Packet>,
}

impl<'s> World<'s> {
    pub fn new(sc: &'s Scenario, seed: u64) -> Self {
        let mut links = Vec::with_capacity(sc.links.len() * 2);
        for (i, l) in sc.links.iter().enumerate() {
            for (d, cfg) in l.dirs.iter().enumerate() {
                links.push(LinkDir::new(
                    LinkParams::from_config(cfg),
                    sub_seed(seed, 1, dir_id(i, d == 1) as u64),
                ));
            }
        }
        let mut flows = Vec::new();
        for (g, group) in sc.flows.iter().enumerate() {
            for i in 0..group.count {
                let mut rng =
                    Xoshiro256PlusPlus::seed_from_u64(sub_seed(seed, 2, flows.len() as u64));
                let jitter = match group.start_jitter.nanos() {
                    0 => 0,
                    j => rng.random_range(0..j),
                };
                flows.push(FlowInst {
                    group: g,
                    index: i,
                    start: group.start_of(i).nanos() + jitter,
                    stop: group.stop.nanos(),
                    conn: None,
                    stopped: false,
                    rng,
                    fct_s: None,
                    path: 0,
                    remaining: match group.traffic {
                        TrafficSpec::File { size } => size.bytes(MSS as u64),
                        TrafficSpec::Bulk | TrafficSpec::Onoff { .. } => u64::MAX,
                    },
                });
            }
        }
        let mut queue = EventQueue::default();
        for (f, fl) in flows.iter().enumerate() {
            queue.push(fl.start, Ev::FlowStart(f as u32));
            queue.push(fl.stop, Ev::FlowStop(f as u32));
        }
        for (i, e) in sc.events.iter().enumerate() {
            queue.push(e.at.nanos(), Ev::Scenario(i as u32));
        }
        queue.push(sc.measure.warmup.nanos(), Ev::Warmup);
        queue.push(sc.measure.interval.nanos(), Ev::Sample);
        queue.push(trace_interval(sc), Ev::Trace);
        let meter = FlowMeter::new(sc, &slots(&flows));
        let link_meter = LinkMeter::new(sc);
        World {
            sc,
            now: 0,
            end: sc.duration.nanos(),
            queue,
            links,
            routes: Vec::new(),
            route_ids: HashMap::new(),
            conns: Vec::new(),
            flows,
            meter,
            link_meter,
            packet_hops: 0,
            views: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Runs until the scenario's end; `progress` is called with the simulated time now and
    /// then (about once per simulated second).
    pub fn run(&mut self, mut progress: impl FnMut(u64)) {
        let mut next_report = 0;
        while let Some(t) = self.queue.peek_time() {
            if t > self.end {
                break;
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            self.now = t;
            if t >= next_report {
                progress(t);
                next_report = t + 1_000_000_000;
            }
            self.dispatch(ev);
        }
        self.now = self.end;
        for l in &mut self.links {
            l.sync_stats(self.end);
        }
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::LinkTx(d) => {
                let r = self.links[d as usize].tx_done(self.now);
                if let Some(t) = r.next_tx {
                    self.queue.push(t, Ev::LinkTx(d));
                }
                if let Some(t) = r.arrival {
                    self.queue.push(t, Ev::LinkArrive(d));
                }
            }
            Ev::LinkArrive(d) => {
                if let Some((pkt, next)) = self.links[d as usize].deliver(self.now) {
                    if let Some(t) = next {
                        self.queue.push(t, Ev::LinkArrive(d));
                    }
                    self.forward(pkt);
                }
            }
            Ev::Rto(c, s) => self.on_rto_timer(c, s as usize),
            Ev::DelAck(c, s) => self.on_delack_timer(c, s as usize),
            Ev::Join(c, s) => {
                if !self.conns[c as usize].closed {
                    let rtt = self.handshake_rtt(c, s as usize);
                    let sf = &mut self.conns[c as usize].subflows[s as usize];
                    sf.established = true;
                    sf.tx.rtt.sample(rtt);
                    self.send_data(c);
                }
            }
            Ev::FlowStart(f) => self.start_flow(f),
            Ev::BurstEnd(f) => self.end_burst(f, true),
            Ev::FlowStop(f) => {
                self.flows[f as usize].stopped = true;
                self.end_burst(f, false);
            }
            Ev::Scenario(i) => self.apply_event(i as usize),
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
            Ev::Warmup => self.link_meter.warmup(self.now, &self.links),
        }
    }

    /// Samples every subflow's window and RTT and every link's queue.
    fn trace(&mut self) {
        let (conns, flows) = (&self.conns, &self.flows);
        self.meter.trace(self.now, |i, k| {
            let conn = flows[i]
                .conn
                .map(|c| &conns[c as usize])
                .filter(|c| !c.closed);
            match conn.and_then(|c| c.subflows.get(k)) {
                Some(sf) if sf.established => (
                    sf.tx.cwnd as f32,
                    if sf.tx.rtt.srtt > 0 {
                        sf.tx.rtt.srtt as f32 / 1e6
                    } else {
                        f32::NAN
                    },
                ),
                _ => (f32::NAN, f32::NAN),
            }
        });
        self.link_meter.trace(self.now, &self.links);
    }

    fn route_id(&mut self, hops: Vec<usize>) -> u32 {
        if let Some(&id) = self.route_ids.get(&hops) {
            return id;
        }
        let id = self.routes.len() as u32;
        self.routes.push(hops.iter().map(|&h| h as u32).collect());
        self.route_ids.insert(hops, id);
        id
    }

    /// Puts a packet on the first hop of its route.
    fn inject(&mut self, pkt: Packet) {
        let d = self.routes[pkt.route as usize][pkt.hop as usize];
        self.packet_hops += 1;
        match self.links[d as usize].enqueue(self.now, pkt) {
            Enqueued::Transmitting(t) => self.queue.push(t, Ev::LinkTx(d)),
            Enqueued::Queued | Enqueued::Dropped(..) => {}
        }
    }

    /// A packet reached the end of a hop: on to the next, or to its endpoint.
    fn forward(&mut self, mut pkt: Packet) {
        let len = self.routes[pkt.route as usize].len();
        if (pkt.hop as usize) + 1 < len {
            pkt.hop += 1;
            self.inject(pkt);
        } else if pkt.is_ack {
            self.on_ack(pkt);
        } else {
            self.on_data(pkt);
        }
    }

    /// The propagation and serialisation time of a SYN and its answer over a subflow's
    /// routes: the RTT sample the handshake gives, as Linux takes from the SYN-ACK.
    fn handshake_rtt(&self, c: u32, s: usize) -> u64 {
        let sf = &self.conns[c as usize].subflows[s];
        [sf.fwd, sf.rev]
            .iter()
            .flat_map(|&r| self.routes[r as usize].iter())
            .map(|&d| {
                let p = self.links[d as usize].params();
                p.delay + net::tx_time(SYN_BYTES as u32, p.rate_bps)
            })
            .sum()
    }

    fn start_flow(&mut self, f: u32) {
        let fl = &self.flows[f as usize];
        if fl.stopped || fl.conn.is_some() || fl.remaining == 0 {
            return;
        }
        let group = &self.sc.flows[fl.group];
        let total_bytes = fl.remaining;
        let routes: Vec<_> = if group.protocol == Protocol::Tcp {
            vec![group.paths[fl.path % group.paths.len()].clone()]
        } else {
            group.subflow_paths.clone()
        };
        let buffer = group
            .rcv_buffer
            .map(|b| b.bytes(MSS as u64))
            .unwrap_or(DEFAULT_RCV_BUFFER);
        let buffer_segs = (buffer / MSS as u64).max(1);
        let limit = group
            .window_limit
            .map(|w| w.packets(MSS as u64 + HEADER_BYTES as u64))
            .unwrap_or(u64::MAX);
        let app_limit = if total_bytes == u64::MAX {
            u64::MAX
        } else {
            total_bytes.div_ceil(MSS as u64)
        };
        let (sack, delayed_ack, scheduler) = (group.sack, group.delayed_ack, group.scheduler);
        let cc = mptcp_cc::by_name(&group.cc).expect("validated against mptcp_cc::ALGORITHMS");
        let mut subflows = Vec::with_capacity(routes.len());
        for (k, route) in routes.iter().enumerate() {
            subflows.push(Subflow {
                tx: Sender::new(sack, limit),
                rx: Receiver::new(delayed_ack, sack),
                fwd: self.route_id(route.hops.clone()),
                rev: self.route_id(route.reversed().hops),
                established: k == 0,
                stale: false,
                rto_event: None,
                delack_event: None,
            });
        }
        let conn = Connection {
            flow: f,
            mptcp: group.protocol == Protocol::Mptcp,
            subflows,
            cc,
            data: DataSender::new(app_limit, buffer_segs),
            recv: DataReceiver::new(buffer_segs),
            scheduler,
            turn: 0,
            total_bytes,
            delivered_bytes: 0,
            last_progress: self.now,
            closed: false,
        };
        let c = self.conns.len() as u32;
        self.conns.push(conn);
        let rtt = self.handshake_rtt(c, 0);
        self.conns[c as usize].subflows[0].tx.rtt.sample(rtt);
        self.flows[f as usize].conn = Some(c);
        if let TrafficSpec::Onoff { burst, .. } =
            self.sc.flows[self.flows[f as usize].group].traffic
        {
            let t = Exp::new(1.0 / burst.secs())
                .expect("burst > 0")
                .sample(&mut self.flows[f as usize].rng);
            self.queue
                .push(self.now + (t * 1e9) as u64, Ev::BurstEnd(f));
        }
        self.send_data(c);
    }

    /// An application that has seen no progress for its `reconnect_after` gives up and
    /// opens a new connection over its next interface.
    fn check_reconnects(&mut self) {
        for f in 0..self.flows.len() {
            let fl = &self.flows[f];
            let group = &self.sc.flows[fl.group];
            let (Some(after), Some(c)) = (group.reconnect_after, fl.conn) else {
                continue;
            };
            let conn = &self.conns[c as usize];
            if conn.closed || self.now < conn.last_progress + after.nanos() {
                continue;
            }
            let delivered = conn.delivered_bytes;
            self.close(c);
            let fl = &mut self.flows[f];
            fl.conn = None;
            fl.path += 1;
            if fl.remaining != u64::MAX {
                fl.remaining -= delivered.min(fl.remaining);
            }
            self.start_flow(f as u32);
        }
    }

    /// The source stops writing; the connection drains what it has. An on/off source
    /// schedules its next burst.
    fn end_burst(&mut self, f: u32, next_burst: bool) {
        if let Some(c) = self.flows[f as usize].conn.take() {
            let data = &mut self.conns[c as usize].data;
            data.app_limit = data.app_limit.min(data.nxt);
            self.maybe_close(c);
        }
        let fl = &mut self.flows[f as usize];
        if next_burst
            && !fl.stopped
            && let TrafficSpec::Onoff { idle, .. } = self.sc.flows[fl.group].traffic
        {
            let t = Exp::new(1.0 / idle.secs())
                .expect("idle > 0")
                .sample(&mut fl.rng);
            self.queue
                .push(self.now + (t * 1e9) as u64, Ev::FlowStart(f));
        }
    }

    fn maybe_close(&mut self, c: u32) {
        let conn = &self.conns[c as usize];
        if !conn.closed && conn.data.all_acked() {
            self.close(c);
        }
    }

    /// Frees the per-connection memory; late packets for it are ignored.
    fn close(&mut self, c: u32) {
        let conn = &mut self.conns[c as usize];
        conn.closed = true;
        for s in &mut conn.subflows {
            s.tx = Sender::new(false, 0);
            s.rx = Receiver::new(false, false);
        }
        conn.data = DataSender::new(0, 0);
        conn.recv = DataReceiver::new(0);
    }

    fn data_packet(&self, c: u32, s: usize, seq: u64, dsn: u64) -> Packet {
        let conn = &self.conns[c as usize];
        let total = conn.total_bytes;
        let payload = if total == u64::MAX {
            MSS as u64
        } else {
            total.saturating_sub(dsn * MSS as u64).min(MSS as u64)
        };
        Packet {
            conn: c,
            subflow: s as u8,
            is_ack: false,
            route: conn.subflows[s].fwd,
            hop: 0,
            wire_bytes: payload as u16 + HEADER_BYTES,
            seq,
            dsn,
            ts: self.now.max(1),
            rwnd: 0,
            sack: [(0, 0); 3],
        }
    }

    /// Sends what the windows allow: each subflow's retransmissions first, then data-level
    /// segments (reinjections, then new data) on the subflows the scheduler picks.
    fn send_data(&mut self, c: u32) {
        if self.conns[c as usize].closed {
            return;
        }
        let n = self.conns[c as usize].subflows.len();
        let mut sent = 0u32;
        for s in 0..n {
            while let Some(seq) = self.conns[c as usize].subflows[s].tx.next_retransmit() {
                let dsn = self.conns[c as usize].subflows[s].tx.dsn_of(seq);
                let p = self.data_packet(c, s, seq, dsn);
                self.out.push(p);
                sent |= 1 << s;
            }
        }
        loop {
            let conn = &mut self.conns[c as usize];
            if !conn.data.has_data() {
                break;
            }
            let Some(s) = pick_subflow(conn.scheduler, &conn.subflows, &mut conn.turn) else {
                break;
            };
            let dsn = conn.data.take();
            let seq = conn.subflows[s].tx.send_new(dsn);
            let p = self.data_packet(c, s, seq, dsn);
            self.out.push(p);
            sent |= 1 << s;
        }
        for s in 0..n {
            if sent & (1 << s) != 0 {
                self.conns[c as usize].subflows[s].tx.on_sent(self.now);
                self.sync_rto(c, s);
            }
        }
        self.flush();
    }

    fn flush(&mut self) {
        let mut out = std::mem::take(&mut self.out);
        for p in out.drain(..) {
            self.inject(p);
        }
        self.out = out;
    }

    fn send_ack(&mut self, c: u32, s: usize) {
        let conn = &mut self.conns[c as usize];
        let (data_ack, rwnd) = (conn.recv.rcv_nxt, conn.recv.window());
        let sf = &mut conn.subflows[s];
        let (ack, tsecr, sack) = sf.rx.make_ack();
        let blocks = sack.iter().filter(|b| b.1 > b.0).count() as u16;
        let pkt = Packet {
            conn: c,
            subflow: s as u8,
            is_ack: true,
            route: sf.rev,
            hop: 0,
            wire_bytes: HEADER_BYTES + if blocks > 0 { 4 + 8 * blocks } else { 0 },
            seq: ack,
            dsn: data_ack,
            ts: tsecr,
            rwnd,
            sack,
        };
        self.inject(pkt);
    }

    fn on_data(&mut self, pkt: Packet) {
        let c = pkt.conn;
        let s = pkt.subflow as usize;
        let conn = &mut self.conns[c as usize];
        if conn.closed {
            return;
        }
        let res = conn.subflows[s].rx.on_data(self.now, pkt.seq, pkt.ts);
        // Segments go up to the data level as they arrive: out-of-order data of a subflow
        // takes buffer space either way.
        if res.fresh {
            let payload = (pkt.wire_bytes - HEADER_BYTES) as u64;
            self.meter
                .subflow_received(self.now, conn.flow as usize, s, payload);
        }
        if res.fresh && conn.recv.on_data(pkt.dsn) > 0 {
            let in_order = conn
                .recv
                .rcv_nxt
                .saturating_mul(MSS as u64)
                .min(conn.total_bytes);
            let bytes = in_order - conn.delivered_bytes;
            conn.delivered_bytes = in_order;
            let f = conn.flow as usize;
            self.meter.delivered(self.now, f, bytes);
            if in_order == conn.total_bytes {
                // Across reconnects, the transfer started when the flow did.
                let fl = &mut self.flows[f];
                fl.fct_s.get_or_insert((self.now - fl.start) as f64 / 1e9);
            }
        }
        if res.ack_now {
            self.send_ack(c, s);
        } else {
            self.sync_delack(c, s);
        }
    }

    fn on_ack(&mut self, pkt: Packet) {
        let c = pkt.conn;
        let s = pkt.subflow as usize;
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        if conn.closed {
            return;
        }
        let before = conn.subflows[s].tx.state;
        let first_ack = conn.subflows[s].tx.snd_una == 0;
        let res = conn.subflows[s].tx.on_ack(now, &pkt);
        if conn.data.on_data_ack(pkt.dsn, pkt.rwnd as u64) > 0 {
            conn.last_progress = now;
        }
        let tx = &conn.subflows[s].tx;
        let ack = Ack {
            acked: res.acked as f64,
            snd_una: tx.snd_una,
            snd_nxt: tx.snd_nxt,
            rtt_s: res.rtt_ns.map(|r| r as f64 / 1e9),
        };
        if res.acked > 0 {
            conn.subflows[s].stale = false;
            conn.cc.pkts_acked(s, &ack);
        }
        if conn.subflows[s].tx.state != before {
            conn.cc.set_state(s, conn.subflows[s].tx.state, ack.snd_una);
        }
        if res.loss_detected {
            conn.views(&mut self.views);
            let ssthresh = conn.cc.ssthresh(&self.views, s);
            conn.subflows[s].tx.enter_recovery(ssthresh);
            conn.cc.set_state(s, CaState::Recovery, ack.snd_una);
        } else if res.acked > 0 && conn.subflows[s].tx.state != CaState::Recovery {
            conn.views(&mut self.views);
            let w = conn.cc.cong_avoid(&self.views, s, &ack);
            let tx = &mut conn.subflows[s].tx;
            tx.cwnd = w.cwnd.max(1.0);
            tx.ssthresh = w.ssthresh.max(1.0);
        }
        if first_ack && res.acked > 0 && s == 0 && conn.mptcp {
            // MP_CAPABLE is confirmed: the path manager opens the other subflows.
            for k in 1..conn.subflows.len() {
                let t = now + self.handshake_rtt(c, k);
                self.queue.push(t, Ev::Join(c, k as u8));
            }
        }
        self.send_data(c);
        self.maybe_close(c);
    }

    fn sync_rto(&mut self, c: u32, s: usize) {
        let sf = &mut self.conns[c as usize].subflows[s];
        if let Some(d) = sf.tx.rto_deadline
            && sf.rto_event.is_none_or(|t| t > d)
        {
            sf.rto_event = Some(d);
            self.queue.push(d, Ev::Rto(c, s as u8));
        }
    }

    fn sync_delack(&mut self, c: u32, s: usize) {
        let sf = &mut self.conns[c as usize].subflows[s];
        if let Some(d) = sf.rx.delack_deadline
            && sf.delack_event.is_none_or(|t| t > d)
        {
            sf.delack_event = Some(d);
            self.queue.push(d, Ev::DelAck(c, s as u8));
        }
    }

    fn on_rto_timer(&mut self, c: u32, s: usize) {
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        let sf = &mut conn.subflows[s];
        if sf.rto_event == Some(now) {
            sf.rto_event = None;
        }
        if conn.closed {
            return;
        }
        match sf.tx.rto_deadline {
            Some(d) if d <= now => {
                conn.views(&mut self.views);
                let ssthresh = conn.cc.ssthresh(&self.views, s);
                let sf = &mut conn.subflows[s];
                sf.tx.on_rto(now, ssthresh);
                let una = sf.tx.snd_una;
                conn.cc.set_state(s, CaState::Loss, una);
                if conn.subflows.iter().filter(|x| x.established).count() > 1 {
                    // The subflow may be dead: send its data on the others too.
                    let sf = &mut conn.subflows[s];
                    sf.stale = true;
                    conn.data.reinject(sf.tx.unsacked_dsns());
                }
                self.sync_rto(c, s);
                self.send_data(c);
            }
            Some(_) => self.sync_rto(c, s),
            None => {}
        }
    }

    fn on_delack_timer(&mut self, c: u32, s: usize) {
        let now = self.now;
        let sf = &mut self.conns[c as usize].subflows[s];
        if sf.delack_event == Some(now) {
            sf.delack_event = None;
        }
        match sf.rx.delack_deadline {
            Some(d) if d <= now => self.send_ack(c, s),
            Some(_) => self.sync_delack(c, s),
            None => {}
        }
    }

    fn apply_event(&mut self, i: usize) {
        let e = &self.sc.events[i];
        for d in [dir_id(e.link, false), dir_id(e.link, true)] {
            self.link_meter
                .capacity_changes(self.now, d, &self.links[d]);
            self.links[d].apply(self.now, &e.kind);
        }
    }
}
