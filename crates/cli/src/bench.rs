//! `bench`: the simulator's speed and memory on a dumbbell of N bulk Reno flows. Each size
//! runs in a child process so that peak memory is measured per size.

use anyhow::{Context, Result, bail};
use scenario::{LoadOptions, load_str};
use serde_json::json;
use std::path::Path;
use std::process::Command;

/// Sender and receiver hosts joined through two routers; 1 Gbps bottleneck with a buffer of
/// about one bandwidth-delay product, 10 Gbps access links.
fn dumbbell(flows: u32, seconds: f64) -> String {
    format!(
        r#"
[scenario]
name = "bench-dumbbell"
duration = "{seconds}s"

[[node]]
name = "src"
kind = "host"
[[node]]
name = "r1"
kind = "router"
[[node]]
name = "r2"
kind = "router"
[[node]]
name = "dst"
kind = "host"

[[link]]
a = "src"
b = "r1"
rate = "10Gbps"
delay = "1ms"
queue = {{ kind = "droptail", size = "10000pkt" }}
[[link]]
a = "r1"
b = "r2"
rate = "1Gbps"
delay = "10ms"
queue = {{ kind = "droptail", size = "2000pkt" }}
[[link]]
a = "r2"
b = "dst"
rate = "10Gbps"
delay = "1ms"
queue = {{ kind = "droptail", size = "10000pkt" }}

[[flow]]
name = "bulk"
count = {flows}
from = "src"
to = "dst"
stagger = "1s"

[measure]
interval = "1s"
per_flow = false
"#
    )
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn measure_here(flows: u32, seconds: f64) -> Result<serde_json::Value> {
    let opts = LoadOptions {
        overrides: Vec::new(),
    };
    let sc = load_str(&dumbbell(flows, seconds), Path::new("<bench>"), &opts)?.remove(0);
    let r = sim::run(&sc, 1, |_| {});
    let wall = r.stats.wall_s;
    Ok(json!({
        "flows": flows,
        "simulated_s": seconds,
        "wall_s": wall,
        "events": r.stats.events,
        "packet_hops": r.stats.packet_hops,
        "events_per_s": r.stats.events as f64 / wall,
        "packet_hops_per_s": r.stats.packet_hops as f64 / wall,
        "peak_rss_mb": peak_rss_mb(),
        "bottleneck_utilisation": r.metrics.get("link.r1-r2.ab.utilisation"),
    }))
}

pub fn bench(flows: &[u32], seconds: f64, child: bool) -> Result<()> {
    if child {
        let [n] = flows else {
            bail!("--child takes one --flows value")
        };
        println!("{}", measure_here(*n, seconds)?);
        return Ok(());
    }
    let exe = std::env::current_exe().context("locating the mptcp-lab binary")?;
    println!(
        "dumbbell, 1 Gbps bottleneck, bulk Reno flows, {seconds} simulated seconds each; one process per size"
    );
    println!(
        "{:>7} {:>9} {:>14} {:>16} {:>12} {:>12}",
        "flows", "wall s", "events/s", "packet-hops/s", "peak MiB", "bottleneck"
    );
    for &n in flows {
        let out = Command::new(&exe)
            .args([
                "bench",
                "--child",
                "--flows",
                &n.to_string(),
                "--seconds",
                &seconds.to_string(),
            ])
            .output()
            .context("running the benchmark child")?;
        if !out.status.success() {
            bail!(
                "benchmark with {n} flows failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).context("reading the child's measurement")?;
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        println!(
            "{:>7} {:>9.2} {:>14.3e} {:>16.3e} {:>12.1} {:>11.1}%",
            n,
            f("wall_s"),
            f("events_per_s"),
            f("packet_hops_per_s"),
            f("peak_rss_mb"),
            100.0 * f("bottleneck_utilisation")
        );
    }
    Ok(())
}
