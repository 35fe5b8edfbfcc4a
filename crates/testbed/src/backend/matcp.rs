//! MATCP on the kernel backend: the flow groups that select their path per connection
//! (`select = ...`) run with the eBPF programs of `mptcp-lab matcp` (cgroup/connect4 and
//! sockops, `crates/bpf/src/bpf/matcp.bpf.c`), one installation per source host, attached to
//! that host's own threaded cgroup, which its sender threads join. A host's paths are the
//! plan's path addresses (`Plan::path_addrs`): the program binds each new connection to one,
//! the host's source rule and the emulator carry it along that path's route.
//!
//! The programs' statistics are the host's (every source of the host shares them), where
//! the simulator keeps them per source; see docs/matcp-kernel.md.

use crate::cgroup::ThreadedCgroups;
use crate::cleanup::owned_name;
use crate::network::Network;
use anyhow::{Context, Result};
use mptcp_bpf::matcp::{Config, Matcp, PathAddrs, Selector};
use scenario::Scenario;
use scenario::metrics::Diagnostic;
use scenario::model::NodeId;
use scenario::spec::{Protocol, SelectSpec, SelectorKind, VariationReading};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The programs' selector for a scenario's `select`.
pub fn selector(spec: &SelectSpec) -> Selector {
    match spec.kind {
        SelectorKind::SinglePath => Selector::SinglePath,
        SelectorKind::Rtt => Selector::Rtt,
        SelectorKind::RttVariation if spec.variation == Some(VariationReading::Rttvar) => {
            Selector::Rttvar
        }
        SelectorKind::RttVariation => Selector::RttVariation,
        SelectorKind::Drops => Selector::Drops,
        SelectorKind::WeightedRtt => Selector::WeightedRtt,
    }
}

/// A selecting host: its first selecting group's selector and window limit (segments).
struct Source {
    node: NodeId,
    spec: SelectSpec,
    cwnd_clamp: Option<u32>,
}

/// The hosts whose groups select their path.
fn sources(sc: &Scenario) -> Vec<Source> {
    let mut out: Vec<Source> = Vec::new();
    for g in &sc.flows {
        if let Some(spec) = g.select
            && !out.iter().any(|s| s.node == g.src)
        {
            out.push(Source {
                node: g.src,
                spec,
                cwnd_clamp: g.window_limit.map(|w| {
                    w.bytes(LINUX_MSS)
                        .div_ceil(LINUX_MSS)
                        .min(u64::from(u32::MAX)) as u32
                }),
            });
        }
    }
    out
}

/// Linux's payload per segment on the emulator's 1500-byte links with timestamps: a window
/// limit given in bytes is this many segments.
const LINUX_MSS: u64 = 1448;

/// Why the kernel backend cannot place `sc`'s connections, if it cannot: one installation
/// per host serves every group of it, so they must agree (selector, paths, window limit);
/// the programs place TCP only.
pub fn unsupported(sc: &Scenario) -> Option<String> {
    let mut first: BTreeMap<NodeId, &scenario::model::FlowGroup> = BTreeMap::new();
    for g in sc.flows.iter().filter(|g| g.select.is_some()) {
        if g.protocol != Protocol::Tcp {
            return Some(format!(
                "flow group `{}` selects its path per connection but is not TCP",
                g.name
            ));
        }
        let f = *first.entry(g.src).or_insert(g);
        if f.select != g.select || f.paths != g.paths || f.window_limit != g.window_limit {
            return Some(format!(
                "flow groups `{}` and `{}` of one host select differently (one MATCP \
                 installation per source host on the kernel backend)",
                f.name, g.name
            ));
        }
    }
    if first.is_empty() {
        return None;
    }
    mptcp_bpf::matcp::install::cgroup2_root()
        .err()
        .map(|e| format!("MATCP needs a cgroup v2 hierarchy: {e}"))
}

struct Host {
    node: NodeId,
    cgroup: PathBuf,
    matcp: Matcp,
}

/// The run's MATCP: cgroups first (before the emulator's thread takes its real-time
/// priority, and before any agent thread exists), then one installation per source host.
/// Dropped: installations removed (unpinning detaches the programs), then the cgroups.
pub struct Placement {
    hosts: Vec<Host>,
    bpf_dir: PathBuf,
    _cgroups: ThreadedCgroups,
}

impl Placement {
    /// The cgroups of `sc`'s selecting hosts; `None` if it has none.
    pub fn prepare(sc: &Scenario) -> Result<Option<Placement>> {
        let sources = sources(sc);
        if sources.is_empty() {
            return Ok(None);
        }
        let names: Vec<String> = sources
            .iter()
            .map(|s| sc.nodes[s.node].name.clone())
            .collect();
        let cgroups = ThreadedCgroups::new("matcp", &names)?;
        let bpf_dir = PathBuf::from("/sys/fs/bpf").join(owned_name("matcp"));
        let hosts = sources
            .iter()
            .zip(&cgroups.hosts)
            .map(|(s, cgroup)| Host {
                node: s.node,
                cgroup: cgroup.clone(),
                matcp: Matcp {
                    dir: bpf_dir.join(&sc.nodes[s.node].name),
                    staging: PathBuf::from("/sys/fs/bpf").join(owned_name("matcp-new")),
                },
            })
            .collect();
        Ok(Some(Placement {
            hosts,
            bpf_dir,
            _cgroups: cgroups,
        }))
    }

    /// Installs each host's programs from inside its namespace (the programs act on the
    /// sockets of the namespace they were installed from).
    pub fn install(&self, sc: &Scenario, net: &Network) -> Result<()> {
        for (
            Source {
                node,
                spec,
                cwnd_clamp,
            },
            h,
        ) in sources(sc).into_iter().zip(&self.hosts)
        {
            let selector = selector(&spec);
            let config = Config {
                selector,
                paths: (net.plan.path_addrs_of(node).into_iter())
                    .map(PathAddrs::from)
                    .collect(),
                refresh: spec.refresh.filter(|_| selector.refreshes()),
                cgroup: h.cgroup.clone(),
                cwnd_clamp,
            };
            let matcp = h.matcp.clone();
            let name = &sc.nodes[node].name;
            net.hosts
                .netns(node)
                .enter(move || Ok(matcp.install(&config)?))
                .with_context(|| format!("installing MATCP on host {name}"))?;
        }
        Ok(())
    }

    /// The threaded cgroup a sender of `node` joins, if its connections are placed.
    pub fn cgroup_of(&self, node: NodeId) -> Option<PathBuf> {
        self.hosts
            .iter()
            .find(|h| h.node == node)
            .map(|h| h.cgroup.clone())
    }

    /// What the programs did, per host: the connections placed on each path and those
    /// that ended (`kernel.<host>.MatcpChoicesPath<k>`, `MatcpEndedPath<k>`), and the
    /// sockets they could not bind (`MatcpBindErrors`).
    pub fn counters(&self, sc: &Scenario) -> Result<BTreeMap<String, f64>> {
        let mut out = BTreeMap::new();
        for h in &self.hosts {
            let state = h.matcp.read()?;
            let host = sc.nodes[h.node].name.clone();
            let mut put = |counter: String, v: f64| {
                let d = Diagnostic::HostCounter {
                    host: host.clone(),
                    counter,
                };
                out.insert(d.into(), v);
            };
            for (k, s) in state.stats[..state.paths().len()].iter().enumerate() {
                put(format!("MatcpChoicesPath{k}"), s.choices as f64);
                put(format!("MatcpEndedPath{k}"), s.connections as f64);
            }
            put("MatcpBindErrors".into(), f64::from(state.bind_errors));
        }
        Ok(out)
    }
}

impl Drop for Placement {
    fn drop(&mut self) {
        for h in &self.hosts {
            if let Err(e) = h.matcp.remove() {
                eprintln!("removing MATCP from {}: {e}", h.matcp.dir.display());
            }
        }
        let _ = std::fs::remove_dir_all(&self.bpf_dir);
    }
}
