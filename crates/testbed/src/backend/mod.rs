//! The kernel backend: a scenario run on real Linux TCP and MPTCP. The hosts are network
//! namespaces joined by the emulator; each flow is a sending and a receiving agent with
//! real sockets; a sampler reads what the receivers got and what the kernel says of each
//! subflow; the result has the simulator's form, metrics computed by the same `measure`.

mod agents;
pub mod matcp;
mod sampler;
pub mod session;

pub use session::{KernelBackend, KernelSession, unsupported};

use crate::emu::{EmuConfig, EmuReport};
use crate::network::Network;
use agents::{FlowPlan, FlowShared};
use anyhow::{Context, Result, bail};
use measure::{FlowMeter, FlowSlot};
use net::layout::{LaidOutFlow, flow_layout};
use scenario::Scenario;
use scenario::results::{RunResult, RunStats};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// First receiving port; flow `i` of the run listens on `BASE_PORT + i`.
const BASE_PORT: u16 = 5001;

pub struct KernelOptions {
    /// Scenario congestion control -> the name registered with the kernel.
    pub cc_names: BTreeMap<mptcp_cc::AlgorithmId, String>,
    /// Links to capture, and where.
    pub captures: Vec<(usize, PathBuf)>,
    /// Set on Ctrl-C: the run stops and cleans up.
    pub interrupted: Arc<AtomicBool>,
    /// `net.*` sysctls (key, value) set in every host's namespace after its own setup.
    pub sysctls: Vec<(String, String)>,
}

/// Everything a run of one variant with one seed produced.
pub struct KernelRun {
    pub result: RunResult,
    pub emulator: EmuReport,
}

/// When each flow starts and stops, and its random stream: the simulator's layout, so the
/// same flows start at the same nanosecond for the same seed on both backends.
pub fn layout(sc: &Scenario, seed: u64) -> Vec<LaidOutFlow> {
    flow_layout(sc, seed)
}

/// The addresses each flow uses: where it connects to, and the local address of each of its
/// group's paths (subflow `k` leaves from `sources[k]`).
fn flow_plans(
    net: &Network,
    sc: &Scenario,
    layout: Vec<LaidOutFlow>,
    opts: &KernelOptions,
    placement: Option<&matcp::Placement>,
) -> Result<Vec<FlowPlan>> {
    let mut plans = Vec::new();
    for (i, LaidOutFlow { slot, rng }) in layout.into_iter().enumerate() {
        let group = &sc.flows[slot.group];
        let subflow_routes = net::paths::subflow_routes(group);
        let first = subflow_routes.first().context("a flow without a path")?;
        let dst = net
            .plan
            .address_of_route_end(first)
            .context("a flow's path ends at no host interface")?;
        let source_of = |hops: &[scenario::model::DirId]| -> Result<Ipv4Addr> {
            let out = *hops.first().context("an empty path")?;
            net.plan
                .port_of(group.src, out)
                .map(|p| p.addr)
                .context("a path that leaves from no interface of its host")
        };
        let sources = subflow_routes
            .iter()
            .map(|r| source_of(&r.hops))
            .collect::<Result<Vec<_>>>()?;
        let placed_by = placement
            .filter(|_| group.select.is_some())
            .and_then(|p| p.cgroup_of(group.src));
        // A TCP application that reconnects moves on through the group's paths; MATCP's
        // program chooses among their addresses.
        let paths = if placed_by.is_some() {
            net.plan.path_addrs_of(group.src)
        } else {
            group
                .paths
                .iter()
                .map(|r| source_of(&r.hops))
                .collect::<Result<Vec<_>>>()?
        };
        let cc = opts
            .cc_names
            .get(&group.cc)
            .cloned()
            .unwrap_or_else(|| group.cc.to_string());
        let to = SocketAddr::new(dst.into(), BASE_PORT + i as u16);
        let server_ports = if group.protocol == scenario::spec::Protocol::Mptcp
            && group.path_manager == scenario::spec::PathManager::Ndiffports
        {
            (0..sources.len() as u32)
                .map(|k| match k {
                    0 => to.port(),
                    k => crate::ndiffports::subflow_port(k),
                })
                .collect()
        } else {
            Vec::new()
        };
        plans.push(FlowPlan {
            slot,
            to,
            server_ports,
            sources,
            paths,
            cc,
            mptcp: group.protocol == scenario::spec::Protocol::Mptcp,
            traffic: group.traffic.clone(),
            rcv_buffer: net::paths::rcv_buffer(group, &sc.links),
            reconnect_after: group.reconnect_after.map(|d| d.nanos()),
            rng,
            placed_by,
            received: net.received.clone(),
        });
    }
    Ok(plans)
}

/// Makes each sending host default to its flows' algorithm: Linux 6.18 may start a subflow
/// that joins later with the namespace's default rather than the socket's TCP_CONGESTION.
fn set_namespace_defaults(net: &Network, sc: &Scenario, plans: &[FlowPlan]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut done = std::collections::BTreeSet::new();
    for p in plans {
        let src = sc.flows[p.slot.group].src;
        if !done.insert(src) {
            continue;
        }
        let ns = net.hosts.netns(src);
        if let Err(e) = ns.set_default_cc(&p.cc) {
            notes.push(format!(
                "host {}: default congestion control left as is ({e:#}); flows set it per socket",
                sc.nodes[src].name
            ));
        }
    }
    notes
}

/// The user's sysctls, in every host's namespace (in-thread, like the backend's own).
fn apply_sysctls(net: &Network, sc: &Scenario, sysctls: &[(String, String)]) -> Result<()> {
    for (node, ns) in &net.hosts.namespaces {
        let set = sysctls.to_vec();
        ns.enter(move || set.iter().try_for_each(|(k, v)| crate::hosts::sysctl(k, v)))
            .with_context(|| format!("--sysctl on host {}", sc.nodes[*node].name))?;
    }
    Ok(())
}

/// Scenario settings Linux has no switch for: said, not silently ignored.
fn not_applied(sc: &Scenario) -> Vec<String> {
    let mut notes = Vec::new();
    for g in &sc.flows {
        // MATCP's sockops program clamps its connections' windows (backend/matcp.rs).
        if g.window_limit.is_some() && g.select.is_none() {
            notes.push(format!(
                "flow {}: window_limit is applied on the kernel backend only to flows that \
                 select their path (MATCP's programs set it)",
                g.name
            ));
        }
        // Quick ACKs are a route metric: they hold for every flow between the two hosts.
        let quick_sibling = sc
            .flows
            .iter()
            .find(|o| o.src == g.src && o.dst == g.dst && !o.delayed_ack);
        if let (true, Some(o)) = (g.delayed_ack, quick_sibling) {
            notes.push(format!(
                "flow {}: acknowledged at once like flow {} (delayed_ack = false applies to \
                 every flow between the same two hosts on the kernel backend)",
                g.name, o.name
            ));
        }
        // net.mptcp.stale_loss_cnt is per network namespace: the host's first MPTCP
        // group sets it for all.
        let first_mptcp = sc
            .flows
            .iter()
            .find(|o| o.src == g.src && o.protocol == scenario::spec::Protocol::Mptcp);
        if let Some(o) = first_mptcp.filter(|o| {
            g.protocol == scenario::spec::Protocol::Mptcp && o.stale_loss_cnt != g.stale_loss_cnt
        }) {
            notes.push(format!(
                "flow {}: stale_loss_cnt {} as flow {} sets it, not {} (a sysctl of the \
                 sending host on the kernel backend)",
                g.name, o.stale_loss_cnt, o.name, g.stale_loss_cnt
            ));
        }
        if g.protocol == scenario::spec::Protocol::Mptcp
            && g.scheduler != scenario::spec::SchedulerKind::LinuxDefault
        {
            notes.push(format!(
                "flow {}: the kernel's MPTCP scheduler (linux-default) is used, not {:?}",
                g.name, g.scheduler
            ));
        }
    }
    notes
}

type AgentThread = std::thread::JoinHandle<Result<()>>;

/// A receiver and a sender per flow. Those started before a failure are in `threads`, so
/// the caller stops and joins them whatever happens.
fn start_agents(
    net: &Network,
    sc: &Scenario,
    plans: &[FlowPlan],
    shared: &[Arc<FlowShared>],
    clock: crate::emu::Clock,
    stop: &Arc<AtomicBool>,
    threads: &mut Vec<AgentThread>,
) -> Result<()> {
    for (p, s) in plans.iter().zip(shared) {
        let group = &sc.flows[p.slot.group];
        threads.push(agents::start_receiver(
            net.hosts.netns(group.dst),
            p.clone(),
            s.clone(),
            clock,
            stop.clone(),
        )?);
        threads.push(agents::start_sender(
            net.hosts.netns(group.src),
            p.clone(),
            s.clone(),
            clock,
            stop.clone(),
        )?);
    }
    Ok(())
}

/// Runs one variant with one seed. `progress` receives the fraction of the run done.
pub fn run(
    sc: &Scenario,
    seed: u64,
    opts: &KernelOptions,
    mut progress: impl FnMut(f64),
) -> Result<KernelRun> {
    let started = Instant::now();
    let drawn = net::draws::for_run(sc, seed);
    let sc: &Scenario = &drawn;
    let layout = layout(sc, seed);
    let slots: Vec<FlowSlot> = layout.iter().map(|f| f.slot.clone()).collect();
    let trace = sampler::trace_interval(sc);
    // Before the network: this process joins the run's cgroup before its emulator thread
    // takes real-time priority. Dropped after the network.
    let placement = matcp::Placement::prepare(sc)?;
    let net = Network::start(
        sc,
        EmuConfig {
            seed,
            captures: opts.captures.clone(),
            until: None,
            trace_interval: trace,
            hold_reads: None,
        },
    )?;
    apply_sysctls(&net, sc, &opts.sysctls)?;
    if let Some(p) = &placement {
        p.install(sc, &net)?;
    }
    let plans = flow_plans(&net, sc, layout, opts, placement.as_ref())?;
    let mut notes = not_applied(sc);
    notes.extend(set_namespace_defaults(&net, sc, &plans));
    for n in &notes {
        eprintln!("note: {n}");
    }
    let clock = net.clock();
    let stop = Arc::new(AtomicBool::new(false));
    let shared: Vec<Arc<FlowShared>> = plans.iter().map(|_| Arc::default()).collect();
    let mut threads = Vec::new();
    let agents_up = start_agents(&net, sc, &plans, &shared, clock, &stop, &mut threads);
    let mut meter = FlowMeter::new(sc, &slots);
    let sampled = agents_up.and_then(|()| {
        sampler::sample(
            sc,
            &plans,
            &shared,
            &mut meter,
            clock,
            &opts.interrupted,
            &net,
            &mut progress,
        )
    });
    // Agents first: they abort their sockets while the network still carries the resets,
    // so nothing outlives the run in the kernel. Then the emulator.
    stop.store(true, Ordering::Relaxed);
    let mut agent_errors = Vec::new();
    for t in threads {
        match t.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => agent_errors.push(format!("{e:#}")),
            Err(_) => agent_errors.push("an agent thread panicked".into()),
        }
    }
    // Read before the namespaces go; a run that failed has no use for them.
    let counters = sampled.as_ref().ok().map(|_| net.counters());
    let placed = sampled
        .as_ref()
        .ok()
        .and(placement.as_ref())
        .map(|p| p.counters(sc));
    let emulator = net.stop();
    let sampled = sampled?;
    if !agent_errors.is_empty() {
        bail!("traffic agents failed: {}", agent_errors.join("; "));
    }
    let mut emulator = emulator?;
    let fct: Vec<Option<f64>> = shared.iter().map(|s| s.fct_s()).collect();
    let mut measured = meter.finish(sc, &slots, &fct);
    measured.extend(std::mem::take(&mut emulator.measured));
    for &i in &sampled.fallen_back {
        let slot = &slots[i];
        eprintln!(
            "note: flow {}#{} fell back to TCP (RFC 8684 3.7: its MPTCP handshake's options did \
             not all arrive, e.g. a third ACK dropped at a full queue); it ran on its first path only",
            sc.flows[slot.group].name, slot.index
        );
    }
    for &(i, most) in &sampled.short_of_subflows {
        let slot = &slots[i];
        let group = &sc.flows[slot.group];
        eprintln!(
            "note: flow {}#{} asked for {} ndiffports subflows and had at most {most} at once \
             (a join that did not get through, e.g. lost at a full queue)",
            group.name,
            slot.index,
            plans[i].server_ports.len()
        );
    }
    measured.metrics.insert(
        scenario::metrics::Diagnostic::MptcpFallbacks.into(),
        sampled.fallen_back.len() as f64,
    );
    if let Some(counters) = counters {
        measured
            .metrics
            .extend(counters?.into_iter().map(|(k, v)| (k, v as f64)));
    }
    if let Some(placed) = placed {
        measured.metrics.extend(placed?);
    }
    let result = RunResult {
        scenario: sc.name.clone(),
        variant: sc.variant.clone(),
        backend: "kernel".into(),
        seed,
        params: sc.params.clone(),
        metrics: measured.metrics,
        flow_goodput_mbps: measured.flow_goodput_mbps,
        series: measured.series,
        stats: RunStats {
            events: emulator.read_pkts,
            packet_hops: emulator.links.iter().map(|l| l.tx_pkts).sum(),
            simulated_s: sc.duration.secs(),
            wall_s: started.elapsed().as_secs_f64(),
        },
        emulator: Some(emulator.health(seed)),
    };
    Ok(KernelRun { result, emulator })
}
