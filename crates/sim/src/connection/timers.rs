//! Every timer of an endpoint in one table: one deadline per subflow (the client's
//! retransmission timer, the server's delayed ACK). The endpoint's next deadline is the
//! smallest; its driver needs to schedule only that one.
//!
//! The table is read on every packet (a delayed ACK armed or stopped, the retransmission
//! timer restarted, the driver asking for the next deadline), so the usual one or two
//! subflows' deadlines and the earliest of all are kept inline, in the endpoint itself: at
//! thousands of connections a table of its own on the heap was one more cache miss per
//! packet.

use net::Nanos;

/// Subflows whose deadlines are kept inline (plain TCP's one, MPTCP's usual two).
const INLINE: usize = 2;
/// A deadline that is not armed. No simulated time reaches it.
const OFF: Nanos = Nanos::MAX;

#[derive(Clone, Debug)]
pub struct TimerTable {
    /// Deadlines of subflows `0..INLINE`, then of the others (`OFF`: not armed).
    inline: [Nanos; INLINE],
    more: Vec<Nanos>,
    /// The smallest deadline of all (`OFF`: none armed).
    earliest: Nanos,
}

impl Default for TimerTable {
    fn default() -> Self {
        TimerTable {
            inline: [OFF; INLINE],
            more: Vec::new(),
            earliest: OFF,
        }
    }
}

fn armed(deadline: Nanos) -> Option<Nanos> {
    (deadline != OFF).then_some(deadline)
}

impl TimerTable {
    pub fn get(&self, subflow: usize) -> Option<Nanos> {
        let d = match subflow.checked_sub(INLINE) {
            None => self.inline[subflow],
            Some(k) => self.more.get(k).copied().unwrap_or(OFF),
        };
        armed(d)
    }

    /// Subflow `subflow`'s deadline, made room for.
    fn slot(&mut self, subflow: usize) -> &mut Nanos {
        match subflow.checked_sub(INLINE) {
            None => &mut self.inline[subflow],
            Some(k) => {
                if self.more.len() <= k {
                    self.more.resize(k + 1, OFF);
                }
                &mut self.more[k]
            }
        }
    }

    fn recompute_earliest(&mut self) {
        self.earliest = self
            .inline
            .iter()
            .chain(&self.more)
            .copied()
            .min()
            .unwrap_or(OFF);
    }

    pub fn set(&mut self, subflow: usize, at: Nanos) {
        let slot = self.slot(subflow);
        let before = std::mem::replace(slot, at);
        if at <= self.earliest {
            self.earliest = at;
        } else if before == self.earliest {
            self.recompute_earliest();
        }
    }

    /// Arms the timer unless it is armed already.
    pub fn arm(&mut self, subflow: usize, at: Nanos) {
        if self.get(subflow).is_none() {
            self.set(subflow, at);
        }
    }

    pub fn stop(&mut self, subflow: usize) {
        if self.get(subflow).is_some() {
            self.set(subflow, OFF);
        }
    }

    /// The earliest deadline of all.
    pub fn next(&self) -> Option<Nanos> {
        armed(self.earliest)
    }

    /// Takes (disarms) one timer that expired by `now`, if any: the lowest subflow first.
    pub fn take_expired(&mut self, now: Nanos) -> Option<usize> {
        if self.earliest > now {
            return None;
        }
        let s = self
            .inline
            .iter()
            .chain(&self.more)
            .position(|&d| d <= now)?;
        self.set(s, OFF);
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_deadline_and_expiry_in_order() {
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        t.set(2, 30);
        t.arm(0, 20);
        t.arm(0, 10);
        assert_eq!(t.next(), Some(20), "arm keeps an armed timer");
        assert_eq!(t.take_expired(25), Some(0));
        assert_eq!(t.take_expired(25), None);
        assert_eq!(t.next(), Some(30));
        t.stop(2);
        assert_eq!(t.next(), None);
    }

    #[test]
    fn the_earliest_follows_every_change() {
        let mut t = TimerTable::default();
        t.set(0, 50);
        t.set(1, 40);
        t.set(3, 45);
        assert_eq!(t.next(), Some(40));
        t.set(1, 60);
        assert_eq!(t.next(), Some(45), "the earliest moved later");
        t.stop(3);
        assert_eq!(t.next(), Some(50));
        assert_eq!(t.take_expired(100), Some(0), "the lowest subflow first");
        assert_eq!(t.take_expired(100), Some(1));
        assert_eq!((t.take_expired(100), t.next()), (None, None));
    }
}
