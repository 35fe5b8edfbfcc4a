//! A validated scenario, one variant with all parameters substituted and every name resolved
//! to an index. Backends consume this, never the raw file.

use crate::spec::{
    ExpectSpec, MeasureSpec, NodeKind, OrderSpec, PathManager, PlotSpec, Protocol, QueueSpec,
    SchedulerKind, TrafficSpec,
};
use crate::units::{BufferSize, Duration, Probability, Rate, Size};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A node (host or router), by its position in `Scenario::nodes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
#[serde(transparent)]
pub struct NodeId(pub usize);

/// A link, by its position in `Scenario::links`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
#[serde(transparent)]
pub struct LinkId(pub usize);

/// One direction of a link: `2 * link` is a to b, `2 * link + 1` is b to a. Also the index of
/// that direction in every per-direction table (the fabric's links, the meters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
#[serde(transparent)]
pub struct DirId(pub usize);

impl NodeId {
    pub fn index(self) -> usize {
        self.0
    }
}

impl LinkId {
    pub fn index(self) -> usize {
        self.0
    }

    /// Its direction from `a` to `b`, or back.
    pub fn dir(self, b_to_a: bool) -> DirId {
        DirId(2 * self.0 + b_to_a as usize)
    }
}

impl DirId {
    pub fn index(self) -> usize {
        self.0
    }

    pub fn link(self) -> LinkId {
        LinkId(self.0 / 2)
    }

    /// The same link the other way.
    pub fn reverse(self) -> DirId {
        DirId(self.0 ^ 1)
    }

    pub fn is_b_to_a(self) -> bool {
        self.0 % 2 == 1
    }
}

/// Indexing a per-node, per-link or per-direction table by its typed id.
macro_rules! index_by {
    ($id:ty, $item:ty) => {
        impl std::ops::Index<$id> for [$item] {
            type Output = $item;
            fn index(&self, id: $id) -> &$item {
                &self[id.0]
            }
        }
        impl std::ops::IndexMut<$id> for [$item] {
            fn index_mut(&mut self, id: $id) -> &mut $item {
                &mut self[id.0]
            }
        }
        impl std::ops::Index<$id> for Vec<$item> {
            type Output = $item;
            fn index(&self, id: $id) -> &$item {
                &self[id.0]
            }
        }
        impl std::ops::IndexMut<$id> for Vec<$item> {
            fn index_mut(&mut self, id: $id) -> &mut $item {
                &mut self[id.0]
            }
        }
    };
}
index_by!(NodeId, Node);
index_by!(LinkId, Link);

#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    pub interfaces: Vec<Interface>,
    /// A host's processing jitter (`[[node]] jitter`); zero for none, and for routers.
    pub jitter: Duration,
}

#[derive(Clone, Debug, Serialize)]
pub struct Interface {
    pub name: String,
    /// The direction leaving this node through this interface.
    pub out_dir: DirId,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DirConfig {
    pub rate: Rate,
    pub delay: Duration,
    pub queue: QueueSpec,
    pub loss: Probability,
}

#[derive(Clone, Debug, Serialize)]
pub struct Link {
    pub name: String,
    pub a: NodeId,
    pub b: NodeId,
    /// `[a to b, b to a]`.
    pub dirs: [DirConfig; 2],
    /// A delay drawn per scenario: both directions' `delay` is the mean until
    /// `net::draws` fixes it in `[mean - spread, mean + spread]`.
    pub delay_spread: Duration,
}

impl Link {
    pub fn from_node(&self, dir: DirId) -> NodeId {
        if dir.is_b_to_a() { self.b } else { self.a }
    }
    pub fn to_node(&self, dir: DirId) -> NodeId {
        if dir.is_b_to_a() { self.a } else { self.b }
    }

    /// The configuration of direction `dir` of this link.
    pub fn dir(&self, dir: DirId) -> &DirConfig {
        &self.dirs[dir.is_b_to_a() as usize]
    }
}

/// A path through the network: the link directions a packet crosses, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Route {
    pub hops: Vec<DirId>,
}

impl Route {
    /// The way back, for ACKs: the same links in the other direction.
    pub fn reversed(&self) -> Route {
        Route {
            hops: self.hops.iter().rev().map(|d| d.reverse()).collect(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowGroup {
    pub name: String,
    /// Flows in the group; with a spread, the mean of a number drawn per run in
    /// `[count - spread, count + spread]` (`net::draws` fixes it for a run).
    pub count: u32,
    pub count_spread: u32,
    pub protocol: Protocol,
    pub cc: mptcp_cc::AlgorithmId,
    pub src: NodeId,
    pub dst: NodeId,
    /// Candidate paths, one per usable source interface, best first. TCP uses the first (a
    /// reconnecting application the next); MPTCP's path manager chooses among them.
    pub paths: Vec<Route>,
    pub start: Duration,
    pub stagger: Duration,
    pub stop: Duration,
    pub traffic: TrafficSpec,
    pub window_limit: Option<Size>,
    /// As the scenario gives it: a size, or a multiple of the rule (`net::paths::rcv_buffer`
    /// resolves it from the subflows' routes).
    pub rcv_buffer: Option<BufferSize>,
    pub delayed_ack: bool,
    pub sack: bool,
    /// MPTCP's path manager and its subflow limit as the scenario configures them; which
    /// routes the subflows take follows from them (`net::paths::subflow_routes`).
    pub path_manager: PathManager,
    pub subflows: Option<u32>,
    pub scheduler: SchedulerKind,
    /// `net.mptcp.stale_loss_cnt` for this group's connections.
    pub stale_loss_cnt: u8,
    pub start_jitter: Duration,
    pub reconnect_after: Option<Duration>,
    /// TCP: the selector that places each new connection on one of `paths` (MATCP).
    pub select: Option<crate::spec::SelectSpec>,
}

/// Linux allows at most 8 subflows per MPTCP connection.
pub const MAX_SUBFLOWS: u32 = 8;

impl FlowGroup {
    /// Start time of flow `i` of the group: spread evenly over the stagger window.
    pub fn start_of(&self, i: u32) -> Duration {
        Duration(self.start.0 + self.stagger.0 * i as u64 / self.count.max(1) as u64)
    }
}

#[derive(Clone, Debug, Serialize)]
pub enum EventKind {
    Down,
    Up,
    Set {
        rate: Option<Rate>,
        delay: Option<Duration>,
        loss: Option<Probability>,
    },
}

#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub at: Duration,
    pub link: LinkId,
    pub kind: EventKind,
}

/// One runnable variant.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    pub file: PathBuf,
    pub name: String,
    pub description: String,
    pub source: String,
    /// `key=value,...` of the matrix parameters; empty when there is one variant.
    pub variant: String,
    pub params: BTreeMap<String, toml::Value>,
    pub duration: Duration,
    pub seed: u64,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub flows: Vec<FlowGroup>,
    pub events: Vec<Event>,
    pub measure: MeasureSpec,
    pub expects: Vec<ExpectSpec>,
    pub plots: Vec<PlotSpec>,
    pub orders: Vec<OrderSpec>,
    pub derived: Vec<crate::spec::DerivedSpec>,
    pub tables: Vec<crate::spec::TableSpec>,
}

impl Scenario {
    /// How the variant is named to a person: its `key=value,...`, or `default` when the
    /// scenario has one variant.
    pub fn variant_name(&self) -> &str {
        if self.variant.is_empty() {
            "default"
        } else {
            &self.variant
        }
    }

    /// The variant as a file or folder name: `variant_name()` with `/` and spaces made
    /// `_` (results' `<variant>/` folders, captures' `<variant>-seed<N>-<link>.pcap`).
    pub fn variant_dir(&self) -> String {
        self.variant_name().replace(['/', ' '], "_")
    }

    /// A node's name as the file gives it.
    pub fn node_name(&self, node: NodeId) -> &str {
        &self.nodes[node].name
    }

    pub fn dir_name(&self, dir: DirId) -> String {
        let l = &self.links[dir.link()];
        let (from, to) = (l.from_node(dir), l.to_node(dir));
        format!("{}:{}>{}", l.name, self.node_name(from), self.node_name(to))
    }
    /// The most flows a run can have (counts drawn per run at their largest).
    pub fn total_flows(&self) -> u64 {
        self.flows
            .iter()
            .map(|f| f.count as u64 + f.count_spread as u64)
            .sum()
    }
}
