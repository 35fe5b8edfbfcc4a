//! Data a subflow has been given but has not yet sent: with Linux's default scheduler the
//! connection copies data into a subflow's TCP write queue ahead of its congestion window
//! (`mptcp_sendmsg_frag()`), and the subflow sends it as its window opens.
//!
//! Each burst ends with a push: `mptcp_push_release()` calls `tcp_push()`, which sets PSH
//! on the tail of the write queue (`tcp_mark_push()`), so the last segment of every burst
//! leaves with PSH set. The receiver reads that flag (see `tcp::receiver`).

use std::collections::VecDeque;
use std::ops::Range;

/// Consecutive data sequence numbers queued together, and whether the last of them ends
/// a burst (carries PSH).
#[derive(Clone, Debug)]
struct Run {
    dsns: Range<u64>,
    pushed_at_end: bool,
}

/// One queued segment as it leaves the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    pub dsn: u64,
    /// The last segment of a burst: sent with PSH.
    pub push: bool,
}

/// Data sequence numbers queued on one subflow, oldest first, as runs of consecutive
/// numbers (a burst is one run unless rewound data interleaves).
#[derive(Clone, Debug, Default)]
pub struct SendQueue {
    runs: VecDeque<Run>,
    len: u64,
}

impl SendQueue {
    /// Segments queued.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, dsn: u64) {
        self.len += 1;
        match self.runs.back_mut() {
            Some(last) if last.dsns.end == dsn && !last.pushed_at_end => last.dsns.end += 1,
            _ => self.runs.push_back(Run {
                dsns: dsn..dsn + 1,
                pushed_at_end: false,
            }),
        }
    }

    /// The burst queued so far ends here: its last segment carries PSH.
    pub fn end_burst(&mut self) {
        if let Some(last) = self.runs.back_mut() {
            last.pushed_at_end = true;
        }
    }

    /// The oldest queued segment, taken off the queue.
    pub fn pop(&mut self) -> Option<Queued> {
        let first = self.runs.front_mut()?;
        let dsn = first.dsns.start;
        first.dsns.start += 1;
        let mut push = false;
        if first.dsns.is_empty() {
            push = first.pushed_at_end;
            self.runs.pop_front();
        }
        self.len -= 1;
        Some(Queued { dsn, push })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_the_order_pushed_across_runs() {
        let mut q = SendQueue::default();
        for dsn in [5, 6, 7, 2, 3, 8] {
            q.push(dsn);
        }
        assert_eq!(q.len(), 6);
        let popped: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|s| s.dsn).collect();
        assert_eq!(popped, [5, 6, 7, 2, 3, 8]);
        assert!(q.is_empty());
    }

    #[test]
    fn the_last_segment_of_each_burst_carries_psh() {
        let mut q = SendQueue::default();
        // Two bursts of consecutive data stay two: the first one's end is pushed.
        for dsn in 0..3 {
            q.push(dsn);
        }
        q.end_burst();
        for dsn in 3..5 {
            q.push(dsn);
        }
        q.end_burst();
        q.push(5);
        let pushed: Vec<(u64, bool)> = std::iter::from_fn(|| q.pop())
            .map(|s| (s.dsn, s.push))
            .collect();
        assert_eq!(
            pushed,
            [
                (0, false),
                (1, false),
                (2, true),
                (3, false),
                (4, true),
                (5, false)
            ]
        );
    }
}
