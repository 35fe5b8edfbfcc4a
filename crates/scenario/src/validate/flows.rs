//! `[[flow]]`: a group of identical flows: its fields, its endpoints (hosts, optionally a
//! given interface) and the routers it must pass; its routes come from `paths`.

use super::links::Links;
use super::nodes::Nodes;
use super::paths::{candidate_paths, check_mptcp_fields};
use super::{Problems, at, key, unknown};
use crate::model::{DirId, FlowGroup, NodeId};
use crate::spans::Seg;
use crate::spec::{FlowSpec, NodeKind, PathManager, SchedulerKind, TrafficSpec};
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
        let src = endpoint(i, "from", &f.from, nodes, p);
        let dst = endpoint(i, "to", &f.to, nodes, p);
        let via = via(i, f, nodes, p);
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
        let paths = candidate_paths(&graph, nodes, links, (src, src_pin), (dst, dst_pin), &via);
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
        let Some(cc) = cc else {
            continue;
        };
        flows.push(FlowGroup {
            name: f.name.clone(),
            count: f.count,
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
            scheduler: f.scheduler.unwrap_or(SchedulerKind::LowestRtt),
            start_jitter: f.start_jitter,
            reconnect_after: f.reconnect_after,
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
    if f.name.is_empty() || f.name.contains(['.', ' ', ',', '/', '#']) {
        p.push(at("flow", i, "name"), format!("`{}` is not a valid flow name: it is used in metric names, so no `.`, `#`, `/`, `,` or spaces", f.name));
    }
    if !names.insert(&f.name) {
        p.push(at("flow", i, "name"), format!("duplicate flow name `{}`: each [[flow]] is a group, use `count` for several identical flows", f.name));
    }
    if f.count == 0 {
        p.push(at("flow", i, "count"), "count must be at least 1");
    }
    let cc = AlgorithmId::parse(&f.cc);
    if cc.is_none() {
        p.push(
            at("flow", i, "cc"),
            unknown("congestion control", &f.cc, &mptcp_cc::accepted_names()),
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
    cc
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
                unknown(&format!("interface of `{node}`"), name, &known),
            );
            None
        }
    }
}

/// The routers a flow must pass, in order.
fn via(i: usize, f: &FlowSpec, nodes: &Nodes<'_>, p: &mut Problems) -> Vec<NodeId> {
    let mut via = Vec::new();
    for (k, v) in f.via.iter().enumerate() {
        let path = vec![key("flow"), Seg::Index(i), key("via"), Seg::Index(k)];
        match nodes.index.get(v.as_str()) {
            Some(&id) if nodes.list[id].kind == NodeKind::Router => via.push(id),
            Some(_) => p.push(path, format!("`{v}` is a host: only routers forward")),
            None => p.push(path, unknown("node", v, &nodes.names)),
        }
    }
    via
}
