//! MATCP path selection (Dimopoulos, Zeephongsekul and Tari, "Multipath Aware TCP", ISCC
//! 2006): a TCP source with P numbered paths places each new connection on one of them,
//! using what its earlier connections measured on each path. One connection uses one path
//! for its whole life (no reordering); the choice is made again for the next.
//!
//! Pure code, as the congestion controls are: no clock, no I/O, no random generator of its
//! own (the caller passes a uniform draw), so the simulator, the tests and the kernel's
//! eBPF version check against the same rules. The selectors, one per file:
//!
//! - [`SinglePath`]: always the source's own path (each edge bound to one uplink).
//! - [`Lowest`] with a [`Measure`]: the path with the smallest measure, every measure reset
//!   after one path was chosen R times in a row (the paper's refresh constant), for
//!   [`RttVariation`], [`Drops`] and [`Rtt`].
//! - [`WeightedRtt`]: path x with probability (RTT_total - RTT_x) / sum_y (RTT_total - RTT_y).
//!
//! Their definitions, and how this code reads the paper where it is loose, are in
//! `docs/algorithms.md`.

mod drops;
mod lowest;
mod observation;
mod rtt;
mod rtt_variation;
mod single_path;
mod weighted_rtt;

pub use drops::Drops;
pub use lowest::{Lowest, Measure};
pub use observation::Observation;
pub use rtt::Rtt;
pub use rtt_variation::{RttVariation, VariationReading};
pub use single_path::SinglePath;
pub use weighted_rtt::WeightedRtt;

/// One of a source's paths, numbered from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathId(pub u16);

impl PathId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A source's path selector: asked for a path when a connection starts, told what each
/// connection measured when it ends.
pub trait PathSelector {
    /// The path of a new connection. `uniform` is a draw in [0, 1) from the caller's seeded
    /// stream: it breaks ties and makes weighted choices, so that one seed gives one run.
    fn choose(&mut self, uniform: f64) -> PathId;
    /// What a connection on `path` measured over its life.
    fn observe(&mut self, path: PathId, observed: &Observation);
}

/// The index in `0..n` a uniform draw in [0, 1) falls on.
pub(crate) fn pick(uniform: f64, n: usize) -> usize {
    debug_assert!(n > 0);
    ((uniform.clamp(0.0, 1.0) * n as f64) as usize).min(n - 1)
}
