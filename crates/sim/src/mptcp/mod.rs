//! MPTCP's connection level (RFC 8684): data sequence numbers over subflows, one shared
//! receive buffer, and the scheduler that picks a subflow for each segment.

mod data;
mod scheduler;

pub use data::{DataReceiver, DataSender};
pub use scheduler::pick_subflow;
