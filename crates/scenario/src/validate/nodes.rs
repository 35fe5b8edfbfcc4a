//! `[[node]]`: names, kinds and hosts' jitter.

use super::{Problems, at, key};
use crate::model::{Node, NodeId};
use crate::spec::{NodeKind, NodeSpec};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// The nodes, and where each name points.
pub struct Nodes<'s> {
    pub list: Vec<Node>,
    pub index: HashMap<String, NodeId>,
    /// Every name as written, for did-you-mean suggestions.
    pub names: Vec<&'s str>,
}

pub fn check<'s>(specs: &'s [NodeSpec], p: &mut Problems) -> Nodes<'s> {
    let mut list: Vec<Node> = Vec::new();
    let mut index: HashMap<String, NodeId> = HashMap::new();
    // Every name once, in the file's order (for did-you-mean).
    let mut names = Vec::new();
    if specs.is_empty() {
        p.push(
            vec![key("node")],
            "the scenario has no nodes: add [[node]] tables with a name and a kind",
        );
    }
    for (i, n) in specs.iter().enumerate() {
        if n.name.is_empty() || n.name.contains([':', ' ', ',', '/']) {
            p.push(
                at("node", i, "name"),
                format!(
                    "`{}` is not a valid node name: expected letters, digits, `-`, `_` or `.`",
                    n.name
                ),
            );
        }
        // The first node of a name keeps it: a duplicate must not repoint the name (later
        // references would reach another node, or none).
        match index.entry(n.name.clone()) {
            Entry::Occupied(_) => {
                p.push(
                    at("node", i, "name"),
                    format!("duplicate node name `{}`", n.name),
                );
                continue;
            }
            Entry::Vacant(v) => {
                v.insert(NodeId(list.len()));
                names.push(n.name.as_str());
            }
        }
        if n.kind == NodeKind::Router && n.jitter.0 > 0 {
            p.push(
                at("node", i, "jitter"),
                format!(
                    "router `{}` has a jitter: it is a host's own processing time (routers \
                     forward at once); set it on the hosts that send",
                    n.name
                ),
            );
        }
        list.push(Node {
            name: n.name.clone(),
            kind: n.kind,
            interfaces: Vec::new(),
            jitter: n.jitter,
        });
    }
    Nodes { list, index, names }
}
