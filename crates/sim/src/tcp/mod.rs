//! The two halves of one TCP subflow, counted in segments of one MSS: the sender's scoreboard,
//! loss detection (RACK-TLP), recovery and RTT estimation, and the receiver's reassembly and ACK policy. A connection
//! (`crate::connection`) holds one or more of them.

pub mod gso;
pub mod pacing;
pub mod prr;
pub mod rack;
pub mod receive_window;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use receiver::Receiver;
pub use sender::{AckResult, CaState, Probe, Sender, TimerAction, XmitTimer};
