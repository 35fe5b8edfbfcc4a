//! The links' side: utilisation of the capacity offered after the warm-up, drops, queue
//! length over time. Generic over the packet type, as the link model is.

use crate::Measured;
use net::fabric::{RouteId, RouteTable};
use net::{LinkDir, Packet};
use scenario::Scenario;
use scenario::metrics::{Entity, LinkSide, Metric, Quantity};
use scenario::model::DirId;
use scenario::results::Series;

pub struct LinkMeter {
    warmup: u64,
    end: u64,
    trace_times: Vec<f64>,
    queue: Vec<Vec<f32>>,
    /// (bytes sent, drops) of each direction when the warm-up ended.
    warm: Vec<(u64, u64)>,
    capacity_bits: Vec<f64>,
    capacity_since: Vec<u64>,
    /// Payload bytes first received after the warm-up, per route (index: `RouteId`): one
    /// addition per segment; each direction's goodput (MATCP's per-path goodput) is the sum
    /// over the routes that cross it, at the end.
    received: Vec<u64>,
}

impl LinkMeter {
    pub fn new(sc: &Scenario) -> Self {
        let ndirs = sc.links.len() * 2;
        let warmup = sc.measure.warmup.nanos();
        LinkMeter {
            warmup,
            end: sc.duration.nanos(),
            trace_times: Vec::new(),
            queue: vec![Vec::new(); ndirs],
            warm: vec![(0, 0); ndirs],
            capacity_bits: vec![0.0; ndirs],
            capacity_since: vec![warmup; ndirs],
            received: Vec::new(),
        }
    }

    /// Samples every direction's queue length.
    pub fn trace<P: Packet>(&mut self, now: u64, links: &[LinkDir<P>]) {
        self.trace_times.push(now as f64 / 1e9);
        for (d, l) in links.iter().enumerate() {
            self.queue[d].push(l.queue_pkts() as f32);
        }
    }

    /// `bytes` of new payload arrived at `now` over `route`.
    pub fn received(&mut self, now: u64, route: RouteId, bytes: u64) {
        if now < self.warmup {
            return;
        }
        let r = route.0 as usize;
        if r >= self.received.len() {
            self.received.resize(r + 1, 0);
        }
        self.received[r] += bytes;
    }

    /// Payload bytes received over each direction: the sum over the routes crossing it.
    fn received_per_dir(&self, ndirs: usize, routes: &RouteTable) -> Vec<u64> {
        let mut per_dir = vec![0; ndirs];
        for (r, &bytes) in self.received.iter().enumerate() {
            for d in routes.hops(RouteId(r as u32)) {
                per_dir[d.index()] += bytes;
            }
        }
        per_dir
    }

    pub fn warmup<P: Packet>(&mut self, now: u64, links: &[LinkDir<P>]) {
        for (d, l) in links.iter().enumerate() {
            self.warm[d] = (l.stats.tx_bytes, l.stats.drops());
            self.capacity_since[d] = now;
        }
    }

    /// Accounts the capacity offered so far, before a link's rate or state changes.
    pub fn capacity_changes<P: Packet>(&mut self, now: u64, d: DirId, link: &LinkDir<P>) {
        let d = d.index();
        if now <= self.warmup {
            return;
        }
        let since = self.capacity_since[d].max(self.warmup);
        if link.is_up() {
            self.capacity_bits[d] += (now - since) as f64 / 1e9 * link.params().rate_bps as f64;
        }
        self.capacity_since[d] = now;
    }

    /// Utilisation, drops and mean queue of every direction that carried traffic, and its
    /// queue series. Call once the links are synced to the end of the run.
    /// With `routes` (the backend reported received payload per route), also each
    /// direction's goodput and its share of capacity; without, those are not given.
    pub fn finish<P: Packet>(
        mut self,
        sc: &Scenario,
        links: &[LinkDir<P>],
        routes: Option<&RouteTable>,
    ) -> Measured {
        let mut out = Measured::default();
        let received = routes.map(|r| self.received_per_dir(links.len(), r));
        for (d, l) in links.iter().enumerate() {
            if l.stats.arrived_pkts == 0 {
                continue;
            }
            let dir = DirId(d);
            let link = &sc.links[dir.link()];
            let entity = Entity::Link(link.name.clone(), LinkSide::of_dir(dir));
            let metric = |q| String::from(Metric::new(entity.clone(), q));
            self.capacity_changes(self.end, dir, l);
            let share = |bytes: u64| {
                if self.capacity_bits[d] > 0.0 {
                    bytes as f64 * 8.0 / self.capacity_bits[d]
                } else {
                    0.0
                }
            };
            let sent = l.stats.tx_bytes - self.warm[d].0;
            out.metrics
                .insert(metric(Quantity::Utilisation), share(sent));
            if let Some(received) = &received {
                out.metrics
                    .insert(metric(Quantity::GoodputShare), share(received[d]));
                let measured_s = self.end.saturating_sub(self.warmup) as f64 / 1e9;
                out.metrics.insert(
                    metric(Quantity::GoodputMbps),
                    crate::mbps(received[d], measured_s),
                );
            }
            out.metrics.insert(
                metric(Quantity::Drops),
                (l.stats.drops() - self.warm[d].1) as f64,
            );
            out.metrics.insert(
                metric(Quantity::MeanQueuePkts),
                l.stats.queue_area as f64 / self.end.max(1) as f64,
            );
            let q = std::mem::take(&mut self.queue[d])
                .into_iter()
                .map(f64::from)
                .collect();
            out.series.push(Series {
                name: "queue_pkts".into(),
                entity: entity.to_string(),
                times_s: self.trace_times.clone(),
                values: q,
            });
        }
        out
    }
}
