//! Which routes a connection's subflows take, and the receive buffer that follows from them:
//! what both backends derive from a flow group the same way, like the flow layout.

use scenario::model::{DirId, FlowGroup, Link, MAX_SUBFLOWS, Route};
use scenario::spec::{PathManager, Protocol};
use scenario::units::{BufferSize, Size};

/// The route of each subflow a connection of `group` opens, in subflow order. TCP: the best
/// path. MPTCP, as Linux's in-kernel path manager would be configured for it: `fullmesh`,
/// one subflow per source interface (best path first) up to `subflows` (the Linux limit of 8
/// by default); `ndiffports`, `subflows` (2 by default) over the best path.
pub fn subflow_routes(group: &FlowGroup) -> Vec<Route> {
    if group.protocol == Protocol::Tcp {
        return vec![group.paths[0].clone()];
    }
    match group.path_manager {
        PathManager::Fullmesh => {
            let k = group.subflows.unwrap_or(MAX_SUBFLOWS) as usize;
            group.paths.iter().take(k).cloned().collect()
        }
        PathManager::Ndiffports => {
            vec![group.paths[0].clone(); group.subflows.unwrap_or(2) as usize]
        }
    }
}

/// The receive buffer of `group`'s connections, if the scenario fixes one: as given, or `k`
/// times the rule's (`buffer_rule_bytes` over its subflows' routes). `None` for an
/// autotuned buffer too.
pub fn rcv_buffer(group: &FlowGroup, links: &[Link]) -> Option<Size> {
    group.rcv_buffer.and_then(|b| match b {
        BufferSize::Fixed(s) => Some(s),
        BufferSize::Rule(k) => Some(Size::Bytes(
            (k * buffer_rule_bytes(&subflow_routes(group), links))
                .round()
                .max(1.0) as u64,
        )),
        BufferSize::Autotuned => None,
    })
}

/// The receive buffer MPTCP needs so that the slowest path never stalls the others
/// (Barré, Paasch, Bonaventure, 2011), 2 * RTT_max * sum(BW_i), in bytes: propagation RTT of
/// the slowest path (both directions) and the narrowest link of each distinct path.
pub fn buffer_rule_bytes(paths: &[Route], links: &[Link]) -> f64 {
    let dir = |d: DirId| links[d.link().index()].dir(d);
    let rtt_max = paths
        .iter()
        .map(|r| {
            r.hops
                .iter()
                .chain(&r.reversed().hops)
                .map(|&d| dir(d).delay.secs())
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    let mut distinct: Vec<&Route> = paths.iter().collect();
    distinct.dedup_by(|a, b| a.hops == b.hops);
    let bw: f64 = distinct
        .iter()
        .map(|r| {
            r.hops
                .iter()
                .map(|&d| dir(d).rate.bps() as f64)
                .fold(f64::INFINITY, f64::min)
        })
        .sum();
    2.0 * rtt_max * bw / 8.0
}
