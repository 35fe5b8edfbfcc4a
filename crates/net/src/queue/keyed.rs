//! Keyed events: at most one per key (a link direction's next wake-up), the earliest known
//! at once. A few keys are scanned; many live in a tournament tree, so rescheduling one
//! costs a walk up the tree. Scheduling a key again replaces its event: an earlier wake-up
//! made stale is dropped rather than popped.

use super::{Key, NONE};

/// At most one event per key, the earliest found in constant time: a winner tree whose
/// nodes hold the earliest key of their subtree and which leaf it is.
pub(super) struct Tournament<E> {
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
pub(super) struct Scan<E> {
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
            // Without branches: which key is earliest changes from event to event, so a
            // branch per key is mispredicted often.
            let (mut best, mut leaf) = (NONE, 0);
            for (k, &key) in self.keys.iter().enumerate() {
                let earlier = key < best;
                best = std::hint::select_unpredictable(earlier, key, best);
                leaf = std::hint::select_unpredictable(earlier, k, leaf);
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
pub(super) enum Keyed<E> {
    Scan(Scan<E>),
    Tree(Tournament<E>),
}

/// Up to this many keys, scanning beats the tree.
pub(super) const SCAN_KEYS: usize = 32;

impl<E> Keyed<E> {
    #[inline]
    pub(super) fn new(n: usize) -> Self {
        if n <= SCAN_KEYS {
            Keyed::Scan(Scan::new(n))
        } else {
            Keyed::Tree(Tournament::new(n))
        }
    }
    #[inline]
    pub(super) fn schedule(&mut self, k: usize, key: Key, event: E) {
        match self {
            Keyed::Scan(s) => s.schedule(k, key, event),
            Keyed::Tree(t) => t.schedule(k, key, event),
        }
    }
    #[inline]
    pub(super) fn peek(&mut self) -> Option<(usize, Key)> {
        match self {
            Keyed::Scan(s) => s.peek(),
            Keyed::Tree(t) => t.peek(),
        }
    }
    #[inline]
    pub(super) fn pop(&mut self, k: usize) -> E {
        match self {
            Keyed::Scan(s) => s.pop(k),
            Keyed::Tree(t) => t.pop(k),
        }
    }
    pub(super) fn len(&self) -> usize {
        match self {
            Keyed::Scan(s) => s.len,
            Keyed::Tree(t) => t.len,
        }
    }
}
