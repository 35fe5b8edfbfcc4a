//! Which subflow carries the next data-level segment.

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

    /// Among established subflows with room in their window, the one with the lowest
    /// smoothed RTT, or the next in turn. A subflow that timed out and has not been heard
    /// from since (stale) is used only when no other can send.
    pub fn pick(&mut self, subflows: &[ClientSubflow]) -> Option<usize> {
        let n = subflows.len();
        if n == 1 {
            // Plain TCP, or MPTCP with one path: nothing to choose.
            return subflows[0].can_send().then_some(0);
        }
        let pick = |stale: bool| -> Option<usize> {
            let ok = |i: usize| subflows[i].can_send() && subflows[i].stale == stale;
            match self.kind {
                SchedulerKind::LowestRtt => (0..n)
                    .filter(|&i| ok(i))
                    .min_by_key(|&i| subflows[i].tx.rtt.srtt),
                SchedulerKind::RoundRobin => (0..n).map(|k| (self.turn + k) % n).find(|&i| ok(i)),
            }
        };
        let chosen = pick(false).or_else(|| pick(true))?;
        self.turn = (chosen + 1) % n;
        Some(chosen)
    }
}
