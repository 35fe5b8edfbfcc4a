//! The simulator and the emulator run one scenario on the same fabric: for the same seed,
//! the same flows start at the same nanosecond and every link direction makes the same
//! random decisions (random loss, RED's early drops) for the same packets. Needs no root:
//! it builds both backends' fabrics and layouts without touching the machine.

use net::Arrival;
use net::fabric::{Routed, RoutingHeader};
use net::{DropReason, Fabric, Nanos};
use scenario::{LoadOptions, load_str};
use testbed::emu::Emulator;
use testbed::emu::frame::Frame;

const SCENARIO: &str = r#"
[scenario]
name = "shared-fabric"
duration = "10s"

[[node]]
name = "a"
kind = "host"
[[node]]
name = "r"
kind = "router"
[[node]]
name = "b"
kind = "host"

[[link]]
name = "lossy"
a = "a"
b = "r"
rate = "10Mbps"
delay = "5ms"
loss = 0.05

[[link]]
name = "red"
a = "r"
b = "b"
rate = "5Mbps"
delay = "5ms"
queue = { kind = "red", size = "100pkt", min_th = 10, max_th = 40, max_p = 0.1 }

[[flow]]
name = "bulk"
from = "a"
to = "b"
count = 20
start = "0s"
stagger = "2s"
start_jitter = "500ms"

[measure]
interval = "1s"
warmup = "1s"
"#;

fn scenario() -> scenario::Scenario {
    let opts = LoadOptions {
        overrides: Vec::new(),
    };
    let mut v = load_str(SCENARIO, "shared-fabric.toml".as_ref(), &opts).expect("valid");
    assert_eq!(v.len(), 1);
    v.remove(0)
}

/// Drives a train of `n` packets of `bytes` into link direction `dir` of `fabric`, one
/// every `gap` ns, and returns each packet's fate in order of its index.
fn fates<P: Routed>(
    fabric: &mut Fabric<P>,
    dir: usize,
    n: usize,
    gap: Nanos,
    make: impl Fn(usize) -> P,
    index_of: impl Fn(&P) -> usize,
) -> Vec<&'static str> {
    let route = fabric.routes.intern(&[scenario::model::DirId(dir)]);
    let mut fate = vec!["queued"; n];
    // Wake-ups in time order, equal times in the order asked (as net::EventQueue).
    let mut wakes: net::EventQueue<scenario::model::DirId> = net::EventQueue::default();
    let mut next = 0usize;
    loop {
        let arrival_time = (next < n).then(|| next as Nanos * gap);
        let wake_time = wakes.peek_time();
        match (arrival_time, wake_time) {
            (Some(t), w) if w.is_none_or(|w| t < w) => {
                let mut p = make(next);
                *p.routing_mut() = RoutingHeader { route, hop: 0 };
                let entered = fabric.enter(t, p, &mut |at, w| wakes.push(at, w));
                if let Some((p, why)) = entered.dropped {
                    fate[index_of(&p)] = match why {
                        DropReason::Early => "early drop",
                        DropReason::Overflow => "overflow",
                        _ => "other drop",
                    };
                }
                next += 1;
            }
            (_, Some(_)) => {
                let (t, d) = wakes.pop().expect("present");
                let mut push = |at, d| wakes.push(at, d);
                match fabric.arrive(d, t, None, &mut push) {
                    Some((Arrival::Delivered(p), _)) => fate[index_of(&p)] = "delivered",
                    Some((Arrival::Lost(p), _)) => fate[index_of(&p)] = "lost",
                    None => {}
                }
            }
            _ => return fate,
        }
    }
}

#[test]
fn same_flow_starts_on_both_backends() {
    let sc = scenario();
    for seed in [1, 2, 77] {
        let sim_starts = sim::flow_slots(&sc, seed);
        let kernel_starts: Vec<_> = testbed::backend::layout(&sc, seed)
            .into_iter()
            .map(|f| f.slot)
            .collect();
        assert_eq!(sim_starts, kernel_starts, "seed {seed}");
        // The jitter is real: the starts are not the bare stagger.
        let group = &sc.flows[0];
        assert!(
            sim_starts
                .iter()
                .any(|s| s.start != group.start_of(s.index).nanos())
        );
    }
}

#[test]
fn same_loss_and_red_decisions_on_both_backends() {
    let sc = scenario();
    for seed in [1, 2, 77] {
        let mut sim_fabric = sim::fabric(&sc, seed);
        let mut emu_fabric = Emulator::fabric(&sc, seed);
        // Direction 0: the lossy link a to r; direction 2: the RED link r to b, fed faster
        // than it drains so that its queue builds and RED decides.
        for (dir, gap) in [(0usize, 1_300_000), (2, 1_000_000)] {
            let n = 3000;
            let sim_fates = fates(
                &mut sim_fabric,
                dir,
                n,
                gap,
                |i| sim::packet::InFlight {
                    id: sim::packet::PacketId(i as u32),
                    routing: RoutingHeader::default(),
                    wire_bytes: 1500,
                },
                |p| p.id.0 as usize,
            );
            let emu_fates = fates(
                &mut emu_fabric,
                dir,
                n,
                gap,
                |i| Frame {
                    data: (i as u32).to_be_bytes().to_vec(),
                    len: 1500,
                    routing: RoutingHeader::default(),
                },
                |f| u32::from_be_bytes(f.data[..4].try_into().expect("4 bytes")) as usize,
            );
            assert_eq!(sim_fates, emu_fates, "seed {seed}, direction {dir}");
            let count = |what: &str| sim_fates.iter().filter(|f| **f == what).count();
            match dir {
                0 => assert!(count("lost") > 100, "random loss happened"),
                _ => assert!(count("early drop") > 10, "RED dropped early"),
            }
        }
    }
}
