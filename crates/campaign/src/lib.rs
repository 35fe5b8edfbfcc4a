//! Campaigns on disk. A run of a scenario is a set of tasks, one per (variant, seed); each
//! task's result is written to the campaign folder, atomically, as soon as it finishes. A
//! task is identified by a content hash of what the run depends on (the expanded variant's
//! topology, flows, events and measurement, the seed, the backend and its options) together
//! with the program version that ran it, so rerunning the same command runs only what is
//! missing, a changed scenario never reuses a stale result, and results of another version
//! are used only when asked. The summary, series and report are then built from the task
//! results alone: identical however, wherever and in whatever order the tasks ran (one
//! process, several cores, a Slurm job array, Dask workers).
//!
//! Modelled on ns-3's `sem`, which keeps one result per parameter combination and run in a
//! campaign database and runs only the missing ones.

pub mod folder;
pub mod plan;
pub mod task;
pub mod view;

pub use folder::{CampaignFolder, OtherVersions};
pub use plan::{Plan, PlannedTask};
pub use task::{TaskKey, TaskResult};

/// This build's version: the package version and the git commit, with a hash of any
/// uncommitted changes (see build.rs).
pub const VERSION: &str = env!("MPTCP_LAB_VERSION");
