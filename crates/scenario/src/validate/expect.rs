//! What a run is judged by: `[[plot]]`s, `[[order]]`s across variants and `[[expect]]`ations
//! against published figures, each naming parameters of the scenario.

use super::{Problems, at, key, unknown};
use crate::error::suggestion;
use crate::metrics::{Entity, Metric, Quantity};
use crate::spans::Seg;
use crate::spec::{ExpectSpec, OrderSpec, PlotSpec};
use std::collections::BTreeMap;

type Params = BTreeMap<String, toml::Value>;

fn known(params: &Params) -> Vec<&str> {
    params.keys().map(String::as_str).collect()
}

pub fn check_plots(plots: &[PlotSpec], params: &Params, p: &mut Problems) {
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
                        p.push(at(field), unknown("parameter", n, &known(params)));
                    }
                }
            }
        }
    }
}

/// The groups and links of the scenario, which metric names refer to.
pub struct Names<'a> {
    pub groups: Vec<&'a str>,
    pub links: Vec<&'a str>,
}

/// A metric an expectation or ordering names must be one the runs produce, of a flow group
/// or link of the scenario: a misspelt one would silently never be checked.
fn check_metric(path: Vec<Seg>, name: &str, names: &Names<'_>, p: &mut Problems) {
    let quantities: Vec<&str> = Quantity::ALL.iter().map(|q| q.as_str()).collect();
    let Some(m) = Metric::parse(name) else {
        let message = match name.rsplit_once('.') {
            Some((_, q)) if !quantities.contains(&q) => format!(
                "unknown quantity `{q}` in metric `{name}`; {}",
                suggestion(q, &quantities)
            ),
            _ => format!(
                "unknown metric `{name}`: expected an entity and a quantity, such as \
                 `group.<group>.goodput_mbps`, `link.<link>.ab.utilisation` or `all.jain`"
            ),
        };
        p.push(path, message);
        return;
    };
    match &m.entity {
        Entity::All => {}
        Entity::Link(l, _) if !names.links.contains(&l.as_str()) => {
            p.push(path, unknown("link", l, &names.links));
        }
        Entity::Link(..) => {}
        e => {
            let g = e.group().unwrap_or_default();
            if !names.groups.contains(&g) {
                p.push(path, unknown("flow group", g, &names.groups));
            }
        }
    }
}

pub fn check_orders(orders: &[OrderSpec], params: &Params, names: &Names<'_>, p: &mut Problems) {
    for (i, o) in orders.iter().enumerate() {
        check_metric(at("order", i, "metric"), &o.metric, names, p);
        if let Some(over) = &o.over {
            check_metric(at("order", i, "over"), over, names, p);
        }
        if !params.contains_key(&o.param) {
            p.push(
                at("order", i, "param"),
                unknown("parameter", &o.param, &known(params)),
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
}

pub fn check_expects(expects: &[ExpectSpec], params: &Params, names: &Names<'_>, p: &mut Problems) {
    for (i, x) in expects.iter().enumerate() {
        check_metric(at("expect", i, "metric"), &x.metric, names, p);
        if let Some(over) = &x.over {
            check_metric(at("expect", i, "over"), over, names, p);
        }
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
            if !params.contains_key(k) {
                p.push(
                    vec![key("expect"), Seg::Index(i), key("when"), key(k)],
                    unknown("parameter", k, &known(params)),
                );
            }
        }
    }
}
