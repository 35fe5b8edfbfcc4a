//! Aggregation over seeds and evaluation of the scenario's expectations.

use crate::verdict::{self, Sample, Verdict};
use scenario::Scenario;
use scenario::load::display_value;
use scenario::metrics::{Metric, Quantity};
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

impl MetricStats {
    /// Its value in the run of `seed`, where `seeds` are the summary's seeds (a metric
    /// missing from some runs lists its own).
    pub fn at_seed(&self, seeds: &[u64], seed: u64) -> Option<f64> {
        let order = if self.seeds.is_empty() {
            seeds
        } else {
            &self.seeds
        };
        let i = order.iter().position(|s| *s == seed)?;
        self.runs.get(i).copied()
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
    /// For a convergence time: the runs in which the window did not converge, of all runs
    /// (`ours` is then null: no time exists for those runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_converged: Option<NotConverged>,
}

/// Runs whose window did not converge, of all the variant's runs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct NotConverged {
    pub runs: usize,
    pub of: usize,
}

impl NotConverged {
    /// `did not converge (2 of 3 seeds)`.
    pub fn text(self) -> String {
        format!("did not converge ({} of {} seeds)", self.runs, self.of)
    }
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
    /// Whether it holds beyond the seed spread (`verdict == holds`).
    pub pass: bool,
    pub source: String,
    /// The scenario's explanation of a failure, if it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_fails: Option<String>,
    /// Holds, fails or inconclusive under the seed-spread rule (`verdict.rs`); absent in
    /// results written before it, where `pass` alone says holds or fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Each value of `values` over seeds: mean, spread and seeds, or why it has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Sample>,
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
    /// How the results were made (command, overrides, version, machine); absent in
    /// folders written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::provenance::Provenance>,
    /// The intervals a link was down (the scenario's timed events), shaded in time series.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<crate::outages::Outage>,
}

impl Check {
    /// Why `ours` is null: `did not converge (2 of 3 seeds)` or `missing`.
    pub fn absent_text(&self) -> String {
        match self.not_converged {
            Some(n) => n.text(),
            None => "missing".into(),
        }
    }
}

impl OrderCheck {
    pub fn verdict(&self) -> Verdict {
        self.verdict.unwrap_or(if self.pass {
            Verdict::Holds
        } else {
            Verdict::Fails
        })
    }

    /// Whether some value rests on one seed, so that no spread is known.
    pub fn one_seed(&self) -> bool {
        self.samples.iter().any(|s| s.seeds() == 1)
    }

    /// The verdict in words: `holds`, `fails`, `inconclusive`, `holds (1 seed, no spread)`.
    pub fn verdict_text(&self) -> String {
        let word = self.verdict().word();
        if self.one_seed() {
            format!("{word} (1 seed, no spread)")
        } else {
            word.to_string()
        }
    }

    /// What stands between two values when the ordering is printed: `<`, or `<(x1.6)` for
    /// a factor (`<(x0.99)`: at least 99 % of the value before).
    pub fn separator(&self) -> String {
        if self.min_ratio == 1.0 {
            " < ".into()
        } else {
            format!(" <(x{}) ", self.min_ratio)
        }
    }

    /// Our means in the claimed order, with their spread over seeds:
    /// `lia 7.012 ± 0.130 < olia 7.530 ± 0.080`.
    pub fn values_text(&self) -> String {
        let values: Vec<String> = if self.samples.len() == self.values.len() {
            self.values
                .iter()
                .zip(&self.samples)
                .map(|((name, _), s)| s.text(name))
                .collect()
        } else {
            self.values
                .iter()
                .map(|(name, v)| match v {
                    Some(v) => format!("{name} {v:.3}"),
                    None => format!("{name} missing"),
                })
                .collect()
        };
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
    /// No check fails and no ordering fails (an inconclusive ordering is no failure).
    pub fn all_pass(&self) -> bool {
        self.checks().all(|(_, c)| c.pass)
            && self.orders.iter().all(|o| o.verdict() != Verdict::Fails)
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
                .map(|x| evaluate(x, &metrics, rs.len()))
                .collect();
            VariantSummary {
                name: sc.variant_name().to_string(),
                dir: sc.variant_dir(),
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
        provenance: None,
        outages: crate::outages::of(first),
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

/// Whether `metric` is a convergence time or instant, which a run omits when the window
/// did not converge (`measure::convergence`).
fn is_convergence(metric: &str) -> bool {
    Metric::parse(metric)
        .is_some_and(|m| matches!(m.quantity, Quantity::ConvergenceS | Quantity::ConvergedAtS))
}

/// For a convergence metric: the runs of `runs` in which it did not converge, if any.
pub(crate) fn not_converged(
    metric: &str,
    m: &BTreeMap<String, MetricStats>,
    runs: usize,
) -> Option<NotConverged> {
    let converged = m.get(metric).map_or(0, |s| s.runs.len());
    (is_convergence(metric) && converged < runs).then_some(NotConverged {
        runs: runs - converged,
        of: runs,
    })
}

/// The value an ordering ranks in a variant with `runs` runs: the metric (over `over`: the
/// ratio of the means, with the spread of the per-seed ratios) over seeds.
fn sample_of(
    metric: &str,
    over: Option<&str>,
    m: &BTreeMap<String, MetricStats>,
    runs: usize,
) -> Sample {
    if let Some(n) = not_converged(metric, m, runs) {
        return Sample::NotConverged {
            converged: n.of - n.runs,
            of: n.of,
        };
    }
    let Some(mean) = ratio_of(metric, over, m) else {
        return Sample::Missing;
    };
    let spread = match over {
        None => m.get(metric).cloned(),
        Some(d) => per_seed_ratios(m.get(metric), m.get(d)),
    };
    match spread {
        Some(s) => Sample::Seeds {
            mean,
            std: s.std,
            seeds: s.runs.len(),
        },
        None => Sample::Seeds {
            mean,
            std: 0.0,
            seeds: 1,
        },
    }
}

/// The ratio of two metrics in each run both have (with their values in the same runs).
pub(crate) fn per_seed_ratios(
    a: Option<&MetricStats>,
    b: Option<&MetricStats>,
) -> Option<MetricStats> {
    let (a, b) = (a?, b?);
    if a.runs.len() != b.runs.len() || a.seeds != b.seeds {
        return None;
    }
    let ratios: Vec<f64> = a
        .runs
        .iter()
        .zip(&b.runs)
        .filter(|(_, d)| **d != 0.0)
        .map(|(n, d)| n / d)
        .collect();
    (ratios.len() == a.runs.len()).then(|| MetricStats::of(&ratios))
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
            let mut samples: Vec<Sample> = Vec::new();
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
                let sample = sample_of(
                    &o.metric,
                    o.over.as_deref(),
                    &vs[i].metrics,
                    vs[i].stats.len(),
                );
                values.push((want, sample.mean()));
                samples.push(sample);
            }
            let verdict = verdict::ordering(&samples, o.min_ratio);
            Some(OrderCheck {
                statement: o.statement.clone(),
                metric: o.metric.clone(),
                over: o.over.clone(),
                param: o.param.clone(),
                context,
                values,
                min_ratio: o.min_ratio,
                pass: verdict == Verdict::Holds,
                source: o.source.clone(),
                if_fails: o.if_fails.clone(),
                verdict: Some(verdict),
                samples,
            })
        })
        .collect()
}

/// A check of one expectation in a variant with `runs` runs. A convergence time that some
/// runs do not have (their window did not converge) gives no value: the mean of those that
/// did would hide the others.
fn evaluate(x: &ExpectSpec, metrics: &BTreeMap<String, MetricStats>, runs: usize) -> Check {
    let not_converged = not_converged(&x.metric, metrics, runs);
    let ours = ratio_of(&x.metric, x.over.as_deref(), metrics).filter(|_| not_converged.is_none());
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
        not_converged,
    }
}

#[cfg(test)]
pub(crate) mod tests {
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
                &m,
                1
            )
            .pass
        );
        assert!(
            !evaluate(
                &x(Some(10.0), Some(Tolerance::Relative(0.05)), None, None),
                &m,
                1
            )
            .pass
        );
        assert!(evaluate(&x(None, None, Some(2.9), Some("b")), &m, 1).pass);
        assert!(!evaluate(&x(None, None, Some(3.1), Some("b")), &m, 1).pass);
        let missing = ExpectSpec {
            metric: "nope".into(),
            ..x(None, None, Some(0.0), None)
        };
        assert!(!evaluate(&missing, &m, 1).pass);
    }

    #[test]
    fn a_convergence_time_some_runs_lack_is_did_not_converge_not_a_mean() {
        let t = "flow.m#0.sf1.convergence_s";
        let mut m = BTreeMap::new();
        // Two of three runs converged (10 s, 12 s): a mean of 11 s would hide the third.
        m.insert(t.to_string(), MetricStats::of(&[10.0, 12.0]));
        let x = ExpectSpec {
            metric: t.into(),
            over: None,
            value: None,
            tolerance: None,
            min: None,
            max: Some(40.0),
            when: Default::default(),
            source: String::new(),
        };
        let c = evaluate(&x, &m, 3);
        assert_eq!((c.ours, c.pass), (None, false));
        assert_eq!(c.not_converged, Some(NotConverged { runs: 1, of: 3 }));
        assert_eq!(c.absent_text(), "did not converge (1 of 3 seeds)");
        // In every run: a time, as before.
        let c = evaluate(&x, &m, 2);
        assert_eq!((c.ours, c.pass, c.not_converged), (Some(11.0), true, None));
        // An ordering sees a window that never converged as slower than any that did.
        assert_eq!(
            sample_of(t, None, &m, 3),
            Sample::NotConverged {
                converged: 2,
                of: 3
            }
        );
        // Other metrics missing from runs are not convergence: their mean stands.
        m.insert("group.g.goodput_mbps".into(), MetricStats::of(&[1.0, 3.0]));
        assert_eq!(
            sample_of("group.g.goodput_mbps", None, &m, 3),
            Sample::Seeds {
                mean: 2.0,
                std: 2f64.sqrt(),
                seeds: 2
            }
        );
    }

    #[test]
    fn a_ratio_takes_its_spread_from_the_per_seed_ratios() {
        let mut m = BTreeMap::new();
        m.insert("a".to_string(), MetricStats::of(&[2.0, 4.0]));
        m.insert("b".to_string(), MetricStats::of(&[1.0, 2.0]));
        // Each seed's ratio is 2: no spread, although both metrics spread.
        assert_eq!(
            sample_of("a", Some("b"), &m, 2),
            Sample::Seeds {
                mean: 2.0,
                std: 0.0,
                seeds: 2
            }
        );
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

    /// Two hosts, one link (`wifi`), one flow, 10 s.
    pub(crate) const ONE_LINK: &str = r#"
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
name = "wifi"
a = "a"
b = "b"
rate = "10Mbps"
delay = "10ms"
[[flow]]
name = "f"
from = "a"
to = "b"
"#;

    /// The variants of a scenario's text.
    pub(crate) fn load(toml: &str) -> Vec<Scenario> {
        let opts = scenario::LoadOptions {
            overrides: Vec::new(),
        };
        scenario::load_str(toml, "s.toml".as_ref(), &opts).unwrap()
    }

    fn one_variant() -> Vec<Scenario> {
        load(ONE_LINK)
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
