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
        // One pass over the subflows for both choices (fresh, and stale as a fallback):
        // the connection asks after every segment, and once more when none can send.
        let chosen = match self.kind {
            SchedulerKind::LowestRtt => {
                // The first of the lowest, as `min_by_key` gives.
                let mut best: [Option<(u64, usize)>; 2] = [None, None];
                for (i, sf) in subflows.iter().enumerate() {
                    if sf.can_send() {
                        let b = &mut best[sf.stale as usize];
                        let rtt = sf.tx.rtt.srtt;
                        if b.is_none_or(|(r, _)| rtt < r) {
                            *b = Some((rtt, i));
                        }
                    }
                }
                best[0].or(best[1]).map(|(_, i)| i)?
            }
            SchedulerKind::RoundRobin => {
                let mut stale = None;
                let mut fresh = None;
                for i in (0..n).map(|k| (self.turn + k) % n) {
                    if subflows[i].can_send() {
                        if !subflows[i].stale {
                            fresh = Some(i);
                            break;
                        }
                        stale = stale.or(Some(i));
                    }
                }
                fresh.or(stale)?
            }
        };
        self.turn = (chosen + 1) % n;
        Some(chosen)
    }
}
