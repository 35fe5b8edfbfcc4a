//! Events not tied to a key (timers, flow starts and stops, measurements): a calendar
//! queue. Most are due a few milliseconds to seconds ahead, so each waits unsorted in the
//! bucket of its millisecond (pushing one is an append); a bucket is sorted, as a small
//! heap, only when time reaches it. A binary heap of all of them would walk a dozen
//! cache-cold levels per pop once there are tens of thousands (one RTO and one delayed-ACK
//! timer per connection). The order is the same: every event before the horizon is in the
//! near heap, every later one is in a bucket or the far heap.

use super::{Entry, Key};
use crate::Nanos;
use std::collections::BinaryHeap;

/// A bucket spans 2^20 ns (about a millisecond).
const BUCKET_SHIFT: u32 = 20;
const BUCKET_WIDTH: Nanos = 1 << BUCKET_SHIFT;
/// Buckets in the ring: 4096 of them cover about 4.3 s ahead of the horizon.
const BUCKETS: usize = 4096;
const SPAN: Nanos = BUCKET_WIDTH * BUCKETS as Nanos;
/// Events each bucket has room for before it first grows.
const BUCKET_CAPACITY: usize = 8;

pub(super) struct Calendar<E> {
    /// Events due before `horizon`, in (time, sequence) order.
    near: BinaryHeap<Entry<E>>,
    /// Events due in `[horizon, horizon + SPAN)`, each in the bucket of its time: bucket
    /// `(time >> BUCKET_SHIFT) % BUCKETS`, unsorted.
    buckets: Vec<Vec<Entry<E>>>,
    in_buckets: usize,
    /// Events due at or after `horizon + SPAN`.
    far: BinaryHeap<Entry<E>>,
    /// Start of the first bucket not yet taken into `near`; a multiple of the bucket width.
    horizon: Nanos,
}

fn bucket_of(time: Nanos) -> usize {
    (time >> BUCKET_SHIFT) as usize % BUCKETS
}

impl<E> Default for Calendar<E> {
    fn default() -> Self {
        Calendar {
            near: BinaryHeap::new(),
            buckets: (0..BUCKETS)
                .map(|_| Vec::with_capacity(BUCKET_CAPACITY))
                .collect(),
            in_buckets: 0,
            far: BinaryHeap::new(),
            horizon: 0,
        }
    }
}

impl<E> Calendar<E> {
    pub(super) fn push(&mut self, entry: Entry<E>) {
        if entry.time < self.horizon {
            self.near.push(entry);
        } else if entry.time - self.horizon < SPAN {
            self.buckets[bucket_of(entry.time)].push(entry);
            self.in_buckets += 1;
        } else {
            self.far.push(entry);
        }
    }

    /// The earliest event's key.
    #[inline]
    pub(super) fn peek(&mut self) -> Option<Key> {
        if self.near.is_empty() {
            self.refill();
        }
        self.near.peek().map(Entry::key)
    }

    /// Takes the earliest event (the caller peeked it).
    #[inline]
    pub(super) fn pop(&mut self) -> Option<Entry<E>> {
        self.near.pop()
    }

    pub(super) fn len(&self) -> usize {
        self.near.len() + self.in_buckets + self.far.len()
    }

    /// Moves the horizon over buckets until the near heap holds something (or nothing is
    /// left). An empty ring jumps straight to the far heap's earliest bucket.
    #[cold]
    fn refill(&mut self) {
        while self.near.is_empty() {
            if self.in_buckets == 0 {
                let Some(first) = self.far.peek() else {
                    return;
                };
                // Far events lie beyond the ring, so this moves the horizon on, and the
                // first of them into the ring.
                self.horizon = first.time & !(BUCKET_WIDTH - 1);
                self.take_from_far();
            }
            let bucket = &mut self.buckets[bucket_of(self.horizon)];
            self.in_buckets -= bucket.len();
            self.near.extend(bucket.drain(..));
            self.horizon = self.horizon.saturating_add(BUCKET_WIDTH);
            self.take_from_far();
        }
    }

    /// Moves the far events that the ring now covers into their buckets.
    fn take_from_far(&mut self) {
        while self
            .far
            .peek()
            .is_some_and(|e| e.time - self.horizon < SPAN)
        {
            let entry = self.far.pop().expect("peeked");
            self.push(entry);
        }
    }
}
