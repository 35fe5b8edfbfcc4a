//! The network as packets see it: every link direction of a scenario, the table of routes
//! (the link directions a packet crosses, in order), and the routing header each packet
//! carries (its route and the hop it is on). The simulator's event loop and the emulator's
//! real-time loop both drive one `Fabric`; they differ only in the packet type and in where
//! the time comes from.
//!
//! The fabric never reads a clock and keeps no queue of its own: each call says, through
//! `wake`, when a link direction wants to be called back (one wake-up per packet and hop:
//! its arrival at the far end), and the driver calls [`Fabric::arrive`] then.

use crate::link::{Arrival, DropReason, Enqueued, LinkDir, LinkParams};
use crate::seeds::{Stream, sub_seed};
use crate::{Nanos, Packet};
use scenario::Scenario;
use scenario::model::{DirId, Event, LinkId};
use std::collections::HashMap;

/// An index into the route table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct RouteId(pub u32);

/// Where a packet is in the fabric: its route and the hop (index into the route) it is on.
/// Six bytes, aligned to two (not eight, aligned to four): with a packet's place and size
/// beside it, the simulator's packet in flight is 12 bytes and a link's slot 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C, packed(2))]
pub struct RoutingHeader {
    pub route: RouteId,
    pub hop: u16,
}

/// A packet the fabric can carry.
pub trait Routed: Packet {
    fn routing(&self) -> RoutingHeader;
    fn routing_mut(&mut self) -> &mut RoutingHeader;
}

/// Routes by id; the same list of hops always gets the same id.
#[derive(Default)]
pub struct RouteTable {
    routes: Vec<Box<[DirId]>>,
    ids: HashMap<Box<[DirId]>, RouteId>,
}

impl RouteTable {
    /// The id of the route crossing `hops`, added if new.
    pub fn intern(&mut self, hops: &[DirId]) -> RouteId {
        if let Some(&id) = self.ids.get(hops) {
            return id;
        }
        let id = RouteId(self.routes.len() as u32);
        self.routes.push(hops.into());
        self.ids.insert(hops.into(), id);
        id
    }

    pub fn hops(&self, id: RouteId) -> &[DirId] {
        &self.routes[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.routes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }
}

/// What became of a packet that entered a link.
pub struct Entered<P> {
    /// The link direction it entered.
    pub dir: DirId,
    /// Dropped on arrival, handed back with the reason.
    pub dropped: Option<(P, DropReason)>,
}

pub struct Fabric<P> {
    pub links: Vec<LinkDir<P>>,
    pub routes: RouteTable,
}

impl<P: Routed> Fabric<P> {
    /// Both directions of every link of `sc`, each with its own random stream of the run's
    /// `seed` (random loss, RED): direction `d` of every backend makes the same decisions
    /// for the same packets.
    pub fn new(sc: &Scenario, seed: u64) -> Self {
        let mut links = Vec::with_capacity(sc.links.len() * 2);
        for (l, link) in sc.links.iter().enumerate() {
            for side in [false, true] {
                let d = LinkId(l).dir(side);
                links.push(LinkDir::new(
                    LinkParams::from_config(&link.dirs[side as usize]),
                    sub_seed(seed, Stream::Link, d.index() as u64),
                ));
            }
        }
        Fabric {
            links,
            routes: RouteTable::default(),
        }
    }

    /// `pkt` enters the link direction of its current hop at `now`. If the direction was
    /// empty, `wake` is told when to call [`Fabric::arrive`] for it.
    // Inlined into the caller so that the packet, whose hop `forward` just changed, stays in
    // registers (a narrow store then a wide load of it stalls store forwarding).
    #[inline(always)]
    pub fn enter(&mut self, now: Nanos, pkt: P, wake: &mut impl FnMut(Nanos, DirId)) -> Entered<P> {
        let h = pkt.routing();
        let (route, hop) = (h.route, h.hop);
        let dir = self.routes.hops(route)[hop as usize];
        let dropped = match self.links[dir.index()].enqueue(now, pkt) {
            Enqueued::Accepted { wake: Some(t) } => {
                wake(t, dir);
                None
            }
            Enqueued::Accepted { wake: None } => None,
            Enqueued::Dropped(p, why) => Some((p, why)),
        };
        Entered { dir, dropped }
    }

    /// The wake-up of `dir` at `now`: the packet at the head of its pipe, delivered or lost
    /// on the wire, unless the wake-up was stale. The next wake-up is scheduled through
    /// `wake`, unless it is due by `batch_until`: a driver that runs late (the emulator)
    /// takes every packet due by then in one go, calling again with the returned time.
    #[inline]
    pub fn arrive(
        &mut self,
        dir: DirId,
        now: Nanos,
        batch_until: Option<Nanos>,
        wake: &mut impl FnMut(Nanos, DirId),
    ) -> Option<(Arrival<P>, Option<Nanos>)> {
        let (pkt, next) = self.links[dir.index()].deliver(now)?;
        match next {
            Some(t) if batch_until.is_none_or(|u| t > u) => {
                wake(t, dir);
                Some((pkt, None))
            }
            next => Some((pkt, next)),
        }
    }

    /// The packet `n` places behind the head of `dir`'s pipe (0: the next to arrive).
    #[inline]
    pub fn ahead(&self, dir: DirId, n: usize) -> Option<&P> {
        self.links[dir.index()].ahead(n)
    }

    /// Whether a packet with this header is on the last hop of its route.
    #[inline]
    pub fn is_last_hop(&self, h: RoutingHeader) -> bool {
        let (route, hop) = (h.route, h.hop);
        (hop as usize) + 1 >= self.routes.hops(route).len()
    }

    /// `pkt` crossed its current hop at `now`: it enters the next one, or, at the end of
    /// its route, is handed back for its endpoint.
    #[inline(always)]
    pub fn forward(
        &mut self,
        now: Nanos,
        mut pkt: P,
        wake: &mut impl FnMut(Nanos, DirId),
    ) -> Forwarded<P> {
        if !self.is_last_hop(pkt.routing()) {
            pkt.routing_mut().hop += 1;
            Forwarded::Entered(self.enter(now, pkt, wake))
        } else {
            Forwarded::Arrived(pkt)
        }
    }

    /// Applies a scheduled change of the scenario to both directions of its link.
    /// `before` sees each direction just before the change (for capacity accounting);
    /// `lost` receives the packets a link going down loses; `wake` a direction's wake-up
    /// that the change moved.
    pub fn apply(
        &mut self,
        now: Nanos,
        event: &Event,
        mut before: impl FnMut(DirId, &LinkDir<P>),
        mut lost: impl FnMut(P),
        wake: &mut impl FnMut(Nanos, DirId),
    ) {
        for d in [event.link.dir(false), event.link.dir(true)] {
            before(d, &self.links[d.index()]);
            let (dropped, moved) = self.links[d.index()].apply(now, &event.kind);
            dropped.into_iter().for_each(&mut lost);
            if let Some(t) = moved {
                wake(t, d);
            }
        }
    }

    /// Brings every link's statistics and queue length up to `now` (before reading them).
    pub fn sync_stats(&mut self, now: Nanos) {
        for l in &mut self.links {
            l.sync_stats(now);
        }
    }
}

/// Where a forwarded packet went.
pub enum Forwarded<P> {
    Entered(Entered<P>),
    /// It reached the end of its route.
    Arrived(P),
}

/// The propagation and serialisation time of a `bytes`-long packet over `hops` with empty
/// queues.
pub fn base_delay<P: Packet>(links: &[LinkDir<P>], hops: &[DirId], bytes: u32) -> Nanos {
    hops.iter()
        .map(|&d| {
            let p = links[d.index()].params();
            p.delay + crate::tx_time(bytes, p.rate_bps)
        })
        .sum()
}
