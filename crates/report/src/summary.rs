//! Aggregation over seeds and evaluation of the scenario's expectations.

use scenario::Scenario;
use scenario::load::display_value;
use scenario::results::{RunResult, RunStats};
use scenario::spec::{ExpectSpec, Tolerance};
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

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VariantSummary {
    pub name: String,
    /// Folder of this variant's series, relative to the summary.
    pub dir: String,
    pub params: BTreeMap<String, serde_json::Value>,
    pub metrics: BTreeMap<String, MetricStats>,
    pub checks: Vec<Check>,
    pub stats: Vec<RunStats>,
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
}

impl Summary {
    pub fn checks(&self) -> impl Iterator<Item = (&VariantSummary, &Check)> {
        self.variants
            .iter()
            .flat_map(|v| v.checks.iter().map(move |c| (v, c)))
    }
    pub fn all_pass(&self) -> bool {
        self.checks().all(|(_, c)| c.pass)
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
    let vs = variants
        .iter()
        .zip(runs)
        .map(|(sc, rs)| {
            let mut names: Vec<&String> = rs.iter().flat_map(|r| r.metrics.keys()).collect();
            names.sort();
            names.dedup();
            let metrics: BTreeMap<String, MetricStats> = names
                .into_iter()
                .map(|n| {
                    let xs: Vec<f64> = rs
                        .iter()
                        .filter_map(|r| r.metrics.get(n).copied())
                        .collect();
                    (n.clone(), MetricStats::of(&xs))
                })
                .collect();
            let checks = sc
                .expects
                .iter()
                .filter(|x| applies(x, sc))
                .map(|x| evaluate(x, &metrics))
                .collect();
            VariantSummary {
                name: if sc.variant.is_empty() {
                    "default".into()
                } else {
                    sc.variant.clone()
                },
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
            }
        })
        .collect();
    Summary {
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
    x.when.iter().all(|(k, v)| {
        sc.params
            .get(k)
            .is_some_and(|p| display_value(p) == display_value(v))
    })
}

fn evaluate(x: &ExpectSpec, metrics: &BTreeMap<String, MetricStats>) -> Check {
    let num = metrics.get(&x.metric).map(|m| m.mean);
    let ours = match &x.over {
        None => num,
        Some(d) => match (num, metrics.get(d).map(|m| m.mean)) {
            (Some(a), Some(b)) if b != 0.0 => Some(a / b),
            _ => None,
        },
    };
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
}
