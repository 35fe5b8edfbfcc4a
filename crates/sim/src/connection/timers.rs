//! Every timer of an endpoint in one table: a deadline per (subflow, kind). The endpoint's
//! next deadline is the smallest; its driver needs to schedule only that one.

use net::Nanos;

/// The kinds of timer an endpoint keeps per subflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// Client: retransmission of a SYN, of an MP_JOIN's third ACK, or of data (RTO).
    Retransmit = 0,
    /// Server: the delayed ACK.
    DelayedAck = 1,
}

const KINDS: usize = 2;

#[derive(Clone, Debug, Default)]
pub struct TimerTable {
    deadlines: Vec<[Option<Nanos>; KINDS]>,
}

impl TimerTable {
    pub fn get(&self, subflow: usize, kind: TimerKind) -> Option<Nanos> {
        self.deadlines.get(subflow).and_then(|d| d[kind as usize])
    }

    pub fn set(&mut self, subflow: usize, kind: TimerKind, at: Nanos) {
        if self.deadlines.len() <= subflow {
            self.deadlines.resize(subflow + 1, [None; KINDS]);
        }
        self.deadlines[subflow][kind as usize] = Some(at);
    }

    /// Arms the timer unless it is armed already.
    pub fn arm(&mut self, subflow: usize, kind: TimerKind, at: Nanos) {
        if self.get(subflow, kind).is_none() {
            self.set(subflow, kind, at);
        }
    }

    pub fn stop(&mut self, subflow: usize, kind: TimerKind) {
        if let Some(d) = self.deadlines.get_mut(subflow) {
            d[kind as usize] = None;
        }
    }

    /// The earliest deadline of all.
    pub fn next(&self) -> Option<Nanos> {
        self.deadlines.iter().flatten().flatten().copied().min()
    }

    /// Takes (disarms) one timer that expired by `now`, if any: the lowest subflow first.
    pub fn take_expired(&mut self, now: Nanos) -> Option<(usize, TimerKind)> {
        for (s, d) in self.deadlines.iter_mut().enumerate() {
            for (k, kind) in [TimerKind::Retransmit, TimerKind::DelayedAck]
                .into_iter()
                .enumerate()
            {
                if d[k].is_some_and(|t| t <= now) {
                    d[k] = None;
                    return Some((s, kind));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_deadline_and_expiry_in_order() {
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        t.set(2, TimerKind::Retransmit, 30);
        t.arm(0, TimerKind::DelayedAck, 20);
        t.arm(0, TimerKind::DelayedAck, 10);
        assert_eq!(t.next(), Some(20), "arm keeps an armed timer");
        assert_eq!(t.take_expired(25), Some((0, TimerKind::DelayedAck)));
        assert_eq!(t.take_expired(25), None);
        t.stop(2, TimerKind::Retransmit);
        assert_eq!(t.next(), None);
    }
}
