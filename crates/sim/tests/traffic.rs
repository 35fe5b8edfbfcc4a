//! Traffic models and timed events, end to end through the simulator.

use scenario::{LoadOptions, Scenario, load_str};
use std::path::Path;

fn one(text: &str) -> Scenario {
    let opts = LoadOptions {
        overrides: Vec::new(),
    };
    load_str(text, Path::new("inline.toml"), &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0)
}

fn line(flow: &str, extra: &str) -> String {
    format!(
        r#"
[scenario]
name = "t"
duration = "20s"
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
a = "a"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[link]]
name = "access"
a = "r"
b = "b"
rate = "10Mbps"
delay = "9ms"
queue = {{ kind = "droptail", size = "50pkt" }}
[[flow]]
name = "f"
from = "a"
to = "b"
{flow}
[measure]
interval = "100ms"
{extra}
"#
    )
}

#[test]
fn a_file_completes_in_about_size_over_rate() {
    let sc = one(&line("traffic = { kind = \"file\", size = \"5MB\" }", ""));
    let r = sim::run(&sc, 1, |_| {});
    assert_eq!(r.metrics["group.f.completed"], 1.0);
    let fct = r.metrics["group.f.fct_s"];
    // 5 MB at 10 Mbps of 1500-byte packets carrying 1460: 4.1 s, plus slow start.
    let ideal = 5e6 * 8.0 / (10e6 * 1460.0 / 1500.0);
    assert!(
        fct > ideal && fct < ideal + 1.0,
        "fct {fct} s, ideal {ideal} s"
    );
}

#[test]
fn on_off_sources_send_about_burst_over_burst_plus_idle() {
    let sc = one(&line(
        "count = 20\ncc = \"reno\"\ntraffic = { kind = \"onoff\", burst = \"1s\", idle = \"1s\" }\nwindow_limit = \"4pkt\"",
        "",
    ));
    let r = sim::run(&sc, 3, |_| {});
    // Each source is backlogged about half the time, window-limited to 4 packets per
    // ~20 ms RTT, far below the link: the link carries about 20 * 0.5 * 4 * 1460 B / RTT.
    let total = r.metrics["group.f.goodput_mbps"];
    assert!(total > 2.0 && total < 9.8, "{total}");
    assert!(r.metrics["group.f.jain"] > 0.8);
}

#[test]
fn a_link_down_carries_nothing_until_it_comes_back() {
    let events = "[[event]]\nat = \"5s\"\nlink = \"access\"\naction = \"down\"\n[[event]]\nat = \"10s\"\nlink = \"access\"\naction = \"up\"\n[[event]]\nat = \"15s\"\nlink = \"access\"\naction = \"set\"\nrate = \"5Mbps\"";
    let sc = one(&line("", events));
    let r = sim::run(&sc, 1, |_| {});
    let s = r
        .series
        .iter()
        .find(|s| s.name == "goodput_mbps" && s.entity == "group.f")
        .unwrap();
    let at = |t: f64| {
        s.values[s
            .times_s
            .iter()
            .position(|&x| (x - t).abs() < 1e-9)
            .unwrap()]
    };
    // Full rate before, over the last second (one bin may hold a loss's recovery, its
    // data delivered in the next).
    let before = (41..=50).map(|k| at(k as f64 / 10.0)).sum::<f64>() / 10.0;
    assert!(before > 8.0, "full rate before: {before}");
    // The bin (5.0, 5.1] may hold what was already in flight; after it, nothing.
    for k in 52..100 {
        assert_eq!(at(k as f64 / 10.0), 0.0, "t = {}", k as f64 / 10.0);
    }
    // After the outage TCP recovers through its RTO backoff (the last timeout doubled to
    // 3.2 s while the link was down), then runs at the new rate.
    assert!(at(19.9) > 4.0 && at(19.9) <= 5.0, "{}", at(19.9));
    assert!(r.metrics["link.access.ab.drops"] > 0.0);
}

#[test]
fn receivers_count_their_acks_per_data_segment_after_the_warm_up() {
    let ratio = |flow: &str| {
        let sc = one(&line(flow, "warmup = \"5s\""));
        sim::run(&sc, 1, |_| {}).metrics["group.f.acks_per_data_segment"]
    };
    // Bulk data in order: Linux's delayed ACK, one per two full segments, and a few more
    // (the receive window's growth, a quick ACK each).
    let delayed = ratio("");
    assert!((0.5..0.6).contains(&delayed), "{delayed}");
    // The route's quickack: one per segment.
    let quick = ratio("delayed_ack = false");
    assert!((0.99..=1.01).contains(&quick), "{quick}");
}
