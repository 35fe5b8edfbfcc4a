//! When a subflow's window has converged after a disturbance: the equal-share band rule.
//!
//! The Balia draft (draft-walid-mptcp-congestion-control-04, section 5.2, Table 2) times how
//! long path 2 takes to come back once the competing TCP flows leave, but a rule that only
//! asks when the window first reaches its own later mean calls a window that stays at one
//! packet "converged" (it reaches its mean of about one packet at once). Here a window has
//! converged only when it comes back to its share of the connection:
//!
//! - the *equal share* E is the connection's mean window per subflow after `after`
//!   (Σ_k w_k / n, averaged over the samples at or after `after`): where each subflow should
//!   settle when its paths are alike, as in the experiment;
//! - the window has settled from the first sample t_s ≥ `after` from which on its mean over
//!   every following `HOLD_S` span stays within [E / 2, 3 E / 2] (`BAND` either side).
//!   Averaging over `HOLD_S` lets one loss halve the window without counting as leaving
//!   the band, as AIMD does in steady state;
//! - it converges at the first sample at or after t_s at which it reaches its own mean
//!   after `after` (and at least E / 2): the draft's instant, once the window is known to
//!   stay;
//! - otherwise it did not converge, and no convergence time exists.

/// Half-width of the band around the equal share, as a fraction of it.
pub const BAND: f64 = 0.5;

/// Span (seconds) over which the window is averaged when checking it stays in the band.
pub const HOLD_S: f64 = 5.0;

/// One subflow's window after `after`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Convergence {
    /// Its mean window (packets) over the samples at or after `after`.
    pub mean: f64,
    /// The connection's mean window per subflow over the same samples.
    pub equal_share: f64,
    /// When it converged under the equal-share band rule; `None`: it did not.
    pub at: Option<f64>,
}

/// The equal-share band rule for subflow `k` of a connection whose subflows' windows are
/// `cwnds`, all sampled at `times`. `None` when no sample lies at or after `after`.
pub fn convergence(times: &[f64], cwnds: &[Vec<f64>], k: usize, after: f64) -> Option<Convergence> {
    let start = times.iter().position(|t| *t >= after)?;
    let times = &times[start..];
    let own: Vec<f64> = cwnds[k][start..]
        .iter()
        .map(|w| finite_or_zero(*w))
        .collect();
    let per_subflow: Vec<f64> = (0..times.len())
        .map(|i| {
            cwnds
                .iter()
                .map(|w| finite_or_zero(w[start + i]))
                .sum::<f64>()
                / cwnds.len() as f64
        })
        .collect();
    let mean = own.iter().sum::<f64>() / own.len() as f64;
    let equal_share = per_subflow.iter().sum::<f64>() / per_subflow.len() as f64;
    let (low, high) = ((1.0 - BAND) * equal_share, (1.0 + BAND) * equal_share);
    let end = times[times.len() - 1];
    // Walk back from the end: `settled` is the earliest index from which every full
    // HOLD_S span's mean lies in the band.
    let mut settled = None;
    for i in (0..times.len()).rev() {
        let Some(block) = block_mean(times, &own, i) else {
            continue; // too close to the end for a full span: judged by earlier spans
        };
        if !(low..=high).contains(&block) {
            break;
        }
        settled = Some(i);
    }
    let at = settled
        .and_then(|s| {
            (s..times.len()).find(|&i| own[i] >= mean.max(low) && times[i] + HOLD_S <= end)
        })
        .map(|i| times[i]);
    Some(Convergence {
        mean,
        equal_share,
        at,
    })
}

/// The mean of `w` over [times[i], times[i] + HOLD_S), if the samples reach that far.
fn block_mean(times: &[f64], w: &[f64], i: usize) -> Option<f64> {
    let stop = times[i] + HOLD_S;
    if times[times.len() - 1] < stop {
        return None;
    }
    let n = times[i..].iter().take_while(|t| **t < stop).count();
    Some(w[i..i + n].iter().sum::<f64>() / n as f64)
}

/// A window the backend could not read counts as none.
fn finite_or_zero(w: f64) -> f64 {
    if w.is_finite() { w } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples every 0.5 s from 0 to `end` s.
    fn times(end: f64) -> Vec<f64> {
        (0..=(end * 2.0) as usize).map(|i| i as f64 / 2.0).collect()
    }

    #[test]
    fn a_window_that_comes_back_to_its_share_converges_when_it_reaches_its_later_mean() {
        let t = times(40.0);
        // Path 2 ramps from 0 at 10 s by 5 packets a second to 40; path 1 stays at 40.
        let w1: Vec<f64> = t
            .iter()
            .map(|t| (5.0 * (t - 10.0)).clamp(0.0, 40.0))
            .collect();
        let w0 = vec![40.0; t.len()];
        let c = convergence(&t, &[w0, w1], 1, 10.0).unwrap();
        // It settles in the band during its ramp and converges when it reaches its mean
        // after 10 s (about 34.4 packets), at 17 s.
        assert!((c.mean - 34.4).abs() < 0.1, "{c:?}");
        assert_eq!(c.at, Some(17.0), "{c:?}");
    }

    #[test]
    fn a_window_stuck_at_one_packet_does_not_converge() {
        // The fully coupled case: path 2 stays at one packet while path 1 holds the rest.
        // It reaches its own mean at once, which the old rule called converged.
        let t = times(120.0);
        let w0 = vec![70.0; t.len()];
        let w1 = vec![1.0; t.len()];
        let c = convergence(&t, &[w0, w1], 1, 0.0).unwrap();
        assert_eq!(c.at, None);
        assert_eq!(c.mean, 1.0);
        assert_eq!(c.equal_share, 35.5);
    }

    #[test]
    fn a_window_that_falls_away_again_has_not_converged_until_it_stays() {
        let t = times(60.0);
        // Path 2 is at its share for 10 s, collapses for 10 s, then comes back for good.
        let w1: Vec<f64> = t
            .iter()
            .map(|t| if (10.0..20.0).contains(t) { 1.0 } else { 40.0 })
            .collect();
        let w0 = vec![40.0; t.len()];
        let c = convergence(&t, &[w0, w1], 1, 0.0).unwrap();
        assert_eq!(c.at, Some(20.0), "{c:?}");
    }

    #[test]
    fn a_sawtooth_around_its_share_stays_in_the_band() {
        let t = times(60.0);
        // AIMD between 20 and 40 packets (a halving every 4 s), path 1 likewise.
        let saw: Vec<f64> = t.iter().map(|t| 20.0 + 5.0 * (t % 4.0)).collect();
        let c = convergence(&t, &[saw.clone(), saw], 1, 0.0).unwrap();
        // In the band from the start; it first reaches its mean (28.7) at 2 s.
        assert_eq!(c.at, Some(2.0), "{c:?}");
    }

    #[test]
    fn nothing_after_the_instant_gives_nothing() {
        let t = times(5.0);
        assert_eq!(convergence(&t, &[vec![1.0; t.len()]], 0, 9.0), None);
    }
}
