//! `[[link]]`: its two ends (and their interfaces), its name, and each direction's rate,
//! delay, queue and loss.

use super::nodes::Nodes;
use super::{Problems, at, key, unknown};
use crate::model::{DirConfig, Interface, Link, LinkId, NodeId};
use crate::spans::Seg;
use crate::spec::{DelaySpec, DirectionSpec, LinkSpec, QueueSpec};
use crate::units::Size;
use std::collections::HashMap;

/// The links, and where each name points.
pub struct Links {
    pub list: Vec<Link>,
    pub index: HashMap<String, LinkId>,
    /// Names of links left out after a problem: what names them is not reported again
    /// (an event on a link whose node is misspelt is not on an unknown link).
    pub left_out: Vec<String>,
}

impl Links {
    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|l| l.name.as_str()).collect()
    }
}

/// Checks every link and attaches its interfaces to `nodes`.
pub fn check(specs: &[LinkSpec], nodes: &mut Nodes<'_>, p: &mut Problems) -> Links {
    let mut links = Links {
        list: Vec::new(),
        index: HashMap::new(),
        left_out: Vec::new(),
    };
    for (i, l) in specs.iter().enumerate() {
        let (ends, mut ok) = ends(i, l, nodes, p);
        let name = l.name.clone().unwrap_or_else(|| {
            format!(
                "{}-{}",
                l.a.split(':').next().unwrap_or(""),
                l.b.split(':').next().unwrap_or("")
            )
        });
        if links.index.contains_key(&name) {
            let field = if l.name.is_some() { "name" } else { "b" };
            p.push(at("link", i, field), format!("duplicate link name `{name}`: give one of the links between these nodes a `name`"));
            ok = false;
        }
        if ok && ends[0].0 == ends[1].0 {
            p.push(at("link", i, "b"), "a link must join two different nodes");
            ok = false;
        }
        let dirs = directions(i, l, p);
        if !ok {
            links.left_out.push(name);
            continue;
        }
        let id = LinkId(links.list.len());
        links.index.insert(name.clone(), id);
        attach(i, id, &name, &ends, nodes, p);
        links.list.push(Link {
            name,
            a: ends[0].0,
            b: ends[1].0,
            dirs,
            delay_spread: l.delay.spread(),
        });
    }
    links
}

/// The nodes (and interface names, empty when not given) at `a` and `b`; false if either
/// node is unknown.
fn ends(
    i: usize,
    l: &LinkSpec,
    nodes: &Nodes<'_>,
    p: &mut Problems,
) -> ([(NodeId, String); 2], bool) {
    let mut ends: [(NodeId, String); 2] = Default::default();
    let mut ok = true;
    for (side, (field, text)) in [("a", &l.a), ("b", &l.b)].into_iter().enumerate() {
        let (node, iface) = match text.split_once(':') {
            Some((n, f)) => (n, Some(f)),
            None => (text.as_str(), None),
        };
        if node.is_empty() || iface.is_some_and(|f| f.is_empty() || f.contains(':')) {
            p.push(
                at("link", i, field),
                format!("expected `node` or `node:interface`, got `{text}`"),
            );
            ok = false;
            continue;
        }
        match nodes.index.get(node) {
            Some(&id) => ends[side] = (id, iface.unwrap_or("").to_string()),
            None => {
                p.push(at("link", i, field), unknown("node", node, &nodes.names));
                ok = false;
            }
        }
    }
    (ends, ok)
}

/// Both directions' configuration: the link's values, overridden per direction by `ab` and
/// `ba`. A queue is checked where it is written.
fn directions(i: usize, l: &LinkSpec, p: &mut Problems) -> [DirConfig; 2] {
    if let DelaySpec::Uniform { mean, spread } = l.delay {
        if spread > mean {
            p.push(
                vec![key("link"), Seg::Index(i), key("delay"), key("spread")],
                format!("spread {spread} is more than the mean {mean}: a delay cannot be negative"),
            );
        }
        for (side, o) in [("ab", &l.ab), ("ba", &l.ba)] {
            if o.delay.is_some() {
                p.push(
                    vec![key("link"), Seg::Index(i), key(side), key("delay")],
                    "a drawn delay applies to both directions: give either the link's `{ mean, spread }` or per-direction delays",
                );
            }
        }
    }
    let base = DirConfig {
        rate: l.rate,
        delay: l.delay.mean(),
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
            check_queue(&cfg.queue, qpath, p);
        }
    }
    dirs
}

/// Gives each end node its interface on link `id` (named after the link unless given).
fn attach(
    i: usize,
    id: LinkId,
    name: &str,
    ends: &[(NodeId, String); 2],
    nodes: &mut Nodes<'_>,
    p: &mut Problems,
) {
    for (side, (node, iface)) in ends.iter().enumerate() {
        let iface = if iface.is_empty() {
            name.to_string()
        } else {
            iface.clone()
        };
        let field = if side == 0 { "a" } else { "b" };
        let node = &mut nodes.list[*node];
        if node.interfaces.iter().any(|f| f.name == iface) {
            p.push(
                at("link", i, field),
                format!(
                    "interface `{}:{iface}` is already attached to another link",
                    node.name
                ),
            );
        }
        node.interfaces.push(Interface {
            name: iface,
            out_dir: id.dir(side == 1),
        });
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
