//! The event queue both drivers of the fabric use (the simulator's event loop and the
//! emulator's real-time loop): integer nanosecond time, and events due at the same time
//! taken in the order they were scheduled. This is the one definition of equal-time
//! ordering, so a run is a pure function of its inputs and seed on either backend.
//!
//! Two kinds of event live here. Keyed events (`keyed`): at most one per key (a link
//! direction's next wake-up: the arrival of the head of its pipe), the earliest known at
//! once; scheduling a key again replaces its event. Other events (`calendar`: timers, flow
//! starts and stops, measurements; many, mostly far off) wait in a calendar queue. Every
//! event takes its sequence number from one counter, and `pop` takes the earlier of the two
//! heads by (time, sequence): the order is exactly that of a single heap, and the frequent
//! events never sift through the far-off ones.

mod calendar;
mod keyed;

use crate::Nanos;
use calendar::Calendar;
use keyed::Keyed;
#[cfg(test)]
use keyed::SCAN_KEYS;
use std::cmp::Ordering;

/// (time, sequence) in one integer, so that comparing two is branch-free.
type Key = u128;
const NONE: Key = Key::MAX;

fn key(time: Nanos, seq: u64) -> Key {
    ((time as u128) << 64) | seq as u128
}

fn time_of(key: Key) -> Nanos {
    (key >> 64) as Nanos
}

struct Entry<E> {
    time: Nanos,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> Key {
        key(self.time, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and the earliest must come first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

pub struct EventQueue<E> {
    keyed: Keyed<E>,
    other: Calendar<E>,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::with_keys(0)
    }
}

impl<E> EventQueue<E> {
    /// A queue for keyed events of keys `0..keys` (and any number of others).
    pub fn with_keys(keys: usize) -> Self {
        EventQueue {
            keyed: Keyed::new(keys),
            other: Calendar::default(),
            next_seq: 0,
            popped: 0,
        }
    }

    fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// Schedules `event` at `time`.
    pub fn push(&mut self, time: Nanos, event: E) {
        let seq = self.seq();
        self.other.push(Entry { time, seq, event });
    }

    /// Schedules `event` at `time` as key `key`'s one event, replacing any it had.
    pub fn push_keyed(&mut self, key: usize, time: Nanos, event: E) {
        let seq = self.seq();
        self.keyed.schedule(key, self::key(time, seq), event);
    }

    /// Pops the earliest event if it is due by `now`.
    #[inline]
    pub fn pop_due(&mut self, now: Nanos) -> Option<(Nanos, E)> {
        self.pop_by(key(now, u64::MAX))
    }

    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.pop_by(NONE)
    }

    /// Pops the earliest event if its key is at most `limit`: both heads are looked at once.
    #[inline]
    fn pop_by(&mut self, limit: Key) -> Option<(Nanos, E)> {
        let keyed = self.keyed.peek();
        let other = self.other.peek().unwrap_or(NONE);
        let (time, event) = match keyed {
            Some((k, key)) if key < other => {
                if key > limit {
                    return None;
                }
                (time_of(key), self.keyed.pop(k))
            }
            _ => {
                if other > limit || other == NONE {
                    return None;
                }
                let e = self.other.pop().expect("peeked");
                (e.time, e.event)
            }
        };
        self.popped += 1;
        Some((time, event))
    }

    pub fn peek_time(&mut self) -> Option<Nanos> {
        let keyed = self.keyed.peek().map(|(_, key)| time_of(key));
        let other = self.other.peek().map(time_of);
        match (keyed, other) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Events taken out so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.keyed.len() + self.other.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_scheduling_order() {
        let mut q = EventQueue::default();
        q.push(5, 'c');
        q.push(3, 'a');
        q.push(3, 'b');
        assert_eq!(q.pop_due(2), None);
        assert_eq!(q.pop(), Some((3, 'a')));
        assert_eq!(q.pop(), Some((3, 'b')));
        assert_eq!(q.pop_due(5), Some((5, 'c')));
        assert_eq!(q.pop(), None);
        assert_eq!(q.popped(), 3);
    }

    /// Keyed and other events come out in the order of a single heap holding them all,
    /// less the keyed events that were replaced before they were due.
    #[test]
    fn keyed_events_keep_the_single_heap_order() {
        // A few keys (scanned) and many (a tree).
        for keys in [1, 2, 5, 12, 3 * SCAN_KEYS] {
            keyed_order(keys);
        }
    }

    fn keyed_order(keys: usize) {
        let mut single = EventQueue::default();
        let mut split = EventQueue::with_keys(keys);
        // The single heap's events carry whether they are still live.
        let mut live_seq: Vec<Option<u32>> = vec![None; keys];
        let mut x = 12345u64;
        let mut now = 0;
        let check = |single: &mut EventQueue<(u32, Option<usize>)>,
                     split: &mut EventQueue<u32>,
                     live_seq: &Vec<Option<u32>>| {
            // Skip the single heap's replaced keyed events.
            while let Some((t, (i, key))) = single.pop() {
                if key.is_some_and(|k| live_seq[k] != Some(i)) {
                    continue;
                }
                assert_eq!(split.pop(), Some((t, i)));
                return t;
            }
            assert_eq!(split.pop(), None);
            0
        };
        for i in 0..5000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = now + (x >> 33) % 50;
            if (x >> 20).is_multiple_of(3) {
                let k = ((x >> 40) % keys as u64) as usize;
                single.push(t, (i, Some(k)));
                split.push_keyed(k, t, i);
                live_seq[k] = Some(i);
            } else {
                single.push(t, (i, None));
                split.push(t, i);
            }
            if i.is_multiple_of(3) {
                now = check(&mut single, &mut split, &live_seq).max(now);
            }
        }
        while !split.is_empty() {
            check(&mut single, &mut split, &live_seq);
        }
    }

    /// Times from nanoseconds to beyond the calendar's span, pushed in any order and
    /// interleaved with pops (some before the current horizon): the same order as one
    /// sorted list by (time, scheduling order).
    #[test]
    fn calendar_order_is_time_then_scheduling_order() {
        use std::cmp::Reverse;
        let mut q = EventQueue::default();
        let mut reference = std::collections::BinaryHeap::new();
        let mut x = 99u64;
        let mut now = 0;
        let scales = [1, 1_000, 1 << 20, 50_000_000, 1_000_000_000, 20_000_000_000];
        for i in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let scale = scales[((x >> 13) % scales.len() as u64) as usize];
            let t = now + (x >> 24) % scale;
            q.push(t, i);
            reference.push(Reverse((t, i)));
            if !(x >> 50).is_multiple_of(4) {
                let Reverse((t, i)) = reference.pop().expect("pushed");
                assert_eq!(q.peek_time(), Some(t));
                assert_eq!(q.pop(), Some((t, i)));
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(Reverse((t, i))) = reference.pop() {
            assert_eq!(q.pop(), Some((t, i)));
        }
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }
}
