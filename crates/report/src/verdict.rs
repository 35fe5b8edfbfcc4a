//! Whether an ordering holds, given the spread over seeds: the seed-spread rule.
//!
//! An ordering claims `a < b` for each step (with a factor `r`: `b > r a`, or `b >= r a` for
//! a tolerance below 1). With at least two seeds behind both values, a step
//!
//! - **holds** when its margin `b - r a` (means over seeds) exceeds the spread
//!   `s_b + r s_a` (sample standard deviations over seeds),
//! - **fails** when the margin is below minus the spread (the reverse holds as clearly),
//! - is **inconclusive** otherwise: the difference lies inside the seed spread.
//!
//! This is the test `compare` applies to two results (`compare_html::within_spread`): a
//! difference counts only when it is larger than the two spreads together. With one seed
//! (or no spread at all) the spread is unknown and the means decide, and the report says
//! so. An ordering fails if any step fails, else is inconclusive if any step is, else holds.

use crate::summary::MetricStats;
use serde::{Deserialize, Serialize};

/// The rule in one sentence, for the reports.
pub const RULE: &str = "An ordering holds when each step's margin (difference of the means, \
    the earlier one times the factor) exceeds the sum of the two standard deviations over \
    seeds, fails when the reverse margin does, and is inconclusive when the difference lies \
    inside that spread; with one seed no spread is known and the means decide.";

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Holds,
    Fails,
    Inconclusive,
}

impl Verdict {
    /// The word the reports print.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Fails => "fails",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// The combined verdict of several steps: any failure fails, then any doubt.
    pub fn all(steps: impl IntoIterator<Item = Verdict>) -> Verdict {
        steps
            .into_iter()
            .fold(Verdict::Holds, |acc, v| match (acc, v) {
                (Verdict::Fails, _) | (_, Verdict::Fails) => Verdict::Fails,
                (Verdict::Inconclusive, _) | (_, Verdict::Inconclusive) => Verdict::Inconclusive,
                _ => Verdict::Holds,
            })
    }
}

/// One value an ordering ranks, over the seeds of its variant.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Sample {
    /// Mean and sample standard deviation over `seeds` runs.
    Seeds { mean: f64, std: f64, seeds: usize },
    /// A convergence time where the window did not converge in some runs: later than any
    /// time that converged.
    NotConverged { converged: usize, of: usize },
    /// The metric is not in the runs.
    Missing,
}

impl Sample {
    pub fn of(stats: &MetricStats) -> Self {
        Sample::Seeds {
            mean: stats.mean,
            std: stats.std,
            seeds: stats.runs.len(),
        }
    }

    pub fn mean(&self) -> Option<f64> {
        match self {
            Sample::Seeds { mean, .. } => Some(*mean),
            _ => None,
        }
    }

    /// Seeds behind the value (a value that did not converge counts all its runs).
    pub fn seeds(&self) -> usize {
        match self {
            Sample::Seeds { seeds, .. } => *seeds,
            Sample::NotConverged { of, .. } => *of,
            Sample::Missing => 0,
        }
    }

    /// `lia 7.012 ± 0.140`, `fullycoupled did not converge (0 of 3 seeds)`.
    pub fn text(&self, name: &str) -> String {
        match self {
            Sample::Seeds {
                mean, std, seeds, ..
            } if *seeds > 1 => format!("{name} {mean:.3} ± {std:.3}"),
            Sample::Seeds { mean, .. } => format!("{name} {mean:.3}"),
            Sample::NotConverged { converged, of } => {
                format!("{name} did not converge ({converged} of {of} seeds did)")
            }
            Sample::Missing => format!("{name} missing"),
        }
    }
}

/// The seed-spread rule for one step `a` before `b`, each at least `min_ratio` times the
/// one before (strictly more when `min_ratio` is 1 or above).
pub fn step(a: &Sample, b: &Sample, min_ratio: f64) -> Verdict {
    let strict = min_ratio >= 1.0;
    match (a, b) {
        (Sample::Missing, _) | (_, Sample::Missing) => Verdict::Fails,
        (Sample::NotConverged { .. }, Sample::NotConverged { .. }) => Verdict::Inconclusive,
        // A time that never came is later than one that did.
        (Sample::Seeds { .. }, Sample::NotConverged { .. }) => Verdict::Holds,
        (Sample::NotConverged { .. }, Sample::Seeds { .. }) => Verdict::Fails,
        (
            Sample::Seeds {
                mean: ma,
                std: sa,
                seeds: na,
            },
            Sample::Seeds {
                mean: mb,
                std: sb,
                seeds: nb,
            },
        ) => {
            let margin = mb - min_ratio * ma;
            let spread = sb + min_ratio * sa;
            if *na < 2 || *nb < 2 || spread == 0.0 {
                let holds = if strict { margin > 0.0 } else { margin >= 0.0 };
                return if holds {
                    Verdict::Holds
                } else {
                    Verdict::Fails
                };
            }
            if margin > spread {
                Verdict::Holds
            } else if margin < -spread {
                Verdict::Fails
            } else {
                Verdict::Inconclusive
            }
        }
    }
}

/// The verdict over every step of `samples`, in the claimed order.
pub fn ordering(samples: &[Sample], min_ratio: f64) -> Verdict {
    Verdict::all(samples.windows(2).map(|w| step(&w[0], &w[1], min_ratio)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(mean: f64, std: f64, seeds: usize) -> Sample {
        Sample::Seeds { mean, std, seeds }
    }

    #[test]
    fn a_margin_beyond_both_spreads_holds() {
        assert_eq!(
            step(&s(10.0, 0.5, 3), &s(12.0, 0.5, 3), 1.0),
            Verdict::Holds
        );
        assert_eq!(
            step(&s(12.0, 0.5, 3), &s(10.0, 0.5, 3), 1.0),
            Verdict::Fails
        );
    }

    #[test]
    fn a_margin_inside_the_spread_is_inconclusive_either_way() {
        // A 0.3 % lead with seeds spread by 1 %: no verdict, whichever mean is larger.
        assert_eq!(
            step(&s(10.0, 0.1, 3), &s(10.03, 0.1, 3), 1.0),
            Verdict::Inconclusive
        );
        assert_eq!(
            step(&s(10.03, 0.1, 3), &s(10.0, 0.1, 3), 1.0),
            Verdict::Inconclusive
        );
        // Exactly at the spread: still inside.
        assert_eq!(
            step(&s(10.0, 0.5, 3), &s(11.0, 0.5, 3), 1.0),
            Verdict::Inconclusive
        );
    }

    #[test]
    fn a_factor_scales_the_earlier_value_and_its_spread() {
        // b > 2a: margin 25 - 20 = 5 against spread 1 + 2 x 1 = 3.
        assert_eq!(
            step(&s(10.0, 1.0, 3), &s(25.0, 1.0, 3), 2.0),
            Verdict::Holds
        );
        // margin 22 - 20 = 2 inside the spread 3.
        assert_eq!(
            step(&s(10.0, 1.0, 3), &s(22.0, 1.0, 3), 2.0),
            Verdict::Inconclusive
        );
        // A tolerance ("at least 99 % of"): equal values hold only without spread.
        assert_eq!(
            step(&s(10.0, 0.0, 1), &s(10.0, 0.0, 1), 0.99),
            Verdict::Holds
        );
        assert_eq!(
            step(&s(10.0, 0.2, 3), &s(10.0, 0.2, 3), 0.99),
            Verdict::Inconclusive
        );
    }

    #[test]
    fn with_one_seed_the_means_decide() {
        assert_eq!(
            step(&s(10.0, 0.0, 1), &s(10.01, 0.0, 1), 1.0),
            Verdict::Holds
        );
        assert_eq!(
            step(&s(10.0, 0.0, 1), &s(10.0, 0.0, 1), 1.0),
            Verdict::Fails
        );
        // One seed on one side is enough to make the spread unknown.
        assert_eq!(
            step(&s(10.0, 5.0, 3), &s(10.01, 0.0, 1), 1.0),
            Verdict::Holds
        );
    }

    #[test]
    fn a_window_that_never_converged_is_slower_than_any_that_did() {
        let never = Sample::NotConverged {
            converged: 0,
            of: 3,
        };
        assert_eq!(step(&s(10.0, 1.0, 3), &never, 2.0), Verdict::Holds);
        assert_eq!(step(&never, &s(10.0, 1.0, 3), 1.0), Verdict::Fails);
        assert_eq!(step(&never, &never.clone(), 1.0), Verdict::Inconclusive);
        assert_eq!(step(&Sample::Missing, &s(1.0, 0.0, 1), 1.0), Verdict::Fails);
    }

    #[test]
    fn any_failed_step_fails_the_ordering_and_any_doubt_leaves_it_open() {
        let clear = [s(1.0, 0.1, 3), s(2.0, 0.1, 3), s(3.0, 0.1, 3)];
        assert_eq!(ordering(&clear, 1.0), Verdict::Holds);
        let doubt = [s(1.0, 0.1, 3), s(1.05, 0.1, 3), s(3.0, 0.1, 3)];
        assert_eq!(ordering(&doubt, 1.0), Verdict::Inconclusive);
        let wrong = [s(1.0, 0.1, 3), s(1.05, 0.1, 3), s(0.5, 0.1, 3)];
        assert_eq!(ordering(&wrong, 1.0), Verdict::Fails);
    }
}
