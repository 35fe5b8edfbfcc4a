//! Sorted, disjoint ranges of segment numbers held out of order: the subflow receiver's
//! SACK scoreboard and MPTCP's data-level reassembly queue both keep one.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    /// `[start, end)`, sorted, disjoint, never adjacent (adjacent ranges are merged).
    ranges: Vec<(u64, u64)>,
    len: u64,
}

impl RangeSet {
    pub fn contains(&self, seq: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, b)| b <= seq);
        i < self.ranges.len() && self.ranges[i].0 <= seq
    }

    /// Adds one segment; returns false if it was already held.
    pub fn insert(&mut self, seq: u64) -> bool {
        if self.contains(seq) {
            return false;
        }
        let i = self.ranges.partition_point(|&(_, b)| b < seq);
        let joins_prev = i < self.ranges.len() && self.ranges[i].1 == seq;
        let next = if joins_prev { i + 1 } else { i };
        let joins_next = next < self.ranges.len() && self.ranges[next].0 == seq + 1;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.ranges[i].1 = self.ranges[next].1;
                self.ranges.remove(next);
            }
            (true, false) => self.ranges[i].1 = seq + 1,
            (false, true) => self.ranges[next].0 = seq,
            (false, false) => self.ranges.insert(i, (seq, seq + 1)),
        }
        self.len += 1;
        true
    }

    /// If the first range starts at `at`, removes it and returns its end.
    pub fn pop_front_at(&mut self, at: u64) -> Option<u64> {
        match self.ranges.first() {
            Some(&(a, b)) if a == at => {
                self.ranges.remove(0);
                self.len -= b - a;
                Some(b)
            }
            _ => None,
        }
    }

    /// Segments held.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn range_of(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|&(_, b)| b <= seq);
        self.ranges.get(i).copied().filter(|&(a, _)| a <= seq)
    }

    /// Ranges from the highest down.
    pub fn iter_rev(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().rev().copied()
    }
}
