//! MPTCP's connection level (RFC 8684): the path manager that opens subflows, data sequence
//! numbers over them and one shared receive buffer, the scheduler that picks a subflow for
//! each segment, and what happens to the data of a subflow that stops answering.

mod data;
mod path_manager;
mod scheduler;
mod stale;

pub use data::{DataReceiver, DataSender};
pub use path_manager::PathManager;
pub use scheduler::Scheduler;
pub use stale::on_subflow_timeout;
