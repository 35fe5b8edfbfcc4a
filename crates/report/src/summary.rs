//! Aggregation over seeds and evaluation of the scenario's expectations.

use scenario::Scenario;
use scenario::load::display_value;
use scenario::results::{EmulatorHealth, RunResult, RunStats};
use scenario::spec::{ExpectSpec, OrderSpec, Tolerance};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const FORMAT_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MetricStats {
    pub mean: f64,
    /// Sample standard deviation over seeds (0 with one seed).
    pub std: f64,
    pub min: f64,
    pub max: f64,
    pub runs: Vec<f64>,
    /// The seed of each of `runs`, written only when the metric is missing from some runs
    /// (otherwise `runs` follows the summary's `seeds`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<u64>,
}

impl MetricStats {
    pub fn of(xs: &[f64]) -> Self {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n.max(1.0);
        let var = if xs.len() > 1 {
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        MetricStats {
            mean,
            std: var.sqrt(),
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            runs: xs.to_vec(),
            seeds: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Check {
    pub metric: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over: Option<String>,
    /// Our value (mean over seeds); null when the metric does not exist in the run.
    pub ours: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    pub pass: bool,
    pub source: String,
}

/// One evaluated ordering: the statement, and the metric of each value in the claimed order.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OrderCheck {
    pub statement: String,
    pub metric: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over: Option<String>,
    pub param: String,
    /// The other parameters' values this ordering was checked under.
    pub context: String,
    /// (value of `param`, our mean), smallest expected first.
    pub values: Vec<(String, Option<f64>)>,
    pub min_ratio: f64,
    pub pass: bool,
    pub source: String,
    /// The scenario's explanation of a failure, if it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_fails: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VariantSummary {
    pub name: String,
    /// Folder of this variant's series, relative to the summary.
    pub dir: String,
    pub params: BTreeMap<String, serde_json::Value>,
    pub metrics: BTreeMap<String, MetricStats>,
    pub checks: Vec<Check>,
    pub stats: Vec<RunStats>,
    /// Kernel backend, per run (seed): the emulator's own losses and lateness, and whether
    /// they make the run unreliable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emulator: Vec<EmulatorHealth>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub format: u32,
    pub scenario: String,
    pub file: String,
    pub description: String,
    pub source: String,
    pub backend: String,
    pub seeds: Vec<u64>,
    pub variants: Vec<VariantSummary>,
    #[serde(default)]
    pub orders: Vec<OrderCheck>,
    #[serde(default)]
    pub plots: Vec<scenario::spec::PlotSpec>,
    /// The papers' tables, in their layout (`[[table]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<scenario::spec::TableSpec>,
}

impl OrderCheck {
    /// What stands between two values when the ordering is printed: `<`, or `<(x1.6)` for
    /// a factor (`<(x0.99)`: at least 99 % of the value before).
    pub fn separator(&self) -> String {
        if self.min_ratio == 1.0 {
            " < ".into()
        } else {
            format!(" <(x{}) ", self.min_ratio)
        }
    }

    /// Our means in the claimed order: `lia 7.012 < olia 7.530`.
    pub fn values_text(&self) -> String {
        let values: Vec<String> = self
            .values
            .iter()
            .map(|(name, v)| match v {
                Some(v) => format!("{name} {v:.3}"),
                None => format!("{name} missing"),
            })
            .collect();
        values.join(&self.separator())
    }
}

impl Summary {
    /// Runs whose emulator lost or delayed too much itself: (variant, the figures).
    pub fn unreliable_runs(&self) -> impl Iterator<Item = (&VariantSummary, &EmulatorHealth)> {
        self.variants
            .iter()
            .flat_map(|v| v.emulator.iter().map(move |e| (v, e)))
            .filter(|(_, e)| e.unreliable)
    }
    pub fn checks(&self) -> impl Iterator<Item = (&VariantSummary, &Check)> {
        self.variants
            .iter()
            .flat_map(|v| v.checks.iter().map(move |c| (v, c)))
    }
    pub fn all_pass(&self) -> bool {
        self.checks().all(|(_, c)| c.pass) && self.orders.iter().all(|o| o.pass)
    }
}

/// A variant's folder name: its parameters, or `default`.
pub fn variant_dir(variant: &str) -> String {
    if variant.is_empty() {
        "default".into()
    } else {
        variant.replace(['/', ' '], "_")
    }
}

/// Builds the summary of a scenario's runs: `runs[v]` are the runs (one per seed) of
/// `variants[v]`.
pub fn summarize(variants: &[Scenario], runs: &[Vec<RunResult>], backend: &str) -> Summary {
    let first = &variants[0];
    let seeds = runs
        .first()
        .map(|r| r.iter().map(|x| x.seed).collect())
        .unwrap_or_default();
    let vs: Vec<VariantSummary> = variants
        .iter()
        .zip(runs)
        .map(|(sc, rs)| {
            let mut names: Vec<&String> = rs.iter().flat_map(|r| r.metrics.keys()).collect();
            names.sort();
            names.dedup();
            let metrics: BTreeMap<String, MetricStats> = names
                .into_iter()
                .map(|n| {
                    let (xs, seeds): (Vec<f64>, Vec<u64>) = rs
                        .iter()
                        .filter_map(|r| Some((*r.metrics.get(n)?, r.seed)))
                        .unzip();
                    let mut stats = MetricStats::of(&xs);
                    if xs.len() < rs.len() {
                        stats.seeds = seeds;
                    }
                    (n.clone(), stats)
                })
                .collect();
            let checks = sc
                .expects
                .iter()
                .filter(|x| applies(x, sc))
                .map(|x| evaluate(x, &metrics))
                .collect();
            VariantSummary {
                name: sc.variant_name().to_string(),
                dir: variant_dir(&sc.variant),
                params: sc
                    .params
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
                        )
                    })
                    .collect(),
                metrics,
                checks,
                stats: rs.iter().map(|r| r.stats.clone()).collect(),
                emulator: rs.iter().filter_map(|r| r.emulator.clone()).collect(),
            }
        })
        .collect();
    let orders = first
        .orders
        .iter()
        .flat_map(|o| evaluate_order(o, variants, &vs))
        .collect();
    Summary {
        orders,
        plots: first.plots.clone(),
        tables: first.tables.clone(),
        format: FORMAT_VERSION,
        scenario: first.name.clone(),
        file: first.file.display().to_string(),
        description: first.description.clone(),
        source: first.source.clone(),
        backend: backend.into(),
        seeds,
        variants: vs,
    }
}

fn applies(x: &ExpectSpec, sc: &Scenario) -> bool {
    matches_when(&x.when, sc)
}

/// Whether a variant has every parameter value `when` names; a list names any of its values.
fn matches_when(when: &BTreeMap<String, toml::Value>, sc: &Scenario) -> bool {
    when.iter().all(|(k, v)| {
        sc.params.get(k).is_some_and(|p| {
            let p = display_value(p);
            match v {
                toml::Value::Array(any) => any.iter().any(|v| display_value(v) == p),
                v => display_value(v) == p,
            }
        })
    })
}

/// The mean of `metric` (over `over`) in a variant.
fn ratio_of(metric: &str, over: Option<&str>, m: &BTreeMap<String, MetricStats>) -> Option<f64> {
    let num = m.get(metric).map(|s| s.mean);
    match over {
        None => num,
        Some(d) => match (num, m.get(d).map(|s| s.mean)) {
            (Some(a), Some(b)) if b != 0.0 => Some(a / b),
            _ => None,
        },
    }
}

/// Evaluates an ordering once per combination of the parameters other than `o.param`.
fn evaluate_order(o: &OrderSpec, variants: &[Scenario], vs: &[VariantSummary]) -> Vec<OrderCheck> {
    let varies = |k: &String| {
        let first = variants[0].params.get(k).map(display_value);
        variants
            .iter()
            .any(|v| v.params.get(k).map(display_value) != first)
    };
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, sc) in variants.iter().enumerate() {
        if !matches_when(&o.when, sc) {
            continue;
        }
        let context: Vec<String> = sc
            .params
            .iter()
            .filter(|(k, _)| **k != o.param && varies(k))
            .map(|(k, v)| format!("{k}={}", display_value(v)))
            .collect();
        groups.entry(context.join(",")).or_default().push(i);
    }
    groups
        .into_iter()
        .filter_map(|(context, members)| {
            let mut values: Vec<(String, Option<f64>)> = Vec::new();
            for want in &o.ascending {
                let want = display_value(want);
                // A variant that was not run (fixed by --set, or beyond a backend) makes
                // the ordering moot here, not false.
                let i = members.iter().copied().find(|&i| {
                    variants[i]
                        .params
                        .get(&o.param)
                        .is_some_and(|p| display_value(p) == want)
                })?;
                values.push((want, ratio_of(&o.metric, o.over.as_deref(), &vs[i].metrics)));
            }
            let pass = values.windows(2).all(|w| match (w[0].1, w[1].1) {
                (Some(a), Some(b)) => o.holds(a, b),
                _ => false,
            });
            Some(OrderCheck {
                statement: o.statement.clone(),
                metric: o.metric.clone(),
                over: o.over.clone(),
                param: o.param.clone(),
                context,
                values,
                min_ratio: o.min_ratio,
                pass,
                source: o.source.clone(),
                if_fails: o.if_fails.clone(),
            })
        })
        .collect()
}

fn evaluate(x: &ExpectSpec, metrics: &BTreeMap<String, MetricStats>) -> Check {
    let ours = ratio_of(&x.metric, x.over.as_deref(), metrics);
    let pass = ours.is_some_and(|o| {
        let near = match (x.value, x.tolerance) {
            (Some(v), Some(t)) => t.allows(o, v),
            _ => true,
        };
        near && x.min.is_none_or(|m| o >= m) && x.max.is_none_or(|m| o <= m)
    });
    Check {
        metric: x.metric.clone(),
        over: x.over.clone(),
        ours,
        published: x.value,
        tolerance: x.tolerance.map(|t: Tolerance| t.to_string()),
        min: x.min,
        max: x.max,
        pass,
        source: x.source.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_over_seeds() {
        let s = MetricStats::of(&[1.0, 2.0, 3.0]);
        assert_eq!((s.mean, s.min, s.max), (2.0, 1.0, 3.0));
        assert!((s.std - 1.0).abs() < 1e-12);
        assert_eq!(MetricStats::of(&[5.0]).std, 0.0);
    }

    #[test]
    fn checks_pass_and_fail() {
        let mut m = BTreeMap::new();
        m.insert("a".to_string(), MetricStats::of(&[9.0]));
        m.insert("b".to_string(), MetricStats::of(&[3.0]));
        let x = |value, tol, min, over: Option<&str>| ExpectSpec {
            metric: "a".into(),
            over: over.map(String::from),
            value,
            tolerance: tol,
            min,
            max: None,
            when: Default::default(),
            source: String::new(),
        };
        assert!(
            evaluate(
                &x(Some(10.0), Some(Tolerance::Relative(0.1)), None, None),
                &m
            )
            .pass
        );
        assert!(
            !evaluate(
                &x(Some(10.0), Some(Tolerance::Relative(0.05)), None, None),
                &m
            )
            .pass
        );
        assert!(evaluate(&x(None, None, Some(2.9), Some("b")), &m).pass);
        assert!(!evaluate(&x(None, None, Some(3.1), Some("b")), &m).pass);
        let missing = ExpectSpec {
            metric: "nope".into(),
            ..x(None, None, Some(0.0), None)
        };
        assert!(!evaluate(&missing, &m).pass);
    }

    fn run(seed: u64, emulator: Option<EmulatorHealth>) -> RunResult {
        RunResult {
            scenario: "s".into(),
            variant: String::new(),
            backend: "kernel".into(),
            seed,
            params: BTreeMap::new(),
            metrics: BTreeMap::new(),
            flow_goodput_mbps: BTreeMap::new(),
            series: Vec::new(),
            stats: RunStats::default(),
            emulator,
        }
    }

    fn one_variant() -> Vec<Scenario> {
        let toml = r#"
[scenario]
name = "s"
duration = "10s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "10ms"
[[flow]]
name = "f"
from = "a"
to = "b"
"#;
        let opts = scenario::LoadOptions {
            overrides: Vec::new(),
        };
        scenario::load_str(toml, "s.toml".as_ref(), &opts).unwrap()
    }

    #[test]
    fn each_kernel_run_keeps_its_emulator_figures_and_flag() {
        let flagged = EmulatorHealth {
            seed: 2,
            unreliable: true,
            why: vec!["the emulator lost 30 of 1000 packets itself".into()],
            ..EmulatorHealth::default()
        };
        let fine = EmulatorHealth {
            seed: 1,
            ..EmulatorHealth::default()
        };
        let runs = vec![vec![run(1, Some(fine)), run(2, Some(flagged.clone()))]];
        let summary = summarize(&one_variant(), &runs, "kernel");
        assert_eq!(summary.variants[0].emulator.len(), 2);
        let unreliable: Vec<_> = summary.unreliable_runs().collect();
        assert_eq!(unreliable.len(), 1);
        assert_eq!(unreliable[0].1, &flagged);
        let json = serde_json::to_value(&summary).unwrap();
        let e = &json["variants"][0]["emulator"];
        assert_eq!(e[1]["unreliable"], true);
        assert_eq!(e[0]["unreliable"], false);
        assert_eq!(e[1]["seed"], 2);
    }

    #[test]
    fn a_metric_missing_from_some_runs_says_which_seeds_its_values_are() {
        let with = |seed, metrics: &[(&str, f64)]| RunResult {
            metrics: metrics.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
            ..run(seed, None)
        };
        let runs = vec![vec![
            with(1, &[("a", 1.0), ("b", 10.0)]),
            with(2, &[("a", 2.0)]),
            with(3, &[("a", 3.0), ("b", 30.0)]),
        ]];
        let summary = summarize(&one_variant(), &runs, "sim");
        let json = serde_json::to_value(&summary).unwrap();
        let metrics = &json["variants"][0]["metrics"];
        assert_eq!(metrics["b"]["runs"], serde_json::json!([10.0, 30.0]));
        assert_eq!(metrics["b"]["seeds"], serde_json::json!([1, 3]));
        // In every run: `runs` follows the summary's seeds, no `seeds` written.
        assert_eq!(metrics["a"]["runs"], serde_json::json!([1.0, 2.0, 3.0]));
        assert!(metrics["a"].get("seeds").is_none());
    }

    #[test]
    fn simulator_summaries_have_no_emulator_section() {
        let summary = summarize(&one_variant(), &[vec![run(1, None)]], "sim");
        let json = serde_json::to_value(&summary).unwrap();
        assert!(json["variants"][0].get("emulator").is_none(), "{json}");
        assert_eq!(summary.unreliable_runs().count(), 0);
    }
}
