//! Payload the receiving applications read after the warm-up, per route: what the
//! simulator counts per route for MATCP's per-path goodput (`measure::LinkMeter::received`,
//! `link.<uplink>.ab.goodput_share`). A TCP connection's route is found by its two
//! addresses, as the emulator finds a packet's; MPTCP connections, whose subflows the
//! application cannot tell apart, are not counted, so a scenario with any has no per-link
//! goodput on the kernel (rather than a wrong one).

use crate::plan::Plan;
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug)]
pub struct ReceivedPerRoute {
    warmup: u64,
    by_pair: HashMap<(u32, u32), u32>,
    /// Bytes per route of the plan (`Plan::routes`).
    bytes: Vec<AtomicU64>,
}

impl ReceivedPerRoute {
    pub fn new(plan: &Plan, warmup_ns: u64) -> Self {
        ReceivedPerRoute {
            warmup: warmup_ns,
            by_pair: plan.by_pair.clone(),
            bytes: plan.routes.iter().map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// The route of a connection from `peer` to `local`, as the receiver sees it.
    pub fn route(&self, peer: Ipv4Addr, local: Ipv4Addr) -> Option<u32> {
        self.by_pair.get(&(peer.into(), local.into())).copied()
    }

    /// `n` bytes read at `now` from a connection on `route`.
    pub fn add(&self, route: u32, now: u64, n: u64) {
        if now >= self.warmup
            && let Some(b) = self.bytes.get(route as usize)
        {
            b.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Bytes per plan route so far.
    pub fn totals(&self) -> Vec<u64> {
        self.bytes
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect()
    }
}
