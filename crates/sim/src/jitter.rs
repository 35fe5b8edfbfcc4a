//! Hosts' processing jitter (`[[node]] jitter`): a packet a host sends leaves it after a
//! delay drawn uniformly from `[0, jitter)`, and never before a packet the host sent
//! earlier through the same interface (a host's interface is a FIFO, as its qdisc is).
//!
//! Why: in a deterministic simulation every ACK-clocked sender answers an ACK at the same
//! instant it arrives, so flows sharing a drop-tail queue can lock their arrivals to its
//! departures and some flow's packets keep finding a free place while another's keep
//! finding the queue full: the phase effects of Floyd and Jacobson ("On traffic phase
//! effects in packet-switched gateways", 1992), who removed them by adding a random
//! processing time at the sources. A real host's stack adds such a time to every packet.
//!
//! Sans-I/O: the world hands a packet over with the time it was sent and gets the time it
//! leaves; it schedules that, and takes the packets back in order then.

use crate::packet::InFlight;
use net::Nanos;
use net::seeds::{Stream, sub_seed};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use scenario::Scenario;
use scenario::model::DirId;
use std::collections::VecDeque;

/// One interface of a host with jitter: the direction leaving the host.
struct Interface {
    /// The jitter's bound, nanoseconds (positive).
    bound: Nanos,
    /// When the packet last handed over leaves (no later packet leaves before it).
    last_departure: Nanos,
    /// Packets handed over and not yet gone, in the order they were sent.
    waiting: VecDeque<InFlight>,
    /// The interface's own stream: its delays do not depend on other hosts' traffic.
    rng: Xoshiro256PlusPlus,
}

/// The interfaces of hosts with jitter, by the direction leaving them.
pub struct HostJitter {
    interfaces: Vec<Option<Interface>>,
}

impl HostJitter {
    /// The jitter of `sc`'s hosts for a run with `seed`; `None` when no host has any (the
    /// simulator then sends every packet at once, as before this existed).
    pub fn new(sc: &Scenario, seed: u64) -> Option<Self> {
        let interfaces: Vec<Option<Interface>> = (0..sc.links.len() * 2)
            .map(|d| {
                let dir = DirId(d);
                let from = sc.links[dir.link().0].from_node(dir);
                let bound = sc.nodes[from.0].jitter.nanos();
                (bound > 0).then(|| Interface {
                    bound,
                    last_departure: 0,
                    waiting: VecDeque::new(),
                    rng: Xoshiro256PlusPlus::seed_from_u64(sub_seed(
                        seed,
                        Stream::HostJitter,
                        d as u64,
                    )),
                })
            })
            .collect();
        let any = interfaces.iter().any(Option::is_some);
        any.then_some(HostJitter { interfaces })
    }

    /// `pkt`, sent `now` through `dir`: the time it leaves if the host has jitter there
    /// (it waits here until then, when the caller takes it with [`HostJitter::release`]),
    /// or `None` to send it at once.
    pub fn hold(&mut self, dir: DirId, now: Nanos, pkt: InFlight) -> Option<Nanos> {
        let interface = self.interfaces.get_mut(dir.index())?.as_mut()?;
        let drawn = now + interface.rng.random_range(0..interface.bound);
        let departure = drawn.max(interface.last_departure);
        interface.last_departure = departure;
        interface.waiting.push_back(pkt);
        Some(departure)
    }

    /// The packet whose departure through `dir` is due: the oldest one held there.
    pub fn release(&mut self, dir: DirId) -> Option<InFlight> {
        self.interfaces
            .get_mut(dir.index())?
            .as_mut()?
            .waiting
            .pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketId;
    use net::RoutingHeader;
    use proptest::prelude::*;

    fn scenario(jitter: &str) -> Scenario {
        let text = format!(
            r#"
[scenario]
name = "jitter"
duration = "1s"
[[node]]
name = "a"
kind = "host"
jitter = "{jitter}"
[[node]]
name = "b"
kind = "host"
[[link]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "1ms"
[[flow]]
name = "f"
from = "a"
to = "b"
"#
        );
        let options = scenario::load::LoadOptions::default();
        scenario::load::load_str(&text, "jitter.toml".as_ref(), &options)
            .expect("a valid scenario")
            .remove(0)
    }

    fn packet(n: u32) -> InFlight {
        InFlight {
            id: PacketId(n),
            routing: RoutingHeader {
                route: net::RouteId(0),
                hop: 0,
            },
            wire_bytes: 1500,
        }
    }

    #[test]
    fn no_jitter_sends_at_once() {
        assert!(HostJitter::new(&scenario("0us"), 1).is_none());
    }

    #[test]
    fn only_the_hosts_interface_waits() {
        let mut jitter = HostJitter::new(&scenario("50us"), 1).expect("a has jitter");
        // a to b waits; b to a (b has none) goes at once.
        assert!(jitter.hold(DirId(0), 1_000, packet(1)).is_some());
        assert!(jitter.hold(DirId(1), 1_000, packet(2)).is_none());
        assert_eq!(jitter.release(DirId(0)).map(|p| p.id), Some(PacketId(1)));
        assert_eq!(jitter.release(DirId(0)), None);
    }

    proptest! {
        /// Each packet leaves within the bound of when it was sent, unless an earlier one
        /// leaves later, and then right after it: in the order sent, never earlier than
        /// sent, never later than it must.
        #[test]
        fn departures_keep_order_and_bound(gaps in proptest::collection::vec(0u64..200_000, 1..200), seed in any::<u64>()) {
            let bound = 100_000;
            let mut jitter = HostJitter::new(&scenario("100us"), seed).expect("jitter");
            let (mut now, mut last) = (0, 0);
            for (n, gap) in gaps.iter().enumerate() {
                now += gap;
                let t = jitter.hold(DirId(0), now, packet(n as u32)).expect("held");
                prop_assert!(t >= now && t >= last);
                prop_assert!(t < now + bound || t == last);
                last = t;
            }
            for n in 0..gaps.len() {
                prop_assert_eq!(jitter.release(DirId(0)).map(|p| p.id), Some(PacketId(n as u32)));
            }
        }
    }
}
