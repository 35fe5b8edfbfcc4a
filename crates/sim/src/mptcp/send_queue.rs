//! Data a subflow has been given but has not yet sent: with Linux's default scheduler the
//! connection copies data into a subflow's TCP write queue ahead of its congestion window
//! (`mptcp_sendmsg_frag()`), and the subflow sends it as its window opens.

use std::collections::VecDeque;
use std::ops::Range;

/// Data sequence numbers queued on one subflow, oldest first, as runs of consecutive
/// numbers (a burst is one run unless rewound data interleaves).
#[derive(Clone, Debug, Default)]
pub struct SendQueue {
    runs: VecDeque<Range<u64>>,
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
            Some(last) if last.end == dsn => last.end += 1,
            _ => self.runs.push_back(dsn..dsn + 1),
        }
    }

    /// The oldest queued data sequence number, taken off the queue.
    pub fn pop(&mut self) -> Option<u64> {
        let first = self.runs.front_mut()?;
        let dsn = first.start;
        first.start += 1;
        if first.is_empty() {
            self.runs.pop_front();
        }
        self.len -= 1;
        Some(dsn)
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
        let popped: Vec<u64> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(popped, [5, 6, 7, 2, 3, 8]);
        assert!(q.is_empty());
    }
}
