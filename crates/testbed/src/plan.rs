//! How a scenario maps onto this machine: one namespace per host, one TUN device per host
//! interface, an IPv4 address per host interface, and the route every pair of addresses
//! takes through the emulated links (the flows' own paths first, shortest paths otherwise).

use anyhow::{Result, bail};
use net::capture::interface_address;
use scenario::Scenario;
use scenario::model::{DirId, NodeId, Route};
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
    /// The host each route starts at.
    pub route_source: Vec<NodeId>,
    /// (source address, destination address) -> route id.
    pub by_pair: HashMap<(u32, u32), u32>,
    /// The addresses of MATCP's paths (flow groups with `select`): one per path of the
    /// source host, the route of each found by its address.
    pub path_addrs: Vec<PathAddr>,
}

/// A source address that stands for one of a MATCP source's paths: a connection bound to
/// it (by the `cgroup/connect4` program) takes that path's route, whichever interface the
/// host sends it out of. MATCP's paths may leave a host by one interface (E6: an edge
/// router's uplinks behind one access link), so an interface's address cannot name them.
#[derive(Clone, Debug)]
pub struct PathAddr {
    pub node: NodeId,
    /// Index into `Plan::ports` of the interface the path leaves by.
    pub port: usize,
    /// The path's index among its group's `paths`.
    pub path: usize,
    pub addr: Ipv4Addr,
}

/// Which end of a route stands for every address of its host.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wildcard {
    Source,
    Destination,
}

/// First last octet of MATCP path addresses: `10.<link / 256>.<link % 256>.<16 + 2 path +
/// side>`, beside the interface's own `.1` or `.2`, up to 8 paths (MATCP_MAX_PATHS).
const PATH_OCTET: u8 = 16;

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
                    node: NodeId(n),
                    iface: f.name.clone(),
                    dev,
                    addr: interface_address(f.out_dir),
                    out_dir: f.out_dir,
                    table: 100 + i as u32,
                });
            }
            hosts.push((NodeId(n), mine));
        }
        let mut plan = Plan {
            ports,
            hosts,
            routes: Vec::new(),
            route_exit: Vec::new(),
            route_source: Vec::new(),
            by_pair: HashMap::new(),
            path_addrs: Vec::new(),
        };
        plan.add_path_addrs(sc)?;
        // A path is named by the interface it leaves the flow's source from, as in the
        // simulator: whichever address of the destination host a packet is for (a join goes
        // to the address the connection started with), it takes the path of its source
        // address, and the way back is the same links reversed, whichever address the
        // destination answers from. The flows' paths (explicit `via` included, and every
        // candidate a reconnecting application may move to) come first.
        let mut reverses = Vec::new();
        for f in &sc.flows {
            for r in net::paths::subflow_routes(f).iter().chain(&f.paths) {
                plan.add_route(r.clone(), Wildcard::Destination);
                reverses.push(r.reversed());
            }
        }
        for r in reverses {
            plan.add_route(r, Wildcard::Source);
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
                    plan.add_route(r, Wildcard::Destination);
                }
            }
        }
        Ok(plan)
    }

    /// One address per path of every host whose flows select their path per connection,
    /// and the route of each (both ways) for every address of the destination host. A
    /// host's groups share the addresses of equal paths (one installation per host).
    fn add_path_addrs(&mut self, sc: &Scenario) -> Result<()> {
        for g in sc.flows.iter().filter(|g| g.select.is_some()) {
            for (k, r) in g.paths.iter().enumerate() {
                if k >= 8 {
                    bail!("flow group `{}`: at most 8 paths to select among", g.name);
                }
                let (Some(&first), Some(to)) = (r.hops.first(), self.ends(r).map(|e| e.1)) else {
                    continue;
                };
                let Some(port) = self
                    .ports
                    .iter()
                    .position(|p| p.node == g.src && p.out_dir == first)
                else {
                    bail!("flow group `{}`: a path leaves from no interface", g.name);
                };
                if self
                    .path_addrs
                    .iter()
                    .any(|a| a.node == g.src && a.path == k)
                {
                    continue;
                }
                let base = self.ports[port].addr.octets();
                let addr = Ipv4Addr::new(
                    base[0],
                    base[1],
                    base[2],
                    PATH_OCTET + 2 * k as u8 + base[3] - 1,
                );
                self.path_addrs.push(PathAddr {
                    node: g.src,
                    port,
                    path: k,
                    addr,
                });
                let dsts: Vec<u32> = self
                    .ports_of(self.ports[to].node)
                    .map(|p| p.addr.into())
                    .collect();
                self.add_route_between(r.clone(), port, to, &[addr.into()], &dsts);
                self.add_route_between(r.reversed(), to, port, &dsts, &[addr.into()]);
            }
        }
        Ok(())
    }

    /// The path addresses of `node`, in path order.
    pub fn path_addrs_of(&self, node: NodeId) -> Vec<Ipv4Addr> {
        let mut mine: Vec<&PathAddr> = self.path_addrs.iter().filter(|a| a.node == node).collect();
        mine.sort_by_key(|a| a.path);
        mine.into_iter().map(|a| a.addr).collect()
    }

    /// The port a route leaves from, and the one it arrives at.
    fn ends(&self, r: &Route) -> Option<(usize, usize)> {
        let first = *r.hops.first()?;
        let last = *r.hops.last()?;
        let from = self.ports.iter().position(|p| p.out_dir == first)?;
        let into = last.reverse();
        let to = self.ports.iter().position(|p| p.out_dir == into)?;
        Some((from, to))
    }

    /// Adds route `r` for the address pairs it serves that have none yet: its first port's
    /// address to its last port's, and with `wildcard`, any address of that end's host.
    fn add_route(&mut self, r: Route, wildcard: Wildcard) {
        let Some((from, to)) = self.ends(&r) else {
            return;
        };
        let addrs_of = |port: usize, all: bool| -> Vec<u32> {
            let node = self.ports[port].node;
            if all {
                self.ports_of(node).map(|p| p.addr.into()).collect()
            } else {
                vec![self.ports[port].addr.into()]
            }
        };
        let srcs = addrs_of(from, wildcard == Wildcard::Source);
        let dsts = addrs_of(to, wildcard == Wildcard::Destination);
        self.add_route_between(r, from, to, &srcs, &dsts);
    }

    /// Adds route `r`, from port `from` to port `to`, for the pairs of `srcs` and `dsts`
    /// that have none yet.
    fn add_route_between(&mut self, r: Route, from: usize, to: usize, srcs: &[u32], dsts: &[u32]) {
        let id = self.routes.len() as u32;
        let mut used = false;
        for &s in srcs {
            for &d in dsts {
                if let std::collections::hash_map::Entry::Vacant(e) = self.by_pair.entry((s, d)) {
                    e.insert(id);
                    used = true;
                }
            }
        }
        if used {
            self.route_source.push(self.ports[from].node);
            self.routes.push(r);
            self.route_exit.push(to);
        }
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
        let into = r.hops.last()?.reverse();
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

#[cfg(test)]
mod tests {
    use super::Plan;
    use scenario::{LoadOptions, load_str};

    /// The scenario in `text` and its plan.
    fn planned(text: &str) -> (scenario::Scenario, Plan) {
        let opts = LoadOptions {
            overrides: Vec::new(),
        };
        let sc = load_str(text, "t.toml".as_ref(), &opts).unwrap().remove(0);
        let plan = Plan::new(&sc).unwrap();
        (sc, plan)
    }

    /// E5.4's shape: a client on WiFi and 3G, a server reached through both.
    const TWO_ACCESS: &str = r#"
[scenario]
name = "two-access"
duration = "10s"
[[node]]
name = "client"
kind = "host"
[[node]]
name = "ap"
kind = "router"
[[node]]
name = "cell"
kind = "router"
[[node]]
name = "server"
kind = "host"
[[link]]
name = "wifi"
a = "client:wlan0"
b = "ap"
rate = "4Mbps"
delay = "20ms"
[[link]]
name = "3g"
a = "client:ppp0"
b = "cell"
rate = "4Mbps"
delay = "60ms"
[[link]]
a = "ap"
b = "server"
rate = "1Gbps"
delay = "5ms"
[[link]]
a = "cell"
b = "server"
rate = "1Gbps"
delay = "5ms"
[[flow]]
name = "download"
protocol = "mptcp"
cc = "lia"
from = "client"
to = "server"
"#;

    #[test]
    fn a_path_is_chosen_by_its_source_interface_whatever_address_of_the_host_it_is_for() {
        let (sc, plan) = planned(TWO_ACCESS);
        let addr = |iface: &str| -> u32 {
            plan.ports
                .iter()
                .find(|p| p.iface == iface)
                .unwrap()
                .addr
                .into()
        };
        let links = |pair: (u32, u32)| -> Vec<String> {
            let r = plan.by_pair[&pair] as usize;
            plan.routes[r]
                .hops
                .iter()
                .map(|&d| sc.links[d.link()].name.clone())
                .collect()
        };
        // The connection starts at the server's WiFi-side address; the 3G subflow joins
        // to that same address and must still cross 3G, and its ACKs come back over 3G
        // although the server answers from its WiFi-side address.
        let (wlan0, ppp0, server_ap) = (addr("wlan0"), addr("ppp0"), addr("ap-server"));
        assert_eq!(links((wlan0, server_ap)), ["wifi", "ap-server"]);
        assert_eq!(links((ppp0, server_ap)), ["3g", "cell-server"]);
        assert_eq!(links((server_ap, ppp0)), ["cell-server", "3g"]);
        assert_eq!(links((server_ap, wlan0)), ["ap-server", "wifi"]);
    }

    /// E6's shape: an edge host behind one access link, two uplinks to the Internet.
    const TWO_UPLINKS: &str = r#"
[scenario]
name = "two-uplinks"
duration = "10s"
[[node]]
name = "edge"
kind = "host"
[[node]]
name = "core"
kind = "router"
[[node]]
name = "up1"
kind = "router"
[[node]]
name = "up2"
kind = "router"
[[node]]
name = "internet"
kind = "host"
[[link]]
a = "edge"
b = "core"
rate = "1Gbps"
delay = "1ms"
[[link]]
a = "core"
b = "up1"
rate = "1Gbps"
delay = "1ms"
[[link]]
a = "core"
b = "up2"
rate = "1Gbps"
delay = "1ms"
[[link]]
name = "uplink1"
a = "up1"
b = "internet"
rate = "10Mbps"
delay = "10ms"
[[link]]
name = "uplink2"
a = "up2"
b = "internet"
rate = "10Mbps"
delay = "10ms"
[[flow]]
name = "sources"
from = "edge"
to = "internet"
paths = [["up2"], ["up1"]]
select = { kind = "weighted-rtt" }
traffic = { kind = "onoff", burst = "1s", idle = "1s" }
"#;

    #[test]
    fn each_matcp_path_has_an_address_whose_packets_take_its_route_both_ways() {
        let (sc, plan) = planned(TWO_UPLINKS);
        let edge = scenario::model::NodeId(0);
        let paths = plan.path_addrs_of(edge);
        assert_eq!(paths.len(), 2);
        let own: u32 = plan.ports_of(edge).next().unwrap().addr.into();
        assert!(paths.iter().all(|&a| u32::from(a) != own));
        let links = |pair: (u32, u32)| -> Vec<String> {
            plan.routes[plan.by_pair[&pair] as usize]
                .hops
                .iter()
                .map(|&d| sc.links[d.link()].name.clone())
                .collect()
        };
        // Path 0 is the group's first (via up2), whichever of the Internet's addresses the
        // connection goes to; its packets come back the same way.
        for internet in plan.ports_of(scenario::model::NodeId(4)) {
            let i: u32 = internet.addr.into();
            assert_eq!(links((paths[0].into(), i))[2], "uplink2");
            assert_eq!(links((paths[1].into(), i))[2], "uplink1");
            assert_eq!(links((i, paths[0].into()))[0], "uplink2");
            assert_eq!(links((i, paths[1].into()))[0], "uplink1");
        }
    }
}
