//! Names for people: a metric id such as `group.type2.goodput_mbps` becomes "type2 goodput
//! (Mbit/s)" on an axis, a series name such as `cwnd_pkts` "congestion window (packets)".

use scenario::derived::DERIVED_PREFIX;
use scenario::metrics::{Entity, LinkSide, Metric, Quantity};

/// What a quantity is, with its unit.
pub fn quantity(q: Quantity) -> &'static str {
    match q {
        Quantity::GoodputMbps => "goodput (Mbit/s)",
        Quantity::GoodputMbpsPerFlow => "goodput per flow (Mbit/s)",
        Quantity::GoodputStdMbps => "std. dev. of flows' goodput (Mbit/s)",
        Quantity::GoodputShare => "goodput share of capacity",
        Quantity::Jain => "Jain's fairness index",
        Quantity::MinGoodputMbps => "worst-interval goodput (Mbit/s)",
        Quantity::Completed => "transfers completed",
        Quantity::FctS => "mean flow completion time (s)",
        Quantity::MeanCwndAfterPkts => "mean window after (packets)",
        Quantity::ConvergedAtS => "converged at (s)",
        Quantity::ConvergenceS => "convergence time (s)",
        Quantity::Utilisation => "utilisation",
        Quantity::Drops => "drops (packets)",
        Quantity::MeanQueuePkts => "mean queue (packets)",
        Quantity::ReinjectedBytes => "data sent again at the data level (bytes)",
        Quantity::RetransmittedSegments => "segments retransmitted",
        Quantity::Timeouts => "retransmission timeouts",
        Quantity::LossProbes => "tail loss probes",
        Quantity::StaleSubflows => "subflows marked stale",
        Quantity::DataRetransmissions => "data-level retransmissions",
        Quantity::AcksPerDataSegment => "receiver's ACKs per data segment",
        Quantity::RcvBufferMb => "receive buffer (MB)",
    }
}

/// Who a metric is about, short: `type2`, `mptcp#0 subflow 1`, `c2 a→b`, `all flows`.
pub fn entity(e: &Entity) -> String {
    match e {
        Entity::All => "all flows".into(),
        Entity::Group(g) => g.clone(),
        Entity::GroupSubflow(g, k) => format!("{g} subflow {k}"),
        Entity::Flow(g, i) => format!("{g}#{i}"),
        Entity::FlowSubflow(g, i, k) => format!("{g}#{i} subflow {k}"),
        Entity::Link(l, side) => match side {
            LinkSide::AtoB => format!("{l} a→b"),
            LinkSide::BtoA => format!("{l} b→a"),
        },
    }
}

/// A metric id for a person: "type2 goodput (Mbit/s)"; a name outside the common set as
/// it is.
pub fn metric(name: &str) -> String {
    if let Some(d) = name.strip_prefix(DERIVED_PREFIX) {
        return d.replace('_', " ");
    }
    match Metric::parse(name) {
        Some(m) => format!("{} {}", entity(&m.entity), quantity(m.quantity)),
        None => name.to_string(),
    }
}

/// The quantity of a metric id alone, for an axis shared by several entities.
pub fn metric_quantity(name: &str) -> String {
    match Metric::parse(name) {
        Some(m) => quantity(m.quantity).to_string(),
        None => metric(name),
    }
}

/// A series name (`goodput_mbps`, `cwnd_pkts`, `rtt_ms`, `queue_pkts`) for an axis.
pub fn series(name: &str) -> String {
    match name {
        "goodput_mbps" => "goodput (Mbit/s)".into(),
        "cwnd_pkts" => "congestion window (packets)".into(),
        "rtt_ms" => "smoothed RTT (ms)".into(),
        "queue_pkts" => "queue (packets)".into(),
        "rcv_ssthresh_kb" => "receive window's rcv_ssthresh (kB)".into(),
        "window_clamp_kb" => "receive window's clamp (kB)".into(),
        "cc_alpha" => "congestion control's alpha".into(),
        "cc_inter_loss_pkts" => "OLIA's inter-loss distance (packets)".into(),
        other => other.replace('_', " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_ids_read_as_words_with_units() {
        assert_eq!(metric("group.type2.goodput_mbps"), "type2 goodput (Mbit/s)");
        assert_eq!(
            metric("flow.mptcp#0.sf1.convergence_s"),
            "mptcp#0 subflow 1 convergence time (s)"
        );
        assert_eq!(metric("link.c2.ab.utilisation"), "c2 a→b utilisation");
        assert_eq!(metric("derived.path_spread"), "path spread");
        assert_eq!(metric("kernel.s1.X"), "kernel.s1.X");
        assert_eq!(series("cwnd_pkts"), "congestion window (packets)");
    }
}
