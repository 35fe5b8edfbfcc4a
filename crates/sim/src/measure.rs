//! Measurement: goodput per flow in bins and over the measured window, window and RTT
//! traces, queue lengths, link utilisation; and the summary metrics of a run.

use crate::connection::Connection;
use crate::packet::Packet;
use crate::world::FlowInst;
use net::LinkDir;
use scenario::Scenario;
use scenario::results::{Series, jain};
use scenario::spec::{Protocol, TrafficSpec};
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
    /// Per flow, per subflow: payload bytes first received on it in the measured window.
    subflow_bytes: Vec<Vec<u64>>,
    /// Per flow, the span over which its mean goodput is taken.
    windows: Vec<(u64, u64)>,
    trace_times: Vec<f64>,
    /// Per flow, per subflow.
    cwnd: Vec<Vec<Vec<f32>>>,
    rtt_ms: Vec<Vec<Vec<f32>>>,
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
            subflow_bytes: flows
                .iter()
                .map(|f| vec![0; sc.flows[f.group].subflow_paths.len()])
                .collect(),
            windows,
            trace_times: Vec::new(),
            cwnd: flows
                .iter()
                .map(|f| vec![Vec::new(); sc.flows[f.group].subflow_paths.len()])
                .collect(),
            rtt_ms: flows
                .iter()
                .map(|f| vec![Vec::new(); sc.flows[f.group].subflow_paths.len()])
                .collect(),
            queue: vec![Vec::new(); ndirs],
            warm: vec![(0, 0); ndirs],
            capacity_bits: vec![0.0; ndirs],
            capacity_since: vec![warmup; ndirs],
        }
    }

    /// New data arrived on subflow `k` of `flow` (counted once, not for duplicates).
    pub fn subflow_received(&mut self, now: u64, flow: usize, k: usize, bytes: u64) {
        let (from, to) = self.windows[flow];
        if now >= from && now <= to {
            self.subflow_bytes[flow][k] += bytes;
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

    /// Samples every subflow's window and RTT and every link's queue.
    pub fn trace(
        &mut self,
        now: u64,
        links: &[LinkDir<Packet>],
        conns: &[Connection],
        flows: &[FlowInst],
    ) {
        self.trace_times.push(now as f64 / 1e9);
        for (i, f) in flows.iter().enumerate() {
            let conn = f.conn.map(|c| &conns[c as usize]).filter(|c| !c.closed);
            for (k, (cw, rt)) in self.cwnd[i].iter_mut().zip(&mut self.rtt_ms[i]).enumerate() {
                let (w, r) = match conn.and_then(|c| c.subflows.get(k)) {
                    Some(sf) if sf.established => (
                        sf.tx.cwnd as f32,
                        if sf.tx.rtt.srtt > 0 {
                            sf.tx.rtt.srtt as f32 / 1e6
                        } else {
                            f32::NAN
                        },
                    ),
                    _ => (f32::NAN, f32::NAN),
                };
                cw.push(w);
                rt.push(r);
            }
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

    /// Window and RTT series of each subflow of flow `i`, and the convergence metrics.
    fn subflow_traces(
        &mut self,
        sc: &Scenario,
        protocol: Protocol,
        entity: &str,
        i: usize,
        metrics: &mut BTreeMap<String, f64>,
        series: &mut Vec<Series>,
    ) {
        let cwnds = std::mem::take(&mut self.cwnd[i]);
        let rtts = std::mem::take(&mut self.rtt_ms[i]);
        for (k, (cwnd, rtt)) in cwnds.into_iter().zip(rtts).enumerate() {
            let name = match protocol {
                Protocol::Tcp => entity.to_string(),
                Protocol::Mptcp => format!("{entity}.sf{k}"),
            };
            let cwnd: Vec<f64> = cwnd.into_iter().map(f64::from).collect();
            if let Some(after) = sc.measure.convergence_after
                && let Some((at, mean)) = convergence(&self.trace_times, &cwnd, after.secs())
            {
                metrics.insert(format!("{name}.mean_cwnd_after_pkts"), mean);
                metrics.insert(format!("{name}.converged_at_s"), at);
                metrics.insert(format!("{name}.convergence_s"), at - after.secs());
            }
            series.push(Series {
                name: "cwnd_pkts".into(),
                entity: name.clone(),
                times_s: self.trace_times.clone(),
                values: cwnd,
            });
            series.push(Series {
                name: "rtt_ms".into(),
                entity: name,
                times_s: self.trace_times.clone(),
                values: rtt.into_iter().map(f64::from).collect(),
            });
        }
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
            if group.protocol == Protocol::Mptcp {
                for k in 0..group.subflow_paths.len() {
                    let per_flow: Vec<f64> = members
                        .iter()
                        .map(|&i| {
                            let (a, b) = self.windows[i];
                            mbps(self.subflow_bytes[i][k], b.saturating_sub(a) as f64 / 1e9)
                        })
                        .collect();
                    metrics.insert(
                        format!("{prefix}.sf{k}.goodput_mbps"),
                        per_flow.iter().sum(),
                    );
                }
            }
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
            // The worst interval after the warm-up (the last, partial one left out): zero
            // when an outage stopped the group.
            let first = (self.warmup / self.interval) as usize;
            let worst = group_bins
                .get(first..group_bins.len().saturating_sub(1))
                .unwrap_or_default()
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            if worst.is_finite() {
                metrics.insert(format!("{prefix}.min_goodput_mbps"), worst);
            }
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
                    self.subflow_traces(sc, group.protocol, &entity, i, &mut metrics, &mut series);
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
                times_s: self.trace_times.clone(),
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

/// Seed 000's convergence time: the first instant after `after` at which the window reaches
/// its mean over the rest of the run. Returns (that instant, the mean).
pub fn convergence(times: &[f64], cwnd: &[f64], after: f64) -> Option<(f64, f64)> {
    let rest: Vec<(f64, f64)> = times
        .iter()
        .zip(cwnd)
        .filter(|(t, w)| **t >= after && w.is_finite())
        .map(|(t, w)| (*t, *w))
        .collect();
    if rest.is_empty() {
        return None;
    }
    let mean = rest.iter().map(|p| p.1).sum::<f64>() / rest.len() as f64;
    let at = rest.iter().find(|p| p.1 >= mean).map(|p| p.0)?;
    Some((at, mean))
}

#[cfg(test)]
mod tests {
    use super::convergence;

    #[test]
    fn convergence_is_the_first_time_the_window_reaches_its_later_mean() {
        let t = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        let w = [50.0, 2.0, 4.0, 8.0, 10.0, 6.0];
        // After t = 1: mean of 2, 4, 8, 10, 6 is 6, first reached at t = 3.
        assert_eq!(convergence(&t, &w, 1.0), Some((3.0, 6.0)));
        assert_eq!(convergence(&t, &w, 9.0), None);
    }
}
