//! Shortest paths over the scenario's graph. Hosts never forward; routers do.

use crate::model::{DirId, Link, LinkId, Node, NodeId, Route};
use crate::spec::NodeKind;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Adjacency: for each node, the link directions leaving it.
pub struct Graph<'a> {
    nodes: &'a [Node],
    links: &'a [Link],
    out: Vec<Vec<DirId>>,
}

impl<'a> Graph<'a> {
    pub fn new(nodes: &'a [Node], links: &'a [Link]) -> Self {
        let mut out = vec![Vec::new(); nodes.len()];
        for (i, l) in links.iter().enumerate() {
            out[l.a.index()].push(LinkId(i).dir(false));
            out[l.b.index()].push(LinkId(i).dir(true));
        }
        Graph { nodes, links, out }
    }

    /// Fewest hops, then least propagation delay, then lowest link index (deterministic).
    /// `first` pins the first hop (a source interface). Returns the hops from `src` to `dst`.
    pub fn shortest(&self, src: NodeId, dst: NodeId, first: Option<DirId>) -> Option<Vec<DirId>> {
        if src == dst {
            return Some(Vec::new());
        }
        let n = self.nodes.len();
        let mut best: Vec<Option<(u32, u64)>> = vec![None; n];
        let mut prev: Vec<Option<DirId>> = vec![None; n];
        let mut heap = BinaryHeap::new();
        best[src.index()] = Some((0, 0));
        heap.push(Reverse((0u32, 0u64, src)));
        while let Some(Reverse((hops, delay, u))) = heap.pop() {
            if best[u.index()] != Some((hops, delay)) {
                continue;
            }
            if u == dst {
                break;
            }
            // Only the source and routers forward.
            if u != src && self.nodes[u].kind == NodeKind::Host {
                continue;
            }
            for &d in &self.out[u.index()] {
                if u == src && first.is_some_and(|f| f != d) {
                    continue;
                }
                let l = &self.links[d.link()];
                let v = l.to_node(d);
                let cand = (hops + 1, delay + l.dir(d).delay.0);
                if best[v.index()].is_none_or(|b| cand < b) {
                    best[v.index()] = Some(cand);
                    prev[v.index()] = Some(d);
                    heap.push(Reverse((cand.0, cand.1, v)));
                }
            }
        }
        best[dst.index()]?;
        let mut hops = Vec::new();
        let mut at = dst;
        while at != src {
            let d = prev[at.index()]?;
            hops.push(d);
            at = self.links[d.link()].from_node(d);
        }
        hops.reverse();
        Some(hops)
    }

    /// A route through `via` in order, each leg shortest. `first` pins the first hop.
    pub fn route(
        &self,
        src: NodeId,
        via: &[NodeId],
        dst: NodeId,
        first: Option<DirId>,
    ) -> Option<Route> {
        let mut hops = Vec::new();
        let mut at = src;
        let mut pin = first;
        for &next in via.iter().chain(std::iter::once(&dst)) {
            let leg = self.shortest(at, next, pin.take())?;
            hops.extend(leg);
            at = next;
        }
        // A leg may not pass through a host other than the endpoints.
        let interior_host = hops.iter().rev().skip(1).any(|&d| {
            let v = self.links[d.link()].to_node(d);
            self.nodes[v].kind == NodeKind::Host
        });
        if interior_host || hops.is_empty() {
            return None;
        }
        Some(Route { hops })
    }
}
