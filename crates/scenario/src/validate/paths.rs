//! A flow group's routes: one candidate path per usable source interface (shortest first),
//! the subflows MPTCP's path manager opens over them, and the receive buffer rule that
//! depends on them.

use super::links::Links;
use super::nodes::Nodes;
use super::{Problems, key};
use crate::model::{DirId, Link, MAX_SUBFLOWS, NodeId, Route, dir_link, dir_reverse};
use crate::spans::Seg;
use crate::spec::{FlowSpec, NodeKind, PathManager, Protocol};
use crate::topology::Graph;
use crate::units::{BufferSize, Size};

/// One path per interface the source may leave by (only the pinned one if given), each the
/// shortest through `via` to the destination (through its pinned interface if given);
/// fewest hops first, then least propagation delay.
pub fn candidate_paths(
    graph: &Graph,
    nodes: &Nodes<'_>,
    links: &Links,
    (src, src_pin): (NodeId, Option<DirId>),
    (dst, dst_pin): (NodeId, Option<DirId>),
    via: &[NodeId],
) -> Vec<Route> {
    let firsts: Vec<Option<DirId>> = match src_pin {
        Some(d) => vec![Some(d)],
        None => nodes.list[src]
            .interfaces
            .iter()
            .map(|x| Some(x.out_dir))
            .collect(),
    };
    // A pinned destination interface: route to the node on its other side, then across.
    let route_to = |first: Option<DirId>| -> Option<Route> {
        let Some(out) = dst_pin else {
            return graph.route(src, via, dst, first);
        };
        let last = dir_reverse(out);
        let before = links.list[dir_link(last)].from_node(last);
        if before == src {
            return first
                .is_none_or(|f| f == last)
                .then(|| Route { hops: vec![last] });
        }
        if nodes.list[before].kind != NodeKind::Router {
            return None;
        }
        let mut r = graph.route(src, via, before, first)?;
        r.hops.push(last);
        Some(r)
    };
    let mut paths: Vec<Route> = firsts.into_iter().filter_map(route_to).collect();
    paths.sort_by_key(|r| {
        (
            r.hops.len(),
            r.hops
                .iter()
                .map(|&d| links.list[dir_link(d)].dirs[d % 2].delay.0)
                .sum::<u64>(),
        )
    });
    paths
}

/// The route of each subflow the path manager opens, or a located problem.
pub fn subflow_paths(
    f: &FlowSpec,
    paths: &[Route],
    i: usize,
    p: &mut Problems,
) -> Option<Vec<Route>> {
    let at = |field: &str| vec![key("flow"), Seg::Index(i), key(field)];
    if f.protocol == Protocol::Tcp {
        for (field, set) in [
            ("path_manager", f.path_manager.is_some()),
            ("subflows", f.subflows.is_some()),
            ("scheduler", f.scheduler.is_some()),
        ] {
            if set {
                p.push(at(field), format!("`{field}` applies to MPTCP flows only: set protocol = \"mptcp\" or remove it"));
            }
        }
        return Some(vec![paths[0].clone()]);
    }
    if let Some(k) = f.subflows
        && !(1..=MAX_SUBFLOWS).contains(&k)
    {
        p.push(
            at("subflows"),
            format!("expected 1 to {MAX_SUBFLOWS} subflows (the Linux limit), got {k}"),
        );
        return None;
    }
    Some(match f.path_manager.unwrap_or(PathManager::Fullmesh) {
        PathManager::Fullmesh => {
            let k = f.subflows.unwrap_or(MAX_SUBFLOWS) as usize;
            paths.iter().take(k).cloned().collect()
        }
        PathManager::Ndiffports => {
            vec![paths[0].clone(); f.subflows.unwrap_or(2) as usize]
        }
    })
}

/// A receive buffer in bytes: as given, or `k` times the rule's.
pub fn rcv_buffer(b: BufferSize, subflow_paths: &[Route], links: &[Link]) -> Size {
    match b {
        BufferSize::Fixed(s) => s,
        BufferSize::Rule(k) => Size::Bytes(
            (k * buffer_rule_bytes(subflow_paths, links))
                .round()
                .max(1.0) as u64,
        ),
    }
}

/// The receive buffer MPTCP needs so that the slowest path never stalls the others
/// (Barré, Paasch, Bonaventure, 2011), 2 * RTT_max * sum(BW_i), in bytes: propagation RTT of
/// the slowest path (both directions) and the narrowest link of each path.
pub fn buffer_rule_bytes(paths: &[Route], links: &[Link]) -> f64 {
    let dir = |d: DirId| &links[dir_link(d)].dirs[d % 2];
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
