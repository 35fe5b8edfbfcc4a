//! `mptcp-lab matcp bench`: what MATCP's programs cost a connection. A client namespace
//! with two unlimited veth paths to a server; a process in a cgroup of its own opens short
//! connections one after the other (connect, 1 KB, close), first with nothing attached to
//! the cgroup, then with MATCP (weighted RTT, the selector with the most arithmetic: a
//! random draw and one division per path) attached; rounds interleaved. Connect latency is
//! connect()'s own time in the client; CPU is the client process's (user and system, which
//! includes cgroup/connect4 and the sockops callbacks run in its context) and the whole
//! machine's busy time from /proc/stat (the server and softirq work too), per connection.
//! The programs' own time comes from the kernel's accounting (`kernel.bpf_stats_enabled`,
//! turned on for the run and restored after): nanoseconds per call of each.

use super::probe;
use crate::cc_bench::{Paths, clock_ticks, cpu_jiffies, spread, two_unlimited_paths};
use anyhow::{Context, Result};
use mptcp_bpf::matcp::install;
use mptcp_bpf::matcp::{Config, Matcp, PathAddrs, Selector};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use testbed::cgroup::Cgroup;
use testbed::{Netns, cleanup};

const SERVER: &str = "10.9.1.2:5301";

struct Sample {
    connect_us: Vec<f64>,
    client_cpu_us: f64,
    machine_cpu_us: f64,
}

const BPF_STATS: &str = "/proc/sys/kernel/bpf_stats_enabled";

/// Turns the kernel's per-program run-time accounting on, and back to what it was on drop.
struct BpfStats(String);

impl BpfStats {
    fn enable() -> Result<BpfStats> {
        let before = std::fs::read_to_string(BPF_STATS)?.trim().to_string();
        std::fs::write(BPF_STATS, "1")?;
        Ok(BpfStats(before))
    }
}

impl Drop for BpfStats {
    fn drop(&mut self) {
        let _ = std::fs::write(BPF_STATS, &self.0);
    }
}

fn one_run(client: &Netns, cgroup: &Cgroup, connections: usize) -> Result<Sample> {
    let (busy0, _) = cpu_jiffies()?;
    let report = probe::run_connect(&cgroup.path, &client.name, SERVER, connections, 1000)?;
    let (busy1, _) = cpu_jiffies()?;
    let n = connections as f64;
    let connect_us: Vec<f64> = report["connect_ns"]
        .as_array()
        .context("connect report")?
        .iter()
        .filter_map(|v| v.as_f64())
        .map(|ns| ns / 1e3)
        .collect();
    Ok(Sample {
        connect_us,
        client_cpu_us: report["cpu_ns"].as_f64().unwrap_or(0.0) / 1e3 / n,
        machine_cpu_us: (busy1 - busy0) as f64 / clock_ticks() * 1e6 / n,
    })
}

fn percentile(xs: &[f64], p: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

pub fn run(connections: usize, rounds: usize) -> Result<bool> {
    // The congestion controls' bench topology (its MPTCP endpoint is unused by TCP).
    let Paths { client, server } = two_unlimited_paths()?;
    let exe = std::env::current_exe()?;
    let _sink = server.spawn(
        &exe.to_string_lossy(),
        &["matcp", "sink", "--listen", "0.0.0.0:5301"],
        &[],
    )?;
    std::thread::sleep(std::time::Duration::from_millis(300));
    let cgroup = Cgroup::new("mbench")?;
    // A private installation, removed on every path out (and by the next start if killed).
    let private = PathBuf::from("/sys/fs/bpf").join(cleanup::owned_name("mbench"));
    let matcp = Matcp {
        dir: private.join("matcp"),
        staging: PathBuf::from("/sys/fs/bpf").join(cleanup::owned_name("mbench-new")),
    };
    let config = Config {
        selector: Selector::WeightedRtt,
        paths: vec![
            PathAddrs::from(Ipv4Addr::new(10, 9, 1, 1)),
            PathAddrs::from(Ipv4Addr::new(10, 9, 2, 1)),
        ],
        refresh: None,
        cgroup: cgroup.path.clone(),
        cwnd_clamp: None,
    };
    let mut without = Vec::new();
    let mut with = Vec::new();
    let _stats = BpfStats::enable()?;
    // Per program: total ns and calls over every round.
    let mut run_times: Vec<(String, u64, u64)> = Vec::new();
    let result = (|| -> Result<()> {
        for round in 0..rounds {
            eprintln!("round {}/{rounds}: without", round + 1);
            without.push(one_run(&client, &cgroup, connections)?);
            // From inside the client's namespace: the paths' addresses are its own.
            let (m, c) = (matcp.clone(), config.clone());
            client.enter(move || Ok(m.install(&c)?))?;
            eprintln!("round {}/{rounds}: with MATCP", round + 1);
            let sample = one_run(&client, &cgroup, connections);
            for (name, ns, calls) in install::program_run_times() {
                match run_times.iter_mut().find(|r| r.0 == name) {
                    Some(r) => {
                        r.1 += ns;
                        r.2 += calls;
                    }
                    None => run_times.push((name, ns, calls)),
                }
            }
            let state = matcp.read();
            matcp.remove()?;
            with.push(sample?);
            let state = state?;
            let placed: u64 = state.stats.iter().map(|s| s.choices).sum();
            anyhow::ensure!(
                placed as usize >= connections,
                "MATCP placed {placed} of {connections} connections"
            );
        }
        Ok(())
    })();
    let _ = matcp.remove();
    let _ = std::fs::remove_dir(&private);
    result?;
    print_table(connections, rounds, &without, &with);
    println!();
    for (name, ns, calls) in run_times {
        println!(
            "{name}: {calls} calls, {:.0} ns per call, {:.2} calls per connection",
            ns as f64 / calls.max(1) as f64,
            calls as f64 / (rounds * connections) as f64
        );
    }
    Ok(true)
}

fn print_table(connections: usize, rounds: usize, without: &[Sample], with: &[Sample]) {
    println!(
        "{connections} connections per run, {rounds} interleaved rounds; median of the rounds' medians [min, max]\n"
    );
    println!("| | connect median us | connect p99 us | client CPU us/conn | machine CPU us/conn |");
    println!("|---|---|---|---|---|");
    for (name, runs) in [("without", without), ("with MATCP", with)] {
        let stat = |f: &dyn Fn(&Sample) -> f64| {
            let (m, lo, hi) = spread(&runs.iter().map(f).collect::<Vec<_>>());
            format!("{m:.1} [{lo:.1}, {hi:.1}]")
        };
        println!(
            "| {name} | {} | {} | {} | {} |",
            stat(&|s| percentile(&s.connect_us, 0.5)),
            stat(&|s| percentile(&s.connect_us, 0.99)),
            stat(&|s| s.client_cpu_us),
            stat(&|s| s.machine_cpu_us),
        );
    }
}
