//! Metric names, as types. A metric is a quantity of an entity, written
//! `<entity>.<quantity>`: `group.mptcp.goodput_mbps`, `group.mptcp.sf1.goodput_mbps`,
//! `flow.mptcp#0.sf1.convergence_s`, `link.bottleneck.ab.utilisation`, `all.jain`. Backends
//! build names here and reports read them back here, so the format lives in one place.
//! Backend diagnostics (`kernel.<host>.<counter>`, `emulator.<what>`) are names of their own.

use crate::model::DirId;
use std::fmt;

/// What a metric is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Entity {
    /// Every bulk flow of the run together.
    All,
    /// A flow group, all its flows together.
    Group(String),
    /// Subflow `k` of every flow of an MPTCP group together.
    GroupSubflow(String, usize),
    /// Flow `index` of a group.
    Flow(String, u32),
    /// Subflow `k` of one flow.
    FlowSubflow(String, u32, usize),
    /// One direction of a link: `a` to `b` (`ab`) or back (`ba`).
    Link(String, LinkSide),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkSide {
    AtoB,
    BtoA,
}

impl LinkSide {
    pub fn of_dir(dir: DirId) -> LinkSide {
        if dir.is_b_to_a() {
            LinkSide::BtoA
        } else {
            LinkSide::AtoB
        }
    }
    fn as_str(self) -> &'static str {
        match self {
            LinkSide::AtoB => "ab",
            LinkSide::BtoA => "ba",
        }
    }
}

/// What is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantity {
    GoodputMbps,
    GoodputMbpsPerFlow,
    /// Standard deviation of the flows' goodputs (population: every flow counted).
    GoodputStdMbps,
    /// A link direction's goodput (payload first received over routes that cross it) as a
    /// share of the capacity it offered after the warm-up.
    GoodputShare,
    Jain,
    /// The worst measurement interval after the warm-up.
    MinGoodputMbps,
    /// Finite transfers that completed.
    Completed,
    /// Mean flow completion time.
    FctS,
    MeanCwndAfterPkts,
    ConvergedAtS,
    ConvergenceS,
    Utilisation,
    Drops,
    MeanQueuePkts,
    /// MPTCP: payload bytes sent again at the data level (a rewind after a subflow went
    /// stale, or the data-level retransmission timer), data the receiver may already hold.
    ReinjectedBytes,
    /// Segments the subflows' TCP senders sent again (fast retransmissions, after
    /// timeouts, tail loss probes that re-send): Linux's `tcpi_total_retrans`.
    RetransmittedSegments,
    /// The subflows' retransmission timeouts (Linux's `TcpExtTCPTimeouts`).
    Timeouts,
    /// Tail loss probes the subflows sent (`TcpExtTCPLossProbes`).
    LossProbes,
    /// MPTCP: times a subflow was marked stale, its connection then sending everything not
    /// acknowledged at the data level again (Linux counts them per host:
    /// `MPTcpExtSubflowStale`).
    StaleSubflows,
    /// MPTCP: expiries of the data-level retransmission timer whose re-send went out
    /// (`__mptcp_retrans()`; Linux's `MPTcpExtMPTCPRetrans` counts the chunks they send).
    DataRetransmissions,
    /// The receivers' ACKs per data segment they received, after the warm-up: Linux's
    /// `tcpi_segs_out` over `tcpi_data_segs_in` of the receiving subflows.
    AcksPerDataSegment,
    /// The receive buffer each of a group's connections had, in MB (10^6 bytes): the
    /// scenario's `rcv_buffer`, a multiple of the rule resolved over the group's paths.
    RcvBufferMb,
}

impl Quantity {
    pub const ALL: [Quantity; 22] = [
        Quantity::GoodputMbps,
        Quantity::GoodputMbpsPerFlow,
        Quantity::GoodputStdMbps,
        Quantity::GoodputShare,
        Quantity::Jain,
        Quantity::MinGoodputMbps,
        Quantity::Completed,
        Quantity::FctS,
        Quantity::MeanCwndAfterPkts,
        Quantity::ConvergedAtS,
        Quantity::ConvergenceS,
        Quantity::Utilisation,
        Quantity::Drops,
        Quantity::MeanQueuePkts,
        Quantity::ReinjectedBytes,
        Quantity::RetransmittedSegments,
        Quantity::Timeouts,
        Quantity::LossProbes,
        Quantity::StaleSubflows,
        Quantity::DataRetransmissions,
        Quantity::AcksPerDataSegment,
        Quantity::RcvBufferMb,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Quantity::GoodputMbps => "goodput_mbps",
            Quantity::GoodputMbpsPerFlow => "goodput_mbps_per_flow",
            Quantity::GoodputStdMbps => "goodput_std_mbps",
            Quantity::GoodputShare => "goodput_share",
            Quantity::Jain => "jain",
            Quantity::MinGoodputMbps => "min_goodput_mbps",
            Quantity::Completed => "completed",
            Quantity::FctS => "fct_s",
            Quantity::MeanCwndAfterPkts => "mean_cwnd_after_pkts",
            Quantity::ConvergedAtS => "converged_at_s",
            Quantity::ConvergenceS => "convergence_s",
            Quantity::Utilisation => "utilisation",
            Quantity::Drops => "drops",
            Quantity::MeanQueuePkts => "mean_queue_pkts",
            Quantity::ReinjectedBytes => "reinjected_bytes",
            Quantity::RetransmittedSegments => "retransmitted_segments",
            Quantity::Timeouts => "timeouts",
            Quantity::LossProbes => "loss_probes",
            Quantity::StaleSubflows => "stale_subflows",
            Quantity::DataRetransmissions => "data_retransmissions",
            Quantity::AcksPerDataSegment => "acks_per_data_segment",
            Quantity::RcvBufferMb => "rcv_buffer_mb",
        }
    }

    fn parse(s: &str) -> Option<Quantity> {
        Quantity::ALL.into_iter().find(|q| q.as_str() == s)
    }
}

/// A metric of the simulator's and the kernel backend's common set.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Metric {
    pub entity: Entity,
    pub quantity: Quantity,
}

impl Metric {
    pub fn new(entity: Entity, quantity: Quantity) -> Self {
        Metric { entity, quantity }
    }

    /// Reads a name back; `None` for names outside the common set (backend diagnostics).
    pub fn parse(name: &str) -> Option<Metric> {
        let (entity, quantity) = name.rsplit_once('.')?;
        Some(Metric {
            entity: Entity::parse(entity)?,
            quantity: Quantity::parse(quantity)?,
        })
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.entity, self.quantity.as_str())
    }
}

impl From<Metric> for String {
    fn from(m: Metric) -> String {
        m.to_string()
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entity::All => write!(f, "all"),
            Entity::Group(g) => write!(f, "group.{g}"),
            Entity::GroupSubflow(g, k) => write!(f, "group.{g}.sf{k}"),
            Entity::Flow(g, i) => write!(f, "flow.{g}#{i}"),
            Entity::FlowSubflow(g, i, k) => write!(f, "flow.{g}#{i}.sf{k}"),
            Entity::Link(l, side) => write!(f, "link.{l}.{}", side.as_str()),
        }
    }
}

/// `rest` is `<name>.sf<k>`: the name and k.
fn subflow_suffix(rest: &str) -> Option<(&str, usize)> {
    let (name, sf) = rest.rsplit_once(".sf")?;
    let k = sf
        .parse()
        .ok()
        .filter(|_| sf.bytes().all(|b| b.is_ascii_digit()))?;
    Some((name, k))
}

impl Entity {
    pub fn parse(s: &str) -> Option<Entity> {
        if s == "all" {
            return Some(Entity::All);
        }
        if let Some(rest) = s.strip_prefix("group.") {
            return Some(match subflow_suffix(rest) {
                Some((g, k)) => Entity::GroupSubflow(g.into(), k),
                None => Entity::Group(rest.into()),
            });
        }
        if let Some(rest) = s.strip_prefix("flow.") {
            let (flow, k) = match subflow_suffix(rest) {
                Some((flow, k)) => (flow, Some(k)),
                None => (rest, None),
            };
            let (g, i) = flow.rsplit_once('#')?;
            let i = i.parse().ok()?;
            return Some(match k {
                Some(k) => Entity::FlowSubflow(g.into(), i, k),
                None => Entity::Flow(g.into(), i),
            });
        }
        if let Some(rest) = s.strip_prefix("link.") {
            let (l, side) = rest.rsplit_once('.')?;
            let side = match side {
                "ab" => LinkSide::AtoB,
                "ba" => LinkSide::BtoA,
                _ => return None,
            };
            return Some(Entity::Link(l.into(), side));
        }
        None
    }

    /// The group a group, group-subflow, flow or flow-subflow entity belongs to.
    pub fn group(&self) -> Option<&str> {
        match self {
            Entity::Group(g)
            | Entity::GroupSubflow(g, _)
            | Entity::Flow(g, _)
            | Entity::FlowSubflow(g, _, _) => Some(g),
            Entity::All | Entity::Link(..) => None,
        }
    }
}

/// What the kernel backend records besides the common metrics, to explain its results:
/// never compared with the simulator's.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Diagnostic {
    /// MPTCP connections that fell back to TCP (`kernel.mptcp_fallbacks`).
    MptcpFallbacks,
    /// Thresholds and windows our eBPF congestion controls restored during the run after
    /// the kernel skipped one of their callbacks (`kernel.cc_repairs`; docs/kernel-cc.md,
    /// "Skipped callbacks").
    CcRepairs,
    /// A host's kernel counter (`kernel.<host>.<counter>`, as nstat names it).
    HostCounter { host: String, counter: String },
    /// The emulator's own figures (`emulator.<what>`).
    Emulator(String),
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::MptcpFallbacks => write!(f, "kernel.mptcp_fallbacks"),
            Diagnostic::CcRepairs => write!(f, "kernel.cc_repairs"),
            Diagnostic::HostCounter { host, counter } => write!(f, "kernel.{host}.{counter}"),
            Diagnostic::Emulator(what) => write!(f, "emulator.{what}"),
        }
    }
}

impl From<Diagnostic> for String {
    fn from(d: Diagnostic) -> String {
        d.to_string()
    }
}

impl Diagnostic {
    pub fn parse(name: &str) -> Option<Diagnostic> {
        match name {
            "kernel.mptcp_fallbacks" => return Some(Diagnostic::MptcpFallbacks),
            "kernel.cc_repairs" => return Some(Diagnostic::CcRepairs),
            _ => {}
        }
        if let Some(rest) = name.strip_prefix("kernel.") {
            let (host, counter) = rest.rsplit_once('.')?;
            return Some(Diagnostic::HostCounter {
                host: host.into(),
                counter: counter.into(),
            });
        }
        name.strip_prefix("emulator.")
            .map(|what| Diagnostic::Emulator(what.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "all.jain",
            "all.goodput_mbps",
            "group.mptcp.goodput_mbps",
            "group.mptcp.sf1.goodput_mbps",
            "group.type2.fct_s",
            "flow.mptcp#0.sf1.convergence_s",
            "flow.tcp#12.goodput_mbps",
            "link.bottleneck.ab.utilisation",
            "link.r1-r3.ba.mean_queue_pkts",
        ] {
            let m = Metric::parse(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(m.to_string(), name);
        }
        assert_eq!(
            Metric::parse("group.mptcp.sf1.goodput_mbps"),
            Some(Metric::new(
                Entity::GroupSubflow("mptcp".into(), 1),
                Quantity::GoodputMbps
            ))
        );
        for d in [
            "kernel.mptcp_fallbacks",
            "kernel.cc_repairs",
            "kernel.s1.MPTcpExtMPCapableSYNRX",
            "emulator.late_p99_us",
        ] {
            assert_eq!(Diagnostic::parse(d).expect(d).to_string(), d);
        }
        assert_eq!(Diagnostic::parse("group.a.jain"), None);
        for other in [
            "kernel.a.TcpExtDelayedACKs",
            "emulator.late_p99_us",
            "group.mptcp.nonsense",
            "link.x.up.drops",
            "flow.mptcp.goodput_mbps",
        ] {
            assert_eq!(Metric::parse(other), None, "{other}");
        }
    }
}
