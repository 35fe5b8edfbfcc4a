//! Two results of the same scenario side by side (typically the simulator's and the kernel
//! backend's): every checked metric, every group's goodput and flow completion time with
//! the published figure, both values, their difference and whether it lies inside the two
//! runs' seed spread; how many of all the metrics both have differ by more than it (the
//! `--html` page lists them all); every ordering, whether it holds in each.

use crate::compare_html::{SpreadTally, within_spread};
use crate::summary::{MetricStats, Summary, VariantSummary, per_seed_ratios};
use crate::verdict::Verdict;
use scenario::metrics::{Diagnostic, Entity, Metric, Quantity};
use std::fmt::Write;

fn fmt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_else(|| "–".into())
}

/// The metrics worth comparing in a variant: those checked against published figures or
/// bounds, then every group's goodput and flow completion time.
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
        if is_group_headline(k) && !names.contains(k) {
            names.push(k.clone());
        }
    }
    names
}

/// `group.<name>.goodput_mbps` or `group.<name>.fct_s`: a group's goodput (not a
/// subflow's) or its flows' completion time.
fn is_group_headline(name: &str) -> bool {
    matches!(
        Metric::parse(name),
        Some(Metric {
            entity: Entity::Group(_),
            quantity: Quantity::GoodputMbps | Quantity::FctS
        })
    )
}

/// A compared metric's values over seeds: its own, or for a ratio `a / b` the ratio in
/// each seed (when both have every seed).
fn stats_of(v: &VariantSummary, name: &str) -> Option<MetricStats> {
    let Some((a, b)) = name.split_once(" / ") else {
        return v.metrics.get(name).cloned();
    };
    per_seed_ratios(v.metrics.get(a), v.metrics.get(b))
}

/// Whether the two values of a compared metric differ by no more than their seed spread:
/// `yes`, `**no**`, or `–` with one seed each.
fn spread_verdict(va: &VariantSummary, vb: &VariantSummary, name: &str) -> &'static str {
    let judged = stats_of(va, name)
        .zip(stats_of(vb, name))
        .and_then(|(a, b)| within_spread(&a, &b));
    match judged {
        Some(true) => "yes",
        Some(false) => "**no**",
        None => "–",
    }
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

/// Kernel counters that explain a difference from the simulator (see the kernel backend's
/// `nstat`): MPTCP connections that fell back to TCP, subflows declared stale, data
/// reinjected at the MPTCP level and received twice, TCP retransmission timeouts.
const EXPLAINING: &[&str] = &[
    "MPTcpExtMPCapableFallbackACK",
    "MPTcpExtMPCapableFallbackSYNACK",
    "MPTcpExtSubflowStale",
    "MPTcpExtMPTCPRetrans",
    "MPTcpExtDuplicateData",
    "TcpExtTCPTimeouts",
];

/// One line per variant of `s` with its explaining kernel counters (means over seeds).
fn kernel_notes(s: &Summary) -> Vec<String> {
    s.variants
        .iter()
        .filter_map(|v| {
            let shown: Vec<String> = v
                .metrics
                .iter()
                .filter(|(_, m)| m.mean != 0.0)
                .filter_map(|(k, m)| {
                    let shown = match Diagnostic::parse(k)? {
                        Diagnostic::MptcpFallbacks => "mptcp_fallbacks".to_string(),
                        Diagnostic::CcRepairs => "cc_repairs".to_string(),
                        Diagnostic::HostCounter { host, counter }
                            if EXPLAINING.contains(&counter.as_str()) =>
                        {
                            format!("{host}.{counter}")
                        }
                        _ => return None,
                    };
                    Some(format!("`{shown}` {}", fmt(Some(m.mean))))
                })
                .collect();
            (!shown.is_empty()).then(|| format!("- {}: {}", v.name, shown.join(", ")))
        })
        .collect()
}

/// Markdown comparing `a` (e.g. the simulator) with `b` (e.g. the kernel).
pub fn compare(a: &Summary, b: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## {}: {} against {}\n\n{}\n\nSeeds: {} {:?}, {} {:?}. Difference is {} minus {}; it is \
         inside the seed spread when at most the sum of the two standard deviations over seeds \
         (for a ratio, of its per-seed values).\n",
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
        "| variant | metric | published | {} | {} | difference | relative | inside the seed spread |\n|---|---|---|---|---|---|---|---|",
        a.backend, b.backend
    );
    for va in &a.variants {
        let Some(vb) = b.variants.iter().find(|v| v.name == va.name) else {
            let _ = writeln!(
                out,
                "| {} | (not run by {}) | | | | | | |",
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
                "| {} | `{m}` | {} | {} | {} | {diff} | {rel} | {} |",
                va.name,
                published(va, &m),
                fmt(x),
                fmt(y),
                spread_verdict(va, vb, &m)
            );
        }
    }
    let SpreadTally {
        both,
        judged,
        outside,
    } = SpreadTally::of(a, b);
    let _ = writeln!(
        out,
        "\nEvery metric both have: {both}; {judged} with a seed spread, of which {outside} \
         outside it (`mptcp-lab compare A B --html FILE` lists them all)."
    );
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
                    let word = match o.verdict() {
                        Verdict::Holds => o.verdict_text(),
                        _ => format!("**{}**", o.verdict_text()),
                    };
                    format!("{word} ({})", o.values_text())
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
    for s in [a, b] {
        let notes = kernel_notes(s);
        if !notes.is_empty() {
            let _ = writeln!(
                out,
                "\n{} counters (nstat, mean over seeds; `mptcp_fallbacks`: flows whose MPTCP \
                 connection fell back to TCP):\n\n{}",
                s.backend,
                notes.join("\n")
            );
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::summary::MetricStats;
    use std::collections::BTreeMap;

    pub(crate) fn stats(mean: f64) -> MetricStats {
        MetricStats {
            mean,
            std: 0.0,
            min: mean,
            max: mean,
            runs: vec![mean],
            seeds: Vec::new(),
        }
    }

    /// One variant, one seed: each metric's value.
    pub(crate) fn summary(backend: &str, metrics: &[(&str, f64)]) -> Summary {
        summary_of(
            backend,
            metrics
                .iter()
                .map(|(k, v)| (k.to_string(), stats(*v)))
                .collect(),
        )
    }

    /// One variant named `v`, with these metrics.
    pub(crate) fn summary_of(backend: &str, metrics: BTreeMap<String, MetricStats>) -> Summary {
        Summary {
            format: 1,
            scenario: "s".into(),
            file: "s.toml".into(),
            description: String::new(),
            source: String::new(),
            backend: backend.into(),
            seeds: vec![1],
            variants: vec![VariantSummary {
                name: "v".into(),
                dir: "v".into(),
                params: BTreeMap::new(),
                metrics,
                checks: Vec::new(),
                stats: Vec::new(),
                emulator: Vec::new(),
            }],
            orders: Vec::new(),
            plots: Vec::new(),
            tables: Vec::new(),
            provenance: None,
            outages: Vec::new(),
        }
    }

    #[test]
    fn goodputs_side_by_side_with_their_difference() {
        let sim = summary("sim", &[("group.a.goodput_mbps", 4.0)]);
        let kernel = summary("kernel", &[("group.a.goodput_mbps", 3.0)]);
        let md = compare(&sim, &kernel);
        assert!(
            md.contains("| v | `group.a.goodput_mbps` |  | 4.000 | 3.000 | -1.000 | -25 % | – |"),
            "{md}"
        );
    }

    fn seeds(runs: &[f64]) -> MetricStats {
        MetricStats::of(runs)
    }

    /// A difference inside both spreads is `yes`, one beyond them `**no**`; a ratio is
    /// judged by its per-seed values; completion times are compared too; the tally counts
    /// every metric both have.
    #[test]
    fn each_difference_is_judged_against_the_seed_spread() {
        let variant = |goodput: &[f64], tcp: &[f64], fct: &[f64], other: &[f64]| {
            BTreeMap::from([
                ("group.m.goodput_mbps".to_string(), seeds(goodput)),
                ("group.t.goodput_mbps".to_string(), seeds(tcp)),
                ("group.f.fct_s".to_string(), seeds(fct)),
                ("link.x.ab.drops".to_string(), seeds(other)),
            ])
        };
        let mut sim = summary_of(
            "sim",
            variant(&[4.0, 6.0], &[5.0, 5.0], &[1.0, 1.2], &[10.0, 10.0]),
        );
        sim.seeds = vec![1, 2];
        sim.variants[0].checks.push(crate::summary::Check {
            metric: "group.m.goodput_mbps".into(),
            over: Some("group.t.goodput_mbps".into()),
            ours: None,
            published: None,
            tolerance: None,
            min: None,
            max: None,
            pass: true,
            source: String::new(),
            not_converged: None,
        });
        let mut kernel = summary_of(
            "kernel",
            variant(&[5.0, 7.0], &[5.0, 5.0], &[2.0, 2.2], &[12.0, 12.0]),
        );
        kernel.seeds = vec![1, 2];
        let md = compare(&sim, &kernel);
        // Goodput: 5 against 6, spreads 1.41 each.
        assert!(
            md.contains("`group.m.goodput_mbps` |  | 5.000 | 6.000 | +1.000 | +20 % | yes |"),
            "{md}"
        );
        // Completion time: 1.1 against 2.1, spreads 0.14 each.
        assert!(
            md.contains("`group.f.fct_s` |  | 1.100 | 2.100 | +1.000 | +91 % | **no** |"),
            "{md}"
        );
        // The ratio's per-seed values: 0.8, 1.2 against 1.0, 1.4.
        assert!(md.contains("`group.m.goodput_mbps / group.t.goodput_mbps` |  | 1.000 | 1.200 | +0.200 | +20 % | yes |"), "{md}");
        // Four metrics in both, two with a spread (the drops and the TCP goodput have none),
        // one beyond it.
        assert!(
            md.contains("Every metric both have: 4; 2 with a seed spread, of which 1 outside it"),
            "{md}"
        );
    }

    #[test]
    fn names_the_kernel_counters_that_explain_a_difference() {
        let sim = summary("sim", &[("group.a.goodput_mbps", 4.0)]);
        let kernel = summary(
            "kernel",
            &[
                ("group.a.goodput_mbps", 3.0),
                ("kernel.mptcp_fallbacks", 1.0),
                ("kernel.s1.MPTcpExtMPCapableFallbackACK", 1.0),
                ("kernel.s1.MPTcpExtMPCapableSYNRX", 5.0),
                ("kernel.c.MPTcpExtSubflowStale", 0.0),
            ],
        );
        let md = compare(&sim, &kernel);
        assert!(
            md.contains("- v: `mptcp_fallbacks` 1.000, `s1.MPTcpExtMPCapableFallbackACK` 1.000"),
            "{md}"
        );
        assert!(
            !md.contains("SYNRX") && !md.contains("SubflowStale"),
            "{md}"
        );
        assert!(!compare(&sim, &sim).contains("counters"));
    }
}
