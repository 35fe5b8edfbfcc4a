//! `path_manager = "ndiffports"` on the kernel: several subflows between the same two
//! addresses, told apart by the server's port. Linux has no ndiffports path manager (the
//! out-of-tree MPTCP had one; upstream's in-kernel path manager opens subflows per address,
//! net/mptcp/pm_kernel.c), so the backend builds one from what upstream does have: the
//! server announces its address again with other ports (`signal` endpoints with a port, for
//! which the kernel listens and sends ADD_ADDR with the port), and the client, which accepts
//! announcements (`add_addr_accepted`), opens one subflow to each: from its own address,
//! over the same interface, to the same server address on another port.
//!
//! The endpoints belong to a host, not to a connection: every MPTCP connection to the server
//! is offered the extra ports, and `subflow` endpoints on the client would add subflows to
//! every connection from it. So a host that serves ndiffports connections serves only
//! ndiffports connections with one subflow count at one address, and a host that opens
//! them opens no other MPTCP connections; a scenario that mixes them is refused, never run
//! with other subflows than it asks for.

use scenario::Scenario;
use scenario::model::{DirId, NodeId};
use scenario::spec::{PathManager, Protocol};

/// The server port of subflow `k >= 1` is `SIGNAL_BASE_PORT + k` (flows listen from 5001 up).
const SIGNAL_BASE_PORT: u16 = 4000;

/// What one server host announces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    pub node: NodeId,
    /// The link direction into the server's interface whose address is announced (where the
    /// connections' first path ends).
    pub into: DirId,
    /// Subflows per connection, the first one included.
    pub subflows: u32,
}

impl Server {
    /// The ports announced, one per extra subflow.
    pub fn ports(&self) -> Vec<u16> {
        (1..self.subflows).map(subflow_port).collect()
    }
}

/// The server port subflow `k` (1 and up) of an ndiffports connection goes to.
pub fn subflow_port(k: u32) -> u16 {
    SIGNAL_BASE_PORT + k as u16
}

/// The ndiffports connections of a scenario, host by host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ndiffports {
    pub servers: Vec<Server>,
    /// Hosts that open ndiffports connections: they get no `subflow` endpoints.
    pub clients: Vec<NodeId>,
}

impl Ndiffports {
    /// The layout, or why this kernel backend cannot honour the scenario's ndiffports
    /// groups exactly.
    pub fn of(sc: &Scenario) -> Result<Ndiffports, String> {
        let mptcp = || sc.flows.iter().filter(|g| g.protocol == Protocol::Mptcp);
        let mut out = Ndiffports::default();
        for g in mptcp().filter(|g| g.path_manager == PathManager::Ndiffports) {
            let subflows = g.subflows.unwrap_or(2);
            let Some(&last) = g.paths.first().and_then(|r| r.hops.last()) else {
                continue;
            };
            let server = Server {
                node: g.dst,
                into: last,
                subflows,
            };
            for other in mptcp().filter(|o| o.dst == g.dst) {
                let same = other.path_manager == PathManager::Ndiffports
                    && other.subflows.unwrap_or(2) == subflows
                    && other.paths.first().and_then(|r| r.hops.last()) == Some(&last);
                if !same {
                    return Err(format!(
                        "flow groups `{}` and `{}` both open MPTCP connections to host `{}`, \
                         not both ndiffports with the same subflows to the same address: the \
                         kernel backend's ndiffports announces extra ports of the server's \
                         address, which every MPTCP connection to that host would use",
                        g.name, other.name, sc.nodes[g.dst].name
                    ));
                }
            }
            if let Some(other) =
                mptcp().find(|o| o.src == g.src && o.path_manager != PathManager::Ndiffports)
            {
                return Err(format!(
                    "host `{}` opens ndiffports (flow group `{}`) and fullmesh (flow group \
                     `{}`) MPTCP connections: the kernel's path manager endpoints apply to \
                     every connection of a host, so the kernel backend cannot give each its own",
                    sc.nodes[g.src].name, g.name, other.name
                ));
            }
            if subflows > 1 && !out.servers.contains(&server) {
                out.servers.push(server);
            }
            if !out.clients.contains(&g.src) {
                out.clients.push(g.src);
            }
        }
        Ok(out)
    }

    /// The ndiffports server of `node`, if it is one.
    pub fn server(&self, node: NodeId) -> Option<&Server> {
        self.servers.iter().find(|s| s.node == node)
    }

    pub fn is_client(&self, node: NodeId) -> bool {
        self.clients.contains(&node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenario::{LoadOptions, load_str};

    fn scenario(flows: &str) -> Scenario {
        let text = format!(
            r#"
[scenario]
name = "n"
duration = "10s"
[[node]]
name = "c"
kind = "host"
[[node]]
name = "s"
kind = "host"
[[link]]
a = "c:eth0"
b = "s"
rate = "10Mbps"
delay = "5ms"
{flows}"#
        );
        let opts = LoadOptions {
            overrides: Vec::new(),
        };
        load_str(&text, "t.toml".as_ref(), &opts).unwrap().remove(0)
    }

    const NDIFF3: &str = r#"
[[flow]]
name = "a"
protocol = "mptcp"
path_manager = "ndiffports"
subflows = 3
from = "c"
to = "s"
"#;

    #[test]
    fn the_listener_announces_one_port_per_extra_subflow() {
        let sc = scenario(&format!(
            "{NDIFF3}\n[[flow]]\nname = \"t\"\nfrom = \"c\"\nto = \"s\"\n"
        ));
        let n = Ndiffports::of(&sc).unwrap();
        assert_eq!(n.servers.len(), 1);
        assert_eq!(n.servers[0].node, sc.flows[0].dst);
        assert_eq!(n.servers[0].ports(), [4001, 4002]);
        assert!(n.is_client(sc.flows[0].src) && !n.is_client(sc.flows[0].dst));
        // Without ndiffports there is nothing to do.
        let plain =
            scenario("[[flow]]\nname = \"m\"\nprotocol = \"mptcp\"\nfrom = \"c\"\nto = \"s\"\n");
        assert_eq!(Ndiffports::of(&plain).unwrap(), Ndiffports::default());
    }

    #[test]
    fn what_the_per_host_path_manager_cannot_honour_is_refused() {
        let other_count = NDIFF3
            .replace("name = \"a\"", "name = \"b\"")
            .replace("= 3", "= 2");
        let err = Ndiffports::of(&scenario(&format!("{NDIFF3}{other_count}"))).unwrap_err();
        assert!(
            err.contains("`a` and `b` both open MPTCP connections to host `s`"),
            "{err}"
        );
        let fullmesh = "[[flow]]\nname = \"f\"\nprotocol = \"mptcp\"\nfrom = \"c\"\nto = \"s\"\n";
        let err = Ndiffports::of(&scenario(&format!("{NDIFF3}{fullmesh}"))).unwrap_err();
        assert!(err.contains("`a` and `f`"), "{err}");
    }
}
