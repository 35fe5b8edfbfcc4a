//! A source's path selector (MATCP): which of its group's numbered paths each new TCP
//! connection takes, from what its earlier connections measured. The selectors themselves
//! are the `matcp` crate's; this holds one per source with its own random stream.

use crate::connection::Client;
use matcp::{
    Drops, Lowest, Observation, PathId, PathSelector, Rtt, RttVariation, SinglePath,
    VariationReading, WeightedRtt,
};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::spec::{SelectSpec, SelectorKind};

pub struct Selection {
    selector: Box<dyn PathSelector + Send>,
    /// Draws for ties and weighted choices: a stream of its own, so that the source's burst
    /// and idle times are the same whichever selector runs.
    rng: Xoshiro256PlusPlus,
}

impl Selection {
    pub fn new(spec: &SelectSpec, paths: usize, seed: u64) -> Self {
        let variation = match spec.variation.unwrap_or_default() {
            scenario::spec::VariationReading::Queueing => VariationReading::Queueing,
            scenario::spec::VariationReading::Rttvar => VariationReading::Rttvar,
        };
        let refresh = spec.refresh;
        let selector: Box<dyn PathSelector + Send> = match spec.kind {
            SelectorKind::SinglePath => Box::new(SinglePath { path: PathId(0) }),
            SelectorKind::RttVariation => Box::new(Lowest::new(
                RttVariation { reading: variation },
                paths,
                refresh,
            )),
            SelectorKind::Drops => Box::new(Lowest::new(Drops, paths, refresh)),
            SelectorKind::Rtt => Box::new(Lowest::new(Rtt, paths, refresh)),
            SelectorKind::WeightedRtt => Box::new(WeightedRtt::new(paths)),
        };
        Selection {
            selector,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    pub fn choose(&mut self) -> PathId {
        let uniform: f64 = self.rng.random();
        self.selector.choose(uniform)
    }

    /// A connection on `path` ended: what its sender measured.
    pub fn observe(&mut self, path: PathId, client: &Client) {
        if let Some(sf) = client.subflows().first() {
            let tx = &sf.tx;
            let observed = Observation {
                srtt_ns: tx.rtt.srtt,
                rttvar_ns: tx.rtt.rttvar,
                min_rtt_ns: tx.rtt.min_rtt,
                rto_ns: tx.rtt.rto(),
                segments_sent: tx.snd_nxt + tx.retransmits,
                retransmits: tx.retransmits,
                timeouts: tx.timeouts + u64::from(sf.handshake_retries),
            };
            self.selector.observe(path, &observed);
        }
    }
}
