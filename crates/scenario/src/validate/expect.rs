//! What a run is judged by: `[[plot]]`s, `[[order]]`s across variants and `[[expect]]`ations
//! against published figures, each naming parameters of the scenario.

use super::{Problems, at, key, unknown};
use crate::derived::DERIVED_PREFIX;
use crate::error::suggestion;
use crate::metrics::{Entity, Metric, Quantity};
use crate::spans::Seg;
use crate::spec::{DerivedSpec, ExpectSpec, OrderSpec, PlotSpec, TableSpec};
use std::collections::BTreeMap;

type Params = BTreeMap<String, toml::Value>;

fn known(params: &Params) -> Vec<&str> {
    params.keys().map(String::as_str).collect()
}

pub fn check_plots(plots: &[PlotSpec], params: &Params, names: &Names<'_>, p: &mut Problems) {
    for (i, plot) in plots.iter().enumerate() {
        let at = |field: &str| vec![key("plot"), Seg::Index(i), key(field)];
        match plot {
            PlotSpec::Series {
                series,
                entities,
                mark,
                ..
            } => {
                const SERIES: &[&str] = &[
                    "goodput_mbps",
                    "cwnd_pkts",
                    "rtt_ms",
                    "queue_pkts",
                    "rcv_ssthresh_kb",
                    "window_clamp_kb",
                    "cc_alpha",
                    "cc_inter_loss_pkts",
                ];
                if !SERIES.contains(&series.as_str()) {
                    p.push(at("series"), unknown("series", series, SERIES));
                }
                if entities.is_empty() {
                    p.push(
                        at("entities"),
                        "name at least one entity, e.g. \"group.mptcp\"",
                    );
                }
                for (k, e) in entities.iter().enumerate() {
                    let path = vec![key("plot"), Seg::Index(i), key("entities"), Seg::Index(k)];
                    match Entity::parse(e) {
                        Some(entity) => check_entity(path, &entity, names, p),
                        None => p.push(
                            path,
                            format!(
                                "unknown entity `{e}`: expected e.g. `group.<group>`, \
                                 `flow.<group>#0.sf1` or `link.<link>.ab`"
                            ),
                        ),
                    }
                }
                if let Some(m) = mark {
                    check_metric(at("mark"), m, names, p);
                }
            }
            PlotSpec::Sweep {
                x,
                lines,
                metric,
                rule_x,
                baseline,
                ..
            } => {
                check_metric(at("metric"), metric, names, p);
                for (field, m) in [("rule_x", rule_x), ("baseline", baseline)] {
                    if let Some(m) = m {
                        check_metric(at(field), m, names, p);
                    }
                }
                for (field, name) in [("x", Some(x)), ("lines", lines.as_ref())] {
                    if let Some(n) = name
                        && !params.contains_key(n)
                    {
                        p.push(at(field), unknown("parameter", n, &known(params)));
                    }
                }
            }
            PlotSpec::Panels {
                x,
                panels,
                metrics,
                band,
                ..
            } => {
                for (field, name) in [("x", x), ("panels", panels)] {
                    if !params.contains_key(name) {
                        p.push(at(field), unknown("parameter", name, &known(params)));
                    }
                }
                if metrics.is_empty() {
                    p.push(at("metrics"), "name at least one metric to draw");
                }
                for (k, m) in metrics.iter().enumerate() {
                    let path = vec![key("plot"), Seg::Index(i), key("metrics"), Seg::Index(k)];
                    check_metric(path.clone(), m, names, p);
                    check_listed_once(path, metrics, k, p);
                }
                if let Some(band) = band {
                    check_metric(at("band"), band, names, p);
                    if metrics.len() > 1 {
                        p.push(
                            at("band"),
                            "a band is drawn around a single line: give one metric",
                        );
                    }
                }
            }
        }
    }
}

/// `[[table]]`: parameters of the scenario, each on one side once, and metrics the runs
/// produce. (That they are the parameters that vary, and cover all of them, is checked
/// across the matrix: `references`.)
pub fn check_tables(tables: &[TableSpec], params: &Params, names: &Names<'_>, p: &mut Problems) {
    for (i, t) in tables.iter().enumerate() {
        for (side, list) in [("rows", &t.rows), ("columns", &t.columns)] {
            for (k, param) in list.iter().enumerate() {
                let path = vec![key("table"), Seg::Index(i), key(side), Seg::Index(k)];
                if !params.contains_key(param) {
                    p.push(path, unknown("parameter", param, &known(params)));
                } else if list[..k].contains(param) || (side == "columns" && t.rows.contains(param))
                {
                    p.push(
                        path,
                        format!("`{param}` is placed already: each parameter on one side, once"),
                    );
                }
            }
        }
        if t.metrics.is_empty() {
            p.push(
                vec![key("table"), Seg::Index(i), key("metrics")],
                "name at least one metric for the table",
            );
        }
        for (k, m) in t.metrics.iter().enumerate() {
            let path = vec![key("table"), Seg::Index(i), key("metrics"), Seg::Index(k)];
            check_metric(path.clone(), m, names, p);
            check_listed_once(path, &t.metrics, k, p);
        }
    }
}

/// The groups and links of the scenario, which metric names refer to.
pub struct Names<'a> {
    pub groups: Vec<&'a str>,
    pub links: Vec<&'a str>,
    /// The `[[derived]]` metrics, by name (without `derived.`).
    pub derived: Vec<&'a str>,
}

/// `[[derived]]`: unique names of metric-name characters, at least two metrics each, each
/// one the runs produce (a derived metric of derived metrics is refused: they are computed
/// in one pass).
pub fn check_derived<'a>(derived: &'a [DerivedSpec], names: &mut Names<'a>, p: &mut Problems) {
    for (i, d) in derived.iter().enumerate() {
        let valid = !d.name.is_empty()
            && d.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            p.push(
                at("derived", i, "name"),
                format!(
                    "`{}` is not a metric name: expected letters, digits, `_` or `-`",
                    d.name
                ),
            );
        } else if names.derived.contains(&d.name.as_str()) {
            p.push(
                at("derived", i, "name"),
                format!("a derived metric `{}` is defined twice", d.name),
            );
        } else {
            names.derived.push(&d.name);
        }
        if d.of.len() < 2 {
            p.push(
                at("derived", i, "of"),
                "a derived metric needs at least two metrics to reduce",
            );
        }
    }
    let plain = Names {
        groups: names.groups.clone(),
        links: names.links.clone(),
        derived: Vec::new(),
    };
    for (i, d) in derived.iter().enumerate() {
        for (k, m) in d.of.iter().enumerate() {
            let path = vec![key("derived"), Seg::Index(i), key("of"), Seg::Index(k)];
            if m.starts_with(DERIVED_PREFIX) {
                p.push(
                    path.clone(),
                    format!(
                        "`{m}` is itself derived: a derived metric reduces the runs' own metrics"
                    ),
                );
            } else {
                check_metric(path.clone(), m, &plain, p);
            }
            check_listed_once(path, &d.of, k, p);
        }
    }
}

/// A metric listed twice would weigh twice in a reduction (or draw one line over another);
/// it is nearly always a copy-and-edit slip where another metric was meant.
fn check_listed_once(path: Vec<Seg>, list: &[String], k: usize, p: &mut Problems) {
    if let Some(first) = list[..k].iter().position(|m| *m == list[k]) {
        p.push(
            path,
            format!(
                "`{}` is listed already (entry {first}): each metric once",
                list[k]
            ),
        );
    }
}

/// A metric an expectation or ordering names must be one the runs produce, of a flow group
/// or link of the scenario: a misspelt one would silently never be checked.
fn check_metric(path: Vec<Seg>, name: &str, names: &Names<'_>, p: &mut Problems) {
    if let Some(derived) = name.strip_prefix(DERIVED_PREFIX) {
        if !names.derived.contains(&derived) {
            p.push(path, unknown("derived metric", derived, &names.derived));
        }
        return;
    }
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
    check_entity(path, &m.entity, names, p);
}

/// The flow group or link an entity names must be one of the scenario's.
fn check_entity(path: Vec<Seg>, entity: &Entity, names: &Names<'_>, p: &mut Problems) {
    match entity {
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
        check_when(vec![key("order"), Seg::Index(i)], &o.when, params, p);
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
                at("expect", i, "tolerance"),
                "`tolerance` is given but there is no `value` to compare with",
            ),
            _ => {}
        }
        for (field, v) in [("value", x.value), ("min", x.min), ("max", x.max)] {
            if v.is_some_and(|v| !v.is_finite()) {
                p.push(at("expect", i, field), "expected a finite number");
            }
        }
        if let (Some(min), Some(max)) = (x.min, x.max)
            && min > max
        {
            p.push(
                at("expect", i, "max"),
                format!("max {max} is below min {min}: no value could satisfy both"),
            );
        }
        check_when(vec![key("expect"), Seg::Index(i)], &x.when, params, p);
    }
}

/// `when` names parameters of the scenario (their values are checked across variants).
fn check_when(table: Vec<Seg>, when: &Params, params: &Params, p: &mut Problems) {
    for k in when.keys() {
        if !params.contains_key(k) {
            let mut path = table.clone();
            path.extend([key("when"), key(k)]);
            p.push(path, unknown("parameter", k, &known(params)));
        }
    }
}
