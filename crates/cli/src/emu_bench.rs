//! `mptcp-lab emu bench`: what the emulator can carry and how precisely. Bulk TCP (cubic,
//! several connections) between two hosts through one and through three unlimited links:
//! goodput, packets and bits per second the emulator forwarded. Then one TCP flow through
//! a 100 Mbit/s link: the extra delay the emulator adds beyond the link model (how late
//! each packet is written to its destination), p50 and p99. Median of repeated runs.

use anyhow::{Context, Result, bail};
use scenario::{LoadOptions, Scenario, load_str};
use std::net::SocketAddr;
use std::time::Duration;
use testbed::emu::{EmuConfig, EmuReport};
use testbed::network::Network;

/// Parallel connections in the throughput runs: one TCP flow is bound by the sender's
/// single-threaded segmenting, not by the emulator.
const STREAMS: usize = 4;

fn chain(hops: usize, rate: &str) -> Result<Scenario> {
    let mut toml = String::from("[scenario]\nname = \"emu-bench\"\nduration = \"3600s\"\n");
    let names: Vec<String> = (0..=hops)
        .map(|i| match i {
            0 => "a".into(),
            i if i == hops => "b".into(),
            i => format!("r{i}"),
        })
        .collect();
    for (i, n) in names.iter().enumerate() {
        let kind = if i == 0 || i == hops {
            "host"
        } else {
            "router"
        };
        toml += &format!("[[node]]\nname = \"{n}\"\nkind = \"{kind}\"\n");
    }
    for w in names.windows(2) {
        toml += &format!(
            "[[link]]\na = \"{}\"\nb = \"{}\"\nrate = \"{rate}\"\ndelay = \"0ms\"\nqueue = {{ kind = \"droptail\", size = \"10000pkt\" }}\n",
            w[0], w[1]
        );
    }
    toml += "[[flow]]\nname = \"bulk\"\nfrom = \"a\"\nto = \"b\"\n";
    let opts = LoadOptions {
        overrides: Vec::new(),
    };
    Ok(load_str(&toml, "emu-bench.toml".as_ref(), &opts)?.remove(0))
}

struct Sample {
    goodput_gbps: f64,
    pkts_per_s: f64,
    wire_gbps: f64,
    report: EmuReport,
}

/// `streams` bulk cubic connections from a to b for `seconds`.
fn one_run(sc: &Scenario, streams: usize, seconds: f64) -> Result<Sample> {
    let net = Network::start(
        sc,
        EmuConfig {
            seed: 1,
            captures: Vec::new(),
            until: None,
            trace_interval: 1_000_000_000,
            hold_reads: None,
        },
    )?;
    let dst = net.addr("b", None)?;
    let mut receivers = Vec::new();
    for s in 0..streams {
        let to = SocketAddr::new(dst.into(), 6100 + s as u16);
        receivers.push(
            net.netns("b")?
                .thread(move || testbed::agent::recv(to, false, 1, Duration::from_millis(250)))?,
        );
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut senders = Vec::new();
    for s in 0..streams {
        let opts = testbed::agent::SendOptions {
            to: SocketAddr::new(dst.into(), 6100 + s as u16),
            mptcp: false,
            cc: Some("cubic".into()),
            seconds,
            bind: None,
            trace_ms: 0,
        };
        senders.push(
            net.netns("a")?
                .thread(move || testbed::agent::send(&opts))?,
        );
    }
    let clock = net.clock();
    let t0 = clock.now();
    for s in senders {
        s.join()
            .map_err(|_| anyhow::anyhow!("a sender panicked"))??;
    }
    let elapsed = (clock.now() - t0) as f64 / 1e9;
    let mut bytes = 0.0;
    for r in receivers {
        let got = r
            .join()
            .map_err(|_| anyhow::anyhow!("a receiver panicked"))??;
        bytes += got["connections"][0]["bytes"].as_f64().unwrap_or(0.0);
    }
    let report = net.stop()?;
    Ok(Sample {
        goodput_gbps: bytes * 8.0 / elapsed / 1e9,
        pkts_per_s: report.written_pkts as f64 / report.ran_s,
        wire_gbps: report.written_bytes as f64 * 8.0 / report.ran_s / 1e9,
        report,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

pub fn bench(seconds: f64, repeat: u32) -> Result<bool> {
    mptcp_bpf::system::require_root("emu bench")?;
    if repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    for what in testbed::cleanup::remove_leftovers() {
        eprintln!("removed a crashed run's {what}");
    }
    println!(
        "emulator throughput: {STREAMS} cubic connections, {seconds} s, median of {repeat} (goodput; packets and bits the emulator wrote)"
    );
    for hops in [1, 3] {
        let sc = chain(hops, "100Gbps")?;
        let mut runs = Vec::new();
        for _ in 0..repeat {
            runs.push(one_run(&sc, STREAMS, seconds).with_context(|| format!("{hops} hop(s)"))?);
        }
        println!(
            "  {hops} hop{}: goodput {:.2} Gbit/s, {:.0} kpackets/s, {:.2} Gbit/s on the wire (runs: {}; own losses: {})",
            if hops == 1 { " " } else { "s" },
            median(runs.iter().map(|r| r.goodput_gbps).collect()),
            median(runs.iter().map(|r| r.pkts_per_s).collect()) / 1e3,
            median(runs.iter().map(|r| r.wire_gbps).collect()),
            runs.iter()
                .map(|r| format!("{:.2}", r.goodput_gbps))
                .collect::<Vec<_>>()
                .join(" "),
            own_losses(&runs)
        );
    }
    let sc = chain(1, "100Mbps")?;
    let mut runs = Vec::new();
    for _ in 0..repeat {
        runs.push(one_run(&sc, 1, seconds).context("100 Mbit/s")?);
    }
    let q = |r: &Sample, p: f64| r.report.lateness.quantile_us(p).unwrap_or(0) as f64;
    println!(
        "extra delay at 100 Mbit/s (one TCP flow, {:.1} Mbit/s goodput): p50 {:.0} us, p99 {:.0} us, p99.9 {:.0} us{}",
        median(runs.iter().map(|r| r.goodput_gbps * 1e3).collect()),
        median(runs.iter().map(|r| q(r, 0.5)).collect()),
        median(runs.iter().map(|r| q(r, 0.99)).collect()),
        median(runs.iter().map(|r| q(r, 0.999)).collect()),
        if runs.iter().all(|r| r.report.realtime) {
            ""
        } else {
            " (not at real-time priority)"
        }
    );
    println!("  own losses at 100 Mbit/s: {}", own_losses(&runs));
    Ok(true)
}

/// Each run's own losses (packets the emulator, not a link, lost: mostly a device ring it
/// did not drain in time, which the senders' TCP takes for congestion) over those offered.
fn own_losses(runs: &[Sample]) -> String {
    runs.iter()
        .map(|r| {
            let h = r.report.health(0);
            format!(
                "{} of {} ({:.3} %)",
                h.own_losses,
                h.offered_pkts,
                h.own_loss_fraction * 100.0
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
