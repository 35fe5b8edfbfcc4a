//! Data a subflow has been given but has not yet sent: with Linux's default scheduler the
//! connection copies data into a subflow's TCP write queue ahead of its congestion window
//! (`mptcp_sendmsg_frag()`), and the subflow sends it as its window opens.
//!
//! Each burst ends with a push: `mptcp_push_release()` calls `tcp_push()`, which sets PSH
//! on the tail of the write queue (`tcp_mark_push()`), so the last segment of a burst
//! leaves with PSH set. But a burst that continues the data still queued joins its tail
//! skb while that skb is below its size goal, and `mptcp_sendmsg_frag()` then clears the
//! skb's PSH (the reused tail's `tcp_flags &= ~TCPHDR_PSH`): a queue fed without a pause
//! pushes only where a full skb of about 64 KB was pushed (`tcp_send_mss()`'s size goal,
//! `MPTCP_MAX_GSO_SIZE`), which is why the kernel's DSS mappings cover 64 KB. The
//! receiver reads that flag (see `tcp::receiver`).

use crate::tcp::gso::SKB_MAX_SEGMENTS;
use std::collections::VecDeque;
use std::ops::Range;

/// One skb of the subflow's write queue: consecutive data sequence numbers, at most
/// `SKB_MAX_SEGMENTS` of them, and whether the last of them ends a burst (carries PSH).
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

/// Data sequence numbers queued on one subflow, oldest first, as the skbs Linux would
/// hold them in.
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

    /// Queues `dsn`: data following the queued tail joins that skb, unless it is full, and
    /// takes its push away.
    pub fn push(&mut self, dsn: u64) {
        self.len += 1;
        match self.runs.back_mut() {
            Some(last)
                if last.dsns.end == dsn && last.dsns.end - last.dsns.start < SKB_MAX_SEGMENTS =>
            {
                last.dsns.end += 1;
                last.pushed_at_end = false;
            }
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

    /// Queues each burst in turn, ending it with a push.
    fn queue_bursts(bursts: &[std::ops::Range<u64>]) -> SendQueue {
        let mut q = SendQueue::default();
        for burst in bursts {
            for dsn in burst.clone() {
                q.push(dsn);
            }
            q.end_burst();
        }
        q
    }

    /// Empties the queue: each segment with whether it leaves pushed.
    fn drain(q: &mut SendQueue) -> Vec<(u64, bool)> {
        std::iter::from_fn(|| q.pop())
            .map(|s| (s.dsn, s.push))
            .collect()
    }

    #[test]
    fn pops_in_the_order_pushed_across_runs() {
        let mut q = SendQueue::default();
        for dsn in [5, 6, 7, 2, 3, 8] {
            q.push(dsn);
        }
        assert_eq!(q.len(), 6);
        let popped: Vec<u64> = drain(&mut q).into_iter().map(|(dsn, _)| dsn).collect();
        assert_eq!(popped, [5, 6, 7, 2, 3, 8]);
        assert!(q.is_empty());
    }

    #[test]
    fn the_last_segment_of_each_burst_carries_psh() {
        // Two bursts of data that does not follow on (rewound data between): the first
        // one's end stays pushed; a segment queued after the last burst is not.
        let mut q = queue_bursts(&[0..3, 7..9]);
        q.push(20);
        assert_eq!(
            drain(&mut q),
            [
                (0, false),
                (1, false),
                (2, true),
                (7, false),
                (8, true),
                (20, false)
            ]
        );
    }

    #[test]
    fn a_burst_that_follows_the_queued_data_takes_its_push_away() {
        // The second burst joins the tail skb (`mptcp_sendmsg_frag()` reuses it).
        let mut q = queue_bursts(&[0..3, 3..5]);
        assert_eq!(
            drain(&mut q),
            [(0, false), (1, false), (2, false), (3, false), (4, true)]
        );
        // Once the queue has drained, a new burst starts a new skb: its end is pushed.
        q = queue_bursts(&[5..7, 9..10]);
        assert_eq!(drain(&mut q), [(5, false), (6, true), (9, true)]);
    }

    #[test]
    fn a_full_skb_keeps_its_push() {
        // The tail is full: the next burst starts a new skb (`alloc_skb`).
        let full = SKB_MAX_SEGMENTS;
        let mut q = queue_bursts(&[0..full, full..full + 1]);
        let pushed: Vec<u64> = drain(&mut q)
            .into_iter()
            .filter(|&(_, push)| push)
            .map(|(dsn, _)| dsn)
            .collect();
        assert_eq!(pushed, [full - 1, full]);
    }
}
