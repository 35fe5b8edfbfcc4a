//! The scenario file as written: every table and field, with serde doing the shape checks
//! (unknown keys, missing fields, wrong types). Cross-references are checked in `validate`.

use crate::units::{BufferSize, Duration, Probability, Rate, Size};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    pub scenario: Header,
    /// Default parameter values, referenced as `"${name}"` anywhere in the file.
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    /// A matrix: every combination of these parameter values is one variant.
    #[serde(default)]
    pub variants: BTreeMap<String, Vec<toml::Value>>,
    #[serde(default, rename = "node")]
    pub nodes: Vec<NodeSpec>,
    #[serde(default, rename = "link")]
    pub links: Vec<LinkSpec>,
    #[serde(default, rename = "flow")]
    pub flows: Vec<FlowSpec>,
    #[serde(default, rename = "event")]
    pub events: Vec<EventSpec>,
    #[serde(default)]
    pub measure: MeasureSpec,
    #[serde(default, rename = "expect")]
    pub expects: Vec<ExpectSpec>,
    #[serde(default, rename = "plot")]
    pub plots: Vec<PlotSpec>,
    #[serde(default, rename = "order")]
    pub orders: Vec<OrderSpec>,
}

/// An ordering across variants that must hold ("the cost is largest with LIA, smaller with
/// OLIA, smallest with Balia"). Checked separately for each combination of the other
/// parameters.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OrderSpec {
    /// The statement, as the paper makes it.
    pub statement: String,
    pub metric: String,
    /// Divide the metric by this one first.
    pub over: Option<String>,
    /// The variant parameter whose values are ordered.
    pub param: String,
    /// Values of `param`, from the smallest metric to the largest.
    pub ascending: Vec<toml::Value>,
    /// Each step must grow by at least this factor (default: any increase).
    #[serde(default = "unit_scale")]
    pub min_ratio: f64,
    #[serde(default)]
    pub when: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub source: String,
}

/// A figure for the report beyond the standard ones.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
pub enum PlotSpec {
    /// Time series from the runs (first seed), one line per variant and entity.
    Series {
        title: String,
        /// Series name: `goodput_mbps`, `cwnd_pkts`, `rtt_ms` or `queue_pkts`.
        series: String,
        /// Entities to draw, e.g. `flow.mptcp#0.sf1` or `group.tcp`.
        entities: Vec<String>,
        /// A metric holding a time (seconds) to mark on each line, e.g. a convergence instant.
        mark: Option<String>,
    },
    /// A metric against a variant parameter, one line per value of another parameter.
    Sweep {
        title: String,
        metric: String,
        x: String,
        lines: Option<String>,
        /// Scale the metric by this factor before plotting (e.g. 1e-3).
        #[serde(default = "unit_scale")]
        scale: f64,
        y_label: Option<String>,
    },
}

fn unit_scale() -> f64 {
    1.0
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Where the experiment comes from (seed document, section, table).
    #[serde(default)]
    pub source: String,
    pub duration: Duration,
    /// Base seed; run k of a variant uses `seed + k`.
    #[serde(default = "default_seed")]
    pub seed: u64,
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
pub enum QueueSpec {
    /// Drop-tail FIFO, limit in packets (`100pkt`) or bytes (`150KB`).
    Droptail { size: Size },
    /// Random Early Detection (Floyd and Jacobson 1993); thresholds in the unit of `size`.
    Red {
        size: Size,
        min_th: f64,
        max_th: f64,
        max_p: f64,
        #[serde(default = "default_red_weight")]
        weight: f64,
        #[serde(default)]
        gentle: bool,
    },
}

fn default_red_weight() -> f64 {
    0.002
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::Droptail {
            size: Size::Packets(100),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    pub rate: Option<Rate>,
    pub delay: Option<Duration>,
    pub queue: Option<QueueSpec>,
    pub loss: Option<Probability>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Defaults to `a-b` (node names).
    pub name: Option<String>,
    /// `node` or `node:interface`; the interface name defaults to the link's name.
    pub a: String,
    pub b: String,
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Duration,
    #[serde(default)]
    pub queue: QueueSpec,
    #[serde(default)]
    pub loss: Probability,
    /// Overrides for the direction a to b.
    #[serde(default)]
    pub ab: DirectionSpec,
    /// Overrides for the direction b to a.
    #[serde(default)]
    pub ba: DirectionSpec,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Tcp,
    Mptcp,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
pub enum TrafficSpec {
    /// Always has data to send.
    Bulk,
    /// One transfer of `size`; measures flow completion time.
    File { size: Size },
    /// Backlogged bursts of exponential length `burst`, separated by exponential `idle` times.
    /// Each burst opens a new connection (as a new transfer would).
    Onoff { burst: Duration, idle: Duration },
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// The group name; flows of a group are measured together.
    pub name: String,
    /// How many identical flows this group holds.
    #[serde(default = "one")]
    pub count: u32,
    #[serde(default = "default_protocol")]
    pub protocol: Protocol,
    #[serde(default = "default_cc")]
    pub cc: String,
    /// `host` or `host:interface`.
    pub from: String,
    pub to: String,
    /// Nodes to pass through, in order (explicit route); shortest path otherwise.
    #[serde(default)]
    pub via: Vec<String>,
    #[serde(default)]
    pub start: Duration,
    /// Flows of a group start spread evenly over `[start, start + stagger)`.
    #[serde(default)]
    pub stagger: Duration,
    pub stop: Option<Duration>,
    #[serde(default = "default_traffic")]
    pub traffic: TrafficSpec,
    /// Sender window limit (the MATCP experiments use `16pkt`).
    pub window_limit: Option<Size>,
    /// Receive buffer, shared by an MPTCP connection's subflows; bounds the advertised
    /// window. A size, or a multiple of the rule of Barré, Paasch and Bonaventure (2011),
    /// 2 * RTT_max * sum(BW_i) (`1rule`).
    pub rcv_buffer: Option<BufferSize>,
    #[serde(default = "yes")]
    pub delayed_ack: bool,
    #[serde(default = "yes")]
    pub sack: bool,
    /// MPTCP: which subflows to open (default `fullmesh`).
    pub path_manager: Option<PathManager>,
    /// MPTCP: how many subflows (`ndiffports`: over the first interface, default 2;
    /// `fullmesh`: at most this many, one per interface).
    pub subflows: Option<u32>,
    /// MPTCP: which subflow gets the next segment (default `lowest-rtt`).
    pub scheduler: Option<SchedulerKind>,
    /// Each flow's start is delayed by a uniform random amount in `[0, start_jitter)`, so
    /// seeds differ even where nothing else is random.
    #[serde(default)]
    pub start_jitter: Duration,
    /// After this long without progress the application gives up the connection and opens
    /// a new one (TCP: over its next interface, as a client does after a handover).
    pub reconnect_after: Option<Duration>,
}

/// MPTCP path managers, named as in Linux.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PathManager {
    /// One subflow per local interface.
    Fullmesh,
    /// k subflows over the first interface (different ports, same path).
    Ndiffports,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// Lowest smoothed RTT among subflows with window space (Linux's default).
    LowestRtt,
    RoundRobin,
}

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn default_protocol() -> Protocol {
    Protocol::Tcp
}
fn default_cc() -> String {
    "reno".into()
}
fn default_traffic() -> TrafficSpec {
    TrafficSpec::Bulk
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum EventAction {
    Down,
    Up,
    Set,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    pub at: Duration,
    pub link: String,
    pub action: EventAction,
    /// With `set`: new values for both directions.
    pub rate: Option<Rate>,
    pub delay: Option<Duration>,
    pub loss: Option<Probability>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureSpec {
    /// Goodput and queue series bin width.
    #[serde(default = "default_interval")]
    pub interval: Duration,
    /// Time skipped before summaries (mean goodput, utilisation, Jain's index).
    #[serde(default)]
    pub warmup: Duration,
    /// Write one goodput series per flow (always one per group).
    #[serde(default = "yes")]
    pub per_flow: bool,
    /// Sampling period of the window, RTT and queue traces (default: `interval`).
    pub trace_interval: Option<Duration>,
    /// Convergence metrics: for each subflow, the time after this instant until its window
    /// first reaches its mean over the rest of the run (the Balia draft, draft-walid-mptcp-congestion-control-04, section 5.2).
    pub convergence_after: Option<Duration>,
}

fn default_interval() -> Duration {
    Duration(1_000_000_000)
}

impl Default for MeasureSpec {
    fn default() -> Self {
        MeasureSpec {
            interval: default_interval(),
            warmup: Duration::ZERO,
            per_flow: true,
            trace_interval: None,
            convergence_after: None,
        }
    }
}

/// A value to compare with: a published figure (`value` and `tolerance`) or a bound
/// (`min`, `max`) that must hold.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectSpec {
    /// A metric name from the summary, e.g. `group.type1.goodput_mbps`.
    pub metric: String,
    /// Divide the metric by this one (ratios such as MPTCP over TCP).
    pub over: Option<String>,
    pub value: Option<f64>,
    /// `"10%"` (relative) or a number in the metric's unit (absolute).
    pub tolerance: Option<Tolerance>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Only for variants whose parameters have these values.
    #[serde(default)]
    pub when: BTreeMap<String, toml::Value>,
    /// Where the number comes from, or why the bound is what it is.
    #[serde(default)]
    pub source: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum Tolerance {
    Relative(f64),
    Absolute(f64),
}

impl Tolerance {
    pub fn allows(self, ours: f64, published: f64) -> bool {
        let band = match self {
            Tolerance::Relative(r) => r * published.abs(),
            Tolerance::Absolute(a) => a,
        };
        (ours - published).abs() <= band + 1e-12
    }
}

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tolerance::Relative(r) => write!(f, "±{}%", r * 100.0),
            Tolerance::Absolute(a) => write!(f, "±{a}"),
        }
    }
}

impl<'de> Deserialize<'de> for Tolerance {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(f64),
            Text(String),
        }
        let bad = |t: &str| {
            D::Error::custom(format!(
                "expected a tolerance such as `\"10%\"` or `0.5`, got `{t}`"
            ))
        };
        match Raw::deserialize(d)? {
            Raw::Num(v) if v >= 0.0 => Ok(Tolerance::Absolute(v)),
            Raw::Num(v) => Err(bad(&v.to_string())),
            Raw::Text(t) => {
                let pct = t.trim().strip_suffix('%').ok_or_else(|| bad(&t))?;
                let v: f64 = pct.trim().parse().map_err(|_| bad(&t))?;
                if v < 0.0 {
                    return Err(bad(&t));
                }
                Ok(Tolerance::Relative(v / 100.0))
            }
        }
    }
}
