//! What runs a scenario: the simulator or real Linux hosts. Both take one variant and one
//! seed and return the same `RunResult`, so results, reports and comparisons never depend
//! on which backend made them.

use crate::Scenario;
use crate::results::RunResult;

/// Where a run reports how far it is, and says what a person should know as it goes.
pub trait Progress {
    /// The fraction of the run done, 0 to 1.
    fn fraction(&mut self, done: f64);
    /// A line for the terminal (printed without breaking a progress bar).
    fn note(&mut self, line: &str);
}

/// Progress that goes nowhere (tests, library use).
pub struct Quiet;

impl Progress for Quiet {
    fn fraction(&mut self, _: f64) {}
    fn note(&mut self, _: &str) {}
}

pub trait Backend {
    /// Its name in results and reports: `sim` or `kernel`.
    fn name(&self) -> &'static str;

    /// Whether a run takes the scenario's duration in real time.
    fn real_time(&self) -> bool {
        false
    }

    /// An independent copy for another thread, if runs of this backend may proceed side by
    /// side (the simulator: each run is a pure function of its scenario and seed). A
    /// backend that owns the machine's network (the kernel) returns `None`.
    fn fork(&self) -> Option<Box<dyn Backend + Send>> {
        None
    }

    /// Why this backend cannot run `sc`, if it cannot (the variant is then skipped).
    fn unsupported(&self, _sc: &Scenario) -> Option<String> {
        None
    }

    /// Runs one variant with one seed.
    fn run(
        &mut self,
        sc: &Scenario,
        seed: u64,
        progress: &mut dyn Progress,
    ) -> anyhow::Result<RunResult>;
}
