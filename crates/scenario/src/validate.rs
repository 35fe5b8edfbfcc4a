//! Cross-reference checks and name resolution: from the file's shape to a runnable model.
//! Every problem is collected (with its field path) so one run of `check` shows them all.

use crate::error::did_you_mean;
use crate::model::*;
use crate::spans::Seg;
use crate::spec::*;
use crate::topology::Graph;
use crate::units::{BufferSize, Duration, Size};
use std::collections::{BTreeMap, HashMap};

/// A problem with its field path; `load` turns the path into a line and column.
pub struct Problem {
    pub path: Vec<Seg>,
    pub message: String,
}

#[derive(Default)]
struct Problems(Vec<Problem>);

impl Problems {
    fn push(&mut self, path: Vec<Seg>, message: impl Into<String>) {
        self.0.push(Problem {
            path,
            message: message.into(),
        });
    }
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}
fn at(table: &str, i: usize, field: &str) -> Vec<Seg> {
    vec![key(table), Seg::Index(i), key(field)]
}

fn unknown(what: &str, name: &str, known: &[&str]) -> String {
    let mut m = format!("unknown {what} `{name}`");
    match did_you_mean(name, known.iter().copied()) {
        Some(s) => m.push_str(&format!("; did you mean `{s}`?")),
        None if known.is_empty() => m.push_str(&format!(" (the scenario defines no {what})")),
        None => m.push_str(&format!("; expected one of: {}", known.join(", "))),
    }
    m
}

pub struct Context<'a> {
    pub variant: String,
    pub params: BTreeMap<String, toml::Value>,
    pub known_cc: &'a [&'a str],
    pub file: std::path::PathBuf,
}

pub fn validate(spec: ScenarioSpec, cx: Context<'_>) -> Result<Scenario, Vec<Problem>> {
    let mut p = Problems::default();
    if spec.scenario.duration == Duration::ZERO {
        p.push(
            vec![key("scenario"), key("duration")],
            "the duration must be greater than zero",
        );
    }
    let duration = spec.scenario.duration;

    // Nodes.
    let mut nodes: Vec<Node> = Vec::new();
    let mut node_ix: HashMap<String, NodeId> = HashMap::new();
    if spec.nodes.is_empty() {
        p.push(
            vec![key("node")],
            "the scenario has no nodes: add [[node]] tables with a name and a kind",
        );
    }
    for (i, n) in spec.nodes.iter().enumerate() {
        if n.name.is_empty() || n.name.contains([':', ' ', ',', '/']) {
            p.push(
                at("node", i, "name"),
                format!(
                    "`{}` is not a valid node name: expected letters, digits, `-`, `_` or `.`",
                    n.name
                ),
            );
        }
        if node_ix.insert(n.name.clone(), nodes.len()).is_some() {
            p.push(
                at("node", i, "name"),
                format!("duplicate node name `{}`", n.name),
            );
            continue;
        }
        nodes.push(Node {
            name: n.name.clone(),
            kind: n.kind,
            interfaces: Vec::new(),
        });
    }
    let node_names: Vec<&str> = spec.nodes.iter().map(|n| n.name.as_str()).collect();

    // Links.
    let mut links: Vec<Link> = Vec::new();
    let mut link_ix: HashMap<String, LinkId> = HashMap::new();
    for (i, l) in spec.links.iter().enumerate() {
        let mut ends: [(usize, String); 2] = Default::default();
        let mut ok = true;
        for (side, (field, text)) in [("a", &l.a), ("b", &l.b)].into_iter().enumerate() {
            let (node, iface) = match text.split_once(':') {
                Some((n, f)) => (n, Some(f)),
                None => (text.as_str(), None),
            };
            match node_ix.get(node) {
                Some(&id) => ends[side] = (id, iface.unwrap_or("").to_string()),
                None => {
                    p.push(at("link", i, field), unknown("node", node, &node_names));
                    ok = false;
                }
            }
        }
        let name = l.name.clone().unwrap_or_else(|| {
            format!(
                "{}-{}",
                l.a.split(':').next().unwrap_or(""),
                l.b.split(':').next().unwrap_or("")
            )
        });
        if link_ix.contains_key(&name) {
            let field = if l.name.is_some() { "name" } else { "b" };
            p.push(at("link", i, field), format!("duplicate link name `{name}`: give one of the links between these nodes a `name`"));
            ok = false;
        }
        if ok && ends[0].0 == ends[1].0 {
            p.push(at("link", i, "b"), "a link must join two different nodes");
            ok = false;
        }
        let base = DirConfig {
            rate: l.rate,
            delay: l.delay,
            queue: l.queue.clone(),
            loss: l.loss,
        };
        let dirs = [merge(&base, &l.ab), merge(&base, &l.ba)];
        for (d, (dir_key, cfg)) in [("ab", &dirs[0]), ("ba", &dirs[1])].into_iter().enumerate() {
            let overridden = if d == 0 {
                l.ab.queue.is_some()
            } else {
                l.ba.queue.is_some()
            };
            let mut qpath = at("link", i, "queue");
            if overridden {
                qpath = vec![key("link"), Seg::Index(i), key(dir_key), key("queue")];
            }
            if d == 0 || overridden {
                check_queue(&cfg.queue, qpath, &mut p);
            }
        }
        if !ok {
            continue;
        }
        let id = links.len();
        link_ix.insert(name.clone(), id);
        for (side, (node, iface)) in ends.iter().enumerate() {
            let iface = if iface.is_empty() {
                name.clone()
            } else {
                iface.clone()
            };
            let field = if side == 0 { "a" } else { "b" };
            if nodes[*node].interfaces.iter().any(|f| f.name == iface) {
                p.push(
                    at("link", i, field),
                    format!(
                        "interface `{}:{iface}` is already attached to another link",
                        nodes[*node].name
                    ),
                );
            }
            nodes[*node].interfaces.push(Interface {
                name: iface,
                out_dir: dir_id(id, side == 1),
            });
        }
        links.push(Link {
            name,
            a: ends[0].0,
            b: ends[1].0,
            dirs,
        });
    }
    let link_names: Vec<String> = links.iter().map(|l| l.name.clone()).collect();
    let link_names: Vec<&str> = link_names.iter().map(String::as_str).collect();

    // Flows.
    let graph = Graph::new(&nodes, &links);
    let mut flows = Vec::new();
    let mut flow_names: HashMap<&str, ()> = HashMap::new();
    for (i, f) in spec.flows.iter().enumerate() {
        if f.name.is_empty() || f.name.contains(['.', ' ', ',', '/', '#']) {
            p.push(at("flow", i, "name"), format!("`{}` is not a valid flow name: it is used in metric names, so no `.`, `#`, `/`, `,` or spaces", f.name));
        }
        if flow_names.insert(&f.name, ()).is_some() {
            p.push(at("flow", i, "name"), format!("duplicate flow name `{}`: each [[flow]] is a group, use `count` for several identical flows", f.name));
        }
        if f.count == 0 {
            p.push(at("flow", i, "count"), "count must be at least 1");
        }
        if !cx.known_cc.contains(&f.cc.as_str()) {
            p.push(
                at("flow", i, "cc"),
                unknown("congestion control", &f.cc, cx.known_cc),
            );
        }
        let stop = f.stop.unwrap_or(duration);
        if f.start.0 + f.stagger.0 >= stop.0 {
            p.push(
                at("flow", i, if f.stop.is_some() { "stop" } else { "start" }),
                format!(
                    "the flow would never run: it starts at {} (+{} stagger) and stops at {stop}",
                    f.start, f.stagger
                ),
            );
        }
        if stop > duration {
            p.push(
                at("flow", i, "stop"),
                format!("stop {stop} is after the end of the scenario ({duration})"),
            );
        }
        match &f.traffic {
            TrafficSpec::File { size } if size.is_zero() => p.push(
                vec![key("flow"), Seg::Index(i), key("traffic"), key("size")],
                "a file size must be greater than zero",
            ),
            TrafficSpec::Onoff { burst, idle } if burst.0 == 0 || idle.0 == 0 => p.push(
                vec![key("flow"), Seg::Index(i), key("traffic")],
                "burst and idle times must be greater than zero",
            ),
            _ => {}
        }
        for (field, v) in [
            ("window_limit", f.window_limit),
            (
                "rcv_buffer",
                f.rcv_buffer.and_then(|b| match b {
                    BufferSize::Fixed(s) => Some(s),
                    BufferSize::Rule(_) => None,
                }),
            ),
        ] {
            if v.is_some_and(Size::is_zero) {
                p.push(
                    at("flow", i, field),
                    format!("{field} must be greater than zero"),
                );
            }
        }
        let endpoint =
            |field: &str, text: &str, p: &mut Problems| -> Option<(NodeId, Option<DirId>)> {
                let (node, iface) = match text.split_once(':') {
                    Some((n, f)) => (n, Some(f)),
                    None => (text, None),
                };
                let Some(&id) = node_ix.get(node) else {
                    p.push(at("flow", i, field), unknown("node", node, &node_names));
                    return None;
                };
                if nodes[id].kind != NodeKind::Host {
                    p.push(
                        at("flow", i, field),
                        format!("`{node}` is a router: flows run between hosts"),
                    );
                    return None;
                }
                match iface {
                    None => Some((id, None)),
                    Some(name) => match nodes[id].interfaces.iter().find(|x| x.name == name) {
                        Some(x) => Some((id, Some(x.out_dir))),
                        None => {
                            let known: Vec<&str> = nodes[id]
                                .interfaces
                                .iter()
                                .map(|x| x.name.as_str())
                                .collect();
                            p.push(
                                at("flow", i, field),
                                unknown(&format!("interface of `{node}`"), name, &known),
                            );
                            None
                        }
                    },
                }
            };
        let src = endpoint("from", &f.from, &mut p);
        let dst = endpoint("to", &f.to, &mut p);
        let mut via = Vec::new();
        for (k, v) in f.via.iter().enumerate() {
            match node_ix.get(v.as_str()) {
                Some(&id) if nodes[id].kind == NodeKind::Router => via.push(id),
                Some(_) => p.push(
                    vec![key("flow"), Seg::Index(i), key("via"), Seg::Index(k)],
                    format!("`{v}` is a host: only routers forward"),
                ),
                None => p.push(
                    vec![key("flow"), Seg::Index(i), key("via"), Seg::Index(k)],
                    unknown("node", v, &node_names),
                ),
            }
        }
        let (Some((src, pinned)), Some((dst, dst_pin))) = (src, dst) else {
            continue;
        };
        if src == dst {
            p.push(
                at("flow", i, "to"),
                "a flow's source and destination must differ",
            );
            continue;
        }
        let firsts: Vec<Option<DirId>> = match pinned {
            Some(d) => vec![Some(d)],
            None => nodes[src]
                .interfaces
                .iter()
                .map(|x| Some(x.out_dir))
                .collect(),
        };
        // A pinned destination interface: route to the node on its other side, then across.
        let route_to = |first: Option<DirId>| -> Option<Route> {
            let Some(out) = dst_pin else {
                return graph.route(src, &via, dst, first);
            };
            let last = dir_reverse(out);
            let before = links[dir_link(last)].from_node(last);
            if before == src {
                return first
                    .is_none_or(|f| f == last)
                    .then(|| Route { hops: vec![last] });
            }
            if nodes[before].kind != NodeKind::Router {
                return None;
            }
            let mut r = graph.route(src, &via, before, first)?;
            r.hops.push(last);
            Some(r)
        };
        let mut paths: Vec<Route> = firsts.into_iter().filter_map(route_to).collect();
        paths.sort_by_key(|r| {
            (
                r.hops.len(),
                r.hops
                    .iter()
                    .map(|&d| links[dir_link(d)].dirs[d % 2].delay.0)
                    .sum::<u64>(),
            )
        });
        if paths.is_empty() {
            let how = if via.is_empty() {
                String::new()
            } else {
                format!(" through {}", f.via.join(", "))
            };
            p.push(at("flow", i, "to"), format!("`{}` cannot be reached from `{}`{how}: no path of links and routers joins them", f.to, f.from));
            continue;
        }
        let subflow_paths = match subflow_paths(f, &paths, i, &mut p) {
            Some(s) => s,
            None => continue,
        };
        let rcv_buffer = f.rcv_buffer.map(|b| match b {
            BufferSize::Fixed(s) => s,
            BufferSize::Rule(k) => Size::Bytes(
                (k * buffer_rule_bytes(&subflow_paths, &links))
                    .round()
                    .max(1.0) as u64,
            ),
        });
        flows.push(FlowGroup {
            name: f.name.clone(),
            count: f.count,
            protocol: f.protocol,
            cc: f.cc.clone(),
            src,
            dst,
            paths,
            start: f.start,
            stagger: f.stagger,
            stop,
            traffic: f.traffic.clone(),
            window_limit: f.window_limit,
            rcv_buffer,
            delayed_ack: f.delayed_ack,
            sack: f.sack,
            subflow_paths,
            scheduler: f.scheduler.unwrap_or(SchedulerKind::LowestRtt),
            start_jitter: f.start_jitter,
            reconnect_after: f.reconnect_after,
        });
    }
    if spec.flows.is_empty() {
        p.push(
            vec![key("flow")],
            "the scenario has no flows: add [[flow]] tables",
        );
    }

    // Events.
    let mut events = Vec::new();
    for (i, e) in spec.events.iter().enumerate() {
        let Some(&link) = link_ix.get(&e.link) else {
            p.push(
                at("event", i, "link"),
                unknown("link", &e.link, &link_names),
            );
            continue;
        };
        if e.at > duration {
            p.push(
                at("event", i, "at"),
                format!("{} is after the end of the scenario ({duration})", e.at),
            );
        }
        let has_values = e.rate.is_some() || e.delay.is_some() || e.loss.is_some();
        let kind = match e.action {
            EventAction::Down | EventAction::Up if has_values => {
                p.push(
                    at("event", i, "action"),
                    "`down` and `up` take no rate, delay or loss: use action = \"set\"",
                );
                continue;
            }
            EventAction::Down => EventKind::Down,
            EventAction::Up => EventKind::Up,
            EventAction::Set if !has_values => {
                p.push(
                    at("event", i, "action"),
                    "`set` needs at least one of rate, delay, loss",
                );
                continue;
            }
            EventAction::Set => EventKind::Set {
                rate: e.rate,
                delay: e.delay,
                loss: e.loss,
            },
        };
        events.push(Event {
            at: e.at,
            link,
            kind,
        });
    }
    events.sort_by_key(|e| e.at);

    // Measurement and expectations.
    if spec.measure.interval == Duration::ZERO {
        p.push(
            vec![key("measure"), key("interval")],
            "the interval must be greater than zero",
        );
    }
    if spec.measure.warmup >= duration && duration != Duration::ZERO {
        p.push(
            vec![key("measure"), key("warmup")],
            format!(
                "warm-up {} leaves nothing to measure in a {duration} run",
                spec.measure.warmup
            ),
        );
    }
    for (field, v) in [
        ("trace_interval", spec.measure.trace_interval),
        ("convergence_after", spec.measure.convergence_after),
    ] {
        match v {
            Some(Duration::ZERO) if field == "trace_interval" => p.push(
                vec![key("measure"), key(field)],
                "the trace interval must be greater than zero",
            ),
            Some(t) if t >= duration && duration != Duration::ZERO => p.push(
                vec![key("measure"), key(field)],
                format!("{t} is not inside the {duration} run"),
            ),
            _ => {}
        }
    }
    check_plots(&spec.plots, &cx.params, &mut p);
    for (i, o) in spec.orders.iter().enumerate() {
        if !cx.params.contains_key(&o.param) {
            let known: Vec<&str> = cx.params.keys().map(String::as_str).collect();
            p.push(
                at("order", i, "param"),
                unknown("parameter", &o.param, &known),
            );
        }
        if o.ascending.len() < 2 {
            p.push(
                at("order", i, "ascending"),
                "an ordering needs at least two values",
            );
        }
        if o.min_ratio.is_nan() || o.min_ratio <= 0.0 {
            p.push(
                at("order", i, "min_ratio"),
                format!("expected a positive factor, got {}", o.min_ratio),
            );
        }
    }
    for (i, x) in spec.expects.iter().enumerate() {
        match (x.value, x.tolerance, x.min, x.max) {
            (None, None, None, None) => p.push(
                vec![key("expect"), Seg::Index(i)],
                "an expectation needs `value` (with `tolerance`) or a bound `min`/`max`",
            ),
            (Some(_), None, _, _) => p.push(
                at("expect", i, "tolerance"),
                "a published `value` needs a `tolerance`, e.g. \"10%\"",
            ),
            (None, Some(_), _, _) => p.push(
                at("expect", i, "value"),
                "`tolerance` is given but there is no `value` to compare with",
            ),
            _ => {}
        }
        for k in x.when.keys() {
            if !cx.params.contains_key(k) {
                let known: Vec<&str> = cx.params.keys().map(String::as_str).collect();
                p.push(
                    vec![key("expect"), Seg::Index(i), key("when"), key(k)],
                    unknown("parameter", k, &known),
                );
            }
        }
    }

    if !p.0.is_empty() {
        return Err(p.0);
    }
    Ok(Scenario {
        file: cx.file,
        name: spec.scenario.name,
        description: spec.scenario.description,
        source: spec.scenario.source,
        variant: cx.variant,
        params: cx.params,
        duration,
        seed: spec.scenario.seed,
        nodes,
        links,
        flows,
        events,
        measure: spec.measure,
        expects: spec.expects,
        plots: spec.plots,
        orders: spec.orders,
    })
}

/// Seed 003's receive buffer, 2 * RTT_max * sum(BW_i), in bytes: propagation RTT of the
/// slowest path (both directions) and the narrowest link of each path.
pub fn buffer_rule_bytes(paths: &[Route], links: &[Link]) -> f64 {
    let dir = |d: DirId| &links[dir_link(d)].dirs[d % 2];
    let rtt_max = paths
        .iter()
        .map(|r| {
            r.hops
                .iter()
                .chain(&r.reversed().hops)
                .map(|&d| dir(d).delay.secs())
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    let mut distinct: Vec<&Route> = paths.iter().collect();
    distinct.dedup_by(|a, b| a.hops == b.hops);
    let bw: f64 = distinct
        .iter()
        .map(|r| {
            r.hops
                .iter()
                .map(|&d| dir(d).rate.bps() as f64)
                .fold(f64::INFINITY, f64::min)
        })
        .sum();
    2.0 * rtt_max * bw / 8.0
}

/// The route of each subflow the path manager opens, or a located problem.
fn subflow_paths(f: &FlowSpec, paths: &[Route], i: usize, p: &mut Problems) -> Option<Vec<Route>> {
    let at = |field: &str| vec![key("flow"), Seg::Index(i), key(field)];
    if f.protocol == Protocol::Tcp {
        for (field, set) in [
            ("path_manager", f.path_manager.is_some()),
            ("subflows", f.subflows.is_some()),
            ("scheduler", f.scheduler.is_some()),
        ] {
            if set {
                p.push(at(field), format!("`{field}` applies to MPTCP flows only: set protocol = \"mptcp\" or remove it"));
            }
        }
        return Some(vec![paths[0].clone()]);
    }
    if let Some(k) = f.subflows
        && !(1..=MAX_SUBFLOWS).contains(&k)
    {
        p.push(
            at("subflows"),
            format!("expected 1 to {MAX_SUBFLOWS} subflows (the Linux limit), got {k}"),
        );
        return None;
    }
    Some(match f.path_manager.unwrap_or(PathManager::Fullmesh) {
        PathManager::Fullmesh => {
            let k = f.subflows.unwrap_or(MAX_SUBFLOWS) as usize;
            paths.iter().take(k).cloned().collect()
        }
        PathManager::Ndiffports => {
            vec![paths[0].clone(); f.subflows.unwrap_or(2) as usize]
        }
    })
}

fn check_plots(plots: &[PlotSpec], params: &BTreeMap<String, toml::Value>, p: &mut Problems) {
    let known: Vec<&str> = params.keys().map(String::as_str).collect();
    for (i, plot) in plots.iter().enumerate() {
        let at = |field: &str| vec![key("plot"), Seg::Index(i), key(field)];
        match plot {
            PlotSpec::Series {
                series, entities, ..
            } => {
                const SERIES: &[&str] = &["goodput_mbps", "cwnd_pkts", "rtt_ms", "queue_pkts"];
                if !SERIES.contains(&series.as_str()) {
                    p.push(at("series"), unknown("series", series, SERIES));
                }
                if entities.is_empty() {
                    p.push(
                        at("entities"),
                        "name at least one entity, e.g. \"group.mptcp\"",
                    );
                }
            }
            PlotSpec::Sweep { x, lines, .. } => {
                for (field, name) in [("x", Some(x)), ("lines", lines.as_ref())] {
                    if let Some(n) = name
                        && !params.contains_key(n)
                    {
                        p.push(at(field), unknown("parameter", n, &known));
                    }
                }
            }
        }
    }
}

fn merge(base: &DirConfig, o: &DirectionSpec) -> DirConfig {
    DirConfig {
        rate: o.rate.unwrap_or(base.rate),
        delay: o.delay.unwrap_or(base.delay),
        queue: o.queue.clone().unwrap_or_else(|| base.queue.clone()),
        loss: o.loss.unwrap_or(base.loss),
    }
}

fn check_queue(q: &QueueSpec, path: Vec<Seg>, p: &mut Problems) {
    let sub = |f: &str| {
        let mut v = path.clone();
        v.push(key(f));
        v
    };
    match q {
        QueueSpec::Droptail { size } if size.is_zero() => {
            p.push(sub("size"), "a queue must hold at least one packet")
        }
        QueueSpec::Droptail { .. } => {}
        QueueSpec::Red {
            size,
            min_th,
            max_th,
            max_p,
            weight,
            ..
        } => {
            if size.is_zero() {
                p.push(sub("size"), "a queue must hold at least one packet");
            }
            let limit = match size {
                Size::Packets(n) => *n as f64,
                Size::Bytes(b) => *b as f64,
            };
            if !(*min_th >= 0.0 && min_th < max_th) {
                p.push(
                    sub("min_th"),
                    format!(
                        "expected 0 <= min_th < max_th, got min_th = {min_th}, max_th = {max_th}"
                    ),
                );
            }
            if *max_th > limit {
                p.push(
                    sub("max_th"),
                    format!("max_th = {max_th} is above the queue size ({size})"),
                );
            }
            if !(*max_p > 0.0 && *max_p <= 1.0) {
                p.push(
                    sub("max_p"),
                    format!("expected 0 < max_p <= 1, got {max_p}"),
                );
            }
            if !(*weight > 0.0 && *weight <= 1.0) {
                p.push(
                    sub("weight"),
                    format!("expected 0 < weight <= 1, got {weight}"),
                );
            }
        }
    }
}
