//! MPTCP's connection level (RFC 8684): the path manager that opens subflows, data sequence
//! numbers over them and one shared receive buffer, the scheduler that picks a subflow for
//! each segment, the data-level retransmission timer, and what happens to the data of a
//! subflow that stops answering.

mod data;
pub mod linger;
mod path_manager;
pub mod retransmit;
mod scheduler;
mod send_queue;
pub mod stale;

pub use data::{DFRAG_SEGMENTS, DataReceiver, DataSender};
pub use path_manager::PathManager;
pub use scheduler::Scheduler;
pub use send_queue::{Queued, SendQueue};
pub use stale::StaleWatch;
