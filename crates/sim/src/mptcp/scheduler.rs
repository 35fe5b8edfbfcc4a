//! Which subflow carries the next data-level segment, for the schedulers that choose one
//! segment at a time when a window has room (Linux's default, which queues bursts ahead of
//! the window, is in `linger`).

use super::stale::is_active;
use crate::connection::ClientSubflow;
use scenario::spec::SchedulerKind;

/// The packet scheduler of one connection.
pub struct Scheduler {
    kind: SchedulerKind,
    /// Round-robin position.
    turn: usize,
}

impl Scheduler {
    pub fn new(kind: SchedulerKind) -> Self {
        Scheduler { kind, turn: 0 }
    }

    pub fn kind(&self) -> SchedulerKind {
        self.kind
    }

    /// Among usable subflows with room in their window, the one with the lowest smoothed
    /// RTT, or the next in turn. A stale subflow gets no new data until it is heard from,
    /// even when no other has room (Linux's `mptcp_subflow_active()`).
    pub fn pick(&mut self, subflows: &[ClientSubflow]) -> Option<usize> {
        let n = subflows.len();
        let usable = |sf: &ClientSubflow| is_active(sf) && sf.tx.has_room();
        if n == 1 {
            // Plain TCP, or MPTCP with one path: nothing to choose.
            return usable(&subflows[0]).then_some(0);
        }
        let chosen = match self.kind {
            // An MPTCP connection runs Linux's default through `linger`; only a plain TCP
            // connection, with its one subflow, comes here with it.
            SchedulerKind::LowestRtt | SchedulerKind::LinuxDefault => {
                // The first of the lowest.
                let mut best: Option<(u64, usize)> = None;
                for (i, sf) in subflows.iter().enumerate() {
                    let rtt = sf.tx.rtt.srtt;
                    if usable(sf) && best.is_none_or(|(r, _)| rtt < r) {
                        best = Some((rtt, i));
                    }
                }
                best?.1
            }
            SchedulerKind::RoundRobin => (0..n)
                .map(|k| (self.turn + k) % n)
                .find(|&i| usable(&subflows[i]))?,
        };
        self.turn = (chosen + 1) % n;
        Some(chosen)
    }
}
