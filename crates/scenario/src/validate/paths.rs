//! A flow group's candidate routes: one path per usable source interface (shortest first),
//! and the checks of MPTCP's path-manager fields. Which of the paths the subflows take, and
//! the receive buffer that follows, the backends derive (`net::paths`).

use super::links::Links;
use super::nodes::Nodes;
use super::{Problems, key};
use crate::model::{DirId, MAX_SUBFLOWS, NodeId, Route};
use crate::spans::Seg;
use crate::spec::{FlowSpec, NodeKind, Protocol};
use crate::topology::Graph;

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
        let last = out.reverse();
        let before = links.list[last.link()].from_node(last);
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
                .map(|&d| links.list[d.link()].dir(d).delay.0)
                .sum::<u64>(),
        )
    });
    paths
}

/// MPTCP's fields on a TCP flow, or a subflow count beyond Linux's limit: located problems.
/// Returns whether the group may be built.
pub fn check_mptcp_fields(f: &FlowSpec, i: usize, p: &mut Problems) -> bool {
    let at = |field: &str| vec![key("flow"), Seg::Index(i), key(field)];
    if f.protocol == Protocol::Tcp {
        for (field, set) in [
            ("path_manager", f.path_manager.is_some()),
            ("subflows", f.subflows.is_some()),
            ("scheduler", f.scheduler.is_some()),
            ("stale_loss_cnt", f.stale_loss_cnt.is_some()),
        ] {
            if set {
                p.push(at(field), format!("`{field}` applies to MPTCP flows only: set protocol = \"mptcp\" or remove it"));
            }
        }
        return true;
    }
    if let Some(k) = f.subflows
        && !(1..=MAX_SUBFLOWS).contains(&k)
    {
        p.push(
            at("subflows"),
            format!("expected 1 to {MAX_SUBFLOWS} subflows (the Linux limit), got {k}"),
        );
        return false;
    }
    true
}
