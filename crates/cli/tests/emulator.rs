//! The emulator's accuracy on real kernel traffic: delay, rate, drop-tail, RED, random loss
//! and a link going down, each measured through TUN devices in namespaces.

mod support;

use scenario::{LoadOptions, Scenario, load_str};
use std::process::Command;
use support::*;
use testbed::emu::EmuConfig;
use testbed::network::Network;

fn scenario(toml: &str) -> Scenario {
    let opts = LoadOptions {
        known_cc: sim::algorithms(),
        overrides: Vec::new(),
    };
    load_str(toml, "test.toml".as_ref(), &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0)
}

fn config_capturing(link: usize, path: &std::path::Path) -> EmuConfig {
    EmuConfig {
        captures: vec![(link, path.to_path_buf())],
        ..config()
    }
}

fn config() -> EmuConfig {
    EmuConfig {
        seed: 1,
        captures: Vec::new(),
        until: None,
        trace_interval: 100_000_000,
    }
}

const TWO_HOPS: &str = r#"
[scenario]
name = "two-hops"
duration = "60s"
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
rate = "1Gbps"
delay = "10ms"
[[link]]
a = "r"
b = "b"
rate = "1Gbps"
delay = "15ms"
[[flow]]
name = "f"
from = "a"
to = "b"
"#;

/// ping's summary line: min/avg/max/mdev in ms.
fn ping_rtts(out: &str) -> [f64; 4] {
    let line = out
        .lines()
        .find(|l| l.contains("min/avg/max"))
        .unwrap_or_else(|| panic!("no summary in ping's output:\n{out}"));
    let nums = line.split('=').nth(1).unwrap().trim().trim_end_matches(" ms");
    let v: Vec<f64> = nums.split('/').map(|x| x.parse().unwrap()).collect();
    [v[0], v[1], v[2], v[3]]
}

#[test]
fn ping_through_two_hops_takes_twice_the_one_way_delays() {
    if !kernel_available("ping_through_two_hops") {
        return;
    }
    let _serial = serial();
    let sc = scenario(TWO_HOPS);
    let dir = tempdir();
    let pcap = dir.join("a-r.pcap");
    let net = Network::start(&sc, config_capturing(0, &pcap)).unwrap();
    let to = net.addr("b", None).unwrap();
    let ns = net.netns("a").unwrap();
    let out = Command::new("ip")
        .args(["netns", "exec", &ns.name, "ping", "-c", "40", "-i", "0.05", "-q"])
        .arg(to.to_string())
        .output()
        .expect("ping (iputils-ping) is installed by scripts/setup");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let report = net.stop().unwrap();
    let [min, avg, max, _] = ping_rtts(&text);
    eprintln!(
        "ping through 10 ms + 15 ms: min {min} avg {avg} max {max} ms; emulator lateness p50 {:?} p99 {:?} us",
        report.lateness.quantile_us(0.5),
        report.lateness.quantile_us(0.99)
    );
    assert!((avg - 50.0).abs() < 1.0, "avg RTT {avg} ms, expected 50 +- 1");
    // Never early: the link model's delay is a floor.
    assert!(min >= 50.0, "min RTT {min} ms below the 50 ms of the links");

    // The capture of the first link holds the 40 requests and 40 replies, and tshark
    // reads it.
    let out = Command::new("tshark")
        .args(["-r"])
        .arg(&pcap)
        .args(["-Y", "icmp", "-T", "fields", "-e", "icmp.type"])
        .output()
        .expect("tshark is installed by scripts/setup");
    let types = String::from_utf8_lossy(&out.stdout);
    let requests = types.lines().filter(|l| l.trim() == "8").count();
    let replies = types.lines().filter(|l| l.trim() == "0").count();
    assert_eq!(
        (requests, replies),
        (40, 40),
        "tshark on {}: {}",
        pcap.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
}

fn tempdir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(cleanup::owned_name("emu-test"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One link from `a` to `b` with the given TOML keys.
fn one_link(extra: &str) -> Scenario {
    scenario(&format!(
        r#"
[scenario]
name = "one-link"
duration = "60s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
a = "a"
b = "b"
{extra}
[[flow]]
name = "f"
from = "a"
to = "b"
"#
    ))
}

#[test]
fn tcp_through_10_mbps_gets_10_mbps_after_headers() {
    if !kernel_available("tcp_through_10_mbps") {
        return;
    }
    let _serial = serial();
    let sc = one_link(r#"rate = "10Mbps"
delay = "10ms"
queue = { kind = "droptail", size = "100pkt" }"#);
    let net = Network::start(&sc, config()).unwrap();
    let to = std::net::SocketAddr::new(net.addr("b", None).unwrap().into(), 5001);
    let recv = net
        .netns("b")
        .unwrap()
        .thread(move || testbed::agent::recv(to, false, 1, std::time::Duration::from_millis(250)))
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let send = testbed::agent::SendOptions {
        to,
        mptcp: false,
        cc: Some("reno".into()),
        seconds: 12.0,
        bind: None,
        trace_ms: 0,
    };
    net.netns("a")
        .unwrap()
        .enter(move || testbed::agent::send(&send))
        .unwrap();
    let got = recv.join().unwrap().unwrap();
    let report = net.stop().unwrap();
    // Goodput from 2 s (past slow start) to the end of sending.
    let mbps = goodput_mbps(&got["connections"][0], 2.0, 12.0);
    // 1448 of every 1500 bytes are payload (IP 20, TCP 20 + timestamps 12).
    let expected = 10.0 * 1448.0 / 1500.0;
    eprintln!(
        "TCP through 10 Mbit/s: {mbps:.3} Mbit/s of payload (expected {expected:.3}); link drops {}",
        report.links[0].drops()
    );
    assert!(
        (mbps - expected).abs() <= 0.05 * expected,
        "{mbps:.3} Mbit/s, expected {expected:.3} +- 5 %"
    );
}
