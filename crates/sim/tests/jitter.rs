//! Hosts' processing jitter (`[[node]] jitter`), end to end through the simulator: packets
//! leave later but never out of order, and the delays are part of the run's seed.

use scenario::{LoadOptions, Scenario, load_str};
use std::path::Path;

/// Host `a` sends to host `b` through router `r` and a 10 Mbit/s link whose queue holds
/// `queue` packets; `a2` (at twice the RTT) sends too when `second` is set.
fn line(jitter: &str, traffic: &str, queue: u32, second: bool) -> Scenario {
    let second = if second {
        r#"
[[flow]]
name = "g"
from = "a2"
to = "b"
"#
    } else {
        ""
    };
    let text = format!(
        r#"
[scenario]
name = "jitter"
duration = "30s"
[[node]]
name = "a"
kind = "host"
jitter = "{jitter}"
[[node]]
name = "a2"
kind = "host"
jitter = "{jitter}"
[[node]]
name = "r"
kind = "router"
[[node]]
name = "b"
kind = "host"
jitter = "{jitter}"
[[link]]
a = "a"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[link]]
a = "a2"
b = "r"
rate = "100Mbps"
delay = "11ms"
[[link]]
name = "bottleneck"
a = "r"
b = "b"
rate = "10Mbps"
delay = "9ms"
queue = {{ kind = "droptail", size = "{queue}pkt" }}
[[flow]]
name = "f"
from = "a"
to = "b"
{traffic}
{second}
[measure]
interval = "1s"
"#
    );
    load_str(&text, Path::new("jitter.toml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0)
}

/// With half a millisecond of jitter at both ends and a queue that never overflows (the
/// window is held below it), a transfer sends nothing twice: a packet overtaking an earlier one from the same host
/// would bring duplicate ACKs and a retransmission. It takes longer than without jitter,
/// by less than a millisecond per round trip.
#[test]
fn a_hosts_jitter_delays_its_packets_but_never_reorders_them() {
    let file = "traffic = { kind = \"file\", size = \"5MB\" }\nwindow_limit = \"200KB\"";
    let at_once = sim::run(&line("0us", file, 1000, false), 1, |_| {});
    let jittered = sim::run(&line("500us", file, 1000, false), 1, |_| {});
    for r in [&at_once, &jittered] {
        assert_eq!(r.metrics["group.f.completed"], 1.0);
        assert_eq!(r.metrics["group.f.retransmitted_segments"], 0.0);
    }
    let (before, after) = (
        at_once.metrics["group.f.fct_s"],
        jittered.metrics["group.f.fct_s"],
    );
    assert!(
        after > before,
        "jitter made it faster: {before} s then {after} s"
    );
    // About 4.1 s at 10 Mbit/s, a 22 ms RTT: under 200 round trips, each at most 1 ms
    // longer (both ends' jitter).
    assert!(after < before + 0.2, "{before} s then {after} s");
}

/// Two flows at different RTTs through a drop-tail queue: the jitter's delays come from
/// the run's seed (the same seed gives the same run, bit for bit) and change how the
/// flows share the queue.
#[test]
fn the_jitter_is_drawn_from_the_runs_seed() {
    let bulk = "";
    let jittered = line("100us", bulk, 20, true);
    let first = sim::run(&jittered, 7, |_| {});
    let again = sim::run(&jittered, 7, |_| {});
    assert_eq!(first.metrics, again.metrics);
    let other_seed = sim::run(&jittered, 8, |_| {});
    assert_ne!(first.metrics, other_seed.metrics);
    let at_once = sim::run(&line("0us", bulk, 20, true), 7, |_| {});
    assert_ne!(first.metrics, at_once.metrics);
    for r in [&first, &at_once] {
        let total = r.metrics["group.f.goodput_mbps"] + r.metrics["group.g.goodput_mbps"];
        assert!(total > 9.0 && total < 10.0, "{total}");
    }
}
