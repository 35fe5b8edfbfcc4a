//! Metrics computed from other metrics after each run (`[[derived]]`), the same for every
//! backend: they are added to a run's results before anything is aggregated over seeds, so
//! that the mean over seeds of a spread is the mean of each run's spread.

use crate::Scenario;
use crate::spec::Reduce;
use std::collections::BTreeMap;

/// Derived metrics are named `derived.<name>`.
pub const DERIVED_PREFIX: &str = "derived.";

impl Reduce {
    /// `values` is never empty (a derived metric reduces at least two).
    pub fn apply(self, values: &[f64]) -> f64 {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let std = || (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        match self {
            Reduce::Min => min,
            Reduce::Max => max,
            Reduce::Mean => mean,
            Reduce::Spread => max - min,
            Reduce::Std => std(),
            Reduce::Cv if mean == 0.0 => 0.0,
            Reduce::Cv => std() / mean,
        }
    }
}

/// Adds the scenario's derived metrics to a run's `metrics`. One whose inputs are not all
/// there (a link that carried nothing) is left out, so an expectation on it reports the
/// metric missing rather than a number computed from part of its inputs.
pub fn add(sc: &Scenario, metrics: &mut BTreeMap<String, f64>) {
    for d in &sc.derived {
        let values: Option<Vec<f64>> = d.of.iter().map(|m| metrics.get(m).copied()).collect();
        if let Some(values) = values {
            metrics.insert(
                format!("{DERIVED_PREFIX}{}", d.name),
                d.reduce.apply(&values),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions() {
        let v = [1.0, 2.0, 3.0, 6.0];
        assert_eq!(Reduce::Min.apply(&v), 1.0);
        assert_eq!(Reduce::Max.apply(&v), 6.0);
        assert_eq!(Reduce::Mean.apply(&v), 3.0);
        assert_eq!(Reduce::Spread.apply(&v), 5.0);
        // Deviations -2, -1, 0, 3: variance 14 / 4.
        assert!((Reduce::Std.apply(&v) - 3.5f64.sqrt()).abs() < 1e-12);
        assert!((Reduce::Cv.apply(&v) - 3.5f64.sqrt() / 3.0).abs() < 1e-12);
        assert_eq!(Reduce::Cv.apply(&[0.0, 0.0]), 0.0);
    }
}
