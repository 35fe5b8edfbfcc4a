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

pub type NodeId = usize;
pub type LinkId = usize;
/// One direction of a link: `2 * link` is a to b, `2 * link + 1` is b to a.
pub type DirId = usize;

pub fn dir_id(link: LinkId, b_to_a: bool) -> DirId {
    2 * link + b_to_a as usize
}
pub fn dir_link(dir: DirId) -> LinkId {
    dir / 2
}
pub fn dir_reverse(dir: DirId) -> DirId {
    dir ^ 1
}

#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    pub interfaces: Vec<Interface>,
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
}

impl Link {
    pub fn from_node(&self, dir: DirId) -> NodeId {
        if dir.is_multiple_of(2) {
            self.a
        } else {
            self.b
        }
    }
    pub fn to_node(&self, dir: DirId) -> NodeId {
        if dir.is_multiple_of(2) {
            self.b
        } else {
            self.a
        }
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
            hops: self.hops.iter().rev().map(|&d| dir_reverse(d)).collect(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowGroup {
    pub name: String,
    pub count: u32,
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
    pub start_jitter: Duration,
    pub reconnect_after: Option<Duration>,
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
}

impl Scenario {
    pub fn dir_name(&self, dir: DirId) -> String {
        let l = &self.links[dir_link(dir)];
        let (from, to) = (l.from_node(dir), l.to_node(dir));
        format!(
            "{}:{}>{}",
            l.name, self.nodes[from].name, self.nodes[to].name
        )
    }
    pub fn total_flows(&self) -> u64 {
        self.flows.iter().map(|f| f.count as u64).sum()
    }
}
