//! No allocation in the per-packet path: once bulk TCP and MPTCP flows have grown their
//! windows (and with them the scoreboards, link queues, timer buckets and packet store),
//! moving packets allocates nothing. Two runs of the same scenario, one three times as
//! long, differ by millions of packet-hops and by a few allocations only (a buffer reaching
//! a new largest size, a measurement series growing), counted by a global allocator on
//! this thread.

use scenario::{LoadOptions, Scenario, load_str};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is passed to the system allocator unchanged; counting touches only a
// thread-local integer (no allocation of its own).
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// A dumbbell: `flows` bulk flows of `protocol` over one 100 Mbit/s bottleneck per path.
fn dumbbell(protocol: &str, paths: usize, flows: u32, seconds: u32) -> Scenario {
    let mut text = format!(
        "[scenario]\nname = \"alloc\"\nduration = \"{seconds}s\"\n\
         [[node]]\nname = \"src\"\nkind = \"host\"\n[[node]]\nname = \"dst\"\nkind = \"host\"\n"
    );
    for p in 0..paths {
        let (a, b) = if paths == 1 {
            ("src".to_string(), "dst".to_string())
        } else {
            (format!("src:{p}"), format!("dst:{p}"))
        };
        text += &format!(
            "[[node]]\nname = \"r{p}\"\nkind = \"router\"\n\
             [[link]]\na = \"{a}\"\nb = \"r{p}\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
             [[link]]\na = \"r{p}\"\nb = \"{b}\"\nrate = \"100Mbps\"\ndelay = \"10ms\"\n\
             queue = {{ kind = \"droptail\", size = \"200pkt\" }}\n"
        );
    }
    text += &format!(
        "[[flow]]\nname = \"bulk\"\nprotocol = \"{protocol}\"\ncount = {flows}\n\
         from = \"src\"\nto = \"dst\"\nstagger = \"100ms\"\n\
         [measure]\ninterval = \"1s\"\nper_flow = false\n"
    );
    load_str(&text, Path::new("alloc.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0)
}

/// Allocations and packet-hops of one run.
fn count(sc: &Scenario) -> (u64, u64) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = sim::run(sc, 1, |_| {});
    let allocations = ALLOCATIONS.with(Cell::get) - before;
    (allocations, result.stats.packet_hops)
}

fn steady_state_allocations(protocol: &str, paths: usize) {
    let (short_allocs, short_hops) = count(&dumbbell(protocol, paths, 20, 30));
    let (long_allocs, long_hops) = count(&dumbbell(protocol, paths, 20, 90));
    let hops = long_hops - short_hops;
    let allocs = long_allocs.saturating_sub(short_allocs);
    eprintln!("{protocol}: {allocs} allocations in {hops} more packet-hops");
    assert!(hops > 1_000_000, "{protocol}: only {hops} more packet-hops");
    // At most one allocation per 5,000 packet-hops (this build: one per 12,000 to 14,000,
    // buffers and measurement series reaching a new largest size); one allocation per
    // packet would be one per two to six hops.
    assert!(
        allocs * 5_000 <= hops,
        "{protocol}: {allocs} allocations in {hops} more packet-hops \
         ({short_allocs} in the short run, {long_allocs} in the long one)"
    );
}

#[test]
fn tcp_moves_packets_without_allocating() {
    steady_state_allocations("tcp", 1);
}

#[test]
fn mptcp_moves_packets_without_allocating() {
    steady_state_allocations("mptcp", 2);
}
