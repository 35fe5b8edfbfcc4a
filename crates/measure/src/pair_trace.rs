//! Two more quantities of each subflow, sampled with its window and RTT when a scenario
//! asks for them: the receiving side (`[measure] trace_receiver`) or the congestion
//! control's coupling state (`[measure] trace_cc`).

use scenario::results::Series;

pub struct PairTrace {
    /// The two series' names.
    names: [&'static str; 2],
    /// What a sample is divided by in its series (bytes to kB, say).
    divisor: f64,
    /// Per flow, per subflow, one pair per sampling instant (NaN where there is none).
    samples: Vec<Vec<Vec<[f32; 2]>>>,
}

impl PairTrace {
    /// `subflows[i]`: how many subflows flow `i` has.
    pub fn new(names: [&'static str; 2], divisor: f64, subflows: &[usize]) -> PairTrace {
        PairTrace {
            names,
            divisor,
            samples: subflows.iter().map(|&n| vec![Vec::new(); n]).collect(),
        }
    }

    /// One instant: `sample(flow, subflow)` for every subflow.
    pub fn sample(&mut self, mut sample: impl FnMut(usize, usize) -> [f32; 2]) {
        for (i, subflows) in self.samples.iter_mut().enumerate() {
            for (k, values) in subflows.iter_mut().enumerate() {
                values.push(sample(i, k));
            }
        }
    }

    /// Flow `i`'s samples, per subflow, taken out.
    pub fn take(&mut self, i: usize) -> Vec<Vec<[f32; 2]>> {
        std::mem::take(&mut self.samples[i])
    }

    /// The two series of one subflow's `samples`, at `times_s`, for `entity`.
    pub fn series(&self, entity: &str, times_s: &[f64], samples: &[[f32; 2]]) -> [Series; 2] {
        [0, 1].map(|j| Series {
            name: self.names[j].into(),
            entity: entity.into(),
            times_s: times_s.to_vec(),
            values: samples
                .iter()
                .map(|v| f64::from(v[j]) / self.divisor)
                .collect(),
        })
    }
}
