//! Measurement: goodput per flow in bins and over the measured window, window and RTT
//! traces, queue lengths, link utilisation; and the summary metrics of a run.

use crate::connection::Connection;
use crate::packet::Packet;
use crate::world::FlowInst;
use net::LinkDir;
use scenario::Scenario;
use scenario::results::{Series, jain};
use scenario::spec::TrafficSpec;
use std::collections::BTreeMap;

/// What a run measured, ready for `RunResult`.
pub struct Measured {
    pub metrics: BTreeMap<String, f64>,
    pub flow_goodput_mbps: BTreeMap<String, Vec<f64>>,
    pub series: Vec<Series>,
}

pub struct Meter {
    interval: u64,
    warmup: u64,
    end: u64,
    bins: Vec<Vec<u64>>,
    measured_bytes: Vec<u64>,
    /// Per flow, the span over which its mean goodput is taken.
    windows: Vec<(u64, u64)>,
    sample_times: Vec<f64>,
    cwnd: Vec<Vec<f32>>,
    rtt_ms: Vec<Vec<f32>>,
    queue: Vec<Vec<f32>>,
    warm: Vec<(u64, u64)>,
    capacity_bits: Vec<f64>,
    capacity_since: Vec<u64>,
}

impl Meter {
    pub fn new(sc: &Scenario, flows: &[FlowInst]) -> Self {
        let interval = sc.measure.interval.nanos();
        let end = sc.duration.nanos();
        let warmup = sc.measure.warmup.nanos();
        let nbins = end.div_ceil(interval) as usize;
        let windows = flows
            .iter()
            .map(|f| {
                let from = match sc.flows[f.group].traffic {
                    // A source that comes and goes is measured over the whole run.
                    TrafficSpec::Onoff { .. } => warmup,
                    _ => f.start.max(warmup),
                };
                (from, f.stop.min(end))
            })
            .collect();
        let ndirs = sc.links.len() * 2;
        Meter {
            interval,
            warmup,
            end,
            bins: vec![vec![0; nbins]; flows.len()],
            measured_bytes: vec![0; flows.len()],
            windows,
            sample_times: Vec::new(),
            cwnd: vec![Vec::new(); flows.len()],
            rtt_ms: vec![Vec::new(); flows.len()],
            queue: vec![Vec::new(); ndirs],
            warm: vec![(0, 0); ndirs],
            capacity_bits: vec![0.0; ndirs],
            capacity_since: vec![warmup; ndirs],
        }
    }

    pub fn delivered(&mut self, now: u64, flow: usize, bytes: u64) {
        let bin = ((now / self.interval) as usize).min(self.bins[flow].len().saturating_sub(1));
        self.bins[flow][bin] += bytes;
        let (from, to) = self.windows[flow];
        if now >= from && now <= to {
            self.measured_bytes[flow] += bytes;
        }
    }

    pub fn sample(
        &mut self,
        now: u64,
        links: &[LinkDir<Packet>],
        conns: &[Connection],
        flows: &[FlowInst],
    ) {
        self.sample_times.push(now as f64 / 1e9);
        for (i, f) in flows.iter().enumerate() {
            let (w, r) = match f.conn.map(|c| &conns[c as usize]) {
                Some(c) if !c.closed => {
                    let tx = &c.subflows[0].tx;
                    (
                        tx.cwnd as f32,
                        if tx.rtt.srtt > 0 {
                            tx.rtt.srtt as f32 / 1e6
                        } else {
                            f32::NAN
                        },
                    )
                }
                _ => (f32::NAN, f32::NAN),
            };
            self.cwnd[i].push(w);
            self.rtt_ms[i].push(r);
        }
        for (d, l) in links.iter().enumerate() {
            self.queue[d].push(l.queue_pkts() as f32);
        }
    }

    pub fn warmup(&mut self, now: u64, links: &[LinkDir<Packet>]) {
        for (d, l) in links.iter().enumerate() {
            self.warm[d] = (l.stats.tx_bytes, l.stats.drops());
            self.capacity_since[d] = now;
        }
    }

    /// Accounts the capacity offered so far, before a link's rate or state changes.
    pub fn capacity_changes(&mut self, now: u64, d: usize, link: &LinkDir<Packet>) {
        if now <= self.warmup {
            return;
        }
        let since = self.capacity_since[d].max(self.warmup);
        if link.is_up() {
            self.capacity_bits[d] += (now - since) as f64 / 1e9 * link.params().rate_bps as f64;
        }
        self.capacity_since[d] = now;
    }

    pub fn finish(
        mut self,
        sc: &Scenario,
        links: &[LinkDir<Packet>],
        flows: &[FlowInst],
    ) -> Measured {
        let mut metrics = BTreeMap::new();
        let mut per_flow = BTreeMap::new();
        let mut series = Vec::new();
        let interval_s = self.interval as f64 / 1e9;
        let bin_times: Vec<f64> = (1..=self.bins.first().map_or(0, Vec::len))
            .map(|i| (i as f64 * interval_s).min(self.end as f64 / 1e9))
            .collect();
        let mbps = |bytes: u64, secs: f64| {
            if secs > 0.0 {
                bytes as f64 * 8.0 / secs / 1e6
            } else {
                0.0
            }
        };

        let mut all_bulk = Vec::new();
        for (g, group) in sc.flows.iter().enumerate() {
            let members: Vec<usize> = (0..flows.len()).filter(|&i| flows[i].group == g).collect();
            let goodputs: Vec<f64> = members
                .iter()
                .map(|&i| {
                    let (a, b) = self.windows[i];
                    mbps(self.measured_bytes[i], b.saturating_sub(a) as f64 / 1e9)
                })
                .collect();
            let prefix = format!("group.{}", group.name);
            let sum: f64 = goodputs.iter().sum();
            metrics.insert(format!("{prefix}.goodput_mbps"), sum);
            metrics.insert(
                format!("{prefix}.goodput_mbps_per_flow"),
                sum / goodputs.len().max(1) as f64,
            );
            metrics.insert(format!("{prefix}.jain"), jain(&goodputs));
            if let TrafficSpec::File { .. } = group.traffic {
                let fcts: Vec<f64> = members.iter().filter_map(|&i| flows[i].fct_s).collect();
                metrics.insert(format!("{prefix}.completed"), fcts.len() as f64);
                if !fcts.is_empty() {
                    metrics.insert(
                        format!("{prefix}.fct_s"),
                        fcts.iter().sum::<f64>() / fcts.len() as f64,
                    );
                }
            } else {
                all_bulk.extend(goodputs.iter().copied());
            }
            per_flow.insert(group.name.clone(), goodputs);

            let group_bins: Vec<f64> = (0..bin_times.len())
                .map(|b| mbps(members.iter().map(|&i| self.bins[i][b]).sum(), interval_s))
                .collect();
            series.push(Series {
                name: "goodput_mbps".into(),
                entity: prefix.clone(),
                times_s: bin_times.clone(),
                values: group_bins,
            });
            if sc.measure.per_flow {
                for &i in &members {
                    let entity = format!("flow.{}#{}", group.name, flows[i].index);
                    let values = self.bins[i].iter().map(|&b| mbps(b, interval_s)).collect();
                    series.push(Series {
                        name: "goodput_mbps".into(),
                        entity: entity.clone(),
                        times_s: bin_times.clone(),
                        values,
                    });
                    let cwnd = std::mem::take(&mut self.cwnd[i])
                        .into_iter()
                        .map(f64::from)
                        .collect();
                    series.push(Series {
                        name: "cwnd_pkts".into(),
                        entity: entity.clone(),
                        times_s: self.sample_times.clone(),
                        values: cwnd,
                    });
                    let rtt = std::mem::take(&mut self.rtt_ms[i])
                        .into_iter()
                        .map(f64::from)
                        .collect();
                    series.push(Series {
                        name: "rtt_ms".into(),
                        entity,
                        times_s: self.sample_times.clone(),
                        values: rtt,
                    });
                }
            }
        }
        if !all_bulk.is_empty() {
            metrics.insert("all.jain".into(), jain(&all_bulk));
            metrics.insert("all.goodput_mbps".into(), all_bulk.iter().sum());
        }

        for (d, l) in links.iter().enumerate() {
            if l.stats.arrived_pkts == 0 {
                continue;
            }
            let link = &sc.links[d / 2];
            let prefix = format!(
                "link.{}.{}",
                link.name,
                if d % 2 == 0 { "ab" } else { "ba" }
            );
            self.capacity_changes(self.end, d, l);
            let bits = (l.stats.tx_bytes - self.warm[d].0) as f64 * 8.0;
            metrics.insert(
                format!("{prefix}.utilisation"),
                if self.capacity_bits[d] > 0.0 {
                    bits / self.capacity_bits[d]
                } else {
                    0.0
                },
            );
            metrics.insert(
                format!("{prefix}.drops"),
                (l.stats.drops() - self.warm[d].1) as f64,
            );
            metrics.insert(
                format!("{prefix}.mean_queue_pkts"),
                l.stats.queue_area as f64 / self.end.max(1) as f64,
            );
            let q = std::mem::take(&mut self.queue[d])
                .into_iter()
                .map(f64::from)
                .collect();
            series.push(Series {
                name: "queue_pkts".into(),
                entity: prefix,
                times_s: self.sample_times.clone(),
                values: q,
            });
        }
        Measured {
            metrics,
            flow_goodput_mbps: per_flow,
            series,
        }
    }
}
