//! The smallest measure wins, with the paper's refresh constant R: once one path has been
//! chosen R times in a row, every path's measure is set back to zero, which is below any
//! measured value, so the next connections try the other paths again and bring their
//! measures up to date.

use crate::{Observation, PathId, PathSelector, pick};

/// What a path's measure is, from a connection's observation. `path_min_rtt_ns` is the
/// smallest RTT any connection of the source saw on that path (0 if none): the path's
/// propagation RTT as far as the source can tell.
pub trait Measure {
    fn measure(&self, observed: &Observation, path_min_rtt_ns: u64) -> Option<f64>;
}

#[derive(Clone, Debug)]
struct PathRecord {
    /// `None`: zero, as after a refresh or before any connection used the path.
    measure: Option<f64>,
    /// Kept across refreshes: it estimates the propagation RTT, which a refresh does not
    /// make stale.
    min_rtt_ns: u64,
}

#[derive(Clone, Debug)]
pub struct Lowest<M> {
    kind: M,
    paths: Vec<PathRecord>,
    /// R; `None`: never refresh.
    refresh: Option<u32>,
    last: Option<PathId>,
    in_a_row: u32,
}

impl<M: Measure> Lowest<M> {
    /// A selector over `paths` paths (at least one).
    pub fn new(kind: M, paths: usize, refresh: Option<u32>) -> Self {
        assert!(paths > 0 && paths <= u16::MAX as usize, "1 to 65535 paths");
        Lowest {
            kind,
            paths: vec![
                PathRecord {
                    measure: None,
                    min_rtt_ns: 0,
                };
                paths
            ],
            refresh,
            last: None,
            in_a_row: 0,
        }
    }

    /// Each path's current measure (`None`: zero, not measured since the last refresh).
    pub fn measures(&self) -> Vec<Option<f64>> {
        self.paths.iter().map(|p| p.measure).collect()
    }
}

impl<M: Measure> PathSelector for Lowest<M> {
    fn choose(&mut self, uniform: f64) -> PathId {
        let value = |p: &PathRecord| p.measure.unwrap_or(0.0);
        let best = self.paths.iter().map(value).fold(f64::INFINITY, f64::min);
        // Equal measures (all zero after a refresh, above all) are a tie the paper leaves
        // open; a seeded draw breaks it, so that sources do not all pile onto path 0.
        let tied: Vec<usize> = (0..self.paths.len())
            .filter(|&i| value(&self.paths[i]) == best)
            .collect();
        let chosen = PathId(tied[pick(uniform, tied.len())] as u16);
        self.in_a_row = if self.last == Some(chosen) {
            self.in_a_row + 1
        } else {
            1
        };
        self.last = Some(chosen);
        if self.refresh.is_some_and(|r| self.in_a_row >= r) {
            for p in &mut self.paths {
                p.measure = None;
            }
            self.in_a_row = 0;
            self.last = None;
        }
        chosen
    }

    fn observe(&mut self, path: PathId, observed: &Observation) {
        let Some(record) = self.paths.get_mut(path.index()) else {
            return;
        };
        if observed.min_rtt_ns > 0 {
            record.min_rtt_ns = match record.min_rtt_ns {
                0 => observed.min_rtt_ns,
                m => m.min(observed.min_rtt_ns),
            };
        }
        if let Some(m) = self.kind.measure(observed, record.min_rtt_ns) {
            record.measure = Some(m);
        }
    }
}
