//! The flows' side: bytes delivered to each receiving application, bytes first received on
//! each subflow, and each subflow's window and RTT over time.

use crate::convergence::{Convergence, convergence};
use crate::pair_trace::PairTrace;
use crate::{Measured, mbps};
use scenario::Scenario;
use scenario::metrics::{Entity, Metric, Quantity};
use scenario::results::{Series, jain};
use scenario::spec::{Protocol, TrafficSpec};

/// One flow of a group, as the meter needs to know it: the layout every backend shares.
pub use net::layout::FlowSlot;

pub struct FlowMeter {
    interval: u64,
    warmup: u64,
    end: u64,
    /// Per flow, bytes delivered in each interval (but for the bin each flow is filling,
    /// kept in its `FlowCounters` until the flow moves on to another bin).
    bins: Vec<Vec<u64>>,
    /// The index of each flow's last bin.
    last_bin: u64,
    /// Per flow, what every packet it delivers updates: together, so that a packet costs
    /// one cache miss here rather than one per array at thousands of flows.
    counters: Vec<FlowCounters>,
    /// The subflow counters of flows with more than `INLINE_SUBFLOWS` subflows, past those
    /// (flow `i`'s from `counters[i].more`).
    more_subflow_bytes: Vec<u64>,
    trace_times: Vec<f64>,
    /// Per flow, per subflow.
    cwnd: Vec<Vec<Vec<f32>>>,
    rtt_ms: Vec<Vec<Vec<f32>>>,
    /// When the scenario traces receivers: each subflow's `rcv_ssthresh` and
    /// `window_clamp`, bytes.
    receiver: Option<PairTrace>,
    /// When the scenario traces the congestion controls: each subflow's coupling state.
    coupling: Option<PairTrace>,
    /// Per flow, payload bytes its MPTCP connections sent again at the data level, when the
    /// backend measures it.
    reinjected: Option<Vec<u64>>,
    /// Per flow, what its TCP senders did to recover losses, when the backend counts it,
    /// and which of those counts the backend has.
    loss_recovery: Option<(Vec<LossRecovery>, RecoveryCounts)>,
    /// Per flow, what its receivers sent and received after the warm-up, when the backend
    /// counts it.
    receiver_segments: Option<Vec<ReceiverSegments>>,
}

/// What a flow's receivers (every subflow of every connection) sent and received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverSegments {
    /// Segments sent: for a receiver, its ACKs (Linux's `tcpi_segs_out`).
    pub sent: u64,
    /// Data segments received, duplicates included (`tcpi_data_segs_in`).
    pub data_received: u64,
}

impl std::ops::AddAssign for ReceiverSegments {
    fn add_assign(&mut self, o: ReceiverSegments) {
        self.sent += o.sent;
        self.data_received += o.data_received;
    }
}

impl std::ops::Add for ReceiverSegments {
    type Output = ReceiverSegments;
    fn add(mut self, o: ReceiverSegments) -> ReceiverSegments {
        self += o;
        self
    }
}

impl ReceiverSegments {
    /// What was counted since `earlier` (a reading of the same counters).
    pub fn since(self, earlier: ReceiverSegments) -> ReceiverSegments {
        ReceiverSegments {
            sent: self.sent.saturating_sub(earlier.sent),
            data_received: self.data_received.saturating_sub(earlier.data_received),
        }
    }

    /// Each count at its larger of two readings.
    pub fn highest(self, o: ReceiverSegments) -> ReceiverSegments {
        ReceiverSegments {
            sent: self.sent.max(o.sent),
            data_received: self.data_received.max(o.data_received),
        }
    }
}

/// Which of `LossRecovery`'s counts a backend keeps per flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecoveryCounts {
    /// All of them (the simulator; the data level's for MPTCP groups only).
    All,
    /// Only the segments sent again: the kernel counts timeouts and loss probes per host
    /// (`nstat`), not per socket.
    RetransmissionsOnly,
}

/// What a flow's TCP senders (all subflows of all its connections) and, for MPTCP, its
/// connections' data level did to recover losses over the whole run, the warm-up included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossRecovery {
    /// Segments sent again (`tcpi_total_retrans`).
    pub retransmitted_segments: u64,
    /// Retransmission timeouts (`TcpExtTCPTimeouts`).
    pub timeouts: u64,
    /// Tail loss probes (`TcpExtTCPLossProbes`).
    pub loss_probes: u64,
    /// MPTCP: subflows marked stale (`MPTcpExtSubflowStale`), each time it happened.
    pub stale_subflows: u64,
    /// MPTCP: expiries of the data-level retransmission timer that sent data again.
    pub data_retransmissions: u64,
}

impl std::ops::AddAssign for LossRecovery {
    fn add_assign(&mut self, o: LossRecovery) {
        self.retransmitted_segments += o.retransmitted_segments;
        self.timeouts += o.timeouts;
        self.loss_probes += o.loss_probes;
        self.stale_subflows += o.stale_subflows;
        self.data_retransmissions += o.data_retransmissions;
    }
}

/// Subflow counters kept in a flow's `FlowCounters` (MPTCP's usual two; more spill over).
const INLINE_SUBFLOWS: usize = 2;

/// One flow's counters, in one cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct FlowCounters {
    /// The span over which its mean goodput is taken.
    window: (u64, u64),
    /// Bytes delivered in that span.
    measured_bytes: u64,
    /// The bytes delivered in the goodput bin the flow is filling (`bin`), not yet added
    /// to `FlowMeter::bins`.
    bin_bytes: u64,
    bin: u32,
    /// Its subflows, and where those past the inline ones are in
    /// `FlowMeter::more_subflow_bytes`.
    subflows: u32,
    more: u32,
    /// Per subflow: payload bytes first received on it in the measured window.
    subflow_bytes: [u64; INLINE_SUBFLOWS],
}

impl FlowCounters {
    fn subflow_bytes<'a>(&'a mut self, more: &'a mut [u64], k: usize) -> Option<&'a mut u64> {
        if k >= self.subflows as usize {
            return None;
        }
        match k.checked_sub(INLINE_SUBFLOWS) {
            None => Some(&mut self.subflow_bytes[k]),
            Some(j) => more.get_mut(self.more as usize + j),
        }
    }
}

/// Subflows per connection of group `g`.
fn subflows(sc: &Scenario, g: usize) -> usize {
    net::paths::subflow_routes(&sc.flows[g]).len()
}

impl FlowMeter {
    pub fn new(sc: &Scenario, flows: &[FlowSlot]) -> Self {
        let interval = sc.measure.interval.nanos();
        let end = sc.duration.nanos();
        let warmup = sc.measure.warmup.nanos();
        let nbins = end.div_ceil(interval) as usize;
        let mut spilled = 0;
        let counters = flows
            .iter()
            .map(|f| {
                let from = match sc.flows[f.group].traffic {
                    // A source that comes and goes is measured over the whole run.
                    TrafficSpec::Onoff { .. } => warmup,
                    _ => f.start.max(warmup),
                };
                let n = subflows(sc, f.group);
                let more = spilled;
                spilled += n.saturating_sub(INLINE_SUBFLOWS);
                FlowCounters {
                    window: (from, f.stop.min(end)),
                    subflows: n as u32,
                    more: more as u32,
                    ..FlowCounters::default()
                }
            })
            .collect();
        let shape: Vec<usize> = flows.iter().map(|f| subflows(sc, f.group)).collect();
        let per_subflow =
            || -> Vec<Vec<Vec<f32>>> { shape.iter().map(|&n| vec![Vec::new(); n]).collect() };
        FlowMeter {
            interval,
            warmup,
            end,
            bins: vec![vec![0; nbins]; flows.len()],
            last_bin: nbins.saturating_sub(1) as u64,
            counters,
            more_subflow_bytes: vec![0; spilled],
            trace_times: Vec::new(),
            cwnd: per_subflow(),
            rtt_ms: per_subflow(),
            receiver: sc
                .measure
                .trace_receiver
                .then(|| PairTrace::new(["rcv_ssthresh_kb", "window_clamp_kb"], 1000.0, &shape)),
            coupling: sc
                .measure
                .trace_cc
                .then(|| PairTrace::new(["cc_alpha", "cc_inter_loss_pkts"], 1.0, &shape)),
            reinjected: None,
            loss_recovery: None,
            receiver_segments: None,
        }
    }

    /// `flow`'s connections sent `bytes` of payload again at the data level, over the
    /// whole run (the warm-up included: a rewind's cost does not depend on when it began).
    pub fn reinjected(&mut self, flow: usize, bytes: u64) {
        let n = self.counters.len();
        self.reinjected.get_or_insert_with(|| vec![0; n])[flow] += bytes;
    }

    /// `flow`'s connections recovered losses as `counts` says, over the whole run.
    pub fn loss_recovery(&mut self, flow: usize, counts: LossRecovery) {
        self.recovery_counts(RecoveryCounts::All)[flow] += counts;
    }

    /// `flow`'s connections sent `segments` again at the TCP level over the whole run, for a
    /// backend that counts nothing else of their loss recovery per flow.
    pub fn retransmitted_segments(&mut self, flow: usize, segments: u64) {
        self.recovery_counts(RecoveryCounts::RetransmissionsOnly)[flow].retransmitted_segments +=
            segments;
    }

    /// `flow`'s receivers sent and received `counts` after the warm-up.
    pub fn receiver_segments(&mut self, flow: usize, counts: ReceiverSegments) {
        let n = self.counters.len();
        self.receiver_segments
            .get_or_insert_with(|| vec![ReceiverSegments::default(); n])[flow] += counts;
    }

    fn recovery_counts(&mut self, kept: RecoveryCounts) -> &mut [LossRecovery] {
        let n = self.counters.len();
        let (counts, was) = self
            .loss_recovery
            .get_or_insert_with(|| (vec![LossRecovery::default(); n], kept));
        assert_eq!(*was, kept, "a backend reports loss recovery one way");
        counts
    }

    /// New data arrived on subflow `k` of `flow` (counted once, not for duplicates).
    pub fn subflow_received(&mut self, now: u64, flow: usize, k: usize, bytes: u64) {
        let c = &mut self.counters[flow];
        let (from, to) = c.window;
        if now >= from
            && now <= to
            && let Some(b) = c.subflow_bytes(&mut self.more_subflow_bytes, k)
        {
            *b += bytes;
        }
    }

    /// Starts loading what a packet of `flow` will update (a hint: at thousands of flows
    /// these are cache misses).
    #[inline]
    pub fn prefetch(&self, flow: usize) {
        if let Some(c) = self.counters.get(flow) {
            net::prefetch(c);
        }
    }

    /// `bytes` reached the receiving application of `flow` at `now`.
    pub fn delivered(&mut self, now: u64, flow: usize, bytes: u64) {
        let bin = (now / self.interval).min(self.last_bin) as u32;
        let c = &mut self.counters[flow];
        if bin != c.bin {
            // The flow moves on to another bin: the one it was filling is complete (a
            // sum, so in whatever order it is added up it is the same).
            self.bins[flow][c.bin as usize] += std::mem::take(&mut c.bin_bytes);
            c.bin = bin;
        }
        c.bin_bytes += bytes;
        let (from, to) = c.window;
        if now >= from && now <= to {
            c.measured_bytes += bytes;
        }
    }

    /// Adds every flow's bin in progress to `bins` (before reading them).
    fn settle_bins(&mut self) {
        for (bins, c) in self.bins.iter_mut().zip(&mut self.counters) {
            if let Some(b) = bins.get_mut(c.bin as usize) {
                *b += std::mem::take(&mut c.bin_bytes);
            }
        }
    }

    /// Samples every subflow's window (packets) and RTT (ms): `sample(flow, subflow)`,
    /// NaN for a subflow that is not established.
    pub fn trace(&mut self, now: u64, mut sample: impl FnMut(usize, usize) -> (f32, f32)) {
        self.trace_times.push(now as f64 / 1e9);
        for (i, (cwnds, rtts)) in self.cwnd.iter_mut().zip(&mut self.rtt_ms).enumerate() {
            for (k, (cw, rt)) in cwnds.iter_mut().zip(rtts.iter_mut()).enumerate() {
                let (w, r) = sample(i, k);
                cw.push(w);
                rt.push(r);
            }
        }
    }

    /// Whether the scenario traces receivers (`trace_receiver`).
    pub fn traces_receivers(&self) -> bool {
        self.receiver.is_some()
    }

    /// Samples each subflow's receiving side (after `trace`, at the same instant): its
    /// `rcv_ssthresh` and `window_clamp`, bytes (NaN where there is none).
    pub fn trace_receivers(&mut self, sample: impl FnMut(usize, usize) -> [f32; 2]) {
        if let Some(receiver) = self.receiver.as_mut() {
            receiver.sample(sample);
        }
    }

    /// Whether the scenario traces the congestion controls (`trace_cc`).
    pub fn traces_coupling(&self) -> bool {
        self.coupling.is_some()
    }

    /// Samples each subflow's coupling state (after `trace`, at the same instant): the
    /// algorithm's alpha and OLIA's inter-loss distance, packets (NaN where there is none).
    pub fn trace_coupling(&mut self, sample: impl FnMut(usize, usize) -> [f32; 2]) {
        if let Some(coupling) = self.coupling.as_mut() {
            coupling.sample(sample);
        }
    }

    /// Window and RTT series of each subflow of flow `i`, and the convergence metrics.
    fn subflow_traces(
        &mut self,
        sc: &Scenario,
        protocol: Protocol,
        (group, index): (&str, u32),
        i: usize,
        out: &mut Measured,
    ) {
        let cwnds: Vec<Vec<f64>> = std::mem::take(&mut self.cwnd[i])
            .into_iter()
            .map(|w| w.into_iter().map(f64::from).collect())
            .collect();
        let rtts = std::mem::take(&mut self.rtt_ms[i]);
        let pairs: Vec<(&PairTrace, Vec<Vec<[f32; 2]>>)> = [&mut self.receiver, &mut self.coupling]
            .into_iter()
            .flatten()
            .map(|t| {
                let samples = t.take(i);
                (&*t, samples)
            })
            .collect();
        let converged: Vec<Option<Convergence>> = (0..cwnds.len())
            .map(|k| {
                let after = sc.measure.convergence_after?.secs();
                convergence(&self.trace_times, &cwnds, k, after)
            })
            .collect();
        for (k, ((cwnd, rtt), c)) in cwnds.into_iter().zip(rtts).zip(converged).enumerate() {
            let entity = match protocol {
                Protocol::Tcp => Entity::Flow(group.into(), index),
                Protocol::Mptcp => Entity::FlowSubflow(group.into(), index, k),
            };
            let metric = |q| String::from(Metric::new(entity.clone(), q));
            let name = entity.to_string();
            if let (Some(after), Some(c)) = (sc.measure.convergence_after, c) {
                out.metrics
                    .insert(metric(Quantity::MeanCwndAfterPkts), c.mean);
                // No convergence time for a window that did not converge: the report
                // reads its absence beside the mean as "did not converge".
                if let Some(at) = c.at {
                    out.metrics.insert(metric(Quantity::ConvergedAtS), at);
                    out.metrics
                        .insert(metric(Quantity::ConvergenceS), at - after.secs());
                }
            }
            out.series.push(Series {
                name: "cwnd_pkts".into(),
                entity: name.clone(),
                times_s: self.trace_times.clone(),
                values: cwnd,
            });
            out.series.push(Series {
                name: "rtt_ms".into(),
                entity: name.clone(),
                times_s: self.trace_times.clone(),
                values: rtt.into_iter().map(f64::from).collect(),
            });
            for (trace, samples) in &pairs {
                out.series
                    .extend(trace.series(&name, &self.trace_times, &samples[k]));
            }
        }
    }

    /// Group and flow metrics and series. `fct_s[i]`: flow `i`'s completion time, if it
    /// was a finite transfer that completed.
    pub fn finish(mut self, sc: &Scenario, flows: &[FlowSlot], fct_s: &[Option<f64>]) -> Measured {
        self.settle_bins();
        let mut out = Measured::default();
        let interval_s = self.interval as f64 / 1e9;
        let bin_times: Vec<f64> = (1..=self.bins.first().map_or(0, Vec::len))
            .map(|i| (i as f64 * interval_s).min(self.end as f64 / 1e9))
            .collect();

        let mut all_bulk = Vec::new();
        for (g, group) in sc.flows.iter().enumerate() {
            let members: Vec<usize> = (0..flows.len()).filter(|&i| flows[i].group == g).collect();
            let goodputs: Vec<f64> = members
                .iter()
                .map(|&i| {
                    let (a, b) = self.counters[i].window;
                    mbps(
                        self.counters[i].measured_bytes,
                        b.saturating_sub(a) as f64 / 1e9,
                    )
                })
                .collect();
            let entity = Entity::Group(group.name.clone());
            let metric = |q| String::from(Metric::new(entity.clone(), q));
            let sum: f64 = goodputs.iter().sum();
            let metrics = &mut out.metrics;
            metrics.insert(metric(Quantity::GoodputMbps), sum);
            metrics.insert(
                metric(Quantity::GoodputMbpsPerFlow),
                sum / goodputs.len().max(1) as f64,
            );
            metrics.insert(metric(Quantity::GoodputStdMbps), std_dev(&goodputs));
            metrics.insert(metric(Quantity::Jain), jain(&goodputs));
            if let Some((loss_recovery, kept)) = &self.loss_recovery {
                let mut sum = LossRecovery::default();
                for &i in &members {
                    sum += loss_recovery[i];
                }
                let tcp_level = [
                    (Quantity::RetransmittedSegments, sum.retransmitted_segments),
                    (Quantity::Timeouts, sum.timeouts),
                    (Quantity::LossProbes, sum.loss_probes),
                ];
                let data_level = [
                    (Quantity::StaleSubflows, sum.stale_subflows),
                    (Quantity::DataRetransmissions, sum.data_retransmissions),
                ];
                let kept = match kept {
                    RecoveryCounts::All if group.protocol == Protocol::Mptcp => {
                        [&tcp_level[..], &data_level[..]].concat()
                    }
                    RecoveryCounts::All => tcp_level.to_vec(),
                    RecoveryCounts::RetransmissionsOnly => tcp_level[..1].to_vec(),
                };
                for (q, v) in kept {
                    metrics.insert(metric(q), v as f64);
                }
            }
            if let Some(receivers) = &self.receiver_segments {
                let mut sum = ReceiverSegments::default();
                for &i in &members {
                    sum += receivers[i];
                }
                if sum.data_received > 0 {
                    metrics.insert(
                        metric(Quantity::AcksPerDataSegment),
                        sum.sent as f64 / sum.data_received as f64,
                    );
                }
            }
            // The buffer the connections were given, so that a report can place a rule's
            // buffer (`1rule`) on a size axis. A size in packets has no byte count that both
            // backends share, and is left out.
            if let Some(scenario::units::Size::Bytes(b)) = net::paths::rcv_buffer(group, &sc.links)
            {
                metrics.insert(metric(Quantity::RcvBufferMb), b as f64 / 1e6);
            }
            if group.protocol == Protocol::Mptcp {
                for k in 0..subflows(sc, g) {
                    let per_flow: Vec<f64> = members
                        .iter()
                        .map(|&i| {
                            let c = &mut self.counters[i];
                            let (a, b) = c.window;
                            let bytes = c.subflow_bytes(&mut self.more_subflow_bytes, k);
                            mbps(
                                *bytes.expect("k < subflows"),
                                b.saturating_sub(a) as f64 / 1e9,
                            )
                        })
                        .collect();
                    metrics.insert(
                        Metric::new(
                            Entity::GroupSubflow(group.name.clone(), k),
                            Quantity::GoodputMbps,
                        )
                        .into(),
                        per_flow.iter().sum(),
                    );
                }
                if let Some(reinjected) = &self.reinjected {
                    let bytes: u64 = members.iter().map(|&i| reinjected[i]).sum();
                    metrics.insert(metric(Quantity::ReinjectedBytes), bytes as f64);
                }
            }
            if let TrafficSpec::File { .. } = group.traffic {
                let fcts: Vec<f64> = members.iter().filter_map(|&i| fct_s[i]).collect();
                metrics.insert(metric(Quantity::Completed), fcts.len() as f64);
                if !fcts.is_empty() {
                    metrics.insert(
                        metric(Quantity::FctS),
                        fcts.iter().sum::<f64>() / fcts.len() as f64,
                    );
                }
            } else {
                all_bulk.extend(goodputs.iter().copied());
            }
            out.flow_goodput_mbps.insert(group.name.clone(), goodputs);

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
                metrics.insert(metric(Quantity::MinGoodputMbps), worst);
            }
            out.series.push(Series {
                name: "goodput_mbps".into(),
                entity: entity.to_string(),
                times_s: bin_times.clone(),
                values: group_bins,
            });
            if sc.measure.per_flow {
                for &i in &members {
                    let index = flows[i].index;
                    let values = self.bins[i].iter().map(|&b| mbps(b, interval_s)).collect();
                    out.series.push(Series {
                        name: "goodput_mbps".into(),
                        entity: Entity::Flow(group.name.clone(), index).to_string(),
                        times_s: bin_times.clone(),
                        values,
                    });
                    let flow = (group.name.as_str(), index);
                    self.subflow_traces(sc, group.protocol, flow, i, &mut out);
                }
            }
        }
        if !all_bulk.is_empty() {
            let all = |q| String::from(Metric::new(Entity::All, q));
            out.metrics.insert(all(Quantity::Jain), jain(&all_bulk));
            out.metrics
                .insert(all(Quantity::GoodputMbps), all_bulk.iter().sum());
            out.metrics.insert(
                all(Quantity::GoodputMbpsPerFlow),
                all_bulk.iter().sum::<f64>() / all_bulk.len() as f64,
            );
            out.metrics
                .insert(all(Quantity::GoodputStdMbps), std_dev(&all_bulk));
        }
        out
    }
}

/// The population standard deviation (every flow of the group is counted, none sampled);
/// 0 for fewer than two values.
fn std_dev(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt()
}
