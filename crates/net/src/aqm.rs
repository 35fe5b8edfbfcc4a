//! Admission decisions: drop-tail, and RED (Floyd and Jacobson 1993) with the count-based
//! spreading of drops, the idle-time decay of the average, and the optional gentle mode.

use crate::Nanos;
use rand::Rng;

#[derive(Clone, Debug, PartialEq)]
pub enum AqmParams {
    DropTail,
    Red {
        min_th: f64,
        max_th: f64,
        max_p: f64,
        weight: f64,
        gentle: bool,
    },
}

#[derive(Clone, Debug)]
pub enum Aqm {
    DropTail,
    Red(Red),
}

#[derive(Clone, Debug)]
pub struct Red {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    weight: f64,
    gentle: bool,
    /// The moving average of the queue length, in the queue's unit.
    pub avg: f64,
    /// Packets since the last drop, -1 while below min_th.
    count: i64,
    idle_since: Option<Nanos>,
}

impl Aqm {
    pub fn new(p: &AqmParams) -> Self {
        match *p {
            AqmParams::DropTail => Aqm::DropTail,
            AqmParams::Red {
                min_th,
                max_th,
                max_p,
                weight,
                gentle,
            } => Aqm::Red(Red {
                min_th,
                max_th,
                max_p,
                weight,
                gentle,
                avg: 0.0,
                count: -1,
                idle_since: Some(0),
            }),
        }
    }

    /// Whether to drop an arriving packet early. `queue` is the current length in the queue's
    /// unit; `typical_tx` the transmission time of a typical packet (for the idle decay).
    pub fn early_drop(
        &mut self,
        now: Nanos,
        queue: f64,
        typical_tx: Nanos,
        rng: &mut impl Rng,
    ) -> bool {
        let Aqm::Red(r) = self else { return false };
        match r.idle_since.take() {
            Some(since) if queue == 0.0 => {
                // The queue was idle: decay the average as if m small packets had gone by.
                let m = (now.saturating_sub(since)) as f64 / typical_tx.max(1) as f64;
                r.avg *= (1.0 - r.weight).powf(m);
            }
            _ => r.avg = (1.0 - r.weight) * r.avg + r.weight * queue,
        }
        let pb = if r.avg < r.min_th {
            r.count = -1;
            return false;
        } else if r.avg < r.max_th {
            r.max_p * (r.avg - r.min_th) / (r.max_th - r.min_th)
        } else if r.gentle && r.avg < 2.0 * r.max_th {
            r.max_p + (1.0 - r.max_p) * (r.avg - r.max_th) / r.max_th
        } else {
            r.count = 0;
            return true;
        };
        r.count += 1;
        let denom = 1.0 - r.count as f64 * pb;
        let pa = if denom <= 0.0 {
            1.0
        } else {
            (pb / denom).min(1.0)
        };
        if rng.random::<f64>() < pa {
            r.count = 0;
            true
        } else {
            false
        }
    }

    /// The queue just emptied: remember when, for the idle decay.
    pub fn on_empty(&mut self, now: Nanos) {
        if let Aqm::Red(r) = self {
            r.idle_since = Some(now);
        }
    }

    pub fn average(&self) -> Option<f64> {
        match self {
            Aqm::Red(r) => Some(r.avg),
            Aqm::DropTail => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn red(gentle: bool) -> Aqm {
        Aqm::new(&AqmParams::Red {
            min_th: 25.0,
            max_th: 50.0,
            max_p: 0.1,
            weight: 1.0,
            gentle,
        })
    }

    /// With weight 1 the average is the instantaneous queue, so the drop rate at a fixed
    /// queue length must follow the RED curve. The count mechanism (pa = pb / (1 - count pb))
    /// spreads drops out: P(gap > k) = (1 - (k+1) pb) / (1 - pb), so the drop rate is one
    /// over the sum of those survival terms, about 2 pb / (1 + pb).
    #[test]
    fn drop_rate_follows_the_curve() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for (q, gentle) in [
            (20.0, false),
            (30.0, false),
            (37.5, false),
            (45.0, false),
            (60.0, true),
            (75.0, true),
        ] {
            let mut aqm = red(gentle);
            let n = 200_000;
            let drops =
                (0..n).filter(|_| aqm.early_drop(1, q, 1, &mut rng)).count() as f64 / n as f64;
            let pb: f64 = if q < 25.0 {
                0.0
            } else if q < 50.0 {
                0.1 * (q - 25.0) / 25.0
            } else {
                0.1 + 0.9 * (q - 50.0) / 50.0
            };
            let mean_gap: f64 = (0..10_000)
                .map(|k| (1.0 - (k + 1) as f64 * pb) / (1.0 - pb))
                .take_while(|&s| s > 0.0)
                .sum();
            let expected = if pb == 0.0 {
                0.0
            } else {
                1.0 / mean_gap.max(1.0)
            };
            assert!(
                (drops - expected).abs() <= 0.05 * expected + 0.002,
                "q={q}: drop rate {drops}, expected {expected}"
            );
        }
    }

    #[test]
    fn above_max_th_without_gentle_drops_everything() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut aqm = red(false);
        assert!((0..100).all(|_| aqm.early_drop(1, 60.0, 1, &mut rng)));
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut aqm = Aqm::new(&AqmParams::Red {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.1,
            gentle: false,
        });
        for _ in 0..100 {
            aqm.early_drop(0, 10.0, 1000, &mut rng);
        }
        let before = aqm.average().unwrap();
        aqm.on_empty(0);
        aqm.early_drop(100_000, 0.0, 1000, &mut rng);
        let after = aqm.average().unwrap();
        assert!(after < before * 0.9f64.powi(99), "{before} -> {after}");
    }
}
