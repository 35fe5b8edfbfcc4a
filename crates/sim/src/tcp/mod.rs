//! TCP endpoints, counted in segments of one MSS.

pub mod receiver;
pub mod rtt;
pub mod sender;

pub use receiver::Receiver;
pub use sender::{AckResult, CaState, Sender};
