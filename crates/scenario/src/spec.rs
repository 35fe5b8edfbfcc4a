//! The scenario file as written: every table and field, with serde doing the shape checks
//! (unknown keys, missing fields, wrong types). Cross-references are checked in `validate`.

use crate::units::{BufferSize, Duration, Probability, Rate, Size};
use serde::{Deserialize, Serialize, de};
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
    #[serde(default, rename = "derived")]
    pub derived: Vec<DerivedSpec>,
    #[serde(default, rename = "table")]
    pub tables: Vec<TableSpec>,
}

/// A paper's table as it is laid out: which variant parameters run down the side (`rows`)
/// and which across (`columns`), the metrics it shows, and on which side they go. The report
/// fills it with our values, each beside the published figure of the `[[expect]]` that
/// names the same variant and metric.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    pub title: String,
    /// Variant parameters down the side, outermost first.
    #[serde(default)]
    pub rows: Vec<String>,
    /// Variant parameters across the top, outermost first.
    #[serde(default)]
    pub columns: Vec<String>,
    /// The metrics in the table, in the paper's order.
    pub metrics: Vec<String>,
    /// Where the metrics go: one row each, inside the row parameters (`rows`, the
    /// default), or one column each, inside the column parameters (`columns`).
    #[serde(default)]
    pub metrics_in: TableSide,
    /// Headers in the paper's words: a parameter, a parameter's value, a metric, or
    /// `metric` (the header of the metrics' own row or column), mapped to its label.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub source: String,
}

/// The side of a `[[table]]` its metrics go on.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TableSide {
    #[default]
    Rows,
    Columns,
}

/// A metric computed from others after each run, `derived.<name>`: "how unequal are the
/// uplinks' goodputs" is the spread of four link metrics, and an expectation or ordering can
/// then name it like any other metric.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DerivedSpec {
    pub name: String,
    pub reduce: Reduce,
    /// The metrics it is computed from (at least two).
    pub of: Vec<String>,
}

/// How a derived metric reduces its metrics to one number.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Reduce {
    Min,
    Max,
    Mean,
    /// Largest minus smallest.
    Spread,
    /// Population standard deviation.
    Std,
    /// Standard deviation over mean (0 when the mean is 0).
    Cv,
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
    /// Each step must grow by at least this factor (default: any increase). Below 1, a
    /// tolerance: each value at least this fraction of the one before ("equal or better,
    /// within 1 %" is 0.99).
    #[serde(default = "unit_scale")]
    pub min_ratio: f64,
    /// Only for variants with these parameter values (a list: any of them).
    #[serde(default)]
    pub when: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub source: String,
    /// Why the ordering may not hold in our runs (a reading of the paper, a parameter it does
    /// not give): the report prints it beside each point where it fails.
    #[serde(default)]
    pub if_fails: Option<String>,
}

impl OrderSpec {
    /// Whether `b` may follow `a` in the ascending list.
    pub fn holds(&self, a: f64, b: f64) -> bool {
        if self.min_ratio < 1.0 {
            b >= a * self.min_ratio
        } else {
            b > a && b >= a * self.min_ratio
        }
    }
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
        /// Where `x` is not a number or a size (a multiple of a rule, `1rule`), place the
        /// variant at this metric's mean instead (`group.<g>.rcv_buffer_mb`, the buffer the
        /// rule gave) and mark it apart from the line: the rule's point.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule_x: Option<String>,
        /// Another metric of the same variants drawn against the same `x`, dashed, one line
        /// per line of the sweep (a single-path TCP connection given the same buffer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        baseline: Option<String>,
        /// The baseline's name in the legend (the metric's name in words if not given).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        baseline_label: Option<String>,
    },
    /// Metrics against a parameter, in one panel per value of `panels` (the paper's columns,
    /// one per selector), each panel drawing the `baseline` value's lines solid and its own
    /// dashed: one line per metric, with `band` shaded either side of a single metric.
    Panels {
        title: String,
        x: String,
        panels: String,
        baseline: Option<toml::Value>,
        metrics: Vec<String>,
        /// A metric shaded above and below the line (one standard deviation).
        band: Option<String>,
        #[serde(default = "unit_scale")]
        scale: f64,
        x_label: Option<String>,
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
    /// A host's processing jitter (simulator only): each packet it sends leaves after a
    /// delay drawn uniformly from `[0, jitter)`, never before one it sent earlier on the
    /// same interface. Zero (the default): at once.
    #[serde(default)]
    pub jitter: Duration,
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
    /// One-way propagation delay: a duration, or `{ mean, spread }` for one drawn once per
    /// scenario (from its `seed`), uniformly in `[mean - spread, mean + spread]`.
    pub delay: DelaySpec,
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
#[serde(from = "TrafficFields", tag = "kind", rename_all = "lowercase")]
pub enum TrafficSpec {
    /// Always has data to send.
    Bulk,
    /// One transfer of `size`; measures flow completion time.
    File { size: Size },
    /// Backlogged bursts of exponential length `burst`, separated by exponential `idle` times.
    /// Each burst opens a new connection (as a new transfer would).
    Onoff { burst: Duration, idle: Duration },
}

/// A `traffic` table as read: serde lets a unit variant of a tagged enum take any fields,
/// so bulk is read as `Bulk {}`, which refuses them (`{ kind = "bulk", size = "1MB" }`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
enum TrafficFields {
    Bulk {},
    File { size: Size },
    Onoff { burst: Duration, idle: Duration },
}

impl From<TrafficFields> for TrafficSpec {
    fn from(t: TrafficFields) -> Self {
        match t {
            TrafficFields::Bulk {} => TrafficSpec::Bulk,
            TrafficFields::File { size } => TrafficSpec::File { size },
            TrafficFields::Onoff { burst, idle } => TrafficSpec::Onoff { burst, idle },
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// The group name; flows of a group are measured together.
    pub name: String,
    /// How many identical flows this group holds: a number, or `{ mean, spread }` for a
    /// number drawn per run, uniformly in `[mean - spread, mean + spread]`.
    #[serde(default)]
    pub count: CountSpec,
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
    /// Numbered candidate paths, each the routers to pass in order (`[["up1"], ["up2"]]`):
    /// the paths a path selector chooses among, in place of one path per source interface.
    #[serde(default)]
    pub paths: Vec<Vec<String>>,
    /// TCP: which candidate path each new connection takes (MATCP's selectors); without
    /// it, the first.
    pub select: Option<SelectSpec>,
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
    /// MPTCP: which subflow gets the next segment (default `linux-default`).
    pub scheduler: Option<SchedulerKind>,
    /// MPTCP: data-level timer expiries without news from a busy subflow before it is
    /// marked stale (Linux's `net.mptcp.stale_loss_cnt`, default 4; 0 never marks).
    pub stale_loss_cnt: Option<u8>,
    /// Each flow's start is delayed by a uniform random amount in `[0, start_jitter)`, so
    /// seeds differ even where nothing else is random.
    #[serde(default)]
    pub start_jitter: Duration,
    /// After this long without progress the application gives up the connection and opens
    /// a new one (TCP: over its next interface, as a client does after a handover).
    pub reconnect_after: Option<Duration>,
}

/// A flow group's size: fixed, or drawn per run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum CountSpec {
    Fixed(u32),
    /// Uniform in `[mean - spread, mean + spread]`, drawn per run (the MATCP experiments'
    /// customers per edge router: mean 80, spread 40).
    Uniform {
        mean: u32,
        spread: u32,
    },
}

impl Default for CountSpec {
    fn default() -> Self {
        CountSpec::Fixed(1)
    }
}

impl<'de> Deserialize<'de> for CountSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = CountSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a number of flows, or `{ mean = 80, spread = 40 }` for a number drawn per run",
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CountSpec, E> {
                u32::try_from(v).map(CountSpec::Fixed).map_err(|_| {
                    E::custom(format!(
                        "count {v} is out of range: expected 1 to {}",
                        u32::MAX
                    ))
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CountSpec, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<CountSpec, A::Error> {
                let (mut mean, mut spread) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "mean" => mean = Some(map.next_value::<FlowNumber>()?.0),
                        "spread" => spread = Some(map.next_value::<FlowNumber>()?.0),
                        other => {
                            return Err(de::Error::unknown_field(other, &["mean", "spread"]));
                        }
                    }
                }
                match (mean, spread) {
                    (Some(mean), Some(spread)) => Ok(CountSpec::Uniform { mean, spread }),
                    (None, _) => Err(de::Error::missing_field("mean")),
                    (_, None) => Err(de::Error::missing_field("spread")),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A link's propagation delay: fixed, or drawn (the MATCP experiments' uplinks of
/// different delays with the same mean).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum DelaySpec {
    Fixed(Duration),
    Uniform { mean: Duration, spread: Duration },
}

impl DelaySpec {
    /// The delay routes are chosen with: the mean of a drawn one.
    pub fn mean(self) -> Duration {
        match self {
            DelaySpec::Fixed(d) | DelaySpec::Uniform { mean: d, .. } => d,
        }
    }
    pub fn spread(self) -> Duration {
        match self {
            DelaySpec::Fixed(_) => Duration(0),
            DelaySpec::Uniform { spread, .. } => spread,
        }
    }
}

impl<'de> Deserialize<'de> for DelaySpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = DelaySpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a duration such as `65ms`, or `{ mean = \"30ms\", spread = \"20ms\" }` for a delay drawn per scenario",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DelaySpec, E> {
                Duration::parse(v).map(DelaySpec::Fixed).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DelaySpec, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit: expected a duration such as `65ms`"
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DelaySpec, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DelaySpec, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit: expected a duration such as `65ms`"
                )))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<DelaySpec, A::Error> {
                let (mut mean, mut spread) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "mean" => mean = Some(map.next_value::<Duration>()?),
                        "spread" => spread = Some(map.next_value::<Duration>()?),
                        other => {
                            return Err(de::Error::unknown_field(other, &["mean", "spread"]));
                        }
                    }
                }
                match (mean, spread) {
                    (Some(mean), Some(spread)) => Ok(DelaySpec::Uniform { mean, spread }),
                    (None, _) => Err(de::Error::missing_field("mean")),
                    (_, None) => Err(de::Error::missing_field("spread")),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A number of flows inside `{ mean, spread }`: read wide, so that a negative or huge
/// number gets the range in its message (at its own location), not a type name.
struct FlowNumber(u32);

impl<'de> Deserialize<'de> for FlowNumber {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        u32::try_from(v).map(FlowNumber).map_err(|_| {
            de::Error::custom(format!("{v} is out of range: expected 0 to {}", u32::MAX))
        })
    }
}

/// MATCP's path selectors (Dimopoulos, Zeephongsekul and Tari, ISCC 2006).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SelectorKind {
    /// Always the first path (each edge bound to one uplink).
    SinglePath,
    /// Least queueing delay (or RTTVAR), refreshed after R choices of one path in a row.
    RttVariation,
    /// Smallest share of segments retransmitted, refreshed likewise.
    Drops,
    /// Smallest RTT, refreshed likewise.
    Rtt,
    /// Random, weighted by the paper's equation 2; no refresh.
    WeightedRtt,
}

impl SelectorKind {
    /// Whether the selector takes the refresh constant R.
    pub fn refreshes(self) -> bool {
        matches!(
            self,
            SelectorKind::RttVariation | SelectorKind::Drops | SelectorKind::Rtt
        )
    }
}

/// What RTT variation means (see docs/algorithms.md).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum VariationReading {
    /// SRTT minus the path's smallest RTT.
    #[default]
    Queueing,
    /// RFC 6298 RTTVAR.
    Rttvar,
}

/// `select = { kind = "rtt-variation", refresh = 10 }`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SelectSpec {
    pub kind: SelectorKind,
    /// R: after one path was chosen this many times in a row, every measure is reset.
    pub refresh: Option<u32>,
    pub variation: Option<VariationReading>,
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
    /// Upstream Linux's default (`mptcp_subflow_get_send()`): the subflow whose queued data
    /// drains soonest at its pacing rate, given bursts of up to 64 KB ahead of its window
    /// (docs/linux-fidelity.md).
    LinuxDefault,
    /// Lowest smoothed RTT among subflows with window space: the default scheduler of the
    /// out-of-tree multipath-tcp.org kernel.
    LowestRtt,
    /// The next subflow with window space, in turn.
    RoundRobin,
}

/// `net.mptcp.stale_loss_cnt`'s default (net/mptcp/ctrl.c).
pub const DEFAULT_STALE_LOSS_CNT: u8 = 4;

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
    /// Also trace each subflow's receiving side (simulator only): `rcv_ssthresh_kb` and
    /// `window_clamp_kb`, Linux's receive-window slow start and its ceiling.
    #[serde(default)]
    pub trace_receiver: bool,
    /// Also trace each subflow's coupling state (simulator only): `cc_alpha`, the
    /// algorithm's alpha (LIA, OLIA, Balia), and `cc_inter_loss_pkts`, OLIA's inter-loss
    /// distance. On the kernel, `mptcp-lab cc show` reads the same from the programs.
    #[serde(default)]
    pub trace_cc: bool,
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
            trace_receiver: false,
            trace_cc: false,
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
