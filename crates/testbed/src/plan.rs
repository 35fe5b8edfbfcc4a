//! How a scenario maps onto this machine: one namespace per host, one TUN device per host
//! interface, an IPv4 address per host interface, and the route every pair of addresses
//! takes through the emulated links (the flows' own paths first, shortest paths otherwise).

use anyhow::{Result, bail};
use scenario::Scenario;
use scenario::model::{DirId, NodeId, Route, dir_link, dir_reverse};
use scenario::spec::NodeKind;
use scenario::topology::Graph;
use std::collections::HashMap;
use std::net::Ipv4Addr;

use crate::emu::tun::valid_ifname;

/// One host interface: its TUN device and address.
#[derive(Clone, Debug)]
pub struct Port {
    pub node: NodeId,
    /// The scenario's interface name.
    pub iface: String,
    /// The device's name in the host's namespace.
    pub dev: String,
    pub addr: Ipv4Addr,
    /// The link direction leaving the host through this interface.
    pub out_dir: DirId,
    /// Policy-routing table of this interface's address.
    pub table: u32,
}

pub struct Plan {
    pub ports: Vec<Port>,
    /// Hosts, in scenario order, with their ports.
    pub hosts: Vec<(NodeId, Vec<usize>)>,
    /// Routes as link directions, indexed by route id.
    pub routes: Vec<Route>,
    /// The port where each route ends.
    pub route_exit: Vec<usize>,
    /// (source address, destination address) -> route id.
    pub by_pair: HashMap<(u32, u32), u32>,
}

/// `10.<link / 256>.<link % 256>.<1 for side a, 2 for side b>`.
fn address(out_dir: DirId) -> Ipv4Addr {
    let link = dir_link(out_dir);
    Ipv4Addr::new(10, (link >> 8) as u8, link as u8, 1 + (out_dir % 2) as u8)
}

impl Plan {
    pub fn new(sc: &Scenario) -> Result<Plan> {
        if sc.links.len() > 65_536 {
            bail!(
                "{} links: the kernel backend addresses at most 65,536",
                sc.links.len()
            );
        }
        let mut ports = Vec::new();
        let mut hosts = Vec::new();
        for (n, node) in sc.nodes.iter().enumerate() {
            if node.kind != NodeKind::Host {
                continue;
            }
            let mut mine = Vec::new();
            for (i, f) in node.interfaces.iter().enumerate() {
                let dev = if valid_ifname(&f.name) {
                    f.name.clone()
                } else {
                    format!("if{i}")
                };
                mine.push(ports.len());
                ports.push(Port {
                    node: n,
                    iface: f.name.clone(),
                    dev,
                    addr: address(f.out_dir),
                    out_dir: f.out_dir,
                    table: 100 + i as u32,
                });
            }
            hosts.push((n, mine));
        }
        let mut plan = Plan {
            ports,
            hosts,
            routes: Vec::new(),
            route_exit: Vec::new(),
            by_pair: HashMap::new(),
        };
        // The flows' paths (explicit `via` included) and their reverses, for ACKs.
        for f in &sc.flows {
            for r in &f.subflow_paths {
                plan.add_route(r.clone());
                plan.add_route(r.reversed());
            }
        }
        // Every other pair of host addresses: the shortest path out of the source's port.
        let graph = Graph::new(&sc.nodes, &sc.links);
        for a in 0..plan.ports.len() {
            for b in 0..plan.ports.len() {
                let (pa, pb) = (&plan.ports[a], &plan.ports[b]);
                if pa.node == pb.node
                    || plan.by_pair.contains_key(&(pa.addr.into(), pb.addr.into()))
                {
                    continue;
                }
                if let Some(r) = graph.route(pa.node, &[], pb.node, Some(pa.out_dir)) {
                    plan.add_route(r);
                }
            }
        }
        Ok(plan)
    }

    /// The port a route leaves from, and the one it arrives at.
    fn ends(&self, r: &Route) -> Option<(usize, usize)> {
        let first = *r.hops.first()?;
        let last = *r.hops.last()?;
        let from = self.ports.iter().position(|p| p.out_dir == first)?;
        let into = dir_reverse(last);
        let to = self.ports.iter().position(|p| p.out_dir == into)?;
        Some((from, to))
    }

    fn add_route(&mut self, r: Route) {
        let Some((from, to)) = self.ends(&r) else {
            return;
        };
        let key = (self.ports[from].addr.into(), self.ports[to].addr.into());
        if self.by_pair.contains_key(&key) {
            return;
        }
        self.by_pair.insert(key, self.routes.len() as u32);
        self.routes.push(r);
        self.route_exit.push(to);
    }

    /// The port of `node` whose first hop is `out_dir`.
    pub fn port_of(&self, node: NodeId, out_dir: DirId) -> Option<&Port> {
        self.ports
            .iter()
            .find(|p| p.node == node && p.out_dir == out_dir)
    }

    /// The host ports of a node.
    pub fn ports_of(&self, node: NodeId) -> impl Iterator<Item = &Port> {
        self.ports.iter().filter(move |p| p.node == node)
    }

    /// The address a flow from `src` reaches `dst` at: the interface where the first path
    /// of the flow ends.
    pub fn address_of_route_end(&self, r: &Route) -> Option<Ipv4Addr> {
        let into = dir_reverse(*r.hops.last()?);
        self.ports
            .iter()
            .find(|p| p.out_dir == into)
            .map(|p| p.addr)
    }

    /// The first hop of the shortest path from `src` to `dst`, for the hosts' main routing
    /// tables (traffic not bound to an address).
    pub fn first_hop(&self, sc: &Scenario, src: NodeId, dst: NodeId) -> Option<DirId> {
        Graph::new(&sc.nodes, &sc.links)
            .route(src, &[], dst, None)
            .and_then(|r| r.hops.first().copied())
    }
}
