//! The simulated network and its event loop: links, routes, connections and flow sources.

use crate::connection::{Connection, Subflow};
use crate::engine::{Ev, EventQueue};
use crate::measure::Meter;
use crate::packet::{HEADER_BYTES, MSS, Packet};
use crate::tcp::{Next, Receiver, Sender};
use mptcp_cc::SubflowView;
use net::{Enqueued, LinkDir, LinkParams};
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::Scenario;
use scenario::model::{EventKind, dir_id};
use scenario::spec::TrafficSpec;
use std::collections::HashMap;

/// Receive buffer when a flow sets none: Linux's default tcp_rmem maximum (6 MiB).
const DEFAULT_RCV_BUFFER: u64 = 6 * 1024 * 1024;

/// Derives independent seeds for links and flows from the run's seed.
pub fn sub_seed(seed: u64, kind: u64, index: u64) -> u64 {
    let mut z =
        seed ^ kind.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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
    pub meter: Meter,
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
                flows.push(FlowInst {
                    group: g,
                    index: i,
                    start: group.start_of(i).nanos(),
                    stop: group.stop.nanos(),
                    conn: None,
                    stopped: false,
                    rng: Xoshiro256PlusPlus::seed_from_u64(sub_seed(seed, 2, flows.len() as u64)),
                    fct_s: None,
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
        let meter = Meter::new(sc, &flows);
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
            Ev::FlowStart(f) => self.start_flow(f),
            Ev::BurstEnd(f) => self.end_burst(f, true),
            Ev::FlowStop(f) => {
                self.flows[f as usize].stopped = true;
                self.end_burst(f, false);
            }
            Ev::Scenario(i) => self.apply_event(i as usize),
            Ev::Sample => {
                self.meter
                    .sample(self.now, &self.links, &self.conns, &self.flows);
                self.queue
                    .push(self.now + self.sc.measure.interval.nanos(), Ev::Sample);
            }
            Ev::Warmup => self.meter.warmup(self.now, &self.links),
        }
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

    fn start_flow(&mut self, f: u32) {
        let fl = &self.flows[f as usize];
        if fl.stopped || fl.conn.is_some() {
            return;
        }
        let group = &self.sc.flows[fl.group];
        let total_bytes = match group.traffic {
            TrafficSpec::File { size } => size.bytes(MSS as u64),
            TrafficSpec::Bulk | TrafficSpec::Onoff { .. } => u64::MAX,
        };
        let fwd_hops = group.paths[0].hops.clone();
        let rev_hops = group.paths[0].reversed().hops;
        let (fwd, rev) = (self.route_id(fwd_hops), self.route_id(rev_hops));
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
        let cc = mptcp_cc::by_name(&group.cc).expect("validated against mptcp_cc::ALGORITHMS");
        let conn = Connection {
            flow: f,
            subflows: vec![Subflow {
                tx: Sender::new(group.sack, limit, buffer_segs, app_limit),
                rx: Receiver::new(buffer_segs, group.delayed_ack, group.sack),
                fwd,
                rev,
                rto_event: None,
                delack_event: None,
            }],
            cc,
            total_bytes,
            delivered_bytes: 0,
            opened_at: self.now,
            closed: false,
        };
        let c = self.conns.len() as u32;
        self.conns.push(conn);
        self.flows[f as usize].conn = Some(c);
        if let TrafficSpec::Onoff { burst, .. } = group.traffic {
            let t = Exp::new(1.0 / burst.secs())
                .expect("burst > 0")
                .sample(&mut self.flows[f as usize].rng);
            self.queue
                .push(self.now + (t * 1e9) as u64, Ev::BurstEnd(f));
        }
        self.send_data(c, 0);
    }

    /// The source stops writing; the connection drains what it has. An on/off source
    /// schedules its next burst.
    fn end_burst(&mut self, f: u32, next_burst: bool) {
        if let Some(c) = self.flows[f as usize].conn.take() {
            let conn = &mut self.conns[c as usize];
            for sf in &mut conn.subflows {
                sf.tx.app_limit = sf.tx.app_limit.min(sf.tx.snd_nxt);
            }
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
        let conn = &mut self.conns[c as usize];
        if !conn.closed && conn.subflows.iter().all(|s| s.tx.all_acked()) {
            conn.closed = true;
            // Free the per-connection memory; late packets for it are ignored.
            for s in &mut conn.subflows {
                s.tx = Sender::new(false, 0, 0, 0);
                s.rx = Receiver::new(0, false, false);
            }
        }
    }

    fn send_data(&mut self, c: u32, s: usize) {
        let conn = &mut self.conns[c as usize];
        if conn.closed {
            return;
        }
        let total = conn.total_bytes;
        let sf = &mut conn.subflows[s];
        while let Some(next) = sf.tx.next_to_send() {
            let seq = match next {
                Next::Retransmit(q) | Next::New(q) => q,
            };
            let payload = if total == u64::MAX {
                MSS as u64
            } else {
                (total - seq * MSS as u64).min(MSS as u64)
            };
            self.out.push(Packet {
                conn: c,
                subflow: s as u8,
                is_ack: false,
                route: sf.fwd,
                hop: 0,
                wire_bytes: payload as u16 + HEADER_BYTES,
                seq,
                ts: self.now.max(1),
                rwnd: 0,
                sack: [(0, 0); 3],
            });
            sf.tx.on_sent(self.now);
        }
        self.flush();
        self.sync_rto(c, s);
    }

    fn flush(&mut self) {
        let mut out = std::mem::take(&mut self.out);
        for p in out.drain(..) {
            self.inject(p);
        }
        self.out = out;
    }

    fn send_ack(&mut self, c: u32, s: usize) {
        let sf = &mut self.conns[c as usize].subflows[s];
        let (ack, tsecr, rwnd, sack) = sf.rx.make_ack();
        let blocks = sack.iter().filter(|b| b.1 > b.0).count() as u16;
        let pkt = Packet {
            conn: c,
            subflow: s as u8,
            is_ack: true,
            route: sf.rev,
            hop: 0,
            wire_bytes: HEADER_BYTES + if blocks > 0 { 4 + 8 * blocks } else { 0 },
            seq: ack,
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
        if res.delivered > 0 {
            let in_order = conn.subflows[s]
                .rx
                .rcv_nxt
                .saturating_mul(MSS as u64)
                .min(conn.total_bytes);
            let bytes = in_order - conn.delivered_bytes;
            conn.delivered_bytes = in_order;
            let f = conn.flow as usize;
            self.meter.delivered(self.now, f, bytes);
            if in_order == conn.total_bytes {
                let opened = conn.opened_at;
                self.flows[f]
                    .fct_s
                    .get_or_insert((self.now - opened) as f64 / 1e9);
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
        let res = conn.subflows[s].tx.on_ack(now, &pkt);
        if res.loss_detected {
            conn.views(&mut self.views);
            let ssthresh = conn.cc.on_loss(&self.views, s);
            conn.subflows[s].tx.enter_recovery(ssthresh);
        } else if res.acked > 0 && conn.subflows[s].tx.state != crate::tcp::CaState::Recovery {
            let left = conn.subflows[s].tx.slow_start(res.acked);
            if left > 0.0 {
                conn.views(&mut self.views);
                let w = conn.cc.on_ack(&self.views, s, left);
                conn.subflows[s].tx.cwnd = w.max(1.0);
            }
        }
        self.send_data(c, s);
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
                let ssthresh = conn.cc.on_loss(&self.views, s);
                conn.subflows[s].tx.on_rto(now, ssthresh);
                self.send_data(c, s);
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
            self.meter.capacity_changes(self.now, d, &self.links[d]);
            let l = &mut self.links[d];
            match &e.kind {
                EventKind::Down => {
                    l.set_up(self.now, false);
                }
                EventKind::Up => {
                    l.set_up(self.now, true);
                }
                EventKind::Set { rate, delay, loss } => {
                    if let Some(r) = rate {
                        l.set_rate(r.bps());
                    }
                    if let Some(dl) = delay {
                        l.set_delay(dl.nanos());
                    }
                    if let Some(p) = loss {
                        l.set_loss(p.0);
                    }
                }
            }
        }
    }
}
