//! `bench`: the simulator's speed and memory on three workloads, each at several sizes.
//! Every measurement runs in a child process so that peak memory is that size's own.
//!
//! - `tcp`: a dumbbell of N bulk Reno flows (1 Gbps bottleneck, a one-BDP buffer, 10 Gbps
//!   access links), the shape of htsim's and ns-3's classic benchmarks.
//! - `mptcp`: two disjoint dumbbells side by side, N MPTCP connections with LIA, one
//!   subflow over each.
//! - `onoff`: N window-limited on/off sources through a RED bottleneck, each burst a new
//!   connection, so that connections keep opening and closing (the shape of MATCP's
//!   many-source experiments).
//!
//! `--print-scenario` writes the scenario a measurement runs, so that another build can run
//! the same one (`scripts/bench-compare`).

use anyhow::{Context, Result, bail};
use scenario::{LoadOptions, load_str};
use serde_json::json;
use std::path::Path;
use std::process::Command;

/// What a measurement simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// Bulk Reno flows through one bottleneck.
    Tcp,
    /// MPTCP connections (LIA) over two disjoint bottlenecks.
    Mptcp,
    /// Window-limited on/off sources through a RED bottleneck.
    Onoff,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Tcp => "tcp",
            Workload::Mptcp => "mptcp",
            Workload::Onoff => "onoff",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Workload::Tcp => {
                "TCP dumbbell: bulk Reno flows, 1 Gbps bottleneck, one-BDP buffer, 10 Gbps access"
            }
            Workload::Mptcp => {
                "MPTCP dumbbell: LIA connections, one subflow over each of two disjoint 1 Gbps bottlenecks"
            }
            Workload::Onoff => {
                "on/off sources: exponential 1 s bursts (a new connection each) and 1 s idle times, \
                 window 32 packets, RED on a 1 Gbps bottleneck"
            }
        }
    }

    /// The links whose utilisation the table shows.
    fn bottlenecks(self) -> &'static [&'static str] {
        match self {
            Workload::Mptcp => &["bottleneck-a", "bottleneck-b"],
            _ => &["bottleneck"],
        }
    }
}

const HOSTS_AND_ROUTERS: &str = r#"
[[node]]
name = "src"
kind = "host"
[[node]]
name = "dst"
kind = "host"
"#;

/// One dumbbell's routers and links, named after `side` (empty for the only one).
fn dumbbell_links(side: &str, queue: &str) -> String {
    let (r1, r2, iface, name) = if side.is_empty() {
        (
            "r1".to_string(),
            "r2".to_string(),
            String::new(),
            "bottleneck".to_string(),
        )
    } else {
        (
            format!("r1{side}"),
            format!("r2{side}"),
            format!(":{side}"),
            format!("bottleneck-{side}"),
        )
    };
    format!(
        r#"
[[node]]
name = "{r1}"
kind = "router"
[[node]]
name = "{r2}"
kind = "router"
[[link]]
a = "src{iface}"
b = "{r1}"
rate = "10Gbps"
delay = "1ms"
queue = {{ kind = "droptail", size = "10000pkt" }}
[[link]]
name = "{name}"
a = "{r1}"
b = "{r2}"
rate = "1Gbps"
delay = "10ms"
queue = {queue}
[[link]]
a = "{r2}"
b = "dst{iface}"
rate = "10Gbps"
delay = "1ms"
queue = {{ kind = "droptail", size = "10000pkt" }}
"#
    )
}

/// The scenario of one measurement.
pub fn scenario_text(workload: Workload, flows: u32, seconds: f64) -> String {
    let head = format!(
        "[scenario]\nname = \"bench-{}\"\nduration = \"{seconds}s\"\n{HOSTS_AND_ROUTERS}",
        workload.name()
    );
    let droptail = r#"{ kind = "droptail", size = "2000pkt" }"#;
    let measure = "\n[measure]\ninterval = \"1s\"\nper_flow = false\n";
    let body = match workload {
        Workload::Tcp => format!(
            r#"{}
[[flow]]
name = "bulk"
count = {flows}
from = "src"
to = "dst"
stagger = "1s"
"#,
            dumbbell_links("", droptail)
        ),
        Workload::Mptcp => format!(
            r#"{}{}
[[flow]]
name = "bulk"
protocol = "mptcp"
cc = "lia"
count = {flows}
from = "src"
to = "dst"
stagger = "1s"
"#,
            dumbbell_links("a", droptail),
            dumbbell_links("b", droptail)
        ),
        Workload::Onoff => format!(
            r#"{}
[[flow]]
name = "onoff"
count = {flows}
from = "src"
to = "dst"
stagger = "1s"
window_limit = "32pkt"
traffic = {{ kind = "onoff", burst = "1s", idle = "1s" }}
"#,
            dumbbell_links(
                "",
                r#"{ kind = "red", size = "2000pkt", min_th = 200, max_th = 1000, max_p = 0.1, weight = 0.002 }"#
            )
        ),
    };
    format!("{head}{body}{measure}")
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn measure_here(workload: Workload, flows: u32, seconds: f64) -> Result<serde_json::Value> {
    let opts = LoadOptions {
        overrides: Vec::new(),
    };
    let text = scenario_text(workload, flows, seconds);
    let sc = load_str(&text, Path::new("<bench>"), &opts)?.remove(0);
    let r = sim::run(&sc, 1, |_| {});
    let wall = r.stats.wall_s;
    let utilisation: Vec<f64> = workload
        .bottlenecks()
        .iter()
        .filter_map(|l| r.metrics.get(&format!("link.{l}.ab.utilisation")).copied())
        .collect();
    Ok(json!({
        "workload": workload.name(),
        "flows": flows,
        "simulated_s": seconds,
        "wall_s": wall,
        "events": r.stats.events,
        "packet_hops": r.stats.packet_hops,
        "events_per_s": r.stats.events as f64 / wall,
        "packet_hops_per_s": r.stats.packet_hops as f64 / wall,
        "events_per_hop": r.stats.events as f64 / r.stats.packet_hops.max(1) as f64,
        "peak_rss_mib": peak_rss_mib(),
        "bottleneck_utilisation": utilisation.iter().sum::<f64>() / utilisation.len().max(1) as f64,
    }))
}

/// What `bench` was asked.
pub struct BenchArgs {
    pub workloads: Vec<Workload>,
    pub flows: Vec<u32>,
    pub seconds: f64,
    /// Print the scenario of the (one) workload and size instead of running it.
    pub print_scenario: bool,
    /// Run one measurement in this process and print it as JSON.
    pub child: bool,
    /// Print every measurement as a JSON line instead of a table.
    pub json: bool,
}

pub fn bench(args: &BenchArgs) -> Result<()> {
    if args.seconds <= 0.0 || args.seconds.is_nan() {
        bail!("--seconds must be positive");
    }
    if let Some(0) = args.flows.iter().find(|&&n| n == 0) {
        bail!("--flows: every size must be at least 1");
    }
    if args.child || args.print_scenario {
        let ([w], [n]) = (&args.workloads[..], &args.flows[..]) else {
            bail!("--child and --print-scenario take one --workload and one --flows value")
        };
        if args.print_scenario {
            print!("{}", scenario_text(*w, *n, args.seconds));
        } else {
            println!("{}", measure_here(*w, *n, args.seconds)?);
        }
        return Ok(());
    }
    let exe = std::env::current_exe().context("locating the mptcp-lab binary")?;
    for &w in &args.workloads {
        if !args.json {
            println!(
                "{}; {} simulated seconds each, one process per size",
                w.describe(),
                args.seconds
            );
            println!(
                "{:>7} {:>9} {:>12} {:>14} {:>11} {:>10} {:>11}",
                "flows",
                "wall s",
                "events/s",
                "packet-hops/s",
                "events/hop",
                "peak MiB",
                "bottleneck"
            );
        }
        for &n in &args.flows {
            let out = Command::new(&exe)
                .args(["bench", "--child", "--workload", w.name(), "--flows"])
                .arg(n.to_string())
                .arg("--seconds")
                .arg(args.seconds.to_string())
                .output()
                .context("running the benchmark child")?;
            if !out.status.success() {
                bail!(
                    "{} benchmark with {n} flows failed: {}",
                    w.name(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            let v: serde_json::Value =
                serde_json::from_slice(&out.stdout).context("reading the child's measurement")?;
            if args.json {
                println!("{v}");
                continue;
            }
            let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
            println!(
                "{:>7} {:>9.2} {:>12.3e} {:>14.3e} {:>11.2} {:>10.1} {:>10.1}%",
                n,
                f("wall_s"),
                f("events_per_s"),
                f("packet_hops_per_s"),
                f("events_per_hop"),
                f("peak_rss_mib"),
                100.0 * f("bottleneck_utilisation")
            );
        }
        if !args.json {
            println!();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_is_a_valid_scenario() {
        for w in [Workload::Tcp, Workload::Mptcp, Workload::Onoff] {
            let opts = LoadOptions {
                overrides: Vec::new(),
            };
            let sc = load_str(&scenario_text(w, 3, 2.0), Path::new("<bench>"), &opts)
                .unwrap_or_else(|e| panic!("{}: {e}", w.name()))
                .remove(0);
            assert_eq!(sc.total_flows(), 3);
            for l in w.bottlenecks() {
                assert!(sc.links.iter().any(|k| k.name == *l), "{l}");
            }
        }
    }
}
