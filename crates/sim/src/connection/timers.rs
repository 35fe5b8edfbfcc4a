//! Every timer of an endpoint in one table: one deadline per subflow (the client's
//! retransmission timer, the server's delayed ACK) and one for the connection (MPTCP's
//! data-level retransmission timer). The endpoint's next deadline is the smallest; its
//! driver needs to schedule only that one.
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

/// One timer of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Subflow `k`'s timer.
    Subflow(usize),
    /// The connection's own (data-level) timer.
    Connection,
}

#[derive(Clone, Debug)]
pub struct TimerTable {
    /// Deadlines of subflows `0..INLINE`, then of the others (`OFF`: not armed).
    inline: [Nanos; INLINE],
    more: Vec<Nanos>,
    /// The connection's deadline (`OFF`: not armed).
    connection: Nanos,
    /// The smallest deadline of all (`OFF`: none armed).
    earliest: Nanos,
}

impl Default for TimerTable {
    fn default() -> Self {
        TimerTable {
            inline: [OFF; INLINE],
            more: Vec::new(),
            connection: OFF,
            earliest: OFF,
        }
    }
}

fn armed(deadline: Nanos) -> Option<Nanos> {
    (deadline != OFF).then_some(deadline)
}

impl TimerTable {
    pub fn get(&self, timer: impl Into<Timer>) -> Option<Nanos> {
        let d = match timer.into() {
            Timer::Connection => self.connection,
            Timer::Subflow(s) => match s.checked_sub(INLINE) {
                None => self.inline[s],
                Some(k) => self.more.get(k).copied().unwrap_or(OFF),
            },
        };
        armed(d)
    }

    /// A timer's deadline, made room for.
    fn slot(&mut self, timer: Timer) -> &mut Nanos {
        match timer {
            Timer::Connection => &mut self.connection,
            Timer::Subflow(s) => match s.checked_sub(INLINE) {
                None => &mut self.inline[s],
                Some(k) => {
                    if self.more.len() <= k {
                        self.more.resize(k + 1, OFF);
                    }
                    &mut self.more[k]
                }
            },
        }
    }

    fn recompute_earliest(&mut self) {
        self.earliest = self
            .inline
            .iter()
            .chain(&self.more)
            .copied()
            .min()
            .unwrap_or(OFF)
            .min(self.connection);
    }

    pub fn set(&mut self, timer: impl Into<Timer>, at: Nanos) {
        let slot = self.slot(timer.into());
        let before = std::mem::replace(slot, at);
        if at <= self.earliest {
            self.earliest = at;
        } else if before == self.earliest {
            self.recompute_earliest();
        }
    }

    /// Arms the timer unless it is armed already.
    pub fn arm(&mut self, timer: impl Into<Timer>, at: Nanos) {
        let timer = timer.into();
        if self.get(timer).is_none() {
            self.set(timer, at);
        }
    }

    /// Sets the timer to `deadline`, or stops it when there is none.
    pub fn follow(&mut self, timer: impl Into<Timer>, deadline: Option<Nanos>) {
        match deadline {
            Some(at) => self.set(timer, at),
            None => self.stop(timer),
        }
    }

    pub fn stop(&mut self, timer: impl Into<Timer>) {
        let timer = timer.into();
        if self.get(timer).is_some() {
            self.set(timer, OFF);
        }
    }

    /// The earliest deadline of all.
    pub fn next(&self) -> Option<Nanos> {
        armed(self.earliest)
    }

    /// Takes (disarms) one timer that expired by `now`, if any: the lowest subflow first,
    /// the connection's after the subflows'.
    pub fn take_expired(&mut self, now: Nanos) -> Option<Timer> {
        if self.earliest > now {
            return None;
        }
        let timer = match self.inline.iter().chain(&self.more).position(|&d| d <= now) {
            Some(s) => Timer::Subflow(s),
            None if self.connection <= now => Timer::Connection,
            None => return None,
        };
        self.set(timer, OFF);
        Some(timer)
    }
}

impl From<usize> for Timer {
    fn from(subflow: usize) -> Timer {
        Timer::Subflow(subflow)
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
        assert_eq!(t.take_expired(25), Some(Timer::Subflow(0)));
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
        assert_eq!(
            t.take_expired(100),
            Some(0.into()),
            "the lowest subflow first"
        );
        assert_eq!(t.take_expired(100), Some(1.into()));
        assert_eq!((t.take_expired(100), t.next()), (None, None));
    }

    #[test]
    fn the_connection_timer_counts_for_the_earliest_and_expires_after_the_subflows() {
        let mut t = TimerTable::default();
        t.set(Timer::Connection, 30);
        t.set(1, 40);
        assert_eq!(t.next(), Some(30));
        t.set(0, 30);
        assert_eq!(t.take_expired(35), Some(Timer::Subflow(0)));
        assert_eq!(t.take_expired(35), Some(Timer::Connection));
        assert_eq!(t.next(), Some(40));
        t.arm(Timer::Connection, 50);
        t.arm(Timer::Connection, 20);
        assert_eq!(
            t.get(Timer::Connection),
            Some(50),
            "arm keeps an armed timer"
        );
        t.stop(Timer::Connection);
        assert_eq!(t.next(), Some(40));
    }
}
