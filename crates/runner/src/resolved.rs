//! A scenario as the loader resolved it, for programs: every variant with its parameters
//! substituted and `--set` applied, times in seconds, rates in bit/s, a drawn delay as runs
//! use it; or, for a file that does not validate, its errors with their places. Format 1,
//! documented in `docs/scenario-format.md` ("Checking a scenario from a program"); what
//! `mptcp-lab check --json` prints and `mptcp_lab.check` returns.

use anyhow::Result;
use scenario::error::ScenarioErrors;
use scenario::metrics::{Entity, LinkSide};
use scenario::model::{DirConfig, DirId, FlowGroup, Link, LinkId, Route};
use scenario::spec::{Protocol, QueueSpec, TrafficSpec};
use scenario::units::{BufferSize, Size};
use scenario::{Scenario, load_file};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The document's version: a change that renames or removes a field increments it.
pub const FORMAT: u32 = 1;

/// A file's variants (its `--set` values applied) and the memory the largest needs in one
/// run; refused, with the scenario's errors, when it does not validate or would not fit.
pub fn load(path: &Path, set: &[String]) -> Result<(Vec<Scenario>, u64)> {
    let variants = load_file(path, &crate::prepared::load_options(set)?)?;
    let memory = crate::memory::check_fits(path, &variants, 1)?;
    Ok((variants, memory))
}

/// What `check --json` prints: every file checked.
#[derive(Serialize)]
pub struct CheckDocument {
    pub format: u32,
    pub files: Vec<CheckedFile>,
}

impl CheckDocument {
    pub fn new(files: Vec<CheckedFile>) -> Self {
        CheckDocument {
            format: FORMAT,
            files,
        }
    }

    /// Every file validated.
    pub fn ok(&self) -> bool {
        self.files.iter().all(|f| f.ok)
    }
}

/// One file: its variants when valid, its errors when not.
#[derive(Serialize)]
pub struct CheckedFile {
    pub file: PathBuf,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory_bytes_per_run: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    variants: Vec<VariantView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    errors: Vec<ErrorView>,
}

impl CheckedFile {
    /// As JSON text, on one line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("the views hold only strings, numbers and lists")
    }
}

/// Loads and checks one file; never fails, a problem being part of the answer.
pub fn checked_file(path: &Path, set: &[String]) -> CheckedFile {
    match resolved_file(path, set) {
        Ok(valid) => valid,
        Err(e) => CheckedFile {
            file: path.to_path_buf(),
            ok: false,
            memory_bytes_per_run: None,
            variants: Vec::new(),
            errors: ErrorView::all(path, &e),
        },
    }
}

/// One valid file, resolved; the loader's error (a `ScenarioErrors` when the scenario does
/// not validate) otherwise, for callers that raise it, such as the Python package.
pub fn resolved_file(path: &Path, set: &[String]) -> Result<CheckedFile> {
    let (variants, memory) = load(path, set)?;
    Ok(CheckedFile {
        file: path.to_path_buf(),
        ok: true,
        memory_bytes_per_run: Some(memory),
        variants: variants.iter().map(VariantView::of).collect(),
        errors: Vec::new(),
    })
}

/// A problem, placed as the loader places it (line and column 1-based; 0 when the problem
/// is not tied to a place in the file, such as a file that cannot be read).
#[derive(Serialize)]
struct ErrorView {
    file: PathBuf,
    line: usize,
    column: usize,
    field: String,
    message: String,
}

impl ErrorView {
    fn all(path: &Path, e: &anyhow::Error) -> Vec<ErrorView> {
        match e.downcast_ref::<ScenarioErrors>() {
            Some(errors) => errors
                .0
                .iter()
                .map(|e| ErrorView {
                    file: e.file.clone(),
                    line: e.line,
                    column: e.column,
                    field: e.field.clone(),
                    message: e.message.clone(),
                })
                .collect(),
            None => vec![ErrorView {
                file: path.to_path_buf(),
                line: 0,
                column: 0,
                field: String::new(),
                message: format!("{e:#}"),
            }],
        }
    }
}

/// One variant as the loader resolved it: times in seconds, rates in bits a second.
#[derive(Serialize)]
struct VariantView {
    name: String,
    params: Value,
    duration_s: f64,
    seed: u64,
    nodes: Vec<NodeView>,
    links: Vec<LinkView>,
    flows: Vec<FlowView>,
}

impl VariantView {
    fn of(sc: &Scenario) -> VariantView {
        // Delays with a spread are drawn once per scenario, from its seed.
        let drawn = net::draws::for_run(sc, sc.seed);
        VariantView {
            name: sc.variant_name().to_string(),
            params: serde_json::to_value(&sc.params)
                .expect("parameters are TOML values, which JSON holds"),
            duration_s: sc.duration.secs(),
            seed: sc.seed,
            nodes: sc
                .nodes
                .iter()
                .map(|n| NodeView {
                    name: n.name.clone(),
                    kind: n.kind,
                    jitter_s: n.jitter.secs(),
                })
                .collect(),
            links: (0..sc.links.len())
                .map(|i| LinkView::of(sc, &drawn.links[i], i))
                .collect(),
            flows: sc.flows.iter().map(|f| FlowView::of(sc, f)).collect(),
        }
    }
}

#[derive(Serialize)]
struct NodeView {
    name: String,
    kind: scenario::spec::NodeKind,
    jitter_s: f64,
}

/// A link and its two directions, `ab` from `a` to `b` and `ba` back.
#[derive(Serialize)]
struct LinkView {
    name: String,
    a: String,
    b: String,
    /// A delay given as `{ mean, spread }`: both, the directions' `delay_s` being the one
    /// drawn from the scenario's seed, which every run uses. Absent for a fixed delay.
    #[serde(skip_serializing_if = "Option::is_none")]
    delay_mean_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delay_spread_s: Option<f64>,
    ab: DirectionView,
    ba: DirectionView,
}

impl LinkView {
    /// Link `index` of `sc`, with `drawn` its delays as runs use them.
    fn of(sc: &Scenario, drawn: &Link, index: usize) -> LinkView {
        let given = &sc.links[index];
        let node = |id| sc.node_name(id).to_string();
        let dir = |b_to_a: bool| {
            let id = LinkId(index).dir(b_to_a);
            DirectionView::of(sc, id, drawn.dir(id))
        };
        let spread = given.delay_spread.nanos() > 0;
        LinkView {
            name: given.name.clone(),
            a: node(given.a),
            b: node(given.b),
            delay_mean_s: spread.then(|| given.dirs[0].delay.secs()),
            delay_spread_s: spread.then(|| given.delay_spread.secs()),
            ab: dir(false),
            ba: dir(true),
        }
    }
}

#[derive(Serialize)]
struct DirectionView {
    /// The name its metrics and series carry in results (`link.NAME.ab`).
    entity: String,
    rate_bps: u64,
    delay_s: f64,
    loss: f64,
    queue: QueueView,
}

impl DirectionView {
    fn of(sc: &Scenario, id: DirId, d: &DirConfig) -> DirectionView {
        DirectionView {
            entity: direction_entity(sc, id),
            rate_bps: d.rate.bps(),
            delay_s: d.delay.secs(),
            loss: d.loss.0,
            queue: QueueView::of(&d.queue),
        }
    }
}

/// The name results give direction `id`'s metrics and series (`link.NAME.ab`).
fn direction_entity(sc: &Scenario, id: DirId) -> String {
    Entity::Link(sc.links[id.link()].name.clone(), LinkSide::of_dir(id)).to_string()
}

/// A queue's limit in the unit the scenario gave (the other is absent); RED's thresholds
/// are in that unit too.
#[derive(Serialize)]
struct QueueView {
    kind: QueueKind,
    #[serde(flatten)]
    limit: AmountView,
    #[serde(skip_serializing_if = "Option::is_none")]
    red: Option<RedView>,
}

#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
enum QueueKind {
    Droptail,
    Red,
}

#[derive(Serialize)]
struct RedView {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    weight: f64,
    gentle: bool,
}

impl QueueView {
    fn of(q: &QueueSpec) -> QueueView {
        match *q {
            QueueSpec::Droptail { size } => QueueView {
                kind: QueueKind::Droptail,
                limit: AmountView::of(size),
                red: None,
            },
            QueueSpec::Red {
                size,
                min_th,
                max_th,
                max_p,
                weight,
                gentle,
            } => QueueView {
                kind: QueueKind::Red,
                limit: AmountView::of(size),
                red: Some(RedView {
                    min_th,
                    max_th,
                    max_p,
                    weight,
                    gentle,
                }),
            },
        }
    }
}

/// A size as given: `{"packets": N}` or `{"bytes": N}`.
#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
enum AmountView {
    Packets(u64),
    Bytes(u64),
}

impl AmountView {
    fn of(size: Size) -> AmountView {
        match size {
            Size::Packets(p) => AmountView::Packets(p),
            Size::Bytes(b) => AmountView::Bytes(b),
        }
    }
}

/// A flow group: how many, what they run, between which hosts, over which paths (each as
/// the link directions and the nodes it crosses, `PathView`), and when.
#[derive(Serialize)]
struct FlowView {
    name: String,
    protocol: Protocol,
    count: u32,
    count_spread: u32,
    cc: &'static str,
    from: String,
    to: String,
    paths: Vec<PathView>,
    start_s: f64,
    stagger_s: f64,
    /// Each flow's start delayed by a time drawn in `[0, start_jitter_s)`.
    start_jitter_s: f64,
    stop_s: f64,
    /// A TCP connection that stalls this long reconnects (on its next path).
    #[serde(skip_serializing_if = "Option::is_none")]
    reconnect_after_s: Option<f64>,
    traffic: TrafficView,
    /// The receive buffer, when the file sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    rcv_buffer: Option<RcvBufferView>,
    sack: bool,
    delayed_ack: bool,
    /// The sender's window cap, when the file sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    window_limit: Option<AmountView>,
    /// MPTCP groups: how their subflows are opened and scheduled.
    #[serde(skip_serializing_if = "Option::is_none")]
    mptcp: Option<MptcpView>,
    /// TCP groups with a MATCP selector: as the file gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    select: Option<scenario::spec::SelectSpec>,
}

#[derive(Serialize)]
struct MptcpView {
    path_manager: scenario::spec::PathManager,
    /// The file's `subflows`, when it gives one (the path manager's default otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    subflows: Option<u32>,
    scheduler: scenario::spec::SchedulerKind,
    stale_loss_cnt: u8,
}

impl FlowView {
    fn of(sc: &Scenario, f: &FlowGroup) -> FlowView {
        let node = |id| sc.node_name(id).to_string();
        FlowView {
            name: f.name.clone(),
            protocol: f.protocol,
            count: f.count,
            count_spread: f.count_spread,
            cc: f.cc.name(),
            from: node(f.src),
            to: node(f.dst),
            paths: f.paths.iter().map(|r| PathView::of(sc, f, r)).collect(),
            start_s: f.start.secs(),
            stagger_s: f.stagger.secs(),
            start_jitter_s: f.start_jitter.secs(),
            stop_s: f.stop.secs(),
            reconnect_after_s: f.reconnect_after.map(|d| d.secs()),
            traffic: TrafficView::of(&f.traffic),
            rcv_buffer: f.rcv_buffer.map(RcvBufferView::of),
            sack: f.sack,
            delayed_ack: f.delayed_ack,
            window_limit: f.window_limit.map(AmountView::of),
            mptcp: (f.protocol == Protocol::Mptcp).then_some(MptcpView {
                path_manager: f.path_manager,
                subflows: f.subflows,
                scheduler: f.scheduler,
                stale_loss_cnt: f.stale_loss_cnt,
            }),
            select: f.select,
        }
    }
}

/// A route: the link directions it crosses (as results name them; two parallel links
/// between the same nodes are told apart here) and the nodes, its source first.
#[derive(Serialize)]
struct PathView {
    links: Vec<String>,
    nodes: Vec<String>,
}

impl PathView {
    fn of(sc: &Scenario, f: &FlowGroup, route: &Route) -> PathView {
        let nodes = std::iter::once(f.src)
            .chain(route.hops.iter().map(|&d| sc.links[d.link()].to_node(d)))
            .map(|n| sc.node_name(n).to_string())
            .collect();
        PathView {
            links: route
                .hops
                .iter()
                .map(|&d| direction_entity(sc, d))
                .collect(),
            nodes,
        }
    }
}

/// A receive buffer as the file gives it: a size, a multiple of the buffer rule (resolved
/// per run from the subflows' routes), or Linux's autotuning.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum RcvBufferView {
    Fixed {
        #[serde(flatten)]
        size: AmountView,
    },
    Rule {
        multiple: f64,
    },
    Auto,
}

impl RcvBufferView {
    fn of(b: BufferSize) -> RcvBufferView {
        match b {
            BufferSize::Fixed(size) => RcvBufferView::Fixed {
                size: AmountView::of(size),
            },
            BufferSize::Rule(multiple) => RcvBufferView::Rule { multiple },
            BufferSize::Autotuned => RcvBufferView::Auto,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum TrafficView {
    Bulk,
    File { size: AmountView },
    Onoff { burst_s: f64, idle_s: f64 },
}

impl TrafficView {
    fn of(t: &TrafficSpec) -> TrafficView {
        match *t {
            TrafficSpec::Bulk => TrafficView::Bulk,
            TrafficSpec::File { size } => TrafficView::File {
                size: AmountView::of(size),
            },
            TrafficSpec::Onoff { burst, idle } => TrafficView::Onoff {
                burst_s: burst.secs(),
                idle_s: idle.secs(),
            },
        }
    }
}
