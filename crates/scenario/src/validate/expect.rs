//! What a run is judged by: `[[plot]]`s, `[[order]]`s across variants and `[[expect]]`ations
//! against published figures, each naming parameters of the scenario.

use super::{Problems, at, key, unknown};
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

pub fn check_orders(orders: &[OrderSpec], params: &Params, p: &mut Problems) {
    for (i, o) in orders.iter().enumerate() {
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

pub fn check_expects(expects: &[ExpectSpec], params: &Params, p: &mut Problems) {
    for (i, x) in expects.iter().enumerate() {
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
