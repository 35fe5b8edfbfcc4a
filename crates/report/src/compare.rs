//! Two results of the same scenario side by side (typically the simulator's and the kernel
//! backend's): every checked metric and every group goodput with the published figure, both
//! values and their difference; every ordering, whether it holds in each.

use crate::summary::{Summary, VariantSummary};
use std::fmt::Write;

fn fmt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_else(|| "–".into())
}

/// The metrics worth comparing in a variant: those checked against published figures or
/// bounds, then every group's goodput.
fn metrics_of(v: &VariantSummary) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in &v.checks {
        let name = match &c.over {
            Some(o) => format!("{} / {o}", c.metric),
            None => c.metric.clone(),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    for k in v.metrics.keys() {
        if k.starts_with("group.") && k.ends_with(".goodput_mbps") && !names.contains(k) {
            names.push(k.clone());
        }
    }
    names
}

fn value(v: &VariantSummary, name: &str) -> Option<f64> {
    match name.split_once(" / ") {
        Some((a, b)) => {
            let (a, b) = (v.metrics.get(a)?.mean, v.metrics.get(b)?.mean);
            (b != 0.0).then(|| a / b)
        }
        None => v.metrics.get(name).map(|m| m.mean),
    }
}

fn published(v: &VariantSummary, name: &str) -> String {
    v.checks
        .iter()
        .filter(|c| match &c.over {
            Some(o) => format!("{} / {o}", c.metric) == name,
            None => c.metric == name,
        })
        .map(|c| match (c.published, &c.tolerance, c.min, c.max) {
            (Some(p), Some(t), _, _) => format!("{p} {t}"),
            (_, _, Some(m), None) => format!("≥ {m}"),
            (_, _, None, Some(m)) => format!("≤ {m}"),
            (_, _, Some(a), Some(b)) => format!("{a}..{b}"),
            _ => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Markdown comparing `a` (e.g. the simulator) with `b` (e.g. the kernel).
pub fn compare(a: &Summary, b: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## {}: {} against {}\n\n{}\n\nSeeds: {} {:?}, {} {:?}. Difference is {} minus {}.\n",
        a.scenario,
        b.backend,
        a.backend,
        a.source,
        a.backend,
        a.seeds,
        b.backend,
        b.seeds,
        b.backend,
        a.backend
    );
    let _ = writeln!(
        out,
        "| variant | metric | published | {} | {} | difference | relative |\n|---|---|---|---|---|---|---|",
        a.backend, b.backend
    );
    for va in &a.variants {
        let Some(vb) = b.variants.iter().find(|v| v.name == va.name) else {
            let _ = writeln!(
                out,
                "| {} | (not run by {}) | | | | | |",
                va.name, b.backend
            );
            continue;
        };
        for m in metrics_of(va) {
            let (x, y) = (value(va, &m), value(vb, &m));
            let (diff, rel) = match (x, y) {
                (Some(x), Some(y)) => (
                    format!("{:+.3}", y - x),
                    if x != 0.0 {
                        format!("{:+.0} %", (y - x) / x.abs() * 100.0)
                    } else {
                        "–".into()
                    },
                ),
                _ => ("–".into(), "–".into()),
            };
            let _ = writeln!(
                out,
                "| {} | `{m}` | {} | {} | {} | {diff} | {rel} |",
                va.name,
                published(va, &m),
                fmt(x),
                fmt(y)
            );
        }
    }
    if !a.orders.is_empty() || !b.orders.is_empty() {
        let _ = writeln!(
            out,
            "\n| ordering | under | {} | {} |\n|---|---|---|---|",
            a.backend, b.backend
        );
        let holds = |s: &Summary, statement: &str, context: &str| -> String {
            s.orders
                .iter()
                .find(|o| o.statement == statement && o.context == context)
                .map(|o| {
                    let vals: Vec<String> = o
                        .values
                        .iter()
                        .map(|(n, v)| format!("{n} {}", fmt(*v)))
                        .collect();
                    format!(
                        "{} ({})",
                        if o.pass { "holds" } else { "**fails**" },
                        vals.join(" < ")
                    )
                })
                .unwrap_or_else(|| "not run".into())
        };
        let mut seen = Vec::new();
        for o in a.orders.iter().chain(&b.orders) {
            let key = (o.statement.clone(), o.context.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                o.statement,
                o.context,
                holds(a, &o.statement, &o.context),
                holds(b, &o.statement, &o.context)
            );
        }
    }
    out
}
