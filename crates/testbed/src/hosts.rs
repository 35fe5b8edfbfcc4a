//! The scenario's hosts on this machine: a namespace each, a TUN device per interface with
//! its address, per-interface routing tables with source-address rules (a subflow bound to
//! an interface's address leaves through that interface), main-table routes along the
//! shortest paths, MPTCP limits and endpoints, and the sysctls a measurement needs.
//! Everything but the namespaces is configured over netlink from inside the namespace.

use crate::emu::tun::Tun;
use crate::ndiffports::Ndiffports;
use crate::netlink::{EndpointFlags, MptcpPm, Rtnl};
use crate::netns::Netns;
use crate::plan::{Plan, Port};
use anyhow::{Context, Result, bail};
use scenario::Scenario;
use scenario::model::{MAX_SUBFLOWS, NodeId};
use scenario::spec::Protocol;
use std::net::Ipv4Addr;

/// Tables 100 + i hold interface i's default route; rules sit at 1000 + i.
const RULE_PRIORITY: u32 = 1000;
/// MATCP path addresses' rules: 1100 + the path's index.
const PATH_RULE_PRIORITY: u32 = 1100;

/// The hosts, up. Dropping it deletes the namespaces (and with them every socket, route
/// and endpoint); the TUN devices go with the emulator that holds them.
pub struct Hosts {
    /// One per host, in the order of `Plan::hosts`.
    pub namespaces: Vec<(NodeId, Netns)>,
}

/// Writes a sysctl of the calling thread's namespace.
pub(crate) fn sysctl(key: &str, value: &str) -> Result<()> {
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    std::fs::write(&path, value).with_context(|| format!("setting {key}={value}"))
}

fn ifindex(name: &str) -> Result<u32> {
    let c = std::ffi::CString::new(name)?;
    // SAFETY: a NUL-terminated name; if_nametoindex only reads it.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        bail!("device {name} vanished");
    }
    Ok(i)
}

/// What one host's namespace needs, computed before entering it.
struct HostSetup {
    ports: Vec<Port>,
    /// (destination address, index into `ports` of the interface to leave by).
    main_routes: Vec<(Ipv4Addr, usize)>,
    /// Peers whose data this host acknowledges segment by segment: the sources of its
    /// incoming flows with `delayed_ack = false`.
    quickack_peers: Vec<Ipv4Addr>,
    /// `net.mptcp.stale_loss_cnt` of the host's MPTCP senders, if it has any.
    stale_loss_cnt: Option<u8>,
    multipath: bool,
    /// ndiffports: (index into `ports`, server ports) announced as `signal` endpoints.
    signal: Option<(usize, Vec<u16>)>,
    /// MATCP: (path address, index into `ports` of the interface it leaves by), in path
    /// order.
    path_addrs: Vec<(Ipv4Addr, usize)>,
}

impl HostSetup {
    /// Runs inside the namespace; returns the TUN devices in the order of `ports`.
    fn apply(self) -> Result<Vec<Tun>> {
        sysctl("net.ipv6.conf.all.disable_ipv6", "1")?;
        sysctl("net.ipv6.conf.default.disable_ipv6", "1")?;
        sysctl("net.ipv4.conf.all.rp_filter", "0")?;
        sysctl("net.ipv4.conf.default.rp_filter", "0")?;
        sysctl("net.mptcp.enabled", "1").context("this kernel has no MPTCP (net.mptcp.enabled)")?;
        // Every connection starts from the same state, as in the simulator.
        sysctl("net.ipv4.tcp_no_metrics_save", "1")?;
        if let Some(n) = self.stale_loss_cnt {
            sysctl("net.mptcp.stale_loss_cnt", &n.to_string())?;
        }
        let mut rtnl = Rtnl::open()?;
        rtnl.set_up(ifindex("lo")?)?;
        let mut tuns = Vec::new();
        let mut indices = Vec::new();
        for (i, p) in self.ports.iter().enumerate() {
            let tun = Tun::create(&p.dev)?;
            let index = ifindex(&p.dev)?;
            rtnl.set_up(index)?;
            rtnl.add_address(index, p.addr, 32)?;
            rtnl.add_route(p.table, Ipv4Addr::UNSPECIFIED, 0, index, false)?;
            // A receiving socket is bound to one of our addresses, so its ACKs follow the
            // interface table: the quick-ACK routes must be there too.
            for &peer in &self.quickack_peers {
                rtnl.add_route(p.table, peer, 32, index, true)?;
            }
            rtnl.add_rule(p.addr, p.table, RULE_PRIORITY + i as u32)?;
            tuns.push(tun);
            indices.push(index);
        }
        // A connection the MATCP program bound to a path's address leaves by the rule of
        // that address (policy routing, as for an interface's own address); the emulator
        // then carries it along the path's route.
        for (k, &(addr, i)) in self.path_addrs.iter().enumerate() {
            rtnl.add_address(indices[i], addr, 32)?;
            rtnl.add_rule(addr, self.ports[i].table, PATH_RULE_PRIORITY + k as u32)?;
        }
        for (dst, via) in &self.main_routes {
            let quickack = self.quickack_peers.contains(dst);
            rtnl.add_route(254, *dst, 32, indices[*via], quickack)?;
        }
        let mut pm = MptcpPm::open()?;
        pm.set_limits(MAX_SUBFLOWS, MAX_SUBFLOWS)?;
        if self.multipath {
            // The path manager opens a subflow from every endpoint address not already in
            // use by the connection: one per interface, as the simulator does.
            for (i, p) in self.ports.iter().enumerate() {
                pm.add_endpoint(
                    p.addr,
                    None,
                    indices[i],
                    i as u8 + 1,
                    EndpointFlags::SUBFLOW,
                )?;
            }
        }
        if let Some((i, ports)) = &self.signal {
            // ndiffports (crate::ndiffports): the address again with each extra port; the
            // kernel listens there and announces it, and the client opens a subflow to each.
            let p = &self.ports[*i];
            for (k, &port) in ports.iter().enumerate() {
                let id = (self.ports.len() + 1 + k) as u8;
                pm.add_endpoint(p.addr, Some(port), indices[*i], id, EndpointFlags::SIGNAL)?;
            }
        }
        Ok(tuns)
    }
}

/// The `stale_loss_cnt` of the first MPTCP flow group `node` sends: a sysctl, so one value
/// holds for all of the host's connections (`not_applied` says so when groups differ).
fn stale_loss_cnt(sc: &Scenario, node: NodeId) -> Option<u8> {
    sc.flows
        .iter()
        .find(|g| g.src == node && g.protocol == Protocol::Mptcp)
        .map(|g| g.stale_loss_cnt)
}

/// The addresses of every host that sends `node` a flow with `delayed_ack = false`.
fn quickack_peers(sc: &Scenario, plan: &Plan, node: NodeId) -> Vec<Ipv4Addr> {
    let mut peers: Vec<Ipv4Addr> = sc
        .flows
        .iter()
        .filter(|g| g.dst == node && !g.delayed_ack)
        .flat_map(|g| plan.hosts.iter().filter(move |(n, _)| *n == g.src))
        .flat_map(|(_, ports)| ports.iter().map(|&p| plan.ports[p].addr))
        .collect();
    peers.sort();
    peers.dedup();
    peers
}

impl Hosts {
    /// Creates every host. Returns the hosts and the TUN devices in the order of
    /// `plan.ports`.
    pub fn create(sc: &Scenario, plan: &Plan) -> Result<(Hosts, Vec<Tun>)> {
        let ndiffports = Ndiffports::of(sc).map_err(anyhow::Error::msg)?;
        let mut namespaces = Vec::new();
        let mut tuns: Vec<Option<Tun>> = (0..plan.ports.len()).map(|_| None).collect();
        for (node, mine) in &plan.hosts {
            let name = &sc.nodes[*node].name;
            let ns = Netns::new(&format!("h-{name}"))
                .with_context(|| format!("creating the namespace of host {name}"))?;
            let ports: Vec<Port> = mine.iter().map(|&p| plan.ports[p].clone()).collect();
            let mut main_routes = Vec::new();
            for (other, theirs) in &plan.hosts {
                if other == node {
                    continue;
                }
                let Some(first) = plan.first_hop(sc, *node, *other) else {
                    continue;
                };
                let Some(via) = ports.iter().position(|p| p.out_dir == first) else {
                    continue;
                };
                for &t in theirs {
                    main_routes.push((plan.ports[t].addr, via));
                }
                for a in plan.path_addrs.iter().filter(|a| a.node == *other) {
                    main_routes.push((a.addr, via));
                }
            }
            let signal = ndiffports
                .server(*node)
                .map(|s| {
                    let i = ports
                        .iter()
                        .position(|p| p.out_dir == s.into.reverse())
                        .context("an ndiffports path ends at no interface of its server")?;
                    anyhow::Ok((i, s.ports()))
                })
                .transpose()?;
            let mut path_addrs: Vec<&crate::plan::PathAddr> =
                plan.path_addrs.iter().filter(|a| a.node == *node).collect();
            path_addrs.sort_by_key(|a| a.path);
            let path_addrs = path_addrs
                .into_iter()
                .map(|a| (a.addr, mine.iter().position(|&p| p == a.port).unwrap_or(0)))
                .collect();
            let setup = HostSetup {
                path_addrs,
                // An ndiffports client's subflows all leave from its first path's interface.
                multipath: ports.len() > 1 && !ndiffports.is_client(*node),
                signal,
                ports,
                main_routes,
                quickack_peers: quickack_peers(sc, plan, *node),
                stale_loss_cnt: stale_loss_cnt(sc, *node),
            };
            let made = ns
                .enter(move || setup.apply())
                .with_context(|| format!("setting up host {name}"))?;
            for (&p, t) in mine.iter().zip(made) {
                tuns[p] = Some(t);
            }
            namespaces.push((*node, ns));
        }
        let tuns = tuns
            .into_iter()
            .map(|t| t.expect("every port belongs to a host"))
            .collect();
        Ok((Hosts { namespaces }, tuns))
    }

    pub fn netns(&self, node: NodeId) -> &Netns {
        &self
            .namespaces
            .iter()
            .find(|(n, _)| *n == node)
            .expect("a host of this scenario")
            .1
    }
}
