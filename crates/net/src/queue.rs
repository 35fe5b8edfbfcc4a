//! The event queue both drivers of the fabric use (the simulator's event loop and the
//! emulator's real-time loop): integer nanosecond time, and events due at the same time
//! taken in the order they were scheduled. This is the one definition of equal-time
//! ordering, so a run is a pure function of its inputs and seed on either backend.
//!
//! Two kinds of event live here. Keyed events: at most one per key (a link direction's
//! next wake-up: the arrival of the head of its pipe), kept in a tournament tree over the
//! keys, so the earliest is known at once and rescheduling one costs a walk up the tree;
//! scheduling a key again replaces its event (an earlier wake-up made stale is dropped
//! rather than popped). Other events (timers, flow starts and stops, measurements: many,
//! mostly far off) wait in a binary heap. Every event takes its sequence number from one
//! counter, and `pop` takes the earlier of the two heads by (time, sequence): the order is
//! exactly that of a single heap, and the frequent events never sift through the far-off
//! ones.

use crate::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// (time, sequence) in one integer, so that comparing two is branch-free.
type Key = u128;
const NONE: Key = Key::MAX;

fn key(time: Nanos, seq: u64) -> Key {
    ((time as u128) << 64) | seq as u128
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

/// At most one event per key, the earliest found in constant time: a winner tree whose
/// nodes hold the earliest key of their subtree and which leaf it is.
struct Tournament<E> {
    events: Vec<Option<E>>,
    /// Node `i`'s winner; `[1]` is the overall winner, `[width + k]` is key `k` itself.
    node_key: Vec<Key>,
    node_leaf: Vec<u32>,
    width: usize,
    len: usize,
    /// A key whose event was popped but whose path up the tree still shows it: the
    /// dispatcher usually schedules that key again at once, and then one walk up the tree
    /// does for both.
    popped: Option<usize>,
}

impl<E> Tournament<E> {
    fn new(n: usize) -> Self {
        let width = n.next_power_of_two().max(1);
        let mut node_leaf = vec![0u32; 2 * width];
        for k in 0..width {
            node_leaf[width + k] = k as u32;
        }
        for i in (1..width).rev() {
            node_leaf[i] = node_leaf[2 * i];
        }
        Tournament {
            events: (0..width).map(|_| None).collect(),
            node_key: vec![NONE; 2 * width],
            node_leaf,
            width,
            len: 0,
            popped: None,
        }
    }

    /// Sets leaf `k`'s key and replays its matches up to the root.
    fn walk(&mut self, k: usize, key: Key) {
        // Both arrays are 2 * width long, a power of two: masking the index proves it in
        // bounds, so the loop has no checks.
        let (keys, leaves) = (&mut self.node_key[..], &mut self.node_leaf[..]);
        let mask = keys.len() - 1;
        let leaf_mask = leaves.len() - 1;
        let mut i = self.width + k;
        keys[i & mask] = key;
        let (mut best, mut leaf) = (key, k as u32);
        while i > 1 {
            let sibling = i ^ 1;
            let sibling_key = keys[sibling & mask];
            if sibling_key < best {
                best = sibling_key;
                leaf = leaves[sibling & leaf_mask];
            }
            i /= 2;
            keys[i & mask] = best;
            leaves[i & leaf_mask] = leaf;
        }
    }

    /// Finishes the removal of a popped key that was not scheduled again.
    fn settle(&mut self) {
        if let Some(k) = self.popped.take() {
            self.walk(k, NONE);
        }
    }

    fn schedule(&mut self, k: usize, key: Key, event: E) {
        if self.popped != Some(k) {
            self.settle();
        }
        self.popped = None;
        self.len += self.events[k].is_none() as usize;
        self.events[k] = Some(event);
        self.walk(k, key);
    }

    /// The earliest key's leaf and key.
    fn peek(&mut self) -> Option<(usize, Key)> {
        self.settle();
        (self.node_key[1] != NONE).then(|| (self.node_leaf[1] as usize, self.node_key[1]))
    }

    /// Takes the earliest key's event (the caller peeked it).
    fn pop(&mut self, k: usize) -> E {
        self.len -= 1;
        self.node_key[self.width + k] = NONE;
        self.popped = Some(k);
        self.events[k].take().expect("a keyed event")
    }
}

/// At most one event per key, for a few keys: a plain array and the earliest remembered.
/// Popping forgets it and the next peek scans the array again (a few keys fit in a cache
/// line or two, cheaper than walking a tree twice per event).
struct Scan<E> {
    keys: Vec<Key>,
    events: Vec<Option<E>>,
    /// The earliest key and its leaf, when known.
    earliest: Option<(usize, Key)>,
    len: usize,
}

impl<E> Scan<E> {
    fn new(n: usize) -> Self {
        Scan {
            keys: vec![NONE; n],
            events: (0..n).map(|_| None).collect(),
            earliest: None,
            len: 0,
        }
    }

    fn schedule(&mut self, k: usize, key: Key, event: E) {
        self.len += self.events[k].is_none() as usize;
        self.events[k] = Some(event);
        let before = std::mem::replace(&mut self.keys[k], key);
        match self.earliest {
            Some((_, e)) if key < e => self.earliest = Some((k, key)),
            // The earliest moved later: it may no longer be.
            Some((leaf, _)) if leaf == k && key > before => self.earliest = None,
            _ => {}
        }
    }

    fn peek(&mut self) -> Option<(usize, Key)> {
        if self.earliest.is_none() {
            let (mut best, mut leaf) = (NONE, 0);
            for (k, &key) in self.keys.iter().enumerate() {
                if key < best {
                    best = key;
                    leaf = k;
                }
            }
            self.earliest = Some((leaf, best));
        }
        self.earliest.filter(|&(_, key)| key != NONE)
    }

    fn pop(&mut self, k: usize) -> E {
        self.len -= 1;
        self.keys[k] = NONE;
        self.earliest = None;
        self.events[k].take().expect("a keyed event")
    }
}

/// Keyed events: scanned when there are few keys, a tournament tree when there are many.
enum Keyed<E> {
    Scan(Scan<E>),
    Tree(Tournament<E>),
}

/// Up to this many keys, scanning beats the tree.
const SCAN_KEYS: usize = 32;

impl<E> Keyed<E> {
    #[inline]
    fn new(n: usize) -> Self {
        if n <= SCAN_KEYS {
            Keyed::Scan(Scan::new(n))
        } else {
            Keyed::Tree(Tournament::new(n))
        }
    }
    #[inline]
    fn schedule(&mut self, k: usize, key: Key, event: E) {
        match self {
            Keyed::Scan(s) => s.schedule(k, key, event),
            Keyed::Tree(t) => t.schedule(k, key, event),
        }
    }
    #[inline]
    fn peek(&mut self) -> Option<(usize, Key)> {
        match self {
            Keyed::Scan(s) => s.peek(),
            Keyed::Tree(t) => t.peek(),
        }
    }
    #[inline]
    fn pop(&mut self, k: usize) -> E {
        match self {
            Keyed::Scan(s) => s.pop(k),
            Keyed::Tree(t) => t.pop(k),
        }
    }
    fn len(&self) -> usize {
        match self {
            Keyed::Scan(s) => s.len,
            Keyed::Tree(t) => t.len,
        }
    }
}

pub struct EventQueue<E> {
    keyed: Keyed<E>,
    other: BinaryHeap<Entry<E>>,
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
            other: BinaryHeap::new(),
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
    pub fn pop_due(&mut self, now: Nanos) -> Option<(Nanos, E)> {
        if self.peek_time()? > now {
            return None;
        }
        self.pop()
    }

    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let keyed = self.keyed.peek();
        let other = self.other.peek().map(Entry::key);
        let keyed_first = match (keyed, other) {
            (Some((_, a)), Some(b)) => a < b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let (time, event) = match keyed {
            Some((k, key)) if keyed_first => ((key >> 64) as Nanos, self.keyed.pop(k)),
            _ => {
                let e = self.other.pop().expect("peeked");
                (e.time, e.event)
            }
        };
        self.popped += 1;
        Some((time, event))
    }

    pub fn peek_time(&mut self) -> Option<Nanos> {
        let keyed = self.keyed.peek().map(|(_, key)| (key >> 64) as Nanos);
        let other = self.other.peek().map(|e| e.time);
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
        for keys in [5, 3 * SCAN_KEYS] {
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
}
