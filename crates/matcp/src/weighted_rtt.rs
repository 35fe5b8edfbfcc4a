//! Weighted-RTT selection (the paper's equation 2): path x with probability
//! W_x = (RTT_total - RTT_x) / sum_y (RTT_total - RTT_y), RTT_total = sum_y RTT_y, from the
//! latest RTT measured on each path. Every path keeps a chance of being chosen, so no
//! refresh is needed. Until every path has a measurement, the unmeasured ones are chosen
//! (uniformly among them): equation 2 needs one RTT per path.

use crate::{Observation, PathId, PathSelector, pick};

#[derive(Clone, Debug)]
pub struct WeightedRtt {
    rtt_ns: Vec<Option<u64>>,
}

impl WeightedRtt {
    pub fn new(paths: usize) -> Self {
        assert!(paths > 0 && paths <= u16::MAX as usize, "1 to 65535 paths");
        WeightedRtt {
            rtt_ns: vec![None; paths],
        }
    }

    /// Each path's probability of being chosen next (equation 2), once every path is
    /// measured.
    pub fn weights(&self) -> Option<Vec<f64>> {
        let rtts: Vec<f64> = self
            .rtt_ns
            .iter()
            .map(|r| r.map(|r| r as f64))
            .collect::<Option<_>>()?;
        let n = rtts.len();
        if n == 1 {
            return Some(vec![1.0]);
        }
        let total: f64 = rtts.iter().sum();
        // sum_y (total - rtt_y) = (n - 1) total, above zero since every RTT is.
        let denominator = (n - 1) as f64 * total;
        Some(rtts.iter().map(|r| (total - r) / denominator).collect())
    }
}

impl PathSelector for WeightedRtt {
    fn choose(&mut self, uniform: f64) -> PathId {
        let unmeasured: Vec<usize> = (0..self.rtt_ns.len())
            .filter(|&i| self.rtt_ns[i].is_none())
            .collect();
        if !unmeasured.is_empty() {
            return PathId(unmeasured[pick(uniform, unmeasured.len())] as u16);
        }
        let weights = self.weights().expect("every path measured");
        let mut cumulative = 0.0;
        for (i, w) in weights.iter().enumerate() {
            cumulative += w;
            if uniform < cumulative {
                return PathId(i as u16);
            }
        }
        // Rounding left the draw just above the last sum: the last path with a chance.
        PathId(weights.iter().rposition(|&w| w > 0.0).unwrap_or(0) as u16)
    }

    fn observe(&mut self, path: PathId, observed: &Observation) {
        if let (Some(slot), Some(rtt)) = (self.rtt_ns.get_mut(path.index()), observed.rtt_ns()) {
            *slot = Some(rtt.max(1));
        }
    }
}
