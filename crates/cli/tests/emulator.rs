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

/// ping's summary line: min/avg/max/mdev in ms (`... = a/b/c/d ms`, with `, pipe N` after
/// it when replies overlapped the 50 ms interval).
fn ping_rtts(out: &str) -> [f64; 4] {
    let line = out
        .lines()
        .find(|l| l.contains("min/avg/max"))
        .unwrap_or_else(|| panic!("no summary in ping's output:\n{out}"));
    let nums = line
        .split('=')
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no figures in ping's summary: {line}"));
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
        .args([
            "netns", "exec", &ns.name, "ping", "-c", "40", "-i", "0.05", "-q",
        ])
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
    assert!(
        (avg - 50.0).abs() < 1.0,
        "avg RTT {avg} ms, expected 50 +- 1"
    );
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
    let sc = one_link(
        r#"rate = "10Mbps"
delay = "10ms"
queue = { kind = "droptail", size = "100pkt" }"#,
    );
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

/// A UDP probe: sequence number and CLOCK_MONOTONIC send time, padded to `size` bytes.
fn probe(seq: u64, size: usize) -> Vec<u8> {
    let mut p = vec![0u8; size.max(16)];
    p[..8].copy_from_slice(&seq.to_be_bytes());
    p[8..16].copy_from_slice(&testbed::emu::clock::monotonic_ns().to_be_bytes());
    p
}

/// Sends `n` probes of `size` bytes from host `a` to `b`, one every `gap_ns` (0: back to
/// back); returns what `b` received as (seq, sent ns, received ns), monotonic clock.
fn udp_probes(
    net: &Network,
    n: u64,
    size: usize,
    gap_ns: u64,
    linger_ms: u64,
) -> Vec<(u64, u64, u64)> {
    use std::net::{SocketAddr, UdpSocket};
    let to = SocketAddr::new(net.addr("b", None).unwrap().into(), 7000);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    // The sink stops after `linger_ms` of silence once everything is sent: a pause of the
    // sender (a busy machine) must not end it early and count as loss.
    let sent_all = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = sent_all.clone();
    let sink = net
        .netns("b")
        .unwrap()
        .thread(move || {
            let s = UdpSocket::bind(to)?;
            // The test is of the link, not of this thread keeping up: a buffer for seconds
            // of probes (SO_RCVBUFFORCE, root, past rmem_max).
            let size: libc::c_int = 8 << 20;
            // SAFETY: a plain int option on a socket we own.
            unsafe {
                libc::setsockopt(
                    std::os::fd::AsRawFd::as_raw_fd(&s),
                    libc::SOL_SOCKET,
                    libc::SO_RCVBUFFORCE,
                    (&size as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
            }
            s.set_read_timeout(Some(std::time::Duration::from_millis(linger_ms)))?;
            let _ = ready_tx.send(());
            let mut got = Vec::new();
            let mut buf = [0u8; 2048];
            loop {
                match s.recv(&mut buf) {
                    Ok(len) if len >= 16 => {
                        let seq = u64::from_be_bytes(buf[..8].try_into().unwrap());
                        let sent = u64::from_be_bytes(buf[8..16].try_into().unwrap());
                        got.push((seq, sent, testbed::emu::clock::monotonic_ns()));
                    }
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) && !done.load(std::sync::atomic::Ordering::SeqCst) => {}
                    Err(_) => break,
                }
            }
            Ok(got)
        })
        .unwrap();
    ready_rx.recv().unwrap();
    net.netns("a")
        .unwrap()
        .enter(move || {
            let s = UdpSocket::bind("0.0.0.0:0")?;
            let start = testbed::emu::clock::monotonic_ns();
            for seq in 0..n {
                let due = start + seq * gap_ns;
                while testbed::emu::clock::monotonic_ns() < due {
                    let left = due - testbed::emu::clock::monotonic_ns().min(due);
                    if left > 200_000 {
                        std::thread::sleep(std::time::Duration::from_nanos(left - 100_000));
                    }
                }
                // A full socket buffer on a burst is the sender's loss, not the link's.
                while s.send_to(&probe(seq, size), to).is_err() {
                    std::thread::yield_now();
                }
            }
            Ok(())
        })
        .unwrap();
    sent_all.store(true, std::sync::atomic::Ordering::SeqCst);
    sink.join().unwrap().unwrap()
}

#[test]
fn droptail_drops_only_when_the_queue_is_full() {
    if !kernel_available("droptail_drops_only_when_full") {
        return;
    }
    let _serial = serial();
    // 1028-byte packets take 8.2 ms each at 1 Mbit/s: a burst of 100 written in well under
    // a millisecond finds one packet in transmission and fills the 20 places of the queue.
    let sc = one_link(
        r#"rate = "1Mbps"
delay = "1ms"
queue = { kind = "droptail", size = "20pkt" }"#,
    );
    let net = Network::start(&sc, config()).unwrap();
    let burst = udp_probes(&net, 100, 1000, 0, 400);
    // The queue has drained: a burst that fits (one sent at once + 20 queued) loses nothing.
    let fits = udp_probes(&net, 21, 1000, 0, 400);
    let report = net.stop().unwrap();
    let ab = &report.links[0];
    eprintln!(
        "burst of 100: {} delivered; burst of 21: {} delivered; overflow drops {}, max queue {}",
        burst.len(),
        fits.len(),
        ab.drops_overflow,
        ab.max_queue_pkts
    );
    assert_eq!(
        burst.len(),
        21,
        "one in transmission and 20 queued get through"
    );
    let seqs: Vec<u64> = burst.iter().map(|p| p.0).collect();
    assert_eq!(
        seqs,
        (0..21).collect::<Vec<_>>(),
        "drop-tail keeps the first arrivals"
    );
    assert_eq!(fits.len(), 21, "nothing dropped while the queue had room");
    assert_eq!(ab.drops_overflow, 79);
    assert_eq!(ab.max_queue_pkts, 20);
}

#[test]
fn random_loss_is_within_statistical_bounds() {
    if !kernel_available("random_loss_within_bounds") {
        return;
    }
    let _serial = serial();
    let sc = one_link(
        r#"rate = "100Mbps"
delay = "1ms"
loss = 0.05"#,
    );
    let net = Network::start(&sc, config()).unwrap();
    let n = 20_000u64;
    let got = udp_probes(&net, n, 200, 100_000, 300);
    let report = net.stop().unwrap();
    let lost = (n - got.len() as u64) as f64;
    let (mean, sd) = (0.05 * n as f64, (n as f64 * 0.05 * 0.95).sqrt());
    eprintln!(
        "{n} probes at 5 % loss: {lost} lost (expected {mean} +- 4 x {sd:.1}); link counted {} (device drops {}, unroutable {}, read {})",
        report.links[0].drops_loss, report.device_drops, report.unroutable, report.read_pkts
    );
    assert_eq!(
        lost as u64, report.links[0].drops_loss,
        "every loss is the link's"
    );
    assert!(
        (lost - mean).abs() < 4.0 * sd,
        "{lost} lost, expected {mean} +- {:.0}",
        4.0 * sd
    );
}

#[test]
fn a_link_taken_down_stops_carrying_packets_at_once() {
    if !kernel_available("link_down_stops_at_once") {
        return;
    }
    let _serial = serial();
    // Probes every 0.5 ms from 0 to 3 s over a 5 ms link that is down from 1 s to 2 s.
    let sc = one_link(
        r#"rate = "100Mbps"
delay = "5ms"
[[event]]
at = "1s"
link = "a-b"
action = "down"
[[event]]
at = "2s"
link = "a-b"
action = "up""#,
    );
    let net = Network::start(&sc, config()).unwrap();
    let origin = net.clock().origin();
    let got = udp_probes(&net, 6000, 100, 500_000, 1500);
    net.stop().unwrap();
    let at = |ns: u64| (ns - origin) as f64 / 1e6; // ms of scenario time
    let (down, up) = (1000.0, 2000.0);
    let last_before = got
        .iter()
        .map(|p| at(p.2))
        .filter(|&t| t < up)
        .fold(0.0, f64::max);
    let during: Vec<f64> = got
        .iter()
        .map(|p| at(p.2))
        .filter(|&t| t > down + 5.0 && t < up)
        .collect();
    let first_after = got
        .iter()
        .map(|p| at(p.2))
        .filter(|&t| t >= up)
        .fold(f64::INFINITY, f64::min);
    eprintln!(
        "down at {down} ms: last arrival {last_before:.3} ms; {} arrivals while down; \
         up at {up} ms: first arrival {first_after:.3} ms",
        during.len()
    );
    assert!(
        during.is_empty(),
        "arrivals while the link was down: {during:?}"
    );
    assert!(
        (down - 5.0..=down + 5.0).contains(&last_before),
        "the link stopped carrying packets at {last_before} ms, not within 5 ms of {down}"
    );
    // Back up: the first probe sent after 2 s arrives one link delay later.
    assert!(
        (up + 5.0..=up + 5.0 + 5.0).contains(&first_after),
        "first arrival after the link came up: {first_after} ms"
    );
}

#[test]
fn red_drops_follow_its_curve() {
    if !kernel_available("red_follows_its_curve") {
        return;
    }
    let _serial = serial();
    // Weight 1: the average is the queue each packet finds, so every arrival is a sample of
    // the curve at a known point. UDP at 1.1 times the link rate keeps the queue between the
    // thresholds.
    let (min_th, max_th, max_p) = (5.0, 25.0, 0.2);
    let sc = one_link(&format!(
        r#"rate = "10Mbps"
delay = "1ms"
queue = {{ kind = "red", size = "100pkt", min_th = {min_th}, max_th = {max_th}, max_p = {max_p}, weight = 1.0 }}"#
    ));
    let net = Network::start(&sc, config()).unwrap();
    let tx_ns = 1028 * 8 * 1000 / 10; // 1000 B of payload + 28 B of headers at 10 Mbit/s
    let got = udp_probes(&net, 20_000, 1000, tx_ns * 10 / 11, 300);
    let report = net.stop().unwrap();
    // Floyd and Jacobson's spreading: the probability of the curve, pb(avg), grows with
    // the arrivals since the last drop (`count`): pa = pb / (1 - count pb). Replaying the
    // emulator's decisions gives each arrival's pa; per queue length, the drops RED made
    // must match the sum of those probabilities.
    let mut count: i64 = -1;
    let mut per_q: std::collections::BTreeMap<u32, (u64, u64, f64, f64)> = Default::default();
    for &(avg, dropped) in &report.red[0].decisions {
        let avg = avg as f64;
        let q = avg.round() as u32;
        let e = per_q.entry(q).or_default();
        e.0 += 1;
        e.1 += dropped as u64;
        if avg < min_th {
            count = -1;
            assert!(!dropped, "an early drop below min_th (queue {avg})");
            continue;
        }
        if avg >= max_th {
            count = 0;
            assert!(dropped, "above max_th (not gentle) RED drops every arrival");
            continue;
        }
        let pb = max_p * (avg - min_th) / (max_th - min_th);
        count += 1;
        let denom = 1.0 - count as f64 * pb;
        let pa = if denom <= 0.0 {
            1.0
        } else {
            (pb / denom).min(1.0)
        };
        e.2 += pa;
        e.3 += pa * (1.0 - pa);
        if dropped {
            count = 0;
        }
    }
    let mut checked = 0;
    let mut lines = Vec::new();
    for (q, (n, d, expected, var)) in per_q {
        let q = q as f64;
        if q < min_th || q >= max_th {
            continue;
        }
        lines.push(format!(
            "queue {q}: {d} early drops of {n} arrivals ({:.3}; curve pb {:.3}, expected {expected:.1})",
            d as f64 / n as f64,
            max_p * (q - min_th) / (max_th - min_th)
        ));
        if n >= 300 {
            checked += 1;
            assert!(
                (d as f64 - expected).abs() <= 4.0 * var.sqrt() + 2.0,
                "queue {q}: {d} early drops in {n} arrivals, RED's curve gives {expected:.1} +- {:.1}",
                4.0 * var.sqrt()
            );
        }
    }
    eprintln!("RED, {} delivered:\n  {}", got.len(), lines.join("\n  "));
    assert!(
        checked >= 5,
        "only {checked} points of the curve had 300 arrivals"
    );
}

#[test]
fn ping_summary_is_read_with_or_without_a_pipe_note() {
    let plain = "rtt min/avg/max/mdev = 50.1/50.2/50.4/0.1 ms";
    assert_eq!(ping_rtts(plain), [50.1, 50.2, 50.4, 0.1]);
    let piped = "rtt min/avg/max/mdev = 50.1/50.3/51.0/0.2 ms, pipe 2";
    assert_eq!(ping_rtts(piped), [50.1, 50.3, 51.0, 0.2]);
}
