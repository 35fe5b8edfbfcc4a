//! A scenario run as a campaign, the same way from every front end: the command line
//! (`mptcp-lab run`), the Python package (`mptcp_lab.run`, `mptcp_lab.sweep`) and a Dask
//! worker running one task. [`Prepared`] loads the scenario and plans its tasks;
//! [`Prepared::run`] runs the missing ones on the chosen backend (one per core on the
//! simulator) and saves each as it finishes; [`Prepared::summarize`] builds the summary
//! from the task results alone.

pub mod backend;
pub mod execute;
pub mod memory;
pub mod prepared;
pub mod provenance;
pub mod resolved;

pub use backend::BackendKind;
pub use prepared::{Folder, Prepared, Request, ScenarioSource};
