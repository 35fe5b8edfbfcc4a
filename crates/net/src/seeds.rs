//! One derivation of independent random streams from a run's seed, used by every backend:
//! the same scenario and seed give the same link decisions and the same flow layout in the
//! simulator and in the emulator.

/// What a stream is for. Each kind gets streams of its own, so adding flows never changes
/// a link's decisions and the other way round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    /// One link direction's random loss and RED decisions (index: the direction id).
    Link = 1,
    /// One flow's start jitter, then its on/off burst and idle times (index: the flow's
    /// position in the layout).
    Flow = 2,
    /// A scenario's numbers drawn per run, such as a group's size (index: the group).
    Draw = 3,
    /// A source's path choices (index: the flow's position in the layout): apart from its
    /// burst and idle times, so that every selector sees the same on/off pattern.
    Select = 4,
    /// A link's delay drawn per scenario (index: the link).
    Delay = 5,
    /// A host's processing jitter on one interface (index: the direction leaving it).
    HostJitter = 6,
}

/// The seed of stream `index` of `kind`: splitmix64's finaliser over the run's seed mixed
/// with both, so neighbouring indices give unrelated streams.
pub fn sub_seed(seed: u64, kind: Stream, index: u64) -> u64 {
    let mut z = seed
        ^ (kind as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_kind_index_and_seed() {
        let a = sub_seed(1, Stream::Link, 0);
        assert_ne!(a, sub_seed(1, Stream::Flow, 0));
        assert_ne!(a, sub_seed(1, Stream::Link, 1));
        assert_ne!(a, sub_seed(2, Stream::Link, 0));
        assert_eq!(a, sub_seed(1, Stream::Link, 0));
    }
}
