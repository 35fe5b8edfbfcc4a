//! Which subflow carries the next segment.

use crate::connection::Subflow;
use scenario::spec::SchedulerKind;

/// Among established subflows with room in their window, the one with the lowest smoothed
/// RTT (Linux's default), or the next in turn. A subflow that just timed out is used only
/// when no other can send.
pub fn pick_subflow(kind: SchedulerKind, subflows: &[Subflow], turn: &mut usize) -> Option<usize> {
    let n = subflows.len();
    let usable = |s: &Subflow| s.established && s.tx.has_room();
    let pick = |stale: bool| -> Option<usize> {
        let ok = |i: usize| usable(&subflows[i]) && subflows[i].stale == stale;
        match kind {
            SchedulerKind::LowestRtt => (0..n)
                .filter(|&i| ok(i))
                .min_by_key(|&i| subflows[i].tx.rtt.srtt),
            SchedulerKind::RoundRobin => (0..n).map(|k| (*turn + k) % n).find(|&i| ok(i)),
        }
    };
    let chosen = pick(false).or_else(|| pick(true))?;
    *turn = (chosen + 1) % n;
    Some(chosen)
}
