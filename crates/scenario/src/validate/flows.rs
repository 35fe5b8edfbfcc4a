//! `[[flow]]`: a group of identical flows: its fields, its endpoints (hosts, optionally a
//! given interface) and the routers it must pass; its routes come from `paths`.

use super::links::Links;
use super::nodes::Nodes;
use super::paths::{candidate_paths, check_mptcp_fields};
use super::{Problems, at, key, unknown};
use crate::error::suggestion;
use crate::model::{DirId, FlowGroup, NodeId, Route};
use crate::spans::Seg;
use crate::spec::{
    CountSpec, DEFAULT_STALE_LOSS_CNT, FlowSpec, NodeKind, PathManager, Protocol, SchedulerKind,
    SelectSpec, SelectorKind, TrafficSpec,
};
use crate::topology::Graph;
use crate::units::{BufferSize, Duration, Size};
use mptcp_cc::AlgorithmId;
use std::collections::HashSet;

pub fn check(
    specs: &[FlowSpec],
    nodes: &Nodes<'_>,
    links: &Links,
    duration: Duration,
    p: &mut Problems,
) -> Vec<FlowGroup> {
    let graph = Graph::new(&nodes.list, &links.list);
    let mut flows = Vec::new();
    let mut names: HashSet<&str> = HashSet::new();
    for (i, f) in specs.iter().enumerate() {
        let cc = check_fields(i, f, &mut names, duration, p);
        let Some((count, count_spread)) = check_count(i, f.count, p) else {
            continue;
        };
        let src = endpoint(i, "from", &f.from, nodes, p);
        let dst = endpoint(i, "to", &f.to, nodes, p);
        let via = routers(&f.via, &[key("flow"), Seg::Index(i), key("via")], nodes, p);
        let numbered = numbered_paths(i, f, nodes, p);
        let (Some((src, src_pin)), Some((dst, dst_pin))) = (src, dst) else {
            continue;
        };
        if src == dst {
            p.push(
                at("flow", i, "to"),
                "a flow's source and destination must differ",
            );
            continue;
        }
        let Some(numbered) = numbered else {
            continue;
        };
        let paths = if numbered.is_empty() {
            candidate_paths(&graph, nodes, links, (src, src_pin), (dst, dst_pin), &via)
        } else {
            let ends = ((src, src_pin), (dst, dst_pin));
            match numbered_routes(i, f, &graph, nodes, links, ends, &numbered, p) {
                Some(paths) => paths,
                None => continue,
            }
        };
        // A link left out after its own error may be the one missing: not a second error.
        if paths.is_empty() && !links.left_out.is_empty() {
            continue;
        }
        if paths.is_empty() {
            let how = if via.is_empty() {
                String::new()
            } else {
                format!(" through {}", f.via.join(", "))
            };
            p.push(at("flow", i, "to"), format!("`{}` cannot be reached from `{}`{how}: no path of links and routers joins them", f.to, f.from));
            continue;
        }
        if !check_mptcp_fields(f, i, p) {
            continue;
        }
        let Some(select) = check_select(i, f, paths.len(), p) else {
            continue;
        };
        let Some(cc) = cc else {
            continue;
        };
        flows.push(FlowGroup {
            name: f.name.clone(),
            count,
            count_spread,
            protocol: f.protocol,
            cc,
            src,
            dst,
            paths,
            start: f.start,
            stagger: f.stagger,
            stop: f.stop.unwrap_or(duration),
            traffic: f.traffic.clone(),
            window_limit: f.window_limit,
            rcv_buffer: f.rcv_buffer,
            delayed_ack: f.delayed_ack,
            sack: f.sack,
            path_manager: f.path_manager.unwrap_or(PathManager::Fullmesh),
            subflows: f.subflows,
            scheduler: f.scheduler.unwrap_or(SchedulerKind::LinuxDefault),
            stale_loss_cnt: f.stale_loss_cnt.unwrap_or(DEFAULT_STALE_LOSS_CNT),
            start_jitter: f.start_jitter,
            reconnect_after: f.reconnect_after,
            select,
        });
    }
    if specs.is_empty() {
        p.push(
            vec![key("flow")],
            "the scenario has no flows: add [[flow]] tables",
        );
    }
    flows
}

/// The group's own fields: name, count, algorithm, times, traffic, sizes. Returns the
/// algorithm, if its name is known.
fn check_fields<'s>(
    i: usize,
    f: &'s FlowSpec,
    names: &mut HashSet<&'s str>,
    duration: Duration,
    p: &mut Problems,
) -> Option<AlgorithmId> {
    let bad = |c: char| c.is_whitespace() || c.is_control() || ".,/#".contains(c);
    if f.name.is_empty() || f.name.contains(bad) {
        p.push(at("flow", i, "name"), format!("`{}` is not a valid flow name: it is used in metric names, so no `.`, `#`, `/`, `,` or spaces", f.name.escape_default()));
    }
    if !names.insert(&f.name) {
        p.push(at("flow", i, "name"), format!("duplicate flow name `{}`: each [[flow]] is a group, use `count` for several identical flows", f.name));
    }
    let cc = AlgorithmId::parse(&f.cc);
    if cc.is_none() {
        p.push(
            at("flow", i, "cc"),
            unknown("congestion control", &f.cc, &mptcp_cc::accepted_names()),
        );
    }
    if f.reconnect_after == Some(Duration::ZERO) {
        p.push(
            at("flow", i, "reconnect_after"),
            "reconnect_after must be greater than zero: every connection would be abandoned \
             as soon as it opens",
        );
    }
    // A zero duration is reported as such; every flow's times would repeat it.
    if duration > Duration::ZERO {
        check_times(i, f, duration, p);
    }
    match &f.traffic {
        TrafficSpec::File { size } if size.is_zero() => p.push(
            vec![key("flow"), Seg::Index(i), key("traffic"), key("size")],
            "a file size must be greater than zero",
        ),
        TrafficSpec::Onoff { burst, idle } if burst.0 == 0 || idle.0 == 0 => p.push(
            vec![
                key("flow"),
                Seg::Index(i),
                key("traffic"),
                key(if burst.0 == 0 { "burst" } else { "idle" }),
            ],
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
                BufferSize::Rule(_) | BufferSize::Autotuned => None,
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
    cc
}

/// The flow runs: it starts, and the last of its group too, before it stops, and it stops
/// within the scenario.
fn check_times(i: usize, f: &FlowSpec, duration: Duration, p: &mut Problems) {
    let stop = f.stop.unwrap_or(duration);
    if f.start >= stop {
        p.push(
            at("flow", i, if f.stop.is_some() { "stop" } else { "start" }),
            format!(
                "the flow would never run: it starts at {} and stops at {stop}",
                f.start
            ),
        );
    } else if let Some(last) = last_start(f)
        && last >= stop
    {
        p.push(
            at("flow", i, "stagger"),
            format!(
                "the last flows would never run: flow i of n starts at start + stagger * i / n, \
                 the last at {last}, not before the stop at {stop}"
            ),
        );
    }
    if stop > duration {
        p.push(
            at("flow", i, "stop"),
            format!("stop {stop} is after the end of the scenario ({duration})"),
        );
    }
}

/// When the last flow of the group starts (of the most it may have), if it starts later
/// than the first.
fn last_start(f: &FlowSpec) -> Option<Duration> {
    let n = match f.count {
        CountSpec::Fixed(n) => n,
        CountSpec::Uniform { mean, spread } => mean.saturating_add(spread),
    };
    let later = u128::from(f.stagger.0) * u128::from(n.checked_sub(1)?) / u128::from(n);
    (later > 0).then(|| Duration(f.start.0.saturating_add(later as u64)))
}

/// A flow's `from` or `to`: a host, and the direction leaving it through a given interface.
fn endpoint(
    i: usize,
    field: &str,
    text: &str,
    nodes: &Nodes<'_>,
    p: &mut Problems,
) -> Option<(NodeId, Option<DirId>)> {
    let (node, iface) = match text.split_once(':') {
        Some((n, f)) => (n, Some(f)),
        None => (text, None),
    };
    let Some(&id) = nodes.index.get(node) else {
        p.push(at("flow", i, field), unknown("node", node, &nodes.names));
        return None;
    };
    let host = &nodes.list[id];
    if host.kind != NodeKind::Host {
        p.push(
            at("flow", i, field),
            format!("`{node}` is a router: flows run between hosts"),
        );
        return None;
    }
    let Some(name) = iface else {
        return Some((id, None));
    };
    match host.interfaces.iter().find(|x| x.name == name) {
        Some(x) => Some((id, Some(x.out_dir))),
        None => {
            let known: Vec<&str> = host.interfaces.iter().map(|x| x.name.as_str()).collect();
            p.push(
                at("flow", i, field),
                if known.is_empty() {
                    format!("`{node}` has no interface `{name}`: it has no links")
                } else {
                    format!(
                        "`{node}` has no interface `{name}`; {}",
                        suggestion(name, &known)
                    )
                },
            );
            None
        }
    }
}

/// Routers to pass, in order (`via`, or one of `paths`), at `path` in the file.
fn routers(names: &[String], path: &[Seg], nodes: &Nodes<'_>, p: &mut Problems) -> Vec<NodeId> {
    let mut found = Vec::new();
    for (k, v) in names.iter().enumerate() {
        let mut here = path.to_vec();
        here.push(Seg::Index(k));
        match nodes.index.get(v.as_str()) {
            Some(&id) if nodes.list[id].kind == NodeKind::Router => found.push(id),
            Some(_) => p.push(here, format!("`{v}` is a host: only routers forward")),
            None => p.push(here, unknown("node", v, &nodes.names)),
        }
    }
    found
}

/// The group's size: fixed, or a mean and spread for a number drawn per run. `None` after
/// a problem.
fn check_count(i: usize, count: CountSpec, p: &mut Problems) -> Option<(u32, u32)> {
    match count {
        CountSpec::Fixed(0) => {
            p.push(at("flow", i, "count"), "count must be at least 1");
            None
        }
        CountSpec::Fixed(n) => Some((n, 0)),
        CountSpec::Uniform { mean, spread } if spread >= mean => {
            p.push(
                vec![key("flow"), Seg::Index(i), key("count"), key("spread")],
                format!("spread {spread} must be below the mean {mean}: a draw in [mean - spread, mean + spread] must give at least one flow"),
            );
            None
        }
        CountSpec::Uniform { mean, spread } if mean.checked_add(spread).is_none() => {
            p.push(
                vec![key("flow"), Seg::Index(i), key("count")],
                format!(
                    "mean {mean} + spread {spread} is more flows than a group can have ({})",
                    u32::MAX
                ),
            );
            None
        }
        CountSpec::Uniform { mean, spread } => Some((mean, spread)),
    }
}

/// `paths`: each entry's routers, or `None` after a problem. Empty when not given.
fn numbered_paths(
    i: usize,
    f: &FlowSpec,
    nodes: &Nodes<'_>,
    p: &mut Problems,
) -> Option<Vec<Vec<NodeId>>> {
    if f.paths.is_empty() {
        return Some(Vec::new());
    }
    if !f.via.is_empty() {
        p.push(
            at("flow", i, "via"),
            "give either `via` (one route) or `paths` (numbered routes to choose from), not both",
        );
        return None;
    }
    if f.protocol == Protocol::Mptcp {
        p.push(
            at("flow", i, "paths"),
            "`paths` applies to TCP flows: an MPTCP connection's subflows take one path per source interface",
        );
        return None;
    }
    let before = p.len();
    let found: Vec<Vec<NodeId>> = f
        .paths
        .iter()
        .enumerate()
        .map(|(k, names)| {
            routers(
                names,
                &[key("flow"), Seg::Index(i), key("paths"), Seg::Index(k)],
                nodes,
                p,
            )
        })
        .collect();
    (p.len() == before).then_some(found)
}

/// One route per entry of `paths`: the shortest from the source through its routers to the
/// destination. `None` after a problem (an entry that cannot be routed).
#[allow(clippy::too_many_arguments)]
fn numbered_routes(
    i: usize,
    f: &FlowSpec,
    graph: &Graph,
    nodes: &Nodes<'_>,
    links: &Links,
    (src, dst): ((NodeId, Option<DirId>), (NodeId, Option<DirId>)),
    numbered: &[Vec<NodeId>],
    p: &mut Problems,
) -> Option<Vec<Route>> {
    let mut routes = Vec::new();
    for (k, via) in numbered.iter().enumerate() {
        match candidate_paths(graph, nodes, links, src, dst, via)
            .into_iter()
            .next()
        {
            Some(r) => {
                // Two numbers for one route would weigh it double in every selector.
                if let Some(j) = routes.iter().position(|q: &Route| q.hops == r.hops) {
                    p.push(
                        vec![key("flow"), Seg::Index(i), key("paths"), Seg::Index(k)],
                        format!("path {k} takes the same route as path {j}: each numbered path must be a different route"),
                    );
                    return None;
                }
                routes.push(r)
            }
            None => {
                p.push(
                    vec![key("flow"), Seg::Index(i), key("paths"), Seg::Index(k)],
                    format!(
                        "path {k} cannot be routed: no path of links and routers joins `{}` to `{}` through {}",
                        f.from,
                        f.to,
                        f.paths[k].join(", ")
                    ),
                );
                return None;
            }
        }
    }
    Some(routes)
}

/// `select`: TCP only; R given exactly for the selectors that refresh; `variation` only for
/// RTT variation. `Some(None)` when not given, `None` after a problem.
fn check_select(
    i: usize,
    f: &FlowSpec,
    paths: usize,
    p: &mut Problems,
) -> Option<Option<SelectSpec>> {
    let Some(select) = f.select else {
        return Some(None);
    };
    let here = |field: &str| vec![key("flow"), Seg::Index(i), key("select"), key(field)];
    let before = p.len();
    if f.protocol == Protocol::Mptcp {
        p.push(
            at("flow", i, "select"),
            "`select` places TCP connections on one path each: an MPTCP connection uses its paths at once",
        );
    }
    match (select.kind.refreshes(), select.refresh) {
        (true, None) => p.push(
            here("kind"),
            "this selector needs `refresh`: R, the number of times one path may be chosen in a row before every path's measure is reset (e.g. refresh = 10)",
        ),
        (true, Some(0)) => p.push(here("refresh"), "refresh must be at least 1"),
        (false, Some(_)) => p.push(
            here("refresh"),
            "only rtt-variation, drops and rtt take `refresh`: this selector never resets",
        ),
        _ => {}
    }
    if f.protocol == Protocol::Tcp && f.paths.len() < 2 {
        p.push(
            at("flow", i, "select"),
            "`select` chooses among the flow's numbered `paths`: give at least two (e.g. paths = [[\"r1\"], [\"r2\"]])",
        );
    }
    if select.variation.is_some() && select.kind != SelectorKind::RttVariation {
        p.push(
            here("variation"),
            "`variation` applies to kind = \"rtt-variation\" only",
        );
    }
    if paths > usize::from(u16::MAX) {
        p.push(
            at("flow", i, "paths"),
            format!("{paths} paths: at most {} can be numbered", u16::MAX),
        );
    }
    (p.len() == before).then_some(Some(select))
}
