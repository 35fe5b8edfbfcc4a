//! When each flow of a scenario starts and stops: one layout for every backend, so the same
//! scenario and seed start the same flows at the same nanosecond in the simulator and on
//! real hosts.

use crate::Nanos;
use crate::seeds::{Stream, sub_seed};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::Scenario;

/// One flow of a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSlot {
    pub group: usize,
    pub index: u32,
    /// When the flow starts and stops sending, ns from the start of the run.
    pub start: Nanos,
    pub stop: Nanos,
}

/// A flow's slot and its own random stream, positioned after the start jitter was drawn:
/// an on/off source draws its burst and idle times from it, in that order.
#[derive(Clone, Debug)]
pub struct LaidOutFlow {
    pub slot: FlowSlot,
    pub rng: Xoshiro256PlusPlus,
}

/// Every flow of every group, in group order. Flow `i` of a group starts at the group's
/// `start` plus `i / count` of its `stagger`, plus a uniform draw in `[0, start_jitter)`.
pub fn flow_layout(sc: &Scenario, seed: u64) -> Vec<LaidOutFlow> {
    let mut flows = Vec::with_capacity(sc.total_flows() as usize);
    for (g, group) in sc.flows.iter().enumerate() {
        for index in 0..group.count {
            let position = flows.len() as u64;
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(sub_seed(seed, Stream::Flow, position));
            let jitter = match group.start_jitter.nanos() {
                0 => 0,
                j => rng.random_range(0..j),
            };
            flows.push(LaidOutFlow {
                slot: FlowSlot {
                    group: g,
                    index,
                    start: group.start_of(index).nanos() + jitter,
                    stop: group.stop.nanos(),
                },
                rng,
            });
        }
    }
    flows
}

/// The slots alone.
pub fn flow_slots(sc: &Scenario, seed: u64) -> Vec<FlowSlot> {
    flow_layout(sc, seed).into_iter().map(|f| f.slot).collect()
}
